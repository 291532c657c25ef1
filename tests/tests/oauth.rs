//! The server as an OAuth 2.1 resource server, through the standard command line run as a
//! real binary: protected-resource metadata, 401 challenges, JWT access tokens checked
//! against a JWKS file (signature, issuer, audience, lifetime), scopes per tool (403
//! `insufficient_scope`), lists cut to a token's scopes, sessions bound to their subject,
//! and keys rotated in the file. Keys and tokens are made by the test; no network.

use serde_json::{json, Value};
use std::path::PathBuf;
use tool_runtime::mcp::{McpServer, ServerInfo};
use tool_runtime::transport::http::{router, HttpOptions, Jwks, OAuth};
use tool_runtime::{tool, CallContext, Registry};
use tool_tests::http::{Reply, Request};
use tool_tests::oauth::{claims, jwks, now, SigningKey};
use tool_tests::{messages, names, rpc, spawn_http, ServerProcess, INITIALIZE};

const BINARY: &str = env!("CARGO_BIN_EXE_ops-tools");
const RESOURCE: &str = "https://tools.example.test/mcp";
const ISSUER: &str = "https://auth.example.test";
const METADATA_URL: &str = "https://tools.example.test/.well-known/oauth-protected-resource/mcp";

/// A JWKS file of the test's own, removed when dropped.
struct KeyFile(PathBuf);

impl KeyFile {
    fn new(name: &str, keys: &[&SigningKey]) -> KeyFile {
        let path = std::env::temp_dir().join(format!("{name}-{}.jwks.json", std::process::id()));
        std::fs::write(&path, jwks(keys)).unwrap();
        KeyFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for KeyFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn serve(keys: &KeyFile, extra: &[&str]) -> ServerProcess {
    let mut args = vec![
        "--oauth-resource",
        RESOURCE,
        "--oauth-issuer",
        ISSUER,
        "--oauth-jwks-file",
        keys.path(),
    ];
    args.extend_from_slice(extra);
    spawn_http(BINARY, "127.0.0.1", &args, &[])
}

/// POSTs `body` to `/mcp` with `token` (and `session`, if any).
fn post(port: u16, token: Option<&str>, session: Option<&str>, body: &str) -> Reply {
    let mut request = Request::mcp(body).raw();
    if let Some(token) = token {
        request = request.bearer(token);
    }
    if let Some(session) = session {
        request = request.session(session);
    }
    request.send(port)
}

/// Opens a session with `token`; its id.
fn initialize(port: u16, token: &str) -> String {
    let reply = post(port, Some(token), None, INITIALIZE);
    assert_eq!(reply.status, 200, "{reply:?}");
    reply
        .header("mcp-session-id")
        .expect("a session")
        .to_owned()
}

fn listed_tools(port: u16, token: &str, session: &str) -> Vec<String> {
    let list = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#;
    let reply = post(port, Some(token), Some(session), list);
    assert_eq!(reply.status, 200, "{reply:?}");
    let mut listed = names(&messages(&reply.body)[0], "tools", "name");
    listed.sort();
    listed
}

/// Calls tool `name` in `session` with `token`, which must be answered 200; the answer's
/// structured content.
fn structured_call(port: u16, token: &str, session: &str, name: &str, arguments: Value) -> Value {
    let reply = post(
        port,
        Some(token),
        Some(session),
        &rpc::call(1, name, arguments),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    messages(&reply.body)[0]["result"]["structuredContent"].clone()
}

#[test]
fn a_request_without_a_token_is_told_where_the_metadata_is_and_the_metadata_is_open() {
    let key = SigningKey::ed25519("k1");
    let keys = KeyFile::new("open-metadata", &[&key]);
    let server = serve(&keys, &[]);

    let refused = post(server.port, None, None, INITIALIZE);
    assert_eq!(refused.status, 401, "{refused:?}");
    assert_eq!(
        refused.header("www-authenticate"),
        Some(
            format!(r#"Bearer resource_metadata="{METADATA_URL}", scope="notes:read notes:write""#)
                .as_str()
        ),
        "no error code when no token came (RFC 6750); the scopes every tool requires"
    );

    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let reply = Request::get(path).send(server.port);
        assert_eq!(reply.status, 200, "{path}: {reply:?}");
        let document: Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(document["resource"], RESOURCE);
        assert_eq!(document["authorization_servers"], json!([ISSUER]));
        assert_eq!(
            document["scopes_supported"],
            json!(["notes:read", "notes:write"])
        );
        assert_eq!(document["bearer_methods_supported"], json!(["header"]));
    }
    // Only the metadata is open: every other path needs a token.
    let list = Request::get("/api/tools/discover").send(server.port);
    assert_eq!(list.status, 401, "{list:?}");
}

#[test]
fn tokens_that_do_not_check_out_are_refused_saying_why() {
    let key = SigningKey::ed25519("k1");
    let stranger = SigningKey::ed25519("rogue");
    let impostor = SigningKey::ed25519("k1");
    let keys = KeyFile::new("refusals", &[&key]);
    let server = serve(&keys, &[]);
    let good = claims(ISSUER, RESOURCE, "ada", "notes:read");
    let with = |change: &dyn Fn(&mut Value)| {
        let mut claims = good.clone();
        change(&mut claims);
        key.sign(&claims)
    };
    let shared_secret = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &good,
        &jsonwebtoken::EncodingKey::from_secret(b"anyone who knows this"),
    )
    .unwrap();

    let cases: Vec<(&str, String, &str)> = vec![
        (
            "expired",
            with(&|c| c["exp"] = json!(now() - 3600)),
            "the token has expired",
        ),
        (
            "not yet valid",
            with(&|c| c["nbf"] = json!(now() + 3600)),
            "the token is not valid yet (nbf)",
        ),
        (
            "for another server",
            with(&|c| c["aud"] = json!("https://other.example.test/mcp")),
            "the token was not issued for this server; \
             its audience must include https://tools.example.test/mcp",
        ),
        (
            "from another issuer",
            with(&|c| c["iss"] = json!("https://evil.example.test")),
            "the token was not issued by an authorization server this server trusts",
        ),
        (
            "without expiry",
            with(&|c| {
                c.as_object_mut().unwrap().remove("exp");
            }),
            "the token has no exp claim",
        ),
        (
            "without subject",
            with(&|c| {
                c.as_object_mut().unwrap().remove("sub");
            }),
            "the token names no subject (sub) or client (client_id)",
        ),
        (
            "an unknown key",
            stranger.sign(&good),
            "the token is signed with key rogue, which this server does not know",
        ),
        (
            "a forged signature",
            impostor.sign(&good),
            "the token's signature is not valid",
        ),
        (
            "a shared secret",
            shared_secret,
            "the token is signed with a shared secret (HS256); \
             only tokens signed with the authorization server's public keys are accepted",
        ),
        (
            "not a JWT",
            "not-a-jwt".to_owned(),
            "the token is not a well-formed JWT",
        ),
    ];
    for (case, token, reason) in &cases {
        let reply = post(server.port, Some(token), None, INITIALIZE);
        assert_eq!(reply.status, 401, "{case}: {reply:?}");
        assert_eq!(
            reply.header("www-authenticate"),
            Some(challenge("invalid_token", reason).as_str()),
            "{case}"
        );
        assert_eq!(
            reply.body,
            format!("unauthorized: {reason}"),
            "{case}: the body says why too"
        );
    }
    let basic = Request::mcp(INITIALIZE)
        .header("Authorization", "Basic YWRhOnNlY3JldA==")
        .send(server.port);
    assert_eq!(basic.status, 401);
    let why = "the Authorization header must be Bearer <token>";
    assert_eq!(
        basic.header("www-authenticate"),
        Some(challenge("invalid_request", why).as_str()),
        "not a token at all: the request is at fault (RFC 6750)"
    );
    assert_eq!(basic.body, format!("unauthorized: {why}"), "{basic:?}");
}

/// The challenge of a 401 whose token (or header) did not check out: `error`, why, and
/// where the metadata is, with the scopes every tool requires.
fn challenge(error: &str, why: &str) -> String {
    format!(
        "Bearer error=\"{error}\", error_description=\"{why}\", \
         resource_metadata=\"{METADATA_URL}\", scope=\"notes:read notes:write\""
    )
}

#[test]
fn a_valid_token_calls_and_the_tool_sees_its_subject_and_scopes() {
    let ed = SigningKey::ed25519("k1");
    let ec = SigningKey::p256("k2");
    let keys = KeyFile::new("valid", &[&ed, &ec]);
    let server = serve(&keys, &[]);
    for (key, subject) in [(&ed, "ada"), (&ec, "grace")] {
        let token = key.sign(&claims(ISSUER, RESOURCE, subject, "notes:read profile"));
        let session = initialize(server.port, &token);
        assert_eq!(
            structured_call(server.port, &token, &session, "whoami", json!({})),
            json!({"result": {"subject": subject, "scopes": ["notes:read", "profile"]}})
        );
    }
    // Scopes as a list (`scp`) and a client's own token (`client_id`, no `sub`) count too.
    let mut machine = claims(ISSUER, RESOURCE, "", "");
    let object = machine.as_object_mut().unwrap();
    object.remove("sub");
    object.remove("scope");
    object.insert("client_id".into(), json!("nightly-job"));
    object.insert("scp".into(), json!(["notes:read"]));
    let token = ed.sign(&machine);
    let session = initialize(server.port, &token);
    assert_eq!(
        structured_call(server.port, &token, &session, "whoami", json!({})),
        json!({"result": {"subject": "client:nightly-job", "scopes": ["notes:read"]}})
    );
}

#[test]
fn a_call_the_token_does_not_permit_is_403_naming_every_scope_the_tool_requires() {
    let key = SigningKey::ed25519("k1");
    let keys = KeyFile::new("forbidden", &[&key]);
    let mut server = serve(&keys, &["--log-format", "json"]);
    let reader = key.sign(&claims(ISSUER, RESOURCE, "ada", "notes:read"));
    let session = initialize(server.port, &reader);

    assert_eq!(
        structured_call(server.port, &reader, &session, "read_notes", json!({})),
        json!({"result": "ship on friday"})
    );

    let line = json!({"line": "ship on monday"});
    let write = rpc::call(2, "write_notes", line.clone());
    let refused = post(server.port, Some(&reader), Some(&session), &write);
    assert_eq!(refused.status, 403, "{refused:?}");
    let message = "tool 'write_notes' requires the scopes notes:read notes:write; this client's \
                   access token does not grant them, so the tool was not called. The user must \
                   authorize them first";
    let forbidden = format!(
        "Bearer error=\"insufficient_scope\", scope=\"notes:read notes:write\", \
         resource_metadata=\"{METADATA_URL}\", error_description=\"{message}\""
    );
    assert_eq!(refused.header("www-authenticate"), Some(forbidden.as_str()));
    let error = &messages(&refused.body)[0];
    assert_eq!(error["id"], 2);
    assert_eq!(error["error"]["message"], message);

    // The REST endpoints hold calls to the same scopes.
    let authorization = format!("Bearer {reader}");
    let headers = [
        ("Content-Type", "application/json"),
        ("Authorization", authorization.as_str()),
    ];
    let rest = Request::new("POST", "/api/tools/execute")
        .headers(&headers)
        .body(r#"{"toolName": "write_notes", "parameters": {"line": "x"}}"#)
        .send(server.port);
    assert_eq!(rest.status, 403, "{rest:?}");
    assert_eq!(rest.header("www-authenticate"), Some(forbidden.as_str()));
    let body: Value = serde_json::from_str(&rest.body).unwrap();
    assert_eq!(body["error"], message, "{rest:?}");

    // With the scopes, the call goes through.
    let writer = key.sign(&claims(ISSUER, RESOURCE, "ada", "notes:read notes:write"));
    let session = initialize(server.port, &writer);
    assert_eq!(
        structured_call(server.port, &writer, &session, "write_notes", line),
        json!({"result": 14})
    );

    // Each refusal is in the audit trail as a refused call, whichever way it came.
    let logs = server.stop_and_read_logs();
    let outcomes: Vec<String> = logs
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["target"] == "tool_runtime::audit" && event["tool"] == "write_notes")
        .map(|event| event["outcome"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        outcomes,
        ["insufficient_scope", "insufficient_scope", "ok"],
        "{logs}"
    );
}

#[test]
fn scopes_given_a_mount_on_the_command_line_hold_its_tools_whole_and_one_by_one() {
    let key = SigningKey::ed25519("k1");
    let keys = KeyFile::new("mount-scopes", &[&key]);
    let upstream = format!("up={} serve", env!("CARGO_BIN_EXE_upstream-tools"));
    let mut server = serve(
        &keys,
        &[
            "--mount",
            &upstream,
            "--mount-scopes",
            "up=up:read",
            // Given twice (a flag and a mounts file, say), a scope is one requirement.
            "--mount-scopes",
            "up=up:read",
            "--mount-tool-scopes",
            "up=add=up:write, up:admin",
            // A name the server does not list is warned of, with the one it may have meant.
            "--mount-tool-scopes",
            "up=ad=up:write",
        ],
    );
    let reader = key.sign(&claims(ISSUER, RESOURCE, "ada", "up:read"));
    let session = initialize(server.port, &reader);
    tool_tests::wait_until("the mounted tools are listed", || {
        listed_tools(server.port, &reader, &session).contains(&"up_add".to_owned())
    });
    let call = |token: &str, session: &str, name: &str, arguments: Value| {
        post(
            server.port,
            Some(token),
            Some(session),
            &rpc::call(1, name, arguments),
        )
    };
    // The answer among the messages of a call's stream (the tool's log messages come first).
    let answer = |reply: &Reply| {
        messages(&reply.body)
            .into_iter()
            .find(|message| message["id"] == 1)
            .unwrap_or_else(|| panic!("an answer: {reply:?}"))
    };
    let sum = json!({"a": 40, "b": 2});

    // The mount's scope lets a reader call the tools that ask for no more.
    let answered = call(&reader, &session, "up_chatty", json!({}));
    assert_eq!(answered.status, 200, "{answered:?}");
    assert_eq!(answer(&answered)["result"]["content"][0]["text"], "done");
    // `add` asks for its own scopes beyond the mount's, named with them in the refusal.
    let refused = call(&reader, &session, "up_add", sum.clone());
    assert_eq!(refused.status, 403, "{refused:?}");
    let message = "tool 'up_add' requires the scopes up:read up:write up:admin; this client's \
                   access token does not grant them, so the tool was not called. The user must \
                   authorize them first";
    assert_eq!(answer(&refused)["error"]["message"], message);

    let writer = key.sign(&claims(
        ISSUER,
        RESOURCE,
        "ada",
        "up:read up:write up:admin",
    ));
    let session = initialize(server.port, &writer);
    let answered = call(&writer, &session, "up_add", sum);
    assert_eq!(answered.status, 200, "{answered:?}");
    assert_eq!(answer(&answered)["result"]["content"][0]["text"], "42");

    // Without the mount's scope, none of its tools is called.
    let stranger = key.sign(&claims(ISSUER, RESOURCE, "eve", "notes:read"));
    let session = initialize(server.port, &stranger);
    let refused = call(&stranger, &session, "up_chatty", json!({}));
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(
        answer(&refused)["error"]["message"],
        "tool 'up_chatty' requires the scope up:read; this client's access token does not \
         grant it, so the tool was not called. The user must authorize it first"
    );

    let logs = server.stop_and_read_logs();
    let warning = "the mount's scopes or approval name the tool `ad`, which its server does not \
                   list (did you mean `add`?)";
    assert_eq!(logs.matches(warning).count(), 1, "{logs}");
}

#[test]
fn a_broader_scope_grants_the_narrower_ones_it_implies() {
    let key = SigningKey::ed25519("k1");
    let keys = KeyFile::new("implied", &[&key]);
    let server = serve(
        &keys,
        &[
            "--oauth-scope-implies",
            "notes:admin=notes:write,notes:read",
        ],
    );
    let admin = key.sign(&claims(ISSUER, RESOURCE, "ada", "notes:admin"));
    let session = initialize(server.port, &admin);
    assert_eq!(
        structured_call(
            server.port,
            &admin,
            &session,
            "write_notes",
            json!({"line": "ok"})
        ),
        json!({"result": 2})
    );
}

#[test]
fn lists_show_every_tool_unless_told_to_show_only_what_the_token_permits() {
    let key = SigningKey::ed25519("k1");
    let keys = KeyFile::new("lists", &[&key]);
    let reader = key.sign(&claims(ISSUER, RESOURCE, "ada", "notes:read"));
    let everything = [
        "echo",
        "hold",
        "motd",
        "read_notes",
        "wait",
        "whoami",
        "write_notes",
    ];

    let open = serve(&keys, &[]);
    let session = initialize(open.port, &reader);
    assert_eq!(listed_tools(open.port, &reader, &session), everything);

    let cut = serve(&keys, &["--list-permitted-tools"]);
    let session = initialize(cut.port, &reader);
    assert_eq!(
        listed_tools(cut.port, &reader, &session),
        ["echo", "hold", "motd", "read_notes", "wait", "whoami"]
    );
    let writer = key.sign(&claims(ISSUER, RESOURCE, "bob", "notes:read notes:write"));
    let session = initialize(cut.port, &writer);
    assert_eq!(listed_tools(cut.port, &writer, &session), everything);

    // At 2026-07-28 a list cut to one token is marked private: no cache may share it.
    let stateless = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let permitted = ["echo", "hold", "motd", "read_notes", "wait", "whoami"];
    let every = [
        "echo",
        "hold",
        "motd",
        "read_notes",
        "wait",
        "whoami",
        "write_notes",
    ];
    for (port, scope, listed) in [
        (cut.port, "private", &permitted[..]),
        (open.port, "public", &every[..]),
    ] {
        let reply = Request::mcp(&stateless).bearer(&reader).send(port);
        let answer = &messages(&reply.body)[0];
        assert_eq!(answer["result"]["cacheScope"], scope, "{reply:?}");
        let mut names = names(answer, "tools", "name");
        names.sort();
        assert_eq!(names, listed, "{reply:?}");
    }

    let discover = Request::get("/api/tools/discover")
        .bearer(&reader)
        .send(cut.port);
    let listed: Value = serde_json::from_str(&discover.body).unwrap();
    let mut listed = tool_tests::fields(&listed["tools"], "name");
    listed.sort();
    assert_eq!(
        listed,
        ["echo", "hold", "motd", "read_notes", "wait", "whoami"]
    );
}

#[test]
fn a_session_belongs_to_the_subject_that_opened_it() {
    let key = SigningKey::ed25519("k1");
    let keys = KeyFile::new("sessions", &[&key]);
    let server = serve(&keys, &[]);
    let ada = key.sign(&claims(ISSUER, RESOURCE, "ada", "notes:read"));
    let eve = key.sign(&claims(ISSUER, RESOURCE, "eve", "notes:read"));
    let session = initialize(server.port, &ada);
    let call = rpc::call(1, "read_notes", json!({}));
    assert_eq!(
        post(server.port, Some(&ada), Some(&session), &call).status,
        200
    );
    let stolen = post(server.port, Some(&eve), Some(&session), &call);
    assert_eq!(
        stolen.status, 404,
        "another subject cannot use the session: {stolen:?}"
    );
    // Nor listen on it, nor end it.
    let as_eve = format!("Bearer {eve}");
    let eve_headers = [
        ("Authorization", as_eve.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Accept", "text/event-stream"),
    ];
    for method in ["GET", "DELETE"] {
        let reply = Request::new(method, "/mcp")
            .headers(&eve_headers)
            .send(server.port);
        assert_eq!(reply.status, 404, "{method}: {reply:?}");
    }
    assert_eq!(
        post(server.port, Some(&ada), Some(&session), &call).status,
        200,
        "the session is still its owner's"
    );
}

#[test]
fn keys_rotated_into_the_file_are_read_when_a_token_names_one() {
    let old = SigningKey::ed25519("2026-10");
    let new = SigningKey::p256("2026-11");
    let keys = KeyFile::new("rotation", &[&old]);
    let server = serve(&keys, &[]);
    let token = new.sign(&claims(ISSUER, RESOURCE, "ada", "notes:read"));
    std::fs::write(&keys.0, jwks(&[&old, &new])).unwrap();
    let reply = post(server.port, Some(&token), None, INITIALIZE);
    assert_eq!(
        reply.status, 200,
        "the new key is read from the file: {reply:?}"
    );
    let old_token = old.sign(&claims(ISSUER, RESOURCE, "ada", "notes:read"));
    assert_eq!(
        post(server.port, Some(&old_token), None, INITIALIZE).status,
        200
    );
}

/// Who is calling: the subject the server knows.
#[tool]
fn subject(context: CallContext) -> Option<String> {
    context.caller().subject().map(str::to_owned)
}

/// A 2026-07-28 call of `subject` over `app` with `token`: the status and the answer.
async fn call_subject(app: &axum::Router, token: &str) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "subject", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let reply = Request::mcp(body.to_string())
        .bearer(token)
        .send_to(app)
        .await;
    (
        reply.status,
        serde_json::from_str(&reply.body).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn with_two_authorization_servers_each_key_checks_only_its_issuer_and_subjects_name_it() {
    let (a, b) = (SigningKey::ed25519("a-1"), SigningKey::ed25519("b-1"));
    let (issuer_a, issuer_b) = ("https://a.example.test", "https://b.example.test");
    let oauth = OAuth::new(RESOURCE, issuer_a, Jwks::from_json(&jwks(&[&a])).unwrap())
        .unwrap()
        .authorization_server(issuer_b, Jwks::from_json(&jwks(&[&b])).unwrap())
        .unwrap();
    let server = McpServer::new(Registry::new().unwrap(), ServerInfo::new("two", "1"));
    let app = router(server, HttpOptions::default().oauth(oauth));

    let (status, answer) =
        call_subject(&app, &b.sign(&claims(issuer_b, RESOURCE, "bob", ""))).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"], "https://b.example.test#bob",
        "a subject is qualified by its issuer when several are trusted"
    );
    // A's key cannot speak for B's users.
    let forged = a.sign(&claims(issuer_b, RESOURCE, "bob", ""));
    assert_eq!(call_subject(&app, &forged).await.0, 401);
    // A client's own token (no sub) is told apart from a user with the client's name.
    let mut machine = claims(issuer_a, RESOURCE, "", "");
    machine.as_object_mut().unwrap().remove("sub");
    machine["client_id"] = json!("bob");
    let (_, answer) = call_subject(&app, &a.sign(&machine)).await;
    assert_eq!(
        answer["result"]["structuredContent"],
        "https://a.example.test#client:bob"
    );

    // A key published without an id checks a token that names one.
    let mut unnamed = SigningKey::ed25519("c-1");
    unnamed.public_jwk.as_object_mut().unwrap().remove("kid");
    let keys = Jwks::from_json(&json!({"keys": [unnamed.public_jwk]}).to_string()).unwrap();
    let oauth = OAuth::new(RESOURCE, issuer_a, keys).unwrap();
    let server = McpServer::new(Registry::new().unwrap(), ServerInfo::new("one", "1"));
    let app = router(server, HttpOptions::default().oauth(oauth));
    let (status, answer) =
        call_subject(&app, &unnamed.sign(&claims(issuer_a, RESOURCE, "cy", ""))).await;
    assert_eq!(
        (status, &answer["result"]["structuredContent"]),
        (200, &json!("cy"))
    );
}

#[test]
fn the_command_line_refuses_oauth_settings_it_cannot_use() {
    let key = SigningKey::ed25519("k1");
    let keys = KeyFile::new("flags", &[&key]);
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = tool_tests::command(BINARY);
        command.arg("serve").args(args);
        for (name, value) in env {
            command.env(name, value);
        }
        let output = command.output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(
        &["--http", "127.0.0.1:0", "--oauth-resource", RESOURCE],
        &[],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--oauth-issuer") && stderr.contains("--oauth-jwks-file"),
        "{stderr}"
    );

    let with = |resource, file| {
        [
            "--http",
            "127.0.0.1:0",
            "--oauth-resource",
            resource,
            "--oauth-issuer",
            ISSUER,
            "--oauth-jwks-file",
            file,
        ]
    };
    let (code, stderr) = run(&with("http://tools.example.test/mcp", keys.path()), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "error: the resource URI `http://tools.example.test/mcp` cannot be used: it must use \
         https (http is accepted only for localhost)\n"
    );

    let (code, stderr) = run(&with(RESOURCE, "/no/such/keys.json"), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("/no/such/keys.json"), "{stderr}");

    let (code, stderr) = run(
        &with(RESOURCE, keys.path()),
        &[("MCP_BEARER_TOKEN", "s3cret")],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "error: both a bearer token and OAuth are configured; choose one (with OAuth, clients \
         present access tokens and the static token would be ignored)\n"
    );

    let (code, stderr) = run(&["--list-permitted-tools"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--oauth-resource"), "{stderr}");
}
