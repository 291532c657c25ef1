//! An OTLP/HTTP receiver on 127.0.0.1 for tests of processes that export traces: the
//! export requests are read with OpenTelemetry's own protobuf definitions
//! (opentelemetry-proto) and each span kept, flattened, for the test to look for.

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One span as received.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    pub service: Option<String>,
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: Option<String>,
    pub name: String,
    /// Each attribute's value as text.
    pub attributes: HashMap<String, String>,
    /// The (trace id, span id) of each link.
    pub links: Vec<(String, String)>,
}

/// The receiver; it stops when dropped.
pub struct OtlpReceiver {
    /// Its base URL (`http://127.0.0.1:PORT`), as `--otel-endpoint` takes it.
    pub url: String,
    spans: Arc<Mutex<Vec<ReceivedSpan>>>,
    _runtime: tokio::runtime::Runtime,
}

impl OtlpReceiver {
    /// Starts a receiver on a port the system picks.
    pub fn start() -> OtlpReceiver {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the receiver");
        let spans: Arc<Mutex<Vec<ReceivedSpan>>> = Arc::default();
        let kept = Arc::clone(&spans);
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |body: axum::body::Bytes| {
                let kept = Arc::clone(&kept);
                async move {
                    if let Ok(request) = ExportTraceServiceRequest::decode(body) {
                        kept.lock().unwrap().extend(flatten(request));
                    }
                    (
                        [("content-type", "application/x-protobuf")],
                        ExportTraceServiceResponse::default().encode_to_vec(),
                    )
                }
            }),
        );
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("a port for the receiver");
        let address = listener.local_addr().expect("its address");
        runtime.spawn(async move { axum::serve(listener, app).await });
        OtlpReceiver {
            url: format!("http://{address}"),
            spans,
            _runtime: runtime,
        }
    }

    /// The spans received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.spans.lock().unwrap().clone()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn text(value: Option<&AnyValue>) -> String {
    match value {
        Some(AnyValue::StringValue(text)) => text.clone(),
        Some(AnyValue::BoolValue(flag)) => flag.to_string(),
        Some(AnyValue::IntValue(number)) => number.to_string(),
        Some(AnyValue::DoubleValue(number)) => number.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn flatten(request: ExportTraceServiceRequest) -> Vec<ReceivedSpan> {
    let mut spans = Vec::new();
    for resource_spans in request.resource_spans {
        let service = resource_spans.resource.as_ref().and_then(|resource| {
            resource
                .attributes
                .iter()
                .find(|pair| pair.key == "service.name")
                .map(|pair| text(pair.value.as_ref().and_then(|v| v.value.as_ref())))
        });
        for scope_spans in resource_spans.scope_spans {
            for span in scope_spans.spans {
                spans.push(ReceivedSpan {
                    service: service.clone(),
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: (!span.parent_span_id.is_empty())
                        .then(|| hex(&span.parent_span_id)),
                    name: span.name,
                    attributes: span
                        .attributes
                        .iter()
                        .map(|pair| {
                            let value = pair.value.as_ref().and_then(|v| v.value.as_ref());
                            (pair.key.clone(), text(value))
                        })
                        .collect(),
                    links: span
                        .links
                        .iter()
                        .map(|link| (hex(&link.trace_id), hex(&link.span_id)))
                        .collect(),
                });
            }
        }
    }
    spans
}
