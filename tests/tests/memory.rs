//! Memory back to its baseline after 10,000 calls over stdio with 64 in flight, counted by
//! this binary's allocator. A binary of its own: the allocator counts the whole process, so
//! no other test may run beside it.

#[path = "../fixtures/load.rs"]
mod load;

use load::{expected, request};
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::sync::atomic::{AtomicIsize, Ordering};
use tool_runtime::mcp::{McpServer, ServerOptions};
use tool_tests::stdio::Session;
use tool_tests::{server, wait_for, INITIALIZE};

/// Counts the bytes this process has allocated and not freed.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        pointer
    }
    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { System.dealloc(pointer, layout) };
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs one stdio session of `calls` calls, at most 64 in flight, checking every answer.
async fn stdio_load(server: &McpServer, calls: u64) {
    let mut session = Session::in_memory(server);
    session.send(INITIALIZE).await;
    session.answer_to(0).await;
    let (mut sent, mut seen) = (0, HashSet::new());
    while (seen.len() as u64) < calls {
        while sent < calls && sent - (seen.len() as u64) < 64 {
            sent += 1;
            session.send(&request(sent)).await;
        }
        let answer = session.next().await;
        let id = answer["id"].as_u64().unwrap();
        assert!(seen.insert(id), "answer {id} came twice");
        assert_eq!(
            answer["result"]["structuredContent"],
            json!({"result": expected(id)}),
            "answer {id}: {answer}"
        );
    }
    assert_eq!(
        session.finish().await,
        Vec::<Value>::new(),
        "every call answered once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_calls_over_stdio_and_memory_returns_to_its_baseline() {
    let server = server(ServerOptions::default());
    // Warm up: lazily built parts (schemas, pages, the blocking pool) exist from here on.
    stdio_load(&server, 200).await;
    let baseline = LIVE.load(Ordering::SeqCst);
    stdio_load(&server, 10_000).await;
    // Returning to the baseline is eventual (work still being dropped): wait for it.
    let mut grown = 0;
    let what = "memory back within 256 KiB of its baseline after 10,000 calls";
    wait_for(what, async || {
        grown = LIVE.load(Ordering::SeqCst) - baseline;
        grown < 256 * 1024
    })
    .await;
    eprintln!("{grown} bytes more live after 10,000 calls than before");
}
