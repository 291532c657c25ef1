//! List pages (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`),
//! serialized once per version of their list and served as bytes.

use super::era::Era;
use super::{CacheScope, ServerInfo, Shared};
use crate::call::caller::Caller;
use crate::call::runnable::ToolRef;
use crate::catalog::Tool;
use crate::export::{mcp_prompt, mcp_resource, mcp_tool};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The result bodies of every page, for each era.
pub(crate) struct PageSet {
    version: u64,
    /// How long clients may cache the pages (the lists cut to a token keep it).
    ttl_ms: u64,
    handshake: Vec<String>,
    stateless: Vec<String>,
    /// For the tools list: its tools and their entries, for the lists a caller whose
    /// token does not permit every tool sees (built from them, never exported again).
    tools: Vec<(ToolRef, Entry)>,
    /// Those lists, by which tools they hold (few: one per set of scopes the tools
    /// require that tokens grant), as long as this version lasts.
    permitted: Mutex<HashMap<Vec<bool>, Arc<PageSet>>>,
}

/// At most this many permitted lists are kept per version of the tools list.
const PERMITTED_KEPT: usize = 64;

/// The pages of each list, as of the last version of it asked for (built on first use).
#[derive(Default)]
pub(crate) struct Pages {
    current: [Mutex<Option<Arc<PageSet>>>; 4],
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
    fn index(self) -> usize {
        match self {
            List::Tools => 0,
            List::Prompts => 1,
            List::Resources => 2,
            List::ResourceTemplates => 3,
        }
    }

    /// The list's version in the registry, and whether clients are told it changes.
    fn version(self, shared: &Shared) -> (u64, bool) {
        let versions = shared.registry.versions();
        let announced = shared.list_changed;
        match self {
            List::Tools => (versions.tools, announced.tools),
            List::Prompts => (versions.prompts, announced.prompts),
            List::Resources | List::ResourceTemplates => (versions.resources, announced.resources),
        }
    }

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

/// One page of a list as a result body, read from the set of pages it was cut from (shared,
/// not copied: a list's pages are the largest answers most servers send).
pub(crate) struct Page {
    set: Arc<PageSet>,
    index: usize,
    era: Era,
}

impl Page {
    fn pages(&self) -> &[String] {
        match self.era {
            Era::PerRequest => &self.set.stateless,
            Era::Handshake => &self.set.handshake,
        }
    }

    /// The page's JSON text.
    pub(crate) fn text(&self) -> &str {
        &self.pages()[self.index]
    }
}

impl Pages {
    /// The page at `cursor` (`None`: the first), as a result body, of the list as `caller`
    /// sees it; `Err` for a cursor this server did not give.
    pub(crate) fn page(
        &self,
        shared: &Shared,
        list: List,
        cursor: Option<&str>,
        era: Era,
        caller: &Caller,
    ) -> Result<Page, String> {
        let set = self.current_set(shared, list);
        let set = permitted_tools(shared, &set, list, caller).unwrap_or(set);
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
        let page = Page { set, index, era };
        if index >= page.pages().len() {
            return Err(format!(
                "Invalid params: cursor {cursor:?} is past the end of the {} list",
                list.key()
            ));
        }
        Ok(page)
    }

    fn current_set(&self, shared: &Shared, list: List) -> Arc<PageSet> {
        let (version, can_change) = list.version(shared);
        let mut current = crate::sync::lock(&self.current[list.index()]);
        if let Some(set) = current.as_ref().filter(|set| set.version == version) {
            return Arc::clone(set);
        }
        // A list that can change is not cached by clients for long.
        let hints = shared.cache.list_hints(can_change);
        let (tools, entries) = entries(shared, list);
        let mut set = paginate(
            shared,
            list,
            &entries.iter().collect::<Vec<_>>(),
            hints,
            version,
        );
        // Kept only where lists are cut to each token's tools, which are built from them.
        if shared.list_only_permitted_tools {
            set.tools = tools.into_iter().zip(entries).collect();
        }
        let set = Arc::new(set);
        *current = Some(Arc::clone(&set));
        set
    }
}

/// The tools list as `caller` sees it, when the server lists a caller with a token only
/// the tools it may call (`None` otherwise: `set`, the whole list, serves). Marked private,
/// even when it holds every tool: a shared cache must not hand one token's list to another.
/// A list not kept yet is built outside the lock, so other tokens' lists are not held up.
fn permitted_tools(
    shared: &Shared,
    set: &PageSet,
    list: List,
    caller: &Caller,
) -> Option<Arc<PageSet>> {
    if list != List::Tools || !shared.list_only_permitted_tools || caller.scopes().is_none() {
        return None;
    }
    let shown: Vec<bool> = set
        .tools
        .iter()
        .map(|(tool, _)| caller.may_call(tool))
        .collect();
    let kept = || crate::sync::lock(&set.permitted);
    if let Some(permitted) = kept().get(&shown) {
        return Some(Arc::clone(permitted));
    }
    let entries: Vec<&Entry> = set
        .tools
        .iter()
        .zip(&shown)
        .filter(|(_, shown)| **shown)
        .map(|((_, entry), _)| entry)
        .collect();
    let hints = (set.ttl_ms, CacheScope::Private.as_str());
    let permitted = Arc::new(paginate(shared, list, &entries, hints, set.version));
    let mut kept = kept();
    if kept.len() >= PERMITTED_KEPT {
        kept.clear();
    }
    // Built meanwhile by another request of the same tools: either serves.
    kept.insert(shown, Arc::clone(&permitted));
    Some(permitted)
}

/// A tool as both eras list it.
fn tool_entry(tool: &Tool) -> Entry {
    let mut handshake = Map::new();
    if tool.task_support() != crate::catalog::TaskSupport::Forbidden {
        let support = tool.task_support().as_str();
        handshake.insert("execution".to_owned(), json!({"taskSupport": support}));
    }
    if let Some(schema) = tool.published_wrapped_output_schema() {
        handshake.insert("outputSchema".to_owned(), schema.clone());
    }
    (mcp_tool(tool), (!handshake.is_empty()).then_some(handshake))
}

/// An entry of a list as 2026-07-28 shows it, and what the handshake era sets on it: a
/// tool's `execution.taskSupport` (2025-11-25 tasks; 2026-07-28 tools have no such field,
/// the server decides per call), and its output schema as `{"result": ...}` for an output
/// that is not always an object (structured content had to be one).
type Entry = (Value, Option<Map<String, Value>>);

/// Every entry of `list`, from one reading of the registry, and for the tools list the
/// tools they are of.
fn entries(shared: &Shared, list: List) -> (Vec<ToolRef>, Vec<Entry>) {
    let registry = &shared.registry;
    match list {
        List::Tools => {
            let tools = registry.tools();
            let entries = tools.iter().map(|tool| tool_entry(tool)).collect();
            (tools, entries)
        }
        List::Prompts => {
            let prompts = registry.prompts();
            let entries = prompts
                .iter()
                .map(|prompt| (mcp_prompt(prompt), None))
                .collect();
            (Vec::new(), entries)
        }
        List::Resources | List::ResourceTemplates => {
            let entries = registry
                .resources()
                .iter()
                .filter(|resource| resource.is_template() == (list == List::ResourceTemplates))
                .map(|resource| (mcp_resource(resource), None))
                .collect();
            (Vec::new(), entries)
        }
    }
}

/// Splits `items` into pages of the server's page size, each a result body in both eras
/// (the 2026-07-28 one with its caching hints).
fn paginate(
    shared: &Shared,
    list: List,
    items: &[&Entry],
    (ttl_ms, scope): (u64, &'static str),
    version: u64,
) -> PageSet {
    let chunks: Vec<&[&Entry]> = if items.is_empty() {
        vec![&[]]
    } else {
        items.chunks(shared.page_size).collect()
    };
    let count = chunks.len();
    let mut handshake = Vec::with_capacity(count);
    let mut stateless = Vec::with_capacity(count);
    for (index, chunk) in chunks.into_iter().enumerate() {
        let mut body = Map::new();
        let handshake_items: Vec<Value> = chunk
            .iter()
            .map(|(item, handshake)| {
                let mut item = item.clone();
                if let (Some(object), Some(handshake)) = (item.as_object_mut(), handshake) {
                    for (key, value) in handshake {
                        object.insert(key.clone(), value.clone());
                    }
                }
                item
            })
            .collect();
        body.insert(list.key().to_owned(), Value::Array(handshake_items));
        if index + 1 < count {
            body.insert(
                "nextCursor".to_owned(),
                cursor_for(list, (index + 1) * shared.page_size).into(),
            );
        }
        handshake.push(Value::Object(body.clone()).to_string());
        let items: Vec<Value> = chunk.iter().map(|(item, _)| item.clone()).collect();
        body.insert(list.key().to_owned(), Value::Array(items));
        body.insert("ttlMs".to_owned(), ttl_ms.into());
        body.insert("cacheScope".to_owned(), scope.into());
        stateless.push(stateless_result(body, &shared.info).to_string());
    }
    PageSet {
        version,
        ttl_ms,
        handshake,
        stateless,
        tools: Vec::new(),
        permitted: Mutex::new(HashMap::new()),
    }
}

/// Adds what every 2026-07-28 result carries: `resultType` and the server's identity.
/// The `_meta` key under which a 2026-07-28 result names the server.
pub(crate) const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

pub(crate) fn stateless_result(body: Map<String, Value>, info: &ServerInfo) -> Value {
    typed_result(body, "complete", info)
}

/// A 2026-07-28 result of the type `result_type` (`complete`, or `task` for a call that
/// became one), with the server's identity.
pub(crate) fn typed_result(
    mut body: Map<String, Value>,
    result_type: &str,
    info: &ServerInfo,
) -> Value {
    body.insert("resultType".to_owned(), result_type.into());
    let server_info = json!({"name": info.name, "version": info.version});
    match body.get_mut("_meta").and_then(Value::as_object_mut) {
        // The result's own `_meta` keeps what it says.
        Some(meta) => {
            meta.insert(SERVER_INFO_META.to_owned(), server_info);
        }
        None => {
            body.insert("_meta".to_owned(), json!({SERVER_INFO_META: server_info}));
        }
    }
    Value::Object(body)
}
