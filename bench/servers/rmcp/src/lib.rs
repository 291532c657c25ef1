//! What rmcp_example and rmcp_tuned share: the four tools' argument and output types, their
//! bodies, the command line and the Streamable HTTP set-up. Only the handler differs.

use std::sync::Arc;

use rmcp::{
    ServerHandler, schemars,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
        session::{local::LocalSessionManager, never::NeverSessionManager},
    },
};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------
// Tool arguments and outputs
// ---------------------------------------------------------------------------

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    pub a: i64,
    pub b: i64,
}

/// Declared as the `outputSchema` of `add` (structuredContent = {"result": <sum>}).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AddOutput {
    pub result: i64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    Metric,
    Imperial,
}

// Manual impl rather than `#[derive(Default)]` + `#[default]`, so the variant
// carries no extra attribute that schemars might react to. Because `Units` is
// `Serialize` and the field is `#[serde(default)]`, schemars emits
// `"default": "metric"` on the `units` property.
#[allow(clippy::derivable_impls)]
impl Default for Units {
    fn default() -> Self {
        Units::Metric
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct GetWeatherArgs {
    pub city: String,
    #[serde(default)]
    pub units: Units,
    #[serde(default)]
    pub include_forecast: bool,
}

#[derive(Debug, Serialize)]
pub struct Weather<'a> {
    pub city: &'a str,
    pub temperature: f64,
    pub units: Units,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forecast: Option<[f64; 5]>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    pub query: String,
    pub limit: Option<u32>,
    pub tags: Vec<String>,
}

const DEFAULT_SEARCH_LIMIT: u32 = 3;
/// Hard cap so a huge `limit` cannot make the server allocate without bound.
const MAX_SEARCH_RESULTS: u32 = 1000;

pub fn weather(city: &str, units: Units, include_forecast: bool) -> Weather<'_> {
    let (temperature, forecast) = match units {
        Units::Metric => (19.5, [19.5, 20.0, 18.5, 21.0, 17.5]),
        Units::Imperial => (67.1, [67.1, 68.0, 65.3, 69.8, 63.5]),
    };
    Weather {
        city,
        temperature,
        units,
        forecast: include_forecast.then_some(forecast),
    }
}

pub fn search_results(query: &str, limit: Option<u32>, tags: &[String]) -> Vec<String> {
    let limit = limit
        .unwrap_or(DEFAULT_SEARCH_LIMIT)
        .min(MAX_SEARCH_RESULTS);
    let suffix = tags.join(",");
    (0..limit).map(|i| format!("{query}-{i}{suffix}")).collect()
}

// ---------------------------------------------------------------------------
// Command line and HTTP
// ---------------------------------------------------------------------------

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `[--http ADDR [--stateless] [--json-response]] [--worker-threads N]` (the thread
/// count is read by rmcp_tuned only; rmcp_example keeps `#[tokio::main]`'s default).
pub struct Args {
    pub http: Option<String>,
    pub stateless: bool,
    pub json_response: bool,
    pub worker_threads: Option<usize>,
}

pub fn parse_args() -> Result<Args, BoxError> {
    let mut args = Args {
        http: None,
        stateless: false,
        json_response: false,
        worker_threads: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--http" => args.http = Some(it.next().ok_or("--http needs an ADDR")?),
            "--stateless" => args.stateless = true,
            "--json-response" => args.json_response = true,
            "--worker-threads" => {
                args.worker_threads = Some(it.next().ok_or("--worker-threads needs N")?.parse()?)
            }
            other => return Err(format!("unknown argument: {other}").into()),
        }
    }
    Ok(args)
}

/// Serves `new_handler`'s handlers over Streamable HTTP at `http://ADDR/mcp` until Ctrl-C.
pub async fn serve_http<S>(
    name: &str,
    addr: &str,
    stateless: bool,
    json_response: bool,
    new_handler: fn() -> S,
) -> Result<(), BoxError>
where
    S: ServerHandler + Send + 'static,
{
    // StreamableHttpServerConfig is #[non_exhaustive]: use Default + with_* builders.
    // Default: legacy_session_mode = true (stateful, Mcp-Session-Id), SSE
    // responses, sse_keep_alive = 15s, allowed_hosts = localhost/127.0.0.1/::1.
    let mut config = StreamableHttpServerConfig::default();
    if stateless {
        // Stateless: no Mcp-Session-Id, every POST is served by a fresh handler from the
        // factory. json_response=true answers a plain request/response tool call with
        // `application/json` instead of SSE.
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(json_response);
    }
    // The config owns a CancellationToken by default; keep a handle to it so we
    // don't need a direct tokio-util dependency.
    let ct = config.cancellation_token.clone();
    let factory = move || Ok(new_handler());
    let router = if stateless {
        let service =
            StreamableHttpService::new(factory, Arc::new(NeverSessionManager::default()), config);
        axum::Router::new().nest_service("/mcp", service)
    } else {
        let service =
            StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
        axum::Router::new().nest_service("/mcp", service)
    };

    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("{name}: Streamable HTTP on http://{addr}/mcp (stateless={stateless})");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            ct.cancel();
        })
        .await?;
    Ok(())
}
