//! A task's open questions, for both eras: a question opened and closed with the store
//! awaited, and the link through which a call's askers reach the task it became.

use crate::sync::lock;
use crate::tasks::{StoreError, TaskStore};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// A running task as the askers of its call reach it: where the call's questions go once
/// it has become the task.
#[derive(Clone)]
pub(crate) struct TaskLink {
    store: Arc<dyn TaskStore>,
    id: String,
    asked: Arc<Mutex<QuestionNumbers>>,
    /// Where a question the tool stopped waiting for without closing it (its wait was
    /// dropped) goes, for the task's run to forget it.
    abandoned: mpsc::UnboundedSender<(String, u64)>,
}

/// The questions of a task asked in this process: the number of the latest asked under
/// each key. A question is forgotten only while it is the latest under its key, so one
/// asked again under the same key is never forgotten for the one before. (Questions open
/// at the same time need keys of their own, as the retries of 2026-07-28 need them.)
#[derive(Default)]
struct QuestionNumbers {
    next: u64,
    latest: std::collections::HashMap<String, u64>,
}

impl TaskLink {
    /// The link to the task `id` in `store`, and where its abandoned questions arrive.
    pub(super) fn new(
        store: Arc<dyn TaskStore>,
        id: String,
    ) -> (TaskLink, mpsc::UnboundedReceiver<(String, u64)>) {
        let (abandoned, arrive) = mpsc::unbounded_channel();
        let link = TaskLink {
            store,
            id,
            asked: Arc::default(),
            abandoned,
        };
        (link, arrive)
    }

    /// The task's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Numbers a question asked under `key`: the latest under it from now on.
    fn number(&self, key: &str) -> u64 {
        let mut asked = lock(&self.asked);
        asked.next += 1;
        let number = asked.next;
        asked.latest.insert(key.to_owned(), number);
        number
    }

    /// Forgets the question `number` under `key` in the task, unless another was asked
    /// under that key since; false when the store failed (the question stays).
    pub(super) async fn forget(&self, key: &str, number: u64) -> bool {
        let is_latest = |asked: &QuestionNumbers| asked.latest.get(key) == Some(&number);
        if !is_latest(&lock(&self.asked)) {
            return true;
        }
        if let Err(error) = self.store.update(&self.id, &mut |t| t.forget(key)).await {
            tracing::error!(task = self.id, %error, "could not forget a task's question");
            return false;
        }
        let mut asked = lock(&self.asked);
        if is_latest(&asked) {
            asked.latest.remove(key);
        }
        true
    }
}

/// A question of a task, open until [`close`](TaskQuestion::close)d: the task waits
/// `input_required` with it. A question dropped without being closed (the tool stopped
/// waiting for it) is forgotten by the task's run, since dropping cannot wait for the store.
pub(crate) struct TaskQuestion {
    link: TaskLink,
    key: String,
    number: u64,
    open: bool,
}

impl TaskQuestion {
    /// Opens the question `key` (`request`, as MCP spells it) in the task; `Err` when the
    /// store failed, so the task does not show the question.
    pub(crate) async fn open(
        link: TaskLink,
        key: String,
        request: &Value,
    ) -> Result<TaskQuestion, StoreError> {
        // Made first, so a wait dropped while the store works still forgets it.
        let question = TaskQuestion {
            number: link.number(&key),
            link,
            key,
            open: true,
        };
        let (store, task, key) = (&question.link.store, &question.link.id, &question.key);
        store.update(task, &mut |t| t.ask(key, request)).await?;
        Ok(question)
    }

    /// 2026-07-28: waits for the client's answer through `tasks/update`; `None` once the
    /// task has ended or is gone.
    pub(crate) async fn answered(&self) -> Option<Value> {
        crate::tasks::wait_for(
            self.link.store.as_ref(),
            &self.link.id,
            |found| match found {
                None => Some(None),
                Some(found) if found.status.is_terminal() => Some(None),
                Some(mut found) => found.input_responses.remove(&self.key).map(Some),
            },
        )
        .await
    }

    /// The tool stopped waiting (answered or not): the task forgets the question. Should
    /// the store fail, or this be dropped before it is done, the task's run tries once more
    /// (a question it cannot forget either stays listed until the task ends, and an answer
    /// left with it answers no later question: asking again under the key clears it).
    pub(crate) async fn close(mut self) {
        if self.link.forget(&self.key, self.number).await {
            self.open = false;
        }
    }
}

impl Drop for TaskQuestion {
    fn drop(&mut self) {
        if self.open {
            // Nobody receives it once the run has ended, and the task with it.
            let key = std::mem::take(&mut self.key);
            let _ = self.link.abandoned.send((key, self.number));
        }
    }
}
