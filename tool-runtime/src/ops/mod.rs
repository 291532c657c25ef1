//! Operating a tool server: watching each call (an audit event, metrics), limiting how
//! often tools are called, and budgets per client.

pub(crate) mod budget;
#[cfg(feature = "prometheus")]
mod prometheus;
pub(crate) mod rate;
pub(crate) mod watch;

#[cfg(feature = "prometheus")]
pub use prometheus::Prometheus;

pub use crate::catalog::time::Rate;
pub use budget::{Budget, Spent};
pub use watch::AUDIT_TARGET;
