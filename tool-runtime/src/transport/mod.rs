//! Transports move bytes between a client and a [`Connection`](crate::mcp::Connection):
//! newline-delimited JSON over any reader and writer (stdio), and Streamable HTTP with the
//! REST endpoints (axum).

#[cfg(feature = "http")]
pub mod http;
pub mod stdio;
