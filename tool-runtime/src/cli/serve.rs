//! `serve`: the registry served over MCP on stdio, or over Streamable HTTP with the REST
//! endpoints, with its logs on stderr.

use super::args::{LogFormat, ServeArgs};
use super::commands::failure;
use super::EMPTY_CATALOG;
use crate::call::blocking::turns;
use crate::mcp::{McpServer, ServerInfo, ServerOptions};
use crate::registry::Registry;
use std::io::IsTerminal;
#[cfg(feature = "http")]
use std::net::SocketAddr;
use std::process::ExitCode;

/// The environment variable holding the bearer token `serve --http` requires.
#[cfg(feature = "http")]
const BEARER_TOKEN_VARIABLE: &str = "MCP_BEARER_TOKEN";

/// `serve`, as its flags say: over stdio, or over HTTP with what the flags configure.
pub(super) fn serve_command(
    args: ServeArgs,
    registry: Registry,
    server_options: ServerOptions,
    name: &str,
    version: Option<&str>,
) -> ExitCode {
    if let Some(refused) = super::missing::refused(&args) {
        eprintln!("error: {refused}");
        return ExitCode::from(2);
    }
    let mut server_options = server_options;
    if let Some(most) = args.load.max_in_flight {
        server_options = server_options.max_in_flight(most as usize);
    }
    if let Some(most) = args.load.max_in_flight_total {
        server_options = server_options.max_in_flight_total(most as usize);
    }
    let transport = match args.http {
        None => Transport::Stdio,
        // Refused above with the feature to enable.
        #[cfg(not(feature = "http"))]
        Some(_) => return ExitCode::from(2),
        #[cfg(feature = "http")]
        Some(address) => {
            let settings = http_settings(address, &args, &mut server_options);
            match settings {
                Ok(settings) => Transport::Http(Box::new(settings)),
                Err(message) => {
                    eprintln!("error: {message}");
                    return ExitCode::from(2);
                }
            }
        }
    };
    #[cfg(feature = "otel")]
    if let Some(bytes) = args.otel_arguments {
        crate::otel::record_arguments(bytes);
    }
    serve(
        registry,
        server_options,
        Served {
            name,
            version,
            transport,
            threads: args.threads,
            log_format: args.log_format,
            store: &args.store,
            otel_endpoint: args.otel_endpoint.as_deref(),
            otel_protocol: args.otel_protocol.as_deref(),
        },
    )
}

/// How `serve` serves: under which name, over which transport, on how many threads,
/// sharing which store.
pub(super) struct Served<'a> {
    pub(super) name: &'a str,
    pub(super) version: Option<&'a str>,
    pub(super) transport: Transport,
    pub(super) threads: u16,
    pub(super) log_format: LogFormat,
    pub(super) store: &'a super::store::StoreFlags,
    /// The collector `--otel-endpoint` names, if any.
    pub(super) otel_endpoint: Option<&'a str>,
    /// The protocol `--otel-protocol` names, if any.
    pub(super) otel_protocol: Option<&'a str>,
}

/// What `serve --http ADDR` was told, checked: a bearer token or OAuth (never both), whose
/// settings also change `options`.
#[cfg(feature = "http")]
fn http_settings(
    address: SocketAddr,
    args: &ServeArgs,
    #[allow(unused_variables)] options: &mut ServerOptions,
) -> Result<HttpSettings, String> {
    let token = super::secrets::token(args.bearer_token_file.as_deref(), BEARER_TOKEN_VARIABLE)?;
    // Told before any key file is read, so a bad one does not hide this mistake.
    #[cfg(feature = "oauth")]
    if token.is_some() && args.oauth.configured() {
        return Err(
            "both a bearer token and OAuth are configured; choose one (with OAuth, \
                    clients present access tokens and the static token would be ignored)"
                .to_owned(),
        );
    }
    #[cfg(feature = "oauth")]
    let oauth = {
        let settings = args.oauth.settings()?;
        *options = args.oauth.apply(options.clone());
        settings
    };
    Ok(HttpSettings {
        address,
        trusted_proxies: args.trusted_proxies.clone(),
        drain_delay: args.drain_delay,
        load: args.load,
        catalog_page: !args.no_catalog_page && (args.catalog_page || address.ip().is_loopback()),
        allowed_hosts: args.allowed_hosts.clone(),
        cors_origins: args.cors_origins.clone(),
        bearer_token: token,
        metrics: args.operating.metrics,
        #[cfg(feature = "oauth")]
        oauth,
    })
}

/// Where `serve` serves.
pub(super) enum Transport {
    Stdio,
    #[cfg(feature = "http")]
    Http(Box<HttpSettings>),
}

/// What `serve --http` was told.
#[cfg(feature = "http")]
pub(super) struct HttpSettings {
    address: SocketAddr,
    /// The proxies whose forwarded addresses are believed, as written.
    trusted_proxies: Vec<String>,
    /// How long to drain on shutdown, when set.
    drain_delay: Option<std::time::Duration>,
    /// The caps and time limits of sessions and connections.
    load: super::args::LoadLimits,
    /// Whether `GET /` serves the catalog page.
    catalog_page: bool,
    allowed_hosts: Vec<String>,
    cors_origins: Vec<String>,
    bearer_token: Option<String>,
    /// Whether to serve `GET /metrics`.
    metrics: bool,
    /// Access tokens checked as an OAuth resource server.
    #[cfg(feature = "oauth")]
    oauth: Option<crate::transport::http::OAuth>,
}

pub(super) fn serve(registry: Registry, options: ServerOptions, served: Served<'_>) -> ExitCode {
    let Served {
        name,
        version,
        transport,
        threads,
        log_format,
        store,
        otel_endpoint,
        otel_protocol,
    } = served;
    // Kept to the end: dropped once the runtime has stopped, it sends the last spans.
    let _traces = match init_logs(log_format, (otel_endpoint, otel_protocol), name) {
        Ok(traces) => traces,
        Err(message) => return failure(&message),
    };
    // `cargo run` sets CARGO_PKG_VERSION for the program; an installed binary says it with
    // Cli::version.
    let version = version
        .map(str::to_owned)
        .or_else(|| std::env::var("CARGO_PKG_VERSION").ok())
        .unwrap_or_else(|| "0.0.0".to_owned());
    if registry.tools().is_empty()
        && registry.prompts().is_empty()
        && registry.resources().is_empty()
        && !registry.grows_when_started()
    {
        tracing::warn!("{EMPTY_CATALOG}");
    }
    let info = ServerInfo::new(name, version);
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
    let store = store.clone();
    let serving = async move {
        // The store is reached on the runtime, before the server exists: its keys and its
        // tasks are the server's from the first request.
        let options = store.apply(options).await.map_err(std::io::Error::other)?;
        let server = McpServer::with_options(registry, info, options);
        if server.registry().grows_when_started() {
            // Clients see the mounted servers' tools from their first list.
            super::remote::mounts_listed(server.start_mounts()).await;
        }
        match transport {
            Transport::Stdio => crate::transport::stdio::serve_stdio(&server).await,
            #[cfg(feature = "http")]
            Transport::Http(settings) => {
                let address = settings.address;
                let options = http_options(*settings).map_err(std::io::Error::other)?;
                crate::transport::http::serve(server, address, options).await
            }
        }
    };
    // On one thread, quick sync tools run on it between the runtime's turns. Tools still
    // running when the server stops (a sync tool ignoring cancellation) hold the exit for a
    // second at most.
    let outcome = turns::drive(runtime, serving, std::time::Duration::from_secs(1));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failure(&format!("the server stopped: {error}")),
    }
}

/// Logs go to stderr, never to stdout (which carries the protocol on stdio). Text has
/// colour only for a person at a terminal (https://no-color.org) and leaves out the audit
/// trail unless `RUST_LOG` names it; JSON lines are for machines and carry it.
/// Starts the logs on stderr in `format` (levels and targets from `RUST_LOG`), and the
/// export of traces when `otel_endpoint` or the OTLP variables name a collector (its
/// guard, which sends what is left when dropped).
fn init_logs(
    format: LogFormat,
    otel: (Option<&str>, Option<&str>),
    service: &str,
) -> Result<Option<Traces>, String> {
    use crate::ops::AUDIT_TARGET;
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    // The spans exported as traces are no log lines: logs leave them out unless asked.
    let quiet = format!("{AUDIT_TARGET}=off,tool_runtime::otel=off");
    let default_filter = match format {
        LogFormat::Text => format!("info,{quiet}"),
        LogFormat::Json => "info,tool_runtime::otel=off".to_owned(),
    };
    let directives = match (format, std::env::var("RUST_LOG").ok()) {
        (_, None) => default_filter.clone(),
        // A level for people (RUST_LOG=debug, say) does not turn the audit trail on in
        // text; naming its target does.
        (LogFormat::Text, Some(asked)) if !asked.contains(AUDIT_TARGET) => {
            format!("{asked},{quiet}")
        }
        (_, Some(asked)) if !asked.contains("tool_runtime::otel") => {
            format!("{asked},tool_runtime::otel=off")
        }
        (_, Some(asked)) => asked,
    };
    // `RUST_LOG` as targets and levels (`info,my_crate=debug`): span and field filters
    // would need env-filter's regular-expression engine in every binary, for logs.
    let filter: Targets = directives
        .parse()
        .unwrap_or_else(|_| default_filter.parse().unwrap_or_default());
    // A macro, not a closure: each subscriber below is a different type to log for.
    macro_rules! logs {
        () => {
            tracing_subscriber::fmt::layer().with_writer(std::io::stderr)
        };
    }
    let colour = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let traces = export_traces(otel, service)?;
    #[cfg(feature = "otel")]
    if let Some((exported, guard)) = traces {
        use tracing_subscriber::Layer;
        // Each layer its own filter: the logs' leave out what only the traces want.
        let subscriber = tracing_subscriber::registry().with(exported);
        let _ = match format {
            LogFormat::Text => subscriber
                .with(logs!().with_ansi(colour).with_filter(filter))
                .try_init(),
            LogFormat::Json => subscriber
                .with(
                    logs!()
                        .json()
                        .flatten_event(true)
                        .with_current_span(false)
                        .with_filter(filter),
                )
                .try_init(),
        };
        return Ok(Some(guard));
    }
    #[cfg(not(feature = "otel"))]
    if let Some(never) = traces {
        match never {}
    }
    // Without traces, a global filter (a layer before the output): what it turns off costs
    // nothing past the callsite's cached interest.
    let subscriber = tracing_subscriber::registry().with(filter);
    let _ = match format {
        LogFormat::Text => subscriber.with(logs!().with_ansi(colour)).try_init(),
        LogFormat::Json => subscriber
            .with(logs!().json().flatten_event(true).with_current_span(false))
            .try_init(),
    };
    Ok(None)
}

/// What keeps the export of traces going while the server runs.
#[cfg(feature = "otel")]
type Traces = crate::otel::OtelGuard;
#[cfg(not(feature = "otel"))]
type Traces = std::convert::Infallible;

/// The layer exporting traces and its guard, when a collector is named (`--otel-endpoint`,
/// or the OTLP variables).
#[cfg(feature = "otel")]
#[allow(clippy::type_complexity)]
fn export_traces(
    (endpoint, protocol): (Option<&str>, Option<&str>),
    service: &str,
) -> Result<
    Option<(
        Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>,
        Traces,
    )>,
    String,
> {
    use crate::otel::OtlpExport;
    let export = match endpoint {
        Some(endpoint) => OtlpExport::to(endpoint),
        None => match OtlpExport::from_env() {
            Some(export) => export,
            None => return Ok(None),
        },
    };
    let export = match protocol {
        Some(protocol) => export.protocol(protocol.parse().map_err(|error| format!("{error}"))?),
        None => export,
    };
    let (layer, guard) = export
        .service_name(service)
        .install()
        .map_err(|error| error.to_string())?;
    Ok(Some((layer, guard)))
}

/// Without the `otel` feature there is nothing to export (`--otel-endpoint` was refused).
#[cfg(not(feature = "otel"))]
fn export_traces(
    _otel: (Option<&str>, Option<&str>),
    _service: &str,
) -> Result<Option<Traces>, String> {
    Ok(None)
}

/// The HTTP options `serve --http` was given; the REST endpoints are on.
#[cfg(feature = "http")]
fn http_options(settings: HttpSettings) -> Result<crate::transport::http::HttpOptions, String> {
    use crate::transport::http::{Cors, HttpOptions};
    let mut options = HttpOptions::for_address(settings.address).rest(true);
    let mut proxies = Vec::new();
    for proxy in &settings.trusted_proxies {
        // A single address is a block of one.
        let parsed = proxy
            .parse::<crate::transport::http::IpNet>()
            .or_else(|_| proxy.parse::<std::net::IpAddr>().map(Into::into))
            .map_err(|_| {
                format!(
                    "--trusted-proxy {proxy:?} is not an address block (10.0.0.0/8) or an address"
                )
            })?;
        proxies.push(parsed);
    }
    let load = settings.load;
    options = options
        .trusted_proxies(proxies)
        .catalog_page(settings.catalog_page);
    if let Some(most) = load.max_sessions {
        options = options.max_sessions(most as usize);
    }
    if let Some(most) = load.max_connections {
        options = options.max_connections(most as usize);
    }
    if let Some(most) = load.max_connections_per_client {
        options = options.max_connections_per_client(most as usize);
    }
    if let Some(limit) = load.head_timeout {
        options = options.head_timeout(limit);
    }
    if let Some(limit) = load.body_timeout {
        options = options.body_timeout(limit);
    }
    if let Some(delay) = settings.drain_delay {
        options = options.drain_delay(delay);
    }
    if settings.metrics {
        #[cfg(feature = "prometheus")]
        {
            options = options.metrics(crate::ops::Prometheus::install()?);
        }
        #[cfg(not(feature = "prometheus"))]
        return Err(super::missing::feature("--metrics", "prometheus"));
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
