//! `tools/list` pages, serialized once per version of the registry and served as bytes.

use super::{ServerInfo, Shared};
use crate::export::mcp_tool;
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};

/// The result bodies of every page, for each era.
pub(crate) struct PageSet {
    version: u64,
    handshake: Vec<String>,
    stateless: Vec<String>,
}

#[derive(Default)]
pub(crate) struct Pages {
    current: Mutex<Option<Arc<PageSet>>>,
}

/// A cursor names the offset of the page it points to.
pub(crate) fn cursor_for(offset: usize) -> String {
    format!("tools-{offset}")
}

fn offset_of(cursor: &str) -> Option<usize> {
    cursor.strip_prefix("tools-")?.parse().ok()
}

impl Pages {
    /// The page at `cursor` (`None`: the first), as a result body; `Err` for a cursor this
    /// server did not give.
    pub(crate) fn page(
        &self,
        shared: &Shared,
        cursor: Option<&str>,
        stateless: bool,
    ) -> Result<String, String> {
        let set = self.current_set(shared);
        let index = match cursor {
            None => 0,
            Some(cursor) => {
                let offset = offset_of(cursor)
                    .ok_or_else(|| format!("Invalid params: unknown cursor {cursor:?}"))?;
                if offset % shared.page_size != 0 {
                    return Err(format!("Invalid params: unknown cursor {cursor:?}"));
                }
                offset / shared.page_size
            }
        };
        let pages = if stateless {
            &set.stateless
        } else {
            &set.handshake
        };
        pages.get(index).cloned().ok_or_else(|| {
            format!("Invalid params: cursor {cursor:?} is past the end of the tool list")
        })
    }

    fn current_set(&self, shared: &Shared) -> Arc<PageSet> {
        let version = shared.registry.version();
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(set) = current.as_ref().filter(|set| set.version == version) {
            return Arc::clone(set);
        }
        let set = Arc::new(build(shared, version));
        *current = Some(Arc::clone(&set));
        set
    }
}

fn build(shared: &Shared, version: u64) -> PageSet {
    let tools: Vec<Value> = shared
        .registry
        .tools()
        .iter()
        .map(|tool| mcp_tool(tool))
        .collect();
    let chunks: Vec<&[Value]> = if tools.is_empty() {
        vec![&[]]
    } else {
        tools.chunks(shared.page_size).collect()
    };
    let count = chunks.len();
    let mut handshake = Vec::with_capacity(count);
    let mut stateless = Vec::with_capacity(count);
    // A list that can change is not cached by clients; a static one for an hour.
    let ttl_ms: u64 = if shared.list_changed { 0 } else { 3_600_000 };
    for (index, chunk) in chunks.into_iter().enumerate() {
        let mut body = Map::new();
        body.insert("tools".to_owned(), Value::Array(chunk.to_vec()));
        if index + 1 < count {
            body.insert(
                "nextCursor".to_owned(),
                cursor_for((index + 1) * shared.page_size).into(),
            );
        }
        handshake.push(Value::Object(body.clone()).to_string());
        body.insert("ttlMs".to_owned(), ttl_ms.into());
        body.insert("cacheScope".to_owned(), "public".into());
        stateless.push(stateless_result(body, &shared.info).to_string());
    }
    PageSet {
        version,
        handshake,
        stateless,
    }
}

/// Adds what every 2026-07-28 result carries: `resultType` and the server's identity.
pub(crate) fn stateless_result(mut body: Map<String, Value>, info: &ServerInfo) -> Value {
    body.insert("resultType".to_owned(), "complete".into());
    body.insert(
        "_meta".to_owned(),
        json!({"io.modelcontextprotocol/serverInfo": {"name": info.name, "version": info.version}}),
    );
    Value::Object(body)
}
