//! Write a Rust function, put `#[tool]` on it, and it becomes a tool an LLM can call: a JSON
//! Schema built from its parameter types, a description and examples taken from its doc
//! comment, and a place in the binary's static catalog, with no registration list.
//!
//! ```
//! use tool_runtime::{tool, Registry};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema, Default)]
//! #[serde(rename_all = "lowercase")]
//! enum Units { #[default] Metric, Imperial }
//!
//! /// Get the current weather for a city.
//! ///
//! /// Data comes from the local station cache; it is at most ten minutes old.
//! ///
//! /// Example: {"city": "London"}
//! #[tool(read_only)]
//! async fn get_weather(
//!     /// City name, as people write it.
//!     city: String,
//!     /// Temperature units.
//!     #[arg(default)] units: Units,
//! ) -> Result<String, String> {
//!     match units {
//!         Units::Metric => Ok(format!("{city}: 18 °C")),
//!         Units::Imperial => Ok(format!("{city}: 64 °F")),
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Registry::new().unwrap();
//! let tool = registry.get("get_weather").unwrap();
//! assert_eq!(tool.summary(), "Get the current weather for a city.");
//! assert_eq!(tool.input_schema()["required"], serde_json::json!(["city"]));
//!
//! let result = registry.call("get_weather", serde_json::json!({"city": "Lima"})).await;
//! assert_eq!(result.output(), Some(&serde_json::json!("Lima: 18 °C")));
//!
//! let result = registry
//!     .call("get_weather", serde_json::json!({"city": "Lima", "units": "kelvin"}))
//!     .await;
//! assert_eq!(
//!     result.error().unwrap().to_string(),
//!     concat!(
//!         r#"invalid arguments for get_weather: 'units' must be one of "metric", "#,
//!         r#""imperial"; got "kelvin""#
//!     )
//! );
//! # });
//! ```
//!
//! # Serving it
//!
//! A binary whose `main` hands over to the command line serves every `#[tool]` it links,
//! over MCP, with no more code:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     tool_runtime::cli::main()
//! }
//! ```
//!
//! ```sh
//! my-tools serve                           # MCP over stdio, for a client that starts it
//! my-tools serve --http 127.0.0.1:8080     # Streamable HTTP at /mcp (feature `http`)
//! my-tools list --format openai-chat       # the catalog as a provider takes it
//! my-tools call get_weather '{"city": "Lima"}'
//! ```
//!
//! In a service of your own, the MCP endpoint is an axum `Router` to nest
//! (`transport::http::router`, feature `http`):
//!
//! ```no_run
//! # #[cfg(feature = "http")]
//! # async fn serve() {
//! use tool_runtime::mcp::{McpServer, ServerInfo};
//! use tool_runtime::transport::http::{router, HttpOptions};
//!
//! let tools = McpServer::new(
//!     tool_runtime::Registry::new().unwrap(),
//!     ServerInfo::new("my-service", "1.0.0"),
//! );
//! let app = axum::Router::new().nest("/tools", router(tools, HttpOptions::default()));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.unwrap();
//! axum::serve(listener, app).await.unwrap();
//! # }
//! ```
//!
//! # What `#[tool]` accepts
//!
//! - A free `fn` or `async fn`, in any module of any crate linked into the binary. Sync
//!   functions never run inside a task: they run on tokio's blocking pool and, once proven
//!   quick, between the turns of the runtime `serve` drives; a timeout or a cancellation
//!   applies either way, and one that turns slow stalls no other request.
//! - Parameters of any type implementing `serde::Deserialize` and `schemars::JsonSchema`:
//!   numbers (narrow integers carry their bounds), `bool`, `char`, `String`, `Option<T>`
//!   (optional; its schema is `T`'s), `Vec<T>`, arrays, sets (`uniqueItems`), maps with
//!   string keys, `serde_json::Value`, and your own structs and enums, nested at any depth.
//! - `#[arg(default)]` or `#[arg(default = expr)]` make a parameter optional and show the
//!   default in the schema; `#[arg(rename = "x")]` renames it.
//! - Parameters the runtime fills in, which callers never see: [`State<T>`] (state
//!   registered with [`Registry::builder`]) and [`CallContext`].
//! - A return type implementing `serde::Serialize`, a `Result<T, E>` with `E: Display`
//!   (an `Err` is a tool error carrying its message), or nothing. When the output type
//!   implements `JsonSchema`, the tool has an output schema. The output is the value itself
//!   everywhere (a call's result, REST, MCP 2026-07-28); only MCP's handshake era, whose
//!   structured content must be an object, carries a non-object output as `{"result": ...}`.
//! - `#[tool(name = "...", title = "...", description = "...")]` and the MCP hints
//!   `read_only`, `destructive`, `idempotent`, `open_world` (each a flag, or `= false`).
//!
//! The doc comment's first paragraph is the summary; its prose is the description. Lines
//! starting with `Example:` (or `Ejemplo:`) are examples: a JSON object is checked at
//! compile time against the parameters and kept as data. Parameter docs come from `///` on
//! each parameter or from a rustdoc `# Arguments` section (``* `city` - text``).
//!
//! # Errors a model can act on
//!
//! [`Registry::call`] checks the arguments against the tool's schema and reports each
//! problem with the parameter, what was expected and what came. An unknown tool names the
//! closest known one; a panicking tool becomes an error result (the panic is logged, never
//! returned). A `null` argument counts as absent, as strict-mode clients send it.
//!
//! # Features
//!
//! The defaults are what every tool server needs: the command line, serving on stdio (the
//! transport every MCP client can start). The rest is one feature away, and a command-line
//! flag whose feature is missing (`serve --http` without `http`) says which to enable.
//!
//! - `cli` (default): the command line (`cli`: `serve`, `list`, `call`, `prompt`, `read`,
//!   `answer`, `check`, `diff`), with clap and tracing-subscriber. Leave it out when
//!   embedding the runtime in a service that has its own.
//! - `http`: Streamable HTTP, the REST endpoints and the catalog page, with axum: a server
//!   that clients reach over the network, or one embedded in an axum service.
//! - `oauth`: serve HTTP as an OAuth 2.1 resource server (JWT access tokens, scopes per
//!   tool).
//! - `tokens`: count tokens with a real tokenizer (`o200k_base`, 3.6 MB of vocabulary) for
//!   output-token budgets and `check`'s sizes; without it they are estimated from bytes.
//! - `prometheus`: the call metrics as Prometheus text at `GET /metrics`.
//! - `linkme`: collect tools in a `linkme` distributed slice instead of with `inventory`.
//! - `redis`: share state between replicas of a server through Redis ([`store`]).
//! - `openai`: a model client for the agent loop ([`agent`]) over any server of the OpenAI
//!   Chat Completions API (reqwest, rustls on ring).
//! - `async-openai`: conversions from and to the Chat Completions types of `async-openai`.
//! - `client`: a client of other MCP servers (the module `client`, OAuth included) and
//!   mounts of their tools beside your own (`mount`, `serve --mount`, `list --server`).
//! - `otel`: a span for every MCP request, REST call and tool call, named as
//!   OpenTelemetry's MCP and GenAI conventions say, joined to the caller's trace, and
//!   exported over OTLP (the module `otel`, `serve --otel-endpoint`).
//!
//! On docs.rs every feature is shown, and each item says which feature it needs.
// Documentation built locally shows the features it was built with; it says which are
// left out, so that a reader of the default build knows where HTTP went.
#![cfg_attr(
    not(all(
        feature = "cli",
        feature = "http",
        feature = "oauth",
        feature = "tokens",
        feature = "prometheus",
        feature = "redis",
        feature = "openai",
        feature = "async-openai",
        feature = "client",
        feature = "otel"
    )),
    doc = "\n**This documentation was built without some features**, and leaves out what \
           they add. `cargo doc -p tool-runtime --all-features --open` shows everything, \
           as docs.rs does. Left out here:\n"
)]
#![cfg_attr(not(feature = "cli"), doc = "- `cli`: the module `cli`\n")]
#![cfg_attr(
    not(feature = "http"),
    doc = "- `http`: the module `transport::http` (Streamable HTTP, the REST endpoints, the \
           catalog page, `router` to embed in an axum service)\n"
)]
#![cfg_attr(not(feature = "oauth"), doc = "- `oauth`: `transport::http::OAuth`\n")]
#![cfg_attr(
    not(feature = "prometheus"),
    doc = "- `prometheus`: `ops::Prometheus`\n"
)]
#![cfg_attr(
    not(feature = "redis"),
    doc = "- `redis`: connecting a `store::Store` to Redis, which replicas share\n"
)]
#![cfg_attr(
    not(feature = "openai"),
    doc = "- `openai`: `agent::openai`, the Chat Completions client\n"
)]
#![cfg_attr(
    not(feature = "async-openai"),
    doc = "- `async-openai`: conversions from and to `async-openai`'s types\n"
)]
#![cfg_attr(
    not(feature = "client"),
    doc = "- `client`: the modules `client` and `mount`\n"
)]
#![cfg_attr(
    not(feature = "otel"),
    doc = "- `otel`: the module `otel` (traces over OpenTelemetry)\n"
)]
#![cfg_attr(
    not(feature = "tokens"),
    doc = "- `tokens`: real token counts (`o200k_base`)\n"
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agent;
mod call;
pub mod catalog;
pub mod check;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "client")]
pub mod client;
mod clock;
pub mod diff;
pub mod export;
pub mod layers;
pub mod mcp;
#[cfg(feature = "client")]
pub mod mount;
pub mod ops;
#[cfg(feature = "otel")]
pub mod otel;
mod registration;
pub mod registry;
mod schema;
/// The validators, open to the fuzz targets (built only as cargo-fuzz builds).
#[cfg(fuzzing)]
#[doc(hidden)]
pub use schema::fuzzing as __fuzzing;
pub mod store;
mod sync;
pub mod tasks;
mod tokens;
pub mod transport;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

/// Turns a function into a tool of the binary's static catalog: its JSON Schema from the
/// parameter types, its description and examples from the doc comment, its place in the
/// catalog with no registration to write.
///
/// ```
/// use tool_runtime::{tool, Registry};
///
/// /// List the directories under a path.
/// ///
/// /// Example: {"path": "src", "depth": 2}
/// #[tool(read_only, idempotent, timeout = "5s")]
/// fn list_dirs(
///     /// Directory to list, from the root.
///     path: String,
///     /// How many levels down.
///     #[arg(range(min = 1, max = 3), default = 1)]
///     depth: u8,
/// ) -> Result<Vec<String>, String> {
///     Ok(vec![format!("{path} ({depth} levels)")])
/// }
///
/// let registry = Registry::new().unwrap();
/// let schema = registry.get("list_dirs").unwrap().input_schema().clone();
/// assert_eq!(schema["properties"]["depth"]["maximum"], 3);
/// ```
///
/// # The function
///
/// A free `fn` or `async fn` (no `self`, no generics, no `impl Trait` or borrowed
/// parameters). Parameters are arguments (any `serde::Deserialize` + `schemars::JsonSchema`
/// type; `Option<T>` is optional) or filled in by the runtime ([`State<T>`],
/// [`CallContext`], [`Progress`], [`Logger`], [`Cancellation`], through aliases too). It
/// returns a `serde::Serialize` value, a `Result<T, E>` with `E: Display` (an `Err` is a
/// tool error the model reads), content blocks ([`Content`]), or nothing.
///
/// # The doc comment
///
/// The first paragraph is the summary, the prose the description. `Example: {...}` lines
/// (or `Ejemplo:`) are argument examples, checked at compile time against the parameters
/// (names, required ones, limits); other `Example:` text is kept as text. `///` on a
/// parameter, or ``* `name` - text`` under `# Arguments`, describes it.
///
/// # `#[tool(...)]` keys
///
/// - `name = "..."`: the name callers use (default: the function's);
///   `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`
/// - `title = "..."`: a human-friendly title
/// - `description = "..."`: instead of the doc comment's prose
/// - `read_only`, `destructive`, `idempotent`, `open_world`: MCP hints, each a flag or `= false`
/// - `timeout = "5s"`: the call stops with an error result after that long (`ms`, `s`, `m`, `h`,
///   `d`; `1.5s` too)
/// - `rate = "10/s"`: how often the tool may be called, by all callers together (`"100/min"`,
///   `"3/10s"`); past it a call is an error result saying when to call again
/// - `scopes = ["files:read", ...]`: the OAuth scopes a caller's access token must grant; without
///   them the call is refused (HTTP 403 over HTTP)
/// - `task = "optional"`, `"required"`, `"forbidden"`: whether a call can (or must) run as a task
/// - `large_output = "resource"` or `"cut"`: a large output answered as a link to it, or cut at the
///   server's limit
///
/// # `#[arg(...)]` keys, on a parameter
///
/// - `default`, `default = expr`: optional, with `Default::default()` or `expr`; the default is
///   shown in the schema
/// - `rename = "x"`: the name callers use
/// - `range(min = .., max = ..)`: bounds of a number (`minimum`, `maximum`)
/// - `length(min = .., max = ..)`: a string's length in characters, or a list's in items
/// - `pattern = "..."`: a regular expression a string must match (anywhere, as JSON Schema says;
///   anchor it with `^...$`)
/// - `header = "Name"`: the value is mirrored in the HTTP header `Mcp-Param-Name`
/// - `inject`: the runtime fills this parameter in (its type implements the runtime's injection
///   trait)
///
/// Limits are in the schema, enforced before the tool runs (an error naming the parameter,
/// the limit and the value), and checked against the examples at compile time; a limit on a
/// type it does not fit is a compile error. `complete = function` is for prompts and
/// resources.
///
/// A module's tools can go under a prefix with [`namespace!`].
pub use tool_macros::tool;

/// Turns a function into a prompt of the binary's static catalog: messages a user picks by
/// name, with string arguments read from the parameters (doc comments describe them; an
/// `Option` is not required).
///
/// The function returns a `String` (one message from the user), a
/// [`PromptMessage`](result::PromptMessage), a `Vec` of them, or a `Result` of one of these.
/// `#[prompt(name = "...", title = "...", description = "...", timeout = "...")]` override
/// what the function and its doc comment say; `#[arg(complete = function)]` on a parameter
/// names the function that completes it.
///
/// ```
/// use tool_runtime::prompt;
///
/// /// Ask for a code review.
/// #[prompt(title = "Code review")]
/// fn review(
///     /// The code to review.
///     code: String,
///     /// What to focus on; everything when left out.
///     focus: Option<String>,
/// ) -> String {
///     format!(
///         "Review this code, focusing on {}:\n{code}",
///         focus.as_deref().unwrap_or("everything")
///     )
/// }
/// ```
pub use tool_macros::prompt;

/// Turns a function into a resource of the binary's static catalog: content read by URI.
///
/// `#[resource("uri")]` on a function without parameters is one resource; with
/// parameters, the URI is an RFC 6570 template whose variables are the parameters
/// (`#[resource("files:///{+path}")]` with `path: String`), checked at compile time both
/// ways. Parameters such as `State<T>` are filled in by the runtime as for tools. The
/// function returns a `String` (text), a `Vec<u8>` (binary), a `serde_json::Value`,
/// [`EmbeddedResource`](result::EmbeddedResource)s, or a `Result` of one of these; keys
/// `name`, `title`, `description`, `mime_type`, `size` and `timeout` may follow the URI.
///
/// ```
/// use tool_runtime::resource;
///
/// /// The project's README.
/// #[resource("docs:///readme", mime_type = "text/markdown")]
/// fn readme() -> &'static str {
///     "# My project"
/// }
///
/// /// A user's profile, as JSON.
/// #[resource("users://{id}/profile", mime_type = "application/json")]
/// fn profile(id: u32) -> serde_json::Value {
///     serde_json::json!({"id": id})
/// }
/// ```
pub use tool_macros::resource;

pub use call::content::Content;
pub use call::context::{CallContext, State};
pub use call::error::CallError;
pub use call::output::{ToolError, ToolOutput};
pub use call::result::ToolResult;
pub use call::scope::{Cancellation, Logger, Progress};
pub use registry::{DynamicTool, Registry};

/// What a call gives back beside the names at the crate's root ([`ToolResult`],
/// [`CallError`], [`Content`], [`ToolError`], [`ToolOutput`]): the problems of refused
/// arguments, content made of resources, and what prompts and resources answer.
pub mod result {
    pub use crate::call::content::{EmbeddedResource, IntoContent};
    pub use crate::call::error::{ArgumentProblem, FailedAnswer};
    pub use crate::call::surface_output::{PromptMessage, PromptOutput, ResourceOutput, Role};
}

/// What the runtime knows of a call beside the names at the crate's root ([`CallContext`],
/// [`State`], [`Progress`], [`Logger`], [`Cancellation`]): who made it, the level of its
/// log messages, and what completes a prompt's or a resource's arguments.
pub mod context {
    pub use crate::call::caller::Caller;
    pub use crate::call::complete::{Completer, CompletionContext};
    pub use crate::call::scope::{LogLevel, Protocol};
}

/// Asking the client while a call runs: the user (a form, or a page to visit), the
/// client's model, the client's roots. A tool asks through its [`CallContext`]
/// ([`elicit`](CallContext::elicit), [`elicit_url`](CallContext::elicit_url),
/// [`url_elicitation_required`](CallContext::url_elicitation_required),
/// [`sample`](CallContext::sample), [`roots`](CallContext::roots)) and writes it the same
/// way for every protocol version: in the handshake era the question goes to the client at
/// once and the call waits for the answer; at 2026-07-28 the call is answered
/// `input_required` with its questions, and runs again when the client retries it with the
/// answers (what the tool [`keep`](CallContext::keep)s travels along, sealed).
pub mod ask {
    pub use crate::call::ask::{
        Ask, AskError, ClientCapability, ElicitForm, ElicitationCompletion, Elicited, Root,
        Sampled, Sampling, ToolChoice, ToolUse, UrlElicitation,
    };
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
