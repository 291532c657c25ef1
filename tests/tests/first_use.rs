//! What a new user hits first with the standard command line, run as real binaries: tools
//! in a library crate, a tool that needs state, `serve --http` for a real deployment,
//! `call` past a tool's time limit, and the test scripts under a `CARGO_TARGET_DIR` of
//! one's own.

use std::process::{Command, Output};
use std::time::{Duration, Instant};
use tool_tests::http::{Reply, Request};
use tool_tests::{spawn_http, ServerProcess, INITIALIZE};

fn run(binary: &str, args: &[&str]) -> Output {
    tool_tests::command(binary)
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_library_of_tools_the_binary_never_names_is_reported_not_silently_empty() {
    let unlinked = env!("CARGO_BIN_EXE_unlinked-tools");
    let output = run(unlinked, &["check"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "check fails on an empty catalog"
    );
    let report = text(&output.stderr);
    assert!(
        report.contains("the catalog is empty") && report.contains("use my_tools as _;"),
        "check says what is wrong and the one line that fixes it: {report}"
    );

    let output = run(unlinked, &["list"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        text(&output.stderr).contains("warning: the catalog is empty"),
        "list warns: {}",
        text(&output.stderr)
    );

    // stdin is closed at once, so stdio serving ends right after its start.
    let output = run(unlinked, &["serve"]);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("WARN") && stderr.contains("use my_tools as _;"),
        "serve warns: {stderr}"
    );

    // The documented line links the library, and its tools are there.
    let linked = env!("CARGO_BIN_EXE_linked-tools");
    let output = run(linked, &["list", "--format", "prompt"]);
    let listed = text(&output.stdout);
    assert!(
        listed.contains("- reverse:") && listed.contains("- word_count:"),
        "{listed}"
    );
    assert!(text(&output.stderr).is_empty(), "{}", text(&output.stderr));
    let output = run(linked, &["check"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stdout));
}

#[test]
fn a_tool_that_needs_state_is_described_without_it_and_run_only_with_it() {
    let binary = env!("CARGO_BIN_EXE_state-tools");
    for args in [&["list"][..], &["list", "--format", "openai"], &["check"]] {
        let output = run(binary, args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&output.stderr)
        );
        assert!(text(&output.stdout).contains("convert"), "{args:?}");
    }
    let saved = std::env::temp_dir().join(format!("state-tools-{}.json", std::process::id()));
    std::fs::write(&saved, run(binary, &["list"]).stdout).unwrap();
    let output = run(binary, &["diff", saved.to_str().unwrap()]);
    std::fs::remove_file(&saved).unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));

    for args in [&["call", "convert", r#"{"meters": 1}"#][..], &["serve"]] {
        let output = run(binary, args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains("tool `convert` takes State<state_tools::Units>")
                && stderr.contains("Cli::new().state(...)"),
            "{args:?}: the error names the tool, the state and the fix: {stderr}"
        );
    }
}

#[test]
fn call_past_a_time_limit_cancels_the_tool_and_does_not_wait_for_it() {
    let binary = env!("CARGO_BIN_EXE_timeout-tools");
    let marker = std::env::temp_dir().join(format!("timeout-tools-{}", std::process::id()));
    let arguments = serde_json::json!({"marker": marker}).to_string();
    let output = run(binary, &["call", "wait_for_cancel", &arguments]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stdout).contains("did not finish within 300ms"),
        "{}",
        text(&output.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(&marker).ok().as_deref(),
        Some("cancelled"),
        "the tool saw its cancellation fire"
    );
    std::fs::remove_file(&marker).unwrap();

    // A tool that ignores its cancellation sleeps for a minute; the command does not wait.
    let started = Instant::now();
    let output = run(binary, &["call", "ignore_cancel"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stdout).contains("did not finish within 300ms"));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the command ended long before the tool would"
    );
}

fn serve_http(host: &str, args: &[&str], env: &[(&str, &str)]) -> ServerProcess {
    spawn_http(env!("CARGO_BIN_EXE_travel-tools"), host, args, env)
}

/// Sends an `initialize` to `/mcp`.
fn post(port: u16, headers: &[(&str, &str)]) -> Reply {
    Request::mcp(INITIALIZE).headers(headers).send(port)
}

#[test]
fn serve_http_takes_host_names_tokens_hosts_and_origins_and_logs_without_colour() {
    // A host name with a port, the way people write it.
    let mut server = serve_http("localhost", &[], &[]);
    assert_eq!(post(server.port, &[]).status, 200);
    assert_eq!(
        post(server.port, &[("Host", "evil.example")]).status,
        403,
        "a loopback server answers only loopback names"
    );
    let logs = server.stop_and_read_logs();
    assert!(logs.contains("serving MCP over HTTP"), "{logs}");
    assert!(
        !logs.contains('\u{1b}'),
        "no ANSI colour when stderr is not a terminal: {logs:?}"
    );

    // The token from the environment, never from a flag.
    let server = serve_http("127.0.0.1", &[], &[("MCP_BEARER_TOKEN", "s3cret")]);
    assert_eq!(post(server.port, &[]).status, 401);
    assert_eq!(
        post(server.port, &[("Authorization", "Bearer wrong")]).status,
        401
    );
    assert_eq!(
        post(server.port, &[("Authorization", "Bearer s3cret")]).status,
        200
    );
    drop(server);

    // The token from a file, and hosts and origins from flags.
    let file = std::env::temp_dir().join(format!("first-use-token-{}", std::process::id()));
    std::fs::write(&file, "from-a-file\n").unwrap();
    let server = serve_http(
        "127.0.0.1",
        &[
            "--bearer-token-file",
            file.to_str().unwrap(),
            "--allowed-host",
            "tools.example.com",
            "--cors-origin",
            "https://app.example.com",
        ],
        &[],
    );
    let token = ("Authorization", "Bearer from-a-file");
    assert_eq!(
        post(server.port, &[("Host", "tools.example.com")]).status,
        401
    );
    assert_eq!(
        post(server.port, &[token, ("Host", "tools.example.com")]).status,
        200
    );
    assert_eq!(
        post(server.port, &[token]).status,
        403,
        "only the allowed hosts are answered"
    );
    let reply = post(
        server.port,
        &[
            token,
            ("Host", "tools.example.com"),
            ("Origin", "https://app.example.com"),
        ],
    );
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("access-control-allow-origin"),
        Some("https://app.example.com"),
        "{reply:?}"
    );
    drop(server);
    std::fs::remove_file(&file).unwrap();

    // Hosts from the environment, comma-separated.
    let server = serve_http(
        "127.0.0.1",
        &[],
        &[("MCP_ALLOWED_HOSTS", "a.example,b.example")],
    );
    assert_eq!(post(server.port, &[("Host", "b.example")]).status, 200);
    assert_eq!(post(server.port, &[]).status, 403);
}

#[test]
fn serve_refuses_what_it_cannot_use_with_a_usage_error() {
    let binary = env!("CARGO_BIN_EXE_travel-tools");
    let output = run(binary, &["serve", "--http", "localhost"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("has no port"),
        "{}",
        text(&output.stderr)
    );

    let empty = std::env::temp_dir().join(format!("first-use-empty-{}", std::process::id()));
    std::fs::write(&empty, "\n").unwrap();
    let output = tool_tests::command(binary)
        .args(["serve", "--http", "127.0.0.1:0"])
        .arg("--bearer-token-file")
        .arg(&empty)
        .output()
        .unwrap();
    std::fs::remove_file(&empty).unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("is empty"),
        "{}",
        text(&output.stderr)
    );

    let help = text(&run(binary, &["serve", "--help"]).stdout);
    assert!(help.contains("MCP_BEARER_TOKEN") && help.contains("--allowed-host"));
    assert!(
        !help.contains("--bearer-token "),
        "no flag takes the secret itself"
    );
}

/// The workspace's root directory (this package is one level down).
fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package is inside the workspace")
        .to_path_buf()
}

#[test]
fn the_scripts_ask_cargo_where_the_binaries_are() {
    let root = workspace_root();
    let elsewhere = std::env::temp_dir().join("tool-tests-target-elsewhere");
    let output = Command::new("bash")
        .arg(root.join("scripts/target-dir.sh"))
        .env("CARGO_TARGET_DIR", &elsewhere)
        .output()
        .expect("bash runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout).trim(), elsewhere.to_str().unwrap());

    // Every script the test command runs finds binaries through that script, never by a
    // path of its own.
    let mut scripts: Vec<std::path::PathBuf> = vec![root.join(".ci/run")];
    for dir in ["scripts", "tests/clients"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if ["sh", "py", "mjs"].contains(&extension) {
                scripts.push(path);
            }
        }
    }
    assert!(scripts.len() >= 5, "the scripts were found: {scripts:?}");
    for script in &scripts {
        let source = std::fs::read_to_string(script).unwrap();
        for (number, line) in source.lines().enumerate() {
            // `target/` as a path of its own, not the end of a variable (`$target/debug`)
            // nor in a comment.
            let comment = ["#", "//"]
                .iter()
                .any(|mark| line.trim_start().starts_with(mark));
            let hard_coded = !comment
                && line.match_indices("target/").any(|(at, _)| {
                    !line[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|before| before.is_alphanumeric() || "$_{".contains(before))
                });
            assert!(
                !hard_coded,
                "{}:{} names cargo's target directory itself; ask scripts/target-dir.sh: {line}",
                script.display(),
                number + 1
            );
        }
    }
}
