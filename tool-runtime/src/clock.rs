//! The wall clock the protocol layer stamps its records with, behind a trait: the system's,
//! or a test's own where such times are the subject. The one place the system's wall clock
//! is read for them.

use std::time::SystemTime;

/// The wall clock a server stamps its records with: a lease's end, when a request state
/// expires, when a stored output is forgotten.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use tool_runtime::mcp::{Clock, ServerOptions};
///
/// /// A clock that stands an hour ahead.
/// #[derive(Debug)]
/// struct Ahead;
///
/// impl Clock for Ahead {
///     fn now(&self) -> SystemTime {
///         SystemTime::now() + Duration::from_secs(3600)
///     }
/// }
///
/// let options = ServerOptions::default().clock(std::sync::Arc::new(Ahead));
/// # let _ = options;
/// ```
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The time now.
    fn now(&self) -> SystemTime;
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}
