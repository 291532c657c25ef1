//! OAuth 2.1 for the MCP client, driven by the server's refusals: a 401 (or a 403 for a
//! scope the token lacks) sends the client to find who authorizes the server, to become
//! known to that authorization server, and to get a token for the scopes wanted (those of
//! the refusal, together with those asked for before). Tokens are refreshed before they
//! run out; registrations are kept per authorization server and never shown to another.

mod kept_here;

use super::challenge::Challenge;
use super::discovery::{self, Issuer, Resource};
use super::dpop::{Dpop, Proving};
use super::grant::{self, Identity, Method, Tokens};
use super::kept::{Kept, KeptFile};
use super::loopback::Authorizer;
use super::settings::{Grant, OAuthBuilder};
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
    /// The token held for each MCP endpoint, by its URL: a token goes only where it was had
    /// for, also when one `OAuth` serves several servers.
    held: HashMap<String, Held>,
    /// Who the client is at each authorization server it met, by the issuer it looked up.
    registrations: HashMap<String, Known>,
    /// The scopes asked for so far, by endpoint: a refusal for more asks for all of them
    /// together.
    requested: HashMap<String, BTreeSet<String>>,
    /// The key that binds tokens to the client, once an authorization server takes one.
    dpop: Option<Arc<Dpop>>,
    /// What an earlier run kept, once read (when credentials are first needed): its
    /// registrations, and the tokens not taken up yet.
    kept: Option<Kept>,
}

/// Who the client is at an authorization server, and whether it registered there (only a
/// registration is kept for the next run: a configured client is configured again).
#[derive(Clone)]
struct Known {
    identity: Identity,
    registered: bool,
}

struct Held {
    tokens: Tokens,
    issuer: Issuer,
    /// The issuer the client looked up (what its registration is kept by).
    issuer_key: String,
    identity: Identity,
    registered: bool,
    resource: String,
    /// The redirect URI the identity was registered with, when a person authorizes.
    redirect: Option<String>,
    /// Whether this token came from a refresh (a refusal of it needs a new authorization).
    refreshed: bool,
}

impl OAuth {
    /// The credentials `settings` describe.
    pub(super) fn with_settings(settings: OAuthBuilder) -> OAuth {
        OAuth(Arc::new(Inner {
            web: Web::new(),
            kept: settings.kept.clone().map(KeptFile::new),
            settings,
            state: tokio::sync::Mutex::default(),
        }))
    }
}

impl Credentials for OAuth {
    fn headers<'a>(&'a self, method: &'a str, url: &'a str) -> Answer<'a, Vec<(String, String)>> {
        Box::pin(async move {
            let mut state = self.0.state.lock().await;
            self.0.take_up_kept(&mut state, url)?;
            let Some(held) = state.held.get(url) else {
                return Ok(Vec::new());
            };
            let expired = held.tokens.expires.is_some_and(|at| Instant::now() >= at);
            // Another run of the program may have refreshed the kept token meanwhile: a
            // refresh token used twice may be refused, or revoke the whole family.
            if expired && !self.0.adopt_newer_kept(&mut state, url) {
                let renewed = match state
                    .held
                    .get(url)
                    .and_then(|held| held.tokens.refresh.clone())
                {
                    Some(refresh) => self.0.refresh(&state, url, &refresh).await,
                    // The server will refuse it, and the refusal authorizes anew.
                    None => Err("no refresh token".to_owned()),
                };
                match renewed {
                    Ok(tokens) => {
                        if let Some(held) = state.held.get_mut(url) {
                            held.tokens = tokens;
                            held.refreshed = true;
                        }
                        self.0.keep(&state, url).await;
                    }
                    Err(why) => {
                        tracing::info!(%why, "an access token ran out and could not be refreshed");
                        state.held.remove(url);
                        self.0.forget_kept_token(url).await;
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
        let Some(held) = self.held.get(url) else {
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

    /// The `Authorization` value of the token held for `url`.
    fn authorization(&self, url: &str) -> Option<String> {
        let held = self.held.get(url)?;
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
        let url = refusal.url.as_str();
        let current = state.authorization(url);
        if current.is_some() && current.as_deref() != refusal.authorization_sent() {
            return Ok(());
        }
        // A token that ran out is refreshed once before anything else is tried.
        let refreshable = state
            .held
            .get(url)
            .filter(|held| !held.refreshed)
            .and_then(|held| held.tokens.refresh.clone());
        if let (401, Some(refresh)) = (refusal.status, refreshable) {
            if let Ok(tokens) = self.refresh(&state, url, &refresh).await {
                if let Some(held) = state.held.get_mut(url) {
                    held.tokens = tokens;
                    held.refreshed = true;
                }
                self.keep(&state, url).await;
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
        let scopes = self.scopes(&state, url, &challenge, &resource, &issuer);
        let known = self.identity(&mut state, &resource.issuer, &issuer).await?;
        let identity = known.identity;
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
        state
            .requested
            .entry(url.to_owned())
            .or_default()
            .extend(scopes);
        let redirect = match self.settings.grant() {
            Grant::AuthorizationCode(authorizer) => authorizer.redirect_uri().await.ok(),
            _ => None,
        };
        let held = Held {
            tokens,
            issuer,
            issuer_key: resource.issuer,
            identity,
            registered: known.registered,
            resource: resource.id,
            redirect,
            refreshed: false,
        };
        state.held.insert(url.to_owned(), held);
        self.keep(&state, url).await;
        Ok(())
    }

    /// The scopes to ask for: those the refusal names (with all asked for before, so a
    /// step-up keeps what was had), else those the server says it supports, else none;
    /// the configured ones always; `offline_access` when a person authorizes and the
    /// authorization server offers it (for a refresh token).
    fn scopes(
        &self,
        state: &State,
        endpoint: &str,
        challenge: &Challenge,
        resource: &Resource,
        issuer: &Issuer,
    ) -> Vec<String> {
        let mut scopes: BTreeSet<String> = self.settings.scopes.iter().cloned().collect();
        let named = challenge.scopes();
        let requested = state
            .requested
            .get(endpoint)
            .filter(|asked| !asked.is_empty());
        match requested {
            None if named.is_empty() => scopes.extend(resource.scopes_supported.iter().cloned()),
            None => scopes.extend(named),
            Some(asked) => {
                scopes.extend(named);
                scopes.extend(asked.iter().cloned());
            }
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

    /// Who the client is at `issuer` (looked up as `key`): as registered there before, in
    /// this run or an earlier one; the id it was given; its metadata document's URL where
    /// the server takes one; else registered now.
    async fn identity(
        &self,
        state: &mut State,
        key: &str,
        issuer: &Issuer,
    ) -> Result<Known, String> {
        if let Some(known) = state.registrations.get(key) {
            return Ok(known.clone());
        }
        if let Some(identity) = self.kept_identity(state, key, issuer).await? {
            let known = Known {
                identity,
                registered: true,
            };
            state.registrations.insert(key.to_owned(), known.clone());
            return Ok(known);
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
            let identity = self.register(issuer).await?;
            let known = Known {
                identity,
                registered: true,
            };
            state.registrations.insert(key.to_owned(), known.clone());
            return Ok(known);
        };
        let known = Known {
            identity,
            registered: false,
        };
        state.registrations.insert(key.to_owned(), known.clone());
        Ok(known)
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

    /// A new access token for the token held for `endpoint`, from its refresh token.
    async fn refresh(
        &self,
        state: &State,
        endpoint: &str,
        refresh: &str,
    ) -> Result<Tokens, String> {
        let held = state.held.get(endpoint).ok_or("no token is held")?;
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
