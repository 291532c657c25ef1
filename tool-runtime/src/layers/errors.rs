//! A layer's error as the call's: what a model reads when a layer refused or stopped a call.

use super::BoxError;
use crate::call::error::CallError;
use crate::catalog::Tool;
use std::time::Duration;

/// How long a call stopped by load shedding or a layer's time limit is told to wait: the
/// layer does not say, and a second is long enough for a burst to pass.
const RETRY_AFTER_A_LAYER: Duration = Duration::from_secs(1);

/// `error`, which a layer around a call of `tool` answered, as the call's error: a
/// [`CallError`] as it is, `tower`'s time limit and load shedding as refusals saying to
/// call again, and anything else as a refusal with its message.
pub(crate) fn into_call_error(tool: &Tool, error: BoxError) -> CallError {
    into_call_error_named(tool.name(), error)
}

/// [`into_call_error`], for what `name` names (a tool, or a request's target).
pub(crate) fn into_call_error_named(name: &str, error: BoxError) -> CallError {
    let error = match error.downcast::<CallError>() {
        Ok(error) => return *error,
        Err(error) => error,
    };
    if error.is::<tower::timeout::error::Elapsed>() {
        return CallError::refused(
            name,
            "it did not finish within the time limit the server sets around it",
        )
        .retry_after(RETRY_AFTER_A_LAYER);
    }
    if error.is::<tower::load_shed::error::Overloaded>() {
        return CallError::refused(name, "the server is running as many of these as it takes")
            .retry_after(RETRY_AFTER_A_LAYER);
    }
    CallError::refused(name, error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool() -> Tool {
        Tool::dynamic(
            "search".to_owned(),
            "Search.".to_owned(),
            serde_json::json!({"type": "object"}),
            None,
            Vec::new(),
        )
    }

    #[test]
    fn a_call_error_stays_what_it_is() {
        let denied = CallError::refused("search", "not on Sundays");
        assert_eq!(into_call_error(&tool(), Box::new(denied.clone())), denied);
    }

    #[test]
    fn towers_time_limit_and_load_shedding_say_to_call_again() {
        let elapsed = into_call_error(&tool(), Box::new(tower::timeout::error::Elapsed::new()));
        assert_eq!(
            elapsed.to_string(),
            "the call of 'search' was stopped: it did not finish within the time limit the \
            server sets around it; call it again in 1s"
        );
        let shed = into_call_error(
            &tool(),
            Box::new(tower::load_shed::error::Overloaded::new()),
        );
        assert!(matches!(
            shed,
            CallError::Refused {
                retry_after: Some(RETRY_AFTER_A_LAYER),
                ..
            }
        ));
    }

    #[test]
    fn any_other_error_is_a_refusal_with_its_message() {
        let other: BoxError = "the audit log is full".into();
        assert_eq!(
            into_call_error(&tool(), other).to_string(),
            "the call of 'search' was stopped: the audit log is full"
        );
    }
}
