//! The W3C trace context a request carries (`traceparent`, `tracestate`, `baggage`), as
//! text: read from a request's `_meta` or from HTTP headers, and turned into the parent of
//! the request's span. A value that is missing, not text, or malformed is ignored.

use opentelemetry::propagation::{Extractor, TextMapCompositePropagator, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry::Context;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use serde_json::{Map, Value};

/// The keys of the trace context, in `_meta` (where MCP reserves them unprefixed) and as
/// HTTP headers alike.
const KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// A trace context as it came: each of its three values, when present as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TraceCarrier {
    values: [Option<String>; 3],
}

impl TraceCarrier {
    /// The trace context in a request's `_meta`, if it has a `traceparent`.
    pub(crate) fn from_meta(meta: &Map<String, Value>) -> Option<TraceCarrier> {
        TraceCarrier::gathered(|key| meta.get(key).and_then(Value::as_str))
    }

    /// The trace context in HTTP headers (W3C Trace Context), if there is a `traceparent`.
    #[cfg(feature = "http")]
    pub(crate) fn from_headers(headers: &axum::http::HeaderMap) -> Option<TraceCarrier> {
        TraceCarrier::gathered(|key| headers.get(key).and_then(|value| value.to_str().ok()))
    }

    /// A context of a `traceparent` alone (one kept in a task's record, say).
    pub(crate) fn of_traceparent(traceparent: &str) -> TraceCarrier {
        TraceCarrier {
            values: [Some(traceparent.to_owned()), None, None],
        }
    }

    fn gathered<'a>(value_of: impl Fn(&str) -> Option<&'a str>) -> Option<TraceCarrier> {
        value_of(KEYS[0])?;
        Some(TraceCarrier {
            values: KEYS.map(|key| value_of(key).map(str::to_owned)),
        })
    }

    /// The remote span this context names, as a parent; none when its `traceparent` is
    /// malformed (a client's mistake must not break the request, nor start a bogus trace).
    pub(crate) fn parent(&self) -> Option<Context> {
        let context = propagator().extract(self);
        context.span().span_context().is_valid().then_some(context)
    }
}

/// Writes the trace context of `span` (and the baggage of its context) into a request's
/// `_meta`, where the server takes its parent from; nothing when the span is disabled.
pub(crate) fn write_meta(span: &tracing::Span, meta: &mut Map<String, Value>) {
    use opentelemetry::propagation::Injector;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    struct Meta<'a>(&'a mut Map<String, Value>);
    impl Injector for Meta<'_> {
        fn set(&mut self, key: &str, value: String) {
            self.0.insert(key.to_owned(), Value::String(value));
        }
    }
    if span.is_disabled() {
        return;
    }
    let context = span.context();
    if !context.span().span_context().is_valid() {
        return;
    }
    propagator().inject_context(&context, &mut Meta(meta));
}

/// W3C Trace Context and W3C Baggage, the two formats MCP reserves `_meta` keys for.
fn propagator() -> TextMapCompositePropagator {
    TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ])
}

impl Extractor for TraceCarrier {
    fn get(&self, key: &str) -> Option<&str> {
        let index = KEYS
            .iter()
            .position(|known| known.eq_ignore_ascii_case(key))?;
        self.values[index].as_deref()
    }

    fn keys(&self) -> Vec<&str> {
        KEYS.iter()
            .zip(&self.values)
            .filter(|(_, value)| value.is_some())
            .map(|(key, _)| *key)
            .collect()
    }
}

/// The `traceparent` of the current span, when it is traced.
pub(crate) fn current_traceparent() -> Option<String> {
    let mut meta = Map::new();
    write_meta(&tracing::Span::current(), &mut meta);
    match meta.remove("traceparent") {
        Some(Value::String(traceparent)) => Some(traceparent),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::TraceId;
    use serde_json::json;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    fn meta(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_traceparent_in_meta_names_the_remote_parent() {
        let carrier = TraceCarrier::from_meta(&meta(json!({"traceparent": PARENT})));
        let parent = carrier
            .and_then(|carrier| carrier.parent())
            .expect("a parent");
        let span = parent.span();
        let remote = span.span_context();
        assert!(remote.is_remote());
        assert_eq!(
            remote.trace_id(),
            TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").unwrap()
        );
        assert!(remote.is_sampled());
    }

    #[test]
    fn baggage_and_tracestate_come_along() {
        let carrier = TraceCarrier::from_meta(&meta(json!({
            "traceparent": PARENT, "tracestate": "vendor=x", "baggage": "user=ada"
        })))
        .unwrap();
        let parent = carrier.parent().unwrap();
        assert_eq!(
            parent.span().span_context().trace_state().get("vendor"),
            Some("x")
        );
        use opentelemetry::baggage::BaggageExt;
        assert_eq!(
            parent
                .baggage()
                .get("user")
                .map(|value| value.as_str().to_owned()),
            Some("ada".to_owned())
        );
    }

    #[test]
    fn malformed_or_missing_context_is_no_parent() {
        for meta_value in [
            json!({}),
            json!({"traceparent": 7}),
            json!({"traceparent": "not a traceparent"}),
            json!({"traceparent": "00-00000000000000000000000000000000-b7ad6b7169203331-01"}),
            json!({"tracestate": "vendor=x"}),
        ] {
            let parent = TraceCarrier::from_meta(&meta(meta_value.clone()))
                .and_then(|carrier| carrier.parent());
            assert!(parent.is_none(), "{meta_value} gave a parent");
        }
    }
}
