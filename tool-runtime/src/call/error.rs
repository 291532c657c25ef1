//! Why a call did not produce a result, in words a model can act on.

use super::content::{AnswerBlocks, Content};
use std::fmt;

/// One problem with the arguments of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentProblem {
    parameter: String,
    message: String,
}

impl ArgumentProblem {
    pub(crate) fn new(parameter: impl Into<String>, message: impl Into<String>) -> Self {
        ArgumentProblem {
            parameter: parameter.into(),
            message: message.into(),
        }
    }

    /// The parameter at fault, as a path (`units`, `filter.limit`, `tags[2]`); empty when the
    /// arguments as a whole are at fault.
    pub fn parameter(&self) -> &str {
        &self.parameter
    }

    /// The problem, as one sentence naming the parameter, what was expected and what came.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ArgumentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallError {
    /// No tool has this name.
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The closest known name, when one is close.
        suggestion: Option<String>,
    },
    /// The arguments do not fit the tool's schema.
    InvalidArguments {
        /// The tool called.
        tool: String,
        /// Every problem found, in a stable order.
        problems: Vec<ArgumentProblem>,
    },
    /// The tool ran and returned an error.
    Failed {
        /// The tool called.
        tool: String,
        /// The error's message.
        message: String,
        /// `Some` for a mounted tool's error answer: its content blocks and structured
        /// content as its server sent them (the message is their text). `None` for a
        /// tool's own error.
        answer: Option<Box<FailedAnswer>>,
    },
    /// The tool panicked. The panic message is logged on the server, never returned.
    Panicked {
        /// The tool called.
        tool: String,
    },
    /// The tool ran past its time limit and was stopped.
    TimedOut {
        /// The tool called.
        tool: String,
        /// The limit.
        after: std::time::Duration,
    },
    /// The tool needs something the server was not given (its state). Logged in detail.
    Unavailable {
        /// The tool called.
        tool: String,
    },
    /// The client has spent its budget (its calls, or its output tokens); the call did not
    /// run. Its status is `budget_exceeded`.
    BudgetExceeded {
        /// The tool called.
        tool: String,
        /// What was spent.
        spent: Spent,
        /// How much of it the client has used.
        used: u64,
        /// The budget.
        limit: u64,
    },
    /// The caller's access token does not grant every OAuth scope the tool requires; the
    /// call did not run. Its status is `insufficient_scope`.
    InsufficientScope {
        /// The tool called.
        tool: String,
        /// Every scope the tool requires (not only those missing), as a new authorization
        /// must ask for them.
        scopes: Vec<String>,
    },
    /// The tool cannot go on until the user has been to these pages (a sign-in, say); the
    /// client shows them and calls again once the user is done. Its status is
    /// `url_elicitation_required`.
    UrlElicitationRequired {
        /// The tool called.
        tool: String,
        /// The pages.
        pages: Vec<crate::call::ask::UrlElicitation>,
    },
    /// A rate limit refused the call: the tool's own (all its callers together), or the
    /// client's. The call did not run; it may be made again after `retry_after`.
    RateLimited {
        /// The tool called.
        tool: String,
        /// Whether the client's limit refused it (else the tool's).
        client: bool,
        /// The limit.
        rate: crate::catalog::time::Rate,
        /// How long until a call would pass.
        retry_after: std::time::Duration,
    },
    /// The store that counts rate limits and budgets across replicas did not answer, and
    /// the server refuses calls it cannot count. The call did not run; it may be made
    /// again after `retry_after`. Its status is `limits_unreachable`.
    LimitsUnreachable {
        /// The tool called.
        tool: String,
        /// How long to wait before calling again.
        retry_after: std::time::Duration,
    },
    /// A [layer](crate::layers) around the call refused it, or stopped it while it ran: a
    /// rule of the server's (a deny rule, load shed past a limit, a time limit set around
    /// the call). Its status is `refused`; with `retry_after`, the same call may pass later.
    Refused {
        /// The tool called.
        tool: String,
        /// Why, in words a model can act on.
        reason: String,
        /// How long to wait before calling again, when a later call may pass.
        retry_after: Option<std::time::Duration>,
    },
}

impl CallError {
    /// A refusal for a [layer](crate::layers) to answer: the call of `tool` did not run (or
    /// was stopped) for `reason`, which the model reads as it is.
    ///
    /// ```
    /// use tool_runtime::CallError;
    ///
    /// let refusal = CallError::refused("delete_file", "deleting is allowed on weekdays only");
    /// assert_eq!(refusal.status(), "refused");
    /// assert_eq!(
    ///     refusal.to_string(),
    ///     "the call of 'delete_file' was stopped: deleting is allowed on weekdays only"
    /// );
    /// ```
    pub fn refused(tool: impl Into<String>, reason: impl Into<String>) -> Self {
        CallError::Refused {
            tool: tool.into(),
            reason: reason.into(),
            retry_after: None,
        }
    }

    /// The same refusal, saying that the call may pass when made again after `wait`.
    /// Other errors are returned as they are.
    pub fn retry_after(self, wait: std::time::Duration) -> Self {
        match self {
            CallError::Refused { tool, reason, .. } => CallError::Refused {
                tool,
                reason,
                retry_after: Some(wait),
            },
            other => other,
        }
    }

    /// The kind of failure as one stable word (`unknown_tool`, `invalid_arguments`,
    /// `failed`, `panicked`, `timed_out`, `unavailable`, `insufficient_scope`,
    /// `url_elicitation_required`, `rate_limited`, `budget_exceeded`, `limits_unreachable`,
    /// `refused`),
    /// as audit events and metrics name it and programs can match on.
    pub fn status(&self) -> &'static str {
        match self {
            CallError::UnknownTool { .. } => "unknown_tool",
            CallError::InvalidArguments { .. } => "invalid_arguments",
            CallError::Failed { .. } => "failed",
            CallError::Panicked { .. } => "panicked",
            CallError::TimedOut { .. } => "timed_out",
            CallError::Unavailable { .. } => "unavailable",
            CallError::InsufficientScope { .. } => "insufficient_scope",
            CallError::UrlElicitationRequired { .. } => "url_elicitation_required",
            CallError::RateLimited { .. } => "rate_limited",
            CallError::BudgetExceeded { .. } => "budget_exceeded",
            CallError::LimitsUnreachable { .. } => "limits_unreachable",
            CallError::Refused { .. } => "refused",
        }
    }

    /// Whether the caller can fix this by changing the arguments or the tool name.
    pub fn is_caller_error(&self) -> bool {
        matches!(
            self,
            CallError::UnknownTool { .. } | CallError::InvalidArguments { .. }
        )
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::UnknownTool {
                name,
                suggestion: Some(suggestion),
            } => write!(f, "unknown tool '{name}'; did you mean '{suggestion}'?"),
            CallError::UnknownTool {
                name,
                suggestion: None,
            } => write!(f, "unknown tool '{name}'"),
            CallError::InvalidArguments { tool, problems } => {
                write!(f, "invalid arguments for {tool}: ")?;
                f.write_str(&crate::schema::validate::join_problems(
                    problems.iter().map(|problem| problem.message()),
                ))
            }
            CallError::Failed { message, .. } => f.write_str(message),
            CallError::Panicked { tool } => write!(
                f,
                "tool '{tool}' failed unexpectedly; the details were logged on the server"
            ),
            CallError::TimedOut { tool, after } => write!(
                f,
                "tool '{tool}' did not finish within {} and was stopped",
                crate::catalog::time::show_duration(*after)
            ),
            CallError::Unavailable { tool } => write!(
                f,
                "tool '{tool}' is not available: the server is missing its configuration"
            ),
            CallError::BudgetExceeded {
                tool,
                spent,
                used,
                limit,
            } => write!(
                f,
                "budget exceeded: this client has used {used} of its {limit} {}, so '{tool}' was \
                not called; stop, or start a new session",
                spent.unit()
            ),
            CallError::InsufficientScope { tool, scopes } => {
                let (noun, pronoun) = match scopes.len() {
                    1 => ("scope", "it"),
                    _ => ("scopes", "them"),
                };
                write!(
                    f,
                    "tool '{tool}' requires the {noun} {}; this client's access token does not \
                    grant {pronoun}, so the tool was not called. The user must authorize {pronoun} \
                    first",
                    scopes.join(" ")
                )
            }
            CallError::UrlElicitationRequired { tool, pages } => write!(
                f,
                "tool '{tool}' needs the user to visit {} first; call it again once they are done",
                crate::call::ask::Pages(pages)
            ),
            CallError::RateLimited {
                tool,
                client,
                rate,
                retry_after,
            } => {
                let wait = crate::catalog::time::show_duration(*retry_after);
                let calls = rate.of("calls");
                if *client {
                    write!(
                        f,
                        "too many calls: this client may make {calls}; call '{tool}' again in \
                        {wait}"
                    )
                } else {
                    write!(f, "tool '{tool}' allows {calls}; call it again in {wait}")
                }
            }
            CallError::LimitsUnreachable { tool, retry_after } => write!(
                f,
                "tool '{tool}' was not called: the service cannot count its rate limits right now; \
                call it again in {}",
                crate::catalog::time::show_duration(*retry_after)
            ),
            CallError::Refused {
                tool,
                reason,
                retry_after,
            } => {
                write!(f, "the call of '{tool}' was stopped: {reason}")?;
                match retry_after {
                    Some(wait) => write!(
                        f,
                        "; call it again in {}",
                        crate::catalog::time::show_duration(*wait)
                    ),
                    None => Ok(()),
                }
            }
        }
    }
}

impl std::error::Error for CallError {}

/// What a failed tool answered beside its message: another server's error answer, its
/// content blocks (annotations, `_meta` and all) and structured content as that server
/// sent them, so that MCP callers of a mounted tool see its error as the server wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedAnswer {
    pub(crate) blocks: AnswerBlocks,
    pub(crate) structured: Option<serde_json::Value>,
}

/// Answers are equal when they are written the same; JSON has no value unequal to itself.
impl Eq for FailedAnswer {}

impl FailedAnswer {
    /// The answer's content blocks of a kind [`Content`] knows (what `Content` does not
    /// model, such as annotations, left out; [`blocks`](Self::blocks) has it all).
    pub fn content(&self) -> &[Content] {
        self.blocks.read()
    }

    /// The answer's content blocks with all the server put in them (annotations, `_meta`),
    /// as a JSON list. MCP callers are sent the very text the server sent.
    pub fn blocks(&self) -> serde_json::Value {
        self.blocks.to_value()
    }

    /// The answer's structured content, when it had some.
    pub fn structured_content(&self) -> Option<&serde_json::Value> {
        self.structured.as_ref()
    }
}

/// Which part of a budget was spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Spent {
    /// The calls.
    Calls,
    /// The output tokens.
    OutputTokens,
}

impl Spent {
    /// What is counted, in words.
    pub fn unit(self) -> &'static str {
        match self {
            Spent::Calls => "calls",
            Spent::OutputTokens => "output tokens",
        }
    }
}
