//! A registry that shares a store with the registries of other replicas: its list changes
//! and resource updates reach every replica (each tells its own clients), and it counts
//! rate limits and budgets in the store (`shared_limits`).

use super::changes::List;
use super::Registry;
use crate::store::{Event, Later, Store};
use std::sync::Arc;

impl Registry {
    /// Shares `store` with the other replicas' registries from now on.
    pub(crate) fn share_with(&self, store: Store) {
        if let Some(budgets) = &self.limits.budgets {
            budgets.share(store.clone());
        }
        let _ = self.limits.shared.set(store.clone());
        self.resource_updates.share(store.clone());
        self.result_cache.share(store.clone());
        let changes = Arc::clone(&self.changes);
        let cache = Arc::clone(&self.result_cache);
        let updates = self.resource_updates.clone();
        store.backend.on_event(Arc::new(move |event, from_here| {
            if from_here {
                // Told here already, when it happened.
                return;
            }
            match event {
                Event::ListChanged { list } => {
                    if let Some(list) = List::named(list) {
                        if matches!(list, List::Tools) {
                            cache.forget_all();
                        }
                        changes.send_modify(|versions| list.bump(versions));
                    }
                }
                Event::ResourceUpdated { uri } => updates.updated_here(uri),
                _ => {}
            }
        }));
        let _ = self.shared.set(store);
    }

    /// Counts a change of `list`, and tells the other replicas when they share a store.
    pub(super) fn list_changed(&self, list: List) {
        if matches!(list, List::Tools) {
            // A tool may be another now: none of its kept answers can stand.
            self.result_cache.forget_all();
        }
        self.changes.send_modify(|versions| list.bump(versions));
        if let Some(store) = self.shared.get() {
            let name = list.name().to_owned();
            store
                .backend
                .later(Later::Publish(Event::ListChanged { list: name }));
        }
    }
}
