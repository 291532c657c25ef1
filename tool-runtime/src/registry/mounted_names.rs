//! Names given to the builder for tools a mounted server brings: a rate limit or a layer
//! for `docs_search` cannot be checked when the registry is built (the server's tools come
//! once it is reached), so it is taken on trust then and held to the server's list once
//! that comes.

use super::Registry;

impl Registry {
    /// Whether a tool named `name` may come from a mounted server: it is under a mount's
    /// prefix, or a mount takes its server's names as they are.
    pub(super) fn may_be_mounted(&self, name: &str) -> bool {
        self.mounted_prefixes.iter().any(|prefix| {
            prefix.is_empty()
                || name
                    .strip_prefix(prefix.as_str())
                    .is_some_and(|rest| rest.starts_with('_'))
        })
    }

    /// The names under `prefix` that a rate limit or a layer was given for and that no
    /// tool has: once a mount has placed its server's tools, what it was expected to bring
    /// and did not (a misspelt name, or a tool the mount leaves out), each with the closest
    /// name there is.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn expected_of_mount(&self, prefix: &str) -> Vec<(String, Option<String>)> {
        let under = format!("{prefix}_");
        let limited = self.rate_overrides.keys();
        let layered = self.layers.selections().flat_map(|tools| tools.names());
        let mut missing: Vec<(String, Option<String>)> = Vec::new();
        for name in limited.chain(layered) {
            let expected = prefix.is_empty() || name.starts_with(&under);
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

    #[test]
    fn only_names_under_a_mounts_prefix_may_be_mounted() {
        let registry = RegistryBuilder::default()
            .mounted_under("docs")
            .build_without_statics()
            .unwrap();
        assert!(registry.may_be_mounted("docs_search"));
        assert!(!registry.may_be_mounted("docsearch"));
        assert!(!registry.may_be_mounted("docs"));
        assert!(!registry.may_be_mounted("web_search"));
        let whole = RegistryBuilder::default()
            .mounted_under("")
            .build_without_statics()
            .unwrap();
        assert!(whole.may_be_mounted("anything"));
    }
}
