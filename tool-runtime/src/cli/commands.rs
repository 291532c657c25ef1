//! The commands that describe and check the catalog (`list`, `check`, `diff`) or call one
//! tool (`call`), and how the command line reports: one line on stderr, the exit code.

use super::EMPTY_CATALOG;
use crate::catalog::{Prompt, Resource, Tool};
use crate::export::{self, CatalogArtefact, Format};
use crate::registry::Registry;
use serde_json::Value;
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

/// Help and version go to stdout with success; every other parse error is one line on
/// stderr with exit code 2.
pub(super) fn usage_failure(error: clap::Error, name: &str) -> ExitCode {
    use clap::error::ErrorKind;
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = error.print();
            ExitCode::SUCCESS
        }
        _ => {
            // The first line, and the arguments clap lists under it (which required
            // argument is missing), on one line.
            let rendered = error.render().to_string();
            let mut lines = rendered.lines();
            let mut message = lines.next().unwrap_or("error: invalid usage").to_owned();
            for listed in lines.take_while(|line| line.starts_with("  ")) {
                message.push(' ');
                message.push_str(listed.trim());
            }
            eprintln!("{message} (see `{name} --help`)");
            ExitCode::from(2)
        }
    }
}

pub(super) fn failure(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

pub(super) fn print(text: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(text.as_bytes())
        .and_then(|()| {
            if text.ends_with('\n') {
                Ok(())
            } else {
                stdout.write_all(b"\n")
            }
        })
        .and_then(|()| stdout.flush());
    match written {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is not an error of ours.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => failure(&format!("cannot write the output: {error}")),
    }
}

/// The registry's tools, prompts and resources, borrowed the way exporters and checks
/// take them.
pub(super) struct Items<'a> {
    tools: &'a [&'a Tool],
    prompts: &'a [&'a Prompt],
    resources: &'a [&'a Resource],
}

/// Runs `f` over the registry's items.
pub(super) fn with_items<R>(registry: &Registry, f: impl FnOnce(&Items<'_>) -> R) -> R {
    let tool_refs = registry.tools();
    let prompt_refs = registry.prompts();
    let resource_refs = registry.resources();
    let tools: Vec<&Tool> = tool_refs.iter().map(|tool| &**tool).collect();
    let prompts: Vec<&Prompt> = prompt_refs.iter().map(|prompt| &**prompt).collect();
    let resources: Vec<&Resource> = resource_refs.iter().map(|resource| &**resource).collect();
    f(&Items {
        tools: &tools,
        prompts: &prompts,
        resources: &resources,
    })
}

impl Items<'_> {
    fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.prompts.is_empty() && self.resources.is_empty()
    }

    fn artefact(&self) -> CatalogArtefact {
        export::catalog_artefact_all(self.tools, self.prompts, self.resources)
    }
}

/// The catalog artefact carries prompts and resources too; the other formats are tool
/// formats (function calling), so they carry the tools.
/// `list`: the catalog, or one provider's form of it; the OpenAPI document is titled with
/// the binary's `title` (its name and version).
pub(super) fn list(
    items: &Items<'_>,
    format: Format,
    skip_inexpressible: bool,
    title: (&str, &str),
) -> ExitCode {
    if items.is_empty() {
        eprintln!("warning: {EMPTY_CATALOG}");
    }
    if format == Format::Catalog {
        return print(&items.artefact().to_json_pretty());
    }
    if format == Format::OpenApi {
        let document = export::openapi(items.tools, title.0, title.1);
        return print(&crate::export::canonical::to_string_pretty(&document));
    }
    let exported = if skip_inexpressible {
        export::export_expressible(format, items.tools)
    } else {
        export::export(format, items.tools)
    };
    match exported {
        Ok((text, warnings)) => {
            for warning in warnings {
                eprintln!("warning: {warning}");
            }
            print(&text)
        }
        Err(error) => failure(&error.to_string()),
    }
}

/// The arguments given on the command line, else read from stdin (when it is not a
/// terminal), as JSON; `null` when there are none. `Err` is the exit code of a failure
/// already reported.
fn arguments(json: Option<String>) -> Result<Value, ExitCode> {
    let text = match json {
        Some(text) => text,
        None if std::io::stdin().is_terminal() => String::new(),
        None => {
            let mut text = String::new();
            if let Err(error) = std::io::stdin().read_to_string(&mut text) {
                return Err(failure(&format!(
                    "cannot read the arguments from stdin: {error}"
                )));
            }
            text
        }
    };
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text).map_err(|error| {
        eprintln!("error: the arguments are not valid JSON: {error}");
        ExitCode::from(2)
    })
}

/// How long `call` waits, after Ctrl-C, for the cancelled call to end (a tool that
/// honours its cancellation, a mounted server told to stop) before it exits.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

pub(super) fn call(
    registry: Registry,
    name: &str,
    json: Option<String>,
    unreached: super::remote::Unreached,
    quiet: bool,
) -> ExitCode {
    if registry.get(name).is_none() && registry.prompt(name).is_some() {
        eprintln!("error: '{name}' is a prompt, not a tool: get it with `prompt {name}`");
        return ExitCode::from(2);
    }
    let input = match arguments(json) {
        Ok(input) => input,
        Err(code) => return code,
    };
    let shown = std::sync::Arc::new(super::watch::Shown::for_stderr(quiet));
    let notifier = std::sync::Arc::clone(&shown);
    let called = super::remote::run_mounted(registry, unreached, |registry| async move {
        // The call's own scope: its progress reports come here, and Ctrl-C cancels it
        // (the tool's `Cancellation` fires; a mounted server's call is dropped, which the
        // client tells that server).
        let scope = std::sync::Arc::new(crate::call::scope::CallScope::new(
            Some(serde_json::json!(0)),
            Some(notifier as std::sync::Arc<dyn crate::call::scope::Notifier>),
            std::sync::Arc::default(),
        ));
        let context = registry.call_context(std::sync::Arc::clone(&scope));
        let call = registry.call_in(name, input, &context);
        tokio::pin!(call);
        tokio::select! {
            result = &mut call => Some(result),
            _ = tokio::signal::ctrl_c() => {
                scope.cancellation.cancel();
                // A moment for the cancellation to reach the tool, or its server.
                let _ = tokio::time::timeout(CANCEL_GRACE, &mut call).await;
                None
            }
        }
    });
    shown.finish();
    let result = match called {
        Ok(Some(result)) => result,
        Ok(None) => {
            eprintln!("cancelled: the call of {name} was cancelled (Ctrl-C)");
            return ExitCode::from(130);
        }
        Err(code) => return code,
    };
    let code = print(&serde_json::to_string_pretty(&result).unwrap_or_default());
    if result.is_error() {
        ExitCode::FAILURE
    } else {
        code
    }
}

/// `prompt`: one prompt's messages, as the MCP `prompts/get` result's `messages`.
pub(super) fn prompt(registry: &Registry, name: &str, json: Option<String>) -> ExitCode {
    let input = match arguments(json) {
        Ok(input) => input,
        Err(code) => return code,
    };
    match run_tools(registry.get_prompt(name, input)) {
        Ok(Ok(messages)) => print(&serde_json::to_string_pretty(&messages).unwrap_or_default()),
        Ok(Err(error)) => failure(&surface_failure(registry, name, &error)),
        Err(code) => code,
    }
}

/// `read`: one resource's contents, as the MCP `resources/read` result's `contents`.
pub(super) fn read(registry: &Registry, uri: &str) -> ExitCode {
    match run_tools(registry.read_resource(uri)) {
        Ok(Ok(contents)) => print(&serde_json::to_string_pretty(&contents).unwrap_or_default()),
        Ok(Err(error)) => failure(&error.to_string()),
        Err(code) => code,
    }
}

/// What a failed `prompt` says: for a tool's name, which command gets it.
fn surface_failure(
    registry: &Registry,
    name: &str,
    error: &crate::registry::SurfaceError,
) -> String {
    match error {
        crate::registry::SurfaceError::UnknownPrompt { .. } if registry.get(name).is_some() => {
            format!("'{name}' is a tool, not a prompt: call it with `call {name}`")
        }
        error => error.to_string(),
    }
}

/// `answer`: a model's turn on stdin, the results its next turn needs on stdout (a JSON
/// array of messages, or of items for OpenAI Responses). An unreadable turn exits 2 with
/// the reason; a turn whose calls failed is still answered (the model reads the errors).
pub(super) fn answer(registry: Registry, dialect: crate::agent::Dialect) -> ExitCode {
    let mut text = String::new();
    if let Err(error) = std::io::stdin().read_to_string(&mut text) {
        return failure(&format!(
            "cannot read the model's message from stdin: {error}"
        ));
    }
    let message: Value = match serde_json::from_str(&text) {
        Ok(message) => message,
        Err(error) => {
            eprintln!("error: the model's message on stdin is not JSON: {error}");
            return ExitCode::from(2);
        }
    };
    let turn = match dialect.read_turn(&message) {
        Ok(turn) => turn,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let answered = super::remote::run_mounted(
        registry,
        super::remote::Unreached::Warns,
        |registry| async move {
            crate::agent::Tools::new(&registry)
                .answer(dialect, &turn)
                .await
        },
    );
    let answer = match answered {
        Ok(answer) => answer,
        Err(code) => return code,
    };
    print(&serde_json::to_string_pretty(&answer.messages).unwrap_or_default())
}

/// Runs `work` (calls of tools) on a runtime of its own; `Err` is the exit code of a
/// runtime that could not start, already reported.
fn run_tools<T>(work: impl std::future::Future<Output = T>) -> Result<T, ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| failure(&format!("cannot start the async runtime: {error}")))?;
    let done = runtime.block_on(work);
    // A sync tool past its time limit has seen its cancellation fire; it gets a moment to
    // stop, and is not waited for beyond that (as `serve` does).
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(done)
}

pub(super) fn check(items: &Items<'_>) -> ExitCode {
    let report = crate::check::check_all(items.tools, items.prompts, items.resources);
    // What is wrong goes to stderr, with the other diagnostics; what the catalog holds and
    // costs is the command's output.
    let empty = items.is_empty();
    if empty {
        eprintln!("error: {EMPTY_CATALOG}");
    }
    eprint!("{}", report.findings_text());
    let code = print(&report.summary_text());
    if report.is_ok() && !empty {
        code
    } else {
        ExitCode::FAILURE
    }
}

pub(super) fn diff(items: &Items<'_>, old: &std::path::Path) -> ExitCode {
    let text = match std::fs::read_to_string(old) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("error: cannot read {}: {error}", old.display());
            return ExitCode::from(2);
        }
    };
    let old_artefact: CatalogArtefact = match serde_json::from_str(&text) {
        Ok(artefact) => artefact,
        Err(error) => {
            eprintln!(
                "error: {} is not a catalog artefact (`list --format catalog`): {error}",
                old.display()
            );
            return ExitCode::from(2);
        }
    };
    let new_artefact = items.artefact();
    let changes = crate::diff::diff(&old_artefact, &new_artefact);
    let breaking = changes
        .iter()
        .filter(|c| c.impact == crate::diff::Impact::Breaking)
        .count();
    let mut text: String = changes.iter().map(|c| format!("{c}\n")).collect();
    text.push_str(&format!(
        "{} changes, {breaking} breaking ({} -> {})\n",
        changes.len(),
        old_artefact.version,
        new_artefact.version
    ));
    let code = print(&text);
    if breaking > 0 {
        ExitCode::FAILURE
    } else {
        code
    }
}
