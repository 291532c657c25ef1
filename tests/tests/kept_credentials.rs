//! OAuth credentials kept between runs: a client that signed in once (authorization code
//! with PKCE, through an authorization server of the test's own and a server of ours as the
//! protected resource) and was started again with the same file neither registers again
//! nor asks the person again; a token that ran out meanwhile is refreshed, not asked for.
//! The command line uses the same: `call --server-oauth` has a person sign in at the page
//! it shows (a browser stand-in opens it and follows the redirect) and uses what the
//! sign-in kept, and mounts authorized with a service's own client credentials.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use serde_json::{json, Value};
use sha2::Digest;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tool_runtime::client::auth::{Authorizer, OAuth};
use tool_runtime::client::{Answer, Client};
use tool_runtime::mcp::{McpServer, ServerInfo};
use tool_runtime::transport::http::{router, HttpOptions, Jwks};
use tool_runtime::{tool, Registry};
use tool_tests::oauth::{claims, jwks, SigningKey};

/// Say who the caller is.
#[tool]
fn whoami(ctx: tool_runtime::CallContext) -> String {
    ctx.caller().subject().unwrap_or("nobody").to_owned()
}

/// What the authorization server did, counted.
#[derive(Default, Debug, Clone, PartialEq)]
struct Counts {
    registrations: usize,
    consents: usize,
    codes_redeemed: usize,
    refreshes: usize,
    client_grants: usize,
}

/// An authorization server in miniature: metadata, registration, and a token endpoint that
/// redeems codes (their PKCE verifier checked) and refresh tokens.
struct AuthServer {
    issuer: String,
    resource: String,
    key: SigningKey,
    counts: Mutex<Counts>,
    /// The code challenge of each code handed out.
    codes: Mutex<HashMap<String, String>>,
    /// The redirect URIs each client registered.
    redirects: Mutex<HashMap<String, Vec<String>>>,
}

impl AuthServer {
    /// A token for `resource` (the one a token request names, RFC 8707), else for the
    /// server's own resource.
    fn token(&self, refresh: usize, resource: Option<&String>) -> Value {
        let audience = resource.unwrap_or(&self.resource);
        json!({
            "access_token": self.key.sign(&claims(&self.issuer, audience, "ada", "")),
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": format!("refresh-{refresh}"),
        })
    }
}

async fn metadata(State(server): State<Arc<AuthServer>>) -> Json<Value> {
    let issuer = &server.issuer;
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
    }))
}

async fn register(State(server): State<Arc<AuthServer>>, Json(asked): Json<Value>) -> Json<Value> {
    let mut counts = server.counts.lock().unwrap();
    counts.registrations += 1;
    let client_id = format!("client-{}", counts.registrations);
    let redirects = asked["redirect_uris"].as_array().into_iter().flatten();
    let redirects = redirects.filter_map(|uri| uri.as_str().map(str::to_owned));
    server
        .redirects
        .lock()
        .unwrap()
        .insert(client_id.clone(), redirects.collect());
    Json(json!({
        "client_id": client_id,
        "token_endpoint_auth_method": "none",
        "redirect_uris": asked["redirect_uris"],
    }))
}

/// A form's fields; the values this test's client sends need no decoding but `%XX`.
fn form_fields(body: &str) -> HashMap<String, String> {
    let decode = |text: &str| {
        let bytes = text.replace('+', " ").into_bytes();
        let mut out = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let hex = bytes
                .get(at + 1..at + 3)
                .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
            match (bytes[at], hex) {
                (b'%', Some(byte)) => {
                    out.push(byte);
                    at += 3;
                }
                (byte, _) => {
                    out.push(byte);
                    at += 1;
                }
            }
        }
        String::from_utf8(out).unwrap()
    };
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, value)| (decode(name), decode(value)))
        .collect()
}

/// The service's own client, which authorizes with its secret (client credentials).
const SERVICE: (&str, &str) = ("reporting", "reporting-secret");

async fn token(
    State(server): State<Arc<AuthServer>>,
    headers: axum::http::HeaderMap,
    body: String,
) -> Response {
    let form = form_fields(&body);
    let refused = || {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant"})),
        )
    };
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let code = form.get("code").cloned().unwrap_or_default();
            let Some(challenge) = server.codes.lock().unwrap().remove(&code) else {
                return refused().into_response();
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let digest = sha2::Sha256::digest(verifier.as_bytes());
            if base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest) != challenge {
                return refused().into_response();
            }
            let mut counts = server.counts.lock().unwrap();
            counts.codes_redeemed += 1;
            Json(server.token(0, form.get("resource"))).into_response()
        }
        Some("refresh_token")
            if form
                .get("refresh_token")
                .is_some_and(|t| t.starts_with("refresh-")) =>
        {
            let mut counts = server.counts.lock().unwrap();
            counts.refreshes += 1;
            Json(server.token(counts.refreshes, form.get("resource"))).into_response()
        }
        Some("client_credentials") => {
            let basic = base64::engine::general_purpose::STANDARD
                .encode(format!("{}:{}", SERVICE.0, SERVICE.1));
            let sent = headers
                .get("authorization")
                .and_then(|value| value.to_str().ok());
            if sent != Some(format!("Basic {basic}").as_str()) {
                let error = json!({"error": "invalid_client"});
                return (StatusCode::UNAUTHORIZED, Json(error)).into_response();
            }
            server.counts.lock().unwrap().client_grants += 1;
            let claims = claims(&server.issuer, &server.resource, SERVICE.0, "");
            let token = json!({"access_token": server.key.sign(&claims),
                "token_type": "Bearer", "expires_in": 3600});
            Json(token).into_response()
        }
        _ => refused().into_response(),
    }
}

/// The person, who consents at once: the redirect comes back with a code for the request's
/// PKCE challenge, its state and the issuer. Like a loopback receiver, each run listens on
/// a port of its own (the second field).
struct Person(Arc<AuthServer>, u16);

impl Person {
    fn redirect(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.1)
    }
}

impl Authorizer for Person {
    fn redirect_uri(&self) -> Answer<'_, String> {
        Box::pin(async { Ok(self.redirect()) })
    }

    fn authorize<'a>(&'a self, url: &'a str) -> Answer<'a, String> {
        Box::pin(async move {
            let query = url.split_once('?').map(|(_, query)| query);
            Ok(consent(
                &self.0,
                &form_fields(query.unwrap_or_default()),
                &self.redirect(),
            ))
        })
    }
}

/// The person's consent to the authorization request of `query`: a code for its PKCE
/// challenge, counted; where they are sent back (`redirect`), with it, the request's state
/// and the issuer.
fn consent(server: &AuthServer, query: &HashMap<String, String>, redirect: &str) -> String {
    let consent = {
        let mut counts = server.counts.lock().unwrap();
        counts.consents += 1;
        counts.consents
    };
    let code = format!("code-{consent}");
    let field = |name: &str| query.get(name).cloned().unwrap_or_default();
    server
        .codes
        .lock()
        .unwrap()
        .insert(code.clone(), field("code_challenge"));
    let state = field("state");
    format!("{redirect}?code={code}&state={state}&iss={}", server.issuer)
}

/// The authorization page, for a person at a browser who consents at once: sent back
/// where the request says.
async fn authorize(
    State(server): State<Arc<AuthServer>>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let query = form_fields(&query.unwrap_or_default());
    let field = |name: &str| query.get(name).cloned().unwrap_or_default();
    let (client_id, redirect) = (field("client_id"), field("redirect_uri"));
    // As an authorization server must: a person is sent back only where the client
    // registered to have them sent.
    let registered = server.redirects.lock().unwrap().get(&client_id).cloned();
    if !registered.is_some_and(|uris| uris.contains(&redirect)) {
        let refusal = format!("{redirect} is not registered for client {client_id:?}");
        return (StatusCode::BAD_REQUEST, refusal).into_response();
    }
    let back = consent(&server, &query, &redirect);
    (StatusCode::FOUND, [("location", back)]).into_response()
}

/// Our server as the protected resource, and the authorization server beside it.
async fn servers() -> (Arc<AuthServer>, String) {
    let auth_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mcp_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", auth_listener.local_addr().unwrap());
    let endpoint = format!("http://{}/mcp", mcp_listener.local_addr().unwrap());
    let auth = Arc::new(AuthServer {
        issuer: issuer.clone(),
        resource: endpoint.clone(),
        key: SigningKey::ed25519("kept-1"),
        counts: Mutex::default(),
        codes: Mutex::default(),
        redirects: Mutex::default(),
    });
    let app = Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/authorize", get(authorize))
        .route("/register", post(register))
        .route("/token", post(token))
        .with_state(Arc::clone(&auth));
    tokio::spawn(async move { axum::serve(auth_listener, app).await });
    protected(&auth, mcp_listener);
    (auth, endpoint)
}

/// A server of ours on `listener`, taking the tokens `auth` signs for its endpoint alone.
fn protected(auth: &AuthServer, listener: tokio::net::TcpListener) {
    let address = listener.local_addr().unwrap();
    let endpoint = format!("http://{address}/mcp");
    let keys = Jwks::from_json(&jwks(&[&auth.key])).unwrap();
    let oauth = tool_runtime::transport::http::OAuth::new(&endpoint, &auth.issuer, keys).unwrap();
    let registry = Registry::builder().build().unwrap();
    let server = McpServer::new(registry, ServerInfo::new("protected", "1"));
    let options = HttpOptions::for_address(address).oauth(oauth);
    let app = router(server, options);
    tokio::spawn(async move { axum::serve(listener, app).await });
}

/// A run of the program: a client with OAuth kept in `file` (a person signs in, their
/// loopback receiver on `port`), calling `whoami`.
async fn run(auth: &Arc<AuthServer>, endpoint: &str, file: &std::path::Path, port: u16) -> String {
    let oauth = OAuth::builder()
        .authorization_code(Person(Arc::clone(auth), port))
        .keep_in(file)
        .build();
    called_with(oauth, endpoint).await
}

/// `whoami` called at `endpoint` with `oauth`, as shown.
async fn called_with(oauth: OAuth, endpoint: &str) -> String {
    let client = Client::builder()
        .credentials(oauth)
        .connect(endpoint)
        .await
        .unwrap();
    let called = client.call_tool("whoami", json!({})).await.unwrap();
    client.close().await;
    format!("{called:?}")
}

/// Where a test keeps credentials: `oauth.json` in a directory of its own, removed when
/// the test ends (passed or not).
struct KeptDir(std::path::PathBuf);

impl KeptDir {
    /// A new, empty directory named after `test` (the file in it not there yet).
    fn new(test: &str) -> KeptDir {
        let dir = std::env::temp_dir().join(format!("kept-{test}-{}", std::process::id()));
        KeptDir(dir)
    }

    fn file(&self) -> std::path::PathBuf {
        self.0.join("oauth.json")
    }
}

impl Drop for KeptDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn counts(auth: &AuthServer) -> Counts {
    auth.counts.lock().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_started_again_uses_the_kept_token_and_refreshes_it_once_it_ran_out() {
    let (auth, endpoint) = servers().await;
    let dir = KeptDir::new("credentials");
    let file = dir.file();

    let first = run(&auth, &endpoint, &file, 40001).await;
    assert!(first.contains("ada"), "{first}");
    let once = Counts {
        registrations: 1,
        consents: 1,
        codes_redeemed: 1,
        ..Counts::default()
    };
    assert_eq!(
        counts(&auth),
        once,
        "the first run registers and asks the person"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(
            mode & 0o777,
            0o600,
            "the kept credentials are the owner's alone"
        );
    }

    let second = run(&auth, &endpoint, &file, 40002).await;
    assert!(second.contains("ada"), "{second}");
    assert_eq!(
        counts(&auth),
        once,
        "started again, the client asks nobody anything"
    );

    // The kept token runs out: the next run refreshes it rather than asking the person.
    let mut kept: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    kept["tokens"][&endpoint]["expires_at"] = json!(1);
    std::fs::write(&file, kept.to_string()).unwrap();
    let third = run(&auth, &endpoint, &file, 40003).await;
    assert!(third.contains("ada"), "{third}");
    assert_eq!(
        counts(&auth),
        Counts {
            refreshes: 1,
            ..once
        }
    );
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        kept["tokens"][&endpoint]["refresh_token"], "refresh-1",
        "the new token is kept"
    );

    // A server whose token is not kept: the registration is (the receiver listens on
    // another port this run, which a loopback registration allows), the person is asked
    // again.
    let mut kept = kept;
    kept["tokens"] = json!({});
    std::fs::write(&file, kept.to_string()).unwrap();
    let fourth = run(&auth, &endpoint, &file, 40004).await;
    assert!(fourth.contains("ada"), "{fourth}");
    let asked_again = Counts {
        consents: 2,
        codes_redeemed: 2,
        refreshes: 1,
        ..once
    };
    assert_eq!(counts(&auth), asked_again, "registered once, for every run");

    // Configured now as a service of its own: the person's kept token is not its to use.
    let service = OAuth::builder()
        .client_id(SERVICE.0)
        .client_secret(SERVICE.1)
        .client_credentials()
        .keep_in(&file)
        .build();
    let fifth = called_with(service, &endpoint).await;
    assert!(
        fifth.contains(SERVICE.0),
        "the service's own token: {fifth}"
    );
    assert_eq!(
        counts(&auth),
        Counts {
            client_grants: 1,
            ..asked_again
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_oauth_for_two_servers_sends_each_only_its_own_token() {
    let (auth, first) = servers().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let second = format!("http://{}/mcp", listener.local_addr().unwrap());
    protected(&auth, listener);
    let oauth = OAuth::builder()
        .authorization_code(Person(Arc::clone(&auth), 40010))
        .build();
    let connect = |endpoint: String| {
        let oauth = oauth.clone();
        async move {
            Client::builder()
                .credentials(oauth)
                .connect(&endpoint)
                .await
                .unwrap()
        }
    };
    let (one, two) = (connect(first).await, connect(second).await);
    let signed_in = counts(&auth);
    assert_eq!(signed_in.consents, 2, "one sign-in for each server");
    // Each server takes only a token for itself: a token sent to the other would be
    // refused, and had anew, at each turn.
    for _ in 0..3 {
        for client in [&one, &two] {
            let called = client.call_tool("whoami", json!({})).await.unwrap();
            assert!(format!("{called:?}").contains("ada"), "{called:?}");
        }
    }
    assert_eq!(counts(&auth), signed_in, "no token was had again");
    one.close().await;
    two.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_file_that_cannot_be_read_fails_the_connection_naming_it() {
    let (auth, endpoint) = servers().await;
    let dir = KeptDir::new("broken");
    std::fs::create_dir_all(&dir.0).unwrap();
    let file = dir.file();
    std::fs::write(&file, "{ not json").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let oauth = OAuth::builder()
        .authorization_code(Person(Arc::clone(&auth), 40020))
        .keep_in(&file)
        .build();
    let error = Client::builder()
        .credentials(oauth)
        .connect(&endpoint)
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains(&file.display().to_string()), "{error}");
    assert!(error.contains("remove the file"), "{error}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{ not json",
        "not written over"
    );
    assert_eq!(counts(&auth).consents, 0);
}

const BINARY: &str = env!("CARGO_BIN_EXE_travel-tools");

/// Runs the command line with `args` and `env`, `stdin` on its input, off the runtime (the
/// servers it talks to run on it).
async fn command_line(args: &[&str], env: &[(&str, &str)], stdin: &str) -> std::process::Output {
    let mut command = tool_tests::command(BINARY);
    command.args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || tool_tests::stdio::run(&mut command, &stdin))
        .await
        .unwrap()
}

/// The command line's arguments that call `whoami` at `endpoint`, authorized by OAuth.
fn call_whoami(endpoint: &str) -> Vec<String> {
    [
        "call",
        "--server",
        endpoint,
        "--server-oauth",
        "whoami",
        "{}",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Fails the test unless the command line ended well and printed `whoami`'s answer for the
/// person who signed in.
fn answered_ada(output: &std::process::Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["output"], "ada", "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_server_oauth_uses_what_a_sign_in_kept_without_asking_again() {
    let (auth, endpoint) = servers().await;
    let dir = KeptDir::new("cli");
    let file = dir.file();
    run(&auth, &endpoint, &file, 40001).await;
    assert_eq!(counts(&auth).consents, 1);

    let kept = file.to_str().unwrap();
    let args = call_whoami(&endpoint);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = command_line(&args, &[("MCP_OAUTH_CREDENTIALS_FILE", kept)], "").await;
    answered_ada(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        counts(&auth).consents,
        1,
        "no sign-in: the kept token was used"
    );
    assert!(!stderr.contains("Open this page"), "{stderr}");
}

/// A process of the test's, killed and waited for when dropped (also when the test fails).
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The command line run with `args` and `env`, a person at a browser beside it: when it
/// shows the page to authorize at, the person opens it, consents, and is sent back to the
/// command line's loopback receiver. What it wrote, once it ended, and whether the person
/// was asked. Every wait is bounded by `PATIENCE`.
fn signed_in_at_a_browser(args: &[&str], env: &[(&str, &str)]) -> (std::process::Output, bool) {
    use std::io::{BufRead, Read};
    use std::process::Stdio;
    use std::sync::mpsc::RecvTimeoutError;
    use tool_tests::http::Request;
    let mut command = tool_tests::command(BINARY);
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = Running(command.spawn().expect("the command line runs"));
    let mut stdout = child.0.stdout.take().expect("stdout is piped");
    let stdout = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let (lines, shown) = std::sync::mpsc::channel();
    let stderr = std::io::BufReader::new(child.0.stderr.take().expect("stderr is piped"));
    let stderr = std::thread::spawn(move || {
        let mut written = String::new();
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines.send(line.clone());
            written.push_str(&line);
            written.push('\n');
        }
        written
    });
    // The person reads what the command line shows until it ends, or shows the page (on
    // the line after it says to open it).
    let deadline = std::time::Instant::now() + *tool_tests::PATIENCE;
    let mut told_to_open = false;
    let page = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match shown.recv_timeout(left) {
            Ok(line) if told_to_open => break Some(line.trim().to_owned()),
            Ok(line) => told_to_open = line.contains("Open this page to authorize the client:"),
            Err(RecvTimeoutError::Disconnected) => break None,
            Err(RecvTimeoutError::Timeout) => {
                panic!("the command line neither showed a page nor ended in time")
            }
        }
    };
    let asked = page.is_some();
    if let Some(page) = page {
        let page = page
            .strip_prefix("http://")
            .expect("a page at the test's server");
        let (authority, path) = page.split_once('/').expect("a page on a server");
        let port = |authority: &str| authority.rsplit_once(':').unwrap().1.parse().unwrap();
        let consented = Request::get(&format!("/{path}")).send(port(authority));
        assert_eq!(
            consented.status, 302,
            "{}\n{}",
            consented.head, consented.body
        );
        let back = consented.header("location").expect("sent back").to_owned();
        let back = back
            .strip_prefix("http://")
            .expect("to a loopback receiver");
        let (authority, path) = back.split_once('/').unwrap();
        assert!(authority.starts_with("127.0.0.1:"), "{back}");
        let received = Request::get(&format!("/{path}")).send(port(authority));
        assert_eq!(received.status, 200, "{}", received.body);
    }
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("the child's status") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            drop(child);
            panic!("the command line did not end: {}", stderr.join().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let output = std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap().into_bytes(),
    };
    (output, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_signs_in_at_the_page_call_shows_once_and_the_next_call_asks_nothing() {
    let (auth, endpoint) = servers().await;
    let dir = KeptDir::new("browser");
    let file = dir.file();
    let kept = file.to_str().unwrap().to_owned();
    let args = call_whoami(&endpoint);
    let twice = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env = [("MCP_OAUTH_CREDENTIALS_FILE", kept.as_str())];
        [(); 2].map(|()| signed_in_at_a_browser(&args, &env))
    });
    let [(first, asked_first), (second, asked_second)] = twice.await.unwrap();
    answered_ada(&first);
    answered_ada(&second);
    assert!(asked_first, "the first call shows the page to sign in at");
    assert!(
        !asked_second,
        "the second asks nothing: {}",
        String::from_utf8_lossy(&second.stderr)
    );
    let expected = Counts {
        registrations: 1,
        consents: 1,
        codes_redeemed: 1,
        ..Counts::default()
    };
    assert_eq!(counts(&auth), expected, "one sign-in served both calls");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_authorized_with_a_services_client_credentials_serves_its_tools() {
    let (auth, endpoint) = servers().await;
    let dir = KeptDir::new("service");
    let file = dir.file();
    let kept = file.to_str().unwrap();
    let mount = format!("up={endpoint}");
    let turn = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "up_whoami", "input": {}}
    ]});
    let args = [
        "answer",
        "--dialect",
        "anthropic",
        "--mount",
        &mount,
        "--mount-oauth",
        "up",
        "--oauth-credentials-file",
        kept,
    ];
    let env = [
        ("MCP_OAUTH_CLIENT_ID", SERVICE.0),
        ("MCP_OAUTH_CLIENT_SECRET", SERVICE.1),
    ];
    let output = command_line(&args, &env, &turn.to_string()).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let messages: Value = serde_json::from_slice(&output.stdout).unwrap();
    let block = &messages[0]["content"][0];
    assert_ne!(block["is_error"], true, "{messages}");
    assert!(block.to_string().contains(SERVICE.0), "{messages}");
    let expected = Counts {
        client_grants: 1,
        ..Counts::default()
    };
    assert_eq!(
        counts(&auth),
        expected,
        "no person, no registration: the service's own client"
    );
    let written = std::fs::read_to_string(&file).unwrap();
    let kept: Value = serde_json::from_str(&written).unwrap();
    assert!(
        kept["tokens"][&endpoint]["access_token"].is_string(),
        "{kept}"
    );
    assert!(
        !written.contains(SERVICE.1),
        "a configured secret is not written down: {kept}"
    );

    // Run again: the kept token is used, with the configured client; no new grant.
    let output = command_line(&args, &env, &turn.to_string()).await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        counts(&auth),
        expected,
        "the kept token served the second run"
    );
}
