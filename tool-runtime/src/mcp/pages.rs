//! List pages (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`),
//! serialized once (tools: once per version of the registry) and served as bytes.

use super::{ServerInfo, Shared};
use crate::export::mcp_tool;
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex, OnceLock};

/// The result bodies of every page, for each era.
pub(crate) struct PageSet {
    version: u64,
    handshake: Vec<String>,
    stateless: Vec<String>,
}

#[derive(Default)]
pub(crate) struct Pages {
    current: Mutex<Option<Arc<PageSet>>>,
    /// The static lists, built on first use.
    prompts: OnceLock<PageSet>,
    resources: OnceLock<PageSet>,
    templates: OnceLock<PageSet>,
}

/// Which list a page belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum List {
    Tools,
    Prompts,
    Resources,
    ResourceTemplates,
}

impl List {
    /// The key of the items in the result, and the prefix of the list's cursors.
    fn key(self) -> &'static str {
        match self {
            List::Tools => "tools",
            List::Prompts => "prompts",
            List::Resources => "resources",
            List::ResourceTemplates => "resourceTemplates",
        }
    }
}

/// A cursor names its list and the offset of the page it points to.
pub(crate) fn cursor_for(list: List, offset: usize) -> String {
    format!("{}-{offset}", list.key())
}

fn offset_of(list: List, cursor: &str) -> Option<usize> {
    cursor
        .strip_prefix(list.key())?
        .strip_prefix('-')?
        .parse()
        .ok()
}

impl Pages {
    /// The page at `cursor` (`None`: the first), as a result body; `Err` for a cursor this
    /// server did not give.
    pub(crate) fn page(
        &self,
        shared: &Shared,
        list: List,
        cursor: Option<&str>,
        stateless: bool,
    ) -> Result<String, String> {
        let tools;
        let set: &PageSet = match list {
            List::Tools => {
                tools = self.current_set(shared);
                &tools
            }
            List::Prompts => self.prompts.get_or_init(|| build_prompts(shared)),
            List::Resources => self
                .resources
                .get_or_init(|| build_resources(shared, false)),
            List::ResourceTemplates => self.templates.get_or_init(|| build_resources(shared, true)),
        };
        let index = match cursor {
            None => 0,
            Some(cursor) => {
                let offset = offset_of(list, cursor)
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
            format!(
                "Invalid params: cursor {cursor:?} is past the end of the {} list",
                list.key()
            )
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
    // A list that can change is not cached by clients for long.
    let hints = shared.cache.list_hints(shared.list_changed);
    paginate(shared, List::Tools, &tools, hints, version)
}

fn build_prompts(shared: &Shared) -> PageSet {
    let prompts: Vec<Value> = shared
        .registry
        .prompts()
        .iter()
        .map(super::surfaces::prompt_entry)
        .collect();
    paginate(
        shared,
        List::Prompts,
        &prompts,
        shared.cache.list_hints(false),
        0,
    )
}

fn build_resources(shared: &Shared, templates: bool) -> PageSet {
    let entries: Vec<Value> = shared
        .registry
        .resources()
        .iter()
        .filter(|resource| resource.is_template() == templates)
        .map(super::surfaces::resource_entry)
        .collect();
    let list = if templates {
        List::ResourceTemplates
    } else {
        List::Resources
    };
    paginate(shared, list, &entries, shared.cache.list_hints(false), 0)
}

/// Splits `items` into pages of the server's page size, each a result body in both eras
/// (the 2026-07-28 one with its caching hints).
fn paginate(
    shared: &Shared,
    list: List,
    items: &[Value],
    (ttl_ms, scope): (u64, &'static str),
    version: u64,
) -> PageSet {
    let chunks: Vec<&[Value]> = if items.is_empty() {
        vec![&[]]
    } else {
        items.chunks(shared.page_size).collect()
    };
    let count = chunks.len();
    let mut handshake = Vec::with_capacity(count);
    let mut stateless = Vec::with_capacity(count);
    for (index, chunk) in chunks.into_iter().enumerate() {
        let mut body = Map::new();
        body.insert(list.key().to_owned(), Value::Array(chunk.to_vec()));
        if index + 1 < count {
            body.insert(
                "nextCursor".to_owned(),
                cursor_for(list, (index + 1) * shared.page_size).into(),
            );
        }
        handshake.push(Value::Object(body.clone()).to_string());
        body.insert("ttlMs".to_owned(), ttl_ms.into());
        body.insert("cacheScope".to_owned(), scope.into());
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
