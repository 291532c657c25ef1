//! The spans of the agent loop, as OpenTelemetry's GenAI conventions name them: one
//! `invoke_agent` per run, a `chat` per model turn (with the provider's token counts), an
//! `execute_tool {name}` per call. Tool calls that go to another MCP server carry the
//! trace on, so the server's spans join the same trace. Without the `otel` feature the
//! spans are none.

use super::limits::Usage;
use super::looping::Outcome;
use super::{Dialect, ToolCall};
use crate::call::result::ToolResult;
use tracing::Span;

/// The provider a dialect is spoken by, as the conventions name it.
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
fn provider(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => "openai",
        Dialect::Anthropic => "anthropic",
        Dialect::Gemini => "gcp.gemini",
    }
}

/// The span of one run of the loop.
pub(super) fn invoke_agent(dialect: Dialect) -> Span {
    #[cfg(feature = "otel")]
    {
        use tracing::field::Empty;
        tracing::info_span!(
            target: "tool_runtime::otel",
            "invoke_agent",
            "otel.name" = "invoke_agent",
            "gen_ai.operation.name" = "invoke_agent",
            "gen_ai.provider.name" = provider(dialect),
            "gen_ai.usage.input_tokens" = Empty,
            "gen_ai.usage.output_tokens" = Empty,
            "tool_runtime.agent.status" = Empty,
            "tool_runtime.agent.turns" = Empty,
            "tool_runtime.agent.tool_calls" = Empty,
            "tool_runtime.usage.estimated" = Empty,
            "error.type" = Empty,
            "otel.status_code" = Empty,
        )
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = dialect;
        Span::none()
    }
}

/// Records how a run ended: its status (`budget_exceeded`, `awaiting_approval`, ...), its
/// turns and calls, the tokens it spent; a model that failed is an error.
pub(super) fn ran(span: &Span, outcome: &Outcome) {
    if span.is_disabled() {
        return;
    }
    span.record("tool_runtime.agent.status", outcome.status.as_str());
    span.record("tool_runtime.agent.turns", outcome.turns);
    span.record("tool_runtime.agent.tool_calls", outcome.tool_calls);
    record_usage(span, &outcome.usage);
    if outcome.status == super::Status::ModelError {
        failed(span, "model_error");
    }
}

/// The span of one model turn.
pub(super) fn chat(dialect: Dialect) -> Span {
    #[cfg(feature = "otel")]
    {
        use tracing::field::Empty;
        tracing::info_span!(
            target: "tool_runtime::otel",
            "chat",
            "otel.name" = "chat",
            "otel.kind" = "client",
            "gen_ai.operation.name" = "chat",
            "gen_ai.provider.name" = provider(dialect),
            "gen_ai.usage.input_tokens" = Empty,
            "gen_ai.usage.output_tokens" = Empty,
            "tool_runtime.usage.estimated" = Empty,
            "gen_ai.response.tool_calls" = Empty,
            "error.type" = Empty,
            "otel.status_code" = Empty,
        )
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = dialect;
        Span::none()
    }
}

/// Records a turn's token counts, when the provider gave them, and how many calls it made.
pub(super) fn answered(span: &Span, usage: Option<&Usage>, calls: usize) {
    if span.is_disabled() {
        return;
    }
    if let Some(usage) = usage {
        record_usage(span, usage);
    }
    span.record("gen_ai.response.tool_calls", calls);
}

/// Records that the model gave no turn that could be read.
pub(super) fn no_turn(span: &Span) {
    failed(span, "model_error");
}

/// Records that what `span` covers failed, as `kind`.
fn failed(span: &Span, kind: &str) {
    span.record("error.type", kind);
    span.record("otel.status_code", "error");
}

fn record_usage(span: &Span, usage: &Usage) {
    span.record("gen_ai.usage.input_tokens", usage.input_tokens);
    span.record("gen_ai.usage.output_tokens", usage.output_tokens);
    if usage.estimated {
        span.record("tool_runtime.usage.estimated", true);
    }
}

/// The span of one tool call the model made.
pub(super) fn execute_tool(call: &ToolCall) -> Span {
    #[cfg(feature = "otel")]
    {
        use tracing::field::Empty;
        tracing::info_span!(
            target: "tool_runtime::otel",
            "execute_tool",
            "otel.name" = %format_args!("execute_tool {}", call.name),
            "gen_ai.operation.name" = "execute_tool",
            "gen_ai.tool.name" = call.name.as_str(),
            "gen_ai.tool.call.id" = call.id.as_deref(),
            "gen_ai.tool.type" = "function",
            "error.type" = Empty,
            "otel.status_code" = Empty,
        )
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = call;
        Span::none()
    }
}

/// Records a call that ended in an error: the tool's, or one the model's call made.
pub(super) fn executed(span: &Span, result: &ToolResult) {
    if !span.is_disabled() && result.is_error() {
        failed(span, "tool_error");
    }
}
