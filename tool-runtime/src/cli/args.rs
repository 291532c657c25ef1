//! The command line's arguments, as clap reads them.

use crate::export::Format;
use crate::registry::RegistryBuilder;
use clap::{Parser, Subcommand};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

#[cfg(feature = "oauth")]
use super::oauth;

#[derive(Parser, Debug)]
#[command(
    about = "Tools for LLMs: serve them over MCP, list them for providers, call and check them.",
    disable_version_flag = true
)]
pub(super) struct CommandLine {
    #[command(subcommand)]
    pub(super) command: Option<Command>,
}

#[derive(Subcommand, Debug)]
// Parsed once per process: `serve`'s many flags cost nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub(super) enum Command {
    /// Serve the tools over MCP: stdio by default, Streamable HTTP with --http.
    #[command(
        after_help = "Over HTTP, every request must present `Authorization: Bearer \
        <token>` when the environment variable MCP_BEARER_TOKEN (or the file named by \
        --bearer-token-file) holds a token. No flag takes the token itself: the command \
        line is visible to every user of the machine."
    )]
    Serve(ServeArgs),
    /// Print the catalog, or one provider's form of it, on stdout (the mounted servers'
    /// tools too, with --mount).
    List {
        /// catalog (tools, prompts and resources), mcp, openai-chat, openai-chat-strict,
        /// openai-responses, anthropic, gemini, gemini-legacy, prompt (the plain-text list
        /// for models without function calling), or openapi (the REST endpoints, OpenAPI 3.1).
        /// The provider names are those `answer --format` takes.
        #[arg(long, short, default_value = "catalog", value_parser = parse_format)]
        format: Format,
        /// Export the tools the format can express and name the others on stderr, instead
        /// of refusing the whole export.
        #[arg(long)]
        skip_inexpressible: bool,
        /// List another MCP server's catalog instead of this binary's: a URL, or a command
        /// line to start the server over stdio.
        #[arg(long, value_name = "SERVER")]
        server: Option<String>,
        #[command(flatten)]
        access: super::access::ServerAccess,
        #[command(flatten)]
        mounts: super::remote::Mounts,
    },
    /// Call one tool and print its result (name, input, output or error) as JSON (a mounted
    /// server's tool too, with --mount).
    Call {
        /// The tool's name.
        name: String,
        /// The arguments as a JSON object; read from stdin when left out and stdin is not a
        /// terminal.
        json: Option<String>,
        /// Call a tool of another MCP server instead of this binary's: a URL, or a command
        /// line to start the server over stdio.
        #[arg(long, value_name = "SERVER")]
        server: Option<String>,
        #[command(flatten)]
        access: super::access::ServerAccess,
        #[command(flatten)]
        mounts: super::remote::Mounts,
        /// Show no progress (by default, a bar on a terminal and a line per report
        /// otherwise, on stderr).
        #[arg(long, short)]
        quiet: bool,
    },
    /// Get one prompt's messages, as JSON, with its arguments.
    Prompt {
        /// The prompt's name.
        name: String,
        /// The arguments as a JSON object of strings; read from stdin when left out and
        /// stdin is not a terminal.
        json: Option<String>,
    },
    /// Read one resource, and print its contents as JSON.
    Read {
        /// The resource's URI (a template's URI with its variables filled in).
        uri: String,
    },
    /// Answer a model's tool calls: its message (or its whole response) on stdin, what
    /// the next turn needs on stdout (one result per call, in the model's order).
    Answer {
        /// The provider's API the message is written in: openai-chat, openai-responses,
        /// anthropic or gemini (the names `list --format` uses).
        #[arg(
            long = "format",
            short,
            visible_alias = "dialect",
            value_parser = clap::builder::ValueParser::new(|name: &str| {
                name.parse::<crate::agent::Dialect>()
            })
        )]
        dialect: crate::agent::Dialect,
        #[command(flatten)]
        mounts: super::remote::Mounts,
    },
    /// Check the catalog: examples against schemas, names, descriptions, export limits, sizes
    /// (the mounted servers' tools too, with --mount).
    Check {
        #[command(flatten)]
        mounts: super::remote::Mounts,
    },
    /// Compare the catalog with a saved `list --format catalog` file; fails on breaking changes.
    Diff {
        /// The saved catalog artefact.
        old: PathBuf,
    },
}

/// What `serve` records of calls and holds them to: the registry's settings.
#[derive(clap::Args, Debug)]
pub(super) struct Operating {
    /// Write the arguments' values into each call's audit event (only their size
    /// otherwise).
    #[arg(long)]
    audit_arguments: bool,
    /// Hold each client to this many tool calls, e.g. 100/s, 600/min; past it a call is
    /// an error result saying when to call again (REST: 429 with Retry-After). A client is
    /// its token's subject, else its session, else its address.
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
    pub(super) metrics: bool,
}

impl Operating {
    /// The registry these settings make.
    pub(super) fn apply(&self, builder: RegistryBuilder) -> RegistryBuilder {
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
pub(super) enum LogFormat {
    /// Lines for people; audit events only when `RUST_LOG` asks for them.
    Text,
    /// One JSON object per line, audit events included.
    Json,
}

fn parse_format(name: &str) -> Result<Format, String> {
    name.parse()
}

/// A delay as people write it (`500ms`, `2s`), or `0`.
pub(super) fn parse_delay(text: &str) -> Result<std::time::Duration, String> {
    if text.trim() == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    tool_rules::parse_duration(text).map(std::time::Duration::from_millis)
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

/// What `serve` holds clients to under load, whoever they are: every table a client can
/// grow is bounded, and so is everything it can hold open.
#[derive(clap::Args, Debug, Clone, Copy)]
pub(super) struct LoadLimits {
    /// How many requests running user code (tool calls, prompts, resource reads) one
    /// connection (a stdio client, an HTTP session) may have at once (256 unless set); past
    /// it, the server-busy error (HTTP: 503).
    #[arg(
        long,
        value_name = "N",
        env = "MCP_MAX_IN_FLIGHT",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub(super) max_in_flight: Option<u32>,
    /// How many such requests all connections together may have at once (1024 unless set);
    /// at the limit, GET /readyz answers 503 so a balancer sends new ones elsewhere.
    #[arg(
        long,
        value_name = "N",
        env = "MCP_MAX_IN_FLIGHT_TOTAL",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub(super) max_in_flight_total: Option<u32>,
    /// The most HTTP sessions open at once; past it the session idle longest ends, or
    /// `initialize` gets 503 with Retry-After when none is idle (5000 unless set).
    #[arg(
        long,
        value_name = "N",
        env = "MCP_MAX_SESSIONS",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub(super) max_sessions: Option<u32>,
    /// The most HTTP connections held at once (4096 unless set).
    #[arg(
        long,
        value_name = "N",
        env = "MCP_MAX_CONNECTIONS",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub(super) max_connections: Option<u32>,
    /// The most HTTP connections held at once from one client address (a trusted proxy is
    /// held only to the total; 256 unless set).
    #[arg(
        long,
        value_name = "N",
        env = "MCP_MAX_CONNECTIONS_PER_CLIENT",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub(super) max_connections_per_client: Option<u32>,
    /// How long a request head may take to arrive (also how long an idle connection is
    /// kept between requests); 15s unless set.
    #[arg(long, value_name = "DURATION", env = "MCP_HEAD_TIMEOUT", value_parser = parse_delay)]
    pub(super) head_timeout: Option<std::time::Duration>,
    /// How long a request body may take to arrive once its head has; 30s unless set.
    #[arg(long, value_name = "DURATION", env = "MCP_BODY_TIMEOUT", value_parser = parse_delay)]
    pub(super) body_timeout: Option<std::time::Duration>,
}

/// `serve`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct ServeArgs {
    /// Serve Streamable HTTP (and the REST endpoints) on this address: a socket address
    /// or a host name with a port, e.g. 127.0.0.1:8080 or localhost:8080.
    #[arg(long, value_name = "ADDR", value_parser = parse_address)]
    pub(super) http: Option<SocketAddr>,
    /// Threads running async tools and the protocol (sync tools have their own pool).
    /// One avoids cross-thread wake-ups; more help async tools that compute.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u16).range(1..)
    )]
    pub(super) threads: u16,
    /// A host name requests may name in `Host` (repeatable). Default: loopback names
    /// for a loopback address, any host otherwise.
    #[arg(
        long = "allowed-host",
        value_name = "HOST",
        env = "MCP_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub(super) allowed_hosts: Vec<String>,
    /// A browser origin allowed to call the server (CORS; repeatable), e.g.
    /// https://app.example.com; `*` allows any origin.
    #[arg(
        long = "cors-origin",
        value_name = "ORIGIN",
        env = "MCP_CORS_ORIGINS",
        value_delimiter = ','
    )]
    pub(super) cors_origins: Vec<String>,
    /// A file whose content (trimmed) is the bearer token every HTTP request must
    /// present.
    #[arg(long, value_name = "PATH", env = "MCP_BEARER_TOKEN_FILE")]
    pub(super) bearer_token_file: Option<PathBuf>,
    /// How logs are written on stderr: `text` for people, or `json` (one JSON object
    /// per line, with an audit event for every tool call).
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "text",
        env = "MCP_LOG_FORMAT"
    )]
    pub(super) log_format: LogFormat,
    /// Export a trace span for every request and tool call over OTLP (HTTP/protobuf) to the
    /// collector at this base URL, e.g. http://127.0.0.1:4318 (spans go to its
    /// /v1/traces). Without it, OTEL_EXPORTER_OTLP_ENDPOINT turns the export on; the other
    /// OTEL_* variables (service name, sampler, headers, batching) apply either way.
    #[arg(long, value_name = "URL")]
    pub(super) otel_endpoint: Option<String>,
    /// The OTLP protocol: http/protobuf (the default) or grpc (with the feature
    /// `otel-grpc`); without it, OTEL_EXPORTER_OTLP_PROTOCOL says.
    #[arg(long, value_name = "PROTOCOL", value_parser = ["http/protobuf", "grpc"])]
    pub(super) otel_protocol: Option<String>,
    /// Record each tool call's arguments on its span, cut to this many bytes (off by
    /// default: arguments may hold personal data or secrets).
    #[arg(long, value_name = "BYTES")]
    pub(super) otel_arguments: Option<usize>,
    /// Believe the client address that requests coming from these proxies name
    /// (`Forwarded`, else `X-Forwarded-For`), e.g. 10.0.0.0/8 for the load balancer's
    /// network (repeatable). Rate limits, budgets and the audit trail then key on the real
    /// client; the headers of anyone else are ignored.
    #[arg(
        long = "trusted-proxy",
        value_name = "CIDR",
        env = "MCP_TRUSTED_PROXIES",
        value_delimiter = ',',
        requires = "http"
    )]
    pub(super) trusted_proxies: Vec<String>,
    /// On SIGTERM or Ctrl-C, how long to go on serving while GET /readyz answers 503, so a
    /// load balancer stops sending requests first (2s unless set; 0 without a balancer).
    /// The server then stops accepting and lets requests in flight finish.
    #[arg(
        long,
        value_name = "DURATION",
        env = "MCP_DRAIN_DELAY",
        value_parser = parse_delay,
        requires = "http"
    )]
    pub(super) drain_delay: Option<std::time::Duration>,
    /// Serve the catalog as a page at GET / (tools, prompts and resources, with a form
    /// per tool that calls it); on by default for a loopback address.
    #[arg(long, requires = "http", conflicts_with = "no_catalog_page")]
    pub(super) catalog_page: bool,
    /// No catalog page, even on a loopback address.
    #[arg(long, requires = "http")]
    pub(super) no_catalog_page: bool,
    #[command(flatten)]
    pub(super) operating: Operating,
    #[command(flatten)]
    pub(super) mounts: super::remote::Mounts,
    #[command(flatten)]
    pub(super) load: LoadLimits,
    #[command(flatten)]
    pub(super) store: super::store::StoreFlags,
    #[cfg(feature = "oauth")]
    #[command(flatten)]
    pub(super) oauth: oauth::OAuthFlags,
    #[cfg(not(feature = "oauth"))]
    #[command(flatten)]
    pub(super) oauth: super::missing::OAuthFlags,
}
