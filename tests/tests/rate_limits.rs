//! Rate limits of tools (`#[tool(rate)]`, `DynamicTool::rate`, `RegistryBuilder::rate_limit`)
//! and of clients (`RegistryBuilder::client_rate`), through the registry and over MCP.

use serde_json::json;
use std::time::Duration;
use tool_runtime::mcp::{McpServer, ServerInfo};
use tool_runtime::ops::Rate;
use tool_runtime::{tool, DynamicTool, Registry};
use tool_tests::{call, error_text, runtime, Client};

/// A scarce answer.
#[tool(rate = "3/min")]
fn scarce() -> &'static str {
    "granted"
}

/// A free answer.
#[tool]
fn free() -> &'static str {
    "free"
}

/// No arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

fn hello_tool() -> DynamicTool {
    DynamicTool::new("hello", "Say hello.", |_: Nothing| async {
        Ok::<_, String>("hello")
    })
    .unwrap()
}

fn per_minute(count: u32) -> Rate {
    Rate::new(count, Duration::from_secs(60)).unwrap()
}

#[test]
fn a_tool_past_its_rate_is_refused_with_the_limit_and_when_to_retry() {
    let registry = Registry::new().unwrap();
    assert_eq!(registry.get("scarce").unwrap().rate(), Some(per_minute(3)));
    let started = std::time::Instant::now();
    for _ in 0..3 {
        let result = call(&registry, "scarce", json!({}));
        assert_eq!(result.output(), Some(&json!("granted")));
    }
    let refused = call(&registry, "scarce", json!({}));
    assert_eq!(refused.error().unwrap().status(), "rate_limited");
    let message = error_text(&refused);
    assert!(
        message.starts_with("tool 'scarce' allows 3 calls per minute; call it again in "),
        "{message}"
    );
    // One call every 20 s comes back, counted from the first: the wait says so, less the
    // time the calls took (however long a busy machine made them) and a second of rounding.
    let wait: f64 = message
        .rsplit(' ')
        .next()
        .and_then(|w| w.strip_suffix('s'))
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("a wait in seconds: {message}"));
    let least = 20.0 - started.elapsed().as_secs_f64() - 1.0;
    assert!((least..=20.0).contains(&wait), "{message}");

    // Other tools, and other registries, keep their own allowance.
    assert!(call(&registry, "free", json!({})).error().is_none());
    let other = Registry::new().unwrap();
    assert!(call(&other, "scarce", json!({})).error().is_none());
}

#[test]
fn the_builder_limits_any_tool_and_refuses_a_name_it_does_not_know() {
    let hello = hello_tool().rate(per_minute(1));
    let registry = Registry::builder()
        .tool(hello)
        .rate_limit("free", per_minute(2))
        .rate_limit("scarce", per_minute(1))
        .build()
        .unwrap();
    for (tool, allowed) in [("free", 2), ("scarce", 1), ("hello", 1)] {
        for _ in 0..allowed {
            assert!(call(&registry, tool, json!({})).error().is_none(), "{tool}");
        }
        let refused = call(&registry, tool, json!({}));
        assert_eq!(refused.error().unwrap().status(), "rate_limited");
        let calls = if allowed == 1 { "call" } else { "calls" };
        let said = error_text(&refused);
        assert!(
            said.starts_with(&format!(
                "tool '{tool}' allows {allowed} {calls} per minute; call it again in "
            )),
            "{said}"
        );
    }
    // A tool added again under a removed one's name, without a rate, has no limit.
    assert!(registry.remove_tool("hello"));
    registry.add_tool(hello_tool()).unwrap();
    for _ in 0..3 {
        assert!(call(&registry, "hello", json!({})).error().is_none());
    }
    // A limit the builder set stays with the name: the tool added again keeps it.
    let registry = Registry::builder()
        .tool(hello_tool())
        .rate_limit("hello", per_minute(1))
        .build()
        .unwrap();
    assert!(registry.remove_tool("hello"));
    registry.add_tool(hello_tool()).unwrap();
    assert!(call(&registry, "hello", json!({})).error().is_none());
    let refused = call(&registry, "hello", json!({}));
    assert_eq!(refused.error().map(|e| e.status()), Some("rate_limited"));

    let error = Registry::builder()
        .rate_limit("fre", per_minute(2))
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "a rate limit names the tool `fre`, but no tool has that name"
    );
}

#[test]
fn a_client_past_its_rate_is_refused_whatever_the_tool() {
    let registry = Registry::builder()
        .client_rate(per_minute(2))
        .build()
        .unwrap();
    assert!(call(&registry, "free", json!({})).error().is_none());
    assert!(call(&registry, "scarce", json!({})).error().is_none());
    let refused = error_text(&call(&registry, "free", json!({})));
    assert!(
        refused.starts_with(
            "too many calls: this client may make 2 calls per minute; call 'free' again in "
        ),
        "{refused}"
    );
}

#[test]
fn over_mcp_a_refused_call_is_an_error_result_the_model_reads() {
    let registry = Registry::builder()
        .rate_limit("free", per_minute(1))
        .build()
        .unwrap();
    let server = McpServer::new(registry, ServerInfo::new("limits", "1"));
    runtime().block_on(async {
        let mut client = Client::initialized(&server);
        let call = r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"free"}}"#;
        let first = client.call(&call.replace("ID", "1")).await;
        assert_eq!(first["result"]["content"][0]["text"], "free", "{first}");
        let second = client.call(&call.replace("ID", "2")).await;
        assert_eq!(second["result"]["isError"], true, "{second}");
        let text = second["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("tool 'free' allows 1 call per minute"),
            "{text}"
        );
        assert_eq!(
            second["result"]["_meta"]["status"], "rate_limited",
            "{second}"
        );

        // At 2026-07-28 the result's `_meta` carries the status beside the server's name.
        let mut stateless = Client::new(&server);
        let refused = stateless
            .call(concat!(
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"free","#,
                r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
                r#""io.modelcontextprotocol/clientCapabilities":{}}}}"#
            ))
            .await;
        let meta = &refused["result"]["_meta"];
        assert_eq!(meta["status"], "rate_limited", "{refused}");
        assert_eq!(meta["io.modelcontextprotocol/serverInfo"]["name"], "limits");
    });
}

/// Write a report, as a task when the client can follow one; once a minute at most.
#[tool(task = "optional", rate = "1/min")]
async fn report() -> &'static str {
    "the report"
}

#[tokio::test]
async fn a_call_refused_for_its_rate_is_answered_at_once_never_as_a_task() {
    let server = tool_tests::server(
        tool_runtime::mcp::ServerOptions::default()
            .tasks(tool_runtime::tasks::TaskOptions::default()),
    );
    let mut client = Client::new(&server);
    let opened = client
        .call(&tool_tests::rpc::initialize("2025-11-25", json!({})))
        .await;
    assert!(
        opened["result"]["capabilities"]["tasks"].is_object(),
        "{opened}"
    );
    let as_task = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "report", "task": {"ttl": 60000}}})
        .to_string()
    };
    let first = client.call(&as_task(1)).await;
    assert!(first["result"]["task"]["taskId"].is_string(), "{first}");
    // The refusal is decided when the call arrives: no task is made for a call that
    // cannot run, and the client reads why at once.
    client.send(&as_task(2));
    let second = loop {
        // The first call's task says how it goes meanwhile, in notifications.
        let message = client.next().await;
        if message["id"] == 2 {
            break message;
        }
    };
    assert_eq!(second["result"]["isError"], true, "{second}");
    assert_eq!(
        second["result"]["_meta"]["status"], "rate_limited",
        "{second}"
    );
    assert!(second["result"]["task"].is_null(), "{second}");
}
