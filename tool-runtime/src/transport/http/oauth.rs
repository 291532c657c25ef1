//! The server as an OAuth 2.1 resource server: access tokens (JWTs) checked against the
//! authorization server's published keys, the protected-resource metadata (RFC 9728)
//! that tells a client where to get a token, and the `WWW-Authenticate` challenges of 401
//! and 403 answers (RFC 6750).
//!
//! The keys are read from a JWKS document the program gives (a string or a file). The
//! runtime fetches nothing over the network itself, so it carries no HTTP client or TLS
//! stack: a service whose authorization server rotates keys refreshes them with
//! [`Jwks::replace`] from a task of its own, or lets a file-backed set re-read its file.

use crate::call::caller::Caller;
use jsonwebtoken::jwk::{JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// Where RFC 9728 puts a resource's metadata: at this path on the resource's host, followed
/// by the resource's own path.
pub(super) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// How often a set read from a file may read it again to find a key a token names.
const REREAD_AT_MOST_EVERY: Duration = Duration::from_secs(10);

/// Why OAuth settings, or a key set, cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthError {
    /// The resource (this server's URI) or an authorization server's is not an absolute
    /// `https://` URI (`http://` is accepted for loopback hosts) without a fragment.
    InvalidUri {
        /// What the URI names: `resource` or `authorization server`.
        what: &'static str,
        /// The URI given.
        uri: String,
        /// Why.
        reason: String,
    },
    /// The key set cannot be read or holds no key that can check a signature.
    InvalidKeys {
        /// Where the keys came from (a file's path, or "the JWKS document").
        source: String,
        /// Why.
        reason: String,
    },
    /// An implied scope ([`OAuth::scope_implies`]) is not a valid OAuth scope.
    InvalidScope {
        /// The scope given.
        scope: String,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for OAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OAuthError::InvalidUri { what, uri, reason } => {
                write!(f, "the {what} URI `{uri}` cannot be used: {reason}")
            }
            OAuthError::InvalidKeys { source, reason } => {
                write!(f, "the keys in {source} cannot be used: {reason}")
            }
            OAuthError::InvalidScope { scope, reason } => {
                write!(f, "{scope:?} is not a valid scope: {reason}")
            }
        }
    }
}

impl std::error::Error for OAuthError {}

/// The public keys tokens are signed with (a JSON Web Key Set, RFC 7517), as the
/// authorization server publishes them at its `jwks_uri`. Only keys that check signatures
/// with a public key are kept (RSA, EC P-256/P-384, Ed25519); shared secrets and
/// encryption keys are left out.
///
/// Cloning is cheap and every clone sees [`replace`](Jwks::replace)d keys.
///
/// ```
/// use tool_runtime::transport::http::Jwks;
///
/// let keys = Jwks::from_json(r#"{"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "2026-11",
///     "alg": "EdDSA", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#).unwrap();
/// assert_eq!(keys.key_ids(), ["2026-11"]);
///
/// // A refresh task of the program's own swaps in the new set when keys rotate.
/// keys.replace(r#"{"keys": []}"#).unwrap_err();
/// assert_eq!(keys.key_ids(), ["2026-11"]);
/// ```
#[derive(Clone)]
pub struct Jwks {
    shared: Arc<KeySource>,
}

struct KeySource {
    keys: RwLock<Arc<[Key]>>,
    /// The file the keys were read from, and when it was last read again for a key it
    /// lacked (never, at first: the first unknown key is looked for at once).
    file: Option<(PathBuf, Mutex<Option<Instant>>)>,
}

/// One usable key.
struct Key {
    id: Option<String>,
    /// The algorithm the key is published for, when the set says.
    algorithm: Option<Algorithm>,
    family: AlgorithmFamily,
    key: DecodingKey,
}

impl fmt::Debug for Jwks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Jwks")
            .field("key_ids", &self.key_ids())
            .field("file", &self.shared.file.as_ref().map(|(path, _)| path))
            .finish()
    }
}

impl Jwks {
    /// The keys of a JWKS document (`{"keys": [...]}`).
    pub fn from_json(json: &str) -> Result<Jwks, OAuthError> {
        Ok(Jwks {
            shared: Arc::new(KeySource {
                keys: RwLock::new(parse_keys(json, "the JWKS document")?),
                file: None,
            }),
        })
    }

    /// The keys of the JWKS document in the file at `path`. When a token names a key the
    /// set does not hold, the file is read again (at most once every 10 seconds), so
    /// rotated keys written to the file are picked up without a restart.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Jwks, OAuthError> {
        let path = path.as_ref().to_owned();
        let keys = read_key_file(&path)?;
        Ok(Jwks {
            shared: Arc::new(KeySource {
                keys: RwLock::new(keys),
                file: Some((path, Mutex::new(None))),
            }),
        })
    }

    /// Replaces the keys with those of a new JWKS document; on an error the keys stay as
    /// they were.
    pub fn replace(&self, json: &str) -> Result<(), OAuthError> {
        let keys = parse_keys(json, "the JWKS document")?;
        *self.shared.write() = keys;
        Ok(())
    }

    /// The ids (`kid`) of the keys held, in the set's order (keys without one left out).
    pub fn key_ids(&self) -> Vec<String> {
        self.current()
            .iter()
            .filter_map(|key| key.id.clone())
            .collect()
    }

    fn current(&self) -> Arc<[Key]> {
        Arc::clone(&crate::sync::read(&self.shared.keys))
    }

    /// Reads a file-backed set again, unless it was read within the last few seconds:
    /// whether it was read.
    fn reread(&self) -> bool {
        let Some((path, last_read)) = &self.shared.file else {
            return false;
        };
        {
            let mut last = crate::sync::lock(last_read);
            if last.is_some_and(|last| last.elapsed() < REREAD_AT_MOST_EVERY) {
                return false;
            }
            *last = Some(Instant::now());
        }
        match read_key_file(path) {
            Ok(keys) => {
                *self.shared.write() = keys;
                true
            }
            Err(error) => {
                tracing::warn!(
                    %error,
                    "cannot read the token signing keys again; keeping the old ones"
                );
                false
            }
        }
    }
}

impl KeySource {
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Arc<[Key]>> {
        crate::sync::write(&self.keys)
    }
}

fn read_key_file(path: &Path) -> Result<Arc<[Key]>, OAuthError> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| OAuthError::InvalidKeys {
        source: source.clone(),
        reason: error.to_string(),
    })?;
    parse_keys(&text, &source)
}

/// The usable keys of a JWKS document; an error when there is none.
fn parse_keys(json: &str, source: &str) -> Result<Arc<[Key]>, OAuthError> {
    let invalid = |reason: String| OAuthError::InvalidKeys {
        source: source.to_owned(),
        reason,
    };
    let set: JwkSet = serde_json::from_str(json)
        .map_err(|error| invalid(format!("it is not a JWKS document: {error}")))?;
    let mut keys = Vec::new();
    for jwk in &set.keys {
        let id = jwk.common.key_id.clone();
        let shown = id.as_deref().unwrap_or("(no kid)");
        if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
            continue;
        }
        let algorithm = match jwk.common.key_algorithm {
            Some(named) => match named.to_string().parse::<Algorithm>() {
                Ok(algorithm) => Some(algorithm),
                // An encryption algorithm: not a key for signatures.
                Err(_) => continue,
            },
            None => None,
        };
        let key =
            DecodingKey::from_jwk(jwk).map_err(|error| invalid(format!("key {shown}: {error}")))?;
        let family = key.family();
        if matches!(family, AlgorithmFamily::Hmac) {
            // A shared secret would let anyone holding it mint tokens; the keys of an
            // authorization server are public ones.
            tracing::warn!(
                key = shown,
                "a shared-secret key in the token keys is ignored; only public keys check tokens"
            );
            continue;
        }
        keys.push(Key {
            id,
            algorithm,
            family,
            key,
        });
    }
    if keys.is_empty() {
        return Err(invalid(
            "it holds no public key for signatures (RSA, EC or Ed25519)".to_owned(),
        ));
    }
    Ok(keys.into())
}

/// The server as an OAuth 2.1 resource server, as the MCP authorization rules ask: every
/// request presents an access token (a JWT) issued for this server by a trusted
/// authorization server; a request without one, or with one that does not check out, is
/// answered 401 with a challenge that points to the metadata at
/// `/.well-known/oauth-protected-resource`, where a client finds the authorization server.
///
/// A token is accepted when its signature checks against [`Jwks`], its issuer (`iss`) is
/// one of the authorization servers, its audience (`aud`) names [the
/// resource](OAuth::resource), and it is within its lifetime (`exp`, `nbf`, with a minute
/// of leeway for clock skew). Its subject (`sub`, else `client_id`) becomes the caller's
/// [subject](crate::context::Caller::subject), which rate limits and budgets are kept by,
/// and its scopes (`scope`, or `scp`) decide which tools it may call: a tool that requires
/// scopes the token lacks is answered 403 `insufficient_scope`, naming them.
///
/// ```
/// use tool_runtime::transport::http::{HttpOptions, Jwks, OAuth};
///
/// let keys = Jwks::from_json(r#"{"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1",
///     "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#).unwrap();
/// let oauth = OAuth::new("https://tools.example.com/mcp", "https://auth.example.com", keys)
///     .unwrap()
///     .scope_implies("files:admin", ["files:read", "files:write"])
///     .unwrap();
/// assert_eq!(
///     oauth.metadata_url(),
///     "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// let options = HttpOptions::default().oauth(oauth);
/// # let _ = options;
///
/// // The resource must be a URI clients can reach safely.
/// assert!(OAuth::new("tools.example.com", "https://auth.example.com",
///     Jwks::from_json(r#"{"keys": [{"kty": "OKP", "crv": "Ed25519",
///     "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#).unwrap()).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct OAuth {
    resource: String,
    /// Where the metadata is, worked out once from the resource (every challenge names it).
    metadata_url: String,
    /// Each trusted issuer with the keys it signs with: a key checks only its own
    /// issuer's tokens.
    authorization_servers: Vec<(String, Jwks)>,
    scopes_supported: Option<Vec<String>>,
    /// Broader scopes and the narrower ones each grants too.
    implied: Vec<(String, Vec<String>)>,
    leeway: Duration,
}

impl OAuth {
    /// This server as the resource `resource` (its canonical URI, the audience its tokens
    /// must name, e.g. `https://tools.example.com/mcp`), accepting tokens that
    /// `authorization_server` (an issuer URI) signs with one of `keys`.
    pub fn new(
        resource: impl Into<String>,
        authorization_server: impl Into<String>,
        keys: Jwks,
    ) -> Result<OAuth, OAuthError> {
        let resource = checked_uri("resource", resource.into())?;
        let issuer = checked_uri("authorization server", authorization_server.into())?;
        let (origin, path) = split_uri(&resource);
        Ok(OAuth {
            metadata_url: format!("{origin}{METADATA_PATH}{path}"),
            resource,
            authorization_servers: vec![(issuer, keys)],
            scopes_supported: None,
            implied: Vec::new(),
            leeway: Duration::from_secs(60),
        })
    }

    /// Trusts tokens of another authorization server too (listed after the first), signed
    /// with its own `keys`. With several issuers a caller's subject is qualified by its
    /// issuer (`https://auth.example.com#alice`), so two servers' users never share an
    /// identity, a session or a budget.
    pub fn authorization_server(
        mut self,
        issuer: impl Into<String>,
        keys: Jwks,
    ) -> Result<Self, OAuthError> {
        let issuer = checked_uri("authorization server", issuer.into())?;
        match self
            .authorization_servers
            .iter_mut()
            .find(|(known, _)| *known == issuer)
        {
            Some((_, known_keys)) => *known_keys = keys,
            None => self.authorization_servers.push((issuer, keys)),
        }
        Ok(self)
    }

    /// The scopes the metadata lists as `scopes_supported` (and a 401 challenge asks for):
    /// what a client should ask for at first. By default, every scope some tool requires,
    /// so one authorization covers every tool the user allows.
    pub fn scopes_supported(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// A token granting `broader` grants each of `narrower` too (scope hierarchies, as
    /// `files:admin` granting `files:read`); chains are followed.
    pub fn scope_implies(
        mut self,
        broader: impl Into<String>,
        narrower: impl IntoIterator<Item = impl Into<String>>,
    ) -> Result<Self, OAuthError> {
        let broader = broader.into();
        let narrower: Vec<String> = narrower.into_iter().map(Into::into).collect();
        for scope in std::iter::once(&broader).chain(&narrower) {
            tool_rules::check_scope(scope).map_err(|reason| OAuthError::InvalidScope {
                scope: scope.clone(),
                reason,
            })?;
        }
        self.implied.push((broader, narrower));
        Ok(self)
    }

    /// How far a token's `exp` and `nbf` may be off, for clocks that disagree (a minute by
    /// default).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The resource: this server's canonical URI, the audience tokens must name.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where the protected-resource metadata is: the well-known path on the resource's
    /// host, followed by the resource's path (RFC 9728, section 3.1).
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The paths the router serves the metadata at: the well-known path with the
    /// resource's path after it, and the bare well-known path that clients try next.
    pub(super) fn metadata_routes(&self) -> Vec<String> {
        let (_, path) = split_uri(&self.resource);
        let mut routes = vec![METADATA_PATH.to_owned()];
        if !path.is_empty() {
            routes.push(format!("{METADATA_PATH}{path}"));
        }
        routes
    }

    /// The protected-resource metadata document; `tool_scopes` are the scopes the server's
    /// tools require, listed when no `scopes_supported` was given.
    pub(super) fn metadata(
        &self,
        tool_scopes: impl FnOnce() -> BTreeSet<String>,
        name: &str,
    ) -> serde_json::Value {
        let issuers: Vec<&str> = self
            .authorization_servers
            .iter()
            .map(|(issuer, _)| issuer.as_str())
            .collect();
        let mut document = serde_json::json!({
            "resource": self.resource,
            "authorization_servers": issuers,
            "bearer_methods_supported": ["header"],
            "resource_name": name,
        });
        let scopes = self.advertised_scopes(tool_scopes);
        if !scopes.is_empty() {
            document["scopes_supported"] = scopes.into();
        }
        document
    }

    /// The scopes to advertise: those set with [`scopes_supported`](Self::scopes_supported),
    /// else every scope some tool requires (`tool_scopes`, worked out only then).
    fn advertised_scopes(&self, tool_scopes: impl FnOnce() -> BTreeSet<String>) -> Vec<String> {
        match &self.scopes_supported {
            Some(scopes) => scopes.clone(),
            None => tool_scopes().into_iter().collect(),
        }
    }

    /// The challenge of a 401: where the metadata is, the scopes to ask for, and what was
    /// wrong with the token when there was one (RFC 6750, section 3).
    pub(super) fn unauthorized_challenge(
        &self,
        problem: Option<&TokenProblem>,
        tool_scopes: impl FnOnce() -> BTreeSet<String>,
    ) -> String {
        let mut challenge = String::from("Bearer");
        let mut params: Vec<(&str, String)> = Vec::new();
        if let Some(problem) = problem {
            let code = match problem {
                TokenProblem::NotBearer => "invalid_request",
                _ => "invalid_token",
            };
            params.push(("error", code.to_owned()));
            params.push(("error_description", problem.to_string()));
        }
        params.push(("resource_metadata", self.metadata_url.clone()));
        let scopes = self.advertised_scopes(tool_scopes);
        if !scopes.is_empty() {
            params.push(("scope", scopes.join(" ")));
        }
        push_params(&mut challenge, &params);
        challenge
    }

    /// The challenge of a 403: the scopes the operation requires, all of them.
    pub(super) fn insufficient_scope_challenge(
        &self,
        scopes: &[String],
        description: &str,
    ) -> String {
        let mut challenge = String::from("Bearer");
        let params = [
            ("error", "insufficient_scope".to_owned()),
            ("scope", scopes.join(" ")),
            ("resource_metadata", self.metadata_url.clone()),
            ("error_description", description.to_owned()),
        ];
        push_params(&mut challenge, &params);
        challenge
    }

    /// Checks the `Authorization` header's bearer token; the caller it authenticates.
    pub(super) fn authenticate(
        &self,
        authorization: Option<&str>,
        caller: Caller,
    ) -> Result<Caller, Option<TokenProblem>> {
        let token = match authorization {
            None => return Err(None),
            Some(value) => super::bearer(value).ok_or(Some(TokenProblem::NotBearer))?,
        };
        let (issuer, claims) = self.verify(token).map_err(Some)?;
        // A client's own token (no `sub`) is told apart from a user of the same name.
        let subject = match (claims.sub, claims.client_id) {
            (Some(subject), _) => subject,
            (None, Some(client)) => format!("client:{client}"),
            (None, None) => return Err(Some(TokenProblem::NoSubject)),
        };
        let subject = match self.authorization_servers.len() {
            1 => subject,
            _ => format!("{issuer}#{subject}"),
        };
        // `scope` when the token has it, else `scp`, a string or a list.
        let mut scopes: Vec<String> = match claims.scope.map(ScopeList::One).or(claims.scp) {
            Some(ScopeList::One(scope)) => scope.split_whitespace().map(str::to_owned).collect(),
            Some(ScopeList::Many(scopes)) => scopes,
            None => Vec::new(),
        };
        self.add_implied(&mut scopes);
        Ok(caller.with_subject(subject, scopes))
    }

    /// Adds the scopes the granted ones imply, following chains.
    fn add_implied(&self, scopes: &mut Vec<String>) {
        let mut index = 0;
        while index < scopes.len() {
            for (broader, narrower) in &self.implied {
                if *broader == scopes[index] {
                    for scope in narrower {
                        if !scopes.contains(scope) {
                            scopes.push(scope.clone());
                        }
                    }
                }
            }
            index += 1;
        }
    }

    /// The token's issuer and claims, once its signature checks against that issuer's keys
    /// and its claims hold.
    fn verify(&self, token: &str) -> Result<(&str, Claims), TokenProblem> {
        // Read unchecked first: the algorithm and who claims to have issued it decide which
        // keys check it, and the check below then holds the token to that issuer.
        let jsonwebtoken::TokenData {
            header,
            claims: claimed,
        } = jsonwebtoken::dangerous::insecure_decode::<Issued>(token)
            .map_err(|_| TokenProblem::Malformed)?;
        if AlgorithmFamily::Hmac.algorithms().contains(&header.alg) {
            return Err(TokenProblem::SharedSecret(header.alg));
        }
        let Some((issuer, keys)) = self
            .authorization_servers
            .iter()
            .find(|(issuer, _)| claimed.iss.as_deref() == Some(issuer.as_str()))
        else {
            return Err(match claimed.iss {
                None => TokenProblem::MissingClaim("iss".to_owned()),
                Some(_) => TokenProblem::WrongIssuer,
            });
        };
        let mut validation = Validation::new(header.alg);
        validation.set_audience(&[&self.resource]);
        validation.set_issuer(&[issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.leeway.as_secs();

        let mut problem = TokenProblem::UnknownKey(header.kid.clone());
        for attempt in 0..2 {
            let current = keys.current();
            // A key published without an id may still be the one a token names.
            let candidates = current.iter().filter(|key| {
                header
                    .kid
                    .as_ref()
                    .is_none_or(|kid| key.id.as_ref().is_none_or(|id| id == kid))
                    && key
                        .algorithm
                        .is_none_or(|algorithm| algorithm == header.alg)
                    && key.family.algorithms().contains(&header.alg)
            });
            for key in candidates {
                match jsonwebtoken::decode::<Claims>(token, &key.key, &validation) {
                    Ok(data) => return Ok((issuer, data.claims)),
                    Err(error) => problem = TokenProblem::from_error(error.kind(), &self.resource),
                }
            }
            // A key the set does not hold may be a new one: a file-backed set reads again.
            let unknown = matches!(problem, TokenProblem::UnknownKey(_));
            if attempt > 0 || !unknown || !keys.reread() {
                break;
            }
        }
        Err(problem)
    }
}

/// Who a token claims issued it, read before its signature is checked, only to pick the
/// keys to check it with.
#[derive(Deserialize)]
struct Issued {
    iss: Option<String>,
}

/// What a token says that this server reads.
#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    client_id: Option<String>,
    /// RFC 9068: scopes separated by spaces.
    scope: Option<String>,
    /// What some authorization servers send instead.
    scp: Option<ScopeList>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ScopeList {
    One(String),
    Many(Vec<String>),
}

/// Why a presented token was refused; said to the client in the challenge's
/// `error_description`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TokenProblem {
    NotBearer,
    Malformed,
    SharedSecret(Algorithm),
    UnknownKey(Option<String>),
    BadSignature,
    Expired,
    NotYetValid,
    WrongAudience(String),
    WrongIssuer,
    MissingClaim(String),
    NoSubject,
    Unreadable,
}

impl TokenProblem {
    fn from_error(kind: &jsonwebtoken::errors::ErrorKind, resource: &str) -> TokenProblem {
        use jsonwebtoken::errors::ErrorKind;
        match kind {
            ErrorKind::InvalidSignature => TokenProblem::BadSignature,
            ErrorKind::ExpiredSignature => TokenProblem::Expired,
            ErrorKind::ImmatureSignature => TokenProblem::NotYetValid,
            ErrorKind::InvalidAudience => TokenProblem::WrongAudience(resource.to_owned()),
            ErrorKind::InvalidIssuer => TokenProblem::WrongIssuer,
            ErrorKind::MissingRequiredClaim(claim) => TokenProblem::MissingClaim(claim.clone()),
            ErrorKind::InvalidToken
            | ErrorKind::Base64(_)
            | ErrorKind::Json(_)
            | ErrorKind::Utf8(_) => TokenProblem::Malformed,
            _ => TokenProblem::Unreadable,
        }
    }
}

impl fmt::Display for TokenProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenProblem::NotBearer => {
                f.write_str("the Authorization header must be Bearer <token>")
            }
            TokenProblem::Malformed => f.write_str("the token is not a well-formed JWT"),
            TokenProblem::SharedSecret(algorithm) => write!(
                f,
                "the token is signed with a shared secret ({algorithm:?}); only tokens signed with \
                the authorization server's public keys are accepted"
            ),
            TokenProblem::UnknownKey(Some(kid)) => {
                write!(
                    f,
                    "the token is signed with key {kid}, which this server does not know"
                )
            }
            TokenProblem::UnknownKey(None) => {
                f.write_str("no key this server knows can check the token's signature")
            }
            TokenProblem::BadSignature => f.write_str("the token's signature is not valid"),
            TokenProblem::Expired => f.write_str("the token has expired"),
            TokenProblem::NotYetValid => f.write_str("the token is not valid yet (nbf)"),
            TokenProblem::WrongAudience(resource) => {
                write!(
                    f,
                    "the token was not issued for this server; its audience must include \
                    {resource}"
                )
            }
            TokenProblem::WrongIssuer => f.write_str(
                "the token was not issued by an authorization server this server trusts",
            ),
            TokenProblem::MissingClaim(claim) => write!(f, "the token has no {claim} claim"),
            TokenProblem::NoSubject => {
                f.write_str("the token names no subject (sub) or client (client_id)")
            }
            TokenProblem::Unreadable => f.write_str("the token cannot be checked"),
        }
    }
}

/// Appends `key="value"` parameters to a challenge. An RFC 6750 parameter holds visible
/// ASCII and spaces other than quotes and backslashes, so those two are dropped and any
/// other character (from a token's `kid`, say) becomes `?`: the header is always sent.
fn push_params(challenge: &mut String, params: &[(&str, String)]) {
    for (index, (key, value)) in params.iter().enumerate() {
        let value: String = value
            .chars()
            .filter(|c| !matches!(c, '"' | '\\'))
            .map(|c| {
                if c == ' ' || c.is_ascii_graphic() {
                    c
                } else {
                    '?'
                }
            })
            .collect();
        challenge.push_str(if index == 0 { " " } else { ", " });
        challenge.push_str(&format!("{key}=\"{value}\""));
    }
}

/// `uri`, when it is an absolute `https` URI (or `http` on a loopback host) without a
/// fragment, as RFC 8707 asks of a resource identifier.
fn checked_uri(what: &'static str, uri: String) -> Result<String, OAuthError> {
    let invalid = |reason: &str| OAuthError::InvalidUri {
        what,
        uri: uri.clone(),
        reason: reason.to_owned(),
    };
    if !uri.is_ascii() {
        return Err(invalid(
            "it holds characters outside ASCII; write the host in its ASCII form (punycode) and \
            percent-encode the path",
        ));
    }
    let Some((scheme, rest)) = uri.split_once("://") else {
        return Err(invalid(
            "it is not an absolute URI; write it as https://host/path",
        ));
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() {
        return Err(invalid("it names no host"));
    }
    if uri.contains('#') {
        return Err(invalid(
            "it has a fragment (#...), which an OAuth resource cannot have",
        ));
    }
    // The same loopback names a server on a loopback address accepts in `Host`.
    let loopback = super::guard::host_allowed(host, &super::options::loopback_hosts());
    match scheme {
        "https" => Ok(uri),
        "http" if loopback => Ok(uri),
        "http" => Err(invalid(
            "it must use https (http is accepted only for localhost)",
        )),
        _ => Err(invalid("its scheme must be https")),
    }
}

/// A URI's origin (`https://host:port`) and its path without a trailing slash (and without
/// a query).
fn split_uri(uri: &str) -> (&str, &str) {
    let after_scheme = uri.find("://").map_or(0, |at| at + 3);
    let path_start = uri[after_scheme..]
        .find(['/', '?'])
        .map_or(uri.len(), |at| after_scheme + at);
    let (origin, rest) = uri.split_at(path_start);
    let path = rest.split('?').next().unwrap_or("").trim_end_matches('/');
    (origin, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_puts_the_well_known_path_before_the_resource_path() {
        assert_eq!(
            split_uri("https://a.example/mcp/"),
            ("https://a.example", "/mcp")
        );
        assert_eq!(
            split_uri("https://a.example:8443"),
            ("https://a.example:8443", "")
        );
        assert_eq!(
            split_uri("http://127.0.0.1:9/x/y?q=1"),
            ("http://127.0.0.1:9", "/x/y")
        );
    }

    #[test]
    fn a_resource_must_be_https_unless_it_is_loopback() {
        assert!(checked_uri("resource", "https://tools.example.com/mcp".into()).is_ok());
        assert!(checked_uri("resource", "http://localhost:8080/mcp".into()).is_ok());
        assert!(checked_uri("resource", "http://127.0.0.1:8080/mcp".into()).is_ok());
        assert!(checked_uri("resource", "http://[::1]:8080/mcp".into()).is_ok());
        assert!(checked_uri("resource", "http://LOCALHOST/mcp".into()).is_ok());
        let plain = checked_uri("resource", "http://tools.example.com/mcp".into()).unwrap_err();
        assert_eq!(
            plain.to_string(),
            "the resource URI `http://tools.example.com/mcp` cannot be used: it must use https \
             (http is accepted only for localhost)"
        );
        // A loopback name as a subdomain is not loopback.
        assert!(checked_uri("resource", "http://localhost.example.com/mcp".into()).is_err());
        let fragment =
            checked_uri("resource", "https://tools.example.com/mcp#x".into()).unwrap_err();
        assert_eq!(
            fragment.to_string(),
            "the resource URI `https://tools.example.com/mcp#x` cannot be used: it has a \
             fragment (#...), which an OAuth resource cannot have"
        );
        assert!(checked_uri("resource", "https:///mcp".into()).is_err());
    }

    #[test]
    fn challenge_values_never_carry_a_quote() {
        let mut challenge = String::from("Bearer");
        push_params(
            &mut challenge,
            &[("error_description", "a \"quoted\" \\ word, kid é\n".into())],
        );
        assert_eq!(
            challenge,
            "Bearer error_description=\"a quoted  word, kid ??\""
        );
        assert!(axum::http::HeaderValue::from_str(&challenge).is_ok());
        assert!(checked_uri("resource", "https://tööls.example/mcp".into()).is_err());
    }

    #[test]
    fn key_sets_without_a_public_signing_key_are_refused() {
        let secret = r#"{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}"#;
        let error = Jwks::from_json(secret).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the keys in the JWKS document cannot be used: it holds no public key for \
             signatures (RSA, EC or Ed25519)"
        );
        let error = Jwks::from_json("{}").unwrap_err();
        // The rest is the JSON parser's own words.
        let said = error.to_string();
        assert!(
            said.starts_with(
                "the keys in the JWKS document cannot be used: it is not a JWKS document: "
            ),
            "{said}"
        );
    }
}
