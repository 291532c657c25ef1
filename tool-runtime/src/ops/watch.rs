//! One call watched from its start to its end: when it ends (answered, failed, stopped at
//! its time limit, or dropped because it was cancelled) it is written as one audit event
//! and counted in the metrics, exactly once.

use crate::call::caller::Caller;
use crate::call::error::CallError;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The `tracing` target of audit events: one `INFO` event per tool call, with the fields
/// `tool`, `outcome`, `duration_ms`, `transport`, `session`, `subject`, `peer`,
/// `argument_bytes`, `output_bytes`, and `arguments` when the registry was told to record
/// them. Filter on it to keep or drop the audit trail (`RUST_LOG=tool_runtime::audit=info`).
pub const AUDIT_TARGET: &str = "tool_runtime::audit";

/// What a registry records of its calls.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Observer {
    /// Whether audit events carry the arguments' values (only their size otherwise).
    pub(crate) audit_arguments: bool,
    /// Whether calls are counted through the `metrics` facade.
    pub(crate) metrics: bool,
}

/// The metric names, as Prometheus shows them.
pub(crate) mod names {
    /// Calls ended, by `tool` and `outcome`.
    pub(crate) const CALLS: &str = "mcp_tool_calls_total";
    /// Calls that ended in an error, by `tool`.
    pub(crate) const ERRORS: &str = "mcp_tool_errors_total";
    /// Calls running now, by `tool`.
    pub(crate) const IN_FLIGHT: &str = "mcp_tool_calls_in_flight";
    /// How long calls took, in seconds, by `tool`.
    pub(crate) const DURATION: &str = "mcp_tool_call_duration_seconds";
    /// Whether the store replicas share answered when last asked: 1 or 0.
    pub(crate) const STORE_REACHABLE: &str = "mcp_store_reachable";
}

/// The tool label of a call of an unknown tool: its name comes from the client, and one
/// label value per made-up name would grow the metrics without bound.
const UNKNOWN_TOOL: &str = "(unknown)";

impl Observer {
    /// Whether anything is recorded of calls now: metrics, or audit events the
    /// application's `tracing` subscriber keeps.
    pub(crate) fn records(&self) -> bool {
        self.metrics || tracing::enabled!(target: AUDIT_TARGET, tracing::Level::INFO)
    }

    /// Starts watching a call of `tool` (`known`: whether the registry has it) with
    /// `input`, made by `caller`. Watches nothing when nothing would be recorded.
    pub(crate) fn watch(
        &self,
        tool: &str,
        known: bool,
        input: &Value,
        caller: &Caller,
    ) -> CallWatch {
        let audit = tracing::enabled!(target: AUDIT_TARGET, tracing::Level::INFO);
        if !audit && !self.metrics {
            return CallWatch(None);
        }
        // One shared string for every metric of the call: each label is a reference to it.
        let label = self.metrics.then(|| {
            let label = if known {
                metrics::SharedString::from(Arc::<str>::from(tool))
            } else {
                metrics::SharedString::const_str(UNKNOWN_TOOL)
            };
            metrics::gauge!(names::IN_FLIGHT, "tool" => label.clone()).increment(1.0);
            label
        });
        let audit = audit.then(|| Audit {
            tool: tool.to_owned(),
            caller: caller.clone(),
            argument_bytes: crate::schema::json_len(input),
            arguments: self.audit_arguments.then(|| input.clone()),
        });
        CallWatch(Some(Box::new(Watching {
            label,
            started: Instant::now(),
            audit,
            settled: AtomicBool::new(false),
        })))
    }
}

/// A call being watched, from the layer that records it.
pub(crate) struct CallWatch(Option<Box<Watching>>);

struct Watching {
    /// The `tool` label of the call's metrics, when they are counted.
    label: Option<metrics::SharedString>,
    started: Instant,
    /// What the audit event says of the call, when audit events are written.
    audit: Option<Audit>,
    /// Whether the call's end was recorded (it is, once).
    settled: AtomicBool,
}

/// The call as its audit event tells it.
struct Audit {
    tool: String,
    caller: Caller,
    argument_bytes: usize,
    /// The arguments themselves, when the registry was told to record them.
    arguments: Option<Value>,
}

impl CallWatch {
    /// Records the call's end (its error, or its output), unless it was recorded already.
    /// `output_bytes` (the output's length as JSON) is asked for only when an audit event
    /// counts it.
    pub(crate) fn finish(&self, error: Option<&CallError>, output_bytes: impl FnOnce() -> usize) {
        let Some(watching) = &self.0 else { return };
        let output_bytes = match &watching.audit {
            Some(_) => output_bytes(),
            None => 0,
        };
        watching.settle(outcome(error), output_bytes);
    }
}

impl Watching {
    /// Records the end, unless it was recorded already.
    fn settle(&self, outcome: &'static str, output_bytes: usize) {
        if self.settled.swap(true, Ordering::AcqRel) {
            return;
        }
        let elapsed = self.started.elapsed();
        if let Some(tool) = &self.label {
            metrics::gauge!(names::IN_FLIGHT, "tool" => tool.clone()).decrement(1.0);
            metrics::counter!(names::CALLS, "tool" => tool.clone(), "outcome" => outcome)
                .increment(1);
            if outcome != "ok" {
                metrics::counter!(names::ERRORS, "tool" => tool.clone()).increment(1);
            }
            metrics::histogram!(names::DURATION, "tool" => tool.clone())
                .record(elapsed.as_secs_f64());
        }
        if let Some(audit) = &self.audit {
            let caller = &audit.caller;
            let arguments = audit.arguments.as_ref().map(|value| value.to_string());
            tracing::info!(
                target: AUDIT_TARGET,
                tool = %audit.tool,
                outcome,
                duration_ms = elapsed.as_secs_f64() * 1000.0,
                transport = caller.transport(),
                session = caller.session(),
                subject = caller.subject(),
                peer = caller.peer().map(tracing::field::display),
                argument_bytes = audit.argument_bytes,
                output_bytes,
                arguments,
                "tool call"
            );
        }
    }
}

impl Drop for Watching {
    /// A call nobody recorded the end of was dropped: its client cancelled it, or its
    /// connection closed.
    fn drop(&mut self) {
        self.settle("cancelled", 0);
    }
}

/// How a call ended, as the audit event and the metrics name it.
fn outcome(error: Option<&CallError>) -> &'static str {
    match error {
        None => "ok",
        Some(error) => error.status(),
    }
}
