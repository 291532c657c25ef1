//! Large outputs of the tools that allow it: stored, answered as a preview and a link,
//! read back whole with `resources/read` until they expire or are pushed out; and a server
//! whose lists may change offering prompts and resources before it has any.

use serde_json::{json, Value};
use std::time::Duration;
use tool_runtime::mcp::{LargeOutputs, McpServer, ServerInfo, ServerOptions};
use tool_runtime::{tool, Registry};
use tool_tests::{rpc, Client, INITIALIZE};

/// A report of `lines` lines.
#[tool(large_output = "resource")]
fn report(
    /// How many lines.
    lines: u32,
) -> String {
    (1..=lines).map(|n| format!("line {n}\n")).collect()
}

/// Totals of the report.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Totals {
    /// One entry per line.
    entries: Vec<u32>,
}

/// Totals, as data.
#[tool(large_output = "resource")]
fn totals(
    /// How many entries.
    count: u32,
) -> Totals {
    Totals {
        entries: (0..count).collect(),
    }
}

/// A log that is only ever cut.
#[tool]
fn plain_log(
    /// How many lines.
    lines: u32,
) -> String {
    (1..=lines).map(|n| format!("entry {n}\n")).collect()
}

#[tokio::test]
async fn a_large_output_is_a_preview_and_a_link_to_the_whole() {
    let server = reports(LargeOutputs::default().above(200));
    let mut client = Client::new(&server);
    let init = client.call(INITIALIZE).await;
    assert!(
        init["result"]["capabilities"]["resources"].is_object(),
        "resources are offered so links can be read, though the catalog has none"
    );
    let list = client
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let totals = tools.iter().find(|t| t["name"] == "totals").unwrap();
    assert!(
        totals.get("outputSchema").is_none(),
        "a link is not a Totals, so none is promised"
    );

    let small = client
        .call(&rpc::call(2, "totals", json!({"count": 3})))
        .await;
    assert_eq!(
        small["result"]["structuredContent"],
        json!({"entries": [0, 1, 2]}),
        "a small output is still a value"
    );

    let full: String = (1..=100).map(|n| format!("line {n}\n")).collect();
    let large = client
        .call(&rpc::call(3, "report", json!({"lines": 100})))
        .await;
    let result = &large["result"];
    assert!(result.get("isError").is_none());
    let preview = result["content"][0]["text"].as_str().unwrap();
    let shown = preview.split("\n[").next().unwrap();
    assert_eq!(
        shown,
        &full[..200],
        "the preview is the start, up to the threshold"
    );
    assert!(
        preview.ends_with(&format!(
            "[200 of {} bytes shown. The whole output is the resource {} (text/plain), \
             readable with resources/read for 15 min.]",
            full.len(),
            result["content"][1]["uri"].as_str().unwrap()
        )),
        "{preview}"
    );
    let link = &result["content"][1];
    assert_eq!(link["type"], "resource_link");
    assert_eq!(link["name"], "report output");
    assert_eq!(link["size"], full.len());
    let uri = link["uri"].as_str().unwrap().to_owned();
    let contents = client
        .call(&rpc::request(4, "resources/read", json!({"uri": &uri})))
        .await;
    assert_eq!(
        contents["result"]["contents"],
        json!([{"uri": uri, "mimeType": "text/plain", "text": full}])
    );

    let data = client
        .call(&rpc::call(5, "totals", json!({"count": 100})))
        .await;
    let link = &data["result"]["content"][1];
    assert_eq!(link["mimeType"], "application/json");
    let contents = client
        .call(&rpc::request(
            6,
            "resources/read",
            json!({"uri": link["uri"].as_str().unwrap()}),
        ))
        .await;
    let stored: Value =
        serde_json::from_str(contents["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(stored["entries"].as_array().unwrap().len(), 100);

    // A tool that does not allow links keeps its whole output.
    let log = client
        .call(&rpc::call(7, "plain_log", json!({"lines": 100})))
        .await;
    let whole_log: String = (1..=100).map(|n| format!("entry {n}\n")).collect();
    assert_eq!(
        log["result"]["content"],
        json!([{"type": "text", "text": whole_log}])
    );

    let unknown = client
        .call(&rpc::request(
            8,
            "resources/read",
            json!({"uri": "tool-output://report/ffffffffffffffffffffffffffffffff"}),
        ))
        .await;
    assert_eq!(unknown["error"]["code"], -32002);
    assert_eq!(
        unknown["error"]["data"]["uri"],
        "tool-output://report/ffffffffffffffffffffffffffffffff"
    );
}

#[tokio::test(start_paused = true)]
async fn stored_outputs_expire_and_the_oldest_make_room() {
    let one_output = (1..=100)
        .map(|n| format!("line {n}\n"))
        .collect::<String>()
        .len();
    let server = reports(
        LargeOutputs::default()
            .above(100)
            .keep_for(Duration::from_millis(300))
            .max_stored_bytes(one_output * 3 / 2),
    );
    let mut client = Client::initialized(&server);
    let uri_of = |answer: &Value| {
        answer["result"]["content"][1]["uri"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let first = uri_of(
        &client
            .call(&rpc::call(1, "report", json!({"lines": 100})))
            .await,
    );
    let second = uri_of(
        &client
            .call(&rpc::call(2, "report", json!({"lines": 100})))
            .await,
    );
    assert_ne!(first, second, "each output has its own URI");
    let pushed_out = client
        .call(&rpc::request(3, "resources/read", json!({"uri": &first})))
        .await;
    assert_eq!(
        pushed_out["error"]["code"], -32002,
        "two do not fit: the oldest went"
    );
    let kept = client
        .call(&rpc::request(4, "resources/read", json!({"uri": &second})))
        .await;
    assert!(kept["result"]["contents"][0]["text"].is_string());

    // Time is paused: a moment short of the 300 ms it is kept, then just past it.
    tokio::time::advance(Duration::from_millis(299)).await;
    let still = client
        .call(&rpc::request(5, "resources/read", json!({"uri": &second})))
        .await;
    assert!(
        still["result"]["contents"][0]["text"].is_string(),
        "{still}"
    );
    tokio::time::advance(Duration::from_millis(2)).await;
    let expired = client
        .call(&rpc::request(5, "resources/read", json!({"uri": &second})))
        .await;
    assert_eq!(expired["error"]["code"], -32002, "kept for 300 ms only");

    let too_big = server_with_room(10);
    let mut client = Client::initialized(&too_big);
    let answer = client
        .call(&rpc::call(6, "report", json!({"lines": 100})))
        .await;
    let whole: String = (1..=100).map(|n| format!("line {n}\n")).collect();
    assert_eq!(
        answer["result"]["content"],
        json!([{"type": "text", "text": whole}]),
        "an output the store cannot hold at all is answered whole"
    );
}

fn server_with_room(bytes: usize) -> McpServer {
    reports(LargeOutputs::default().above(100).max_stored_bytes(bytes))
}

/// A server whose large outputs are kept as `large` says, on a clock that moves with
/// tokio's (paused in the tests of expiry).
fn reports(large: LargeOutputs) -> McpServer {
    tool_tests::server(
        ServerOptions::default()
            .large_outputs(large)
            .clock(tool_tests::TokioClock::new()),
    )
}

// In this file because its binary has no #[prompt] (the prompt tests' binaries all do).
#[tokio::test]
async fn a_server_whose_lists_may_change_offers_prompts_before_it_has_any() {
    use tool_runtime::registry::DynamicPrompt;
    let server = McpServer::with_options(
        Registry::new().unwrap(),
        ServerInfo::new("later", "1"),
        ServerOptions::default().list_changed(true),
    );
    let mut client = Client::new(&server);
    let init = client.call(INITIALIZE).await;
    assert_eq!(
        init["result"]["capabilities"]["prompts"],
        json!({"listChanged": true}),
        "this test binary has no #[prompt]: offered because prompts may come"
    );
    client.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let empty = client
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#)
        .await;
    assert_eq!(empty["result"]["prompts"], json!([]));
    let later = DynamicPrompt::without_arguments("later", "Comes later.", || async {
        Ok::<_, String>("Here now.")
    })
    .unwrap();
    server.registry().add_prompt(later).unwrap();
    let listed = client
        .call(r#"{"jsonrpc":"2.0","id":2,"method":"prompts/list"}"#)
        .await;
    assert_eq!(listed["result"]["prompts"][0]["name"], "later");
}
