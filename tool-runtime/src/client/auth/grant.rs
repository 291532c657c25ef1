//! Token requests, through the `oauth2` crate: the authorization request's URL (PKCE S256
//! and a state, the resource and scopes), the code redeemed, client credentials, a refresh;
//! each authenticating the client as it registered (a secret in a Basic header or in the
//! body, none, or a signed JWT assertion).

use super::discovery::Issuer;
use super::web::Web;
use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError,
    Scope, TokenResponse, TokenUrl,
};
use std::time::{Duration, Instant};

/// Who the client is at an authorization server, and how it proves it.
#[derive(Debug, Clone)]
pub(crate) struct Identity {
    pub(crate) client_id: String,
    pub(crate) secret: Option<String>,
    pub(crate) method: Method,
}

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Method {
    /// `client_secret_basic`.
    Basic,
    /// `client_secret_post`.
    Post,
    /// `none`: a public client.
    None,
    /// `private_key_jwt`: an assertion signed with a key of PEM `key` by `algorithm`.
    PrivateKeyJwt {
        key: String,
        algorithm: jsonwebtoken::Algorithm,
    },
}

impl Method {
    /// The method of a registration's `token_endpoint_auth_method`.
    pub(crate) fn named(name: &str) -> Option<Method> {
        match name {
            "client_secret_basic" => Some(Method::Basic),
            "client_secret_post" => Some(Method::Post),
            "none" => Some(Method::None),
            _ => None,
        }
    }
}

/// What a token request gave.
#[derive(Debug, Clone)]
pub(crate) struct Tokens {
    pub(crate) access: String,
    pub(crate) refresh: Option<String>,
    /// When the access token stops being good (a little before the server says).
    pub(crate) expires: Option<Instant>,
    /// Whether the token is bound to the client's proof key (`token_type` DPoP).
    pub(crate) bound: bool,
}

/// An authorization request in flight: its URL, and what redeeming its code needs.
pub(crate) struct Pending {
    pub(crate) url: String,
    pub(crate) state: CsrfToken,
    pub(crate) verifier: PkceCodeVerifier,
}

type TokenClient =
    BasicClient<EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

fn token_client(identity: &Identity, issuer: &Issuer) -> Result<TokenClient, String> {
    let token_url = TokenUrl::new(issuer.token_endpoint.clone())
        .map_err(|error| format!("the token endpoint {}: {error}", issuer.token_endpoint))?;
    let mut client = BasicClient::new(ClientId::new(identity.client_id.clone()))
        .set_token_uri(token_url)
        .set_auth_type(match identity.method {
            Method::Basic => AuthType::BasicAuth,
            _ => AuthType::RequestBody,
        });
    if let (Some(secret), Method::Basic | Method::Post) = (&identity.secret, &identity.method) {
        client = client.set_client_secret(ClientSecret::new(secret.clone()));
    }
    Ok(client)
}

/// The authorization request for `scopes` of `resource`, sent back to `redirect_uri`.
pub(crate) fn authorization(
    identity: &Identity,
    issuer: &Issuer,
    redirect_uri: &str,
    scopes: &[String],
    resource: &str,
) -> Result<Pending, String> {
    let endpoint = issuer.authorization_endpoint.clone().ok_or_else(|| {
        format!(
            "the authorization server {} has no authorization endpoint",
            issuer.issuer
        )
    })?;
    let auth_url = AuthUrl::new(endpoint.clone())
        .map_err(|error| format!("the authorization endpoint {endpoint}: {error}"))?;
    let redirect = RedirectUrl::new(redirect_uri.to_owned())
        .map_err(|error| format!("the redirect URI {redirect_uri}: {error}"))?;
    let client = token_client(identity, issuer)?
        .set_auth_uri(auth_url)
        .set_redirect_uri(redirect);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = client
        .authorize_url(CsrfToken::new_random)
        .add_scopes(scopes.iter().cloned().map(Scope::new))
        .add_extra_param("resource", resource)
        .set_pkce_challenge(challenge)
        .url();
    Ok(Pending {
        url: url.to_string(),
        state,
        verifier,
    })
}

/// Redeems `code` of `pending`'s request.
pub(crate) async fn redeem<C>(
    web: &C,
    identity: &Identity,
    issuer: &Issuer,
    redirect_uri: &str,
    code: &str,
    verifier: PkceCodeVerifier,
    resource: &str,
) -> Result<Tokens, String>
where
    C: for<'c> oauth2::AsyncHttpClient<'c, Error = super::web::WebError>,
{
    let redirect = RedirectUrl::new(redirect_uri.to_owned())
        .map_err(|error| format!("the redirect URI {redirect_uri}: {error}"))?;
    let client = token_client(identity, issuer)?.set_redirect_uri(redirect);
    let mut request = client
        .exchange_code(AuthorizationCode::new(code.to_owned()))
        .set_pkce_verifier(verifier)
        .add_extra_param("resource", resource.to_owned());
    for (name, value) in client_assertion(identity, issuer)? {
        request = request.add_extra_param(name, value);
    }
    tokens(request.request_async(web).await, issuer)
}

/// A token for the client itself (client credentials).
pub(crate) async fn client_credentials<C>(
    web: &C,
    identity: &Identity,
    issuer: &Issuer,
    scopes: &[String],
    resource: &str,
) -> Result<Tokens, String>
where
    C: for<'c> oauth2::AsyncHttpClient<'c, Error = super::web::WebError>,
{
    let client = token_client(identity, issuer)?;
    let mut request = client
        .exchange_client_credentials()
        .add_scopes(scopes.iter().cloned().map(Scope::new))
        .add_extra_param("resource", resource.to_owned());
    for (name, value) in client_assertion(identity, issuer)? {
        request = request.add_extra_param(name, value);
    }
    tokens(request.request_async(web).await, issuer)
}

/// A new access token for `refresh`.
pub(crate) async fn refresh<C>(
    web: &C,
    identity: &Identity,
    issuer: &Issuer,
    refresh: &str,
    resource: &str,
) -> Result<Tokens, String>
where
    C: for<'c> oauth2::AsyncHttpClient<'c, Error = super::web::WebError>,
{
    let client = token_client(identity, issuer)?;
    let token = RefreshToken::new(refresh.to_owned());
    let mut request = client
        .exchange_refresh_token(&token)
        .add_extra_param("resource", resource.to_owned());
    for (name, value) in client_assertion(identity, issuer)? {
        request = request.add_extra_param(name, value);
    }
    let mut tokens = tokens(request.request_async(web).await, issuer)?;
    // A server that does not rotate refresh tokens keeps the one it gave.
    tokens.refresh.get_or_insert_with(|| refresh.to_owned());
    Ok(tokens)
}

/// The client assertion of a `private_key_jwt` client (RFC 7523): signed claims that it is
/// itself, for this authorization server, for a short while.
fn client_assertion(
    identity: &Identity,
    issuer: &Issuer,
) -> Result<Vec<(&'static str, String)>, String> {
    let Method::PrivateKeyJwt { key, algorithm } = &identity.method else {
        return Ok(Vec::new());
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let claims = serde_json::json!({
        "iss": identity.client_id, "sub": identity.client_id, "aud": issuer.issuer,
        "iat": now, "exp": now + 300, "jti": CsrfToken::new_random().secret(),
    });
    let key = match algorithm {
        jsonwebtoken::Algorithm::ES256 | jsonwebtoken::Algorithm::ES384 => {
            jsonwebtoken::EncodingKey::from_ec_pem(key.as_bytes())
        }
        jsonwebtoken::Algorithm::EdDSA => jsonwebtoken::EncodingKey::from_ed_pem(key.as_bytes()),
        _ => jsonwebtoken::EncodingKey::from_rsa_pem(key.as_bytes()),
    }
    .map_err(|error| format!("the client's private key cannot sign: {error}"))?;
    let signed = jsonwebtoken::encode(&jsonwebtoken::Header::new(*algorithm), &claims, &key)
        .map_err(|error| format!("the client assertion cannot be signed: {error}"))?;
    Ok(vec![
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
        ),
        ("client_assertion", signed),
    ])
}

type Answered = Result<
    oauth2::basic::BasicTokenResponse,
    RequestTokenError<super::web::WebError, oauth2::basic::BasicErrorResponse>,
>;

/// The tokens of a token endpoint's answer, or why there are none.
fn tokens(answered: Answered, issuer: &Issuer) -> Result<Tokens, String> {
    let response = answered.map_err(|error| {
        let why = match &error {
            RequestTokenError::ServerResponse(refusal) => match refusal.error_description() {
                Some(description) => format!("{}: {description}", refusal.error()),
                None => refusal.error().to_string(),
            },
            RequestTokenError::Request(error) => error.to_string(),
            RequestTokenError::Parse(error, _) => format!("an answer that is not a token: {error}"),
            RequestTokenError::Other(other) => other.clone(),
        };
        format!("the token endpoint of {} refused: {why}", issuer.issuer)
    })?;
    let expires = response
        .expires_in()
        .map(|lifetime| Instant::now() + lifetime.saturating_sub(Duration::from_secs(10)));
    let bound = matches!(
        response.token_type(),
        oauth2::basic::BasicTokenType::Extension(kind) if kind.eq_ignore_ascii_case("dpop")
    );
    Ok(Tokens {
        access: response.access_token().secret().clone(),
        refresh: response.refresh_token().map(|token| token.secret().clone()),
        expires,
        bound,
    })
}

/// The grant type of an assertion (RFC 7523).
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// A token for `assertion`, a JWT that vouches for the client (a workload's identity, or an
/// identity assertion its identity provider issued; RFC 7523), the client authenticated
/// with a secret when it has one.
pub(crate) async fn jwt_bearer(
    web: &Web,
    identity: &Identity,
    issuer: &Issuer,
    assertion: &str,
    scopes: &[String],
    resource: &str,
) -> Result<Tokens, String> {
    let scope = scopes.join(" ");
    let mut fields = vec![
        ("grant_type", JWT_BEARER),
        ("assertion", assertion),
        ("resource", resource),
    ];
    if !scope.is_empty() {
        fields.push(("scope", &scope));
    }
    let basic = match (&identity.secret, &identity.method) {
        (Some(secret), Method::Basic) => Some((identity.client_id.as_str(), secret.as_str())),
        _ => None,
    };
    if basic.is_none() && !identity.client_id.is_empty() {
        fields.push(("client_id", &identity.client_id));
    }
    let reply = web
        .post_form(&issuer.token_endpoint, &fields, basic)
        .await
        .map_err(|error| format!("the token endpoint of {}: {error}", issuer.issuer))?;
    let answer: serde_json::Value = serde_json::from_slice(&reply.body).unwrap_or_default();
    if !(200..300).contains(&reply.status) {
        return Err(format!(
            "the token endpoint of {} refused: {}",
            issuer.issuer,
            refusal_of(&answer, &reply)
        ));
    }
    let access = answer["access_token"].as_str().ok_or_else(|| {
        format!(
            "the token endpoint of {} gave no access token",
            issuer.issuer
        )
    })?;
    Ok(Tokens {
        access: access.to_owned(),
        refresh: answer["refresh_token"].as_str().map(str::to_owned),
        expires: answer["expires_in"]
            .as_u64()
            .map(|seconds| Instant::now() + Duration::from_secs(seconds.saturating_sub(10))),
        bound: answer["token_type"]
            .as_str()
            .is_some_and(|kind| kind.eq_ignore_ascii_case("dpop")),
    })
}

/// An identity assertion for `audience` (an authorization server) and `resource`, from
/// the identity provider's token endpoint, for the person `id_token` names (RFC 8693 token
/// exchange; enterprise-managed authorization).
pub(crate) async fn identity_assertion(
    web: &Web,
    endpoint: &str,
    client_id: Option<&str>,
    id_token: &str,
    audience: &str,
    resource: &str,
) -> Result<String, String> {
    let mut fields = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        ("subject_token", id_token),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token",
        ),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:id-jag",
        ),
        ("audience", audience),
        ("resource", resource),
    ];
    if let Some(client_id) = client_id {
        fields.push(("client_id", client_id));
    }
    let reply = web
        .post_form(endpoint, &fields, None)
        .await
        .map_err(|error| format!("the identity provider at {endpoint}: {error}"))?;
    let answer: serde_json::Value = serde_json::from_slice(&reply.body).unwrap_or_default();
    if !(200..300).contains(&reply.status) {
        return Err(format!(
            "the identity provider at {endpoint} refused the exchange: {}",
            refusal_of(&answer, &reply)
        ));
    }
    answer["access_token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("the identity provider at {endpoint} gave no identity assertion"))
}

/// What a refused token request says.
fn refusal_of(answer: &serde_json::Value, reply: &super::web::Reply) -> String {
    match (
        answer["error"].as_str(),
        answer["error_description"].as_str(),
    ) {
        (Some(error), Some(description)) => format!("{error}: {description}"),
        (Some(error), None) => error.to_owned(),
        _ => reply.shown(),
    }
}
