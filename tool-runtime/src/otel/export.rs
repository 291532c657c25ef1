//! Export over OTLP (HTTP/protobuf): the tracer provider, its batching (a bounded queue
//! drained on a thread of its own, so a slow or stopped collector costs spans, never a
//! call's time), and the layer that hands `tracing` spans to it.

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use std::fmt;
use std::time::Duration;
use tracing::Subscriber;
use tracing_subscriber::filter::{filter_fn, FilterFn};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// How long shutting down waits for the last spans to reach the collector.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(5);

/// Where spans go, and as which service. The standard variables of OpenTelemetry's SDKs
/// apply on top (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`,
/// `OTEL_TRACES_SAMPLER`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*` for the batching, ...).
///
/// ```no_run
/// use tool_runtime::otel::OtlpExport;
/// use tracing_subscriber::layer::SubscriberExt;
/// use tracing_subscriber::util::SubscriberInitExt;
///
/// let (layer, guard) = OtlpExport::to("http://127.0.0.1:4318")
///     .service_name("my-tools")
///     .install()
///     .expect("an OTLP endpoint");
/// tracing_subscriber::registry().with(layer).init();
/// // ... serve; dropping the guard (or `guard.shutdown()`) sends what is left.
/// drop(guard);
/// ```
#[derive(Debug, Clone)]
pub struct OtlpExport {
    /// The collector's base URL (`/v1/traces` is added over HTTP); none to take it from
    /// the environment.
    endpoint: Option<String>,
    service_name: Option<String>,
    /// The wire protocol; none to take it from the environment (HTTP/protobuf unless it
    /// says `grpc`).
    protocol: Option<OtlpProtocol>,
}

/// How spans and metrics travel to the collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// Protobuf over HTTP (`http/protobuf`, port 4318 by convention).
    HttpProtobuf,
    /// gRPC (port 4317 by convention); needs the feature `otel-grpc`.
    Grpc,
}

impl std::str::FromStr for OtlpProtocol {
    type Err = OtelError;

    /// The protocol as the OTLP variables name it: `http/protobuf` or `grpc`.
    fn from_str(name: &str) -> Result<OtlpProtocol, OtelError> {
        match name.trim() {
            "http/protobuf" => Ok(OtlpProtocol::HttpProtobuf),
            "grpc" => Ok(OtlpProtocol::Grpc),
            other => Err(OtelError(format!(
                "the protocol '{other}' is not one this export speaks: http/protobuf or grpc"
            ))),
        }
    }
}

impl OtlpExport {
    /// Export to the collector at `endpoint`, a base URL such as `http://127.0.0.1:4318`
    /// (spans go to its `/v1/traces`).
    pub fn to(endpoint: impl Into<String>) -> OtlpExport {
        OtlpExport {
            endpoint: Some(endpoint.into()),
            service_name: None,
            protocol: None,
        }
    }

    /// Export as the standard variables say, when they name a collector
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) and
    /// `OTEL_SDK_DISABLED` is not `true`; none otherwise.
    pub fn from_env() -> Option<OtlpExport> {
        if env_is_true("OTEL_SDK_DISABLED") {
            return None;
        }
        let named = [
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
        ]
        .iter()
        .any(|name| std::env::var(name).is_ok_and(|value| !value.trim().is_empty()));
        named.then_some(OtlpExport {
            endpoint: None,
            service_name: None,
            protocol: None,
        })
    }

    /// Export over `protocol` rather than what `OTEL_EXPORTER_OTLP_PROTOCOL` says.
    pub fn protocol(mut self, protocol: OtlpProtocol) -> OtlpExport {
        self.protocol = Some(protocol);
        self
    }

    /// The protocol to speak: the one chosen, else the variables' (`_TRACES_` first).
    fn chosen_protocol(&self) -> Result<OtlpProtocol, OtelError> {
        if let Some(protocol) = self.protocol {
            return Ok(protocol);
        }
        [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ]
        .iter()
        .find_map(|name| {
            std::env::var(name)
                .ok()
                .filter(|value| !value.trim().is_empty())
        })
        .map_or(Ok(OtlpProtocol::HttpProtobuf), |value| value.parse())
    }

    /// The service's name (`service.name`), unless `OTEL_SERVICE_NAME` or
    /// `OTEL_RESOURCE_ATTRIBUTES` names it: an operator's setting wins.
    pub fn service_name(mut self, name: impl Into<String>) -> OtlpExport {
        self.service_name = Some(name.into());
        self
    }

    /// Starts the export: the layer to add to a `tracing` subscriber, and the guard that
    /// flushes and stops it. It also becomes OpenTelemetry's global tracer provider, for
    /// code that uses OpenTelemetry's API directly.
    pub fn install<S>(self) -> Result<(Box<dyn Layer<S> + Send + Sync>, OtelGuard), OtelError>
    where
        S: Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
    {
        // The exporter's HTTP client speaks TLS through rustls on ring when the collector is
        // https://; nothing else may have installed a provider yet.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (exporter, metric_exporter, grpc_runtime) = match self.chosen_protocol()? {
            OtlpProtocol::HttpProtobuf => {
                let (spans, metrics) = self.http_exporters()?;
                (spans, metrics, None)
            }
            OtlpProtocol::Grpc => {
                let (spans, metrics, runtime) = self.grpc_exporters()?;
                (spans, metrics, Some(runtime))
            }
        };
        let mut resource = Resource::builder();
        if let Some(name) = self.service_name.filter(|_| !service_named_by_env()) {
            resource = resource.with_service_name(name);
        }
        let resource = resource.build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.clone())
            .build();
        // Metrics are read and sent on a thread of their own, every
        // OTEL_METRIC_EXPORT_INTERVAL (60 s unless set).
        let meters = SdkMeterProvider::builder()
            .with_periodic_exporter(metric_exporter)
            .with_resource(resource)
            .build();
        let durations = super::durations::Durations::new(&meters.meter("tool-runtime"));
        opentelemetry::global::set_tracer_provider(provider.clone());
        *crate::sync::lock(&INSTALLED) = Some(provider.clone());
        let tracer = provider.tracer("tool-runtime");
        // Spans carry what the conventions name, not where in the source they were opened
        // nor on which thread; nor the busy and idle time of each, which costs two clock
        // reads per poll.
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false);
        // One filter for both: two filters of their own would each keep a verdict per
        // span, and a check that creates nothing (`tracing::enabled!`, as the audit trail
        // makes) can leave one of them stale for the next span.
        let exported = layer.and_then(durations).with_filter(exported_targets());
        Ok((
            Box::new(exported),
            OtelGuard {
                provider: Some(provider),
                meters: Some(meters),
                grpc_runtime,
            },
        ))
    }
}

impl OtlpExport {
    /// The exporters over HTTP/protobuf, each signal to its path of the endpoint.
    fn http_exporters(&self) -> Result<(SpanExporter, MetricExporter), OtelError> {
        let mut spans = SpanExporter::builder().with_http();
        let mut metrics = MetricExporter::builder().with_http();
        if let Some(endpoint) = &self.endpoint {
            spans = spans.with_endpoint(signal_url(endpoint, "traces"));
            metrics = metrics.with_endpoint(signal_url(endpoint, "metrics"));
        }
        let failed = |error: opentelemetry_otlp::ExporterBuildError| OtelError(error.to_string());
        Ok((
            spans.build().map_err(failed)?,
            metrics.build().map_err(failed)?,
        ))
    }

    /// The exporters over gRPC, and the runtime their channel runs on: tonic needs one, and
    /// the export threads have none (a runtime of the server's would not do either: a
    /// current-thread one runs only while it is driven).
    #[cfg(feature = "otel-grpc")]
    fn grpc_exporters(
        &self,
    ) -> Result<(SpanExporter, MetricExporter, tokio::runtime::Runtime), OtelError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("otlp-grpc")
            .enable_all()
            .build()
            .map_err(|error| OtelError(format!("no runtime for gRPC: {error}")))?;
        let _inside = runtime.enter();
        let mut spans = SpanExporter::builder().with_tonic();
        let mut metrics = MetricExporter::builder().with_tonic();
        if let Some(endpoint) = &self.endpoint {
            spans = spans.with_endpoint(endpoint.clone());
            metrics = metrics.with_endpoint(endpoint.clone());
        }
        let failed = |error: opentelemetry_otlp::ExporterBuildError| OtelError(error.to_string());
        let exporters = (
            spans.build().map_err(failed)?,
            metrics.build().map_err(failed)?,
        );
        drop(_inside);
        Ok((exporters.0, exporters.1, runtime))
    }

    #[cfg(not(feature = "otel-grpc"))]
    fn grpc_exporters(&self) -> Result<(SpanExporter, MetricExporter, GrpcRuntime), OtelError> {
        Err(OtelError(
            "the protocol grpc needs the `otel-grpc` feature of tool-runtime, which this \
             binary was built without (http/protobuf needs none)"
                .to_owned(),
        ))
    }
}

/// What the gRPC export runs on.
#[cfg(feature = "otel-grpc")]
type GrpcRuntime = tokio::runtime::Runtime;
#[cfg(not(feature = "otel-grpc"))]
type GrpcRuntime = std::convert::Infallible;

/// What is exported: every span at INFO or above (the server's requests, a tool's own
/// spans) and the events of the application's code (a tool's logs), except:
/// - those of the libraries that carry the export itself, which would make spans of every
///   export;
/// - this crate's own events: its log lines and its audit trail quote errors, panics,
///   callers and arguments, which spans record only as codes (the logs have them).
fn exported_targets() -> FilterFn {
    const CARRIERS: [&str; 10] = [
        "opentelemetry",
        "opentelemetry_sdk",
        "opentelemetry_otlp",
        "opentelemetry_http",
        "reqwest",
        "hyper",
        "hyper_util",
        "h2",
        "tower",
        "rustls",
    ];
    filter_fn(|metadata| {
        let target = metadata.target();
        let crate_name = target.split("::").next().unwrap_or(target);
        *metadata.level() <= tracing::Level::INFO
            && !CARRIERS.contains(&crate_name)
            && !(metadata.is_event() && crate_name == "tool_runtime")
    })
}

/// The URL a signal (`traces`, `metrics`) is sent to for a collector's base URL.
fn signal_url(endpoint: &str, signal: &str) -> String {
    let base = endpoint.trim_end_matches('/');
    let path = format!("/v1/{signal}");
    if base.ends_with(&path) {
        base.to_owned()
    } else {
        format!("{base}{path}")
    }
}

fn env_is_true(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| value.trim().eq_ignore_ascii_case("true"))
}

fn service_named_by_env() -> bool {
    std::env::var("OTEL_SERVICE_NAME").is_ok_and(|name| !name.is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|attributes| {
            attributes.split(',').any(|pair| {
                pair.split_once('=')
                    .is_some_and(|(key, _)| key.trim() == "service.name")
            })
        })
}

/// The provider the export installed, for [`flush`] (a server about to drain).
static INSTALLED: std::sync::Mutex<Option<SdkTracerProvider>> = std::sync::Mutex::new(None);

/// Sends the spans the installed export has queued so far, waiting for the collector's
/// answer (it blocks: call it off the async runtime's threads); nothing when no export was
/// installed. A server calls it when it starts draining, so that what it did is seen even
/// if it is stopped hard before the end.
pub fn flush() {
    let installed = crate::sync::lock(&INSTALLED).clone();
    if let Some(provider) = installed {
        if let Err(error) = provider.force_flush() {
            tracing::warn!("traces could not be flushed: {error}");
        }
    }
}

/// Keeps the export running; dropping it (or [`shutdown`](OtelGuard::shutdown)) sends the
/// spans still queued, waiting at most five seconds. Drop it outside an async runtime's
/// threads: the last export blocks.
pub struct OtelGuard {
    provider: Option<SdkTracerProvider>,
    meters: Option<SdkMeterProvider>,
    /// The runtime of the gRPC export's channel, stopped after the last export.
    #[cfg_attr(not(feature = "otel-grpc"), allow(dead_code))]
    grpc_runtime: Option<GrpcRuntime>,
}

impl fmt::Debug for OtelGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtelGuard").finish_non_exhaustive()
    }
}

impl OtelGuard {
    /// Sends the spans queued so far (a server about to drain, say), waiting for the
    /// collector's answer.
    pub fn flush(&self) {
        if let Some(provider) = &self.provider {
            if let Err(error) = provider.force_flush() {
                tracing::warn!("traces could not be flushed: {error}");
            }
        }
        if let Some(meters) = &self.meters {
            if let Err(error) = meters.force_flush() {
                tracing::warn!("metrics could not be flushed: {error}");
            }
        }
    }

    /// Sends what is queued and stops the export.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(provider) = self.provider.take() {
            crate::sync::lock(&INSTALLED).take();
            if let Err(error) = provider.shutdown_with_timeout(SHUTDOWN_LIMIT) {
                tracing::warn!("the trace export did not end cleanly: {error}");
            }
        }
        if let Some(meters) = self.meters.take() {
            if let Err(error) = meters.shutdown_with_timeout(SHUTDOWN_LIMIT) {
                tracing::warn!("the metrics export did not end cleanly: {error}");
            }
        }
        // Without waiting for its threads: a guard may be dropped on a runtime's thread.
        #[cfg(feature = "otel-grpc")]
        if let Some(runtime) = self.grpc_runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The export could not start: its configuration is wrong (an endpoint that is no URL, an
/// unknown protocol in `OTEL_EXPORTER_OTLP_PROTOCOL`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtelError(String);

impl fmt::Display for OtelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot export traces over OTLP: {}", self.0)
    }
}

impl std::error::Error for OtelError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_go_to_their_paths_of_the_collector() {
        assert_eq!(
            signal_url("http://c:4318", "traces"),
            "http://c:4318/v1/traces"
        );
        assert_eq!(
            signal_url("http://c:4318/", "metrics"),
            "http://c:4318/v1/metrics"
        );
        assert_eq!(
            signal_url("http://c:4318/v1/traces", "traces"),
            "http://c:4318/v1/traces"
        );
    }
}
