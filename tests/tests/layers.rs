//! The runtime's layers point one way (see ARCHITECTURE.md): a lower layer never names a
//! higher one. Checked on the source, so a new import that closes a cycle fails here.

use std::path::{Path, PathBuf};

/// The layers, bottom up: each is a module (a directory or a file of `tool-runtime/src`),
/// and a module may name only the modules of its own layer or of layers below it.
/// `export`, `check` and `diff` use only the catalog and schemas, so they sit low.
const LAYERS: &[&[&str]] = &[
    &["schema", "tokens.rs", "sync.rs", "clock.rs", "otel"],
    &["catalog"],
    &["tasks"],
    &["store"],
    &["export", "check.rs", "diff.rs"],
    &["call"],
    &["layers"],
    &["ops"],
    &["registration.rs"],
    &["registry"],
    &["mcp", "agent"],
    &["transport"],
    &["cli"],
];

/// A module's name as code names it (`crate::<name>`).
fn module_name(path: &str) -> &str {
    path.trim_end_matches(".rs")
}

fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-runtime/src")
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_owned());
    }
}

/// The `crate::<layer>` paths a file names, outside comments.
fn named_layers(text: &str, layers: &[&str]) -> Vec<String> {
    let mut named = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for layer in layers {
            let needle = format!("crate::{layer}");
            let mut rest = code;
            while let Some(at) = rest.find(&needle) {
                let after = &rest[at + needle.len()..];
                if !after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                    named.push(format!("{layer}: {}", line.trim()));
                }
                rest = after;
            }
        }
    }
    named
}

#[test]
fn no_layer_names_a_layer_above_it() {
    let mut violations = Vec::new();
    for (level, layer) in LAYERS.iter().enumerate() {
        let above: Vec<&str> = LAYERS[level + 1..]
            .iter()
            .flat_map(|modules| modules.iter().map(|path| module_name(path)))
            .collect();
        for module in *layer {
            let mut files = Vec::new();
            rust_files(&source_dir().join(module), &mut files);
            assert!(!files.is_empty(), "module {module} has no files");
            for file in files {
                let text = std::fs::read_to_string(&file).unwrap();
                for found in named_layers(&text, &above) {
                    violations.push(format!("{}: {found}", file.display()));
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// What the protocol layer must not name: it spawns nothing, waits on no timer of the
/// runtime's and reads no clock (it is told the time), so that a transport and a driver
/// decide where and when work runs.
const RUNTIME_NAMES: &[&str] = &[
    "tokio::spawn",
    "spawn_blocking",
    "runtime::Handle",
    "Handle::current",
    "Handle::try_current",
    "tokio::time",
    "std::thread::spawn",
    "std::thread::sleep",
    "Instant::now",
    "SystemTime::now",
    "call::clock",
];

/// The lines of `text`, outside comments and its unit tests (a test drives the code from
/// threads of its own), that name one of `names`.
fn naming(text: &str, names: &[&str]) -> Vec<String> {
    text.lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .map(|line| line.split("//").next().unwrap_or(""))
        .filter(|code| names.iter().any(|name| code.contains(name)))
        .map(|code| code.trim().to_owned())
        .collect()
}

#[test]
fn the_protocol_layer_spawns_nothing_waits_on_no_timer_and_reads_no_clock() {
    let mut files = Vec::new();
    rust_files(&source_dir().join("mcp"), &mut files);
    assert!(!files.is_empty());
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in naming(&text, RUNTIME_NAMES) {
            found.push(format!("{}: {line}", file.display()));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_runtime_check_sees_a_clock_read() {
    let text = "let deadline = Instant::now() + patience;\nlet at = told.now();";
    assert_eq!(
        naming(text, RUNTIME_NAMES),
        ["let deadline = Instant::now() + patience;"]
    );
}

#[test]
fn the_runtime_check_sees_a_spawn_and_not_a_comment() {
    let text =
        "let t = tokio::spawn(work);\n// tokio::time::sleep in a comment\nHandled::request(None)";
    assert_eq!(naming(text, RUNTIME_NAMES), ["let t = tokio::spawn(work);"]);
}

#[test]
fn the_runtime_check_leaves_unit_tests_out() {
    let text = "let t = tokio::spawn(work);\n#[cfg(test)]\nmod tests { std::thread::spawn(f); }";
    assert_eq!(naming(text, RUNTIME_NAMES), ["let t = tokio::spawn(work);"]);
}

#[test]
fn the_check_sees_an_upward_import() {
    let text = "use crate::registry::ToolRef; // an upward import\n// crate::mcp in a comment";
    assert_eq!(
        named_layers(text, &["registry", "mcp"]),
        ["registry: use crate::registry::ToolRef; // an upward import"]
    );
}
