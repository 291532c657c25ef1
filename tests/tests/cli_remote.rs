//! The command line's reach to other MCP servers, run as a real binary: `list` and `call`
//! on another server's catalog (`--server`), and another server's tools mounted beside the
//! binary's own for `serve` and `answer` (`--mount`, `--mounts-file`).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::Output;
use tool_tests::stdio::Session;

const TRAVEL: &str = env!("CARGO_BIN_EXE_travel-tools");
const UPSTREAM: &str = env!("CARGO_BIN_EXE_upstream-tools");

fn upstream_command() -> String {
    format!("{UPSTREAM} serve")
}

fn run(args: &[&str], stdin: &str) -> Output {
    tool_tests::stdio::run(tool_tests::command(TRAVEL).args(args), stdin)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn list_server_prints_another_servers_catalog_in_any_format() {
    let upstream = upstream_command();
    let output = run(
        &["list", "--server", &upstream, "--format", "openai-chat"],
        "",
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        tool_tests::UPSTREAM_TOOLS,
        "the other server's tools, and none of this binary's"
    );
    let add = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["function"]["name"] == "add")
        .unwrap();
    assert_eq!(add["function"]["description"], "Add two integers.");
    assert_eq!(
        add["function"]["parameters"]["properties"]["b"]["type"],
        "integer"
    );
}

#[test]
fn call_server_calls_another_servers_tool() {
    let upstream = upstream_command();
    let output = run(
        &["call", "--server", &upstream, "add", r#"{"a": 2, "b": 40}"#],
        "",
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["name"], "add", "{printed}");
    assert_eq!(printed["input"], json!({"a": 2, "b": 40}));
    let shown = printed.to_string();
    assert!(shown.contains("42"), "{printed}");

    let output = run(
        &[
            "call",
            "--server",
            &upstream,
            "add",
            r#"{"a": "x", "b": 1}"#,
        ],
        "",
    );
    assert!(!output.status.success());
    let printed = text(&output.stdout) + &text(&output.stderr);
    assert!(printed.contains("integer"), "{printed}");
}

#[test]
fn a_server_that_cannot_be_reached_is_named_in_the_failure() {
    let output = run(
        &["call", "--server", "/nonexistent/server serve", "add", "{}"],
        "",
    );
    assert!(!output.status.success());
    let told = text(&output.stdout) + &text(&output.stderr);
    assert!(told.contains("/nonexistent/server"), "{told}");
}

/// `serve` with `args` over stdio, initialized, once it lists the mounted `up_add`: the
/// session, and the names it lists.
async fn serving_up_add(args: &[&str]) -> (Session, Vec<String>) {
    serving_until(args, "up_add").await
}

/// `serve` with `args` over stdio, initialized, once it lists the tool `wanted`: the
/// session, and the names it lists.
async fn serving_until(args: &[&str], wanted: &str) -> (Session, Vec<String>) {
    let mut session = Session::process(TRAVEL, args);
    session.send(tool_tests::INITIALIZE).await;
    session.answer_to(0).await;
    session
        .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let mut id = 0;
    let names = tool_tests::wait_for_some(&format!("{wanted} is served"), async || {
        id += 1;
        session
            .send(&tool_tests::rpc::request(id, "tools/list", json!({})))
            .await;
        let (list, _) = session.answer_to(id).await;
        let names = tool_tests::names(&list, "tools", "name");
        names.iter().any(|name| name == wanted).then_some(names)
    })
    .await;
    (session, names)
}

/// What `up_add` of 3 and 4 answers, called in `session`.
async fn up_add_answers(session: &mut Session) -> Value {
    session
        .send(&tool_tests::rpc::call(
            500,
            "up_add",
            json!({"a": 3, "b": 4}),
        ))
        .await;
    session.answer_to(500).await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_mount_serves_another_servers_tools_beside_the_binarys_own() {
    let spec = format!("up={}", upstream_command());
    let (mut session, names) = serving_up_add(&["--mount", &spec]).await;
    assert!(
        names.iter().any(|name| !name.starts_with("up_")),
        "{names:?}"
    );
    let answer = up_add_answers(&mut session).await;
    assert_eq!(answer["result"]["content"][0]["text"], "7", "{answer}");
}

/// The mounted tools among `names` (those starting with `up_`), sorted.
fn mounted(names: &[String]) -> Vec<&str> {
    let mut mounted: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|name| name.starts_with("up_"))
        .collect();
    mounted.sort_unstable();
    mounted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_mount_takes_which_tools_under_which_names_from_its_flags() {
    let spec = format!("up={}", upstream_command());
    let (mut session, names) = serving_until(
        &[
            "--mount",
            &spec,
            "--mount-include",
            "up=add,greet,work",
            "--mount-exclude",
            "up=greet",
            "--mount-rename",
            "up=add:plus",
        ],
        "up_plus",
    )
    .await;
    assert_eq!(mounted(&names), ["up_plus", "up_work"]);
    session
        .send(&tool_tests::rpc::call(
            500,
            "up_plus",
            json!({"a": 3, "b": 4}),
        ))
        .await;
    let (answer, _) = session.answer_to(500).await;
    assert_eq!(answer["result"]["content"][0]["text"], "7", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_mount_takes_its_options_from_the_mounts_file() {
    let dir = work_dir("mount-options");
    let file = dir.join("mounts");
    std::fs::write(
        &file,
        format!(
            "# the upstream, two of its tools left out, one renamed, calls cut at 1 s\n\
             up={}\nup.exclude = greet, weather\nup.rename = add:plus\nup.timeout = 1s\n",
            upstream_command()
        ),
    )
    .unwrap();
    let (mut session, names) =
        serving_until(&["--mounts-file", file.to_str().unwrap()], "up_plus").await;
    let mut expected: Vec<String> = tool_tests::UPSTREAM_TOOLS
        .iter()
        .filter(|name| !["greet", "weather", "add"].contains(name))
        .map(|name| format!("up_{name}"))
        .chain(["up_plus".to_owned()])
        .collect();
    expected.sort_unstable();
    assert_eq!(mounted(&names), expected);
    // `work` waits to be released, which it never is: the mount's time limit ends it.
    let arguments: Value = serde_json::from_str(&work_arguments(&dir)).unwrap();
    session
        .send(&tool_tests::rpc::call(600, "up_work", arguments))
        .await;
    let (answer, _) = session.answer_to(600).await;
    let told = answer.to_string();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        told.contains("'up_work' did not finish within 1s"),
        "{answer}"
    );
    // And the call is stopped on the mounted server too.
    let cancelled = dir.join("cancelled");
    tool_tests::wait_for("the mounted server stopped the call", async || {
        cancelled.exists()
    })
    .await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_with_mounts_checks_the_mounted_servers_tools_beside_the_binarys_own() {
    let spec = format!("up={}", upstream_command());
    let own = run(&["check"], "");
    let output = run(
        &["check", "--mount", &spec, "--mount-include", "up=add,greet"],
        "",
    );
    let (own, checked) = (text(&own.stdout), text(&output.stdout));
    let sized = |report: &str| -> Vec<String> {
        report
            .lines()
            // Each tool's size: an indented line ending with its name (a prompt's or a
            // resource's ends with its kind in brackets).
            .filter(|line| {
                line.starts_with("  ") && line.contains(" tokens ") && !line.ends_with(')')
            })
            .filter_map(|line| line.split_whitespace().last().map(str::to_owned))
            .collect()
    };
    let mut mounted: Vec<String> = sized(&checked)
        .into_iter()
        .filter(|name| !sized(&own).contains(name))
        .collect();
    mounted.sort_unstable();
    assert_eq!(
        mounted,
        ["up_add", "up_greet"],
        "{checked}{}",
        text(&output.stderr)
    );

    // A mounted server that cannot be reached fails the check, named.
    let output = run(&["check", "--mount", "up=/nonexistent/server serve"], "");
    assert!(!output.status.success());
    let told = text(&output.stderr);
    assert!(told.contains("/nonexistent/server"), "{told}");
}

/// The names of the tools in an `openai-chat` export, sorted.
fn exported_names(export: &[u8]) -> Vec<String> {
    let listed: Value = serde_json::from_slice(export).unwrap();
    let mut names: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort_unstable();
    names
}

#[test]
fn list_and_call_with_mounts_work_on_the_binarys_tools_and_the_mounted_ones_together() {
    let spec = format!("up={}", upstream_command());
    let own = run(&["list", "--format", "openai-chat"], "");
    assert!(own.status.success(), "{}", text(&own.stderr));
    let output = run(
        &[
            "list",
            "--format",
            "openai-chat",
            "--mount",
            &spec,
            "--mount-include",
            "up=add,greet",
        ],
        "",
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let own = exported_names(&own.stdout);
    let listed = exported_names(&output.stdout);
    let added: Vec<&str> = listed
        .iter()
        .filter(|name| !own.contains(name))
        .map(String::as_str)
        .collect();
    assert_eq!(added, ["up_add", "up_greet"], "{listed:?}");
    assert!(
        own.iter().all(|name| listed.contains(name)),
        "the binary's own tools are listed too: {listed:?}"
    );

    let output = run(
        &["call", "--mount", &spec, "up_add", r#"{"a": 2, "b": 40}"#],
        "",
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["name"], "up_add", "{printed}");
    assert!(printed["output"].to_string().contains("42"), "{printed}");

    // A listing is saved and compared: a mount that cannot be reached fails it, named.
    let output = run(&["list", "--mount", "up=/nonexistent/server serve"], "");
    assert!(!output.status.success());
    let told = text(&output.stderr);
    assert!(told.contains("/nonexistent/server"), "{told}");

    // The environment's mounts file is for serving: a listing takes only its own flags.
    let dir = work_dir("list-environment");
    let file = dir.join("mounts.txt");
    std::fs::write(&file, format!("{spec}\n")).unwrap();
    let mut command = tool_tests::command(TRAVEL);
    command
        .args(["list", "--format", "openai-chat"])
        .env("MCP_MOUNTS_FILE", &file);
    let output = tool_tests::stdio::run(&mut command, "");
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        exported_names(&output.stdout),
        own,
        "only the binary's own tools"
    );
    let file_flag = run(
        &[
            "list",
            "--server",
            &upstream_command(),
            "--mounts-file",
            file.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(
        file_flag.status.code(),
        Some(2),
        "{}",
        text(&file_flag.stderr)
    );
    assert!(
        text(&file_flag.stderr).contains("--mounts-file is for"),
        "{}",
        text(&file_flag.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);

    // --server works on that server alone: a mount beside it is refused, not dropped.
    let output = run(
        &["list", "--server", &upstream_command(), "--mount", &spec],
        "",
    );
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let told = text(&output.stderr);
    assert!(
        told.contains(
            "--mount is for a server mounted beside this binary's tools, and --server works \
             on that server alone; give one or the other"
        ),
        "{told}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_held_to_an_era_by_the_mounts_file_speaks_only_it() {
    let upstream = tool_tests::spawn_http(UPSTREAM, "127.0.0.1", &[], &[]);
    let dir = work_dir("mount-era");
    let file = dir.join("mounts");
    for (era, sent, never) in [
        ("2025-11-25", "initialize", "server/discover"),
        ("2026-07-28", "server/discover", "initialize"),
    ] {
        // A tap of its own per era: what the mount sent is counted from nothing.
        let tap = tool_tests::tap::Tap::before(upstream.port).await;
        std::fs::write(
            &file,
            format!(
                "up=http://127.0.0.1:{}/mcp\nup.era = {era}\nup.include = add\n",
                tap.port
            ),
        )
        .unwrap();
        let file = file.to_str().unwrap().to_owned();
        let output = tokio::task::spawn_blocking(move || {
            run(
                &["list", "--mounts-file", &file, "--format", "openai-chat"],
                "",
            )
        })
        .await
        .unwrap();
        assert!(output.status.success(), "{era}: {}", text(&output.stderr));
        assert!(
            exported_names(&output.stdout).contains(&"up_add".to_owned()),
            "{era}: {}",
            text(&output.stdout)
        );
        assert!(tap.sent_method(sent) >= 1, "{era}: the mount sent {sent}");
        assert_eq!(tap.sent_method(never), 0, "{era}: the mount sent {never}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_call_server_held_to_an_era_speak_only_it() {
    let upstream = tool_tests::spawn_http(UPSTREAM, "127.0.0.1", &[], &[]);
    for (era, sent, never) in [
        ("2025-11-25", "initialize", "server/discover"),
        ("2026-07-28", "server/discover", "initialize"),
    ] {
        // A tap of its own per era: what was sent is counted from nothing.
        let tap = tool_tests::tap::Tap::before(upstream.port).await;
        let url = format!("http://127.0.0.1:{}/mcp", tap.port);
        let output = tokio::task::spawn_blocking(move || {
            let listed = run(&["list", "--server", &url, "--server-era", era], "");
            let called = run(
                &[
                    "call",
                    "--server",
                    &url,
                    "--server-era",
                    era,
                    "add",
                    r#"{"a": 2, "b": 40}"#,
                ],
                "",
            );
            (listed, called)
        })
        .await
        .unwrap();
        let (listed, called) = output;
        assert!(listed.status.success(), "{era}: {}", text(&listed.stderr));
        assert!(text(&listed.stdout).contains("add"), "{era}");
        assert!(called.status.success(), "{era}: {}", text(&called.stderr));
        let printed: Value = serde_json::from_slice(&called.stdout).unwrap();
        assert!(
            printed["output"].to_string().contains("42"),
            "{era}: {printed}"
        );
        assert!(
            tap.sent_method(sent) >= 2,
            "{era}: each command sent {sent}"
        );
        assert_eq!(tap.sent_method(never), 0, "{era}: a command sent {never}");
    }
    // Only the eras there are, and only for a server.
    let wrong = run(
        &[
            "list",
            "--server",
            &upstream_command(),
            "--server-era",
            "2025-06-18",
        ],
        "",
    );
    assert!(!wrong.status.success());
    let said = text(&wrong.stderr);
    assert!(
        said.contains("2025-06-18") && said.contains("2025-11-25") && said.contains("2026-07-28"),
        "{said}"
    );
    let alone = run(&["list", "--server-era", "2025-11-25"], "");
    assert!(!alone.status.success());
    assert!(
        text(&alone.stderr).contains("--server"),
        "{}",
        text(&alone.stderr)
    );
}

#[test]
fn a_mount_option_written_wrong_is_refused_saying_where() {
    let dir = work_dir("mount-options-wrong");
    let file = dir.join("mounts");
    std::fs::write(
        &file,
        format!("up={}\n\nup.exclud = greet\n", upstream_command()),
    )
    .unwrap();
    let stdio = format!("up={}", upstream_command());
    let file_place = format!("{}, line 3", file.display());
    let cases: [(Vec<&str>, &str); 6] = [
        (
            vec!["--mounts-file", file.to_str().unwrap()],
            "a mount has no option `exclud`",
        ),
        (vec!["--mounts-file", file.to_str().unwrap()], &file_place),
        (
            vec!["--mount", &stdio, "--mount-exclude", "wiki=purge"],
            "--mount-exclude \"wiki=purge\" names the mount `wiki`, which is not given",
        ),
        (
            vec!["--mount", &stdio, "--mount-timeout", "up=soon"],
            "a duration such as 30s or 2m, not \"soon\"",
        ),
        (
            vec!["--mount", &stdio, "--mount-era", "up=2025"],
            "--mount-era \"up=2025\": the era of `up` is 2025-11-25 or 2026-07-28, not \"2025\"",
        ),
        (
            vec!["--mount", &stdio, "--mount-tool-scopes", "up=add"],
            "tool-scopes of `up` is TOOL=SCOPE,SCOPE..., not \"add\"",
        ),
    ];
    for (arguments, reason) in cases {
        let output = run(&[&["serve"][..], &arguments].concat(), "");
        let told = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}: {told}");
        assert!(told.contains(reason), "{arguments:?}: {told}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn answer_with_mounts_from_a_file_answers_calls_of_mounted_tools() {
    let file = std::env::temp_dir().join(format!("tool-tests-mounts-{}.txt", std::process::id()));
    std::fs::write(
        &file,
        format!("# the upstream\n\nup={}\n", upstream_command()),
    )
    .unwrap();
    let turn = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "up_add", "input": {"a": 5, "b": 6}}
    ]});
    let output = run(
        &[
            "answer",
            "--dialect",
            "anthropic",
            "--mounts-file",
            file.to_str().unwrap(),
        ],
        &turn.to_string(),
    );
    let _ = std::fs::remove_file(&file);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let messages: Value = serde_json::from_slice(&output.stdout).unwrap();
    let block = &messages[0]["content"][0];
    assert_eq!(block["tool_use_id"], "t1", "{messages}");
    assert_ne!(block["is_error"], true, "{messages}");
    assert!(block.to_string().contains("11"), "{messages}");
}

#[test]
fn a_mount_written_wrong_is_refused_before_anything_starts() {
    let output = run(&["serve", "--mount", "no-equals-sign"], "");
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("PREFIX="),
        "{}",
        text(&output.stderr)
    );
}

/// The upstream over HTTP, taking only requests that present `token`; its URL, and a token
/// file holding `token` in `dir`.
fn protected_upstream(dir: &std::path::Path) -> (tool_tests::ServerProcess, String, String) {
    let token = "up-secret";
    let upstream =
        tool_tests::spawn_http(UPSTREAM, "127.0.0.1", &[], &[("MCP_BEARER_TOKEN", token)]);
    let url = format!("http://127.0.0.1:{}/mcp", upstream.port);
    let file = dir.join("token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    (upstream, url, file.to_str().unwrap().to_owned())
}

#[test]
fn call_server_presents_the_token_of_the_file_or_variable_given_and_is_refused_without() {
    let dir = work_dir("server-token");
    let (_upstream, url, file) = protected_upstream(&dir);
    let sum = |output: &Output| -> Value {
        assert!(output.status.success(), "{}", text(&output.stderr));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()["output"].clone()
    };
    let add = r#"{"a": 2, "b": 40}"#;
    let with_file = run(
        &[
            "call",
            "--server",
            &url,
            "--server-token-file",
            &file,
            "add",
            add,
        ],
        "",
    );
    assert_eq!(sum(&with_file), json!(42));

    let mut command = tool_tests::command(TRAVEL);
    command
        .args(["call", "--server", &url, "add", add])
        .env("MCP_SERVER_TOKEN", "up-secret");
    assert_eq!(sum(&tool_tests::stdio::run(&mut command, "")), json!(42));

    let without = run(&["call", "--server", &url, "add", add], "");
    assert!(!without.status.success());
    let told = text(&without.stderr);
    assert!(
        told.contains("HTTP 401") && told.contains("authorization"),
        "{told}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_mount_presents_the_token_file_given_for_its_prefix() {
    let dir = work_dir("mount-token");
    let (_upstream, url, file) = protected_upstream(&dir);
    let spec = format!("up={url}");
    let token = format!("up={file}");
    let (mut session, _) = serving_up_add(&["--mount", &spec, "--mount-token-file", &token]).await;
    let answer = up_add_answers(&mut session).await;
    assert_eq!(answer["result"]["content"][0]["text"], "7", "{answer}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn authorization_given_wrong_is_refused_before_anything_starts_naming_the_flag() {
    let dir = work_dir("token-refusals");
    let file = dir.join("token");
    std::fs::write(&file, "secret").unwrap();
    let file = file.to_str().unwrap().to_owned();
    let token = |prefix: &str| format!("{prefix}={file}");
    let local = "up=http://127.0.0.1:1/mcp".to_owned();
    let stdio = format!("up={}", upstream_command());
    let remote = "up=http://tools.example.com/mcp".to_owned();
    let owned = |words: &[&str]| {
        words
            .iter()
            .map(|word| (*word).to_owned())
            .collect::<Vec<_>>()
    };
    let cases: Vec<(Vec<String>, &str, &str)> = vec![
        (
            owned(&[
                "serve",
                "--mount",
                &local,
                "--mount-token-file",
                &token("upp"),
            ]),
            "--mount-token-file",
            "`upp`, which is not given",
        ),
        (
            owned(&["serve", "--mount", &local, "--mount-oauth", "upp"]),
            "--mount-oauth",
            "`upp`, which is not given",
        ),
        (
            owned(&[
                "serve",
                "--mount",
                &stdio,
                "--mount-token-file",
                &token("up"),
            ]),
            "--mount-token-file",
            "over stdio",
        ),
        (
            owned(&["serve", "--mount", &stdio, "--mount-oauth", "up"]),
            "--mount-oauth",
            "over stdio",
        ),
        (
            owned(&["serve", "--mount-token-file", "no-equals-sign"]),
            "--mount-token-file",
            "PREFIX=PATH",
        ),
        (
            owned(&[
                "serve",
                "--mount",
                &local,
                "--mount-oauth",
                "up",
                "--mount-token-file",
                &token("up"),
            ]),
            "--mount-oauth",
            "more than one way to authorize",
        ),
        (
            owned(&[
                "serve",
                "--mount",
                &remote,
                "--mount-token-file",
                &token("up"),
            ]),
            "--mount-token-file",
            "plain HTTP to tools.example.com",
        ),
        (
            owned(&[
                "call",
                "--server",
                "http://tools.example.com/mcp",
                "--server-token-file",
                &file,
                "add",
            ]),
            "--server-token-file",
            "plain HTTP to tools.example.com",
        ),
        (
            owned(&[
                "call",
                "--server",
                "http://tools.example.com/mcp",
                "--server-oauth",
                "add",
            ]),
            "--server-oauth",
            "plain HTTP to tools.example.com",
        ),
        (
            owned(&[
                "call",
                "--server",
                &upstream_command(),
                "--server-token-file",
                &file,
                "add",
            ]),
            "--server-token-file",
            "over stdio",
        ),
        (
            owned(&[
                "call",
                "--server",
                &local,
                "--server-oauth",
                "--server-token-file",
                &file,
                "add",
            ]),
            "--server-token-file",
            "cannot be used with",
        ),
    ];
    for (arguments, flag, reason) in cases {
        let mut command = tool_tests::command(TRAVEL);
        command.args(&arguments);
        let output = tool_tests::stdio::run(&mut command, "");
        let told = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}: {told}");
        assert!(
            told.contains(reason) && told.contains(flag),
            "{arguments:?}: {told}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A directory for the `work` tool's `release` and `cancelled` marks.
fn work_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cli-remote-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn work_arguments(dir: &std::path::Path) -> String {
    json!({"steps": 3, "release": dir.join("release"), "cancelled": dir.join("cancelled")})
        .to_string()
}

#[test]
fn call_shows_the_progress_of_a_call_unless_quiet() {
    let upstream = upstream_command();
    let dir = work_dir("progress");
    // Released before it starts: the tool reports its three steps and ends.
    std::fs::write(dir.join("release"), b"go").unwrap();
    let arguments = work_arguments(&dir);
    let output = run(&["call", "--server", &upstream, "work", &arguments], "");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    for step in 1..=3 {
        assert!(
            stderr.contains(&format!("progress {step}/3: working")),
            "a line per report on a pipe: {stderr}"
        );
    }
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["name"], "work", "stdout keeps only the result");
    let output = run(
        &["call", "--quiet", "--server", &upstream, "work", &arguments],
        "",
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        !text(&output.stderr).contains("progress"),
        "{}",
        text(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `call --server` of the upstream's `work` tool with `dir`'s files, as a child whose
/// stderr is read line by line.
fn call_work(dir: &std::path::Path) -> (std::process::Child, BufReader<std::process::ChildStderr>) {
    let upstream = upstream_command();
    let mut child = tool_tests::command(TRAVEL)
        .args(["call", "--server", &upstream, "work", &work_arguments(dir)])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    (child, stderr)
}

/// Reads `stderr` up to the first line `wanted` accepts; that line.
fn line_where(
    stderr: &mut BufReader<std::process::ChildStderr>,
    wanted: impl Fn(&str) -> bool,
) -> String {
    let mut line = String::new();
    while !wanted(&line) {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "call ended before the line looked for"
        );
    }
    line
}

#[test]
fn call_shows_the_status_of_the_task_a_call_became_until_it_ends() {
    let dir = work_dir("task");
    // The tool waits to be released: the server runs the call as a task, whose status
    // `call` shows as it changes.
    let (mut child, mut stderr) = call_work(&dir);
    let line = line_where(&mut stderr, |line| {
        line.starts_with("task ") && line.contains(": working")
    });
    std::fs::write(dir.join("release"), b"go").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{rest}");
    let task = line.trim_end().trim_end_matches(": working");
    assert!(
        rest.contains(&format!("{task}: completed")),
        "the task is shown until it ends: {rest}"
    );
    let mut printed = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut printed).unwrap();
    let printed: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(printed["output"], "released");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_cancels_the_call_and_exits_as_interrupted() {
    let dir = work_dir("interrupt");
    // The tool is running once its last report is shown; it then waits to be released.
    let (mut child, mut stderr) = call_work(&dir);
    line_where(&mut stderr, |line| line.contains("progress 3/3"));
    let interrupted = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "Ctrl-C ends the call as interrupted"
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert!(
        rest.contains("the call of work was cancelled (Ctrl-C)"),
        "{rest}"
    );
    let printed = child.stdout.take().map(|mut out| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut out, &mut text).unwrap();
        text
    });
    assert_eq!(
        printed.as_deref(),
        Some(""),
        "no result is printed for a cancelled call"
    );
    // The cancellation reached the server before `call` exited: its tool stopped midway.
    assert!(
        dir.join("cancelled").exists(),
        "the mounted server's tool was cancelled before call exited"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_gateway_holds_mounted_tools_to_its_budget_and_serves_them_on_rest_metrics_and_audit() {
    use tool_tests::http::{open_session, Request};
    let spec = format!("up={}", upstream_command());
    let mut server = tool_tests::spawn_http(
        TRAVEL,
        "127.0.0.1",
        &[
            "--mount",
            &spec,
            "--max-calls",
            "2",
            "--metrics",
            "--log-format",
            "json",
        ],
        &[],
    );
    let port = server.port;
    let discovered = tool_tests::wait_until_some("up_add is discovered over REST", || {
        let reply = Request::get("/api/tools/discover").send(port);
        (reply.status == 200 && reply.body.contains("\"up_add\"")).then_some(reply.body)
    });
    assert!(discovered.contains("Add two integers."), "{discovered}");
    let openapi = Request::get("/openapi.json").send(port).json();
    assert!(
        openapi["paths"]["/api/tools/up_add/call"]["post"].is_object(),
        "{openapi}"
    );

    // Over REST, from this address's budget.
    let reply = Request::rest("/api/tools/up_add/call", r#"{"a": 2, "b": 40}"#).send(port);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body.contains("42"), "{reply:?}");
    let reply = Request::rest("/api/tools/up_add/call", r#"{"a": "two", "b": 40}"#).send(port);
    assert!(
        reply.body.contains("'a'") && reply.body.contains("integer"),
        "checked here against the mounted tool's schema: {reply:?}"
    );

    // Over MCP, a session's budget of two calls holds a mounted tool as any other.
    let session = open_session(port);
    let call = |id: u32| {
        let request = tool_tests::rpc::call(id, "up_add", json!({"a": id, "b": 1}));
        let reply = Request::mcp(request).session(&session).send(port);
        tool_tests::messages(&reply.body).pop().expect("an answer")
    };
    for id in 1..=2 {
        let answer = call(id);
        assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
        let sum = (id + 1).to_string();
        assert_eq!(answer["result"]["content"][0]["text"], sum, "{answer}");
    }
    let refused = call(3);
    assert_eq!(
        refused["result"]["_meta"]["status"], "budget_exceeded",
        "{refused}"
    );

    let metrics = Request::get("/metrics").send(port).body;
    for line in [
        r#"mcp_tool_calls_total{tool="up_add",outcome="ok"} 3"#,
        r#"mcp_tool_calls_total{tool="up_add",outcome="invalid_arguments"} 1"#,
        r#"mcp_tool_calls_total{tool="up_add",outcome="budget_exceeded"} 1"#,
    ] {
        assert!(metrics.contains(line), "{line} in:\n{metrics}");
    }
    let logs = server.stop_and_read_logs();
    let mut audited: Vec<String> = tool_tests::logs::audit_events(&logs)
        .iter()
        .filter(|event| event["tool"] == "up_add")
        .map(|event| event["outcome"].as_str().unwrap_or("?").to_owned())
        .collect();
    audited.sort_unstable();
    assert_eq!(
        audited,
        ["budget_exceeded", "invalid_arguments", "ok", "ok", "ok"],
        "one audit event per call: {logs}"
    );
}
