//! `todo_manager`: the agent's plan, replaced whole on each call and kept by the server.

use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use tool_runtime::{tool, State};

/// A plan holds at most this many items.
pub const MAX_ITEMS: usize = 15;

/// Where a step stands.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started.
    #[default]
    Pending,
    /// Being done now (at most one item).
    InProgress,
    /// Done.
    Completed,
}

/// A step as the caller gives it.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanItemInput {
    /// What the step is, in the imperative ("Map domains").
    pub content: String,
    /// The same step in the present continuous, shown while it runs ("Mapping domains").
    #[serde(rename = "activeForm")]
    pub active_form: String,
    /// Where it stands (default pending).
    #[serde(default)]
    pub status: Status,
}

/// A step of the plan.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlanItem {
    /// `step-1`, `step-2`, ... in order.
    pub id: String,
    /// What the step is.
    pub content: String,
    /// The step in the present continuous.
    #[serde(rename = "activeForm")]
    pub active_form: String,
    /// Where it stands.
    pub status: Status,
}

/// The plan.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Plan {
    /// Every step, in order.
    pub items: Vec<PlanItem>,
    /// The most steps a plan may have.
    #[serde(rename = "maxItems")]
    pub max_items: usize,
    /// The step in progress, if any.
    #[serde(rename = "currentItem")]
    pub current_item: Option<PlanItem>,
}

/// The plan, kept across calls.
#[derive(Debug, Default)]
pub struct PlanBoard {
    items: Mutex<Vec<PlanItem>>,
}

impl PlanBoard {
    /// The current plan.
    pub fn plan(&self) -> Plan {
        let items = self.items.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let current_item = items
            .iter()
            .find(|item| item.status == Status::InProgress)
            .cloned();
        Plan {
            items,
            max_items: MAX_ITEMS,
            current_item,
        }
    }
}

/// Replace the plan: give every item, every time (at most 15, at most one in progress).
///
/// Ids are assigned in order (`step-1`, ...). When no item is in progress, the first pending
/// one becomes the current item. The plan is kept by the server between calls.
///
/// Example: {"items": [
///     {"content": "Gather context", "activeForm": "Gathering context", "status": "pending"},
///     {"content": "Map domains", "activeForm": "Mapping domains", "status": "pending"}]}
/// Example: {"items": []}
#[tool(idempotent, destructive = false, open_world = false)]
pub fn todo_manager(
    /// The whole plan, in order.
    items: Vec<PlanItemInput>,
    board: State<PlanBoard>,
) -> Result<Plan, String> {
    if items.len() > MAX_ITEMS {
        return Err(format!(
            "a plan has at most {MAX_ITEMS} items; got {}",
            items.len()
        ));
    }
    for (index, item) in items.iter().enumerate() {
        if item.content.trim().is_empty() {
            return Err(format!("item {}: content is empty", index + 1));
        }
        if item.active_form.trim().is_empty() {
            return Err(format!(
                "item {}: activeForm is empty; give the step in the present continuous, \
                 like 'Mapping domains'",
                index + 1
            ));
        }
    }
    let running: Vec<String> = items
        .iter()
        .enumerate()
        .filter(|(_, item)| item.status == Status::InProgress)
        .map(|(index, _)| (index + 1).to_string())
        .collect();
    if running.len() > 1 {
        return Err(format!(
            "at most one item can be in_progress; items {} are",
            running.join(" and ")
        ));
    }
    let mut plan: Vec<PlanItem> = items
        .into_iter()
        .enumerate()
        .map(|(index, item)| PlanItem {
            id: format!("step-{}", index + 1),
            content: item.content,
            active_form: item.active_form,
            status: item.status,
        })
        .collect();
    if running.is_empty() {
        if let Some(first) = plan.iter_mut().find(|item| item.status == Status::Pending) {
            first.status = Status::InProgress;
        }
    }
    *board.items.lock().unwrap_or_else(|p| p.into_inner()) = plan;
    Ok(board.plan())
}
