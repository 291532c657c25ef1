//! Names given to the builder for tools a mounted server brings: a rate limit or a layer
//! for `docs_search` cannot be checked when the registry is built (the server's tools come
//! once it is reached), so it is taken on trust then and held to the server's list once
//! that comes.

use super::Registry;

impl Registry {
    /// The prefix of the mount a tool named `name` would come from: the longest mounted
    /// prefix it is under (`docs_v2_search` is the mount `docs_v2`'s, not `docs`'s), else
    /// the empty prefix of a mount that takes its server's names as they are.
    fn mount_of(&self, name: &str) -> Option<&str> {
        let under = |prefix: &&String| {
            name.strip_prefix(prefix.as_str())
                .is_some_and(|rest| rest.starts_with('_'))
        };
        let longest = self
            .mounted_prefixes
            .iter()
            .filter(|prefix| !prefix.is_empty())
            .filter(under)
            .max_by_key(|prefix| prefix.len());
        let whole = self
            .mounted_prefixes
            .iter()
            .find(|prefix| prefix.is_empty());
        longest.or(whole).map(String::as_str)
    }

    /// Whether a tool named `name` may come from a mounted server: it is under a mount's
    /// prefix, or a mount takes its server's names as they are.
    pub(super) fn may_be_mounted(&self, name: &str) -> bool {
        self.mount_of(name).is_some()
    }

    /// The names that a rate limit or a layer was given for, that would come from the
    /// mount with `prefix`, and that no tool has: once the mount has placed its server's
    /// tools, what it was expected to bring and did not (a misspelt name, or a tool the
    /// mount leaves out), each with the closest name there is.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn expected_of_mount(&self, prefix: &str) -> Vec<(String, Option<String>)> {
        let limited = self.rate_overrides.keys();
        let layered = self.layers.selections().flat_map(|tools| tools.names());
        let mut missing: Vec<(String, Option<String>)> = Vec::new();
        for name in limited.chain(layered) {
            let expected = self.mount_of(name) == Some(prefix);
            if expected && self.get(name).is_none() && !missing.iter().any(|(m, _)| m == name) {
                missing.push((name.clone(), self.closest_name(name)));
            }
        }
        missing
    }
}

#[cfg(all(test, feature = "client", feature = "cli"))]
mod tests {
    use crate::registry::RegistryBuilder;

    /// A mount's starter for a registry that is never started.
    fn never_started() -> crate::registry::Starter {
        Box::new(|_| Box::pin(async { Ok(()) }))
    }

    #[test]
    fn only_names_under_a_mounts_prefix_may_be_mounted() {
        let registry = RegistryBuilder::default()
            .on_start("docs", never_started())
            .build_without_statics()
            .unwrap();
        assert!(registry.may_be_mounted("docs_search"));
        assert!(!registry.may_be_mounted("docsearch"));
        assert!(!registry.may_be_mounted("docs"));
        assert!(!registry.may_be_mounted("web_search"));
        let whole = RegistryBuilder::default()
            .on_start("", never_started())
            .build_without_statics()
            .unwrap();
        assert!(whole.may_be_mounted("anything"));
    }

    #[test]
    fn a_name_is_expected_of_the_mount_with_the_longest_prefix_it_is_under() {
        let limit = crate::ops::Rate::new(1, std::time::Duration::from_secs(60)).unwrap();
        let registry = RegistryBuilder::default()
            .on_start("docs", never_started())
            .on_start("docs_v2", never_started())
            .on_start("", never_started())
            .rate_limit("docs_v2_search", limit)
            .rate_limit("docs_fetch", limit)
            .rate_limit("other", limit)
            .build_without_statics()
            .unwrap();
        let names = |prefix: &str| -> Vec<String> {
            let expected = registry.expected_of_mount(prefix);
            expected.into_iter().map(|(name, _)| name).collect()
        };
        assert_eq!(names("docs_v2"), ["docs_v2_search"]);
        assert_eq!(names("docs"), ["docs_fetch"]);
        assert_eq!(names(""), ["other"]);
    }
}
