//! What the command line chooses of each mount beyond where its server is: which tools
//! (`include`, `exclude`), under which names (`rename`), what a call through it needs
//! (`scopes`, `tool-scopes`, `timeout`) and which protocol era its server is spoken to in
//! (`era`), from `--mount-...` flags or from option lines of the mounts file.

use std::collections::HashMap;
use std::time::Duration;

/// The options a mount takes, as the flags and the mounts file name them.
const OPTIONS: [&str; 7] = [
    "include",
    "exclude",
    "rename",
    "scopes",
    "tool-scopes",
    "timeout",
    "era",
];

/// The protocol versions `era` takes (and `--server-era`): the handshake era's newest, and
/// the one served per request.
pub(super) const ERAS: [&str; 2] = [
    crate::mcp::HANDSHAKE_VERSIONS[0],
    crate::mcp::STATELESS_VERSIONS[0],
];

/// The choices given on the command line, per mount.
#[derive(clap::Args, Debug, Default)]
pub(super) struct MountChoiceFlags {
    /// Only these tools of the mount PREFIX's server, by their names there:
    /// PREFIX=NAME,NAME... (repeatable; the names given for one mount add up).
    #[arg(long = "mount-include", value_name = "PREFIX=NAMES")]
    include: Vec<String>,
    /// All the tools of the mount PREFIX's server but these: PREFIX=NAME,NAME...
    /// (repeatable).
    #[arg(long = "mount-exclude", value_name = "PREFIX=NAMES")]
    exclude: Vec<String>,
    /// Tools of the mount PREFIX's server under other names (before the prefix):
    /// PREFIX=FROM:TO,FROM:TO... (repeatable).
    #[arg(long = "mount-rename", value_name = "PREFIX=FROM:TO")]
    rename: Vec<String>,
    /// The OAuth scopes a caller's token must grant to call any tool of the mount PREFIX:
    /// PREFIX=SCOPE,SCOPE... (repeatable; the scopes given for one mount add up).
    #[arg(long = "mount-scopes", value_name = "PREFIX=SCOPES")]
    scopes: Vec<String>,
    /// The OAuth scopes a caller's token must grant to call one tool of the mount PREFIX
    /// (by its name on the server), beyond the mount's: PREFIX=TOOL=SCOPE,SCOPE...
    /// (repeatable; the scopes given for one tool add up).
    #[arg(long = "mount-tool-scopes", value_name = "PREFIX=TOOL=SCOPES")]
    tool_scopes: Vec<String>,
    /// The time limit of every call through the mount PREFIX: PREFIX=DURATION, e.g.
    /// docs=30s (repeatable).
    #[arg(long = "mount-timeout", value_name = "PREFIX=DURATION")]
    timeout: Vec<String>,
    /// Speak to the mount PREFIX's server in one protocol era only: PREFIX=2025-11-25
    /// (initialize and a session, for a server whose newer protocol misbehaves) or
    /// PREFIX=2026-07-28 (never falling back). Unless given, 2026-07-28 is tried first and
    /// the handshake era is fallen back to.
    #[arg(long = "mount-era", value_name = "PREFIX=VERSION")]
    era: Vec<String>,
}

/// One choice of a mount.
#[derive(Debug, Clone, PartialEq)]
// Read only where mounts can be made: a binary without the client refuses them.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
enum Choice {
    Include(Vec<String>),
    Exclude(Vec<String>),
    Rename(Vec<(String, String)>),
    Scopes(Vec<String>),
    ToolScopes(String, Vec<String>),
    Timeout(Duration),
    /// Whether the server is spoken to in the handshake era only (else 2026-07-28 only).
    Era(bool),
}

/// Every choice given, by the prefix of the mount it is for, each with where it was given
/// (for an error about it).
#[derive(Debug, Default)]
pub(super) struct MountChoices {
    given: HashMap<String, Vec<(Choice, String)>>,
}

impl MountChoiceFlags {
    /// The choices the flags give.
    pub(super) fn choices(&self) -> Result<MountChoices, String> {
        let mut choices = MountChoices::default();
        let flags = [
            ("include", &self.include),
            ("exclude", &self.exclude),
            ("rename", &self.rename),
            ("scopes", &self.scopes),
            ("tool-scopes", &self.tool_scopes),
            ("timeout", &self.timeout),
            ("era", &self.era),
        ];
        for (option, entries) in flags {
            for entry in entries {
                let flag = format!("--mount-{option} {entry:?}");
                let (prefix, value) = entry
                    .split_once('=')
                    .ok_or_else(|| format!("{flag} is not PREFIX=VALUE"))?;
                choices.add(prefix, option, value, &flag)?;
            }
        }
        Ok(choices)
    }

    /// The first of these flags given, if any.
    pub(super) fn given_flag(&self) -> Option<&'static str> {
        [
            ("--mount-include", &self.include),
            ("--mount-exclude", &self.exclude),
            ("--mount-rename", &self.rename),
            ("--mount-scopes", &self.scopes),
            ("--mount-tool-scopes", &self.tool_scopes),
            ("--mount-timeout", &self.timeout),
            ("--mount-era", &self.era),
        ]
        .into_iter()
        .find_map(|(flag, entries)| (!entries.is_empty()).then_some(flag))
    }
}

impl MountChoices {
    /// Adds option `option` of the mount `prefix` with `value`, given at `place`.
    pub(super) fn add(
        &mut self,
        prefix: &str,
        option: &str,
        value: &str,
        place: &str,
    ) -> Result<(), String> {
        let prefix = prefix.trim();
        let choice =
            parse(prefix, option.trim(), value.trim()).map_err(|why| format!("{place}: {why}"))?;
        let given = self.given.entry(prefix.to_owned()).or_default();
        // Lists add up; a mount has one time limit and one era.
        let once = |choice: &Choice| match choice {
            Choice::Timeout(_) => Some("a timeout"),
            Choice::Era(_) => Some("an era"),
            _ => None,
        };
        if let Some(what) = once(&choice) {
            if let Some((_, first)) = given
                .iter()
                .find(|(earlier, _)| once(earlier) == Some(what))
            {
                return Err(format!(
                    "{place}: the mount `{prefix}` is given {what} twice (first by {first}); \
                     give it one"
                ));
            }
        }
        given.push((choice, place.to_owned()));
        Ok(())
    }

    /// `mount` with the choices given for its prefix; the tools to include and the scopes
    /// given more than once add up.
    #[cfg(feature = "client")]
    pub(super) fn apply(&mut self, mut mount: crate::mount::Mount) -> crate::mount::Mount {
        let (mut include, mut scopes) = (None::<Vec<String>>, None::<Vec<String>>);
        for (choice, _) in self.given.remove(mount.prefix()).unwrap_or_default() {
            mount = match choice {
                Choice::Include(names) => {
                    include.get_or_insert_default().extend(names);
                    mount
                }
                Choice::Exclude(names) => mount.exclude(names),
                Choice::Rename(pairs) => pairs
                    .into_iter()
                    .fold(mount, |mount, (from, to)| mount.rename(from, to)),
                Choice::Scopes(more) => {
                    scopes.get_or_insert_default().extend(more);
                    mount
                }
                Choice::ToolScopes(name, needed) => mount.tool_scopes(name, needed),
                Choice::Timeout(limit) => mount.timeout(limit),
                Choice::Era(handshake) => mount.handshake_era(handshake),
            };
        }
        if let Some(include) = include {
            mount = mount.include(include);
        }
        if let Some(scopes) = scopes {
            mount = mount.scopes(scopes);
        }
        mount
    }

    /// Refuses choices given for a mount that is not.
    #[cfg(feature = "client")]
    pub(super) fn all_taken(self) -> Result<(), String> {
        let mut left: Vec<(String, String)> = self
            .given
            .into_iter()
            .flat_map(|(prefix, choices)| {
                choices
                    .into_iter()
                    .map(move |(_, place)| (prefix.clone(), place))
            })
            .collect();
        left.sort();
        match left.into_iter().next() {
            None => Ok(()),
            Some((prefix, place)) => Err(format!(
                "{place} names the mount `{prefix}`, which is not given; give it with --mount \
                 {prefix}=URL"
            )),
        }
    }
}

/// Option `option` of the mount `prefix` read from `value`.
fn parse(prefix: &str, option: &str, value: &str) -> Result<Choice, String> {
    let names = || -> Result<Vec<String>, String> {
        let names: Vec<String> = list(value).map(str::to_owned).collect();
        if names.is_empty() {
            return Err(format!("{option} of `{prefix}` names no tool"));
        }
        Ok(names)
    };
    match option {
        "include" => names().map(Choice::Include),
        "exclude" => names().map(Choice::Exclude),
        "rename" => {
            let pairs = list(value)
                .map(|pair| {
                    let (from, to) = pair
                        .split_once(':')
                        .map(|(from, to)| (from.trim(), to.trim()))
                        .filter(|(from, to)| !from.is_empty() && !to.is_empty())
                        .ok_or_else(|| format!("{pair:?} is not FROM:TO"))?;
                    tool_rules::check_name(&format!("{prefix}_{to}")).map_err(|why| {
                        format!("`{prefix}_{to}`, the new name of `{from}`, is no tool name: {why}")
                    })?;
                    Ok((from.to_owned(), to.to_owned()))
                })
                .collect::<Result<Vec<_>, String>>()?;
            if pairs.is_empty() {
                return Err(format!("rename of `{prefix}` names no tool"));
            }
            Ok(Choice::Rename(pairs))
        }
        "scopes" => {
            scopes(value, || format!("scopes of `{prefix}` names no scope")).map(Choice::Scopes)
        }
        "tool-scopes" => {
            // A server's tool names are its own (dots and all): only a name no server
            // gives, empty or spaced, is refused here.
            let (name, listed) = value
                .split_once('=')
                .map(|(name, listed)| (name.trim(), listed))
                .filter(|(name, _)| !name.is_empty() && !name.contains(char::is_whitespace))
                .ok_or_else(|| {
                    format!("tool-scopes of `{prefix}` is TOOL=SCOPE,SCOPE..., not {value:?}")
                })?;
            let scopes = scopes(listed, || {
                format!("tool-scopes of `{prefix}` for `{name}` names no scope")
            })?;
            Ok(Choice::ToolScopes(name.to_owned(), scopes))
        }
        "era" => match ERAS.iter().position(|era| *era == value) {
            Some(at) => Ok(Choice::Era(at == 0)),
            None => Err(format!(
                "the era of `{prefix}` is {} or {}, not {value:?}",
                ERAS[0], ERAS[1]
            )),
        },
        "timeout" => super::args::parse_delay(value)
            .ok()
            .filter(|limit| !limit.is_zero())
            .map(Choice::Timeout)
            .ok_or_else(|| {
                format!("the timeout of `{prefix}` is a duration such as 30s or 2m, not {value:?}")
            }),
        other => {
            let meant = tool_rules::closest(other, OPTIONS, 0.7)
                .map(|meant| format!(" (did you mean `{meant}`?)"))
                .unwrap_or_default();
            Err(format!(
                "a mount has no option `{other}`{meant}; it has {}",
                OPTIONS.join(", ")
            ))
        }
    }
}

/// The scopes listed in `value`, separated by commas or spaces (as a token's `scope` claim
/// separates them), each one a token can carry; `none` says what is wrong when there are
/// none.
fn scopes(value: &str, none: impl FnOnce() -> String) -> Result<Vec<String>, String> {
    let scopes: Vec<String> = value
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|scope| !scope.is_empty())
        .map(|scope| {
            tool_rules::check_scope(scope)
                .map(|()| scope.to_owned())
                .map_err(|why| format!("the scope {scope:?} cannot be granted: {why}"))
        })
        .collect::<Result<_, _>>()?;
    if scopes.is_empty() {
        return Err(none());
    }
    Ok(scopes)
}

/// The entries of a comma-separated list, trimmed, empty ones left out.
fn list(value: &str) -> impl Iterator<Item = &str> {
    value
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(option: &str, value: &str) -> Result<Choice, String> {
        parse("docs", option, value)
    }

    #[test]
    fn each_option_reads_its_value() {
        assert_eq!(
            one("include", " search, fetch ,"),
            Ok(Choice::Include(vec!["search".into(), "fetch".into()]))
        );
        assert_eq!(
            one("exclude", "purge"),
            Ok(Choice::Exclude(vec!["purge".into()]))
        );
        assert_eq!(
            one("rename", "search:find, fetch : get"),
            Ok(Choice::Rename(vec![
                ("search".into(), "find".into()),
                ("fetch".into(), "get".into())
            ]))
        );
        assert_eq!(
            one("scopes", "docs:read docs:write,admin"),
            Ok(Choice::Scopes(vec![
                "docs:read".into(),
                "docs:write".into(),
                "admin".into()
            ]))
        );
        assert_eq!(
            one("tool-scopes", "update_page = docs:write, docs:admin"),
            Ok(Choice::ToolScopes(
                "update_page".into(),
                vec!["docs:write".into(), "docs:admin".into()]
            ))
        );
        assert_eq!(
            one("timeout", "90s"),
            Ok(Choice::Timeout(Duration::from_secs(90)))
        );
        assert_eq!(one("era", "2025-11-25"), Ok(Choice::Era(true)));
        assert_eq!(one("era", "2026-07-28"), Ok(Choice::Era(false)));
    }

    #[test]
    fn a_wrong_value_is_refused_saying_what_was_expected() {
        let refused = |option: &str, value: &str, expected: &str| {
            let why = one(option, value).unwrap_err();
            assert!(why.contains(expected), "{option}={value:?}: {why}");
        };
        refused("include", " , ", "names no tool");
        refused("rename", "search", "\"search\" is not FROM:TO");
        refused("rename", "search:", "is not FROM:TO");
        refused(
            "rename",
            "search:a b",
            "`docs_a b`, the new name of `search`, is no tool name",
        );
        refused("scopes", "  ", "names no scope");
        refused(
            "scopes",
            "docs:read, \"admin\"",
            "the scope \"\\\"admin\\\"\" cannot be granted",
        );
        refused(
            "tool-scopes",
            "update page=docs:write",
            "tool-scopes of `docs` is TOOL=SCOPE,SCOPE..., not \"update page=docs:write\"",
        );
        refused(
            "tool-scopes",
            "docs:write",
            "tool-scopes of `docs` is TOOL=SCOPE,SCOPE..., not \"docs:write\"",
        );
        refused("tool-scopes", "=docs:write", "is TOOL=SCOPE,SCOPE...");
        refused(
            "tool-scopes",
            "update_page= ,",
            "tool-scopes of `docs` for `update_page` names no scope",
        );
        refused(
            "era",
            "2025-06-18",
            "the era of `docs` is 2025-11-25 or 2026-07-28, not \"2025-06-18\"",
        );
        refused(
            "timeout",
            "soon",
            "a duration such as 30s or 2m, not \"soon\"",
        );
        refused("timeout", "0", "not \"0\"");
        refused(
            "tool_scopes",
            "a=b",
            "a mount has no option `tool_scopes` (did you mean `tool-scopes`?)",
        );
        refused(
            "inclde",
            "a",
            "a mount has no option `inclde` (did you mean `include`?); it has include, \
             exclude, rename, scopes, tool-scopes, timeout, era",
        );
    }

    #[test]
    fn a_second_era_for_one_mount_is_refused_naming_the_first() {
        let mut choices = MountChoices::default();
        choices
            .add("docs", "era", "2025-11-25", "mounts.txt, line 2")
            .unwrap();
        let why = choices
            .add(
                "docs",
                "era",
                "2026-07-28",
                "--mount-era \"docs=2026-07-28\"",
            )
            .unwrap_err();
        assert_eq!(
            why,
            "--mount-era \"docs=2026-07-28\": the mount `docs` is given an era twice (first \
             by mounts.txt, line 2); give it one"
        );
    }

    #[test]
    fn a_second_timeout_for_one_mount_is_refused_naming_the_first() {
        let mut choices = MountChoices::default();
        choices
            .add("docs", "timeout", "30s", "--mount-timeout \"docs=30s\"")
            .unwrap();
        choices
            .add("docs", "exclude", "purge", "mounts.txt, line 2")
            .unwrap();
        let why = choices
            .add("docs", "timeout", "1m", "mounts.txt, line 3")
            .unwrap_err();
        assert_eq!(
            why,
            "mounts.txt, line 3: the mount `docs` is given a timeout twice (first by \
             --mount-timeout \"docs=30s\"); give it one"
        );
    }

    #[cfg(feature = "client")]
    #[test]
    fn choices_for_a_mount_not_given_are_refused_naming_where_they_were_given() {
        let mut choices = MountChoices::default();
        choices
            .add("wiki", "exclude", "purge", "--mount-exclude \"wiki=purge\"")
            .unwrap();
        let why = choices.all_taken().unwrap_err();
        assert_eq!(
            why,
            "--mount-exclude \"wiki=purge\" names the mount `wiki`, which is not given; give \
             it with --mount wiki=URL"
        );
    }
}
