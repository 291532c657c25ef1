//! OAuth scopes a tool requires (`#[tool(scopes)]`, `DynamicTool::scopes`), held against
//! the caller's token when it has one, through the registry.

use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use tool_runtime::context::Caller;
use tool_runtime::registry::RegistryError;
use tool_runtime::{tool, CallError, DynamicTool, Registry};
use tool_tests::{call, runtime};

/// Write a line to the journal.
#[tool(scopes = ["journal:read", "journal:write"])]
fn write_journal(line: String) -> usize {
    line.len()
}

/// How often `erase_journal` ran; only the test of a refusal calls it.
static ERASED: AtomicUsize = AtomicUsize::new(0);

/// Erase the journal.
#[tool(scopes = ["journal:erase"])]
fn erase_journal() -> &'static str {
    ERASED.fetch_add(1, Ordering::SeqCst);
    "erased"
}

/// Read the journal.
#[tool(scopes = ["journal:read"])]
fn read_journal() -> &'static str {
    "dear diary"
}

/// The time, for anyone.
#[tool]
fn clock() -> &'static str {
    "noon"
}

/// No arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

fn token(scopes: &[&str]) -> Caller {
    Caller::http(Some("192.0.2.1:5000".parse().unwrap())).with_subject("ada", scopes.to_vec())
}

fn call_as(registry: &Registry, caller: Caller, name: &str) -> tool_runtime::ToolResult {
    let input = if name == "write_journal" {
        json!({"line": "hello"})
    } else {
        json!({})
    };
    runtime().block_on(registry.call_for(caller, name, input))
}

#[test]
fn the_attribute_names_the_scopes_a_tool_requires() {
    let registry = Registry::new().unwrap();
    assert_eq!(
        registry.get("write_journal").unwrap().scopes(),
        ["journal:read", "journal:write"]
    );
    assert_eq!(
        registry.get("read_journal").unwrap().scopes(),
        ["journal:read"]
    );
    assert!(registry.get("clock").unwrap().scopes().is_empty());
}

#[test]
fn a_token_without_every_scope_is_refused_naming_them_all_and_the_tool_does_not_run() {
    let registry = Registry::new().unwrap();
    let refused = call_as(&registry, token(&["journal:read"]), "write_journal");
    match refused.error() {
        Some(CallError::InsufficientScope { tool, scopes }) => {
            assert_eq!(tool, "write_journal");
            assert_eq!(scopes, &["journal:read", "journal:write"]);
        }
        other => panic!("expected insufficient_scope, got {other:?}"),
    }
    assert_eq!(refused.error().unwrap().status(), "insufficient_scope");
    assert_eq!(
        refused.error().unwrap().to_string(),
        "tool 'write_journal' requires the scopes journal:read journal:write; this client's \
         access token does not grant them, so the tool was not called. The user must \
         authorize them first"
    );
    let erase = call_as(&registry, token(&["journal:write"]), "erase_journal");
    assert_eq!(erase.error().unwrap().status(), "insufficient_scope");
    assert_eq!(
        ERASED.load(Ordering::SeqCst),
        0,
        "a refused tool must not run"
    );

    let one = call_as(&registry, token(&[]), "read_journal");
    assert_eq!(
        one.error().unwrap().to_string(),
        "tool 'read_journal' requires the scope journal:read; this client's access token does \
         not grant it, so the tool was not called. The user must authorize it first"
    );
    // A tool that requires nothing is open to any token.
    assert!(call_as(&registry, token(&[]), "clock").error().is_none());
}

#[test]
fn a_token_with_the_scopes_calls_and_callers_without_a_token_are_not_held_to_scopes() {
    let registry = Registry::new().unwrap();
    let granted = call_as(
        &registry,
        token(&["profile", "journal:write", "journal:read"]),
        "write_journal",
    );
    assert_eq!(granted.output(), Some(&json!(5)));
    // Stdio, a direct call and HTTP without OAuth check no token: whoever reaches the
    // server may call every tool.
    for caller in [Caller::stdio(), Caller::http(None), Caller::default()] {
        assert!(call_as(&registry, caller, "write_journal")
            .error()
            .is_none());
    }
    assert!(call(&registry, "read_journal", json!({})).error().is_none());
}

#[test]
fn a_run_time_tool_requires_its_scopes_and_refuses_a_scope_a_token_cannot_carry() {
    let shred = DynamicTool::new("shred", "Shred the journal.", |_: Nothing| async {
        Ok::<_, String>("shredded")
    })
    .unwrap()
    .scopes(["journal:admin"])
    .unwrap();
    assert_eq!(shred.tool().scopes(), ["journal:admin"]);
    let registry = Registry::builder().tool(shred).build().unwrap();
    let refused = call_as(&registry, token(&["journal:write"]), "shred");
    assert_eq!(refused.error().unwrap().status(), "insufficient_scope");
    let granted = call_as(&registry, token(&["journal:admin"]), "shred");
    assert!(granted.error().is_none());

    let bad = DynamicTool::new("burn", "Burn it.", |_: Nothing| async {
        Ok::<_, String>("burnt")
    })
    .unwrap()
    .scopes(["journal admin"]);
    match bad {
        Err(error @ RegistryError::InvalidScope { .. }) => assert_eq!(
            error.to_string(),
            "tool `burn` cannot require the scope \"journal admin\": it contains a space; a \
             token's scopes are separated by spaces, so each scope is its own string"
        ),
        other => panic!(
            "expected InvalidScope, got {:?}",
            other.map(|t| t.name().to_owned())
        ),
    }
    // The same rule as `#[tool(scopes = [...])]`: a scope listed twice is refused too.
    let twice = DynamicTool::new("burn", "Burn it.", |_: Nothing| async {
        Ok::<_, String>("burnt")
    })
    .unwrap()
    .scopes(["journal:admin", "journal:admin"]);
    assert_eq!(
        twice.map(|t| t.name().to_owned()).unwrap_err().to_string(),
        "tool `burn` cannot require the scope \"journal:admin\": it is listed twice"
    );
}

#[tokio::test]
async fn a_list_cut_to_each_token_follows_its_scopes_and_the_tools_added_later() {
    let server = tool_runtime::mcp::McpServer::with_options(
        Registry::new().unwrap(),
        tool_runtime::mcp::ServerInfo::new("scopes", "1"),
        tool_runtime::mcp::ServerOptions::default().list_only_permitted_tools(true),
    );
    let listed = |scopes: &'static [&'static str]| {
        let server = server.clone();
        async move {
            let caller = token(scopes);
            let mut client =
                tool_tests::Client::of(server.connection().called_by(caller)).past_handshake();
            let list = client
                .call(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
                .await;
            let mut names = tool_tests::names(&list, "tools", "name");
            names.sort();
            names
        }
    };
    let reader = ["clock", "read_journal"];
    let writer = ["clock", "read_journal", "write_journal"];
    assert_eq!(listed(&["journal:read"]).await, reader);
    assert_eq!(listed(&["journal:read", "journal:write"]).await, writer);
    // The same scopes again: the same list (kept, not built again, but the same).
    assert_eq!(listed(&["journal:read"]).await, reader);

    // A tool added later is listed to the tokens that may call it, and only to them.
    let shred = DynamicTool::new("shred", "Shred the journal.", |_: Nothing| async {
        Ok::<_, String>("shredded")
    })
    .unwrap()
    .scopes(["journal:read"])
    .unwrap();
    server.registry().add_tool(shred).unwrap();
    assert_eq!(
        listed(&["journal:read"]).await,
        ["clock", "read_journal", "shred"]
    );
    assert_eq!(listed(&["journal:erase"]).await, ["clock", "erase_journal"]);
}
