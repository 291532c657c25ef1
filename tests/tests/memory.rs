//! Memory back to its baseline after 10,000 calls over stdio with 64 in flight, counted by
//! this binary's allocator. A binary of its own: the allocator counts the whole process, so
//! no other test may run beside it.

#[path = "../fixtures/load.rs"]
mod load;

use load::{expected, request};
use serde_json::Value;
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::sync::atomic::{AtomicIsize, Ordering};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Semaphore;
use tool_runtime::mcp::{McpServer, ServerOptions};
use tool_tests::{server, wait_for, INITIALIZE, PATIENCE};

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
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = {
        let server = server.clone();
        tokio::spawn(async move {
            tool_runtime::transport::stdio::serve(&server, server_read, server_write).await
        })
    };
    let (client_read, mut client_write) = tokio::io::split(client);
    let window = std::sync::Arc::new(Semaphore::new(64));
    let writer = {
        let window = std::sync::Arc::clone(&window);
        tokio::spawn(async move {
            client_write.write_all(INITIALIZE.as_bytes()).await.unwrap();
            client_write.write_all(b"\n").await.unwrap();
            for id in 1..=calls {
                window.acquire().await.unwrap().forget();
                client_write
                    .write_all(request(id).as_bytes())
                    .await
                    .unwrap();
                client_write.write_all(b"\n").await.unwrap();
            }
            client_write.shutdown().await.unwrap();
        })
    };
    let mut lines = BufReader::new(client_read).lines();
    let mut seen = HashSet::new();
    while let Some(line) = tokio::time::timeout(*PATIENCE, lines.next_line())
        .await
        .unwrap()
        .unwrap()
    {
        let answer: Value = serde_json::from_str(&line).unwrap();
        let id = answer["id"].as_u64().unwrap();
        if id == 0 {
            continue;
        }
        assert!(seen.insert(id), "answer {id} came twice");
        assert_eq!(
            answer["result"]["structuredContent"],
            expected(id),
            "answer {id}: {answer}"
        );
        window.add_permits(1);
    }
    assert_eq!(seen.len() as u64, calls, "every call answered");
    writer.await.unwrap();
    serving.await.unwrap().unwrap();
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
