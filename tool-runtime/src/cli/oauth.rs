//! `serve`'s OAuth flags: the server as an OAuth 2.1 resource server over HTTP.

use crate::mcp::ServerOptions;
use crate::transport::http::{Jwks, OAuth};
use std::path::PathBuf;

/// Check access tokens as an OAuth 2.1 resource server (with --http).
#[derive(clap::Args, Debug)]
pub(super) struct OAuthFlags {
    /// Check OAuth access tokens: this server's canonical URI, which tokens must name as
    /// their audience, e.g. https://tools.example.com/mcp. Needs --oauth-issuer and
    /// --oauth-jwks-file.
    #[arg(
        long,
        value_name = "URI",
        env = "MCP_OAUTH_RESOURCE",
        requires_all = ["http", "oauth_issuer", "oauth_jwks_file"]
    )]
    oauth_resource: Option<String>,
    /// The authorization server whose tokens are accepted (its issuer URI). A service that
    /// trusts several, each with its own keys, says so in code (`OAuth::authorization_server`).
    #[arg(
        long,
        value_name = "URI",
        env = "MCP_OAUTH_ISSUER",
        requires = "oauth_resource"
    )]
    oauth_issuer: Option<String>,
    /// The authorization server's signing keys, a JWKS document (read again when a token
    /// names a key it does not hold).
    #[arg(
        long,
        value_name = "PATH",
        env = "MCP_OAUTH_JWKS_FILE",
        requires = "oauth_resource"
    )]
    oauth_jwks_file: Option<PathBuf>,
    /// A scope that grants others too, as BROADER=NARROWER[,NARROWER...], e.g.
    /// files:admin=files:read,files:write (repeatable).
    #[arg(long, value_name = "RULE", requires = "oauth_resource")]
    oauth_scope_implies: Vec<String>,
    /// List to each client only the tools its token's scopes permit (by default every
    /// tool is listed, and a call without the scopes is refused with 403).
    #[arg(long, requires = "oauth_resource")]
    list_permitted_tools: bool,
}

impl OAuthFlags {
    /// Whether OAuth is asked for (`--oauth-resource`).
    pub(super) fn configured(&self) -> bool {
        self.oauth_resource.is_some()
    }

    /// `options` with what the flags change in them: lists cut to each token's scopes when
    /// `--list-permitted-tools` is given (and as the program set them otherwise).
    pub(super) fn apply(&self, options: ServerOptions) -> ServerOptions {
        match self.list_permitted_tools {
            true => options.list_only_permitted_tools(true),
            false => options,
        }
    }

    /// The resource server the flags describe; `None` without `--oauth-resource`.
    pub(super) fn settings(&self) -> Result<Option<OAuth>, String> {
        let (Some(resource), Some(issuer), Some(jwks_file)) = (
            &self.oauth_resource,
            &self.oauth_issuer,
            &self.oauth_jwks_file,
        ) else {
            return Ok(None);
        };
        let keys = Jwks::from_file(jwks_file).map_err(|error| error.to_string())?;
        let mut oauth = OAuth::new(resource, issuer, keys).map_err(|error| error.to_string())?;
        for rule in &self.oauth_scope_implies {
            let (broader, narrower) = rule.split_once('=').ok_or_else(|| {
                format!(
                    "--oauth-scope-implies {rule:?} is not BROADER=NARROWER[,NARROWER...], e.g. \
                    files:admin=files:read"
                )
            })?;
            oauth = oauth
                .scope_implies(broader.trim(), narrower.split(',').map(str::trim))
                .map_err(|error| format!("--oauth-scope-implies {rule:?}: {error}"))?;
        }
        Ok(Some(oauth))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[arg(long)]
        http: Option<String>,
        #[command(flatten)]
        oauth: OAuthFlags,
    }

    fn flags(args: &[&str]) -> OAuthFlags {
        Flags::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
            .unwrap()
            .oauth
    }

    #[test]
    fn the_list_flag_turns_cut_lists_on_and_never_off() {
        let cut = |options: ServerOptions| options.list_only_permitted_tools;
        let on = ServerOptions::default().list_only_permitted_tools(true);
        // Without the flag, what the program set stands.
        assert!(cut(flags(&[]).apply(on.clone())));
        assert!(!cut(flags(&[]).apply(ServerOptions::default())));
        let with_flag = flags(&[
            "--http",
            "127.0.0.1:0",
            "--oauth-resource",
            "https://tools.example.com/mcp",
            "--oauth-issuer",
            "https://auth.example.com",
            "--oauth-jwks-file",
            "keys.json",
            "--list-permitted-tools",
        ]);
        assert!(with_flag.configured() && !flags(&[]).configured());
        assert!(cut(with_flag.apply(ServerOptions::default())));
    }
}
