//! The HTTP of authorization: metadata documents read, registrations and token requests
//! sent, all with one reqwest client that follows no redirect (a redirect could carry a
//! secret elsewhere), reads bounded bodies, and gives up after a time limit. It is also
//! the HTTP client of the `oauth2` crate's token requests.

use crate::client::connections::describe;
use oauth2::http;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// The largest document or token response read.
const MOST_BYTES: usize = 1024 * 1024;
/// How long one request of authorization may take.
const LIMIT: Duration = Duration::from_secs(30);

/// The client of authorization requests.
#[derive(Clone)]
pub(crate) struct Web(reqwest::Client);

/// Why a request of authorization failed.
#[derive(Debug)]
pub(crate) struct WebError(pub(crate) String);

impl std::fmt::Display for WebError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WebError {}

/// What a request got back: its status and body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    /// The body as JSON, when the status is a success.
    pub(crate) fn json(&self) -> Option<Value> {
        if !(200..300).contains(&self.status) {
            return None;
        }
        serde_json::from_slice(&self.body).ok()
    }

    /// The start of the body, for an error message.
    pub(crate) fn shown(&self) -> String {
        let text = String::from_utf8_lossy(&self.body[..self.body.len().min(300)]);
        format!("HTTP {}: {}", self.status, text.trim())
    }
}

impl Web {
    pub(crate) fn new() -> Web {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(LIMIT)
            .build()
            .unwrap_or_default();
        Web(client)
    }

    /// GETs `url` (`accept` JSON).
    pub(crate) async fn get(&self, url: &str) -> Result<Reply, WebError> {
        let request = self
            .0
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json");
        send(request).await
    }

    /// POSTs `fields` form-encoded to `url`, authenticated as `basic` (an id and a secret)
    /// when given.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        fields: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<Reply, WebError> {
        let body = oauth2::url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        let mut request = self
            .0
            .post(url)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body);
        if let Some((id, secret)) = basic {
            // RFC 6749 §2.3.1: each half form-encoded before the Basic encoding.
            let encode = |text: &str| {
                oauth2::url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>()
            };
            let pair = format!("{}:{}", encode(id), encode(secret));
            use base64::Engine;
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            request = request.header(reqwest::header::AUTHORIZATION, format!("Basic {basic}"));
        }
        send(request).await
    }

    /// POSTs `body` as JSON to `url`.
    pub(crate) async fn post_json(&self, url: &str, body: &Value) -> Result<Reply, WebError> {
        send(self.0.post(url).json(body)).await
    }
}

async fn send(request: reqwest::RequestBuilder) -> Result<Reply, WebError> {
    let response = request
        .send()
        .await
        .map_err(|error| WebError(describe(&error)))?;
    let status = response.status().as_u16();
    let body = read(response).await?;
    Ok(Reply { status, body })
}

/// The body of `response`, up to [`MOST_BYTES`].
async fn read(mut response: reqwest::Response) -> Result<Vec<u8>, WebError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| WebError(describe(&error)))?
    {
        if body.len() + chunk.len() > MOST_BYTES {
            return Err(WebError(format!(
                "the answer is larger than {MOST_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

impl<'c> oauth2::AsyncHttpClient<'c> for Web {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<oauth2::HttpResponse, WebError>> + Send + 'c>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(async move {
            let request = reqwest::Request::try_from(request)
                .map_err(|error| WebError(format!("a request that cannot be sent: {error}")))?;
            let response = self
                .0
                .execute(request)
                .await
                .map_err(|error| WebError(describe(&error)))?;
            let mut answer = http::Response::builder().status(response.status().as_u16());
            for (name, value) in response.headers() {
                answer = answer.header(name.as_str(), value.as_bytes());
            }
            let body = read(response).await?;
            answer
                .body(body)
                .map_err(|error| WebError(format!("an answer that cannot be read: {error}")))
        })
    }
}
