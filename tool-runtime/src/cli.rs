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

use crate::catalog::{Prompt, Resource, Tool};
use crate::export::{self, CatalogArtefact, Format};
use crate::mcp::{McpServer, ServerInfo, ServerOptions};
use crate::registry::DynamicTool;
use crate::registry::{Registry, RegistryBuilder, RegistryError};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use serde_json::Value;
use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;

#[cfg(feature = "oauth")]
mod oauth;

/// The environment variable holding the bearer token `serve --http` requires.
const BEARER_TOKEN_VARIABLE: &str = "MCP_BEARER_TOKEN";

/// What a binary whose catalog is empty is told.
const EMPTY_CATALOG: &str = "the catalog is empty: no #[tool], #[prompt] or #[resource] \
    reached this binary. Tools in a library crate are linked only when the binary names that \
    crate: add `use my_tools as _;` (with your library's name) to the binary's main.rs";

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

#[derive(Parser, Debug)]
#[command(
    about = "Tools for LLMs: serve them over MCP, list them for providers, call and check them.",
    disable_version_flag = true
)]
struct Arguments {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
// Parsed once per process: `serve`'s many flags cost nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Serve the tools over MCP: stdio by default, Streamable HTTP with --http.
    #[command(
        after_help = "Over HTTP, every request must present `Authorization: Bearer \
        <token>` when the environment variable MCP_BEARER_TOKEN (or the file named by \
        --bearer-token-file) holds a token. No flag takes the token itself: the command \
        line is visible to every user of the machine."
    )]
    Serve {
        /// Serve Streamable HTTP (and the REST endpoints) on this address: a socket address
        /// or a host name with a port, e.g. 127.0.0.1:8080 or localhost:8080.
        #[arg(long, value_name = "ADDR", value_parser = parse_address)]
        http: Option<SocketAddr>,
        /// Threads running async tools and the protocol (sync tools have their own pool).
        /// One avoids cross-thread wake-ups; more help async tools that compute.
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
        threads: u16,
        /// A host name requests may name in `Host` (repeatable). Default: loopback names
        /// for a loopback address, any host otherwise.
        #[arg(
            long = "allowed-host",
            value_name = "HOST",
            env = "MCP_ALLOWED_HOSTS",
            value_delimiter = ','
        )]
        allowed_hosts: Vec<String>,
        /// A browser origin allowed to call the server (CORS; repeatable), e.g.
        /// https://app.example.com; `*` allows any origin.
        #[arg(
            long = "cors-origin",
            value_name = "ORIGIN",
            env = "MCP_CORS_ORIGINS",
            value_delimiter = ','
        )]
        cors_origins: Vec<String>,
        /// A file whose content (trimmed) is the bearer token every HTTP request must
        /// present.
        #[arg(long, value_name = "PATH", env = "MCP_BEARER_TOKEN_FILE")]
        bearer_token_file: Option<PathBuf>,
        /// How logs are written on stderr: `text` for people, or `json` (one JSON object
        /// per line, with an audit event for every tool call).
        #[arg(
            long,
            value_name = "FORMAT",
            default_value = "text",
            env = "MCP_LOG_FORMAT"
        )]
        log_format: LogFormat,
        #[command(flatten)]
        operating: Operating,
        #[cfg(feature = "oauth")]
        #[command(flatten)]
        oauth: oauth::OAuthFlags,
    },
    /// Print the catalog, or one provider's form of it, on stdout.
    List {
        /// catalog (tools, prompts and resources), mcp, openai, openai-strict, openai-responses, anthropic, gemini,
        /// gemini-legacy, or prompt (the plain-text list for models without function calling).
        #[arg(long, short, default_value = "catalog", value_parser = parse_format)]
        format: Format,
        /// Export the tools the format can express and name the others on stderr, instead
        /// of refusing the whole export.
        #[arg(long)]
        skip_inexpressible: bool,
    },
    /// Call one tool and print its result (name, input, output or error) as JSON.
    Call {
        /// The tool's name.
        name: String,
        /// The arguments as a JSON object; read from stdin when left out and stdin is not a
        /// terminal.
        json: Option<String>,
    },
    /// Check the catalog: examples against schemas, names, descriptions, export limits, sizes.
    Check,
    /// Compare the catalog with a saved `list --format catalog` file; fails on breaking changes.
    Diff {
        /// The saved catalog artefact.
        old: PathBuf,
    },
}

/// What `serve` records of calls and holds them to: the registry's settings.
#[derive(clap::Args, Debug)]
struct Operating {
    /// Write the arguments' values into each call's audit event (only their size
    /// otherwise).
    #[arg(long)]
    audit_arguments: bool,
    /// Hold each client to this many requests (HTTP: 429 with Retry-After past it) or
    /// tool calls (stdio), e.g. 100/s, 600/min. A client is its token's subject, else its
    /// session, else its address.
    #[arg(long, value_name = "RATE", env = "MCP_RATE_LIMIT")]
    rate_limit: Option<crate::ops::Rate>,
    /// The most tool calls one client (a session, a token's subject) may make; past it,
    /// calls are answered an error result whose status is budget_exceeded.
    #[arg(long, value_name = "N", env = "MCP_MAX_CALLS")]
    max_calls: Option<u64>,
    /// The most tokens of tool output one client may receive; past it, calls are answered
    /// an error result whose status is budget_exceeded.
    #[arg(long, value_name = "N", env = "MCP_MAX_OUTPUT_TOKENS")]
    max_output_tokens: Option<u64>,
    /// Count calls, errors, calls in flight and durations per tool, and serve them as
    /// Prometheus text at GET /metrics (needs --http).
    #[arg(long, requires = "http")]
    metrics: bool,
}

impl Operating {
    /// The registry these settings make.
    fn apply(&self, builder: RegistryBuilder) -> RegistryBuilder {
        let mut budget = crate::ops::Budget::default();
        if let Some(calls) = self.max_calls {
            budget = budget.calls(calls);
        }
        if let Some(tokens) = self.max_output_tokens {
            budget = budget.output_tokens(tokens);
        }
        let builder = builder
            .metrics(self.metrics)
            .audit_arguments(self.audit_arguments)
            .budget(budget);
        match self.rate_limit {
            Some(rate) => builder.client_rate(rate),
            None => builder,
        }
    }
}

/// How `serve` writes its logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Lines for people; audit events only when `RUST_LOG` asks for them.
    Text,
    /// One JSON object per line, audit events included.
    Json,
}

fn parse_format(name: &str) -> Result<Format, String> {
    name.parse()
}

/// A socket address, or a host name with a port resolved to one (IPv4 first: `localhost`
/// then serves the clients that try 127.0.0.1, the most common).
fn parse_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(address) = text.parse() {
        return Ok(address);
    }
    if text.rsplit_once(':').is_none() {
        return Err(format!(
            "`{text}` has no port; write HOST:PORT, e.g. 127.0.0.1:8080"
        ));
    }
    let addresses: Vec<SocketAddr> = text
        .to_socket_addrs()
        .map_err(|error| format!("cannot resolve `{text}`: {error}"))?
        .collect();
    addresses
        .iter()
        .find(|address| address.is_ipv4())
        .or_else(|| addresses.first())
        .copied()
        .ok_or_else(|| format!("`{text}` resolves to no address"))
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
    ///         .server_options(ServerOptions::default().large_outputs(LargeOutputs::default().above(32 * 1024)))
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
        let mut command = Arguments::command()
            .name(name.clone())
            .bin_name(name.clone());
        if let Some(about) = &self.about {
            command = command.about(about.clone());
        }
        for arg in self.args {
            command = command.arg(arg);
        }
        if let Some(version) = &self.version {
            command = command.version(version.clone()).disable_version_flag(false);
        }
        let matches = match command.clone().try_get_matches_from(&args) {
            Ok(matches) => matches,
            Err(error) => return usage_failure(error, &name),
        };
        let parsed = match Arguments::from_arg_matches(&matches) {
            Ok(parsed) => parsed,
            Err(error) => return usage_failure(error, &name),
        };
        let Some(command_given) = parsed.command else {
            let _ = command.write_help(&mut std::io::stderr());
            return ExitCode::from(2);
        };
        let mut builder = self.registry;
        if let Command::Serve { operating, .. } = &command_given {
            builder = operating.apply(builder);
        }
        if let Some(setup) = self.setup {
            builder = match setup(&matches, builder) {
                Ok(builder) => builder,
                Err(reason) => {
                    eprintln!("error: {reason} (see `{name} --help`)");
                    return ExitCode::from(2);
                }
            };
        }
        // Describing the tools needs no state; running them does.
        let runs_tools = matches!(command_given, Command::Serve { .. } | Command::Call { .. });
        let built = if runs_tools {
            builder.build()
        } else {
            builder.build_for_description()
        };
        let registry = match built {
            Ok(registry) => registry,
            Err(RegistryError::MissingState {
                what,
                tool,
                type_name,
            }) => {
                return failure(&format!(
                    "{what} `{tool}` takes State<{type_name}>, but no {type_name} was \
                     registered; register it with `Cli::new().state(...)`, or in \
                     `Cli::setup` when it depends on the command line"
                ))
            }
            Err(error) => return failure(&format!("the tools cannot start: {error}")),
        };
        match command_given {
            Command::Serve {
                http,
                threads,
                allowed_hosts,
                cors_origins,
                bearer_token_file,
                log_format,
                operating,
                #[cfg(feature = "oauth")]
                oauth,
            } => {
                #[allow(unused_mut)]
                let mut server_options = self.server_options;
                let transport = match http {
                    None => Transport::Stdio,
                    Some(address) => {
                        let token = match bearer_token(bearer_token_file.as_deref()) {
                            Ok(token) => token,
                            Err(message) => {
                                eprintln!("error: {message}");
                                return ExitCode::from(2);
                            }
                        };
                        // Told before any key file is read, so a bad one does not hide
                        // this mistake.
                        #[cfg(feature = "oauth")]
                        if token.is_some() && oauth.configured() {
                            eprintln!(
                                "error: both a bearer token and OAuth are configured; \
                                 choose one (with OAuth, clients present access tokens \
                                 and the static token would be ignored)"
                            );
                            return ExitCode::from(2);
                        }
                        #[cfg(feature = "oauth")]
                        let oauth = match oauth.settings() {
                            Ok(settings) => {
                                server_options = oauth.apply(server_options);
                                settings
                            }
                            Err(message) => {
                                eprintln!("error: {message}");
                                return ExitCode::from(2);
                            }
                        };
                        Transport::Http(Box::new(HttpSettings {
                            address,
                            allowed_hosts,
                            cors_origins,
                            bearer_token: token,
                            metrics: operating.metrics,
                            #[cfg(feature = "oauth")]
                            oauth,
                        }))
                    }
                };
                serve(
                    registry,
                    server_options,
                    &name,
                    self.version.as_deref(),
                    transport,
                    threads,
                    log_format,
                )
            }
            Command::List {
                format,
                skip_inexpressible,
            } => with_items(&registry, |items| list(items, format, skip_inexpressible)),
            Command::Call { name, json } => call(&registry, &name, json),
            Command::Check => with_items(&registry, check),
            Command::Diff { old } => with_items(&registry, |items| diff(items, &old)),
        }
    }
}

/// Where `serve` serves.
enum Transport {
    Stdio,
    Http(Box<HttpSettings>),
}

/// What `serve --http` was told.
struct HttpSettings {
    address: SocketAddr,
    allowed_hosts: Vec<String>,
    cors_origins: Vec<String>,
    bearer_token: Option<String>,
    /// Whether to serve `GET /metrics`.
    metrics: bool,
    /// Access tokens checked as an OAuth resource server.
    #[cfg(feature = "oauth")]
    oauth: Option<crate::transport::http::OAuth>,
}

/// The bearer token from `--bearer-token-file`, else from `MCP_BEARER_TOKEN`; none when
/// neither is set. An empty token is refused: it would be a lock anyone opens.
fn bearer_token(file: Option<&std::path::Path>) -> Result<Option<String>, String> {
    let (token, source) = match file {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => (text, format!("the file {}", path.display())),
            Err(error) => {
                return Err(format!(
                    "cannot read the bearer token from {}: {error}",
                    path.display()
                ))
            }
        },
        None => match std::env::var(BEARER_TOKEN_VARIABLE) {
            Ok(token) => (token, BEARER_TOKEN_VARIABLE.to_owned()),
            Err(std::env::VarError::NotPresent) => return Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(format!("{BEARER_TOKEN_VARIABLE} is not valid UTF-8"))
            }
        },
    };
    let token = token.trim();
    if token.is_empty() {
        return Err(format!("the bearer token in {source} is empty"));
    }
    Ok(Some(token.to_owned()))
}

/// Help and version go to stdout with success; every other parse error is one line on
/// stderr with exit code 2.
fn usage_failure(error: clap::Error, name: &str) -> ExitCode {
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

fn failure(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

fn print(text: &str) -> ExitCode {
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
struct Items<'a> {
    tools: &'a [&'a Tool],
    prompts: &'a [&'a Prompt],
    resources: &'a [&'a Resource],
}

/// Runs `f` over the registry's items.
fn with_items<R>(registry: &Registry, f: impl FnOnce(&Items<'_>) -> R) -> R {
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
fn list(items: &Items<'_>, format: Format, skip_inexpressible: bool) -> ExitCode {
    if items.is_empty() {
        eprintln!("warning: {EMPTY_CATALOG}");
    }
    if format == Format::Catalog {
        return print(&items.artefact().to_json_pretty());
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

fn call(registry: &Registry, name: &str, json: Option<String>) -> ExitCode {
    let text = match json {
        Some(text) => text,
        None if std::io::stdin().is_terminal() => String::new(),
        None => {
            let mut text = String::new();
            if let Err(error) = std::io::stdin().read_to_string(&mut text) {
                return failure(&format!("cannot read the arguments from stdin: {error}"));
            }
            text
        }
    };
    let input: Value = if text.trim().is_empty() {
        Value::Null
    } else {
        match serde_json::from_str(&text) {
            Ok(input) => input,
            Err(error) => {
                eprintln!("error: the arguments are not valid JSON: {error}");
                return ExitCode::from(2);
            }
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return failure(&format!("cannot start the async runtime: {error}")),
    };
    let result = runtime.block_on(registry.call(name, input));
    // A sync tool past its time limit has seen its cancellation fire; it gets a moment to
    // stop, and is not waited for beyond that (as `serve` does).
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    let code = print(&serde_json::to_string_pretty(&result).unwrap_or_default());
    if result.is_error() {
        ExitCode::FAILURE
    } else {
        code
    }
}

fn check(items: &Items<'_>) -> ExitCode {
    let report = crate::check::check_all(items.tools, items.prompts, items.resources);
    let mut text = report.to_string();
    let empty = items.is_empty();
    if empty {
        text.insert_str(0, &format!("error: {EMPTY_CATALOG}\n"));
    }
    let code = print(&text);
    if report.is_ok() && !empty {
        code
    } else {
        ExitCode::FAILURE
    }
}

fn diff(items: &Items<'_>, old: &std::path::Path) -> ExitCode {
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

fn serve(
    registry: Registry,
    options: ServerOptions,
    name: &str,
    version: Option<&str>,
    transport: Transport,
    threads: u16,
    log_format: LogFormat,
) -> ExitCode {
    init_logs(log_format);
    // `cargo run` sets CARGO_PKG_VERSION for the program; an installed binary says it with
    // Cli::version.
    let version = version
        .map(str::to_owned)
        .or_else(|| std::env::var("CARGO_PKG_VERSION").ok())
        .unwrap_or_else(|| "0.0.0".to_owned());
    if registry.tools().is_empty()
        && registry.prompts().is_empty()
        && registry.resources().is_empty()
    {
        tracing::warn!("{EMPTY_CATALOG}");
    }
    let info = ServerInfo::new(name, version);
    let server = McpServer::with_options(registry, info, options);
    // One thread by default: no cross-thread wake-ups per message (the costliest part of a
    // call once the work itself is small); sync tools still get the blocking pool.
    let runtime = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::from(threads))
            .enable_all()
            .build()
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => return failure(&format!("cannot start the async runtime: {error}")),
    };
    let outcome = runtime.block_on(async {
        match transport {
            Transport::Stdio => crate::transport::stdio::serve_stdio(&server).await,
            #[cfg(feature = "http")]
            Transport::Http(settings) => {
                let address = settings.address;
                let options = http_options(*settings).map_err(std::io::Error::other)?;
                crate::transport::http::serve(server, address, options).await
            }
            #[cfg(not(feature = "http"))]
            Transport::Http(_) => Err(std::io::Error::other(
                "this build has no HTTP support (the `http` feature is off)",
            )),
        }
    });
    // Tools still running (a sync tool ignoring cancellation) must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(&format!("the server stopped: {error}")),
    }
}

/// Logs go to stderr, never to stdout (which carries the protocol on stdio). Text has
/// colour only for a person at a terminal (https://no-color.org) and leaves out the audit
/// trail unless `RUST_LOG` names it; JSON lines are for machines and carry it.
fn init_logs(format: LogFormat) {
    use crate::ops::AUDIT_TARGET;
    let default_filter = match format {
        LogFormat::Text => format!("info,{AUDIT_TARGET}=off"),
        LogFormat::Json => "info".to_owned(),
    };
    let directives = match (format, std::env::var("RUST_LOG").ok()) {
        (_, None) => default_filter.clone(),
        // A level for people (RUST_LOG=debug, say) does not turn the audit trail on in
        // text; naming its target does.
        (LogFormat::Text, Some(asked)) if !asked.contains(AUDIT_TARGET) => {
            format!("{asked},{AUDIT_TARGET}=off")
        }
        (_, Some(asked)) => asked,
    };
    let filter = tracing_subscriber::EnvFilter::try_new(directives)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    let _ = match format {
        LogFormat::Text => {
            let colour = std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
            logs.with_ansi(colour).try_init()
        }
        LogFormat::Json => logs
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
    };
}

/// The HTTP options `serve --http` was given; the REST endpoints are on.
#[cfg(feature = "http")]
fn http_options(settings: HttpSettings) -> Result<crate::transport::http::HttpOptions, String> {
    use crate::transport::http::{Cors, HttpOptions};
    let mut options = HttpOptions::for_address(settings.address).rest(true);
    if settings.metrics {
        options = options.metrics(crate::ops::Prometheus::install()?);
    }
    if !settings.allowed_hosts.is_empty() {
        options = options.allowed_hosts(settings.allowed_hosts);
    }
    if settings.cors_origins.iter().any(|origin| origin == "*") {
        options = options.cors(Cors::Any);
    } else if !settings.cors_origins.is_empty() {
        options = options.cors(Cors::Origins(settings.cors_origins));
    }
    if let Some(token) = settings.bearer_token {
        options = options.bearer_token(token);
    }
    #[cfg(feature = "oauth")]
    if let Some(oauth) = settings.oauth {
        options = options.oauth(oauth);
    }
    Ok(options)
}
