//! URL-mode elicitation: sending the user to a page of the server's own (a sign-in, a
//! payment, a secret to type in) that the client only shows, never sees through. A tool
//! asks and waits ([`CallContext::elicit_url`]), or stops at once and lets the client call
//! again once the user is done ([`CallContext::url_elicitation_required`]); the server's
//! page tells the client when the user finished ([`ElicitationCompletion`]).

use super::{Ask, AskError, ClientCapability, Elicited, Question};
use crate::call::context::CallContext;
use serde_json::{json, Value};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A page to send the user to: why (the message the client shows), where (the URL), and the
/// id that names this interaction.
///
/// The id is unguessable unless you give your own ([`with_id`](Self::with_id)), so a page
/// can take it as proof of which interaction it serves: make it first when the URL must
/// carry it.
///
/// ```
/// use tool_runtime::ask::UrlElicitation;
///
/// let id = UrlElicitation::new_id();
/// let connect = UrlElicitation::new(
///     "Connect your Example Co account",
///     format!("https://example.com/connect?elicitation={id}"),
/// )
/// .with_id(id.clone());
/// assert_eq!(connect.id(), id);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlElicitation {
    message: String,
    url: String,
    id: String,
}

impl UrlElicitation {
    /// Sends the user to `url`, saying `message`, under a fresh unguessable id.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        UrlElicitation {
            message: message.into(),
            url: url.into(),
            id: Self::new_id(),
        }
    }

    /// A fresh unguessable id (32 hex digits), for a URL that must carry its id.
    pub fn new_id() -> String {
        crate::call::ids::unguessable_id()
    }

    /// The same page under the id `id` (one your page already knows, say).
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// The id naming this interaction (`elicitationId` in the handshake era).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What the client shows the user.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The page.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// As MCP spells it in `elicitation/create` and in the -32042 error.
    pub(crate) fn params(&self) -> Value {
        json!({
            "mode": "url",
            "message": self.message,
            "url": self.url,
            "elicitationId": self.id,
        })
    }
}

impl fmt::Display for UrlElicitation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.url)
    }
}

/// Pages as a message names them: `message (url)`, joined with "and".
pub(crate) struct Pages<'a>(pub(crate) &'a [UrlElicitation]);

impl fmt::Display for Pages<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, page) in self.0.iter().enumerate() {
            if n > 0 {
                f.write_str(" and ")?;
            }
            write!(f, "{page}")?;
        }
        Ok(())
    }
}

/// Sends a notification to the client of a call, during the call or after it ended, for
/// as long as the client's connection lasts.
pub(crate) trait Announcer: Send + Sync {
    /// Sends `method` with `params`; whether it went out.
    fn announce(&self, method: &str, params: Value) -> bool;
}

/// Tells the client that the user finished at the page of a URL elicitation
/// (`notifications/elicitation/complete`), so it can retry what waited for it.
///
/// Made by [`CallContext::elicitation_completion`]. It is `'static`, `Clone` and `Send`:
/// keep it where the page's handler finds it (by the elicitation's id), and call
/// [`complete`](Self::complete) when the user is done, during the call or after it ended.
/// It reaches only the client whose call made it. Protocol 2026-07-28 has no such
/// notification (the client learns the outcome by calling again), and nor does a call
/// that did not come over MCP: there it does nothing.
#[derive(Clone)]
pub struct ElicitationCompletion {
    id: String,
    to: Option<Arc<dyn Announcer>>,
    sent: Arc<AtomicBool>,
}

impl fmt::Debug for ElicitationCompletion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ElicitationCompletion")
            .field("id", &self.id)
            .field("reaches_a_client", &self.to.is_some())
            .field("sent", &self.sent.load(Ordering::Relaxed))
            .finish()
    }
}

impl ElicitationCompletion {
    /// The id of the elicitation it completes.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Tells the client, once: true when the notification went out now (false when it was
    /// sent before, when there is no client to tell, or when no stream to it is open; a
    /// later call tries again).
    pub fn complete(&self) -> bool {
        let Some(to) = &self.to else {
            return false;
        };
        if self.sent.swap(true, Ordering::AcqRel) {
            return false;
        }
        let sent = to.announce(
            "notifications/elicitation/complete",
            json!({"elicitationId": self.id}),
        );
        if !sent {
            // Nowhere to send it now (no stream open): a later call may find one.
            self.sent.store(false, Ordering::Release);
        }
        sent
    }
}

impl CallContext {
    /// Sends the user to a page of yours, for what must not pass through the client (a
    /// sign-in, a payment, a secret), and waits for their answer. `Accepted` means the user
    /// agreed to open it, not that they finished there: your page knows that, and can tell
    /// the client with an [`ElicitationCompletion`].
    ///
    /// ```
    /// use tool_runtime::ask::{AskError, Elicited, UrlElicitation};
    /// use tool_runtime::{tool, CallContext};
    ///
    /// /// Sign in to Example Co.
    /// #[tool]
    /// async fn sign_in(ctx: CallContext) -> Result<String, AskError> {
    ///     let page = UrlElicitation::new("Sign in to Example Co", "https://example.com/sign-in");
    ///     Ok(match ctx.elicit_url(page).await? {
    ///         Elicited::Accepted(()) => "the user is signing in".into(),
    ///         _ => "the user would rather not".into(),
    ///     })
    /// }
    /// ```
    pub fn elicit_url(&self, page: UrlElicitation) -> Ask<Elicited<()>> {
        Ask::new(
            self.scope().cloned(),
            ClientCapability::ElicitationUrl,
            Ok(page.params()),
            decode_url_elicited,
        )
    }

    /// Stops the call until the user has been to `pages`: return the error it gives. The
    /// client shows the pages and calls again once the user is done, and the tool then
    /// runs from the start (check first whether what the pages are for is done).
    ///
    /// Calling it records the pages for this call: if the tool then returns an error (this
    /// one, or any other), the call is answered as needing the pages. In the handshake era
    /// that is the error the protocol names for it (-32042, URL elicitation required,
    /// listing the pages), for a `tools/call` and for a 2025-11-25 task's result alike; at
    /// 2026-07-28 the call is answered `input_required` with the pages as questions, asked
    /// again on every round until the tool stops asking (a 2026-07-28 call that has
    /// already become a task cannot be retried, so there it fails as a tool error naming
    /// the pages). A client that did not declare URL-mode elicitation gets
    /// [`AskError::Unsupported`] instead (which, at 2026-07-28, the runtime answers with
    /// -32021). A call that did not come over MCP fails with a message naming the pages.
    /// An empty list is refused with [`AskError::InvalidQuestion`].
    ///
    /// ```
    /// use tool_runtime::ask::{AskError, UrlElicitation};
    /// use tool_runtime::{tool, CallContext};
    ///
    /// fn token_for(_user: Option<&str>) -> Option<String> { None }
    ///
    /// /// List the user's Example Co files.
    /// #[tool]
    /// async fn list_files(ctx: CallContext) -> Result<Vec<String>, AskError> {
    ///     let Some(_token) = token_for(ctx.caller().subject()) else {
    ///         let connect = UrlElicitation::new(
    ///             "Connect your Example Co account",
    ///             "https://example.com/connect",
    ///         );
    ///         return Err(ctx.url_elicitation_required([connect]));
    ///     };
    ///     Ok(vec!["notes.txt".into()])
    /// }
    /// ```
    pub fn url_elicitation_required(
        &self,
        pages: impl IntoIterator<Item = UrlElicitation>,
    ) -> AskError {
        let pages: Vec<UrlElicitation> = pages.into_iter().collect();
        if pages.is_empty() {
            return AskError::InvalidQuestion(
                "url_elicitation_required needs at least one page for the user to visit".to_owned(),
            );
        }
        let Some(scope) = self.scope() else {
            return AskError::UrlRequired(pages);
        };
        let Some(asker) = &scope.asker else {
            // Nobody to ask: the call fails, its message naming the pages.
            scope.require_pages(&pages);
            return AskError::UrlRequired(pages);
        };
        if !asker.supports(ClientCapability::ElicitationUrl) {
            asker.missing(ClientCapability::ElicitationUrl);
            return AskError::Unsupported(ClientCapability::ElicitationUrl);
        }
        let questions = pages
            .iter()
            .map(|page| Question {
                key: Question::default_key(Some(scope), ClientCapability::ElicitationUrl),
                capability: ClientCapability::ElicitationUrl,
                params: page.params(),
            })
            .collect();
        if asker.ask_on_retry(questions) {
            return AskError::InputRequired;
        }
        scope.require_pages(&pages);
        AskError::UrlRequired(pages)
    }

    /// What tells this call's client that the user finished at `page` (see
    /// [`ElicitationCompletion`]).
    pub fn elicitation_completion(&self, page: &UrlElicitation) -> ElicitationCompletion {
        ElicitationCompletion {
            id: page.id.clone(),
            // Only a client that takes URL elicitations can have been sent to a page.
            to: self
                .asker()
                .filter(|asker| asker.supports(ClientCapability::ElicitationUrl))
                .and_then(|asker| Arc::clone(asker).announcer()),
            sent: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// The answer to a URL elicitation.
fn decode_url_elicited(answer: Value) -> Result<Elicited<()>, String> {
    Ok(match super::form::action(&answer)? {
        "accept" => Elicited::Accepted(()),
        "decline" => Elicited::Declined,
        _ => Elicited::Cancelled,
    })
}
