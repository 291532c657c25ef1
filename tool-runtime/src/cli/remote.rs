//! The command line's way to other MCP servers: `--mount` (and `--mounts-file`) put another
//! server's tools beside the binary's own for `serve`, `answer`, `check`, `list` and
//! `call`; `--server` makes `list` and `call` work on another server's catalog instead of
//! the binary's. A URL names a server over HTTP, anything else a command line to start
//! over stdio.

use super::access::ServerAccess;
use super::mount_choices::{MountChoiceFlags, MountChoices};
use crate::registry::{Registry, RegistryBuilder};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// How long the command line waits for the mounted servers' tools before it goes on with
/// those it has.
const MOUNT_PATIENCE: Duration = Duration::from_secs(30);

/// The servers mounted beside the binary's tools.
#[derive(clap::Args, Debug, Default)]
pub(super) struct Mounts {
    /// Mount another MCP server: PREFIX=URL, or 'PREFIX=COMMAND ARGS...' to start one over
    /// stdio (repeatable). Its tools are called PREFIX_name.
    #[arg(long = "mount", value_name = "PREFIX=SERVER")]
    mounts: Vec<String>,
    /// A file of mounts, one PREFIX=SERVER per line, and the mounts' options as lines
    /// PREFIX.OPTION=VALUE (include, exclude, rename, scopes, tool-scopes, timeout or era,
    /// each as its --mount-OPTION flag takes it); blank lines and lines starting with # are
    /// skipped.
    /// MCP_MOUNTS_FILE names one for serve and answer only.
    #[arg(long, value_name = "PATH", env = "MCP_MOUNTS_FILE")]
    mounts_file: Option<PathBuf>,
    #[command(flatten)]
    choices: MountChoiceFlags,
    #[command(flatten)]
    access: super::access::MountAccess,
}

impl Mounts {
    /// Every mount given, from the flags then the file (each with where it was given, for
    /// an error about it), and the options given for them.
    fn specs(&self) -> Result<(Vec<(String, String)>, MountChoices), String> {
        let mut specs: Vec<(String, String)> = self
            .mounts
            .iter()
            .map(|spec| (spec.clone(), format!("--mount {spec:?}")))
            .collect();
        let mut choices = self.choices.choices()?;
        if let Some(path) = &self.mounts_file {
            let text = std::fs::read_to_string(path).map_err(|error| {
                format!("cannot read the mounts file {}: {error}", path.display())
            })?;
            for (index, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let place = format!("{}, line {}", path.display(), index + 1);
                match option_line(line) {
                    Some((prefix, option, value)) => choices.add(prefix, option, value, &place)?,
                    None => specs.push((line.to_owned(), place)),
                }
            }
        }
        Ok((specs, choices))
    }

    /// Whether any mount is given (by a flag or a file).
    pub(super) fn given(&self) -> bool {
        !self.mounts.is_empty() || self.mounts_file.is_some()
    }

    /// The first of the flags given that mount a server or say how, if any.
    pub(super) fn given_flag(&self) -> Option<&'static str> {
        if !self.mounts.is_empty() {
            Some("--mount")
        } else if self.mounts_file.is_some() {
            Some("--mounts-file")
        } else {
            self.choices
                .given_flag()
                .or_else(|| self.access.given_flag())
        }
    }

    /// Leaves the mounts file out (one the environment named, for a command that takes
    /// only what its command line says).
    pub(super) fn forget_file(&mut self) {
        self.mounts_file = None;
    }

    /// The file OAuth credentials are kept in, when given.
    #[cfg(feature = "client")]
    pub(super) fn kept_credentials(&self) -> Option<&std::path::Path> {
        self.access.kept_credentials()
    }

    /// The registry with the mounts added, each authorized as its flags say.
    #[cfg(feature = "client")]
    pub(super) fn apply(&self, mut builder: RegistryBuilder) -> Result<RegistryBuilder, String> {
        let mut access = self.access.by_prefix()?;
        let (specs, mut choices) = self.specs()?;
        for (spec, place) in specs {
            let mount =
                crate::mount::Mount::parse(&spec).map_err(|why| format!("{place}: {why}"))?;
            let mount = choices.apply(mount);
            builder = builder.mount(access.apply(mount)?);
        }
        access.all_taken()?;
        choices.all_taken()?;
        Ok(builder)
    }
}

impl Mounts {
    /// A binary without the client refuses mounts, naming the feature.
    #[cfg(not(feature = "client"))]
    pub(super) fn apply(&self, builder: RegistryBuilder) -> Result<RegistryBuilder, String> {
        self.specs()?;
        match self.given_flag() {
            Some(flag) => Err(super::missing::feature(flag, "client")),
            None => Ok(builder),
        }
    }
}

/// A line `PREFIX.OPTION=VALUE` of the mounts file, read: a prefix has no dot (it starts
/// tool names) and an option is a lowercase word (hyphens or underscores after its first
/// letter), so no mount (`PREFIX=SERVER`) reads as one.
fn option_line(line: &str) -> Option<(&str, &str, &str)> {
    let (key, value) = line.split_once('=')?;
    let (prefix, option) = key.trim().split_once('.')?;
    let named = !prefix.is_empty()
        && prefix
            .bytes()
            .enumerate()
            .all(|(at, byte)| tool_rules::is_name_byte(byte, at == 0));
    // Underscores too, though no option has one: `docs.tool_scopes` is then told the
    // option it may mean rather than read as a mount named `docs.tool_scopes`.
    let word = option.starts_with(|c: char| c.is_ascii_lowercase())
        && option
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte == b'-' || byte == b'_');
    (named && word).then_some((prefix, option, value))
}

/// A registry of the server named by `--server` alone, its tools named as they are: the
/// binary's own tools are left out, so that nothing of theirs shadows or clashes with the
/// server's.
#[cfg(feature = "client")]
pub(super) fn only_server(
    server: &str,
    access: &ServerAccess,
    mounts: &Mounts,
) -> Result<Registry, String> {
    if let Some(flag) = mounts.given_flag() {
        return Err(format!(
            "{flag} is for a server mounted beside this binary's tools, and --server works on \
             that server alone; give one or the other"
        ));
    }
    let mount = access.apply(
        crate::mount::Mount::whole(server)?,
        mounts.kept_credentials(),
    )?;
    RegistryBuilder::default()
        .mount(mount)
        .build_without_statics()
        .map_err(|error| error.to_string())
}

#[cfg(not(feature = "client"))]
pub(super) fn only_server(
    _server: &str,
    _access: &ServerAccess,
    _mounts: &Mounts,
) -> Result<Registry, String> {
    Err(super::missing::feature("--server", "client"))
}

/// Waits until the mounted servers have listed their items (or `MOUNT_PATIENCE` has
/// passed), warning of those that could not; they keep trying in the background.
pub(super) async fn mounts_listed(ready: crate::registry::Ready) {
    match tokio::time::timeout(MOUNT_PATIENCE, ready).await {
        Ok(Ok(())) => {}
        Ok(Err(why)) => tracing::warn!("{why}; its tools come once it can be reached"),
        Err(_) => tracing::warn!(
            "a mounted server did not list its tools within {} s; they come once it does",
            MOUNT_PATIENCE.as_secs()
        ),
    }
}

/// How a command treats a mounted server it could not reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unreached {
    /// The command is about that server (`--server`): it fails, saying why.
    Fails,
    /// The server is one of several (`--mount`): a warning, and the command goes on.
    Warns,
}

/// Runs `work` over `registry` on a runtime of its own, once the registry's mounted servers
/// have listed their tools (or `MOUNT_PATIENCE` has passed); `Err` is the exit code of a
/// failure already reported (a runtime that could not start, or a server that could not be
/// reached when `unreached` says that fails).
pub(super) fn run_mounted<T, F>(
    registry: Registry,
    unreached: Unreached,
    work: impl FnOnce(Arc<Registry>) -> F,
) -> Result<T, ExitCode>
where
    F: std::future::Future<Output = T>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| {
            super::commands::failure(&format!("cannot start the async runtime: {error}"))
        })?;
    let registry = Arc::new(registry);
    let done = runtime.block_on(async {
        let ready = tokio::time::timeout(MOUNT_PATIENCE, registry.start()).await;
        let problem = match ready {
            Ok(Ok(())) => None,
            Ok(Err(why)) => Some(why),
            Err(_) => Some(format!(
                "a mounted server did not list its tools within {} s",
                MOUNT_PATIENCE.as_secs()
            )),
        };
        let done = match (problem, unreached) {
            (None, _) => Ok(work(Arc::clone(&registry)).await),
            (Some(why), Unreached::Fails) => Err(super::commands::failure(&why)),
            (Some(why), Unreached::Warns) => {
                eprintln!("warning: {why}; going on without its tools");
                Ok(work(Arc::clone(&registry)).await)
            }
        };
        // Politely, while the runtime still runs: a call given up (Ctrl-C) is cancelled on
        // its server before the server's input closes.
        registry.close_connections().await;
        done
    });
    drop(registry);
    runtime.shutdown_timeout(Duration::from_secs(1));
    done
}

#[cfg(test)]
mod tests {
    use super::option_line;

    #[test]
    fn only_prefix_dot_option_lines_read_as_options() {
        assert_eq!(
            option_line("docs.exclude = purge, reindex"),
            Some(("docs", "exclude", " purge, reindex"))
        );
        assert_eq!(
            option_line("my-docs.timeout=30s"),
            Some(("my-docs", "timeout", "30s"))
        );
        assert_eq!(
            option_line("docs.tool-scopes = update_page=docs:write"),
            Some(("docs", "tool-scopes", " update_page=docs:write"))
        );
        // Mounts, whatever dots their servers have.
        assert_eq!(option_line("docs=https://docs.example.com/mcp"), None);
        assert_eq!(option_line("py=python3 server.py --port=8.0"), None);
        assert_eq!(option_line("docs http://a.b/mcp?x=1"), None);
        assert_eq!(option_line(".exclude=a"), None);
        assert_eq!(option_line("docs.-era=2025-11-25"), None);
        assert_eq!(
            option_line("docs.tool_scopes=a=b"),
            Some(("docs", "tool_scopes", "a=b"))
        );
    }
}
