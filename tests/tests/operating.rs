//! Operating a server, through the standard command line run as a real binary: the audit
//! trail (`--log-format json`, `--audit-arguments`) and metrics (`--metrics`).

use serde_json::{json, Value};

use tool_tests::http::{open_session, Reply, Request};
use tool_tests::PATIENCE;
use tool_tests::{messages, rpc, spawn_http, INITIALIZE};

const BINARY: &str = env!("CARGO_BIN_EXE_ops-tools");

use tool_tests::logs::audit_events;

/// Serves one stdio session of `requests` with `args`; gives stdout and stderr.
fn stdio_session(args: &[&str], requests: &[&str]) -> (String, String) {
    stdio_session_in(&[], args, requests)
}

/// [`stdio_session`] with the environment variables `env`.
fn stdio_session_in(env: &[(&str, &str)], args: &[&str], requests: &[&str]) -> (String, String) {
    let mut command = tool_tests::command(BINARY);
    command.arg("serve").args(args).envs(env.iter().copied());
    let output = tool_tests::stdio::run(&mut command, &(requests.join("\n") + "\n"));
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

const CALL_ECHO: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","#,
    r#""params":{"name":"echo","arguments":{"text":"private words"}}}"#
);
const CALL_UNKNOWN: &str =
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"made_up","arguments":{}}}"#;
const CALL_WAIT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","#,
    r#""params":{"name":"wait","arguments":{"ms":30}}}"#
);

#[test]
fn every_call_is_one_audit_event_as_a_json_line() {
    let (stdout, stderr) = stdio_session(
        &["--log-format", "json"],
        &[INITIALIZE, CALL_ECHO, CALL_UNKNOWN, CALL_WAIT],
    );
    assert_eq!(stdout.lines().count(), 4, "four answers: {stdout}");
    let events = audit_events(&stderr);
    assert_eq!(events.len(), 3, "one event per call: {stderr}");

    let event_of = |tool: &str| {
        events
            .iter()
            .find(|event| event["tool"] == tool)
            .unwrap_or_else(|| panic!("an event of {tool}: {stderr}"))
    };
    let echo = event_of("echo");
    assert_eq!(echo["level"], "INFO");
    assert_eq!(echo["tool"], "echo");
    assert_eq!(echo["outcome"], "ok");
    assert_eq!(echo["transport"], "stdio");
    let arguments = json!({"text": "private words"}).to_string();
    assert_eq!(echo["argument_bytes"], arguments.len());
    // The output is the tool's value: the string, as JSON.
    assert_eq!(
        echo["output_bytes"],
        json!("private words").to_string().len()
    );
    assert!(echo["duration_ms"].is_f64(), "{echo}");
    // The duration is the call's: a 30 ms wait takes at least that.
    let waited = event_of("wait");
    assert!(
        waited["duration_ms"].as_f64().is_some_and(|ms| ms >= 30.0),
        "{waited}"
    );
    assert!(
        !stderr.contains("private words"),
        "argument values stay out of the audit trail unless asked for: {stderr}"
    );

    let unknown = event_of("made_up");
    assert_eq!(unknown["outcome"], "unknown_tool");

    // Asked for, the arguments are in the event.
    let (_, stderr) = stdio_session(
        &["--log-format", "json", "--audit-arguments"],
        &[INITIALIZE, CALL_ECHO],
    );
    let events = audit_events(&stderr);
    assert_eq!(events.len(), 1, "{stderr}");
    assert_eq!(events[0]["arguments"], arguments);

    // Text logs, for people, leave the audit trail out unless RUST_LOG names it.
    let (_, stderr) = stdio_session(&[], &[INITIALIZE, CALL_ECHO]);
    assert!(!stderr.contains("tool_runtime::audit"), "{stderr}");
    let (_, stderr) = stdio_session_in(&[("RUST_LOG", "info")], &[], &[INITIALIZE, CALL_ECHO]);
    assert!(!stderr.contains("tool_runtime::audit"), "{stderr}");
    let named = [("RUST_LOG", "info,tool_runtime::audit=info")];
    let (_, stderr) = stdio_session_in(&named, &[], &[INITIALIZE, CALL_ECHO]);
    assert!(stderr.contains("tool_runtime::audit"), "{stderr}");
}

fn call_in_session(port: u16, session: &str, id: u32, name: &str, arguments: Value) -> Value {
    let reply = Request::mcp(rpc::call(id, name, arguments))
        .session(session)
        .send(port);
    assert_eq!(reply.status, 200, "{reply:?}");
    messages(&reply.body).pop().expect("an answer")
}

#[test]
fn metrics_count_calls_errors_and_durations_per_tool_at_get_metrics() {
    let mut server = spawn_http(
        BINARY,
        "127.0.0.1",
        &["--metrics", "--log-format", "json"],
        &[],
    );
    let port = server.port;
    let session = open_session(port);
    for id in 1..=2 {
        let answer = call_in_session(port, &session, id, "echo", json!({"text": "hi"}));
        assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");
    }
    let refused = call_in_session(port, &session, 3, "echo", json!({"text": 7}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    call_in_session(port, &session, 4, "wait", json!({"ms": 30}));
    for id in 5..=7 {
        call_in_session(port, &session, id, "motd", json!({}));
    }

    let reply = Request::get("/metrics").send(port);
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/plain")));
    let text = &reply.body;
    for line in [
        r#"mcp_tool_calls_total{tool="echo",outcome="ok"} 2"#,
        r#"mcp_tool_calls_total{tool="echo",outcome="invalid_arguments"} 1"#,
        r#"mcp_tool_errors_total{tool="echo"} 1"#,
        r#"mcp_tool_calls_total{tool="wait",outcome="ok"} 1"#,
        // A kept answer: made once, given again twice.
        r#"mcp_tool_cache_lookups_total{tool="motd",outcome="miss"} 1"#,
        r#"mcp_tool_cache_lookups_total{tool="motd",outcome="hit"} 2"#,
        r#"mcp_tool_calls_in_flight{tool="wait"} 0"#,
        r#"mcp_tool_call_duration_seconds_count{tool="echo"} 3"#,
        // The 30 ms wait cannot fall in the 25 ms bucket; where above it depends on how
        // busy the machine is, so only that it was counted once is checked.
        r#"mcp_tool_call_duration_seconds_bucket{tool="wait",le="0.025"} 0"#,
        r#"mcp_tool_call_duration_seconds_bucket{tool="wait",le="+Inf"} 1"#,
        r#"mcp_tool_call_duration_seconds_count{tool="wait"} 1"#,
        // The buckets between: 50 ms, then on up to 10 s.
        r#"mcp_tool_call_duration_seconds_bucket{tool="wait",le="0.05"} "#,
        r#"mcp_tool_call_duration_seconds_bucket{tool="wait",le="10"} "#,
    ] {
        assert!(text.contains(line), "{line} in:\n{text}");
    }

    // The metrics are not on the MCP endpoint, whatever is asked there.
    let reply = Request::get("/mcp/metrics").send(port);
    assert_eq!(reply.status, 404);

    let logs = server.stop_and_read_logs();
    let events = audit_events(&logs);
    assert_eq!(events.len(), 7, "{logs}");
    for event in &events {
        assert_eq!(event["transport"], "http");
        assert_eq!(event["session"], session.as_str());
        assert!(
            event["peer"]
                .as_str()
                .is_some_and(|peer| peer.starts_with("127.0.0.1:")),
            "{event}"
        );
    }
}

#[test]
fn metrics_are_off_unless_asked_for_and_need_http() {
    let server = spawn_http(BINARY, "127.0.0.1", &[], &[]);
    assert_eq!(Request::get("/metrics").send(server.port).status, 404);
    drop(server);

    let output = tool_tests::command(BINARY)
        .args(["serve", "--metrics"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--http"), "{stderr}");
}

#[test]
fn a_cancelled_call_is_audited_as_cancelled() {
    let (stdout, stderr) = stdio_session(
        &["--log-format", "json"],
        &[
            INITIALIZE,
            concat!(
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","#,
                r#""params":{"name":"wait","arguments":{"ms":10000}}}"#
            ),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#,
        ],
    );
    assert_eq!(
        stdout.lines().count(),
        1,
        "only initialize is answered: {stdout}"
    );
    let events = audit_events(&stderr);
    assert_eq!(events.len(), 1, "{stderr}");
    assert_eq!(events[0]["tool"], "wait");
    assert_eq!(events[0]["outcome"], "cancelled");
    // The call stopped when cancelled: an ignored cancellation would have held it for the
    // shutdown grace (5 s) at the end of input before it was dropped, which is audited as
    // cancelled too. The server's own measure leaves out starting and ending the process.
    let ms = events[0]["duration_ms"].as_f64().expect("a duration");
    assert!(ms < 5000.0, "the call ran {ms} ms: held for the grace");
}

/// Whether an MCP answer over HTTP refused its call for the client's rate (the model reads
/// when to call again).
fn refused_for_rate(reply: &Reply) -> bool {
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = &messages(&reply.body)[0];
    if answer["result"]["_meta"]["status"] != "rate_limited" {
        assert_eq!(
            answer["result"]["structuredContent"]["result"], "x",
            "{answer}"
        );
        return false;
    }
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with(
            "too many calls: this client may make 20 calls per second; call 'echo' again in "
        ),
        "{text}"
    );
    true
}

#[test]
fn a_client_past_its_rate_is_refused_and_the_limit_holds_under_load_without_touching_others() {
    const RATE: f64 = 20.0;
    let server = spawn_http(BINARY, "127.0.0.1", &["--rate-limit", "20/s"], &[]);
    let port = server.port;
    let greedy = open_session(port);
    let modest = open_session(port);

    // The modest client calls 10 times a second, half its allowance, while the greedy one
    // calls as fast as it can.
    // It calls 10 times at least, and until the greedy one is done.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let modest_calls = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut refusals = Vec::new();
            while refusals.len() < 10 || !stop.load(std::sync::atomic::Ordering::Relaxed) {
                refusals.push(refused_for_rate(
                    &Request::mcp(rpc::call(1, "echo", json!({"text": "x"})))
                        .session(&modest)
                        .send(port),
                ));
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            refusals
        })
    };
    // The greedy one calls for 1.5 s, and on until it has been refused: on a busy machine
    // it may take longer to call faster than its rate.
    let started = std::time::Instant::now();
    let (mut passed, mut refused) = (0u32, 0u32);
    while started.elapsed() < std::time::Duration::from_millis(1500) || refused == 0 {
        assert!(
            started.elapsed() < *PATIENCE,
            "the greedy client was never refused: {passed} calls passed"
        );
        match refused_for_rate(
            &Request::mcp(rpc::call(1, "echo", json!({"text": "x"})))
                .session(&greedy)
                .send(port),
        ) {
            false => passed += 1,
            true => refused += 1,
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let modest_refusals = modest_calls.join().unwrap();

    // GCRA: a full allowance at the start, then the rate, over any window whatever the
    // load; every call that passed fell within `elapsed`.
    let most = RATE + RATE * elapsed + 1.0;
    let passed = f64::from(passed);
    assert!(
        passed <= most,
        "{passed} passed in {elapsed:.2} s; the limit allows {most:.1}"
    );
    // A client slowed by a busy machine cannot show the limit is not too strict; the
    // allowance at the start it always gets.
    assert!(passed >= RATE, "{passed} passed: less than the allowance");
    assert!(
        modest_refusals.iter().all(|refused| !refused),
        "the other client is unaffected: {modest_refusals:?}"
    );

    // Over REST, the refusal is 429 with when to retry; the client there is its address,
    // which has not called yet.
    let execute = r#"{"toolName": "echo", "parameters": {"text": "x"}}"#;
    let rest = |_| Request::rest("/api/tools/execute", execute).send(port);
    // Sent until refused: how many pass first depends on how fast this machine sends them.
    let too_many = (0..1000)
        .map(rest)
        .find(|reply| reply.status != 200)
        .expect("a refusal within 1000 calls");
    assert_eq!(too_many.status, 429, "{too_many:?}");
    assert_eq!(too_many.header("retry-after"), Some("1"), "{too_many:?}");
    let body: Value = serde_json::from_str(&too_many.body).unwrap();
    assert_eq!(body["name"], "echo");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("too many calls: "),
        "{body}"
    );
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn each_session_has_its_budget_of_calls_and_past_it_the_status_is_budget_exceeded() {
    let server = spawn_http(BINARY, "127.0.0.1", &["--max-calls", "2"], &[]);
    let port = server.port;
    let first = open_session(port);
    let second = open_session(port);
    for id in 1..=2 {
        let answer = call_in_session(port, &first, id, "echo", json!({"text": "hi"}));
        assert_eq!(text_of(&answer), "hi", "{answer}");
    }
    let refused = call_in_session(port, &first, 3, "echo", json!({"text": "hi"}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(
        refused["result"]["_meta"]["status"], "budget_exceeded",
        "{refused}"
    );
    assert_eq!(
        text_of(&refused),
        "budget exceeded: this client has used 2 of its 2 calls, so 'echo' was not called; \
         stop, or start a new session"
    );
    // Another session has a budget of its own.
    let answer = call_in_session(port, &second, 1, "echo", json!({"text": "hi"}));
    assert_eq!(text_of(&answer), "hi", "{answer}");
}

#[test]
fn output_tokens_are_counted_with_a_tokenizer_against_the_budget() {
    let server = spawn_http(BINARY, "127.0.0.1", &["--max-output-tokens", "50"], &[]);
    let port = server.port;
    let session = open_session(port);
    // "word word ..." is one token a word: 30, then 30 more, past the budget of 50.
    let text = vec!["word"; 30].join(" ");
    for id in 1..=2 {
        let answer = call_in_session(port, &session, id, "echo", json!({"text": text}));
        assert_eq!(
            text_of(&answer),
            text,
            "the call that goes past is answered whole"
        );
    }
    let refused = call_in_session(port, &session, 3, "echo", json!({"text": "short"}));
    assert_eq!(
        refused["result"]["_meta"]["status"], "budget_exceeded",
        "{refused}"
    );
    assert_eq!(
        text_of(&refused),
        "budget exceeded: this client has used 60 of its 50 output tokens, so 'echo' was not \
         called; stop, or start a new session"
    );
}
