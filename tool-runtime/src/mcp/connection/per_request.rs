//! What only 2026-07-28 has: each request says in `_meta` what a session would have kept
//! (the client's capabilities, the log level it wants), `server/discover` says what the
//! server speaks, and `subscriptions/listen` opens a stream of notifications.

use super::super::jsonrpc::{self, RequestId};
use super::super::outbox::Outbox;
use super::super::pages::stateless_result;
use super::super::params::{self, ListenParams, PerRequestMeta};
use super::super::work::Work;
use super::super::{ServerMessage, SUPPORTED_VERSIONS};
use super::calls::Origin;
use super::watch::Listening;
use super::Connection;
use crate::call::caller::Caller;
use crate::call::scope::LogLevel;
use crate::registry::ListsChanged;
use serde_json::{json, Map, Value};

/// A log level no message reaches: 2026-07-28 requests without a level get no logs.
pub(super) const NO_LOGS: u8 = u8::MAX;

impl Connection {
    /// How a 2026-07-28 request came: the capabilities and the log level its `_meta`
    /// names; else why it is refused (-32602).
    pub(super) fn per_request_origin<'a>(
        &self,
        meta: Option<&Map<String, Value>>,
        caller: &'a Caller,
    ) -> Result<Origin<'a>, String> {
        let declared: PerRequestMeta = params::read_meta(meta)?;
        let level = match declared.log_level {
            None => NO_LOGS,
            Some(level) => match LogLevel::from_name(&level) {
                Some(level) => level as u8,
                None => {
                    return Err(format!(
                        "Invalid params: _meta[\"io.modelcontextprotocol/logLevel\"] is not a \
                         log level; got {level:?}"
                    ))
                }
            },
        };
        Ok(Origin::per_request(level, declared.capabilities, caller))
    }

    /// `server/discover`: the versions this server speaks, what it offers at 2026-07-28,
    /// and who it is.
    pub(super) fn discover(&self, id: &RequestId) -> ServerMessage {
        let info = &self.shared.info;
        let mut body = Map::new();
        body.insert("supportedVersions".to_owned(), json!(SUPPORTED_VERSIONS));
        let version = super::super::STATELESS_VERSIONS[0];
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

    /// `subscriptions/listen`: honors what it can of what the client asked (list changes of
    /// the lists announced as changing, updates of resources when resources are offered),
    /// then streams those notifications until cancelled.
    pub(super) fn listen(
        &self,
        id: RequestId,
        params: ListenParams,
        sink: &Outbox,
    ) -> Option<Work> {
        let wanted = params.notifications;
        let lists = ListsChanged::from_flags([wanted.tools, wanted.prompts, wanted.resources])
            .and(self.shared.list_changed);
        let resources = match self.shared.offered.resources {
            true => wanted.resource_uris.into_iter().collect(),
            false => Default::default(),
        };
        self.listen_stream(id, Listening { lists, resources }, sink)
    }
}
