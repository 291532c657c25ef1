//! Checks a call's arguments against the tool's published schema; the problems come back
//! as [`ArgumentProblem`]s naming the parameter, what was expected and what came.

use super::error::ArgumentProblem;
use super::runnable::ToolRef;
use serde_json::Value;

/// Every problem with `input` (a JSON object) for `tool`; empty when the call may go ahead.
pub(crate) fn problems(tool: &ToolRef, input: &Value) -> Vec<ArgumentProblem> {
    tool.runnable()
        .checker(tool)
        .problems(tool.input_schema(), input)
        .into_iter()
        .map(|problem| ArgumentProblem::new(problem.path, problem.message))
        .collect()
}
