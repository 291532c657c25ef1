//! The protocol layer without I/O: request bytes in, response bytes out.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use tool_runtime::catalog::Catalog;
use tool_runtime::layers::CallRequest;
use tool_runtime::mcp::connection::{outbox, Connection, Outbox};
use tool_runtime::mcp::{McpServer, ServerInfo, ServerOptions};
use tool_runtime::Registry;

fn server() -> McpServer {
    server_over(Registry::new().unwrap())
}

fn server_over(registry: Registry) -> McpServer {
    micro::link();
    McpServer::with_options(
        registry,
        ServerInfo::new("micro", "1"),
        ServerOptions::default().page_size(2000),
    )
}

/// A layer that does nothing but pass each call on: what the layers themselves cost.
#[derive(Clone)]
struct PassOn<S>(S);

impl<S: tower::Service<CallRequest>> tower::Service<CallRequest> for PassOn<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, call: CallRequest) -> S::Future {
        self.0.call(call)
    }
}

fn initialized(server: &McpServer) -> Connection {
    let connection = server.connection();
    let (sink, mut messages) = outbox();
    let _ = connection.handle(
        concat!(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","#,
            r#""params":{"protocolVersion":"2025-06-18","capabilities":{},"#,
            r#""clientInfo":{"name":"b","version":"1"}}}"#
        )
        .as_bytes(),
        &sink,
    );
    messages.try_recv().unwrap();
    connection
}

/// Handles one message and runs the work it leaves to its end, as a transport would.
fn handle(runtime: &tokio::runtime::Runtime, connection: &Connection, bytes: &[u8], sink: &Outbox) {
    if let Some(work) = connection.handle(bytes, sink).into_work() {
        runtime.block_on(work.run());
    }
}

fn protocol(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let server = server();
    let connection = initialized(&server);
    let (sink, mut messages) = outbox();
    let call = concat!(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","#,
        r#""params":{"name":"add","arguments":{"a":2,"b":3}}}"#
    )
    .as_bytes();
    // `add` is an `async fn`: its work runs right here, with no hand-off to another thread.
    for _ in 0..20 {
        handle(&runtime, &connection, call, &sink);
        runtime.block_on(messages.recv()).unwrap();
    }

    c.bench_function("tools/call add (request bytes to response bytes)", |b| {
        b.iter(|| {
            handle(&runtime, &connection, black_box(call), &sink);
            black_box(messages.try_recv().expect("answered at once"));
        })
    });

    #[cfg(feature = "otel")]
    traced(c, &runtime, &connection, call);

    let layered_server = server_over(
        Registry::builder()
            .layer(tower::layer::layer_fn(PassOn))
            .layer(tower::layer::layer_fn(PassOn))
            .layer_for("add", tower::layer::layer_fn(PassOn))
            .build()
            .unwrap(),
    );
    let layered = initialized(&layered_server);
    handle(&runtime, &layered, call, &sink);
    let answer = messages.try_recv().expect("answered at once");
    assert!(String::from_utf8_lossy(&answer.bytes).contains(r#""text":"5""#));
    c.bench_function("tools/call add through three layers that pass it on", |b| {
        b.iter(|| {
            handle(&runtime, &layered, black_box(call), &sink);
            black_box(messages.try_recv().expect("answered at once"));
        })
    });

    let wrong = concat!(
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","#,
        r#""params":{"name":"add","arguments":{"a":"two","b":3}}}"#
    )
    .as_bytes();
    c.bench_function("tools/call add with an argument error", |b| {
        b.iter(|| {
            handle(&runtime, &connection, black_box(wrong), &sink);
            black_box(messages.try_recv().expect("answered at once"));
        })
    });

    let nested = concat!(
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"open_window","#,
        r#""arguments":{"window":{"width":640,"height":480,"title":"main"},"#,
        r#""action":{"kind":"move","x":10,"y":-20},"tags":["a","b"]}}}"#
    )
    .as_bytes();
    handle(&runtime, &connection, nested, &sink);
    let answer = messages.try_recv().unwrap();
    assert!(
        String::from_utf8_lossy(&answer.bytes).contains("1123"),
        "open_window answers"
    );
    c.bench_function(
        "tools/call with nested arguments (whole-schema validator)",
        |b| {
            b.iter(|| {
                handle(&runtime, &connection, black_box(nested), &sink);
                black_box(messages.try_recv().expect("answered at once"));
            })
        },
    );

    let list = br#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#;
    handle(&runtime, &connection, list, &sink);
    let first = messages.try_recv().unwrap();
    assert!(first.bytes.len() > 500_000, "all 1,002 tools on one page");
    c.bench_function("tools/list of 1,002 tools (one page)", |b| {
        b.iter(|| {
            handle(&runtime, &connection, black_box(list), &sink);
            black_box(messages.try_recv().expect("answered at once"));
        })
    });

    c.bench_function("build the catalog of 1,002 tools", |b| {
        b.iter(|| black_box(Catalog::build().unwrap().len()))
    });
}

criterion_group!(benches, protocol);
criterion_main!(benches);

/// An exporter that drops what it is given: the cost measured is that of making the spans
/// and handing them to the batch, not of a network.
#[cfg(feature = "otel")]
#[derive(Debug)]
struct Discard;

#[cfg(feature = "otel")]
impl opentelemetry_sdk::trace::SpanExporter for Discard {
    async fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        drop(batch);
        Ok(())
    }
}

/// `tools/call add` with its span exported, as `serve --otel-endpoint` sets it up.
#[cfg(feature = "otel")]
fn traced(c: &mut Criterion, runtime: &tokio::runtime::Runtime, connection: &Connection, call: &[u8]) {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt;
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(Discard)
        .build();
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("bench"))
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_tracked_inactivity(false);
    let subscriber = tracing_subscriber::registry().with(layer);
    let _traced = tracing::subscriber::set_default(subscriber);
    let (sink, mut messages) = outbox();
    c.bench_function("tools/call add, its span exported", |b| {
        b.iter(|| {
            handle(runtime, connection, black_box(call), &sink);
            black_box(messages.try_recv().expect("answered at once"));
        })
    });
    let _ = provider.shutdown();
}
