//! Watching a registry's lists change: how many times each list (tools, prompts,
//! resources) changed, and the handle a server waits on to tell its clients.

use tokio::sync::watch;

/// How many times each list has changed since the registry was built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Versions {
    pub(crate) tools: u64,
    pub(crate) prompts: u64,
    pub(crate) resources: u64,
}

/// One of the lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum List {
    Tools,
    Prompts,
    Resources,
}

impl List {
    /// Its name, as replicas tell each other.
    pub(crate) fn name(self) -> &'static str {
        match self {
            List::Tools => "tools",
            List::Prompts => "prompts",
            List::Resources => "resources",
        }
    }

    /// The list named `name`.
    pub(crate) fn named(name: &str) -> Option<List> {
        [List::Tools, List::Prompts, List::Resources]
            .into_iter()
            .find(|list| list.name() == name)
    }

    /// Counts one change of this list in `versions`.
    pub(crate) fn bump(self, versions: &mut Versions) {
        match self {
            List::Tools => versions.tools += 1,
            List::Prompts => versions.prompts += 1,
            List::Resources => versions.resources += 1,
        }
    }
}

/// Which lists changed since the last look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListsChanged {
    /// Tools were added or removed.
    pub tools: bool,
    /// Prompts were added or removed.
    pub prompts: bool,
    /// Resources or resource templates were added or removed.
    pub resources: bool,
}

impl ListsChanged {
    fn between(seen: Versions, now: Versions) -> ListsChanged {
        ListsChanged {
            tools: seen.tools != now.tools,
            prompts: seen.prompts != now.prompts,
            resources: seen.resources != now.resources,
        }
    }

    /// Whether any list changed.
    pub fn any(&self) -> bool {
        self.tools || self.prompts || self.resources
    }

    /// Tools, prompts, resources, in that order: for tables that say something of each.
    pub(crate) fn flags(&self) -> [bool; 3] {
        [self.tools, self.prompts, self.resources]
    }

    pub(crate) fn from_flags([tools, prompts, resources]: [bool; 3]) -> ListsChanged {
        ListsChanged {
            tools,
            prompts,
            resources,
        }
    }

    /// The lists in both.
    pub(crate) fn and(self, other: ListsChanged) -> ListsChanged {
        ListsChanged {
            tools: self.tools && other.tools,
            prompts: self.prompts && other.prompts,
            resources: self.resources && other.resources,
        }
    }
}

/// Changes to a [`Registry`](crate::Registry)'s tools, prompts and resources, from
/// [`Registry::changes`](crate::Registry::changes).
#[derive(Debug)]
pub struct Changes {
    receiver: watch::Receiver<Versions>,
    seen: Versions,
}

impl Changes {
    pub(crate) fn new(receiver: watch::Receiver<Versions>) -> Changes {
        let seen = *receiver.borrow();
        Changes { receiver, seen }
    }

    /// Waits for the next change (several changes while nobody waited count as one); false
    /// once the registry is gone, so no change can come.
    pub async fn changed(&mut self) -> bool {
        self.next().await.is_some()
    }

    /// Waits for the next change and says which lists changed; `None` once the registry
    /// is gone.
    pub async fn next(&mut self) -> Option<ListsChanged> {
        loop {
            self.receiver.changed().await.ok()?;
            let now = *self.receiver.borrow_and_update();
            let changed = ListsChanged::between(self.seen, now);
            self.seen = now;
            if changed.any() {
                return Some(changed);
            }
        }
    }

    /// Whether anything changed since this was made or last looked at, without waiting; it
    /// then counts as seen.
    pub fn has_changed(&mut self) -> bool {
        let now = *self.receiver.borrow_and_update();
        let changed = ListsChanged::between(self.seen, now);
        self.seen = now;
        changed.any()
    }
}
