//! The order of what the registry does around a call, with a layer given among its own:
//! the record outermost, admission, the layers given, the time limit innermost.
//!
//! Alone in its binary: the audit trail is read through a subscriber set for this test's
//! thread, and `tracing` decides once per event site whether anyone listens, asking the
//! thread that reaches the site first; another test's thread, with no subscriber, reaching
//! it first would leave this one unheard.

use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tool_runtime::context::Caller;
use tool_runtime::{tool, CallError, Registry, ToolResult};
use tool_tests::layers::around;
use tool_tests::Signal;

/// Read the vault, with a token that grants reading it.
#[tool(scopes = ["vault:read"])]
async fn vault() -> &'static str {
    "gold"
}

/// Stamp a page, once a minute at most.
#[tool(rate = "1/min")]
async fn stamp(page: u32) -> u32 {
    page
}

static OVERRUN: Signal = Signal::new();

/// Run past its time limit.
#[tool(timeout = "50ms")]
async fn overrun() -> &'static str {
    OVERRUN
        .wait("nothing: its own time limit stops it first")
        .await;
    "late"
}

/// The audit events written while it is the thread's subscriber: each call's tool and
/// outcome.
#[derive(Clone, Default)]
struct AuditTrail(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for AuditTrail {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() != tool_runtime::ops::AUDIT_TARGET {
            return;
        }
        let mut fields = AuditFields::default();
        event.record(&mut fields);
        let line = format!("{}:{}", fields.tool, fields.outcome);
        self.0.lock().unwrap().push(line);
    }
}

#[derive(Default)]
struct AuditFields {
    tool: String,
    outcome: String,
}

impl tracing::field::Visit for AuditFields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "outcome" {
            self.outcome = value.to_owned();
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "tool" {
            self.tool = format!("{value:?}");
        }
    }
}

fn status(result: &ToolResult) -> String {
    result
        .error()
        .map_or("ok".to_owned(), |error| error.status().to_owned())
}

#[tokio::test(start_paused = true)]
async fn the_registrys_own_layers_sit_around_and_inside_those_given_in_their_order() {
    let audit = AuditTrail::default();
    let subscriber = tracing_subscriber::layer::SubscriberExt::with(
        tracing_subscriber::registry(),
        audit.clone(),
    );
    let _recording = tracing::subscriber::set_default(subscriber);
    // The layer given: it writes down each call it sees and how the rest of its way
    // answered, and refuses mallory's calls of the vault itself.
    let trail = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&trail);
    let given = around(move |call, mut next| {
        let tool = call.tool().name().to_owned();
        let seen = Arc::clone(&seen);
        if tool == "vault" && call.caller().subject() == Some("mallory") {
            seen.lock().unwrap().push(format!("{tool}:refused here"));
            let refusal = CallError::refused(tool, "mallory is on the deny list");
            return Box::pin(async move { Err(refusal) });
        }
        let answer = tower::Service::call(&mut next, call);
        Box::pin(async move {
            let outcome = answer.await;
            let status = outcome.as_ref().err().map_or("ok", CallError::status);
            seen.lock().unwrap().push(format!("{tool}:{status}"));
            outcome
        })
    });
    let registry = Registry::builder()
        .layer_for(["vault", "stamp", "overrun"], given)
        .build()
        .unwrap();

    // Admission is outside the layers given: a call the caller's token does not permit
    // never reaches them, one it permits does, and what they refuse is recorded.
    let eve = Caller::http(None).with_subject("eve", ["profile"]);
    let refused = registry.call_for(eve, "vault", json!({})).await;
    assert_eq!(status(&refused), "insufficient_scope");
    let ada = Caller::http(None).with_subject("ada", ["vault:read"]);
    assert_eq!(
        status(&registry.call_for(ada, "vault", json!({})).await),
        "ok"
    );
    let mallory = Caller::http(None).with_subject("mallory", ["vault:read"]);
    let denied = registry.call_for(mallory, "vault", json!({})).await;
    assert_eq!(status(&denied), "refused");
    // Arguments that do not fit never reach a layer; admitted first, the call spent the
    // one stamp a minute allows, so the next is refused by admission, before any layer.
    let misfit = registry.call("stamp", json!({"page": "one"})).await;
    assert_eq!(status(&misfit), "invalid_arguments");
    let stamped = registry.call("stamp", json!({"page": 1})).await;
    assert_eq!(status(&stamped), "rate_limited");
    // The time limit is inside the layers given: they see the run it stopped.
    let started = tokio::time::Instant::now();
    let overran = registry.call("overrun", json!({})).await;
    assert_eq!(status(&overran), "timed_out");
    assert_eq!(started.elapsed(), Duration::from_millis(50));

    assert_eq!(
        *trail.lock().unwrap(),
        ["vault:ok", "vault:refused here", "overrun:timed_out"]
    );
    // The record is outermost: every call is in the audit trail, whoever refused it.
    assert_eq!(
        *audit.0.lock().unwrap(),
        [
            "vault:insufficient_scope",
            "vault:ok",
            "vault:refused",
            "stamp:invalid_arguments",
            "stamp:rate_limited",
            "overrun:timed_out",
        ]
    );
}
