//! Tokens bound to the client (DPoP, RFC 9449): a P-256 key of the client's own signs a
//! fresh proof for each request (its method, URL, when, a unique id, and, sent to the MCP
//! server, a hash of the token), so a token that leaks is no use to anyone else. Used when
//! the authorization server says it takes proofs signed with ES256. A server that wants a
//! nonce in the proofs says so (`use_dpop_nonce`, with the nonce in `DPoP-Nonce`); the
//! request is sent again with it, and later proofs carry it.

use super::web::{Web, WebError};
use crate::sync::lock;
use base64::Engine;
use oauth2::http;
use sha2::Digest;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

/// The client's proof key, and the nonces servers asked for.
pub(crate) struct Dpop {
    key: jsonwebtoken::EncodingKey,
    jwk: jsonwebtoken::jwk::Jwk,
    /// The authorization server's nonce, once it asked for one.
    issuer_nonce: Mutex<Option<String>>,
    /// The MCP server's nonce, once it asked for one.
    server_nonce: Mutex<Option<String>>,
}

impl Dpop {
    /// A new key of the client's own.
    pub(crate) fn new() -> Result<Dpop, String> {
        use p256::pkcs8::EncodePrivateKey;
        let secret = loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes)
                .map_err(|error| format!("no randomness for a proof key: {error}"))?;
            // A value past the curve's order is no key; another draw is.
            if let Ok(secret) = p256::SecretKey::from_slice(&bytes) {
                break secret;
            }
        };
        let der = secret
            .to_pkcs8_der()
            .map_err(|error| format!("the proof key cannot be encoded: {error}"))?;
        let key = jsonwebtoken::EncodingKey::from_ec_der(der.as_bytes());
        let jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&key, jsonwebtoken::Algorithm::ES256)
            .map_err(|error| format!("the proof key has no public form: {error}"))?;
        Ok(Dpop {
            key,
            jwk,
            issuer_nonce: Mutex::new(None),
            server_nonce: Mutex::new(None),
        })
    }

    /// A proof for a request of `method` to `url` (its query and fragment left out), with
    /// `nonce` and, for a request carrying it, the hash of `token`.
    fn proof(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, String> {
        let target = url.split(['?', '#']).next().unwrap_or(url);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let mut claims = serde_json::json!({
            "jti": oauth2::CsrfToken::new_random().secret(),
            "htm": method,
            "htu": target,
            "iat": now,
        });
        if let Some(token) = token {
            let hash = sha2::Sha256::digest(token.as_bytes());
            claims["ath"] = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(hash)
                .into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|error| format!("a proof cannot be signed: {error}"))
    }

    /// The proof of a request of `method` to the MCP server at `url`, with `token`.
    pub(crate) fn server_proof(
        &self,
        method: &str,
        url: &str,
        token: &str,
    ) -> Result<String, String> {
        let nonce = lock(&self.server_nonce).clone();
        self.proof(method, url, Some(token), nonce.as_deref())
    }

    /// The MCP server asked for `nonce` in its proofs.
    pub(crate) fn server_asked(&self, nonce: &str) {
        *lock(&self.server_nonce) = Some(nonce.to_owned());
    }
}

/// The authorization server's HTTP client: with a key, each request carries a proof, and a
/// refusal that asks for a nonce is answered by sending the request again with it; without
/// one, requests go as they are.
pub(crate) struct Proving<'a> {
    web: &'a Web,
    dpop: Option<&'a Dpop>,
}

impl<'a> Proving<'a> {
    /// `web`, proving its requests with `dpop` when there is one.
    pub(crate) fn new(web: &'a Web, dpop: Option<&'a Dpop>) -> Proving<'a> {
        Proving { web, dpop }
    }
}

impl<'c> oauth2::AsyncHttpClient<'c> for Proving<'_> {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<oauth2::HttpResponse, WebError>> + Send + 'c>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(async move {
            let Some(dpop) = self.dpop else {
                return oauth2::AsyncHttpClient::call(self.web, request).await;
            };
            for _ in 0..2 {
                let nonce = lock(&dpop.issuer_nonce).clone();
                let proof = dpop
                    .proof(
                        request.method().as_str(),
                        &request.uri().to_string(),
                        None,
                        nonce.as_deref(),
                    )
                    .map_err(WebError)?;
                let mut proved = copy(&request)?;
                let value = http::HeaderValue::from_str(&proof)
                    .map_err(|error| WebError(format!("a proof that is no header: {error}")))?;
                proved.headers_mut().insert("dpop", value);
                let response = oauth2::AsyncHttpClient::call(self.web, proved).await?;
                let asked = response
                    .headers()
                    .get("dpop-nonce")
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned);
                let wants_nonce = response.status() == http::StatusCode::BAD_REQUEST
                    && serde_json::from_slice::<serde_json::Value>(response.body())
                        .is_ok_and(|body| body["error"] == "use_dpop_nonce");
                match asked {
                    Some(nonce)
                        if wants_nonce && Some(&nonce) != lock(&dpop.issuer_nonce).as_ref() =>
                    {
                        *lock(&dpop.issuer_nonce) = Some(nonce);
                    }
                    Some(nonce) => {
                        *lock(&dpop.issuer_nonce) = Some(nonce);
                        return Ok(response);
                    }
                    None => return Ok(response),
                }
            }
            Err(WebError(
                "the authorization server asked for a new proof nonce again".to_owned(),
            ))
        })
    }
}

/// Another request like `request` (an HTTP request is not `Clone`).
fn copy(request: &oauth2::HttpRequest) -> Result<oauth2::HttpRequest, WebError> {
    let mut copy = http::Request::builder()
        .method(request.method().clone())
        .uri(request.uri().clone())
        .body(request.body().clone())
        .map_err(|error| WebError(format!("a request that cannot be copied: {error}")))?;
    *copy.headers_mut() = request.headers().clone();
    Ok(copy)
}
