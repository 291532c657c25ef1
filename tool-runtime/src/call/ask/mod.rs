//! Asking the client while a call runs: a form for the user to fill in (elicitation), a
//! message from the client's model (sampling), the client's roots. A tool writes it one
//! way; the protocol layer decides how the question travels (a request to the client that
//! the call awaits, or an `input_required` answer that the client retries with the
//! answers).

mod form;
mod sampling;
mod url;

pub use form::ElicitForm;
pub use sampling::{Sampled, Sampling, ToolChoice, ToolUse};
pub(crate) use url::{Announcer, Pages};
pub use url::{ElicitationCompletion, UrlElicitation};

use super::context::CallContext;
use super::scope::CallScope;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;

/// What a tool can ask a client for, as the client declares it in its capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClientCapability {
    /// Form elicitation: the user fills in a form (`elicitation`, form mode).
    Elicitation,
    /// URL elicitation: the user is sent to a web page (`elicitation.url`).
    ElicitationUrl,
    /// A message from the client's model (`sampling`).
    Sampling,
    /// Sampling with tools the model may call (`sampling.tools`).
    SamplingTools,
    /// The client's roots (`roots`).
    Roots,
}

impl ClientCapability {
    /// The request that needs it.
    pub(crate) fn method(self) -> &'static str {
        match self {
            ClientCapability::Elicitation | ClientCapability::ElicitationUrl => {
                "elicitation/create"
            }
            ClientCapability::Sampling | ClientCapability::SamplingTools => {
                "sampling/createMessage"
            }
            ClientCapability::Roots => "roots/list",
        }
    }

    /// The client capabilities object that declares it, e.g. `{"elicitation": {"url": {}}}`.
    pub fn declaration(self) -> Value {
        match self {
            ClientCapability::Elicitation => json!({"elicitation": {}}),
            ClientCapability::ElicitationUrl => json!({"elicitation": {"url": {}}}),
            ClientCapability::Sampling => json!({"sampling": {}}),
            ClientCapability::SamplingTools => json!({"sampling": {"tools": {}}}),
            ClientCapability::Roots => json!({"roots": {}}),
        }
    }

    /// Whether `capabilities` (a client's capabilities object) declares it. An empty
    /// `elicitation` object means form mode only, as the specification says.
    pub fn declared_in(self, capabilities: &Value) -> bool {
        let entry = |key: &str| capabilities.get(key).filter(|v| v.is_object());
        match self {
            ClientCapability::Elicitation => entry("elicitation").is_some_and(|e| {
                e.as_object().is_some_and(|e| e.is_empty()) || e.get("form").is_some()
            }),
            ClientCapability::ElicitationUrl => {
                entry("elicitation").is_some_and(|e| e.get("url").is_some())
            }
            ClientCapability::Sampling => entry("sampling").is_some(),
            ClientCapability::SamplingTools => {
                entry("sampling").is_some_and(|s| s.get("tools").is_some())
            }
            ClientCapability::Roots => entry("roots").is_some(),
        }
    }
}

impl fmt::Display for ClientCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClientCapability::Elicitation => "elicitation",
            ClientCapability::ElicitationUrl => "URL-mode elicitation",
            ClientCapability::Sampling => "sampling",
            ClientCapability::SamplingTools => "sampling with tools",
            ClientCapability::Roots => "roots",
        })
    }
}

/// Why asking the client gave no answer.
///
/// It implements `Display`, so a tool returning `Result<T, AskError>` (or one that turns it
/// into a [`ToolError`](crate::ToolError) with `?`) reports it to the model as a tool
/// error, except where the protocol says otherwise: a question the client will answer on
/// its retry ([`InputRequired`](AskError::InputRequired)) and, at protocol 2026-07-28, a
/// capability the client did not declare are answered by the runtime as the specification
/// requires, whatever the tool returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AskError {
    /// The client did not declare the capability the question needs.
    Unsupported(ClientCapability),
    /// Nobody can be asked: the call came from the command line or a REST endpoint.
    Unavailable,
    /// The question goes to the client with this call's answer, and its answer comes with
    /// the client's retry of the call, which runs the tool again (protocol 2026-07-28).
    /// Return at once: the runtime answers the call with the questions asked.
    InputRequired,
    /// The call cannot go on until the user has been to these pages (see
    /// [`CallContext::url_elicitation_required`]). A tool returns it: over MCP the runtime
    /// then answers the call as the protocol says; elsewhere the call fails with a message
    /// naming the pages.
    UrlRequired(Vec<UrlElicitation>),
    /// The client answered with an error (for example, the user refused to let the model
    /// be sampled).
    Refused {
        /// The JSON-RPC error code the client sent.
        code: i64,
        /// The client's message.
        message: String,
    },
    /// The client's answer does not fit what was asked.
    InvalidAnswer(String),
    /// The question cannot be asked as written (a form type outside what elicitation can
    /// show; the message says which field and why).
    InvalidQuestion(String),
    /// The connection closed, or the call was cancelled, before the client answered.
    Closed,
    /// The question could not reach the client: the task it waits in could not be
    /// updated (its store failed). Calling again may succeed.
    Undelivered,
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::Unsupported(capability) => write!(
                f,
                "the client does not support {capability} (it did not declare the capability)"
            ),
            AskError::Unavailable => {
                f.write_str("there is no client to ask: this call did not come over MCP")
            }
            AskError::InputRequired => {
                f.write_str("waiting for the client's answer, which comes with its retry")
            }
            AskError::UrlRequired(pages) => {
                write!(
                    f,
                    "the user must first visit {}, then call again",
                    Pages(pages)
                )
            }
            AskError::Refused { code, message } => {
                write!(f, "the client refused: {message} (code {code})")
            }
            AskError::InvalidAnswer(why) => write!(f, "the client's answer is not valid: {why}"),
            AskError::InvalidQuestion(why) => write!(f, "the question cannot be asked: {why}"),
            AskError::Closed => f.write_str("the connection closed before the client answered"),
            AskError::Undelivered => f.write_str(
                "the question could not reach the client: the server could not record it in \
                 the task; call the tool again",
            ),
        }
    }
}

impl std::error::Error for AskError {}

impl From<AskError> for crate::ToolError {
    fn from(error: AskError) -> Self {
        crate::ToolError::new(error.to_string())
    }
}

/// The user's answer to a form (or, with `Elicited<()>`, to a URL elicitation).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Elicited<T> {
    /// The user submitted the form: its values.
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the question without choosing.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The values, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(value) => Some(value),
            _ => None,
        }
    }
}

/// One of the client's roots: a directory or file it lets servers work in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct Root {
    /// The root's URI (`file://` today).
    pub uri: String,
    /// Its name, if the client gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One question for the client, as the protocol layer sends it.
#[derive(Debug, Clone)]
pub(crate) struct Question {
    /// The key naming it among the call's questions (the `inputRequests` key at
    /// 2026-07-28).
    pub(crate) key: String,
    pub(crate) capability: ClientCapability,
    pub(crate) params: Value,
}

impl Question {
    /// The key of the call's next question needing `capability`, unless the tool names
    /// it: its kind (the method's first word: `elicitation`, `sampling`, `roots`) and its
    /// place among the call's questions.
    pub(crate) fn default_key(scope: Option<&CallScope>, capability: ClientCapability) -> String {
        let number = scope.map_or(1, CallScope::next_question);
        let kind = capability.method().split('/').next().unwrap_or_default();
        format!("{kind}-{number}")
    }
}

type AnswerFuture = Pin<Box<dyn Future<Output = Result<Value, AskError>> + Send>>;

/// How a call's questions reach its client: the protocol layer's side of asking.
pub(crate) trait Asker: Send + Sync {
    /// Whether the client declared `capability`.
    fn supports(&self, capability: ClientCapability) -> bool;
    /// Records that the call needed `capability`, which the client did not declare.
    fn missing(&self, _capability: ClientCapability) {}
    /// Asks `question`; the client's result, as JSON.
    fn ask(self: Arc<Self>, question: Question) -> AnswerFuture;
    /// Asks `questions` in the call's answer, for the client to answer by calling again,
    /// whatever earlier rounds answered; false where questions cannot wait for a retry
    /// (the handshake era).
    fn ask_on_retry(&self, _questions: Vec<Question>) -> bool {
        false
    }
    /// What reaches the call's client after the call, when anything can.
    fn announcer(self: Arc<Self>) -> Option<Arc<dyn Announcer>> {
        None
    }
    /// Records that the answer to `key` does not fit its question.
    fn rejected(&self, _key: &str, _why: &str) {}
    /// Keeps `value` under `key` for the call's next round (2026-07-28 retries).
    fn keep(&self, _key: &str, _value: Value) -> bool {
        false
    }
    /// What an earlier round of the call kept under `key`.
    fn kept(&self, _key: &str) -> Option<Value> {
        None
    }
}

/// A question not asked yet: await it for the answer. Made by [`CallContext::elicit`],
/// [`CallContext::elicit_url`], [`CallContext::sample`] and [`CallContext::roots`].
///
/// Each question of a call has a key, the name its answer comes back under when the client
/// answers on a retry of the call (protocol 2026-07-28). By default the key is the
/// question's kind and its place among the call's questions (`elicitation-1`,
/// `sampling-2`): a tool that asks the same questions in the same order on every run needs
/// nothing more. A tool whose questions depend on earlier answers names them with
/// [`key`](Ask::key).
#[must_use = "a question is asked only when awaited"]
pub struct Ask<T> {
    scope: Option<Arc<CallScope>>,
    question: Result<Question, AskError>,
    decode: fn(Value) -> Result<T, String>,
}

impl<T> fmt::Debug for Ask<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ask")
            .field("question", &self.question)
            .finish()
    }
}

impl<T> Ask<T> {
    fn new(
        scope: Option<Arc<CallScope>>,
        capability: ClientCapability,
        params: Result<Value, AskError>,
        decode: fn(Value) -> Result<T, String>,
    ) -> Ask<T> {
        let key = Question::default_key(scope.as_deref(), capability);
        let question = params.map(|params| Question {
            key,
            capability,
            params,
        });
        Ask {
            scope,
            question,
            decode,
        }
    }

    /// Names the question: its answer comes back under `key` on a retry of the call (or,
    /// in a task, through `tasks/update`). Questions a call keeps open at the same time need
    /// keys of their own; asking again under a key once the question before is over (a
    /// timeout gave up on it, say) is fine.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        if let Ok(question) = &mut self.question {
            question.key = key.into();
        }
        self
    }
}

impl<T: Send + 'static> IntoFuture for Ask<T> {
    type Output = Result<T, AskError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<T, AskError>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        let Ask {
            scope,
            question,
            decode,
        } = self;
        Box::pin(async move {
            let question = question?;
            let asker = scope
                .and_then(|scope| scope.asker.clone())
                .ok_or(AskError::Unavailable)?;
            if !asker.supports(question.capability) {
                asker.missing(question.capability);
                return Err(AskError::Unsupported(question.capability));
            }
            let key = question.key.clone();
            let answer = Arc::clone(&asker).ask(question).await?;
            decode(answer).map_err(|why| {
                asker.rejected(&key, &why);
                AskError::InvalidAnswer(why)
            })
        })
    }
}

impl CallContext {
    pub(super) fn asker(&self) -> Option<&Arc<dyn Asker>> {
        self.scope().and_then(|scope| scope.asker.as_ref())
    }

    /// Asks the user to fill in a form of type `T`, which must be a flat struct of strings,
    /// numbers, booleans and enums (the fields' doc comments become their descriptions, and
    /// with `#[serde(default)]` their defaults are shown pre-filled).
    ///
    /// ```
    /// use tool_runtime::ask::{AskError, Elicited};
    /// use tool_runtime::{tool, CallContext};
    ///
    /// /// Whether to go ahead.
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Confirm {
    ///     /// Delete them all?
    ///     confirm: bool,
    /// }
    ///
    /// /// Delete the files in the trash.
    /// #[tool]
    /// async fn empty_trash(ctx: CallContext) -> Result<String, AskError> {
    ///     match ctx.elicit::<Confirm>("Delete 40 files?").await? {
    ///         Elicited::Accepted(Confirm { confirm: true }) => Ok("deleted".into()),
    ///         _ => Ok("kept them".into()),
    ///     }
    /// }
    /// ```
    pub fn elicit<T: ElicitForm>(&self, message: impl Into<String>) -> Ask<Elicited<T>> {
        let params = T::requested_schema()
            .map(|schema| {
                json!({"mode": "form", "message": message.into(), "requestedSchema": schema})
            })
            .map_err(AskError::InvalidQuestion);
        Ask::new(
            self.scope().cloned(),
            ClientCapability::Elicitation,
            params,
            form::decode_elicited::<T>,
        )
    }

    /// Asks the client's model for a message.
    ///
    /// ```
    /// use tool_runtime::ask::{AskError, Sampling};
    /// use tool_runtime::{tool, CallContext};
    ///
    /// /// Summarize a text with the client's model.
    /// #[tool]
    /// async fn summarize(text: String, ctx: CallContext) -> Result<String, AskError> {
    ///     let asked = Sampling::new(200).user(format!("Summarize:\n{text}"));
    ///     Ok(ctx.sample(asked).await?.text())
    /// }
    /// ```
    pub fn sample(&self, request: Sampling) -> Ask<Sampled> {
        let capability = if request.uses_tools() {
            ClientCapability::SamplingTools
        } else {
            ClientCapability::Sampling
        };
        Ask::new(
            self.scope().cloned(),
            capability,
            Ok(request.into_params()),
            sampling::decode_sampled,
        )
    }

    #[cfg(feature = "client")]
    /// Asks the client what another server asked (a request of `method` with `params`, as
    /// it came), for a tool that passes another server's questions on; `None` for a method
    /// no client is asked. The answer is the client's result object, as it came.
    pub(crate) fn relay(&self, method: &str, params: Value) -> Option<Ask<Value>> {
        let capability = match method {
            "elicitation/create" if params["mode"] == "url" => ClientCapability::ElicitationUrl,
            "elicitation/create" => ClientCapability::Elicitation,
            "sampling/createMessage" if params.get("tools").is_some() => {
                ClientCapability::SamplingTools
            }
            "sampling/createMessage" => ClientCapability::Sampling,
            "roots/list" => ClientCapability::Roots,
            _ => return None,
        };
        Some(Ask::new(self.scope().cloned(), capability, Ok(params), Ok))
    }

    /// Asks the client for its roots.
    pub fn roots(&self) -> Ask<Vec<Root>> {
        Ask::new(
            self.scope().cloned(),
            ClientCapability::Roots,
            Ok(json!({})),
            decode_roots,
        )
    }

    /// Whether the client that made this call declared `capability` (false outside MCP).
    pub fn client_supports(&self, capability: ClientCapability) -> bool {
        self.asker().is_some_and(|asker| asker.supports(capability))
    }

    /// Keeps `value` for the next round of this call, when the client answers questions
    /// by retrying it (protocol 2026-07-28): it travels in the call's request state, sealed
    /// so the client cannot alter it (but can read it: keep no secrets there), and any
    /// replica of the server that shares the sealing key can read it back with
    /// [`kept`](CallContext::kept). Returns false where
    /// there is no next round to keep it for (the handshake era, where the call simply
    /// waits for its answers, or outside MCP).
    pub fn keep<T: serde::Serialize>(&self, key: &str, value: &T) -> bool {
        let Some(asker) = self.asker() else {
            return false;
        };
        serde_json::to_value(value).is_ok_and(|value| asker.keep(key, value))
    }

    /// What an earlier round of this call kept under `key`, if anything.
    pub fn kept<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.asker()
            .and_then(|asker| asker.kept(key))
            .and_then(|value| serde_json::from_value(value).ok())
    }
}

fn decode_roots(answer: Value) -> Result<Vec<Root>, String> {
    #[derive(serde::Deserialize)]
    struct Listed {
        roots: Vec<Root>,
    }
    serde_json::from_value::<Listed>(answer)
        .map(|listed| listed.roots)
        .map_err(|error| {
            format!("a roots/list result needs \"roots\", a list of {{\"uri\", \"name\"}}: {error}")
        })
}
