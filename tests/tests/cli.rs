//! The standard command line, run as a real binary (`travel-tools`, over the travel
//! fixture catalog).

use serde_json::{json, Value};
use std::process::Output;

fn run(args: &[&str]) -> Output {
    tool_tests::command(env!("CARGO_BIN_EXE_travel-tools"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn run_with_stdin(args: &[&str], stdin: &str) -> Output {
    let binary = env!("CARGO_BIN_EXE_travel-tools");
    tool_tests::stdio::run(tool_tests::command(binary).args(args), stdin)
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn golden(file: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("golden")
            .join(file),
    )
    .unwrap()
}

#[test]
fn list_prints_each_format_and_nothing_else() {
    for (format, file) in [
        ("catalog", "catalog.json"),
        ("mcp", "mcp.json"),
        ("openai-chat", "openai.json"),
        // The names of before, still read.
        ("openai", "openai.json"),
        ("anthropic", "anthropic.json"),
        ("gemini", "gemini.json"),
        ("prompt", "prompt.txt"),
    ] {
        let output = run(&["list", "--format", format]);
        assert!(output.status.success(), "{format}: {}", stderr(&output));
        let expected = golden(file);
        let expected = if expected.ends_with('\n') {
            expected
        } else {
            format!("{expected}\n")
        };
        assert_eq!(stdout(&output), expected, "{format}");
        assert_eq!(stderr(&output), "", "{format}: nothing on stderr");
    }
    // The default format is the catalog artefact.
    assert_eq!(
        stdout(&run(&["list"])),
        stdout(&run(&["list", "--format", "catalog"]))
    );
}

#[test]
fn exports_that_lose_something_say_so_on_stderr() {
    let output = run(&["list", "--format", "openai-chat-strict"]);
    assert!(output.status.success());
    assert_eq!(
        stdout(&output),
        format!("{}\n", golden("openai-strict.json"))
    );
    assert_eq!(
        stderr(&output),
        "warning: tool `inspect`: exported with strict: false: \
         a value accepts any JSON, which strict mode cannot describe\n\
         warning: tool `tag_items`: exported with strict: false: \
         an object takes free-form keys (a map), but strict mode needs every key named\n"
    );

    let output = run(&["list", "--format", "gemini-legacy"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "");
    let text = stderr(&output);
    assert!(
        text.starts_with("error: the gemini-legacy export cannot express tool `inspect`"),
        "{text}"
    );
    assert!(
        text.contains(
            "tool `org_chart` (parameter `root`: parameter `reports`: \
             type `Employee` contains itself"
        ),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1);

    // Asked to, it exports the rest and names what it left out, and why.
    let output = run(&["list", "--format", "gemini-legacy", "--skip-inexpressible"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let exported: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        tool_tests::fields(&exported["functionDeclarations"], "name"),
        ["always_fails", "health", "plan_trip"]
    );
    assert_eq!(
        stderr(&output),
        "warning: tool `inspect`: left out of the gemini-legacy export: parameter `value`: \
         a value accepts any JSON, which the legacy form cannot describe\n\
         warning: tool `org_chart`: left out of the gemini-legacy export: parameter `root`: \
         parameter `reports`: type `Employee` contains itself, \
         and the legacy form has no references to describe a recursive type; \
         use the `gemini` (parametersJsonSchema) export\n\
         warning: tool `tag_items`: left out of the gemini-legacy export: parameter `tags`: \
         an object takes free-form keys (a map), which the legacy form cannot describe\n"
    );
}

#[test]
fn call_takes_arguments_from_the_command_line_or_stdin() {
    let output = run(&[
        "call",
        "plan_trip",
        concat!(
            r#"{"destination": {"city": "Paris", "country": "FR"}, "mode": "train", "#,
            r#""stops": [{"city": "Lyon", "nights": 1}]}"#
        ),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(result["name"], "plan_trip");
    assert_eq!(result["output"]["total_nights"], 1);
    assert_eq!(result["output"]["travellers"], 2);
    assert_eq!(
        result["output"]["legs"][1],
        json!({"from": "Lyon", "to": "Paris", "mode": "train"})
    );

    let output = run_with_stdin(&["call", "tag_items"], r#"{"tags": {"a": "x", "b": "y"}}"#);
    assert!(output.status.success());
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    // A tool's output is its value, whatever its type.
    assert_eq!(result["output"], json!(2));

    let output = run(&["call", "health"]);
    assert!(output.status.success());
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        result,
        json!({"name": "health", "input": null, "output": "ok"})
    );
}

#[test]
fn a_failed_call_prints_the_error_result_and_exits_non_zero() {
    let output = run(&["call", "always_fails", r#"{"reason": "testing"}"#]);
    assert_eq!(output.status.code(), Some(1));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(result["error"], "failed as asked: testing");

    let output = run(&["call", "plan_trip", r#"{"mode": "boat"}"#]);
    assert_eq!(output.status.code(), Some(1));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let error = result["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "invalid arguments for plan_trip: missing required parameter 'destination'"
        ),
        "{error}"
    );
    assert!(
        error.contains(r#"'mode' must be one of "train", "car", "plane"; got "boat""#),
        "{error}"
    );

    let output = run(&["call", "plan_trips", "{}"]);
    assert_eq!(output.status.code(), Some(1));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        result["error"],
        "unknown tool 'plan_trips'; did you mean 'plan_trip'?"
    );
}

#[test]
fn usage_errors_exit_2_with_one_line_on_stderr() {
    for args in [
        vec!["list", "--format", "yaml"],
        vec!["frobnicate"],
        vec!["call"],
        vec!["call", "health", "{not json"],
        vec!["serve", "--http", "not-an-address"],
        vec!["diff", "/nonexistent/catalog.json"],
    ] {
        let output = run(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_eq!(stdout(&output), "", "{args:?}: nothing on stdout");
        let text = stderr(&output);
        assert_eq!(text.lines().count(), 1, "{args:?}: {text}");
        assert!(text.starts_with("error: "), "{args:?}: {text}");
    }
    let text = stderr(&run(&["list", "--format", "yaml"]));
    assert!(
        text.contains("unknown format `yaml`; formats: catalog, mcp, openai"),
        "{text}"
    );
}

#[test]
fn help_reads_well_to_a_newcomer() {
    let output = run(&["--help"]);
    assert!(output.status.success());
    let text = stdout(&output);
    for line in [
        "serve",
        "list",
        "call",
        "check",
        "diff",
        "Usage: travel-tools",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    let output = run(&["list", "--help"]);
    assert!(stdout(&output).contains("gemini-legacy"));
    // No subcommand: the help, on stderr, as a usage error.
    let output = run(&[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("Usage: travel-tools"));
}

#[test]
fn check_reports_sizes_and_passes_with_warnings() {
    let output = run(&["check"]);
    assert!(output.status.success(), "{}", stdout(&output));
    let text = stdout(&output);
    let findings = stderr(&output);
    assert!(
        findings.contains("warning: tool `org_chart`: Gemini's legacy schema cannot take it"),
        "{findings}"
    );
    assert!(text.contains("6 tools, "), "{text}");
    // Each definition's size in bytes and in tokens, as a model's tokenizer counts them.
    let line = text
        .lines()
        .find(|line| line.ends_with(" tokens  plan_trip"))
        .unwrap_or_else(|| panic!("a size line for plan_trip: {text}"));
    let numbers: Vec<usize> = line
        .split_whitespace()
        .filter_map(|word| word.parse().ok())
        .collect();
    let [bytes, tokens] = numbers[..] else {
        panic!("bytes and tokens: {line}")
    };
    assert!(
        tokens > bytes / 8 && tokens < bytes / 2,
        "JSON runs between two and eight bytes to a token: {line}"
    );
    // Counted by the tokenizer (feature `tokens`, on by default), not estimated from bytes.
    assert_ne!(
        tokens,
        bytes.div_ceil(4),
        "an estimate, not a count: {line}"
    );
    assert!(text.contains(" tokens) of MCP definitions"), "{text}");
}

#[test]
fn diff_finds_breaking_and_compatible_changes() {
    let dir = std::env::temp_dir().join(format!("tool-cli-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("catalog.json");

    // Against itself: nothing changed.
    std::fs::write(&saved, stdout(&run(&["list"]))).unwrap();
    let output = run(&["diff", saved.to_str().unwrap()]);
    assert!(output.status.success());
    assert!(
        stdout(&output).starts_with("0 changes, 0 breaking"),
        "{}",
        stdout(&output)
    );

    // An older catalog where `mode` had a fourth value, `budget` did not exist, `reason` was
    // optional and a tool `book_hotel` existed: the current one removes an enum value, makes
    // a parameter required and removes a tool.
    let mut old: Value = serde_json::from_str(&stdout(&run(&["list"]))).unwrap();
    let tools = old["functionSchema"].as_array_mut().unwrap();
    let plan = tools.iter_mut().find(|t| t["name"] == "plan_trip").unwrap();
    plan["parameters"]["$defs"]["TravelMode"]["enum"]
        .as_array_mut()
        .unwrap()
        .push(json!("boat"));
    plan["parameters"]["properties"]
        .as_object_mut()
        .unwrap()
        .remove("budget");
    let fails = tools
        .iter_mut()
        .find(|t| t["name"] == "always_fails")
        .unwrap();
    fails["parameters"]["required"] = json!([]);
    let mut hotel = tools[0].clone();
    hotel["name"] = json!("book_hotel");
    hotel["parameters"] = json!({
        "type": "object",
        "properties": {"nights": {"type": "integer"}},
        "additionalProperties": false
    });
    tools.push(hotel);
    std::fs::write(&saved, serde_json::to_string(&old).unwrap()).unwrap();

    let output = run(&["diff", saved.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        &lines[..4],
        [
            "breaking: tool `always_fails`: parameter `reason` became required",
            "breaking: tool `book_hotel`: removed",
            "breaking: tool `plan_trip`: parameter `mode`: enum value \"boat\" removed",
            "compatible: tool `plan_trip`: parameter `budget` added as optional",
        ],
        "{text}"
    );
    assert!(lines[4].starts_with("4 changes, 3 breaking"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_version_is_the_binarys_own_package_version() {
    let output = run(&["--version"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        format!("travel-tools {}\n", env!("CARGO_PKG_VERSION")),
        "the package its tools are written in, as Cargo names the binary"
    );
}
