//! The duration metrics of OpenTelemetry's conventions, measured on the spans this crate
//! opens: `mcp.server.operation.duration` (each MCP request served),
//! `mcp.client.operation.duration` (each request our client sent),
//! `gen_ai.client.operation.duration` (each model turn) and `gen_ai.client.token.usage`
//! (the tokens the provider counted). A `tracing` layer: the clock is read where spans open
//! and close, never in the protocol code. Only attributes with few distinct values are kept
//! (method, tool or prompt, protocol version, transport, error type, provider).

use opentelemetry::metrics::{Histogram, Meter};
use opentelemetry::KeyValue;
use std::time::Instant;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// The buckets the MCP conventions give their duration histograms, in seconds.
const MCP_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The buckets the GenAI conventions give a model call's duration, in seconds.
const GENAI_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// The buckets of the GenAI conventions' token counts.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// The attributes a duration is recorded with: those of few distinct values.
const KEPT: [&str; 9] = [
    "mcp.method.name",
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "gen_ai.operation.name",
    "gen_ai.provider.name",
    "mcp.protocol.version",
    "network.transport",
    "network.protocol.name",
    "error.type",
];

/// Which histogram a span's duration goes to.
#[derive(Clone, Copy)]
enum Operation {
    Served,
    Sent,
    ModelTurn,
}

/// What is kept of a span while it is open.
struct Timed {
    started: Instant,
    operation: Operation,
    attributes: Vec<KeyValue>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    /// The tool or prompt named is none the server has: recorded as `_OTHER`.
    name_unknown: bool,
}

impl Visit for Timed {
    fn record_str(&mut self, field: &Field, value: &str) {
        if KEPT.contains(&field.name()) {
            let named = matches!(field.name(), "gen_ai.tool.name" | "gen_ai.prompt.name");
            let value = if named && self.name_unknown {
                "_OTHER"
            } else {
                value
            };
            self.attributes
                .retain(|kept| kept.key.as_str() != field.name());
            self.attributes
                .push(KeyValue::new(field.name(), value.to_owned()));
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "gen_ai.usage.input_tokens" => self.input_tokens = Some(value),
            "gen_ai.usage.output_tokens" => self.output_tokens = Some(value),
            _ => {}
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if let Ok(value) = u64::try_from(value) {
            self.record_u64(field, value);
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "tool_runtime.name_unknown" && value {
            for kept in &mut self.attributes {
                if matches!(kept.key.as_str(), "gen_ai.tool.name" | "gen_ai.prompt.name") {
                    kept.value = opentelemetry::Value::from("_OTHER");
                }
            }
            self.name_unknown = true;
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if KEPT.contains(&field.name()) {
            self.record_str(field, &format!("{value:?}"));
        }
    }
}

/// The layer recording the durations; it looks only at the spans of `tool_runtime::otel`.
pub(crate) struct Durations {
    served: Histogram<f64>,
    sent: Histogram<f64>,
    model_turns: Histogram<f64>,
    tokens: Histogram<u64>,
}

impl Durations {
    pub(crate) fn new(meter: &Meter) -> Durations {
        let seconds = |name: &'static str, description: &'static str, buckets: &[f64]| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(buckets.to_vec())
                .build()
        };
        Durations {
            served: seconds(
                "mcp.server.operation.duration",
                "How long MCP requests took to serve.",
                &MCP_BUCKETS,
            ),
            sent: seconds(
                "mcp.client.operation.duration",
                "How long MCP requests sent took to be answered.",
                &MCP_BUCKETS,
            ),
            model_turns: seconds(
                "gen_ai.client.operation.duration",
                "How long a model took to answer.",
                &GENAI_BUCKETS,
            ),
            tokens: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("The tokens a model's turn read and wrote.")
                .with_boundaries(TOKEN_BUCKETS.to_vec())
                .build(),
        }
    }
}

impl<S> Layer<S> for Durations
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, context: Context<'_, S>) {
        if attributes.metadata().target() != super::TARGET {
            return;
        }
        let operation = match attributes.metadata().name() {
            "mcp request" => Operation::Served,
            "mcp client request" => Operation::Sent,
            "chat" => Operation::ModelTurn,
            _ => return,
        };
        let mut timed = Timed {
            started: Instant::now(),
            operation,
            attributes: Vec::new(),
            input_tokens: None,
            output_tokens: None,
            name_unknown: false,
        };
        attributes.record(&mut timed);
        if let Some(span) = context.span(id) {
            span.extensions_mut().insert(timed);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, context: Context<'_, S>) {
        if let Some(span) = context.span(id) {
            if let Some(timed) = span.extensions_mut().get_mut::<Timed>() {
                values.record(timed);
            }
        }
    }

    fn on_close(&self, id: Id, context: Context<'_, S>) {
        let Some(timed) = context
            .span(&id)
            .and_then(|span| span.extensions_mut().remove::<Timed>())
        else {
            return;
        };
        let seconds = timed.started.elapsed().as_secs_f64();
        let histogram = match timed.operation {
            Operation::Served => &self.served,
            Operation::Sent => &self.sent,
            Operation::ModelTurn => &self.model_turns,
        };
        histogram.record(seconds, &timed.attributes);
        for (kind, count) in [
            ("input", timed.input_tokens),
            ("output", timed.output_tokens),
        ] {
            if let Some(count) = count {
                let mut attributes = timed.attributes.clone();
                attributes.push(KeyValue::new("gen_ai.token.type", kind));
                self.tokens.record(count, &attributes);
            }
        }
    }
}
