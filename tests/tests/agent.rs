//! Tools in an agent loop: each provider's tool calls in and results out (golden files in
//! `tests/golden/agent/`, which `tests/clients/provider_types.py` checks against the
//! providers' own SDK types), calls that fail in every way a model can make them fail,
//! concurrency and tools that run alone, and the loop run over HTTP against an
//! OpenAI-compatible server scripted here, each limit tripping with its status.

#[path = "../fixtures/agent.rs"]
mod fixture;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use tool_runtime::agent::openai::ChatClient;
use tool_runtime::agent::{
    AgentLoop, Approval, Dialect, Limits, ModelArguments, ModelRequest, Status, ToolCall, Tools,
};
use tool_runtime::Registry;
use tool_tests::golden;

fn registry() -> Registry {
    Registry::new().expect("registry")
}

/// A model's turn in `dialect` that calls: a tool well, an unknown tool, a tool with bad
/// arguments, a tool that answers an image, a tool that fails, a tool with almost-JSON
/// arguments (where the dialect sends text), and a tool without arguments.
fn turn_calling_everything(dialect: Dialect) -> Value {
    match dialect {
        Dialect::OpenAiChat => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": null, "message": {
                "role": "assistant", "content": null, "refusal": null, "annotations": [],
                "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "get_wether", "arguments": "{\"city\": \"Lyon\"}"}},
                    {"id": "call_3", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\": 42}"}},
                    {"id": "call_4", "type": "function",
                     "function": {"name": "weather_chart", "arguments": "{}"}},
                    {"id": "call_5", "type": "function",
                     "function": {"name": "rain_sensor", "arguments": "{}"}},
                    {"id": "call_6", "type": "function", "function": {
                        "name": "get_weather",
                        "arguments": "```json\n{\"city\": \"Nice\", \"days\": 1"
                    }},
                    {"id": "call_7", "type": "function",
                     "function": {"name": "get_time", "arguments": ""}}
                ]}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160}
        }),
        Dialect::OpenAiResponses => json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "m",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
                 "arguments": "{\"city\": \"Paris\"}", "status": "completed"},
                {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_wether",
                 "arguments": "{\"city\": \"Lyon\"}", "status": "completed"},
                {"type": "function_call", "id": "fc_3", "call_id": "call_3",
                 "name": "get_weather", "arguments": "{\"city\": 42}", "status": "completed"},
                {"type": "function_call", "id": "fc_4", "call_id": "call_4",
                 "name": "weather_chart", "arguments": "{}", "status": "completed"},
                {"type": "function_call", "id": "fc_5", "call_id": "call_5",
                 "name": "rain_sensor", "arguments": "{}", "status": "completed"},
                {"type": "function_call", "id": "fc_6", "call_id": "call_6",
                 "name": "get_weather", "arguments": "Here: {\"city\": \"Nice\", \"days\": 1} done",
                 "status": "completed"},
                {"type": "function_call", "id": "fc_7", "call_id": "call_7",
                 "name": "get_time", "arguments": "{}", "status": "completed"}
            ],
            "usage": {"input_tokens": 120, "output_tokens": 40, "total_tokens": 160,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}
        }),
        Dialect::Anthropic => json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
            "stop_reason": "tool_use", "stop_sequence": null,
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                 "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_wether",
                 "input": {"city": "Lyon"}},
                {"type": "tool_use", "id": "toolu_3", "name": "get_weather", "input": {"city": 42}},
                {"type": "tool_use", "id": "toolu_4", "name": "weather_chart", "input": {}},
                {"type": "tool_use", "id": "toolu_5", "name": "rain_sensor", "input": {}},
                {"type": "tool_use", "id": "toolu_7", "name": "get_time", "input": {}}
            ],
            "usage": {"input_tokens": 100, "output_tokens": 40, "cache_creation_input_tokens": 15,
                      "cache_read_input_tokens": 5}
        }),
        Dialect::Gemini => json!({
            "candidates": [{
                "index": 0, "finishReason": "STOP",
                "content": {"role": "model", "parts": [
                    {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}},
                     "thoughtSignature": "c2lnbmF0dXJl"},
                    {"functionCall": {"id": "c2", "name": "get_wether", "args": {"city": "Lyon"}}},
                    {"functionCall": {"id": "c3", "name": "get_weather", "args": {"city": 42}}},
                    {"functionCall": {"id": "c4", "name": "weather_chart", "args": {}}},
                    {"functionCall": {"id": "c5", "name": "rain_sensor"}},
                    {"functionCall": {"name": "get_time", "args": {}}}
                ]}
            }],
            "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 30,
                              "thoughtsTokenCount": 10, "totalTokenCount": 160},
            "modelVersion": "gemini", "responseId": "r1"
        }),
        _ => unreachable!("a dialect the tests do not know"),
    }
}

fn dialect_file(dialect: Dialect) -> String {
    format!("agent/{}.json", dialect.name())
}

#[tokio::test]
async fn every_dialect_answers_each_call_once_in_order_as_its_golden_file() {
    let registry = registry();
    let tools = Tools::new(&registry);
    for dialect in Dialect::ALL {
        let turn = dialect
            .read_turn(&turn_calling_everything(dialect))
            .unwrap();
        assert_eq!(turn.usage.unwrap().total_tokens, 160, "{dialect}");
        let answer = tools.answer(dialect, &turn).await;
        assert_eq!(
            answer.calls.len(),
            turn.calls.len(),
            "{dialect}: one result per call"
        );
        let names: Vec<&str> = answer.calls.iter().map(|c| c.call.name.as_str()).collect();
        let asked: Vec<&str> = turn.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, asked, "{dialect}: in the model's order");
        // What the next request sends after the user's question: the model's turn, then
        // the results. The SDK check reads this file.
        let mut history = vec![dialect.user_message("What is the weather in Paris?")];
        history.extend(dialect.turn_items(&turn));
        history.extend(answer.messages.clone());
        let text = serde_json::to_string_pretty(&history).unwrap() + "\n";
        golden(&dialect_file(dialect), &text);
    }
}

#[tokio::test]
async fn each_result_says_what_a_model_needs_to_act_on() {
    let registry = registry();
    let tools = Tools::new(&registry);
    let turn = Dialect::OpenAiChat
        .read_turn(&turn_calling_everything(Dialect::OpenAiChat))
        .unwrap();
    let answer = tools.answer(Dialect::OpenAiChat, &turn).await;
    let content = |index: usize| {
        answer.messages[index]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let ids: Vec<&Value> = answer.messages.iter().map(|m| &m["tool_call_id"]).collect();
    assert_eq!(
        ids,
        ["call_1", "call_2", "call_3", "call_4", "call_5", "call_6", "call_7"]
    );
    assert_eq!(content(0), r#"{"city":"Paris","days":0,"temp_c":17}"#);
    let unknown = content(1);
    assert!(
        unknown.starts_with("Error: unknown tool 'get_wether'; did you mean 'get_weather'?"),
        "{unknown}"
    );
    assert!(
        unknown.contains("The tools are: delete_file, get_time, get_weather, meet,"),
        "{unknown}"
    );
    let invalid = content(2);
    assert!(
        invalid.contains("city") && invalid.contains("42"),
        "which parameter, what came: {invalid}"
    );
    assert!(answer.calls[2].is_invalid() && answer.calls[1].is_invalid());
    assert!(!answer.calls[4].is_invalid() && answer.calls[4].result.is_error());
    assert!(
        content(3).contains("the week's temperatures") && content(3).contains("image/png"),
        "Chat takes text only, so the image is named: {}",
        content(3)
    );
    assert_eq!(content(4), "Error: the rain sensor is offline");
    let repaired = content(5);
    assert!(
        repaired.starts_with(r#"{"city":"Nice","days":1,"temp_c":16}"#),
        "{repaired}"
    );
    assert!(
        repaired.contains("were repaired (took the arguments out of a code fence; closed 1"),
        "{repaired}"
    );
    let repair = answer.calls[5]
        .repair
        .as_ref()
        .expect("the repair is reported");
    assert!(repair.fence && repair.closed == 1);
    assert_eq!(content(6), "12:00", "empty arguments are no arguments");

    // Anthropic marks failures; Gemini answers an object, the output or the error.
    let turn = Dialect::Anthropic
        .read_turn(&turn_calling_everything(Dialect::Anthropic))
        .unwrap();
    let answer = tools.answer(Dialect::Anthropic, &turn).await;
    assert_eq!(
        answer.messages.len(),
        1,
        "one user message holds every result"
    );
    let blocks = answer.messages[0]["content"].as_array().unwrap();
    let flagged: Vec<bool> = blocks.iter().map(|b| b.get("is_error").is_some()).collect();
    assert_eq!(flagged, [false, true, true, false, true, false]);
    assert_eq!(blocks[3]["content"][1]["source"]["media_type"], "image/png");
    let turn = Dialect::Gemini
        .read_turn(&turn_calling_everything(Dialect::Gemini))
        .unwrap();
    let answer = tools.answer(Dialect::Gemini, &turn).await;
    let parts = answer.messages[0]["parts"].as_array().unwrap();
    assert_eq!(
        parts[0]["functionResponse"]["response"]["output"]["temp_c"],
        17
    );
    assert!(parts[4]["functionResponse"]["response"]["error"]
        .as_str()
        .unwrap()
        .contains("offline"));
    assert!(
        parts[5]["functionResponse"].get("id").is_none(),
        "no id when the call had none"
    );
    assert_eq!(
        parts[3]["functionResponse"]["parts"][0]["inlineData"]["mimeType"],
        "image/png"
    );
}

#[tokio::test]
async fn a_registry_can_refuse_to_repair_and_a_long_output_is_cut() {
    let strict = Registry::builder().repair_arguments(false).build().unwrap();
    let call = ToolCall::new(
        Some("c".into()),
        "get_weather",
        ModelArguments::Text("```json\n{\"city\": \"Nice\"}\n```".into()),
    );
    let answered = Tools::new(&strict).run(std::slice::from_ref(&call)).await;
    let error = answered[0].result.error().unwrap().to_string();
    assert!(
        error.contains("not JSON") && error.contains("city"),
        "{error}"
    );
    assert!(answered[0].repair.is_none());

    let registry = registry();
    let answered = Tools::new(&registry)
        .max_output_bytes(10)
        .run(&[call])
        .await;
    let messages = Dialect::OpenAiChat.results(&answered);
    let text = messages[0]["content"].as_str().unwrap();
    assert!(
        text.starts_with(r#"{"city":"N"#) && text.contains("The output was cut"),
        "{text}"
    );
}

#[tokio::test]
async fn a_value_cut_off_mid_way_never_runs_a_tool_that_changes_anything() {
    let registry = registry();
    let tools = Tools::new(&registry);
    let call = |name: &str, text: &str| {
        ToolCall::new(Some("c".into()), name, ModelArguments::Text(text.into()))
    };
    // `delete_file` changes things: `/tmp/rep` may be the start of `/tmp/report.txt`.
    let answered = tools
        .run(&[call("delete_file", r#"{"path": "/tmp/rep"#)])
        .await;
    let error = answered[0].result.error().expect("refused").to_string();
    assert!(
        error.contains("cut off in the middle of 'path'") && error.contains("not read-only"),
        "{error}"
    );
    assert!(answered[0].is_invalid());
    // Only the closing brace missing: nothing was invented, so it runs (and asks approval).
    let answered = tools
        .run(&[call("delete_file", r#"{"path": "/tmp/report.txt""#)])
        .await;
    assert!(
        !answered[0].is_invalid(),
        "a value that is whole is no cut: {:?}",
        answered[0].result
    );
    // A read-only tool runs with what came, and the model is told the value may be short.
    let answered = tools
        .run(&[call("get_weather", r#"{"city": "Nice", "days": 1"#)])
        .await;
    assert!(
        answered[0].result.error().is_none(),
        "{:?}",
        answered[0].result
    );
    let messages = Dialect::OpenAiChat.results(&answered);
    let text = messages[0]["content"].as_str().unwrap();
    assert!(
        text.contains("the value of 'days' was cut off and may be incomplete"),
        "{text}"
    );
}

/// On paused time: `meet` waits two seconds for its pair, and the calls arrive before
/// the clock moves, so whether they met does not depend on how busy the machine is.
#[tokio::test(start_paused = true)]
async fn calls_overlap_up_to_the_bound_and_an_exclusive_tool_runs_alone() {
    let registry = registry();
    let meet = |name: &str| {
        ToolCall::new(
            None,
            "meet",
            ModelArguments::Object(json!({"name": name}).as_object().unwrap().clone()),
        )
    };
    let both = [meet("ann"), meet("bob")];
    let answered = Tools::new(&registry).concurrency(2).run(&both).await;
    for call in &answered {
        assert!(call.result.error().is_none(), "{:?}", call.result.error());
    }
    let answered = Tools::new(&registry).concurrency(1).run(&both).await;
    let alone = answered[0].result.error().unwrap().to_string();
    assert!(alone.contains("waited alone"), "one at a time: {alone}");

    let note = |tool: &str| ToolCall::new(None, tool, ModelArguments::Object(Default::default()));
    let mut write = note("write_note");
    write.arguments = ModelArguments::Text(r#"{"text": "hi"}"#.into());
    let calls = [
        note("read_notes"),
        note("read_notes"),
        write,
        note("read_notes"),
        note("read_notes"),
    ];
    let answered = Tools::new(&registry).concurrency(4).run(&calls).await;
    assert!(answered.iter().all(|a| a.result.error().is_none()));
    assert_eq!(
        fixture::OVERLAPS.load(Ordering::SeqCst),
        0,
        "nothing ran beside write_note"
    );
    assert_eq!(
        fixture::MOST_READERS.load(Ordering::SeqCst),
        2,
        "the readers around it overlapped"
    );
}

#[tokio::test]
async fn a_part_of_the_registry_is_all_the_model_sees_and_may_call() {
    let registry = registry();
    let tools = Tools::new(&registry).only(["get_weather", "get_time"]);
    let declared = tools.declarations(Dialect::OpenAiChat);
    let names: Vec<&str> = declared
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_time", "get_weather"]);
    let call = ToolCall::new(
        Some("c".into()),
        "delete_file",
        ModelArguments::Text(r#"{"path": "/etc"}"#.into()),
    );
    let answered = tools.run(&[call]).await;
    let error = answered[0].result.error().unwrap().to_string();
    assert!(error.starts_with("unknown tool 'delete_file'"), "{error}");
    let text = Dialect::OpenAiChat.results(&answered)[0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.ends_with("The tools are: get_time, get_weather."),
        "{text}"
    );
}

#[tokio::test]
async fn a_turn_without_calls_is_text_and_needs_no_results() {
    let registry = registry();
    let turns = [
        (
            Dialect::OpenAiChat,
            json!({"role": "assistant", "content": "Hi."}),
        ),
        (
            Dialect::OpenAiResponses,
            json!([{"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "Hi."}
            ]}]),
        ),
        (
            Dialect::Anthropic,
            json!({"role": "assistant", "content": [{"type": "text", "text": "Hi."}]}),
        ),
        (
            Dialect::Gemini,
            json!({"role": "model", "parts": [{"text": "Hi."}]}),
        ),
    ];
    for (dialect, message) in turns {
        let turn = dialect.read_turn(&message).unwrap();
        assert_eq!(
            (turn.text.as_deref(), turn.calls.len()),
            (Some("Hi."), 0),
            "{dialect}"
        );
        let answer = Tools::new(&registry).answer(dialect, &turn).await;
        assert!(
            answer.messages.is_empty(),
            "{dialect}: {:?}",
            answer.messages
        );
    }
}

#[test]
fn unreadable_turns_say_which_field_is_wrong() {
    let cases = [
        (
            Dialect::OpenAiChat,
            json!({"choices": []}),
            "`choices` is empty",
        ),
        (
            Dialect::OpenAiChat,
            json!({"role": "user", "content": "hi"}),
            "role is \"user\"",
        ),
        (
            Dialect::OpenAiChat,
            json!({"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {}}
            ]}),
            "`tool_calls[0].function.name` is missing",
        ),
        (
            Dialect::OpenAiResponses,
            json!({"output": [{"type": "function_call", "name": "x", "arguments": "{}"}]}),
            "`output[0].call_id` is missing",
        ),
        (
            Dialect::Anthropic,
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "name": "x", "input": {}}
            ]}),
            "`content[0].id` is missing",
        ),
        (
            Dialect::Gemini,
            json!({"candidates": [{"finishReason": "SAFETY"}]}),
            "no content (finish reason: SAFETY)",
        ),
    ];
    for (dialect, value, expected) in cases {
        let error = dialect.read_turn(&value).unwrap_err().to_string();
        assert!(error.contains(expected), "{dialect}: {error}");
    }
}

// The loop over HTTP, against an OpenAI-compatible server scripted by each test.

/// What the scripted server answers a request.
enum Reply {
    Json(u16, Vec<(&'static str, String)>, Value),
    Stream(Vec<Value>),
    /// Nothing, for this long.
    Silence(std::time::Duration),
}

/// The `n`th request's (from 0) reply, given the request.
type Script = Arc<dyn Fn(usize, &Value) -> Reply + Send + Sync>;

#[derive(Clone)]
struct ScriptedModel {
    script: Script,
    requests: Arc<Mutex<Vec<Value>>>,
}

async fn completions(State(model): State<ScriptedModel>, body: axum::Json<Value>) -> Response {
    let index = {
        let mut requests = model.requests.lock().unwrap();
        requests.push(body.0.clone());
        requests.len() - 1
    };
    let reply = (model.script)(index, &body.0);
    if let Reply::Silence(time) = reply {
        tokio::time::sleep(time).await;
        return says("Too late.").into_response_now();
    }
    match reply {
        Reply::Silence(_) => unreachable!("answered above"),
        Reply::Json(status, headers, body) => {
            let mut response = (
                axum::http::StatusCode::from_u16(status).unwrap(),
                axum::Json(body),
            )
                .into_response();
            for (name, value) in headers {
                response.headers_mut().insert(name, value.parse().unwrap());
            }
            response
        }
        Reply::Stream(chunks) => {
            let mut text = String::new();
            for chunk in chunks {
                text.push_str(&format!("data: {chunk}\n\n"));
            }
            text.push_str("data: [DONE]\n\n");
            ([("content-type", "text/event-stream")], text).into_response()
        }
    }
}

/// Starts the scripted server on loopback; its base URL and the requests it received.
async fn scripted(
    script: impl Fn(usize, &Value) -> Reply + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<Value>>>) {
    let model = ScriptedModel {
        script: Arc::new(script),
        requests: Arc::default(),
    };
    let requests = Arc::clone(&model.requests);
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(completions))
        .with_state(model);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/v1"), requests)
}

fn calls(calls: &[(&str, &str, &str)], total_tokens: u64) -> Reply {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({
                "id": id, "type": "function", "function": {"name": name, "arguments": arguments}
            })
        })
        .collect();
    Reply::Json(
        200,
        vec![],
        json!({
            "id": "x", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, "tool_calls": tool_calls
            }}],
            "usage": {"prompt_tokens": total_tokens - 10, "completion_tokens": 10,
                      "total_tokens": total_tokens}
        }),
    )
}

fn says(text: &str) -> Reply {
    Reply::Json(
        200,
        vec![],
        json!({
            "id": "x", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": text
            }}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}
        }),
    )
}

fn question() -> Vec<Value> {
    vec![Dialect::OpenAiChat.user_message("What is the weather in Paris?")]
}

/// The roles of a Chat history, and the ids the tool messages answer.
fn roles(history: &[Value]) -> Vec<String> {
    history
        .iter()
        .map(|m| match m["tool_call_id"].as_str() {
            Some(id) => format!("tool:{id}"),
            None => m["role"].as_str().unwrap().to_owned(),
        })
        .collect()
}

fn client(base: &str) -> ChatClient {
    ChatClient::new(base, "scripted")
        .api_key("test-key")
        .backoff(std::time::Duration::from_millis(10))
}

#[tokio::test]
async fn the_loop_runs_to_done_over_http_streamed_or_not() {
    for streamed in [false, true] {
        let (base, requests) = scripted(move |index, _| match (index, streamed) {
            (0, false) => calls(&[("c1", "get_weather", r#"{"city": "Paris"}"#)], 100),
            (0, true) => Reply::Stream(vec![
                json!({"id": "s", "object": "chat.completion.chunk", "choices": [{
                    "index": 0,
                    "delta": {"role": "assistant", "tool_calls": [{
                        "index": 0, "id": "c1", "type": "function",
                        "function": {"name": "get_weather", "arguments": ""}
                    }]},
                    "finish_reason": null
                }]}),
                json!({"id": "s", "object": "chat.completion.chunk", "choices": [{
                    "index": 0,
                    "delta": {"tool_calls": [
                        {"index": 0, "function": {"arguments": "{\"city\": "}}
                    ]},
                    "finish_reason": null
                }]}),
                json!({"id": "s", "object": "chat.completion.chunk", "choices": [{
                    "index": 0,
                    "delta": {"tool_calls": [
                        {"index": 0, "function": {"arguments": "\"Paris\"}"}}
                    ]},
                    "finish_reason": null
                }]}),
                json!({"id": "s", "object": "chat.completion.chunk", "choices": [
                    {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
                ]}),
                json!({"id": "s", "object": "chat.completion.chunk", "choices": [], "usage": {
                    "prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100
                }}),
            ]),
            _ => says("It is 17 degrees in Paris."),
        })
        .await;
        let registry = registry();
        let outcome = AgentLoop::new(client(&base).streaming(streamed), Tools::new(&registry))
            .run(question())
            .await;
        assert_eq!(outcome.status, Status::Done, "{:?}", outcome.error);
        assert_eq!(outcome.text.as_deref(), Some("It is 17 degrees in Paris."));
        assert_eq!(
            roles(&outcome.history),
            ["user", "assistant", "tool:c1", "assistant"]
        );
        assert_eq!(
            (
                outcome.turns,
                outcome.tool_calls,
                outcome.usage.total_tokens
            ),
            (2, 1, 155)
        );
        let requests = requests.lock().unwrap();
        let second = &requests[1];
        assert_eq!(second["model"], "scripted");
        assert_eq!(
            second["messages"][2]["content"],
            r#"{"city":"Paris","days":0,"temp_c":17}"#
        );
        assert!(second["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "get_weather"));
        assert_eq!(second.get("stream").is_some(), streamed);
    }
}

#[tokio::test]
async fn each_limit_stops_the_loop_with_its_status_and_a_valid_history() {
    let registry = registry();
    // Turns: a model that never stops calling.
    let (base, _) =
        scripted(|index, _| calls(&[(&format!("c{index}"), "get_time", "{}")], 20)).await;
    let outcome = AgentLoop::new(client(&base), Tools::new(&registry))
        .limits(Limits::default().max_turns(2))
        .run(question())
        .await;
    assert_eq!(outcome.status, Status::MaxTurns);
    assert_eq!(
        roles(&outcome.history),
        ["user", "assistant", "tool:c0", "assistant", "tool:c1"]
    );
    assert_eq!(outcome.status.as_str(), "max_turns");

    // Tokens: 600 a turn, 1,000 allowed: the second turn's calls are answered, not run.
    let (base, _) =
        scripted(|index, _| calls(&[(&format!("c{index}"), "get_time", "{}")], 600)).await;
    let outcome = AgentLoop::new(client(&base), Tools::new(&registry))
        .limits(Limits::default().max_total_tokens(1_000))
        .run(question())
        .await;
    assert_eq!(outcome.status, Status::BudgetExceeded);
    assert_eq!(
        (
            outcome.turns,
            outcome.tool_calls,
            outcome.usage.total_tokens
        ),
        (2, 1, 1_200)
    );
    assert_eq!(
        roles(&outcome.history),
        ["user", "assistant", "tool:c0", "assistant", "tool:c1"]
    );
    let last = outcome.history.last().unwrap()["content"].as_str().unwrap();
    assert!(
        last.contains("not run: the conversation's token budget is spent"),
        "{last}"
    );

    // Tool calls: two a turn, three allowed.
    let (base, _) = scripted(|index, _| {
        calls(
            &[
                (&format!("a{index}"), "get_time", "{}"),
                (&format!("b{index}"), "get_time", "{}"),
            ],
            20,
        )
    })
    .await;
    let outcome = AgentLoop::new(client(&base), Tools::new(&registry))
        .limits(Limits::default().max_tool_calls(3))
        .run(question())
        .await;
    assert_eq!(outcome.status, Status::ToolCallLimit);
    assert_eq!(outcome.tool_calls, 2);
    assert_eq!(
        roles(&outcome.history),
        [
            "user",
            "assistant",
            "tool:a0",
            "tool:b0",
            "assistant",
            "tool:a1",
            "tool:b1"
        ]
    );
    let last = outcome.history.last().unwrap()["content"].as_str().unwrap();
    assert!(last.contains("tool-call limit"), "{last}");

    // Retries: a model that keeps calling a tool that does not exist, corrected each time.
    let (base, requests) =
        scripted(|index, _| calls(&[(&format!("c{index}"), "get_wether", "{}")], 20)).await;
    let outcome = AgentLoop::new(client(&base), Tools::new(&registry))
        .limits(Limits::default().max_invalid_call_retries(1))
        .run(question())
        .await;
    assert_eq!(outcome.status, Status::RetriesExhausted);
    assert_eq!(outcome.turns, 2, "one try and one retry");
    let told = requests.lock().unwrap()[1]["messages"][2]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(told.contains("did you mean 'get_weather'"), "{told}");
    assert_eq!(roles(&outcome.history).len(), 5);
}

#[tokio::test]
async fn a_call_that_needs_approval_waits_and_resumes_with_the_decision() {
    let registry = registry();
    for approve in [true, false] {
        let (base, requests) = scripted(|index, _| match index {
            0 => calls(
                &[
                    ("c1", "delete_file", r#"{"path": "a.txt"}"#),
                    ("c2", "get_time", "{}"),
                ],
                20,
            ),
            _ => says("Done."),
        })
        .await;
        let agent = AgentLoop::new(client(&base), Tools::new(&registry));
        let outcome = agent.run(question()).await;
        assert_eq!(outcome.status, Status::AwaitingApproval);
        let pending: Vec<&str> = outcome.pending.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(pending, ["delete_file"]);
        assert_eq!(outcome.tool_calls, 0, "nothing ran before the decision");
        let outcome = agent
            .resume(outcome, |_| {
                if approve {
                    Approval::Approve
                } else {
                    Approval::Decline("not that file".into())
                }
            })
            .await;
        assert_eq!(outcome.status, Status::Done);
        assert_eq!(
            roles(&outcome.history),
            ["user", "assistant", "tool:c1", "tool:c2", "assistant"]
        );
        let deleted = outcome.history[2]["content"].as_str().unwrap();
        if approve {
            assert_eq!(deleted, "deleted a.txt");
        } else {
            assert!(
                deleted.contains("declined") && deleted.contains("not that file"),
                "{deleted}"
            );
        }
        assert_eq!(
            outcome.history[3]["content"], "12:00",
            "the other call ran either way"
        );
        assert_eq!(requests.lock().unwrap().len(), 2);
    }
}

#[tokio::test]
async fn a_server_that_fails_is_retried_then_reported_with_what_it_said() {
    let registry = registry();
    // 429 with Retry-After, then 503: both are tried again, and the third try answers.
    let (base, requests) = scripted(|index, _| match index {
        0 => Reply::Json(
            429,
            vec![("retry-after", "0".into())],
            json!({"error": {"message": "slow down"}}),
        ),
        1 => Reply::Json(503, vec![], json!({"error": {"message": "overloaded"}})),
        _ => says("Fine."),
    })
    .await;
    let outcome = AgentLoop::new(client(&base), Tools::new(&registry))
        .run(question())
        .await;
    assert_eq!(outcome.status, Status::Done, "{:?}", outcome.error);
    assert_eq!(requests.lock().unwrap().len(), 3);

    // A 400 is not tried again; its message reaches the outcome.
    let (base, requests) = scripted(|_, _| {
        Reply::Json(
            400,
            vec![],
            json!({"error": {"message": "model 'scripted' does not support tools"}}),
        )
    })
    .await;
    let outcome = AgentLoop::new(client(&base), Tools::new(&registry))
        .run(question())
        .await;
    assert_eq!(outcome.status, Status::ModelError);
    let error = outcome.error.unwrap();
    assert_eq!(
        error,
        "the model's server answered 400: model 'scripted' does not support tools"
    );
    assert_eq!(requests.lock().unwrap().len(), 1);
    assert_eq!(outcome.history.len(), 1, "the history is kept as it was");

    // Always 503: the first try and three more, then the error.
    let (base, requests) =
        scripted(|_, _| Reply::Json(503, vec![], json!({"error": {"message": "overloaded"}})))
            .await;
    let outcome = AgentLoop::new(client(&base), Tools::new(&registry))
        .run(question())
        .await;
    assert_eq!(
        outcome.error.as_deref(),
        Some("the model's server answered 503: overloaded")
    );
    assert_eq!(requests.lock().unwrap().len(), 4);
}

impl Reply {
    /// A JSON reply as the server sends it.
    fn into_response_now(self) -> Response {
        match self {
            Reply::Json(status, _, body) => (
                axum::http::StatusCode::from_u16(status).unwrap(),
                axum::Json(body),
            )
                .into_response(),
            _ => unreachable!("only JSON replies are sent late"),
        }
    }
}

#[tokio::test]
async fn a_server_that_does_not_answer_in_time_is_reported_so() {
    let registry = registry();
    // Silent for a minute: a client that waited for it could not have given up this soon.
    let (base, requests) =
        scripted(|_, _| Reply::Silence(std::time::Duration::from_secs(60))).await;
    // Long enough that the scripted server, on this test's own thread, has read each try
    // before the client gives up on it, even on a busy machine.
    let model = client(&base)
        .timeout(std::time::Duration::from_secs(2))
        .max_retries(1);
    let started = std::time::Instant::now();
    let outcome = AgentLoop::new(model, Tools::new(&registry))
        .run(question())
        .await;
    assert_eq!(outcome.status, Status::ModelError);
    let error = outcome.error.unwrap();
    assert!(
        error.contains("could not reach") && error.contains("timed out"),
        "{error}"
    );
    assert!(
        started.elapsed() < *tool_tests::PATIENCE,
        "never waits for the server"
    );
    // A try the client gave up on may be read by the server a moment later.
    tool_tests::wait_for("both tries reach the server", async || {
        requests.lock().unwrap().len() >= 2
    })
    .await;
    assert_eq!(
        requests.lock().unwrap().len(),
        2,
        "a time out is tried again, once"
    );
}

#[tokio::test]
async fn without_usage_the_tokens_are_counted_here_and_marked_estimated() {
    let registry = registry();
    let (base, _) = scripted(|_, _| {
        Reply::Json(
            200,
            vec![],
            json!({"choices": [
                {"index": 0, "message": {"role": "assistant", "content": "Hello there."}}
            ]}),
        )
    })
    .await;
    let outcome = AgentLoop::new(client(&base), Tools::new(&registry))
        .run(question())
        .await;
    assert_eq!(outcome.status, Status::Done);
    assert!(outcome.usage.estimated);
    assert!(
        outcome.usage.total_tokens > 100,
        "the tool definitions count: {:?}",
        outcome.usage
    );
}

#[tokio::test]
async fn any_model_fits_the_loop_through_the_trait() {
    /// A model in the Gemini dialect, answered in code.
    struct Scripted;
    impl tool_runtime::agent::Model for Scripted {
        fn dialect(&self) -> Dialect {
            Dialect::Gemini
        }
        async fn respond(
            &self,
            request: &ModelRequest,
        ) -> Result<Value, tool_runtime::agent::ModelError> {
            Ok(match request.history.len() {
                1 => {
                    json!({"role": "model", "parts": [
                        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}
                    ]})
                }
                _ => json!({"role": "model", "parts": [{"text": "Cold."}]}),
            })
        }
    }
    let registry = registry();
    let outcome = AgentLoop::new(Scripted, Tools::new(&registry))
        .run(vec![Dialect::Gemini.user_message("Weather in Oslo?")])
        .await;
    assert_eq!(outcome.status, Status::Done);
    assert_eq!(
        outcome.history[2]["parts"][0]["functionResponse"]["response"]["output"]["city"],
        "Oslo"
    );
    assert!(outcome.usage.estimated);
}
