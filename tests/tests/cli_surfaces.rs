//! `list`, `check` and `diff` cover prompts and resources as they cover tools, run on a
//! real binary (`library-tools`: a tool, two prompts, a resource template).

use serde_json::{json, Value};
use std::process::Output;

fn run(args: &[&str]) -> Output {
    tool_tests::command(env!("CARGO_BIN_EXE_library-tools"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_catalog_lists_prompts_and_resources_beside_the_tools() {
    let output = run(&["list"]);
    assert!(output.status.success());
    let catalog: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(catalog["count"], 1, "count stays the number of tools");
    let prompts = tool_tests::fields(&catalog["prompts"], "name");
    assert_eq!(prompts, ["by_tags", "recommend"]);
    let recommend = &catalog["prompts"][1];
    assert_eq!(recommend["description"], "Recommend books of a genre.");
    assert_eq!(recommend["parameters"]["required"], json!(["genre"]));
    assert_eq!(
        catalog["resources"],
        json!([{
            "uri": "library://books/{id}",
            "name": "book",
            "description": "The text of one book.",
            "mimeType": "text/plain",
            "parameters": {
                "type": "object",
                "properties": {"id": {
                    "type": "integer", "minimum": 0, "maximum": 4294967295u64,
                    "description": "The book's number."
                }},
                "required": ["id"],
                "additionalProperties": false,
            },
        }])
    );
    // The tool formats stay tool formats.
    let openai: Value =
        serde_json::from_str(&stdout(&run(&["list", "--format", "openai-chat"]))).unwrap();
    assert_eq!(openai.as_array().unwrap().len(), 1);
}

#[test]
fn check_refuses_a_prompt_argument_no_client_can_send() {
    let output = run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        stderr(&output).trim_end(),
        "error: prompt `by_tags`: argument `tags` takes a list, but clients send it as a \
         string; take a String, a number, a bool or an enum of unit variants",
        "the findings go to stderr"
    );
    assert!(
        lines[0].starts_with("1 tool, 2 prompts, 1 resource, "),
        "{text}"
    );
    assert!(lines[0].ends_with("; 1 error, 0 warnings"), "{text}");
    assert!(text.contains(" tokens  recommend (prompt)"), "{text}");
    assert!(
        text.contains(" tokens  library://books/{id} (resource)"),
        "{text}"
    );
}

#[test]
fn diff_finds_breaking_changes_to_prompts_and_resources() {
    let dir = std::env::temp_dir().join(format!("tool-cli-surfaces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("catalog.json");
    let current: Value = serde_json::from_str(&stdout(&run(&["list"]))).unwrap();
    std::fs::write(&saved, current.to_string()).unwrap();
    let same = run(&["diff", saved.to_str().unwrap()]);
    assert!(same.status.success());
    assert!(stdout(&same).starts_with("0 changes, 0 breaking"));

    // An older catalog where `recommend` had no `genre`, a prompt `surprise` existed and
    // the book resource was JSON.
    let mut old = current.clone();
    let recommend = &mut old["prompts"][1]["parameters"];
    recommend["properties"]
        .as_object_mut()
        .unwrap()
        .remove("genre");
    recommend["required"] = json!([]);
    let mut surprise = old["prompts"][1].clone();
    surprise["name"] = json!("surprise");
    old["prompts"].as_array_mut().unwrap().push(surprise);
    old["resources"][0]["mimeType"] = json!("application/json");
    // A version of its own, so the summary line shows which side is which.
    old["version"] = json!("saved-before");
    std::fs::write(&saved, old.to_string()).unwrap();

    let output = run(&["diff", saved.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "breaking: prompt `recommend`: argument `genre` added as required",
            "breaking: prompt `surprise`: removed",
            "breaking: resource `library://books/{id}`: \
             MIME type changed from application/json to text/plain",
            &format!(
                "3 changes, 3 breaking (saved-before -> {})",
                current["version"].as_str().unwrap()
            ),
        ],
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn prompts_are_got_and_resources_read_from_the_command_line() {
    let output = run(&["prompt", "recommend", r#"{"genre": "crime", "count": "2"}"#]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let messages: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        messages,
        json!([{"role": "user", "content": {"type": "text", "text": "Recommend 2 crime books."}}])
    );
    let output = run(&["read", "library://books/7"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let contents: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(contents[0]["text"], "The text of book 7.");
    assert_eq!(contents[0]["mimeType"], "text/plain");

    // Each command says which one the other kind of item needs.
    let output = run(&["call", "recommend", "{}"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .contains("'recommend' is a prompt, not a tool: get it with `prompt recommend`"),
        "{}",
        stderr(&output)
    );
    let output = run(&["prompt", "find_books"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("'find_books' is a tool, not a prompt"),
        "{}",
        stderr(&output)
    );
    let output = run(&["read", "library://films/1"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("Resource not found: library://films/1"),
        "{}",
        stderr(&output)
    );
}
