//! Large tool outputs kept as resources: a tool marked `large_output = "resource"` whose
//! output is over the threshold has it stored here and answers a preview and a
//! `resource_link`; the client reads the whole output with `resources/read` until it
//! expires.

use super::time::Timers;
use crate::call::content::EmbeddedResource;
use crate::clock::Clock;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// The URI scheme of stored outputs.
const SCHEME: &str = "tool-output://";

/// How much of a stored output the answer shows, at most.
const PREVIEW_BYTES: usize = 1024;

/// When a tool's output becomes a link to a stored copy, and how long copies are kept.
///
/// Applies to tools marked `#[tool(large_output = "resource")]` (or
/// `DynamicTool::large_output_as_resource`): an output whose text is longer than
/// [`above`](LargeOutputs::above) bytes is stored, and the call answers its first
/// kilobyte and a `resource_link` to the whole, readable with `resources/read` for
/// [`keep_for`](LargeOutputs::keep_for). The model's context gets the preview; the client
/// fetches the rest when it needs it. By default: above 10 KB, kept 15 minutes, at most
/// 64 MB stored (the oldest copies go first).
///
/// Stored outputs live in this process, and also in the store replicas share when the
/// server has one ([`ServerOptions::store`](super::ServerOptions::store)), so any replica
/// serves the read. Their URIs carry 128 random bits, so only a client that got one can
/// read it.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::mcp::{LargeOutputs, ServerOptions};
///
/// let options = ServerOptions::default()
///     .large_outputs(LargeOutputs::default().above(20 * 1024).keep_for(Duration::from_secs(300)));
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LargeOutputs {
    above: usize,
    keep_for: Duration,
    max_stored_bytes: usize,
}

impl Default for LargeOutputs {
    fn default() -> Self {
        LargeOutputs {
            above: 10 * 1024,
            keep_for: Duration::from_secs(15 * 60),
            max_stored_bytes: 64 * 1024 * 1024,
        }
    }
}

impl LargeOutputs {
    /// Outputs longer than `bytes` become links.
    pub fn above(mut self, bytes: usize) -> Self {
        self.above = bytes;
        self
    }

    /// How long a stored output can be read.
    pub fn keep_for(mut self, duration: Duration) -> Self {
        self.keep_for = duration;
        self
    }

    /// The most bytes kept at once; past it, the oldest outputs are dropped first.
    pub fn max_stored_bytes(mut self, bytes: usize) -> Self {
        self.max_stored_bytes = bytes;
        self
    }

    /// The threshold, in bytes.
    pub fn threshold(&self) -> usize {
        self.above
    }
}

/// One stored output.
struct Stored {
    text: Arc<str>,
    mime_type: &'static str,
    expires: SystemTime,
}

/// The outputs kept: by URI, and the URIs in the order they were stored (which is also
/// the order they expire in).
#[derive(Default)]
struct Kept {
    by_uri: HashMap<String, Stored>,
    oldest_first: VecDeque<String>,
    bytes: usize,
}

impl Kept {
    fn drop_oldest(&mut self) -> bool {
        let Some(uri) = self.oldest_first.pop_front() else {
            return false;
        };
        if let Some(stored) = self.by_uri.remove(&uri) {
            self.bytes -= stored.text.len();
        }
        true
    }

    /// Drops the outputs whose time is up.
    fn forget_expired(&mut self, now: SystemTime) {
        while let Some(oldest) = self.oldest_first.front() {
            if self.by_uri.get(oldest).is_some_and(|s| s.expires > now) {
                break;
            }
            self.drop_oldest();
        }
    }
}

/// What a call answers instead of a large output.
pub(crate) struct Link {
    pub(crate) uri: String,
    pub(crate) preview: String,
}

/// How long a read waits for an output another replica is still writing to the store (it
/// answered its call while the write was under way): this many looks, a moment apart.
const SHARED_LOOKS: u32 = 20;
/// The moment between two looks.
const SHARED_LOOK_EVERY: Duration = Duration::from_millis(50);

/// The outputs stored by one server.
pub(crate) struct OutputStore {
    options: LargeOutputs,
    kept: Mutex<Kept>,
    /// The store the replicas share, where each output is also kept.
    shared: Option<crate::store::Store>,
    /// When outputs expire.
    clock: Arc<dyn Clock>,
    /// The moments a read waits for another replica's write.
    timers: Arc<Timers>,
}

impl OutputStore {
    pub(crate) fn new(
        options: LargeOutputs,
        shared: Option<crate::store::Store>,
        clock: Arc<dyn Clock>,
        timers: Arc<Timers>,
    ) -> Self {
        OutputStore {
            options,
            kept: Mutex::new(Kept::default()),
            shared,
            clock,
            timers,
        }
    }

    /// Whether an output of `bytes` becomes a link.
    pub(crate) fn is_large(&self, bytes: usize) -> bool {
        bytes > self.options.above
    }

    /// Stores `text` (the output of `tool`) and gives the link and preview to answer;
    /// `Err` gives the text back when it is more than the store may hold at all.
    pub(crate) fn store(
        &self,
        tool: &str,
        text: String,
        mime_type: &'static str,
    ) -> Result<Link, String> {
        if text.len() > self.options.max_stored_bytes {
            return Err(text);
        }
        let uri = format!("{SCHEME}{tool}/{}", crate::call::ids::unguessable_id());
        let mut cut = PREVIEW_BYTES.min(self.options.above).min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let preview = format!(
            "{}\n[{} of {} bytes shown. The whole output is the resource {uri} ({mime_type}), \
             readable with resources/read for {}.]",
            &text[..cut],
            cut,
            text.len(),
            crate::catalog::time::show_duration(self.options.keep_for),
        );
        // Everything that copies or allocates is done before the lock is taken.
        let stored = Stored {
            text: Arc::from(text),
            mime_type,
            expires: self.clock.now() + self.options.keep_for,
        };
        let size = stored.text.len();
        if let Some(store) = &self.shared {
            store.backend.later(crate::store::Later::Output {
                uri: uri.clone(),
                text: Arc::clone(&stored.text),
                mime_type,
                ttl: self.options.keep_for,
            });
        }
        let mut kept = crate::sync::lock(&self.kept);
        kept.forget_expired(self.clock.now());
        while kept.bytes + size > self.options.max_stored_bytes && kept.drop_oldest() {}
        kept.bytes += size;
        kept.oldest_first.push_back(uri.clone());
        kept.by_uri.insert(uri.clone(), stored);
        Ok(Link { uri, preview })
    }

    /// Whether `uri` names a stored output (live or gone).
    pub(crate) fn owns(uri: &str) -> bool {
        uri.starts_with(SCHEME)
    }

    /// The stored output at `uri`, while it is kept here or, with a shared store, in the
    /// store (waiting a moment for a write another replica began as it answered).
    pub(crate) async fn read_anywhere(&self, uri: &str) -> Option<EmbeddedResource> {
        if let Some(found) = self.read(uri) {
            return Some(found);
        }
        let store = self.shared.as_ref()?;
        let mut looks = 0;
        loop {
            match store.backend.output_get(uri).await {
                Ok(Some((text, mime_type))) => {
                    return Some(EmbeddedResource {
                        uri: uri.to_owned(),
                        mime_type: Some(mime_type),
                        text: Some(text),
                        blob: None,
                    })
                }
                Ok(None) if looks < SHARED_LOOKS => {
                    looks += 1;
                    self.timers.sleep(SHARED_LOOK_EVERY).await;
                }
                Ok(None) => return None,
                Err(error) => {
                    tracing::warn!(%error, "could not read a stored output from the store");
                    return None;
                }
            }
        }
    }

    /// The stored output at `uri`, while it is kept here.
    pub(crate) fn read(&self, uri: &str) -> Option<EmbeddedResource> {
        let (text, mime_type) = {
            let mut kept = crate::sync::lock(&self.kept);
            kept.forget_expired(self.clock.now());
            let stored = kept.by_uri.get(uri)?;
            (Arc::clone(&stored.text), stored.mime_type)
        };
        Some(EmbeddedResource {
            uri: uri.to_owned(),
            mime_type: Some(mime_type.to_owned()),
            text: Some(text.to_string()),
            blob: None,
        })
    }
}
