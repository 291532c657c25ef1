//! What a server may ask of a client, and who answers: elicitation (a form for the user,
//! or a page to visit), sampling (a message from the client's model), and the client's
//! roots. A [`ClientHandler`] of the user's answers them; without one, the client declares
//! none of these capabilities and a server that asks anyway is told no.

use serde_json::Value;
use std::future::Future;
use std::pin::Pin;

/// What [`ClientHandler`] methods return.
pub type Answer<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + Send + 'a>>;

/// How a user answered an elicitation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Elicitation {
    /// The user submitted the form (for a form; an empty object for a page they visited).
    Accept(serde_json::Map<String, Value>),
    /// The user said no.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

impl Elicitation {
    /// The result object the protocol sends back.
    pub(crate) fn to_result(&self) -> Value {
        match self {
            Elicitation::Accept(content) => {
                serde_json::json!({"action": "accept", "content": content})
            }
            Elicitation::Decline => serde_json::json!({"action": "decline"}),
            Elicitation::Cancel => serde_json::json!({"action": "cancel"}),
        }
    }
}

/// Answers what a server asks of the client. Every method has a default that refuses, so a
/// handler implements what it supports and says so in [`supports`](ClientHandler::supports).
///
/// ```
/// use serde_json::{json, Map, Value};
/// use tool_runtime::client::{Answer, ClientHandler, Elicitation};
///
/// /// Accepts every form with the defaults it declares.
/// struct Defaults;
///
/// impl ClientHandler for Defaults {
///     fn supports(&self, capability: &str) -> bool {
///         capability == "elicitation"
///     }
///
///     fn elicit<'a>(&'a self, _message: &'a str, schema: &'a Value) -> Answer<'a, Elicitation> {
///         let mut content = Map::new();
///         for (name, property) in schema["properties"].as_object().into_iter().flatten() {
///             if let Some(default) = property.get("default") {
///                 content.insert(name.clone(), default.clone());
///             }
///         }
///         Box::pin(async move { Ok(Elicitation::Accept(content)) })
///     }
/// }
/// # let _ = Defaults;
/// ```
pub trait ClientHandler: Send + Sync {
    /// Whether the handler answers `capability`: `"elicitation"` (forms), `"elicitation.url"`
    /// (pages to visit), `"sampling"` or `"roots"`. What it supports is declared to servers.
    fn supports(&self, capability: &str) -> bool {
        let _ = capability;
        false
    }

    /// A form for the user: `message` says why, `schema` is the form (a flat object
    /// schema). The answer's content is checked against the schema before it is sent.
    fn elicit<'a>(&'a self, message: &'a str, schema: &'a Value) -> Answer<'a, Elicitation> {
        let _ = (message, schema);
        Box::pin(async { Ok(Elicitation::Decline) })
    }

    /// A page for the user to visit at `url` (for a sign-in, a payment), with the id the
    /// server's completion notification will name.
    fn elicit_url<'a>(
        &'a self,
        message: &'a str,
        url: &'a str,
        elicitation_id: &'a str,
    ) -> Answer<'a, Elicitation> {
        let _ = (message, url, elicitation_id);
        Box::pin(async { Ok(Elicitation::Decline) })
    }

    /// A message from the client's model: `params` as `sampling/createMessage` sends them;
    /// the answer is the result object (`role`, `content`, `model`, `stopReason`).
    fn sample<'a>(&'a self, params: &'a Value) -> Answer<'a, Value> {
        let _ = params;
        Box::pin(async { Err("this client does not sample".to_owned()) })
    }

    /// The client's roots, as `roots/list` answers them (`[{"uri": "file:///...", "name":
    /// "..."}]`).
    fn roots(&self) -> Answer<'_, Vec<Value>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Answers a question of `method` with `params` as a whole, its result object as the
    /// protocol has it: for a client that passes questions on (to its own client, say).
    /// `None`, the default, leaves the question to the methods above.
    fn relay<'a>(&'a self, method: &'a str, params: &'a Value) -> Option<Answer<'a, Value>> {
        let _ = (method, params);
        None
    }
}

/// The handler of a client given none: it answers nothing.
pub(crate) struct Nobody;

impl ClientHandler for Nobody {}

/// The capabilities a client with `handler` declares.
pub(crate) fn capabilities(handler: &dyn ClientHandler) -> Value {
    let mut capabilities = serde_json::Map::new();
    let forms = handler.supports("elicitation");
    let pages = handler.supports("elicitation.url");
    if forms || pages {
        let mut elicitation = serde_json::Map::new();
        if forms {
            elicitation.insert("form".to_owned(), serde_json::json!({}));
        }
        if pages {
            elicitation.insert("url".to_owned(), serde_json::json!({}));
        }
        capabilities.insert("elicitation".to_owned(), Value::Object(elicitation));
    }
    if handler.supports("sampling") {
        capabilities.insert("sampling".to_owned(), serde_json::json!({}));
    }
    if handler.supports("roots") {
        capabilities.insert(
            "roots".to_owned(),
            serde_json::json!({"listChanged": false}),
        );
    }
    Value::Object(capabilities)
}

/// What the client answers a server's question of `method` with `params`: the result, or
/// the error code and message. The answer of an elicitation is checked against the form.
pub(crate) async fn answer(
    handler: &dyn ClientHandler,
    method: &str,
    params: &Value,
) -> Result<Value, (i64, String)> {
    use crate::mcp::jsonrpc::code;
    let refuse = |why: String| (code::INVALID_REQUEST, why);
    if method != "ping" {
        if let Some(answered) = handler.relay(method, params) {
            return answered.await.map_err(|why| (code::INTERNAL_ERROR, why));
        }
    }
    match method {
        "ping" => Ok(serde_json::json!({})),
        "elicitation/create" => {
            let message = params["message"].as_str().unwrap_or_default();
            let answered = if params["mode"] == "url" {
                if !handler.supports("elicitation.url") {
                    return Err(refuse("this client does not visit pages".to_owned()));
                }
                let url = params["url"].as_str().unwrap_or_default();
                let id = params["elicitationId"].as_str().unwrap_or_default();
                handler.elicit_url(message, url, id).await
            } else {
                if !handler.supports("elicitation") {
                    return Err(refuse("this client shows no forms".to_owned()));
                }
                let schema = &params["requestedSchema"];
                match handler.elicit(message, schema).await {
                    Ok(Elicitation::Accept(content)) => {
                        check_form(schema, &content).map_err(|why| (code::INTERNAL_ERROR, why))?;
                        Ok(Elicitation::Accept(content))
                    }
                    other => other,
                }
            };
            answered
                .map(|elicitation| elicitation.to_result())
                .map_err(|why| (code::INTERNAL_ERROR, why))
        }
        "sampling/createMessage" if handler.supports("sampling") => handler
            .sample(params)
            .await
            .map_err(|why| (code::INTERNAL_ERROR, why)),
        "roots/list" if handler.supports("roots") => handler
            .roots()
            .await
            .map(|roots| serde_json::json!({"roots": roots}))
            .map_err(|why| (code::INTERNAL_ERROR, why)),
        _ => Err((
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method} (this client does not answer it)"),
        )),
    }
}

/// Checks an elicitation answer against its form with the runtime's own validator, so a
/// handler's mistake is caught here rather than by the server.
fn check_form(schema: &Value, content: &serde_json::Map<String, Value>) -> Result<(), String> {
    let validator = crate::schema::validate::Validator::for_schema(schema)
        .map_err(|why| format!("the form's schema cannot be checked: {why}"))?;
    let problems = validator.problems(schema, &Value::Object(content.clone()));
    match problems.first() {
        None => Ok(()),
        Some(problem) => Err(format!(
            "the answer does not fit the form: {}",
            problem.message
        )),
    }
}
