//! `namespace!`: a module's or a crate's `#[tool]` functions under a prefix, so two modules
//! (or a binary and a library it links) can each have a tool called `read`.

use extra_tools as _;
use serde_json::json;
use tool_runtime::{tool, Registry};

// Every tool of a library this binary links, wherever it is in that crate.
tool_runtime::namespace!("text", module = "extra_tools");

/// Read something at the root, under no namespace.
#[tool]
fn read(what: String) -> String {
    format!("root {what}")
}

mod files {
    tool_runtime::namespace!("files");

    use tool_runtime::tool;

    /// Read a file.
    #[tool]
    fn read(path: String) -> String {
        format!("file {path}")
    }

    pub mod deeper {
        use tool_runtime::tool;

        /// Describe a file: in a module inside `files`, so under its namespace.
        #[tool]
        fn stat(path: String) -> String {
            format!("stat {path}")
        }
    }

    pub mod own {
        tool_runtime::namespace!("own");

        use tool_runtime::tool;

        /// Read with the nearest namespace, not the one around it.
        #[tool]
        fn read(path: String) -> String {
            format!("own {path}")
        }
    }
}

#[tokio::test]
async fn tools_take_the_nearest_namespace_and_are_called_by_it() {
    let registry = Registry::new().expect("the same name in two namespaces is no clash");
    let mut names: Vec<String> = registry
        .tools()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "files_read",
            "files_stat",
            "own_read",
            "read",
            "text_reverse",
            "text_word_count"
        ]
    );

    for (name, expected) in [
        ("read", "root x"),
        ("files_read", "file x"),
        ("files_stat", "stat x"),
        ("own_read", "own x"),
    ] {
        let argument = if name == "read" { "what" } else { "path" };
        let result = registry.call(name, json!({ argument: "x" })).await;
        assert_eq!(result.output(), Some(&json!(expected)), "{name}");
    }
    let result = registry.call("text_reverse", json!({"text": "abc"})).await;
    assert_eq!(result.output(), Some(&json!("cba")));

    // An unknown name is answered with the namespaced one it resembles.
    let result = registry.call("files_raed", json!({"path": "x"})).await;
    assert_eq!(
        result.error().unwrap().to_string(),
        "unknown tool 'files_raed'; did you mean 'files_read'?"
    );
}
