//! A server in the test's own process whose tools change while it serves (Streamable
//! HTTP on a port of 127.0.0.1, both protocol eras, list changes announced): what a client
//! or a mount following another server's list changes is tested against.

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
