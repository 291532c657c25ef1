//! What authorizes the client's HTTP requests: a [`Credentials`] source, asked for the
//! `Authorization` header of each request and told when the server refuses one. A fixed
//! [`BearerToken`], or [`OAuth`]: OAuth 2.1 as the MCP authorization specification has it
//! (the server's protected-resource metadata, the authorization server's metadata, dynamic
//! registration or a client ID metadata document, PKCE, `iss` checked, refresh, step-up to
//! the scopes a refusal names), for a person at a terminal (authorization code, through the
//! browser and a loopback redirect) or a service (client credentials).
//!
//! ```no_run
//! # async fn run() -> Result<(), tool_runtime::client::ClientError> {
//! use tool_runtime::client::auth::{Loopback, OAuth};
//! use tool_runtime::client::Client;
//!
//! // A person signs in in their browser; the redirect comes back to 127.0.0.1.
//! let oauth = OAuth::builder().client_name("my-agent").authorization_code(Loopback::new()).build();
//! let client = Client::builder().credentials(oauth).connect("https://mcp.example.com/mcp").await?;
//! # Ok(()) }
//! ```

mod challenge;
mod discovery;
mod dpop;
mod grant;
mod kept;
mod loopback;
mod oauth;
mod settings;
mod turns;
mod web;

pub use challenge::Challenge;
pub use loopback::{Authorizer, Loopback};
pub use oauth::OAuth;
pub use settings::{KeyAlgorithm, OAuthBuilder};

use super::handler::Answer;

/// What authorizes requests to a server over HTTP.
///
/// The client asks [`headers`](Credentials::headers) for the headers that authorize each
/// request (`Authorization`, and a `DPoP` proof for a token bound to the client); when the
/// server refuses one (401, or 403 for scopes it lacks), it calls
/// [`refused`](Credentials::refused), and sends the request again if that says a new
/// authorization is worth a try.
pub trait Credentials: Send + Sync {
    /// The headers (names in lower case) that authorize a request of `method` (`POST`,
    /// `GET`, `DELETE`) to `url`.
    fn headers<'a>(&'a self, method: &'a str, url: &'a str) -> Answer<'a, Vec<(String, String)>>;

    /// The server refused a request: get what it asks for. `Ok(true)` sends the request
    /// again; `Ok(false)` gives up with the refusal; `Err` says why no authorization could
    /// be had.
    fn refused<'a>(&'a self, refusal: &'a Refusal) -> Answer<'a, bool> {
        let _ = refusal;
        Box::pin(async { Ok(false) })
    }
}

/// A server's refusal of a request's authorization.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Refusal {
    /// The HTTP status: 401 (no or a bad token) or 403 (a token without the scope needed).
    pub status: u16,
    /// The server's `Bearer` challenge (`WWW-Authenticate`), if it sent one.
    pub challenge: Option<Challenge>,
    /// The URL of the MCP endpoint that refused.
    pub url: String,
    /// The nonce the server wants in proofs of possession (`DPoP-Nonce`), if it sent one.
    pub dpop_nonce: Option<String>,
    /// The `Authorization` the refused request carried: credentials that have a newer one
    /// since need not authorize again.
    sent: Option<String>,
}

impl Refusal {
    pub(crate) fn new(
        status: u16,
        challenge: Option<Challenge>,
        url: &str,
        dpop_nonce: Option<String>,
    ) -> Refusal {
        Refusal {
            status,
            challenge,
            url: url.to_owned(),
            dpop_nonce,
            sent: None,
        }
    }

    pub(crate) fn sent_with(mut self, authorization: Option<String>) -> Refusal {
        self.sent = authorization;
        self
    }

    /// The `Authorization` header value the refused request carried.
    pub fn authorization_sent(&self) -> Option<&str> {
        self.sent.as_deref()
    }
}

impl std::fmt::Debug for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The credential itself is left out: debug output ends up in logs.
        f.debug_struct("Refusal")
            .field("status", &self.status)
            .field("challenge", &self.challenge)
            .field("url", &self.url)
            .field("dpop_nonce", &self.dpop_nonce)
            .field("sent", &self.sent.as_ref().map(|_| ".."))
            .finish()
    }
}

/// A token given once, sent as it is with every request (an API key, a token from a
/// secret store). A refusal is final.
#[derive(Clone)]
pub struct BearerToken(String);

impl BearerToken {
    /// Sends `token` as `Authorization: Bearer <token>`.
    pub fn new(token: impl Into<String>) -> BearerToken {
        BearerToken(token.into())
    }
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

impl Credentials for BearerToken {
    fn headers<'a>(&'a self, _method: &'a str, _url: &'a str) -> Answer<'a, Vec<(String, String)>> {
        let header = format!("Bearer {}", self.0);
        Box::pin(async move { Ok(vec![("authorization".to_owned(), header)]) })
    }
}
