//! `serve`'s OAuth flags: the server as an OAuth 2.1 resource server over HTTP.

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
    /// Whether lists are cut to what each token permits.
    pub(super) fn list_permitted_tools(&self) -> bool {
        self.list_permitted_tools
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
                    "--oauth-scope-implies {rule:?} is not BROADER=NARROWER[,NARROWER...], e.g. files:admin=files:read"
                )
            })?;
            oauth = oauth
                .scope_implies(broader.trim(), narrower.split(',').map(str::trim))
                .map_err(|error| format!("--oauth-scope-implies {rule:?}: {error}"))?;
        }
        Ok(Some(oauth))
    }
}
