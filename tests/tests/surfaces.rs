//! Prompts, resources and completion over the protocol layer: what clients list, get and
//! read, the errors they get for each mistake, subscriptions, and caching hints.

use serde_json::{json, Value};
use std::time::Duration;
use tool_runtime::context::CompletionContext;
use tool_runtime::mcp::connection::outbox;
use tool_runtime::mcp::{CacheScope, McpServer, ServerOptions};
use tool_runtime::registry::ResourceUpdates;
use tool_runtime::result::PromptMessage;
use tool_runtime::{prompt, resource, Registry, State};
use tool_tests::{names, Client, Signal};

/// Tone of a greeting.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Tone {
    Formal,
    Friendly,
    Funny,
}

/// Greet someone by name.
#[prompt(title = "Greeting")]
fn greet(
    /// Who to greet.
    name: String,
    /// How to sound.
    tone: Option<Tone>,
) -> Vec<PromptMessage> {
    let tone = tone.map_or("plain".to_owned(), |t| format!("{t:?}").to_lowercase());
    vec![
        PromptMessage::user(format!("Greet {name} in a {tone} way.")),
        PromptMessage::assistant("Gladly."),
    ]
}

/// Plan a trip to a city.
#[prompt]
fn plan_trip(
    /// The country.
    country: String,
    /// The city, completed from the country.
    #[arg(complete = cities)]
    city: String,
    /// How many days.
    days: u32,
) -> Result<String, String> {
    if days == 0 {
        return Err("a trip lasts at least one day".to_owned());
    }
    Ok(format!("Plan {days} days in {city}, {country}."))
}

/// Cities of the country given so far.
fn cities(typed: &str, context: &CompletionContext) -> Vec<&'static str> {
    let all: &[&str] = match context.argument("country") {
        Some("France") => &["Paris", "Lyon", "Lille", "Lens"],
        _ => &["Berlin", "Bern"],
    };
    all.iter()
        .copied()
        .filter(|city| city.starts_with(typed))
        .collect()
}

/// What the numbers count.
struct Unit(&'static str);

/// Numbers as text, to show that completions are capped.
#[prompt]
fn pick_number(
    /// Any number.
    #[arg(complete = many_numbers)]
    number: String,
    unit: State<Unit>,
) -> String {
    format!("{number} {}", unit.0)
}

fn many_numbers(typed: &str) -> Vec<String> {
    (0..250)
        .map(|n| n.to_string())
        .filter(|n| n.starts_with(typed))
        .collect()
}

/// Echo a word; its completion takes its time.
#[prompt]
fn echo_word(
    /// Any word.
    #[arg(complete = slow_words)]
    word: String,
) -> String {
    word
}

/// Fired when `slow_words` starts.
static COMPLETING: Signal = Signal::new();
/// Lets `slow_words` answer.
static COMPLETE_NOW: Signal = Signal::new();

/// Completes once told to, as one that asks a slow service would: it blocks its thread
/// until then.
fn slow_words(typed: &str) -> Vec<String> {
    COMPLETING.fire();
    COMPLETE_NOW.wait_blocking("the test letting the completion answer");
    vec![format!("{typed}-slowly")]
}

/// Where the library lives.
struct Library {
    name: &'static str,
}

/// The library's name.
#[resource("library://name", mime_type = "text/plain")]
fn library_name(library: State<Library>) -> String {
    library.name.to_owned()
}

/// A book of the library, by number.
#[resource("library://books/{number}", mime_type = "application/json")]
fn book(number: u32) -> Result<Value, String> {
    if number > 100 {
        return Err(format!("the library has no book {number}"));
    }
    Ok(json!({"number": number, "title": format!("Book {number}")}))
}

/// A file below the library's root.
#[resource("library:///files/{+path}")]
fn library_file(path: String) -> Vec<u8> {
    path.into_bytes()
}

/// The library's server: the binary's prompts and resources, with the state they take.
fn library(options: ServerOptions) -> (McpServer, ResourceUpdates) {
    let builder = Registry::builder()
        .state(Library { name: "Alexandria" })
        .state(Unit("books"));
    let updates = builder.resource_updates();
    let registry = builder.build().unwrap();
    let server = tool_tests::server_over(registry, options);
    (server, updates)
}

#[test]
fn a_prompt_or_resource_whose_state_is_missing_stops_the_build_naming_it() {
    let error = Registry::builder().build().unwrap_err().to_string();
    assert_eq!(
        error,
        "prompt `pick_number` takes State<surfaces::Unit>, but no surfaces::Unit was \
         registered; add it with Registry::builder().state(...)"
    );
    let error = Registry::builder()
        .state(Unit("books"))
        .build()
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "resource `library_name` takes State<surfaces::Library>, but no surfaces::Library was \
         registered; add it with Registry::builder().state(...)"
    );
}

const META: &str = concat!(
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{}}"#
);

#[tokio::test]
async fn prompts_are_listed_with_their_arguments_and_filled_in() {
    let (server, _) = library(ServerOptions::default());
    let mut client = Client::initialized(&server);
    let list = client
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#)
        .await;
    let prompts = list["result"]["prompts"].as_array().unwrap();
    assert_eq!(
        names(&list, "prompts", "name"),
        ["echo_word", "greet", "pick_number", "plan_trip"]
    );
    assert_eq!(
        prompts[1],
        json!({
            "name": "greet",
            "title": "Greeting",
            "description": "Greet someone by name.",
            "arguments": [
                {"name": "name", "description": "Who to greet.", "required": true},
                {"name": "tone", "description": "How to sound.", "required": false},
            ],
        })
    );

    let got = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","#,
            r#""params":{"name":"greet","arguments":{"name":"Ada","tone":"friendly"}}}"#
        ))
        .await;
    assert_eq!(
        got["result"]["messages"],
        json!([
            {"role": "user", "content": {"type": "text", "text": "Greet Ada in a friendly way."}},
            {"role": "assistant", "content": {"type": "text", "text": "Gladly."}},
        ])
    );
    // A number argument arrives as text and is read as the parameter's type.
    let got = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"plan_trip","#,
            r#""arguments":{"country":"France","city":"Lyon","days":"3"}}}"#
        ))
        .await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"],
        "Plan 3 days in Lyon, France."
    );
}

#[tokio::test]
async fn prompt_mistakes_get_errors_that_say_what_to_fix() {
    let (server, _) = library(ServerOptions::default());
    let mut client = Client::initialized(&server);
    let missing = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","#,
            r#""params":{"name":"plan_trip","arguments":{"country":"France"}}}"#
        ))
        .await;
    assert_eq!(missing["error"]["code"], -32602);
    let message = missing["error"]["message"].as_str().unwrap();
    assert!(message.contains("prompt `plan_trip`"), "{message}");
    assert!(
        message.contains("city") && message.contains("days"),
        "{message}"
    );

    let wrong = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","#,
            r#""params":{"name":"greet","arguments":{"name":"Ada","tone":"grumpy"}}}"#
        ))
        .await;
    assert_eq!(wrong["error"]["code"], -32602);
    let message = wrong["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("tone") && message.contains("friendly"),
        "{message}"
    );

    let unknown = client
        .call(r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"greeting"}}"#)
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(unknown["error"]["message"], "Unknown prompt: greeting");

    let failed = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"plan_trip","#,
            r#""arguments":{"country":"France","city":"Lyon","days":"0"}}}"#
        ))
        .await;
    assert_eq!(
        failed["error"]["code"], -32602,
        "the function refused the request"
    );
    assert_eq!(failed["error"]["message"], "a trip lasts at least one day");

    let nameless = client
        .call(r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{}}"#)
        .await;
    assert_eq!(nameless["error"]["code"], -32602);
    assert!(nameless["error"]["message"]
        .as_str()
        .unwrap()
        .contains("\"name\""));
}

#[tokio::test]
async fn resources_and_templates_are_listed_apart_and_read_by_uri() {
    let (server, _) = library(ServerOptions::default());
    let mut client = Client::initialized(&server);
    let list = client
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#)
        .await;
    assert_eq!(
        list["result"]["resources"],
        json!([{"uri": "library://name", "name": "library_name",
                "description": "The library's name.", "mimeType": "text/plain"}])
    );
    let templates = client
        .call(r#"{"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}"#)
        .await;
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        ["library:///files/{+path}", "library://books/{number}"]
    );

    // State is injected as for tools.
    let name = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","#,
            r#""params":{"uri":"library://name"}}"#
        ))
        .await;
    assert_eq!(
        name["result"]["contents"],
        json!([{"uri": "library://name", "mimeType": "text/plain", "text": "Alexandria"}])
    );
    // A template variable is read as the parameter's type.
    let book = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","#,
            r#""params":{"uri":"library://books/42"}}"#
        ))
        .await;
    assert_eq!(
        book["result"]["contents"],
        json!([{"uri": "library://books/42", "mimeType": "application/json",
                "text": "{\"number\":42,\"title\":\"Book 42\"}"}])
    );
    // A reserved expansion spans segments; bytes are sent as base64.
    let file = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":5,"method":"resources/read","#,
            r#""params":{"uri":"library:///files/a/b.txt"}}"#
        ))
        .await;
    assert_eq!(file["result"]["contents"][0]["blob"], "YS9iLnR4dA==");
    assert_eq!(
        file["result"]["contents"][0]["uri"],
        "library:///files/a/b.txt"
    );
}

#[tokio::test]
async fn resource_mistakes_get_errors_that_carry_the_uri() {
    let (server, _) = library(ServerOptions::default());
    let mut client = Client::initialized(&server);
    let missing = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","#,
            r#""params":{"uri":"library://nothing"}}"#
        ))
        .await;
    assert_eq!(
        missing["error"],
        json!({"code": -32002, "message": "Resource not found: library://nothing",
               "data": {"uri": "library://nothing"}})
    );
    let not_a_number = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","#,
            r#""params":{"uri":"library://books/forty"}}"#
        ))
        .await;
    assert_eq!(not_a_number["error"]["code"], -32602);
    let message = not_a_number["error"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        "Invalid arguments for resource `book`: 'number' must be an integer between 0 and \
         4294967295; got \"forty\""
    );
    let failed = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","#,
            r#""params":{"uri":"library://books/500"}}"#
        ))
        .await;
    assert_eq!(
        failed["error"]["code"], -32602,
        "the function refused the request"
    );
    assert_eq!(failed["error"]["message"], "the library has no book 500");

    // At 2026-07-28 a missing resource is -32602, still with the URI.
    let mut stateless = Client::new(&server);
    let missing = stateless
        .call(&format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"resources/read","#,
                r#""params":{{"uri":"library://nothing",{META}}}}}"#
            ),
            META = META
        ))
        .await;
    assert_eq!(missing["error"]["code"], -32602);
    assert_eq!(
        missing["error"]["data"],
        json!({"uri": "library://nothing"})
    );
}

#[tokio::test]
async fn completion_uses_the_named_function_with_context_or_the_enum_values() {
    let (server, _) = library(ServerOptions::default());
    let mut client = Client::initialized(&server);
    let france = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"completion/complete","#,
            r#""params":{"ref":{"type":"ref/prompt","name":"plan_trip"},"#,
            r#""argument":{"name":"city","value":"L"},"#,
            r#""context":{"arguments":{"country":"France"}}}}"#
        ))
        .await;
    assert_eq!(
        france["result"]["completion"],
        json!({"values": ["Lyon", "Lille", "Lens"], "total": 3, "hasMore": false})
    );
    let elsewhere = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"completion/complete","#,
            r#""params":{"ref":{"type":"ref/prompt","name":"plan_trip"},"#,
            r#""argument":{"name":"city","value":"Be"}}}"#
        ))
        .await;
    assert_eq!(
        elsewhere["result"]["completion"]["values"],
        json!(["Berlin", "Bern"])
    );
    // An enum completes from its values with no function.
    let tone = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":3,"method":"completion/complete","#,
            r#""params":{"ref":{"type":"ref/prompt","name":"greet"},"#,
            r#""argument":{"name":"tone","value":"f"}}}"#
        ))
        .await;
    assert_eq!(
        tone["result"]["completion"]["values"],
        json!(["formal", "friendly", "funny"])
    );
    // At most 100 values, with the total and hasMore.
    let many = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":4,"method":"completion/complete","#,
            r#""params":{"ref":{"type":"ref/prompt","name":"pick_number"},"#,
            r#""argument":{"name":"number","value":""}}}"#
        ))
        .await;
    assert_eq!(
        many["result"]["completion"]["values"]
            .as_array()
            .unwrap()
            .len(),
        100
    );
    assert_eq!(many["result"]["completion"]["total"], 250);
    assert_eq!(many["result"]["completion"]["hasMore"], true);

    let unknown = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":5,"method":"completion/complete","#,
            r#""params":{"ref":{"type":"ref/prompt","name":"plan_trip"},"#,
            r#""argument":{"name":"town","value":""}}}"#
        ))
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(
        unknown["error"]["message"],
        "`plan_trip` has no argument `town`; its arguments: country, city, days"
    );
}

#[tokio::test]
async fn a_slow_completion_function_holds_up_no_other_request() {
    let (server, _) = library(ServerOptions::default());
    let mut client = Client::initialized(&server);
    client.send(concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"completion/complete","#,
        r#""params":{"ref":{"type":"ref/prompt","name":"echo_word"},"#,
        r#""argument":{"name":"word","value":"go"}}}"#
    ));
    // Were the completion run on the executor, it would hold it until told to answer.
    COMPLETING.wait("the completion's start").await;
    client.send(concat!(
        r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","#,
        r#""params":{"name":"echo_word","arguments":{"word":"hi"}}}"#
    ));
    let first = client.next().await;
    assert_eq!(
        first["id"], 2,
        "a prompt (work on the executor) is answered while the completion blocks its thread"
    );
    COMPLETE_NOW.fire();
    let completed = client.next().await;
    assert_eq!(completed["id"], 1);
    assert_eq!(
        completed["result"]["completion"]["values"],
        json!(["go-slowly"])
    );
}

#[tokio::test]
async fn subscribers_hear_of_updates_to_their_resources_only() {
    let (server, updates) = library(ServerOptions::default());
    let mut client = Client::initialized(&server);
    let (unsolicited, mut announcements) = outbox();
    client.connection.set_unsolicited(unsolicited);
    let subscribed = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","#,
            r#""params":{"uri":"library://books/7"}}"#
        ))
        .await;
    assert_eq!(subscribed["result"], json!({}));
    let unknown = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","#,
            r#""params":{"uri":"library://nothing"}}"#
        ))
        .await;
    assert_eq!(unknown["error"]["code"], -32002);

    let also = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","#,
            r#""params":{"uri":"library://books/9"}}"#
        ))
        .await;
    assert_eq!(also["result"], json!({}));

    // The updates are watched from the first subscription on: no wait is needed.
    let mut heard = async || {
        let message = tokio::time::timeout(*tool_tests::PATIENCE, announcements.recv())
            .await
            .expect("an update in good time")
            .expect("the channel is open");
        serde_json::from_slice::<Value>(&message.bytes).unwrap()["params"]["uri"].clone()
    };
    updates.updated("library://books/8");
    updates.updated("library://books/7");
    assert_eq!(
        heard().await,
        "library://books/7",
        "book 8 has no subscriber"
    );

    let unsubscribed = client
        .call(concat!(
            r#"{"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","#,
            r#""params":{"uri":"library://books/7"}}"#
        ))
        .await;
    assert_eq!(unsubscribed["result"], json!({}));
    // Updates arrive in order: the one for book 9 coming first shows book 7's was skipped.
    updates.updated("library://books/7");
    updates.updated("library://books/9");
    assert_eq!(
        heard().await,
        "library://books/9",
        "no update after unsubscribing"
    );
}

#[tokio::test]
async fn capabilities_lists_pages_and_caching_hints_follow_the_catalog_and_options() {
    let options = ServerOptions::default()
        .page_size(2)
        .list_cache(Duration::from_secs(60), CacheScope::Private);
    let (server, _) = library(options);
    let mut client = Client::initialized(&server);
    let first = client
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#)
        .await;
    assert_eq!(first["result"]["prompts"].as_array().unwrap().len(), 2);
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    let second = client
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{{"cursor":"{cursor}"}}}}"#
        ))
        .await;
    assert_eq!(
        names(&second, "prompts", "name"),
        ["pick_number", "plan_trip"]
    );
    assert!(
        second["result"].get("nextCursor").is_none(),
        "the last page"
    );
    let foreign = client
        .call(r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{"cursor":"tools-2"}}"#)
        .await;
    assert_eq!(
        foreign["error"]["code"], -32602,
        "a tools cursor is not a prompts cursor"
    );

    let mut stateless = Client::new(&server);
    let discover = stateless
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{{{META}}}}}"#
        ))
        .await;
    let capabilities = &discover["result"]["capabilities"];
    assert_eq!(
        capabilities["prompts"],
        json!({"listChanged": false}),
        "the binary's own prompts never change"
    );
    assert_eq!(
        capabilities["resources"],
        json!({"subscribe": true, "listChanged": false}),
        "subscriptions through subscriptions/listen at 2026-07-28"
    );
    assert_eq!(capabilities["completions"], json!({}));
    let list = stateless
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"resources/templates/list","params":{{{META}}}}}"#
        ))
        .await;
    assert_eq!(list["result"]["ttlMs"], 60_000);
    assert_eq!(list["result"]["cacheScope"], "private");
    assert_eq!(list["result"]["resultType"], "complete");
    let read = stateless
        .call(&format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":6,"method":"resources/read","#,
                r#""params":{{"uri":"library://name",{META}}}}}"#
            ),
            META = META
        ))
        .await;
    assert_eq!(read["result"]["ttlMs"], 0);
    assert_eq!(read["result"]["cacheScope"], "private");
    let subscribe = stateless
        .call(&format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","#,
                r#""params":{{"uri":"library://name",{META}}}}}"#
            ),
            META = META
        ))
        .await;
    assert_eq!(subscribe["error"]["code"], -32601);
}

#[tokio::test]
async fn a_subscriber_that_fell_behind_is_told_every_resource_it_watches_may_have_changed() {
    let (server, updates) = library(ServerOptions::default());
    let mut client = Client::initialized(&server);
    let (unsolicited, mut announcements) = outbox();
    client.connection.set_unsolicited(unsolicited);
    for (id, uri) in [(1, "library://books/1"), (2, "library://books/2")] {
        let subscribed = client
            .call(&format!(
                concat!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/subscribe","#,
                    r#""params":{{"uri":"{uri}"}}}}"#
                ),
                id = id,
                uri = uri
            ))
            .await;
        assert_eq!(subscribed["result"], json!({}));
    }
    // More updates than are kept, none of them of a watched resource, before the watcher
    // runs again: it cannot know which were lost.
    for n in 0..300 {
        updates.updated(&format!("library://books/{}", 100 + n));
    }
    let mut heard = Vec::new();
    for _ in 0..2 {
        let message = tokio::time::timeout(*tool_tests::PATIENCE, announcements.recv())
            .await
            .expect("an update in good time")
            .expect("the channel is open");
        let message: Value = serde_json::from_slice(&message.bytes).unwrap();
        assert_eq!(message["method"], "notifications/resources/updated");
        heard.push(message["params"]["uri"].as_str().unwrap().to_owned());
    }
    heard.sort();
    assert_eq!(heard, ["library://books/1", "library://books/2"]);
}
