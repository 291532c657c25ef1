//! OAuth 2.1 for the MCP client, driven by the server's refusals: a 401 (or a 403 for a
//! scope the token lacks) sends the client to find who authorizes the server, to become
//! known to that authorization server, and to get a token for the scopes wanted (those of
//! the refusal, together with those asked for before). Tokens are refreshed before they
//! run out; registrations are kept per authorization server and never shown to another.

use super::challenge::Challenge;
use super::discovery::{self, Issuer, Resource};
use super::dpop::{Dpop, Proving};
use super::grant::{self, Identity, Method, Tokens};
use super::kept::{KeptFile, KeptIdentity, KeptToken};
use super::loopback::Authorizer;
use super::web::Web;
use super::{Credentials, Refusal};
use crate::client::handler::Answer;
use oauth2::url::Url;
use serde_json::json;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

/// OAuth 2.1 credentials: give it to [`ClientBuilder::credentials`].
///
/// It does nothing until a server refuses a request; then it authorizes, as the server's
/// metadata says, and the request is sent again.
///
/// ```no_run
/// use tool_runtime::client::auth::OAuth;
/// // A service of its own, known to the authorization server by a secret.
/// let oauth = OAuth::builder()
///     .client_id("reporting-service")
///     .client_secret(std::env::var("CLIENT_SECRET").unwrap())
///     .client_credentials()
///     .build();
/// # let _ = oauth;
/// ```
///
/// [`ClientBuilder::credentials`]: crate::client::ClientBuilder::credentials
#[derive(Clone)]
pub struct OAuth(Arc<Inner>);

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("client_name", &self.0.settings.client_name)
            .field("client_id", &self.0.settings.client_id)
            .finish_non_exhaustive()
    }
}

struct Inner {
    web: Web,
    settings: OAuthBuilder,
    state: tokio::sync::Mutex<State>,
    /// Where registrations and tokens are kept between runs, if anywhere.
    kept: Option<KeptFile>,
}

/// What the credentials hold.
#[derive(Default)]
struct State {
    /// The token in use, and what it was had from.
    held: Option<Held>,
    /// Who the client is at each authorization server it met, by issuer.
    registrations: HashMap<String, Identity>,
    /// The scopes asked for so far: a refusal for more asks for all of them together.
    requested: BTreeSet<String>,
    /// The key that binds tokens to the client, once an authorization server takes one.
    dpop: Option<Arc<Dpop>>,
    /// Whether what was kept in a file was read (it is, when credentials are first needed).
    read_kept: bool,
    /// Registrations kept by an earlier run, by issuer: used when they still fit.
    kept_registrations: HashMap<String, KeptIdentity>,
}

struct Held {
    tokens: Tokens,
    issuer: Issuer,
    identity: Identity,
    resource: String,
    /// The MCP endpoint it was had for (what kept tokens are found by).
    endpoint: String,
    /// The redirect URI the identity was registered with, when a person authorizes.
    redirect: Option<String>,
    /// Whether this token came from a refresh (a refusal of it needs a new authorization).
    refreshed: bool,
}

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
enum Grant {
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
    client_name: String,
    client_id: Option<String>,
    client_secret: Option<String>,
    private_key: Option<(String, KeyAlgorithm)>,
    metadata_document: Option<String>,
    scopes: Vec<String>,
    grant: Option<Grant>,
    kept: Option<std::path::PathBuf>,
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
    /// endpoint) in the file at `path`, created readable by its owner alone: a program run
    /// again (a command line, say) uses them rather than registering again and asking the
    /// person to sign in again, for as long as its tokens are good or can be refreshed.
    /// A token bound to the client's proof key (DPoP) is not kept. A file that cannot be
    /// read fails the requests that need it, naming it, and is never written over.
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
        OAuth(Arc::new(Inner {
            web: Web::new(),
            kept: self.kept.clone().map(KeptFile::new),
            settings: self,
            state: tokio::sync::Mutex::default(),
        }))
    }

    fn grant(&self) -> Grant {
        self.grant.clone().unwrap_or(Grant::ClientCredentials)
    }
}

impl Credentials for OAuth {
    fn headers<'a>(&'a self, method: &'a str, url: &'a str) -> Answer<'a, Vec<(String, String)>> {
        Box::pin(async move {
            let mut state = self.0.state.lock().await;
            self.0.read_kept(&mut state, url)?;
            let Some(held) = state.held.as_mut() else {
                return Ok(Vec::new());
            };
            let expired = held.tokens.expires.is_some_and(|at| Instant::now() >= at);
            if expired {
                let renewed = match &held.tokens.refresh {
                    Some(refresh) => {
                        let refresh = refresh.clone();
                        self.0.refresh(&state, &refresh).await
                    }
                    // The server will refuse it, and the refusal authorizes anew.
                    None => Err("no refresh token".to_owned()),
                };
                match renewed {
                    Ok(tokens) => {
                        let held = state.held.as_mut().expect("held above");
                        held.tokens = tokens;
                        held.refreshed = true;
                        self.0.keep(&state);
                    }
                    Err(why) => {
                        tracing::info!(%why, "an access token ran out and could not be refreshed");
                        state.held = None;
                        return Ok(Vec::new());
                    }
                }
            }
            state.headers(method, url)
        })
    }

    fn refused<'a>(&'a self, refusal: &'a Refusal) -> Answer<'a, bool> {
        Box::pin(async move { self.0.authorize(refusal).await.map(|()| true) })
    }
}

impl State {
    /// The headers of the token held for a request of `method` to `url`.
    fn headers(&self, method: &str, url: &str) -> Result<Vec<(String, String)>, String> {
        let Some(held) = &self.held else {
            return Ok(Vec::new());
        };
        let token = &held.tokens.access;
        match (&self.dpop, held.tokens.bound) {
            (Some(dpop), true) => Ok(vec![
                ("authorization".to_owned(), format!("DPoP {token}")),
                ("dpop".to_owned(), dpop.server_proof(method, url, token)?),
            ]),
            _ => Ok(vec![(
                "authorization".to_owned(),
                format!("Bearer {token}"),
            )]),
        }
    }

    /// The `Authorization` value of the token held.
    fn authorization(&self) -> Option<String> {
        let held = self.held.as_ref()?;
        let scheme = if held.tokens.bound { "DPoP" } else { "Bearer" };
        Some(format!("{scheme} {}", held.tokens.access))
    }
}

impl Inner {
    /// Gets a token the server that refused will take.
    async fn authorize(&self, refusal: &Refusal) -> Result<(), String> {
        let challenge = refusal.challenge.clone().unwrap_or_default();
        let wants_scope = challenge.error.as_deref() == Some("insufficient_scope");
        if refusal.status == 403 && !wants_scope {
            return Err(format!(
                "the server forbids the request{}",
                described(&challenge)
            ));
        }
        let mut state = self.state.lock().await;
        // A server that wants a nonce in the proofs is sent the request again with it.
        if let (Some("use_dpop_nonce"), Some(nonce), Some(dpop)) = (
            challenge.error.as_deref(),
            refusal.dpop_nonce.as_deref(),
            &state.dpop,
        ) {
            dpop.server_asked(nonce);
            return Ok(());
        }
        // Another request, refused too, may have got a new token meanwhile: it is tried
        // first.
        let current = state.authorization();
        if current.is_some() && current.as_deref() != refusal.authorization_sent() {
            return Ok(());
        }
        // A token that ran out is refreshed once before anything else is tried.
        let refreshable = state
            .held
            .as_ref()
            .filter(|held| !held.refreshed)
            .and_then(|held| held.tokens.refresh.clone());
        if let (401, Some(refresh)) = (refusal.status, refreshable) {
            if let Ok(tokens) = self.refresh(&state, &refresh).await {
                let held = state.held.as_mut().expect("held above");
                held.tokens = tokens;
                held.refreshed = true;
                self.keep(&state);
                return Ok(());
            }
        }
        // Who authorizes the server may have changed: its metadata is read anew each time.
        let resource = discovery::resource(
            &self.web,
            &refusal.url,
            challenge.resource_metadata.as_deref(),
        )
        .await?;
        let issuer = discovery::issuer(&self.web, &resource).await?;
        let scopes = self.scopes(&state, &challenge, &resource, &issuer);
        let identity = self.identity(&mut state, &issuer).await?;
        if issuer.dpop_es256 && state.dpop.is_none() {
            state.dpop = Some(Arc::new(Dpop::new()?));
        }
        let dpop = state.dpop.clone().filter(|_| issuer.dpop_es256);
        let id = resource.id.as_str();
        let tokens = match self.settings.grant() {
            Grant::AuthorizationCode(authorizer) => {
                self.with_consent(
                    &*authorizer,
                    &identity,
                    &issuer,
                    &scopes,
                    id,
                    dpop.as_deref(),
                )
                .await?
            }
            Grant::ClientCredentials => {
                let web = Proving::new(&self.web, dpop.as_deref());
                grant::client_credentials(&web, &identity, &issuer, &scopes, id).await?
            }
            Grant::JwtBearer(assertion) => {
                grant::jwt_bearer(&self.web, &identity, &issuer, &assertion, &scopes, id).await?
            }
            Grant::Enterprise {
                endpoint,
                client_id,
                id_token,
            } => {
                let assertion = grant::identity_assertion(
                    &self.web,
                    &endpoint,
                    client_id.as_deref(),
                    &id_token,
                    &issuer.issuer,
                    id,
                )
                .await?;
                grant::jwt_bearer(&self.web, &identity, &issuer, &assertion, &scopes, id).await?
            }
        };
        state.requested.extend(scopes);
        let redirect = match self.settings.grant() {
            Grant::AuthorizationCode(authorizer) => authorizer.redirect_uri().await.ok(),
            _ => None,
        };
        state.held = Some(Held {
            tokens,
            issuer,
            identity,
            resource: resource.id,
            endpoint: refusal.url.clone(),
            redirect,
            refreshed: false,
        });
        self.keep(&state);
        Ok(())
    }

    /// Reads what an earlier run kept, once: its registrations, and the token it had for
    /// `endpoint` when none is held.
    fn read_kept(&self, state: &mut State, endpoint: &str) -> Result<(), String> {
        let Some(file) = self.kept.as_ref().filter(|_| !state.read_kept) else {
            return Ok(());
        };
        let kept = file.read()?;
        state.read_kept = true;
        let token = kept.tokens.get(endpoint);
        let identity = token.and_then(|token| self.kept_token_identity(token));
        if let (None, Some(token), Some(identity)) = (&state.held, token, identity) {
            state.requested.extend(token.scopes.iter().cloned());
            state.held = Some(Held {
                tokens: token.tokens(),
                issuer: token.issuer.clone(),
                identity,
                resource: token.resource.clone(),
                endpoint: endpoint.to_owned(),
                redirect: token.identity.redirect_uri.clone(),
                refreshed: false,
            });
        }
        state.kept_registrations = kept.registrations.into_iter().collect();
        Ok(())
    }

    /// Keeps the token held and the registration it was had with, when credentials are
    /// kept; a failure to write is logged: the token is still good in this run.
    fn keep(&self, state: &State) {
        let (Some(file), Some(held)) = (&self.kept, &state.held) else {
            return;
        };
        // A client configured here is configured again in the next run: its secret is
        // not written down, and it is no registration.
        let configured = self.settings.client_id.is_some();
        let mut identity = KeptIdentity::of(&held.identity, held.redirect.clone());
        if configured {
            identity.forget_secret();
        }
        let scopes = state.requested.iter().cloned().collect();
        let token = KeptToken::of(
            &held.tokens,
            &held.issuer,
            identity.clone(),
            &held.resource,
            scopes,
        );
        let updated = file.update(|kept| {
            if !configured {
                kept.registrations
                    .insert(held.issuer.issuer.clone(), identity);
            }
            match token {
                Some(token) => kept.tokens.insert(held.endpoint.clone(), token),
                None => kept.tokens.remove(&held.endpoint),
            };
        });
        if let Err(why) = updated {
            tracing::warn!(%why, "OAuth credentials were not kept for the next run");
        }
    }

    /// Who a kept token was had as, when the client can be that again: the configured
    /// client (its secret from the settings), else the registration kept with it.
    fn kept_token_identity(&self, token: &KeptToken) -> Option<Identity> {
        let Some(client_id) = &self.settings.client_id else {
            return token.identity.identity(self.key_method());
        };
        if token.identity.client_id() != client_id {
            return None;
        }
        let secret = self.settings.client_secret.clone();
        Some(Identity {
            client_id: client_id.clone(),
            method: self.method(&token.issuer, secret.is_some(), None),
            secret,
        })
    }

    /// The method of the settings' private key, if they have one.
    fn key_method(&self) -> Option<Method> {
        let (key, algorithm) = self.settings.private_key.as_ref()?;
        Some(Method::PrivateKeyJwt {
            key: key.clone(),
            algorithm: algorithm.jwt(),
        })
    }

    /// A registration an earlier run kept for `issuer`, when it still fits: no client id
    /// is configured instead, and a person is sent back where it was registered to send
    /// them.
    async fn kept_identity(
        &self,
        state: &State,
        issuer: &Issuer,
    ) -> Result<Option<Identity>, String> {
        let kept = match state.kept_registrations.get(&issuer.issuer) {
            Some(kept) if self.settings.client_id.is_none() => kept,
            _ => return Ok(None),
        };
        if let (Grant::AuthorizationCode(authorizer), Some(registered)) =
            (self.settings.grant(), &kept.redirect_uri)
        {
            if authorizer.redirect_uri().await? != *registered {
                return Ok(None);
            }
        }
        Ok(kept.identity(self.key_method()))
    }

    /// The scopes to ask for: those the refusal names (with all asked for before, so a
    /// step-up keeps what was had), else those the server says it supports, else none;
    /// the configured ones always; `offline_access` when a person authorizes and the
    /// authorization server offers it (for a refresh token).
    fn scopes(
        &self,
        state: &State,
        challenge: &Challenge,
        resource: &Resource,
        issuer: &Issuer,
    ) -> Vec<String> {
        let mut scopes: BTreeSet<String> = self.settings.scopes.iter().cloned().collect();
        let named = challenge.scopes();
        if named.is_empty() {
            if state.requested.is_empty() {
                scopes.extend(resource.scopes_supported.iter().cloned());
            } else {
                scopes.extend(state.requested.iter().cloned());
            }
        } else {
            scopes.extend(named);
            scopes.extend(state.requested.iter().cloned());
        }
        let offline = "offline_access";
        if matches!(self.settings.grant(), Grant::AuthorizationCode(_))
            && issuer.scopes_supported.iter().any(|scope| scope == offline)
            && !scopes.is_empty()
        {
            scopes.insert(offline.to_owned());
        }
        scopes.into_iter().collect()
    }

    /// Who the client is at `issuer`: as registered there before; the id it was given; its
    /// metadata document's URL where the server takes one; else registered now.
    async fn identity(&self, state: &mut State, issuer: &Issuer) -> Result<Identity, String> {
        if let Some(known) = state.registrations.get(&issuer.issuer) {
            return Ok(known.clone());
        }
        if let Some(kept) = self.kept_identity(state, issuer).await? {
            state
                .registrations
                .insert(issuer.issuer.clone(), kept.clone());
            return Ok(kept);
        }
        let settings = &self.settings;
        let vouched = matches!(
            settings.grant(),
            Grant::JwtBearer(_) | Grant::Enterprise { .. }
        );
        let identity = if let Some(client_id) = &settings.client_id {
            Identity {
                client_id: client_id.clone(),
                secret: settings.client_secret.clone(),
                method: self.method(issuer, settings.client_secret.is_some(), None),
            }
        } else if let (Some(document), true, Grant::AuthorizationCode(_)) = (
            &settings.metadata_document,
            issuer.client_id_metadata_documents,
            settings.grant(),
        ) {
            Identity {
                client_id: document.clone(),
                secret: None,
                method: Method::None,
            }
        } else if vouched {
            // An assertion says who the client is: it needs no registration.
            Identity {
                client_id: String::new(),
                secret: None,
                method: Method::None,
            }
        } else {
            self.register(issuer).await?
        };
        state
            .registrations
            .insert(issuer.issuer.clone(), identity.clone());
        Ok(identity)
    }

    /// How the client authenticates at `issuer`'s token endpoint: its key if it has one;
    /// else as its registration says; else a secret in the way the server prefers; else as
    /// a public client.
    fn method(&self, issuer: &Issuer, has_secret: bool, registered: Option<&str>) -> Method {
        if let Some((key, algorithm)) = &self.settings.private_key {
            return Method::PrivateKeyJwt {
                key: key.clone(),
                algorithm: algorithm.jwt(),
            };
        }
        if let Some(method) = registered.and_then(Method::named) {
            return method;
        }
        if !has_secret {
            return Method::None;
        }
        let offers = |name: &str| issuer.auth_methods.iter().any(|method| method == name);
        if offers("client_secret_basic") || issuer.auth_methods.is_empty() {
            Method::Basic
        } else if offers("client_secret_post") {
            Method::Post
        } else {
            Method::Basic
        }
    }

    /// Registers the client with `issuer` (RFC 7591).
    async fn register(&self, issuer: &Issuer) -> Result<Identity, String> {
        let endpoint = issuer.registration_endpoint.as_deref().ok_or_else(|| {
            format!(
                "the authorization server {} takes no registration, and no client id was \
                 given for it",
                issuer.issuer
            )
        })?;
        let mut metadata = json!({
            "client_name": self.settings.client_name,
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        });
        match self.settings.grant() {
            Grant::AuthorizationCode(authorizer) => {
                let redirect = authorizer.redirect_uri().await?;
                metadata["redirect_uris"] = json!([redirect]);
                metadata["grant_types"] = json!(["authorization_code", "refresh_token"]);
                metadata["response_types"] = json!(["code"]);
            }
            Grant::ClientCredentials => {
                metadata["grant_types"] = json!(["client_credentials"]);
                metadata["token_endpoint_auth_method"] = json!("client_secret_basic");
            }
            Grant::JwtBearer(_) | Grant::Enterprise { .. } => {
                metadata["grant_types"] = json!(["urn:ietf:params:oauth:grant-type:jwt-bearer"]);
            }
        }
        let reply = self
            .web
            .post_json(endpoint, &metadata)
            .await
            .map_err(|error| format!("the registration at {endpoint}: {error}"))?;
        let registered = reply.json().ok_or_else(|| {
            format!(
                "the registration at {endpoint} was refused: {}",
                reply.shown()
            )
        })?;
        let client_id = registered["client_id"]
            .as_str()
            .ok_or_else(|| format!("the registration at {endpoint} gave no client id"))?;
        let secret = registered["client_secret"].as_str().map(str::to_owned);
        let method = self.method(
            issuer,
            secret.is_some(),
            registered["token_endpoint_auth_method"].as_str(),
        );
        Ok(Identity {
            client_id: client_id.to_owned(),
            secret,
            method,
        })
    }

    /// A person's consent through `authorizer`, its code checked (state, and the issuer
    /// it came from, RFC 9207) and redeemed.
    async fn with_consent(
        &self,
        authorizer: &dyn Authorizer,
        identity: &Identity,
        issuer: &Issuer,
        scopes: &[String],
        resource: &str,
        dpop: Option<&Dpop>,
    ) -> Result<Tokens, String> {
        let redirect = authorizer.redirect_uri().await?;
        let pending = grant::authorization(identity, issuer, &redirect, scopes, resource)?;
        let back = authorizer.authorize(&pending.url).await?;
        let back = Url::parse(&back)
            .map_err(|error| format!("the authorization came back to no URL ({back}): {error}"))?;
        let query: HashMap<String, String> = back.query_pairs().into_owned().collect();
        check_issuer(issuer, query.get("iss").map(String::as_str))?;
        if query.get("state").map(String::as_str) != Some(pending.state.secret().as_str()) {
            return Err(
                "the authorization came back with another state than it was sent \
                        with: it is not this client's"
                    .to_owned(),
            );
        }
        if let Some(error) = query.get("error") {
            let description = query
                .get("error_description")
                .map(|text| format!(": {text}"))
                .unwrap_or_default();
            return Err(format!(
                "the authorization was refused ({error}){description}"
            ));
        }
        let code = query
            .get("code")
            .ok_or("the authorization came back without a code")?;
        let web = Proving::new(&self.web, dpop);
        grant::redeem(
            &web,
            identity,
            issuer,
            &redirect,
            code,
            pending.verifier,
            resource,
        )
        .await
    }

    /// A new access token for the token held, from its refresh token.
    async fn refresh(&self, state: &State, refresh: &str) -> Result<Tokens, String> {
        let held = state.held.as_ref().ok_or("no token is held")?;
        let dpop = state.dpop.as_deref().filter(|_| held.tokens.bound);
        let web = Proving::new(&self.web, dpop);
        grant::refresh(&web, &held.identity, &held.issuer, refresh, &held.resource).await
    }
}

/// The `iss` of an authorization response, checked against the issuer asked (RFC 9207):
/// compared exactly when present; required when the server says it sends one.
fn check_issuer(issuer: &Issuer, iss: Option<&str>) -> Result<(), String> {
    match (iss, issuer.iss_parameter) {
        (Some(iss), _) if iss != issuer.issuer => Err(format!(
            "the authorization came back from issuer {iss:?}, not {:?}: it is not used",
            issuer.issuer
        )),
        (None, true) => Err(format!(
            "the authorization came back without the issuer {} says it names: it is not used",
            issuer.issuer
        )),
        _ => Ok(()),
    }
}

/// `: description` of a challenge, when it has one.
fn described(challenge: &Challenge) -> String {
    match (&challenge.error, &challenge.error_description) {
        (_, Some(description)) => format!(": {description}"),
        (Some(error), None) => format!(" ({error})"),
        (None, None) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issuer(iss_parameter: bool) -> Issuer {
        Issuer {
            issuer: "http://localhost:9/tenant".to_owned(),
            authorization_endpoint: None,
            token_endpoint: "http://localhost:9/token".to_owned(),
            registration_endpoint: None,
            scopes_supported: Vec::new(),
            auth_methods: Vec::new(),
            client_id_metadata_documents: false,
            iss_parameter,
            dpop_es256: false,
        }
    }

    #[test]
    fn the_issuer_of_a_response_is_compared_exactly_and_required_when_promised() {
        let exact = "http://localhost:9/tenant";
        assert!(check_issuer(&issuer(true), Some(exact)).is_ok());
        assert!(check_issuer(&issuer(false), Some(exact)).is_ok());
        assert!(check_issuer(&issuer(false), None).is_ok());
        assert!(check_issuer(&issuer(true), None).is_err());
        assert!(check_issuer(&issuer(true), Some("http://localhost:9/tenant/")).is_err());
        assert!(check_issuer(&issuer(false), Some("https://evil.example.com")).is_err());
    }
}
