//! Transports move bytes between a client and a [`Connection`](crate::mcp::Connection):
//! newline-delimited JSON over any reader and writer (stdio), and Streamable HTTP with the
//! REST endpoints (axum); and the driver that tells a server the time ([`maintenance`]).

#[cfg(feature = "http")]
pub mod http;
mod maintenance;
pub mod stdio;

pub use maintenance::maintenance;
pub(crate) use maintenance::start_maintenance;
