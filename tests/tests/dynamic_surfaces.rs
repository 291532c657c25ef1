//! Prompts and resources added at run time: listed, got, read and completed as the
//! binary's own are, refused on a clash or a template that does not fit its arguments, and
//! announced to clients when they change (handshake era and `subscriptions/listen`).

use serde_json::{json, Value};
use tool_runtime::catalog::ItemKind;
use tool_runtime::mcp::connection::outbox;
use tool_runtime::mcp::{McpServer, ServerOptions};
use tool_runtime::registry::{
    CompletionTarget, DynamicPrompt, DynamicResource, RegistryError, ResourceUpdates,
};
use tool_runtime::{prompt, resource, Registry};
use tool_tests::{names, Client, INITIALIZE};

/// Say hello.
#[prompt]
fn hello() -> String {
    "Hello!".to_owned()
}

/// The house rules.
#[resource("notes://rules", mime_type = "text/plain")]
fn rules() -> String {
    "Be kind.".to_owned()
}

/// A shelf, by label: the binary's own template, which a run-time one may outrank.
#[resource("shelf://{b}")]
fn shelf(
    /// The label.
    b: String,
) -> String {
    format!("static {b}")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Topic {
    /// What to explain.
    topic: String,
    /// How many sentences.
    sentences: Option<Count>,
}

/// A count; its schema is a `$ref` to an integer, which a string argument is read through.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Count(u32);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoteId {
    /// The note's number.
    id: u32,
}

fn explain() -> DynamicPrompt {
    DynamicPrompt::new(
        "explain",
        "Explain a topic simply.",
        |args: Topic| async move {
            let sentences = args.sentences.map_or(3, |count| count.0);
            Ok::<_, String>(format!("Explain {} in {sentences} sentences.", args.topic))
        },
    )
    .unwrap()
    .title("Explain")
    .complete("topic", |typed, _| {
        ["gravity", "glaciers", "tides"]
            .iter()
            .filter(|topic| topic.starts_with(typed))
            .map(|topic| topic.to_string())
            .collect()
    })
}

fn note() -> DynamicResource {
    DynamicResource::template(
        "notes://{id}",
        "note",
        "One note.",
        |args: NoteId| async move {
            if args.id == 0 {
                return Err("notes are numbered from 1".to_owned());
            }
            Ok(format!("note {}", args.id))
        },
    )
    .unwrap()
    .mime_type("text/markdown")
}

fn readme() -> DynamicResource {
    DynamicResource::new("notes://readme", "readme", "How notes work.", || async {
        Ok::<_, String>("Notes are numbered from 1.")
    })
    .unwrap()
}

#[tokio::test]
async fn run_time_prompts_and_resources_are_listed_got_read_and_completed_like_static_ones() {
    let registry = Registry::builder()
        .prompt(explain())
        .resource(note())
        .resource(readme())
        .build()
        .unwrap();
    let prompts: Vec<String> = registry
        .prompts()
        .iter()
        .map(|p| p.name().to_owned())
        .collect();
    assert_eq!(prompts, ["explain", "hello"], "merged and sorted by name");
    let explain = registry.prompt("explain").unwrap();
    assert_eq!(explain.title(), Some("Explain"));
    assert!(explain.location().is_none(), "made at run time");
    let arguments: Vec<(&str, bool)> = explain
        .arguments()
        .map(|a| (a.name(), a.is_required()))
        .collect();
    assert_eq!(
        arguments,
        [("sentences", false), ("topic", true)],
        "a run-time prompt's arguments come in name order"
    );
    let uris: Vec<String> = registry
        .resources()
        .iter()
        .map(|r| r.uri().to_owned())
        .collect();
    assert_eq!(
        uris,
        [
            "notes://readme",
            "notes://rules",
            "notes://{id}",
            "shelf://{b}"
        ]
    );

    let messages = registry
        .get_prompt("explain", json!({"topic": "tides", "sentences": "2"}))
        .await
        .unwrap();
    assert_eq!(
        messages[0]["content"]["text"], "Explain tides in 2 sentences.",
        "a numeric argument sent as a string is read as its type"
    );
    let missing = registry.get_prompt("explain", json!({})).await.unwrap_err();
    assert!(
        missing.to_string().contains("topic"),
        "names the missing argument: {missing}"
    );

    // The exact URI wins over the template that also matches it.
    let readme = registry.read_resource("notes://readme").await.unwrap();
    assert_eq!(
        readme[0].text.as_deref(),
        Some("Notes are numbered from 1.")
    );
    let seven = registry.read_resource("notes://7").await.unwrap();
    assert_eq!(seven[0].text.as_deref(), Some("note 7"));
    assert_eq!(seven[0].uri, "notes://7");
    assert_eq!(seven[0].mime_type.as_deref(), Some("text/markdown"));
    let zero = registry.read_resource("notes://0").await.unwrap_err();
    assert_eq!(zero.to_string(), "notes are numbered from 1");
    let rules = registry.read_resource("notes://rules").await.unwrap();
    assert_eq!(
        rules[0].text.as_deref(),
        Some("Be kind."),
        "static still read"
    );

    let context = Default::default();
    let completed = registry
        .complete(CompletionTarget::Prompt("explain"), "topic", "g", &context)
        .unwrap();
    assert_eq!(completed.values, ["gravity", "glaciers"]);
    let none = registry
        .complete(
            CompletionTarget::Resource("notes://{id}"),
            "id",
            "",
            &context,
        )
        .unwrap();
    assert!(none.values.is_empty(), "no completion function, no enum");

    assert!(registry.remove_prompt("explain"));
    assert!(!registry.remove_prompt("explain"), "already gone");
    assert!(!registry.remove_prompt("hello"), "the binary's own stay");
    assert!(registry
        .get_prompt("explain", json!({"topic": "x"}))
        .await
        .is_err());
    assert!(registry.remove_resource("notes://{id}"));
    assert!(!registry.has_resource("notes://7"));
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct LabelA {
    a: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct LabelC {
    c: String,
}

#[tokio::test]
async fn of_the_templates_that_match_a_uri_the_first_in_uri_order_reads_it() {
    let registry = Registry::new().unwrap();
    let before = DynamicResource::template("shelf://{a}", "a", "A.", |l: LabelA| async move {
        Ok::<_, String>(format!("run-time {}", l.a))
    })
    .unwrap();
    registry.add_resource(before).unwrap();
    let read = registry.read_resource("shelf://x").await.unwrap();
    assert_eq!(
        read[0].text.as_deref(),
        Some("run-time x"),
        "shelf://{{a}} sorts before the binary's shelf://{{b}}"
    );
    assert!(registry.remove_resource("shelf://{a}"));
    let after = DynamicResource::template("shelf://{c}", "c", "C.", |l: LabelC| async move {
        Ok::<_, String>(format!("run-time {}", l.c))
    })
    .unwrap();
    registry.add_resource(after).unwrap();
    let read = registry.read_resource("shelf://x").await.unwrap();
    assert_eq!(
        read[0].text.as_deref(),
        Some("static x"),
        "the binary's shelf://{{b}} sorts before shelf://{{c}}"
    );
}

#[test]
fn clashes_and_templates_that_do_not_fit_their_arguments_are_refused() {
    let registry = Registry::builder().prompt(explain()).build().unwrap();
    let again = registry.add_prompt(explain()).unwrap_err();
    assert_eq!(
        again.to_string(),
        "a prompt named `explain` already exists (a prompt added at run time)"
    );
    let shadow =
        DynamicPrompt::without_arguments("hello", "Say hi.", || async { Ok::<_, String>("hi") })
            .unwrap();
    match registry.add_prompt(shadow).unwrap_err() {
        RegistryError::AlreadyExists { what, existing, .. } => {
            assert_eq!(what, ItemKind::Prompt);
            assert!(
                existing.starts_with("a #[prompt] at ") && existing.contains("dynamic_surfaces.rs"),
                "says where the static one is: {existing}"
            );
        }
        other => panic!("expected AlreadyExists, got {other:?}"),
    }
    let rules = DynamicResource::new("notes://rules", "rules", "Again.", || async {
        Ok::<_, String>("x")
    })
    .unwrap();
    assert!(registry
        .add_resource(rules)
        .unwrap_err()
        .to_string()
        .starts_with("a resource with URI `notes://rules` already exists (a #[resource]"));

    let misspelled = DynamicPrompt::new("explain_again", "Explain.", |args: Topic| async move {
        Ok::<_, String>(args.topic)
    })
    .unwrap()
    .complete("topc", |_, _| Vec::new());
    assert_eq!(
        registry.add_prompt(misspelled).unwrap_err().to_string(),
        "prompt `explain_again` cannot be built: it completes `topc`, which is not one of its \
         arguments (sentences, topic)"
    );

    let missing_field = DynamicResource::template(
        "notes://{id}/{part}",
        "part",
        "A part of a note.",
        |args: NoteId| async move { Ok::<_, String>(args.id.to_string()) },
    )
    .unwrap_err();
    assert_eq!(
        missing_field.to_string(),
        "resource `notes://{id}/{part}` cannot be built: the template variable `part` is not a \
         field of the argument type (its fields: id)"
    );
    let extra_field = DynamicResource::template(
        "notes://{topic}",
        "by topic",
        "Notes on a topic.",
        |args: Topic| async move { Ok::<_, String>(args.topic) },
    )
    .unwrap_err();
    assert!(
        extra_field
            .to_string()
            .contains("the argument field `sentences` is not a variable of the template"),
        "{extra_field}"
    );
    let templated =
        DynamicResource::new("notes://{id}", "n", "N.", || async { Ok::<_, String>("x") })
            .unwrap_err();
    assert!(templated.to_string().contains("DynamicResource::template"));
    let no_scheme =
        DynamicResource::new("readme", "n", "N.", || async { Ok::<_, String>("x") }).unwrap_err();
    assert!(no_scheme.to_string().contains("scheme"), "{no_scheme}");
}

/// A server with a prompt and a resource added at run time.
fn notes() -> (McpServer, ResourceUpdates) {
    let builder = Registry::builder().prompt(explain()).resource(note());
    let updates = builder.resource_updates();
    let registry = builder.build().unwrap();
    let server = tool_tests::server_over(registry, ServerOptions::default());
    (server, updates)
}

#[tokio::test]
async fn handshake_clients_are_told_when_prompts_or_resources_change() {
    let (server, _) = notes();
    let mut client = Client::new(&server);
    let (unsolicited, mut announcements) = outbox();
    client.connection.set_unsolicited(unsolicited);
    let initialized = client.call(INITIALIZE).await;
    let capabilities = &initialized["result"]["capabilities"];
    assert_eq!(capabilities["prompts"], json!({"listChanged": true}));
    assert_eq!(
        capabilities["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert_eq!(
        capabilities["tools"],
        json!({"listChanged": false}),
        "no tools were added at run time"
    );
    client.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    let before = client
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#)
        .await;
    assert_eq!(names(&before, "prompts", "name"), ["explain", "hello"]);

    let mut announced = async || {
        let message = tokio::time::timeout(*tool_tests::PATIENCE, announcements.recv())
            .await
            .expect("a notification in good time")
            .expect("the channel is open");
        serde_json::from_slice::<Value>(&message.bytes).unwrap()["method"].clone()
    };
    let recap = DynamicPrompt::without_arguments("recap", "Recap the session.", || async {
        Ok::<_, String>("Recap what we did.")
    })
    .unwrap();
    server.registry().add_prompt(recap).unwrap();
    assert_eq!(announced().await, "notifications/prompts/list_changed");
    let after = client
        .call(r#"{"jsonrpc":"2.0","id":2,"method":"prompts/list"}"#)
        .await;
    assert_eq!(
        names(&after, "prompts", "name"),
        ["explain", "hello", "recap"],
        "the page is rebuilt for the new version"
    );
    let got = client
        .call(r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"recap"}}"#)
        .await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"],
        "Recap what we did."
    );

    assert!(server.registry().remove_resource("notes://{id}"));
    assert_eq!(announced().await, "notifications/resources/list_changed");
    let templates = client
        .call(r#"{"jsonrpc":"2.0","id":4,"method":"resources/templates/list"}"#)
        .await;
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        ["shelf://{b}"]
    );
    let gone = client
        .call(r#"{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"notes://3"}}"#)
        .await;
    assert_eq!(gone["error"]["code"], -32002);
}

const META: &str = concat!(
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{}}"#
);

#[tokio::test]
async fn a_listen_stream_carries_what_it_asked_for_and_nothing_else() {
    let (server, updates) = notes();
    let mut listener = Client::new(&server);
    listener.send(&format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","#,
            r#""params":{{"notifications":{{"toolsListChanged":true,"promptsListChanged":true,"#,
            r#""resourceSubscriptions":["notes://7","notes://readme"]}},{META}}}}}"#
        ),
        META = META
    ));
    assert_eq!(
        listener.next_now(),
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "l"},
            "notifications": {"promptsListChanged": true,
                              "resourceSubscriptions": ["notes://7", "notes://readme"]},
        }}),
        "tools are not announced as changing here, so that filter is not honored"
    );

    let registry = server.registry();
    // Not asked for: a resource list change, an update of another URI.
    registry.add_resource(readme()).unwrap();
    updates.updated("notes://8");
    updates.updated("notes://7");
    let update = listener.next().await;
    assert_eq!(
        update,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "l"}, "uri": "notes://7"}}),
        "the first thing on the stream: neither the list change nor notes://8"
    );
    assert!(registry.remove_prompt("explain"));
    let changed = listener.next().await;
    assert_eq!(changed["method"], "notifications/prompts/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "l"
    );

    let mut discover = Client::new(&server);
    let listed = discover
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{{{META}}}}}"#
        ))
        .await;
    assert_eq!(names(&listed, "prompts", "name"), ["hello"]);
    assert_eq!(
        listed["result"]["ttlMs"], 0,
        "a list that can change is not cached"
    );
}
