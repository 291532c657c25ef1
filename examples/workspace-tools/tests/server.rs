//! The workspace tools server, driven as clients drive it: over MCP on stdio, and through
//! its command line. Includes the path escape corpus and every limit.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A workspace with something of everything, next to a directory it must never reach.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("workspace");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "TOPSECRET").unwrap();
    let write = |path: &str, content: &[u8]| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    };
    write("README.md", b"# Demo\nfn main is not here\n");
    write("src/main.rs", b"fn main() {\n    println!(\"hi\");\n}\n");
    write(
        "src/lib.rs",
        b"// TODO: document\npub fn helper() {}\n// TODO: test\n",
    );
    write("src/api/handlers.rs", b"pub fn handle() {}\n");
    write("src/api/v1/routes.rs", b"// routes\n");
    write("src/api/v1/deep/deeper.rs", b"// deep\n");
    write("docs/guide.md", b"guide\n");
    write("big.txt", &vec![b'a'; 150 * 1024]);
    write("utf8-big.txt", "é".repeat(60 * 1024).as_bytes());
    write("image.bin", b"\x89PNG\x00\x01\x02");
    write(".gitignore", b"ignored/\n");
    write("ignored/secret.rs", b"fn main() { ignored }\n");
    write(".hidden/notes.txt", b"fn main hidden\n");
    std::os::unix::fs::symlink(&outside, root.join("link_out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("link_file_out")).unwrap();
    std::os::unix::fs::symlink(root.join("src"), root.join("link_in")).unwrap();
    std::os::unix::fs::symlink("/dev/null", root.join("link_dev")).unwrap();
    let fifo = std::ffi::CString::new(root.join("fifo").to_str().unwrap()).unwrap();
    let status = Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {fifo:?}");
    Fixture { _dir: dir, root }
}

struct Server {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(root: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_workspace-tools"))
            .args(["serve", "--root"])
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            input,
            output,
            next_id: 0,
        };
        let init = server.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}
            }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "workspace-tools");
        writeln!(
            server.input,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        server
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the server closed its output"
            );
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer;
            }
        }
    }

    /// Calls a tool; `Ok(structuredContent)` or `Err(error text)`. A large output answered
    /// as a link fails the test: use `call_following_link` where one is expected.
    fn call(&mut self, name: &str, arguments: Value) -> Result<Value, String> {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        let result = &answer["result"];
        if result["isError"] == true {
            return Err(result["content"][0]["text"].as_str().unwrap().to_owned());
        }
        assert!(
            result.get("structuredContent").is_some(),
            "{name} answered no value (a link?): {result}"
        );
        Ok(result["structuredContent"].clone())
    }

    /// Calls a tool whose output is large: the answer must be a preview and a link, and
    /// the value is read through the link.
    fn call_following_link(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        let link = &answer["result"]["content"][1];
        assert_eq!(link["type"], "resource_link", "{answer}");
        let read = self.request("resources/read", json!({"uri": link["uri"]}));
        let text = read["result"]["contents"][0]["text"].as_str().unwrap();
        serde_json::from_str(text).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn twenty_five_escape_attempts_are_refused_without_revealing_the_root() {
    let fixture = fixture();
    let mut server = Server::start(&fixture.root);
    let root_text = fixture.root.to_str().unwrap().to_owned();
    let absolute_readme = format!("{root_text}/README.md");
    let attempts: Vec<(&str, Value, &str)> = vec![
        (
            "read_file",
            json!({"path": "../outside/secret.txt"}),
            "uses '..'",
        ),
        ("read_file", json!({"path": ".."}), "uses '..'"),
        (
            "read_file",
            json!({"path": "../../etc/passwd"}),
            "uses '..'",
        ),
        (
            "read_file",
            json!({"path": "src/../../outside/secret.txt"}),
            "uses '..'",
        ),
        (
            "read_file",
            json!({"path": "./../outside/secret.txt"}),
            "uses '..'",
        ),
        (
            "read_file",
            json!({"path": "src/./../../outside"}),
            "uses '..'",
        ),
        (
            "read_file",
            json!({"path": "..\\outside\\secret.txt"}),
            "uses '..'",
        ),
        ("read_file", json!({"path": "src/../.."}), "uses '..'"),
        (
            "read_file",
            json!({"path": "/etc/passwd"}),
            "is an absolute path",
        ),
        (
            "read_file",
            json!({"path": "//etc/passwd"}),
            "is an absolute path",
        ),
        (
            "read_file",
            json!({"path": absolute_readme}),
            "is an absolute path",
        ),
        (
            "read_file",
            json!({"path": "\\etc\\passwd"}),
            "is an absolute path",
        ),
        (
            "read_file",
            json!({"path": "C:\\Windows\\win.ini"}),
            "is an absolute path",
        ),
        (
            "read_file",
            json!({"path": "/dev/null"}),
            "is an absolute path",
        ),
        (
            "read_file",
            json!({"path": "/proc/self/environ"}),
            "is an absolute path",
        ),
        (
            "read_file",
            json!({"path": "link_out/secret.txt"}),
            "leads outside the workspace",
        ),
        (
            "read_file",
            json!({"path": "link_file_out"}),
            "leads outside the workspace",
        ),
        (
            "read_file",
            json!({"path": "link_dev"}),
            "leads outside the workspace",
        ),
        (
            "read_file",
            json!({"path": "fifo"}),
            "is a device, FIFO or socket",
        ),
        (
            "read_file",
            json!({"path": "src/\u{0}/main.rs"}),
            "NUL byte",
        ),
        (
            "read_file",
            json!({"path": "~/secret.txt"}),
            "does not exist",
        ),
        ("list_files", json!({"path": ".."}), "uses '..'"),
        (
            "list_files",
            json!({"path": "link_out"}),
            "leads outside the workspace",
        ),
        ("list_dirs", json!({"path": "/"}), "is an absolute path"),
        (
            "list_dirs",
            json!({"path": "link_out"}),
            "leads outside the workspace",
        ),
    ];
    assert_eq!(attempts.len(), 25, "the attempts this test is named for");
    for (tool, arguments, expected) in attempts {
        let error = server
            .call(tool, arguments.clone())
            .expect_err(&format!("{tool} {arguments} must fail"));
        assert!(error.contains(expected), "{tool} {arguments}: {error}");
        // An error may echo what the caller sent (an absolute path holding the root), but
        // nothing else of it may name the root.
        let mut unechoed = error.clone();
        for sent in arguments.as_object().unwrap().values() {
            if let Some(text) = sent.as_str() {
                unechoed = unechoed.replace(text, "");
            }
        }
        assert!(
            !unechoed.contains(&root_text),
            "{tool} {arguments} reveals the root: {error}"
        );
        assert!(!error.contains("TOPSECRET"));
    }
    // Searching never reaches outside either: symbolic links are not followed.
    let found = server
        .call("search_code", json!({"query": "TOPSECRET"}))
        .unwrap();
    assert_eq!(found, json!({"result": []}));
    // A link that stays inside is fine.
    let inside = server
        .call("read_file", json!({"path": "link_in/main.rs"}))
        .unwrap();
    assert!(inside["content"].as_str().unwrap().starts_with("fn main"));
}

#[test]
fn the_tools_do_their_job() {
    let fixture = fixture();
    let mut server = Server::start(&fixture.root);

    let dirs = server.call("list_dirs", json!({"depth": 2})).unwrap();
    assert_eq!(
        dirs,
        json!({"dirs": [
            {"path": "docs", "depth": 1},
            {"path": "src", "depth": 1},
            {"path": "src/api", "depth": 2}
        ], "truncated": false}),
        "ignored/ and hidden directories are left out, links are not followed"
    );
    let dirs = server
        .call("list_dirs", json!({"path": "src", "depth": 3}))
        .unwrap();
    let paths: Vec<&str> = dirs["dirs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/api", "src/api/v1", "src/api/v1/deep"]);

    let files = server
        .call("list_files", json!({"path": "src", "pattern": "*.rs"}))
        .unwrap();
    assert_eq!(
        files,
        json!({"files": [
            {"path": "src/lib.rs", "name": "lib.rs", "size": 51},
            {"path": "src/main.rs", "name": "main.rs", "size": 34}
        ], "truncated": false})
    );
    let files = server.call("list_files", json!({})).unwrap();
    let names: Vec<&str> = files["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"README.md")
            && !names.contains(&"link_file_out")
            && !names.contains(&"fifo"),
        "{names:?}"
    );

    let readme = server
        .call("read_file", json!({"path": "README.md"}))
        .unwrap();
    assert_eq!(
        readme,
        json!({
            "path": "README.md", "content": "# Demo\nfn main is not here\n", "size": 27,
            "truncated": false, "binary": false
        })
    );
    let image = server
        .call("read_file", json!({"path": "image.bin"}))
        .unwrap();
    assert_eq!(
        image,
        json!({"path": "image.bin", "size": 7, "truncated": false, "binary": true})
    );
    let accented = server.call_following_link("read_file", json!({"path": "utf8-big.txt"}));
    assert_eq!(accented["truncated"], true);
    assert_eq!(
        accented["binary"], false,
        "a cut inside a character is not binary"
    );
    assert!(accented["content"]
        .as_str()
        .unwrap()
        .chars()
        .all(|c| c == 'é'));

    let found = server
        .call("search_code", json!({"query": "fn main"}))
        .unwrap();
    assert_eq!(
        found,
        json!({"result": [
            {"path": "README.md", "line": 2, "snippet": "fn main is not here"},
            {"path": "src/main.rs", "line": 1, "snippet": "fn main() {"}
        ]}),
        "ignored and hidden files are skipped"
    );
    let found = server
        .call(
            "search_code",
            json!({"query": "TODO", "filePattern": "src/*.rs"}),
        )
        .unwrap();
    assert_eq!(found["result"].as_array().unwrap().len(), 2);
    let found = server
        .call(
            "search_code",
            json!({"query": "pub fn \\w+", "regex": true}),
        )
        .unwrap();
    assert_eq!(found["result"].as_array().unwrap().len(), 2);
    let found = server
        .call("search_code", json!({"query": "(unclosed"}))
        .unwrap();
    assert_eq!(
        found["result"],
        json!([]),
        "literal by default: no regex error"
    );
    let error = server
        .call("search_code", json!({"query": "(unclosed", "regex": true}))
        .unwrap_err();
    assert!(
        error.starts_with("query is not a valid regular expression"),
        "{error}"
    );

    let plan = server
        .call("todo_manager", json!({"items": [
            {"content": "Gather context", "activeForm": "Gathering context", "status": "pending"},
            {"content": "Map domains", "activeForm": "Mapping domains", "status": "pending"}
        ]}))
        .unwrap();
    assert_eq!(
        plan,
        json!({
            "items": [
                {"id": "step-1", "content": "Gather context", "activeForm": "Gathering context",
                 "status": "in_progress"},
                {"id": "step-2", "content": "Map domains", "activeForm": "Mapping domains",
                 "status": "pending"}
            ],
            "maxItems": 15,
            "currentItem": {"id": "step-1", "content": "Gather context",
                            "activeForm": "Gathering context", "status": "in_progress"}
        })
    );
    let plan = server
        .call("todo_manager", json!({"items": [
            {"content": "Gather context", "activeForm": "Gathering context", "status": "completed"},
            {"content": "Map domains", "activeForm": "Mapping domains", "status": "in_progress"}
        ]}))
        .unwrap();
    assert_eq!(plan["currentItem"]["id"], "step-2");
    let error = server
        .call(
            "todo_manager",
            json!({"items": [{"content": "x", "status": "pending"}]}),
        )
        .unwrap_err();
    assert!(
        error.contains("missing required field 'activeForm'"),
        "{error}"
    );

    let verdict = server
        .call(
            "validate_output",
            json!({"outputType": "domain_map", "data": {
                "domains": [], "layout": {}, "summary": {}
            }}),
        )
        .unwrap();
    assert_eq!(
        verdict,
        json!({"valid": true, "errors": [], "warnings": [
            "'domains' is empty", "'layout' is empty", "'summary' is empty"
        ]})
    );
    let verdict = server
        .call(
            "validate_output",
            json!({"outputType": "domain_map", "data": {"layout": {"x": 1}}}),
        )
        .unwrap();
    assert_eq!(
        verdict,
        json!({
            "valid": false,
            "errors": ["Missing 'domains' array", "Missing 'summary' object"],
            "warnings": []
        })
    );
    let error = server
        .call(
            "validate_output",
            json!({"outputType": "essay", "data": {}}),
        )
        .unwrap_err();
    assert_eq!(
        error,
        "unknown output type 'essay'; known types: domain_map, plan"
    );
}

#[test]
fn every_limit_is_enforced_with_an_error_that_states_it() {
    let fixture = fixture();
    let mut server = Server::start(&fixture.root);
    let cases = [
        (
            "list_dirs",
            json!({"depth": 4}),
            "invalid arguments for list_dirs: 'depth' must be an integer between 1 and 3; got 4",
        ),
        (
            "list_dirs",
            json!({"limit": 501}),
            "invalid arguments for list_dirs: 'limit' must be an integer between 1 and 500; \
             got 501",
        ),
        (
            "list_files",
            json!({"limit": 1001}),
            "invalid arguments for list_files: 'limit' must be an integer between 1 and 1000; \
             got 1001",
        ),
        (
            "list_files",
            json!({"limit": 0}),
            "invalid arguments for list_files: 'limit' must be an integer between 1 and 1000; \
             got 0",
        ),
        (
            "search_code",
            json!({"query": "x", "limit": 201}),
            "invalid arguments for search_code: 'limit' must be an integer between 1 and 200; \
             got 201",
        ),
        (
            "search_code",
            json!({"query": ""}),
            "invalid arguments for search_code: 'query' must be a string of 1 to 1000 characters; \
             got \"\"",
        ),
    ];
    // The limits are in the published schema, so a client can know them before calling.
    let listed = server.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    let list_dirs = tools.iter().find(|t| t["name"] == "list_dirs").unwrap();
    let depth = &list_dirs["inputSchema"]["properties"]["depth"];
    assert_eq!(
        (depth["minimum"].clone(), depth["maximum"].clone()),
        (json!(1), json!(3))
    );
    for (tool, arguments, expected) in cases {
        assert_eq!(
            server.call(tool, arguments.clone()).unwrap_err(),
            expected,
            "{tool} {arguments}"
        );
    }
    let items: Vec<Value> = (0..16)
        .map(|i| json!({"content": format!("step {i}"), "activeForm": format!("doing {i}")}))
        .collect();
    assert_eq!(
        server
            .call("todo_manager", json!({"items": items}))
            .unwrap_err(),
        "a plan has at most 15 items; got 16"
    );
    let error = server
        .call(
            "todo_manager",
            json!({"items": [
                {"content": "a", "activeForm": "doing a", "status": "in_progress"},
                {"content": "b", "activeForm": "doing b", "status": "in_progress"}
            ]}),
        )
        .unwrap_err();
    assert_eq!(
        error,
        "at most one item can be in_progress; items 1 and 2 are"
    );

    // Results cut at a limit say so.
    let big = server.call_following_link("read_file", json!({"path": "big.txt"}));
    assert_eq!(big["truncated"], true);
    assert_eq!(big["size"], 150 * 1024);
    assert_eq!(big["content"].as_str().unwrap().len(), 100 * 1024);
    let files = server.call("list_files", json!({"limit": 2})).unwrap();
    assert_eq!(
        (
            files["files"].as_array().unwrap().len(),
            files["truncated"].clone()
        ),
        (2, json!(true))
    );
    let dirs = server
        .call("list_dirs", json!({"depth": 3, "limit": 2}))
        .unwrap();
    assert_eq!(
        (
            dirs["dirs"].as_array().unwrap().len(),
            dirs["truncated"].clone()
        ),
        (2, json!(true))
    );
    let found = server
        .call("search_code", json!({"query": "fn", "limit": 1}))
        .unwrap();
    assert_eq!(found["result"].as_array().unwrap().len(), 1);
}

fn cli(root: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_workspace-tools"))
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn the_command_line_lists_calls_and_checks() {
    let fixture = fixture();
    let (code, out, _) = cli(
        &fixture.root,
        &["call", "read_file", r#"{"path": "src/main.rs"}"#],
    );
    assert_eq!(code, 0);
    let result: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        result["output"]["content"],
        "fn main() {\n    println!(\"hi\");\n}\n"
    );
    let (code, out, _) = cli(
        &fixture.root,
        &["call", "read_file", r#"{"path": "../outside/secret.txt"}"#],
    );
    assert_eq!(code, 1);
    assert!(out.contains("uses '..'"));

    let (code, out, _) = cli(&fixture.root, &["list", "--format", "prompt"]);
    assert_eq!(code, 0);
    for tool in [
        "list_dirs",
        "list_files",
        "read_file",
        "search_code",
        "todo_manager",
        "validate_output",
    ] {
        assert!(
            out.contains(&format!("- {tool}: ")),
            "{tool} missing from:\n{out}"
        );
    }
    assert!(out.contains("  e.g. {\"path\":\"README.md\"}"), "{out}");

    let (code, out, findings) = cli(&fixture.root, &["check"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("6 tools, ") && out.contains("0 errors, "),
        "{out}"
    );
    assert!(
        !findings.contains("has no description"),
        "every parameter is documented:\n{findings}"
    );
    // `data` of validate_output is any JSON by nature; strict providers are told so.
    assert!(
        findings.contains("warning: tool `validate_output`: OpenAI strict mode cannot take it"),
        "{findings}"
    );

    let (code, _, err) = cli(Path::new("/definitely/not/here"), &["list"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: --root /definitely/not/here: "),
        "{err}"
    );
}

#[test]
fn large_outputs_become_links_and_files_are_resources() {
    let fixture = fixture();
    let line = "let value = compute_something_long(argument_one, argument_two);\n";
    let big: String = line.repeat(500);
    std::fs::write(fixture.root.join("big.rs"), &big).unwrap();
    let mut server = Server::start(&fixture.root);
    let tools = server.request("tools/list", json!({}));
    let read_file = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .unwrap();
    assert!(
        read_file.get("outputSchema").is_none(),
        "a tool whose output may be a link promises no output type"
    );

    let answer = server.request(
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "big.rs"}}),
    );
    let result = &answer["result"];
    assert!(result.get("isError").is_none(), "{result}");
    assert!(result.get("structuredContent").is_none());
    let preview = result["content"][0]["text"].as_str().unwrap();
    assert!(
        preview.len() < 2048,
        "a short preview: {} bytes",
        preview.len()
    );
    assert!(
        preview.starts_with(r#"{"binary":false,"content":"let value"#),
        "{preview}"
    );
    let link = &result["content"][1];
    assert_eq!(link["type"], "resource_link");
    assert_eq!(link["mimeType"], "application/json");
    let uri = link["uri"].as_str().unwrap();
    assert!(uri.starts_with("tool-output://read_file/"), "{uri}");
    assert!(preview.contains(uri), "the preview says where the rest is");

    let read = server.request("resources/read", json!({"uri": uri}));
    let stored: Value =
        serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(stored["content"], big.as_str(), "the whole output, not cut");
    assert_eq!(
        link["size"],
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .len()
    );
    let guessed = server.request(
        "resources/read",
        json!({"uri": "tool-output://read_file/00000000000000000000000000000000"}),
    );
    assert_eq!(guessed["error"]["code"], -32002);

    // A small answer stays a value.
    let small = server
        .call("read_file", json!({"path": "README.md"}))
        .unwrap();
    assert_eq!(small["content"], "# Demo\nfn main is not here\n");

    let templates = server.request("resources/templates/list", json!({}));
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "workspace:///{+path}"
    );
    let file = server.request("resources/read", json!({"uri": "workspace:///src/main.rs"}));
    assert_eq!(
        file["result"]["contents"][0],
        json!({
            "uri": "workspace:///src/main.rs", "mimeType": "text/plain",
            "text": "fn main() {\n    println!(\"hi\");\n}\n"
        })
    );
    let image = server.request("resources/read", json!({"uri": "workspace:///image.bin"}));
    assert_eq!(
        image["result"]["contents"][0]["mimeType"],
        "application/octet-stream"
    );
    assert!(image["result"]["contents"][0]["blob"].is_string());
    for (uri, expected) in [
        ("workspace:///../outside/secret.txt", "uses '..'"),
        ("workspace:///link_file_out", "leads outside the workspace"),
    ] {
        let escape = server.request("resources/read", json!({"uri": uri}));
        assert!(!escape.to_string().contains("TOPSECRET"), "{escape}");
        assert_eq!(
            escape["error"]["code"], -32602,
            "the client's mistake: {escape}"
        );
        let message = escape["error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{uri}: {message}");
        assert!(
            !message.contains(fixture.root.to_str().unwrap()),
            "never reveals the root: {message}"
        );
    }
}
