//! The Prometheus text of the metrics a registry counts, for `GET /metrics`.

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Buckets of the call-duration histogram, in seconds: from a quick in-process tool to a
/// long call.
const DURATION_BUCKETS: [f64; 14] = [
    0.000_1, 0.000_5, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0,
];

/// This process's metrics in the Prometheus text format. [`install`](Prometheus::install)
/// makes it the process's `metrics` recorder; give it to
/// [`HttpOptions::metrics`](crate::transport::http::HttpOptions::metrics) to serve it at
/// `GET /metrics`, and turn counting on with
/// [`RegistryBuilder::metrics`](crate::registry::RegistryBuilder::metrics).
///
/// ```
/// use tool_runtime::ops::Prometheus;
/// use tool_runtime::{tool, Registry};
///
/// /// Say hello.
/// #[tool]
/// fn hello() -> &'static str { "hello" }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let prometheus = Prometheus::install().unwrap();
/// let registry = Registry::builder().metrics(true).build().unwrap();
/// registry.call("hello", serde_json::json!({})).await;
/// let text = prometheus.render();
/// assert!(text.contains(r#"mcp_tool_calls_total{tool="hello",outcome="ok"} 1"#), "{text}");
/// # });
/// ```
#[derive(Clone)]
pub struct Prometheus {
    handle: PrometheusHandle,
}

impl std::fmt::Debug for Prometheus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prometheus").finish_non_exhaustive()
    }
}

impl Prometheus {
    /// Installs the Prometheus recorder as this process's `metrics` recorder. Fails when
    /// the process already has one (a process has one recorder).
    pub fn install() -> Result<Prometheus, String> {
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full(super::watch::names::DURATION.to_owned()),
                &DURATION_BUCKETS,
            )
            .map_err(|error| error.to_string())?
            .install_recorder()
            .map_err(|error| format!("cannot install the metrics recorder: {error}"))?;
        Ok(Prometheus { handle })
    }

    /// The metrics now, in the Prometheus text format.
    pub fn render(&self) -> String {
        self.handle.render()
    }
}
