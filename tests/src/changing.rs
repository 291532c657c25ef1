//! A server in the test's own process whose tools change while it serves (Streamable
//! HTTP on a port of 127.0.0.1, both protocol eras, list changes announced): what a client
//! or a mount following another server's list changes is tested against.

use std::time::Duration;
use tool_runtime::mcp::{McpServer, ServerInfo, ServerOptions};
use tool_runtime::registry::RegistryHandle;
use tool_runtime::transport::http::{router, HttpOptions};

/// Serves a registry with the tool `first` until the test's runtime ends: the handle to
/// change its tools with, and its URL.
pub async fn changing_server() -> (RegistryHandle, String) {
    let builder = tool_runtime::Registry::builder().tool(named_tool("first"));
    let handle = builder.handle();
    let registry = builder.build().unwrap();
    let server = McpServer::with_options(
        registry,
        ServerInfo::new("changing", "1"),
        ServerOptions::default().list_changed(true),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = router(server, HttpOptions::for_address(address));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (handle, format!("http://{address}/mcp"))
}

/// A tool named `name` that takes nothing and says its name.
pub fn named_tool(name: &str) -> tool_runtime::DynamicTool {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Nothing {}
    let answer = name.to_owned();
    tool_runtime::DynamicTool::new(name, "Say the tool's name.", move |_: Nothing| {
        let answer = answer.clone();
        async move { Ok::<_, String>(answer) }
    })
    .unwrap()
}

/// Adds tools to `upstream` (`second0`, `second1`, ...), one more each time `seen` (given
/// the name added) has not ended within half a second, until it ends: a change made before
/// a follower's stream of what the server sends is open reaches nobody, so one change is
/// not enough to wait on. Fails the test, saying `what` was not seen, after
/// [`PATIENCE`](crate::PATIENCE).
pub async fn add_until_seen(
    upstream: &tool_runtime::Registry,
    what: &str,
    mut seen: impl AsyncFnMut(&str),
) {
    let adding = async {
        for added in 0.. {
            let name = format!("second{added}");
            upstream.add_tool(named_tool(&name)).unwrap();
            if tokio::time::timeout(Duration::from_millis(500), seen(&name))
                .await
                .is_ok()
            {
                return;
            }
        }
    };
    tokio::time::timeout(*crate::PATIENCE, adding)
        .await
        .unwrap_or_else(|_| panic!("{what} within {:?}", *crate::PATIENCE));
}
