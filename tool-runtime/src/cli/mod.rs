//! The command line every tool binary gets from one line:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     tool_runtime::cli::main()
//! }
//! ```
//!
//! or, for a binary that registers shared state or run-time tools first:
//!
//! ```no_run
//! struct Db;
//!
//! fn main() -> std::process::ExitCode {
//!     tool_runtime::cli::Cli::new()
//!         .name(env!("CARGO_PKG_NAME"))
//!         .version(env!("CARGO_PKG_VERSION"))
//!         .state(Db)
//!         .run()
//! }
//! ```
//!
//! Subcommands: `serve` (MCP over stdio, or Streamable HTTP with `--http ADDR`), `list`
//! (the catalog or a provider export), `call` (one tool call), `check` (the catalog check)
//! and `diff` (breaking changes against a saved catalog). Only the requested output goes
//! to stdout; diagnostics go to stderr. Exit codes: 0 success, 1 failure (a tool error, a
//! check error, a breaking change), 2 a usage error.
//!
//! # Tools in a library crate
//!
//! A `#[tool]` function reaches the catalog of every binary that links its crate, but the
//! linker leaves out a library crate the binary never names. When the tools live in a
//! library (`my_tools`) and the binary only runs the command line, name the library once:
//!
//! ```ignore
//! use my_tools as _; // links the library, and with it its tools
//!
//! fn main() -> std::process::ExitCode {
//!     tool_runtime::cli::main()
//! }
//! ```
//!
//! A binary whose catalog is empty says so: `check` fails, `list` and `serve` warn.
//!
//! # Serving over HTTP
//!
//! `serve --http ADDR` takes a socket address or a host name with a port
//! (`127.0.0.1:8080`, `localhost:8080`, `[::1]:8080`, `0.0.0.0:8080`). Options for a real
//! deployment:
//!
//! - `--allowed-host HOST` (repeatable; `MCP_ALLOWED_HOSTS`, comma-separated): the host
//!   names requests may name in `Host`. A loopback address allows only loopback names by
//!   default (DNS-rebinding protection); any other address allows any host unless these are
//!   given.
//! - `--cors-origin ORIGIN` (repeatable; `MCP_CORS_ORIGINS`): browser origins allowed to
//!   call the server (CORS); `*` allows any.
//! - A bearer token every request must present, from the environment variable
//!   `MCP_BEARER_TOKEN` or from a file with `--bearer-token-file PATH`
//!   (`MCP_BEARER_TOKEN_FILE`). There is deliberately no flag that takes the token itself:
//!   a secret on the command line is visible to every user of the machine.
//! - Or OAuth 2.1 access tokens (JWTs), checked as a resource server: `--oauth-resource
//!   URI` (this server's canonical URI, the audience tokens must name), `--oauth-issuer
//!   URI` (the authorization server) and `--oauth-jwks-file PATH` (its signing
//!   keys); `--oauth-scope-implies BROADER=NARROWER,...` for scope hierarchies, and
//!   `--list-permitted-tools` to list each client only the tools its scopes permit. The
//!   protected-resource metadata is served at `/.well-known/oauth-protected-resource`.
//!
//! Logs go to stderr; they carry ANSI colour only when stderr is a terminal and `NO_COLOR`
//! is not set. `RUST_LOG` sets their level.

mod access;
mod args;
mod commands;
mod missing;
mod mount_choices;
#[cfg(feature = "oauth")]
mod oauth;
mod remote;
#[cfg(any(feature = "http", feature = "client"))]
mod secrets;
mod serve;
mod store;
mod watch;

use crate::mcp::ServerOptions;
use crate::registry::DynamicTool;
use crate::registry::{RegistryBuilder, RegistryError};
use args::{Command, CommandLine};
use clap::{CommandFactory, FromArgMatches};
use commands::{answer, call, check, diff, failure, list, prompt, read, usage_failure, with_items};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// What a binary whose catalog is empty is told.
pub(crate) const EMPTY_CATALOG: &str =
    "the catalog is empty: no #[tool], #[prompt] or #[resource] \
    reached this binary. Tools in a library crate are linked only when the binary names that \
    crate: add `use my_tools as _;` (with your library's name) to the binary's main.rs";

/// The version of the package the binary `name` is built from, as its tools say: the
/// package of a tool whose crate is named as the binary, else the one package all its tools
/// come from; `None` when neither tells.
fn own_package_version(name: &str) -> Option<String> {
    let catalog = crate::catalog::Catalog::global().ok()?;
    let locations: Vec<crate::catalog::SourceLocation> = crate::registry::described(catalog)
        .filter_map(|(_, item)| item.location())
        .collect();
    let crate_name = name.replace('-', "_");
    let own = locations
        .iter()
        .find(|location| location.module_path.split("::").next() == Some(crate_name.as_str()));
    let first = locations.first()?;
    let only = locations
        .iter()
        .all(|location| location.package == first.package)
        .then_some(first);
    own.or(only).map(|location| location.version.to_owned())
}

/// Runs the standard command line over this binary's tools.
pub fn main() -> ExitCode {
    Cli::new().run()
}

/// Turns the binary's own options into registry settings (state, run-time tools).
type Setup = Box<dyn FnOnce(&clap::ArgMatches, RegistryBuilder) -> Result<RegistryBuilder, String>>;

/// The standard command line, with the registry it serves: a binary's options of its own,
/// the state and run-time tools it registers, and how `serve` behaves.
///
/// ```
/// use std::process::ExitCode;
/// use tool_runtime::tool;
///
/// /// Add two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// // What `my-tools call add '{"a": 2, "b": 3}'` runs; `main` would call `run()` instead.
/// let code = tool_runtime::cli::Cli::new()
///     .name("my-tools")
///     .version("1.0.0")
///     .run_from(["my-tools", "call", "add", r#"{"a": 2, "b": 3}"#]);
/// assert_eq!(code, ExitCode::SUCCESS);
///
/// let code = tool_runtime::cli::Cli::new().run_from(["my-tools", "call", "add", r#"{"a": 2}"#]);
/// assert_eq!(code, ExitCode::FAILURE);
/// ```
#[derive(Default)]
pub struct Cli {
    name: Option<String>,
    version: Option<String>,
    about: Option<String>,
    registry: RegistryBuilder,
    server_options: ServerOptions,
    args: Vec<clap::Arg>,
    setup: Option<Setup>,
}

impl std::fmt::Debug for Cli {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cli")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}

impl Cli {
    /// A command line over this binary's static catalog.
    pub fn new() -> Self {
        Cli::default()
    }

    /// The program name shown in help and reported to MCP clients (default: the
    /// executable's file name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The version shown by `--version` and reported to MCP clients.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// The one-line description `--help` shows.
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into());
        self
    }

    /// Adds an option of the binary's own, accepted before or after the subcommand
    /// (for example `--root DIR`); read it in [`Cli::setup`].
    pub fn arg(mut self, arg: clap::Arg) -> Self {
        self.args.push(arg.global(true));
        self
    }

    /// Prepares the registry from the parsed options, before any subcommand runs. An `Err`
    /// is reported as a usage error (exit code 2).
    ///
    /// ```no_run
    /// struct Root(std::path::PathBuf);
    ///
    /// fn main() -> std::process::ExitCode {
    ///     tool_runtime::cli::Cli::new()
    ///         .arg(clap::Arg::new("root").long("root").value_name("DIR").default_value("."))
    ///         .setup(|options, registry| {
    ///             let root = options.get_one::<String>("root").cloned().unwrap_or_default();
    ///             Ok(registry.state(Root(root.into())))
    ///         })
    ///         .run()
    /// }
    /// ```
    pub fn setup(
        mut self,
        setup: impl FnOnce(&clap::ArgMatches, RegistryBuilder) -> Result<RegistryBuilder, String>
            + 'static,
    ) -> Self {
        self.setup = Some(Box::new(setup));
        self
    }

    /// Registers shared state for `State<T>` parameters.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.registry = self.registry.state(value);
        self
    }

    /// Adds a tool made at run time.
    pub fn tool(mut self, tool: DynamicTool) -> Self {
        self.registry = self.registry.tool(tool);
        self
    }

    /// How `serve` behaves: page sizes, limits, caching hints, when large outputs become
    /// links (see [`ServerOptions`]).
    ///
    /// ```no_run
    /// use tool_runtime::mcp::{LargeOutputs, ServerOptions};
    ///
    /// fn main() -> std::process::ExitCode {
    ///     tool_runtime::cli::Cli::new()
    ///         .server_options(
    ///             ServerOptions::default()
    ///                 .large_outputs(LargeOutputs::default().above(32 * 1024)),
    ///         )
    ///         .run()
    /// }
    /// ```
    pub fn server_options(mut self, options: ServerOptions) -> Self {
        self.server_options = options;
        self
    }

    /// Adds run-time tools under a prefix.
    pub fn group(
        mut self,
        prefix: impl Into<String>,
        tools: impl IntoIterator<Item = DynamicTool>,
    ) -> Self {
        self.registry = self.registry.group(prefix, tools);
        self
    }

    /// Parses the process's arguments and runs the command.
    pub fn run(self) -> ExitCode {
        self.run_from(std::env::args_os())
    }

    /// Parses `args` (the first is the program) and runs the command.
    pub fn run_from(self, args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> ExitCode {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        let name = self.name.clone().unwrap_or_else(|| {
            args.first()
                .map(PathBuf::from)
                .and_then(|path| path.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "tools".to_owned())
        });
        let mut clap_command = CommandLine::command()
            .name(name.clone())
            .bin_name(name.clone());
        if let Some(about) = &self.about {
            clap_command = clap_command.about(about.clone());
        }
        for arg in &self.args {
            clap_command = clap_command.arg(arg.clone());
        }
        // Unless told, the version of the package whose crate has the binary's name and
        // holds some of its tools: a binary's own package, as Cargo names both.
        let version = self.version.clone().or_else(|| own_package_version(&name));
        if let Some(version) = &version {
            clap_command = clap_command
                .version(version.clone())
                .disable_version_flag(false);
        }
        let matches = match clap_command.clone().try_get_matches_from(&args) {
            Ok(matches) => matches,
            Err(error) => return usage_failure(error, &name),
        };
        let mut command = match CommandLine::from_arg_matches(&matches) {
            Ok(CommandLine {
                command: Some(command),
            }) => command,
            Ok(CommandLine { command: None }) => {
                let _ = clap_command.write_help(&mut std::io::stderr());
                return ExitCode::from(2);
            }
            Err(error) => return usage_failure(error, &name),
        };
        // A mounts file named by the environment is for the commands that serve or answer;
        // one that lists, calls or checks mounts only what its own command line says, so
        // that its output does not change with the shell it runs in.
        let from_environment = matches.subcommand().is_some_and(|(_, given)| {
            given.try_get_raw("mounts_file").is_ok()
                && given.value_source("mounts_file") == Some(clap::parser::ValueSource::EnvVariable)
        });
        if let (
            true,
            Command::List { mounts, .. } | Command::Call { mounts, .. } | Command::Check { mounts },
        ) = (from_environment, &mut command)
        {
            mounts.forget_file();
        }
        let server_options = self.server_options.clone();
        let registry = match self.registry_for(&matches, &command, &name) {
            Ok(registry) => registry,
            Err(code) => return code,
        };
        match command {
            Command::Serve(serve) => {
                serve::serve_command(serve, registry, server_options, &name, version.as_deref())
            }
            Command::List {
                format,
                skip_inexpressible,
                server,
                mounts,
                ..
            } => {
                let title = match &server {
                    Some(server) => (server.as_str(), "0.0.0"),
                    None => (name.as_str(), version.as_deref().unwrap_or("0.0.0")),
                };
                let export = |registry: &crate::registry::Registry| {
                    with_items(registry, |items| {
                        list(items, format, skip_inexpressible, title)
                    })
                };
                if server.is_none() && !mounts.given() {
                    return export(&registry);
                }
                // A listing is saved and compared: a server that cannot be reached fails it
                // rather than leave its tools out unnoticed.
                let listed = remote::run_mounted(
                    registry,
                    remote::Unreached::Fails,
                    |registry| async move { export(&registry) },
                );
                listed.unwrap_or_else(|code| code)
            }
            Command::Call {
                name,
                json,
                server,
                quiet,
                ..
            } => {
                let unreached = match server {
                    Some(_) => remote::Unreached::Fails,
                    None => remote::Unreached::Warns,
                };
                call(registry, &name, json, unreached, quiet)
            }
            Command::Answer { dialect, .. } => answer(registry, dialect),
            Command::Prompt { name, json } => prompt(&registry, &name, json),
            Command::Read { uri } => read(&registry, &uri),
            Command::Check { mounts } if mounts.given() => {
                // The mounted servers are checked as served: one that cannot be reached
                // fails the check rather than leaving its tools unchecked.
                let checked = remote::run_mounted(
                    registry,
                    remote::Unreached::Fails,
                    |registry| async move { with_items(&registry, check) },
                );
                checked.unwrap_or_else(|code| code)
            }
            Command::Check { .. } => with_items(&registry, check),
            Command::Diff { old } => with_items(&registry, |items| diff(items, &old)),
        }
    }

    /// The registry `command` runs over: the binary's, with what `serve`'s flags and the
    /// binary's own setup add; built without state when the command only describes the
    /// tools. `Err` is the exit code of a failure already reported.
    fn registry_for(
        self,
        matches: &clap::ArgMatches,
        command: &Command,
        name: &str,
    ) -> Result<crate::registry::Registry, ExitCode> {
        if let Command::List {
            server: Some(server),
            access,
            mounts,
            ..
        }
        | Command::Call {
            server: Some(server),
            access,
            mounts,
            ..
        } = command
        {
            return remote::only_server(server, access, mounts).map_err(|reason| {
                eprintln!("error: {reason} (see `{name} --help`)");
                ExitCode::from(2)
            });
        }
        let mut builder = self.registry;
        let mounted = match command {
            Command::Serve(serve) => serve.mounts.apply(serve.operating.apply(builder)),
            Command::Answer { mounts, .. }
            | Command::Check { mounts }
            | Command::List { mounts, .. }
            | Command::Call { mounts, .. } => mounts.apply(builder),
            _ => Ok(builder),
        };
        builder = mounted.map_err(|reason| {
            eprintln!("error: {reason} (see `{name} --help`)");
            ExitCode::from(2)
        })?;
        if let Some(setup) = self.setup {
            builder = setup(matches, builder).map_err(|reason| {
                eprintln!("error: {reason} (see `{name} --help`)");
                ExitCode::from(2)
            })?;
        }
        // Describing the tools needs no state; running them does.
        let runs_tools = matches!(
            command,
            Command::Serve(_)
                | Command::Call { .. }
                | Command::Answer { .. }
                | Command::Prompt { .. }
                | Command::Read { .. }
        );
        let built = if runs_tools {
            builder.build()
        } else {
            builder.build_for_description()
        };
        built.map_err(|error| match error {
            RegistryError::MissingState {
                what,
                tool,
                type_name,
            } => failure(&format!(
                "{what} `{tool}` takes State<{type_name}>, but no {type_name} was registered; \
                 register it with `Cli::new().state(...)`, or in `Cli::setup` when it \
                 depends on the command line"
            )),
            error => failure(&format!("the tools cannot start: {error}")),
        })
    }
}
