//! How the command line authorizes itself to other MCP servers over HTTP (`--server`,
//! `--mount`): a bearer token from a file or the environment, or OAuth 2.1, its
//! credentials kept in a file between runs so that a person signs in once, not at every
//! command. No flag takes a secret itself: a command line is visible to every user of the
//! machine.

#[cfg(feature = "client")]
use std::path::Path;
use std::path::PathBuf;

/// The environment variable holding the bearer token of the server `--server` names.
#[cfg(feature = "client")]
const SERVER_TOKEN_VARIABLE: &str = "MCP_SERVER_TOKEN";

/// How `list` and `call` reach the server `--server` names: how they are authorized
/// there, and in which protocol era they speak to it.
#[derive(clap::Args, Debug, Default)]
pub(super) struct ServerAccess {
    /// Speak to the server in one protocol era only: 2025-11-25 (initialize and a session,
    /// for a server whose newer protocol misbehaves) or 2026-07-28 (never falling back).
    /// Unless given, 2026-07-28 is tried first and the handshake era is fallen back to.
    #[arg(
        long,
        value_name = "VERSION",
        requires = "server",
        value_parser = super::mount_choices::ERAS
    )]
    server_era: Option<String>,
    /// A file whose content (trimmed) is the bearer token the server over HTTP takes; else
    /// the environment variable MCP_SERVER_TOKEN holds it, if set.
    #[arg(long, value_name = "PATH", requires = "server")]
    server_token_file: Option<PathBuf>,
    /// Authorize at the server over HTTP with OAuth: a person signs in in the browser (the
    /// page's address is printed), once; see --oauth-credentials-file.
    #[arg(long, requires = "server", conflicts_with = "server_token_file")]
    server_oauth: bool,
    // Where OAuth credentials are kept is one flag for `--server` and `--mount` alike: it
    // comes with the mounts' flags, which every command taking `--server` also takes.
}

/// How each mount is authorized at its server.
#[derive(clap::Args, Debug, Default)]
pub(super) struct MountAccess {
    /// A file whose content (trimmed) is the bearer token the mount PREFIX's server over
    /// HTTP takes: PREFIX=PATH (repeatable; for mounts from the mounts file too).
    #[arg(long = "mount-token-file", value_name = "PREFIX=PATH")]
    token_files: Vec<String>,
    /// Authorize at the mount PREFIX's server over HTTP with OAuth (repeatable): with the
    /// credentials kept by an earlier sign-in (`call --server URL --server-oauth`), else a
    /// person signs in in the browser; see --oauth-credentials-file.
    #[arg(long = "mount-oauth", value_name = "PREFIX")]
    oauth: Vec<String>,
    #[command(flatten)]
    kept: KeptCredentials,
}

/// Where OAuth credentials are kept between runs.
#[derive(clap::Args, Debug, Default)]
struct KeptCredentials {
    /// The file OAuth registrations and tokens are kept in between runs, created readable
    /// by its owner alone (default: tool-runtime/oauth.json in the user's configuration
    /// directory). With MCP_OAUTH_CLIENT_ID and MCP_OAUTH_CLIENT_SECRET set, the client
    /// authorizes as that client (client credentials) instead of through a person.
    #[arg(long, value_name = "PATH", env = "MCP_OAUTH_CREDENTIALS_FILE")]
    oauth_credentials_file: Option<PathBuf>,
}

/// How one server is authorized.
#[cfg(feature = "client")]
enum Access {
    TokenFile(PathBuf),
    Token(String),
    OAuth,
}

impl MountAccess {
    /// The file OAuth credentials are kept in, when given.
    #[cfg(feature = "client")]
    pub(super) fn kept_credentials(&self) -> Option<&Path> {
        self.kept.oauth_credentials_file.as_deref()
    }

    /// The first of these flags given, if any.
    pub(super) fn given_flag(&self) -> Option<&'static str> {
        if !self.token_files.is_empty() {
            Some("--mount-token-file")
        } else if !self.oauth.is_empty() {
            Some("--mount-oauth")
        } else {
            None
        }
    }

    /// The access given for each mount, by its prefix.
    #[cfg(feature = "client")]
    pub(super) fn by_prefix(&self) -> Result<MountsAccess, String> {
        let mut given = std::collections::HashMap::new();
        let mut add = |prefix: &str, access: Access, flag: &'static str| {
            let prefix = prefix.trim().to_owned();
            match given.insert(prefix.clone(), (access, flag)) {
                None => Ok(()),
                Some(_) => Err(format!(
                    "the mount `{prefix}` is given more than one way to authorize (by {flag} \
                     and another flag); give it one"
                )),
            }
        };
        for entry in &self.token_files {
            let (prefix, path) = entry
                .split_once('=')
                .ok_or_else(|| format!("--mount-token-file {entry:?} is not PREFIX=PATH"))?;
            add(
                prefix,
                Access::TokenFile(PathBuf::from(path)),
                "--mount-token-file",
            )?;
        }
        for prefix in &self.oauth {
            add(prefix, Access::OAuth, "--mount-oauth")?;
        }
        Ok(MountsAccess {
            given,
            kept: self.kept.oauth_credentials_file.clone(),
        })
    }
}

/// The access given for the mounts, taken mount by mount.
#[cfg(feature = "client")]
pub(super) struct MountsAccess {
    given: std::collections::HashMap<String, (Access, &'static str)>,
    kept: Option<PathBuf>,
}

#[cfg(feature = "client")]
impl MountsAccess {
    /// `mount` with the access given for its prefix, if any.
    pub(super) fn apply(
        &mut self,
        mount: crate::mount::Mount,
    ) -> Result<crate::mount::Mount, String> {
        match self.given.remove(mount.prefix()) {
            Some((access, flag)) => authorized(mount, access, flag, self.kept.as_deref()),
            None => Ok(mount),
        }
    }

    /// Refuses access given for a mount that is not.
    pub(super) fn all_taken(self) -> Result<(), String> {
        match self.given.into_iter().next() {
            None => Ok(()),
            Some((prefix, (_, flag))) => Err(format!(
                "{flag} names the mount `{prefix}`, which is not given; give it with --mount \
                 {prefix}=URL"
            )),
        }
    }
}

impl ServerAccess {
    /// `mount` (the server `--server` names) with the access given, OAuth credentials kept
    /// in `kept`.
    #[cfg(feature = "client")]
    pub(super) fn apply(
        &self,
        mount: crate::mount::Mount,
        kept: Option<&Path>,
    ) -> Result<crate::mount::Mount, String> {
        let access = if self.server_oauth {
            Some((Access::OAuth, "--server-oauth"))
        } else if let Some(file) = &self.server_token_file {
            Some((Access::TokenFile(file.clone()), "--server-token-file"))
        } else if mount.target().is_http() {
            // The variable may be set for other commands of the same shell: a server
            // started over stdio is not refused for it, only for the flag.
            let token = super::secrets::from_variable(SERVER_TOKEN_VARIABLE)?;
            token.map(|token| (Access::Token(token), SERVER_TOKEN_VARIABLE))
        } else {
            None
        };
        let mount = match &self.server_era {
            Some(era) => mount.handshake_era(era == super::mount_choices::ERAS[0]),
            None => mount,
        };
        match access {
            Some((access, flag)) => authorized(mount, access, flag, kept),
            None => Ok(mount),
        }
    }
}

/// `mount` authorized at its server as `access` says (given by `flag`), OAuth credentials
/// kept in `kept`. Only a server over HTTP takes these (a process started over stdio
/// inherits this one's environment: its secrets go there), and none goes over plain HTTP
/// elsewhere than this machine, where anyone on the way could read it.
#[cfg(feature = "client")]
fn authorized(
    mount: crate::mount::Mount,
    access: Access,
    flag: &str,
    kept: Option<&Path>,
) -> Result<crate::mount::Mount, String> {
    let target = mount.target();
    if !target.is_http() {
        return Err(format!(
            "{flag} is for a server over HTTP, and `{}` is started over stdio (a process \
             started over stdio inherits this one's environment; give it its secrets there)",
            target.shown()
        ));
    }
    if let Some(host) = target.plain_http_host() {
        return Err(format!(
            "{flag} would send a credential over plain HTTP to {host}, where anyone on the \
             way can read it: reach the server over https://"
        ));
    }
    let bearer = crate::client::auth::BearerToken::new;
    Ok(match access {
        Access::TokenFile(path) => mount.credentials(bearer(super::secrets::from_file(&path)?)),
        Access::Token(token) => mount.credentials(bearer(token)),
        Access::OAuth => mount.credentials(oauth(kept)?),
    })
}

/// OAuth credentials for the command line, kept in `kept` (else the default file): a
/// person signs in through the browser, unless `MCP_OAUTH_CLIENT_ID` and
/// `MCP_OAUTH_CLIENT_SECRET` name a client of the authorization server's, which then
/// authorizes as itself (client credentials).
#[cfg(feature = "client")]
fn oauth(kept: Option<&Path>) -> Result<crate::client::auth::OAuth, String> {
    let file = match kept {
        Some(path) => path.to_owned(),
        None => default_kept_file()?,
    };
    let variable = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let builder = crate::client::auth::OAuth::builder().keep_in(file);
    match (
        variable("MCP_OAUTH_CLIENT_ID"),
        variable("MCP_OAUTH_CLIENT_SECRET"),
    ) {
        (Some(id), Some(secret)) => Ok(builder
            .client_id(id)
            .client_secret(secret)
            .client_credentials()
            .build()),
        (Some(id), None) => Ok(builder.client_id(id).build()),
        (None, Some(_)) => Err(
            "MCP_OAUTH_CLIENT_SECRET is set without MCP_OAUTH_CLIENT_ID: set both to authorize \
             as a client of your own, or neither to have a person sign in"
                .to_owned(),
        ),
        (None, None) => Ok(builder.build()),
    }
}

/// `tool-runtime/oauth.json` in the user's configuration directory: `%APPDATA%` on
/// Windows, else `$XDG_CONFIG_HOME`, else `~/.config`.
#[cfg(feature = "client")]
fn default_kept_file() -> Result<PathBuf, String> {
    let variable = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    let windows = cfg!(windows).then(|| variable("APPDATA")).flatten();
    let config = windows
        .map(PathBuf::from)
        .or_else(|| variable("XDG_CONFIG_HOME").map(PathBuf::from))
        .or_else(|| variable("HOME").map(|home| Path::new(&home).join(".config")))
        .ok_or(
            "no configuration directory is known (neither XDG_CONFIG_HOME nor HOME is set): \
             name the file OAuth credentials are kept in with --oauth-credentials-file",
        )?;
    Ok(config.join("tool-runtime").join("oauth.json"))
}
