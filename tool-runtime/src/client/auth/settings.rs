//! How [`OAuth`] credentials are configured: how the client identifies itself, which grant
//! gets its tokens, which scopes it always asks for, and where it keeps what it got.

use super::loopback::Authorizer;
use super::OAuth;
use std::sync::Arc;

/// The algorithm of a private key that signs the client's assertions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyAlgorithm {
    /// ECDSA on P-256 with SHA-256 (an EC key).
    Es256,
    /// ECDSA on P-384 with SHA-384 (an EC key).
    Es384,
    /// RSASSA-PKCS1-v1_5 with SHA-256 (an RSA key).
    Rs256,
    /// Ed25519 (an Ed25519 key).
    EdDsa,
}

impl KeyAlgorithm {
    pub(crate) fn jwt(self) -> jsonwebtoken::Algorithm {
        match self {
            KeyAlgorithm::Es256 => jsonwebtoken::Algorithm::ES256,
            KeyAlgorithm::Es384 => jsonwebtoken::Algorithm::ES384,
            KeyAlgorithm::Rs256 => jsonwebtoken::Algorithm::RS256,
            KeyAlgorithm::EdDsa => jsonwebtoken::Algorithm::EdDSA,
        }
    }
}

/// How the client gets its tokens.
#[derive(Clone)]
pub(super) enum Grant {
    /// A person authorizes it, through an [`Authorizer`].
    AuthorizationCode(Arc<dyn Authorizer>),
    /// It is its own party (a service).
    ClientCredentials,
    /// A JWT vouches for it (a workload's identity token).
    JwtBearer(String),
    /// A person's identity provider vouches for them to the authorization server.
    Enterprise {
        endpoint: String,
        client_id: Option<String>,
        id_token: String,
    },
}

/// How [`OAuth`] credentials identify the client and get tokens. Made by
/// [`OAuth::builder`].
#[derive(Clone)]
pub struct OAuthBuilder {
    pub(super) client_name: String,
    pub(super) client_id: Option<String>,
    pub(super) client_secret: Option<String>,
    pub(super) private_key: Option<(String, KeyAlgorithm)>,
    pub(super) metadata_document: Option<String>,
    pub(super) scopes: Vec<String>,
    grant: Option<Grant>,
    pub(super) kept: Option<std::path::PathBuf>,
}

impl OAuth {
    /// Credentials to configure; by default a person authorizes through [`Loopback`], and
    /// the client registers itself where it can.
    ///
    /// [`Loopback`]: super::Loopback
    pub fn builder() -> OAuthBuilder {
        OAuthBuilder {
            client_name: "tool-runtime MCP client".to_owned(),
            client_id: None,
            client_secret: None,
            private_key: None,
            metadata_document: None,
            scopes: Vec::new(),
            grant: None,
            kept: None,
        }
    }
}

impl OAuthBuilder {
    /// The name the client registers under (shown to the person who authorizes it).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// A client id registered beforehand with the authorization server.
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self
    }

    /// The secret of that client id.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// Authenticate with a JWT signed by this private key (PEM; `private_key_jwt`) instead
    /// of a secret.
    pub fn private_key_jwt(mut self, pem: impl Into<String>, algorithm: KeyAlgorithm) -> Self {
        self.private_key = Some((pem.into(), algorithm));
        self
    }

    /// The URL of the client's metadata document, used as its client id with authorization
    /// servers that accept one (no registration needed).
    pub fn client_metadata_document(mut self, url: impl Into<String>) -> Self {
        self.metadata_document = Some(url.into());
        self
    }

    /// Scopes always asked for, beside those the server names.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A person authorizes the client through `authorizer` (authorization code with PKCE).
    pub fn authorization_code(mut self, authorizer: impl Authorizer + 'static) -> Self {
        self.grant = Some(Grant::AuthorizationCode(Arc::new(authorizer)));
        self
    }

    /// The client authorizes itself with its id and secret or key (client credentials).
    pub fn client_credentials(mut self) -> Self {
        self.grant = Some(Grant::ClientCredentials);
        self
    }

    /// The client gets its tokens for `assertion`, a JWT its platform issued to vouch for
    /// it (a workload's identity token; RFC 7523's JWT bearer grant).
    pub fn jwt_bearer(mut self, assertion: impl Into<String>) -> Self {
        self.grant = Some(Grant::JwtBearer(assertion.into()));
        self
    }

    /// A person signed in at their organisation's identity provider: its ID token
    /// (`id_token`) is exchanged at the provider's token endpoint (`endpoint`, as
    /// `client_id` there) for an identity assertion, and that for a token at the MCP
    /// server's authorization server (enterprise-managed authorization).
    pub fn enterprise_identity(
        mut self,
        endpoint: impl Into<String>,
        client_id: Option<String>,
        id_token: impl Into<String>,
    ) -> Self {
        self.grant = Some(Grant::Enterprise {
            endpoint: endpoint.into(),
            client_id,
            id_token: id_token.into(),
        });
        self
    }

    /// Keeps the client's registrations (by authorization server) and its tokens (by MCP
    /// endpoint) in the file at `path`: a program run again (a command line, say) uses them
    /// rather than registering again and asking the person to sign in again, for as long as
    /// its tokens are good or can be refreshed (a token another run refreshed meanwhile is
    /// taken up rather than refreshed twice).
    ///
    /// What is used again must still fit: a token only at the endpoint it was had for and
    /// by the grant configured now (as the configured client, if one is); a registration
    /// only at the authorization server the client looked up, with the same token endpoint
    /// and grant, and a person sent back where it was registered to send them (on a
    /// loopback address, any port). Not kept: a token bound to the client's proof key
    /// (DPoP; the key lives in memory only), tokens of a JWT assertion (given anew each
    /// run, it may name someone else), and the secret of a configured client.
    ///
    /// On Unix the file is created readable by its owner alone, and a file others can read
    /// is refused. A file that cannot be read fails the requests that need it, naming it,
    /// and is never written over. Programs that keep credentials in one file take turns at
    /// writing it (a lock on `path` with `.lock` appended, left in place), each reading it
    /// anew, so what they keep for different servers stays; for one server, the token kept
    /// last is the one taken up. A write waits on a thread of its own for another program's
    /// to end, five seconds at most, and then gives up (the token is still used in this
    /// run, only not kept; a warning says so).
    ///
    /// ```no_run
    /// use tool_runtime::client::auth::OAuth;
    /// let home = std::env::var("HOME").unwrap();
    /// let oauth = OAuth::builder()
    ///     .keep_in(format!("{home}/.config/my-agent/oauth.json"))
    ///     .build();
    /// # let _ = oauth;
    /// ```
    pub fn keep_in(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.kept = Some(path.into());
        self
    }

    /// The credentials.
    pub fn build(mut self) -> OAuth {
        if self.grant.is_none() {
            self.grant = Some(Grant::AuthorizationCode(Arc::new(super::Loopback::new())));
        }
        OAuth::with_settings(self)
    }

    pub(super) fn grant(&self) -> Grant {
        self.grant.clone().unwrap_or(Grant::ClientCredentials)
    }
}

impl Grant {
    /// The grant's name, for a token or registration kept between runs; `None` for a
    /// grant whose assertion says who the client is (given anew each run, it may name
    /// someone else), whose tokens are not kept.
    pub(super) fn kept_as(&self) -> Option<&'static str> {
        match self {
            Grant::AuthorizationCode(_) => Some("authorization_code"),
            Grant::ClientCredentials => Some("client_credentials"),
            Grant::JwtBearer(_) | Grant::Enterprise { .. } => None,
        }
    }
}
