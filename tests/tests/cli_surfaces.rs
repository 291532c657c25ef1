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
                "properties": {"id": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 4294967295u64, "description": "The book's number."}},
                "required": ["id"],
                "additionalProperties": false,
            },
        }])
    );
    // The tool formats stay tool formats.
    let openai: Value =
        serde_json::from_str(&stdout(&run(&["list", "--format", "openai"]))).unwrap();
    assert_eq!(openai.as_array().unwrap().len(), 1);
}

#[test]
fn check_refuses_a_prompt_argument_no_client_can_send() {
    let output = run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "error: prompt `by_tags`: argument `tags` takes a list, but clients send it as a \
         string; take a String, a number, a bool or an enum of unit variants"
    );
    assert!(
        lines[1].starts_with("1 tools, 2 prompts, 1 resources, "),
        "{text}"
    );
    assert!(lines[1].ends_with("; 1 errors, 0 warnings"), "{text}");
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
            "breaking: resource `library://books/{id}`: MIME type changed from application/json to text/plain",
            &format!(
                "3 changes, 3 breaking (saved-before -> {})",
                current["version"].as_str().unwrap()
            ),
        ],
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
