//! A [`Model`] over any server of the OpenAI Chat Completions API (OpenAI, vLLM,
//! llama.cpp, Ollama, LiteLLM), streaming included, with time limits, retries with backoff
//! on 429 and 5xx, and errors that say what the server answered.

use super::looping::{Model, ModelError, ModelRequest};
use super::Dialect;
use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// A client of an OpenAI-compatible Chat Completions endpoint.
///
/// ```no_run
/// use tool_runtime::agent::openai::ChatClient;
/// use tool_runtime::agent::{AgentLoop, Dialect, Tools};
/// use tool_runtime::Registry;
///
/// # async fn run() {
/// let registry = Registry::new().unwrap();
/// let model = ChatClient::new("https://api.openai.com/v1", "gpt-4.1-mini")
///     .api_key(std::env::var("OPENAI_API_KEY").unwrap())
///     .streaming(true);
/// let outcome = AgentLoop::new(model, Tools::new(&registry))
///     .run(vec![Dialect::OpenAiChat.user_message("What's the weather in Paris?")])
///     .await;
/// println!("{}: {:?}", outcome.status, outcome.text);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ChatClient {
    http: reqwest::Client,
    url: String,
    api_key: Option<String>,
    model: String,
    stream: bool,
    retries: u32,
    backoff: Duration,
    timeout: Duration,
    parameters: Map<String, Value>,
}

/// HTTP statuses worth asking again: rate limited, or the server failed for now.
fn retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500 | 502 | 503 | 504)
}

/// The longest wait between tries, whatever a `Retry-After` asks.
const MAX_WAIT: Duration = Duration::from_secs(60);

impl ChatClient {
    /// A client of the API at `base_url` (such as `https://api.openai.com/v1` or
    /// `http://127.0.0.1:11434/v1`), asking `model`. It waits at most two minutes for a
    /// response, and tries three more times on 429 and 5xx, half a second apart at first.
    pub fn new(base_url: &str, model: impl Into<String>) -> ChatClient {
        // rustls needs a process-wide crypto provider; ring needs no C toolchain. Another
        // one installed first is fine too.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        ChatClient {
            http,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            api_key: None,
            model: model.into(),
            stream: false,
            retries: 3,
            backoff: Duration::from_millis(500),
            timeout: Duration::from_secs(120),
            parameters: Map::new(),
        }
    }

    /// Sends `key` as the bearer token.
    pub fn api_key(mut self, key: impl Into<String>) -> ChatClient {
        self.api_key = Some(key.into());
        self
    }

    /// Whether responses are streamed (server-sent events, the usage asked for in the
    /// last event); off by default. The loop gets the same response either way.
    pub fn streaming(mut self, on: bool) -> ChatClient {
        self.stream = on;
        self
    }

    /// Tries again at most `retries` times on 429, 5xx and failed connections.
    pub fn max_retries(mut self, retries: u32) -> ChatClient {
        self.retries = retries;
        self
    }

    /// The first wait between tries (doubled each time, unless the server says how long
    /// with `Retry-After`).
    pub fn backoff(mut self, first: Duration) -> ChatClient {
        self.backoff = first;
        self
    }

    /// The most a response may take, streamed or not.
    pub fn timeout(mut self, limit: Duration) -> ChatClient {
        self.timeout = limit;
        self
    }

    /// Sends `name: value` with every request (`temperature`, `max_tokens`,
    /// `parallel_tool_calls`...).
    pub fn parameter(mut self, name: impl Into<String>, value: Value) -> ChatClient {
        self.parameters.insert(name.into(), value);
        self
    }

    /// The request body for `request`.
    fn body(&self, request: &ModelRequest) -> Value {
        let mut body = self.parameters.clone();
        body.insert("model".to_owned(), Value::String(self.model.clone()));
        body.insert("messages".to_owned(), Value::Array(request.history.clone()));
        if request
            .tools
            .as_array()
            .is_some_and(|tools| !tools.is_empty())
        {
            body.insert("tools".to_owned(), request.tools.clone());
        }
        if self.stream {
            body.insert("stream".to_owned(), Value::Bool(true));
            body.insert("stream_options".to_owned(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }

    /// The response to `request` (a streamed one put together as one response).
    pub async fn complete(&self, request: &ModelRequest) -> Result<Value, ModelError> {
        let body = self.body(request);
        let mut wait = self.backoff;
        let mut tries = 0;
        loop {
            let error = match self.try_once(&body).await {
                Ok(response) => return Ok(response),
                Err(Attempt::Final(error)) => return Err(error),
                Err(Attempt::Again(error, asked)) => {
                    if let Some(asked) = asked {
                        wait = asked.min(MAX_WAIT);
                    }
                    error
                }
            };
            if tries >= self.retries {
                return Err(error);
            }
            tries += 1;
            tracing::debug!(%error, ?wait, "model request failed; trying again");
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(MAX_WAIT);
        }
    }

    async fn try_once(&self, body: &Value) -> Result<Value, Attempt> {
        let mut post = self.http.post(&self.url).timeout(self.timeout).json(body);
        if let Some(key) = &self.api_key {
            post = post.bearer_auth(key);
        }
        let response = post.send().await.map_err(|error| {
            let again = error.is_connect() || error.is_timeout() || error.is_request();
            let error = ModelError::new(format!(
                "could not reach {}: {}",
                self.url,
                describe(&error)
            ));
            if again {
                Attempt::Again(error, None)
            } else {
                Attempt::Final(error)
            }
        })?;
        let status = response.status().as_u16();
        if !response.status().is_success() {
            let asked = retry_after(response.headers());
            let text = response.text().await.unwrap_or_default();
            let error = ModelError::http(status, server_message(&text));
            return Err(if retryable(status) {
                Attempt::Again(error, asked)
            } else {
                Attempt::Final(error)
            });
        }
        let streamed = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        if streamed {
            return read_stream(response).await.map_err(Attempt::Final);
        }
        let text = response.text().await.map_err(|error| {
            Attempt::Again(
                ModelError::new(format!("the response was cut off: {}", describe(&error))),
                None,
            )
        })?;
        serde_json::from_str(&text).map_err(|error| {
            Attempt::Final(ModelError::new(format!(
                "the response is not JSON ({error}): {}",
                cut(&text, 300)
            )))
        })
    }
}

impl Model for ChatClient {
    fn dialect(&self) -> Dialect {
        Dialect::OpenAiChat
    }

    async fn respond(&self, request: &ModelRequest) -> Result<Value, ModelError> {
        self.complete(request).await
    }
}

/// A failed try: worth another (after the wait the server asked for, if any), or not.
enum Attempt {
    Again(ModelError, Option<Duration>),
    Final(ModelError),
}

/// An error with its causes, which reqwest keeps apart.
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// `Retry-After` in seconds, when the server sent it so.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// What a server said in an error response: its `error.message` when it sent the API's
/// error object, else the start of its text.
fn server_message(text: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    let message = parsed.as_ref().and_then(|body| {
        body.pointer("/error/message")
            .or_else(|| body.get("error"))
            .or_else(|| body.get("message"))
            .and_then(Value::as_str)
    });
    match message {
        Some(message) => message.to_owned(),
        None if text.trim().is_empty() => "an empty body".to_owned(),
        None => cut(text, 500),
    }
}

fn cut(text: &str, most: usize) -> String {
    if text.len() <= most {
        return text.to_owned();
    }
    let mut end = most;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// Reads a streamed response to its end and puts it together as one response.
async fn read_stream(response: reqwest::Response) -> Result<Value, ModelError> {
    let mut merged = super::sse::Merged::default();
    let mut events = super::sse::data_of(response.bytes_stream(), super::sse::MAX_EVENT_BYTES);
    while let Some(data) = events.next().await {
        let data = data?;
        if data.trim() == "[DONE]" {
            return Ok(merged.into_response());
        }
        let event: Value = serde_json::from_str(&data).map_err(|error| {
            ModelError::new(format!(
                "a streamed event is not JSON ({error}): {}",
                cut(&data, 300)
            ))
        })?;
        if event.get("error").is_some() {
            return Err(ModelError::new(format!(
                "the server ended the stream with an error: {}",
                server_message(&data)
            )));
        }
        merged.add(&event);
    }
    // Some servers end without `[DONE]`: what came is the response, if it finished.
    if merged.finished() {
        Ok(merged.into_response())
    } else {
        Err(ModelError::new(
            "the stream ended before the response was complete",
        ))
    }
}
