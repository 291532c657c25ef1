//! `server/discover` (2026-07-28): the versions this server speaks, what it offers, and who
//! it is.

use crate::mcp::connection::Connection;
use crate::mcp::jsonrpc::{self, RequestId};
use crate::mcp::pages::stateless_result;
use crate::mcp::{ServerMessage, SUPPORTED_VERSIONS};
use serde_json::{json, Map};

impl Connection {
    /// `server/discover`: the versions this server speaks, what it offers at 2026-07-28,
    /// and who it is.
    pub(super) fn discover(&self, id: &RequestId) -> ServerMessage {
        let info = &self.shared.info;
        let mut body = Map::new();
        body.insert("supportedVersions".to_owned(), json!(SUPPORTED_VERSIONS));
        let version = crate::mcp::STATELESS_VERSIONS[0];
        body.insert("capabilities".to_owned(), self.capabilities(version));
        body.insert(
            "serverInfo".to_owned(),
            json!({"name": info.name(), "version": info.version()}),
        );
        if let Some(instructions) = info.instructions() {
            body.insert("instructions".to_owned(), instructions.into());
        }
        body.insert("ttlMs".to_owned(), 3_600_000.into());
        body.insert("cacheScope".to_owned(), "public".into());
        ServerMessage::result(jsonrpc::response(id, &stateless_result(body, info)))
    }
}
