//! The 2025-11-25 tasks a connection asked for, which its `tasks/list` shows: kept as
//! they are added, and trimmed of those the store no longer keeps at a constant cost per
//! task.

use crate::mcp::connection::State;
use crate::sync::lock;
use crate::tasks::TaskStore;
use std::collections::HashSet;

/// A connection's 2025-11-25 tasks, oldest first, each numbered in the order it was added.
/// A `tasks/list` cursor is the number of the last task of the page before, so it keeps
/// its place when that task is gone since.
#[derive(Default)]
pub(crate) struct ListedTasks {
    pub(super) tasks: Vec<(u64, String)>,
    added: u64,
}

impl ListedTasks {
    /// The ids of the tasks listed, oldest first.
    fn ids(&self) -> Vec<String> {
        self.tasks.iter().map(|(_, id)| id.clone()).collect()
    }
}

/// Adds a 2025-11-25 task to its connection's list (`tasks/list`). Now and then (each
/// time the list doubles) it gives the list, whose tasks the store no longer keeps are to
/// be forgotten ([`forget_gone`]), so a long connection's list stays as long as its live
/// tasks, at a constant cost per task.
pub(super) fn listed(state: &State, task: &str) -> Option<Vec<String>> {
    let mut own = lock(&state.tasks);
    let before = own.tasks.len();
    let number = own.added;
    own.added += 1;
    own.tasks.push((number, task.to_owned()));
    (before >= 64 && before.is_power_of_two()).then(|| own.ids())
}

/// Forgets those of `listed` the store no longer keeps (one it cannot say anything of
/// stays).
pub(super) async fn forget_gone(state: &State, store: &dyn TaskStore, listed: Vec<String>) {
    let mut gone = HashSet::new();
    for id in listed {
        if let Ok(false) = store.contains(&id).await {
            gone.insert(id);
        }
    }
    unlist(state, &gone);
}

/// Takes the tasks in `gone`, which the store no longer keeps, off the connection's list.
pub(super) fn unlist(state: &State, gone: &HashSet<String>) {
    if !gone.is_empty() {
        lock(&state.tasks)
            .tasks
            .retain(|(_, task)| !gone.contains(task));
    }
}
