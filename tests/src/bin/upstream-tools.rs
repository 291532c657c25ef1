//! A server other servers mount and clients call in the tests of the MCP client: a sync
//! tool, a tool with an output schema, one that reports progress and waits to be released
//! or cancelled, one that says whether its progress is followed, ones that ask the client (a form, a page to visit, its model, its roots),
//! one that fails, one that ends the process, one with an argument mirrored in a header,
//! one that logs, one that says its motto
//! changed, a prompt, a resource and a resource template. Started over stdio or HTTP with
//! the standard command line.

use std::time::Duration;
use tool_runtime::ask::{Elicited, Sampling, UrlElicitation};
use tool_runtime::registry::ResourceUpdates;
use tool_runtime::{prompt, resource, tool, CallContext, Logger, Progress, State};

/// Add two integers.
#[tool(read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Add two integers, as a task only: a call must ask for one (or, at 2026-07-28, the
/// server makes it one).
#[tool(task = "required")]
async fn task_add(a: i64, b: i64) -> i64 {
    a + b
}

/// The weather, as structured data.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Weather {
    city: String,
    celsius: f64,
}

/// Get the weather of a city.
#[tool]
fn weather(city: String) -> Weather {
    Weather {
        city,
        celsius: 21.5,
    }
}

/// Report progress in `steps` steps, then wait until `release` exists (a path); a call
/// that ends otherwise (cancelled, its future dropped) writes `cancelled` (a path). It may
/// run as a task.
#[tool(task = "optional")]
async fn work(steps: u32, release: String, cancelled: String, progress: Progress) -> String {
    let unfinished = Unfinished(Some(cancelled));
    for step in 1..=steps {
        progress.report(f64::from(step), Some(f64::from(steps)), Some("working"));
    }
    while !std::path::Path::new(&release).exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    unfinished.finished();
    "released".to_owned()
}

/// Say whether the caller follows this call's progress (whether its request named a
/// progress token to report under).
#[tool(read_only)]
fn followed(progress: Progress) -> bool {
    progress.is_reporting()
}

/// Writes its file when dropped before [`Unfinished::finished`]: the mark of a call
/// stopped midway, whether the tool was told or its future dropped.
struct Unfinished(Option<String>);

impl Unfinished {
    fn finished(mut self) {
        self.0 = None;
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::write(path, b"cancelled");
        }
    }
}

/// Whom to greet.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    /// The name.
    name: String,
}

/// Greet the user, asking their name.
#[tool]
async fn greet(ctx: CallContext) -> Result<String, String> {
    match ctx.elicit::<Name>("What is your name?").await {
        Ok(Elicited::Accepted(Name { name })) => Ok(format!("hello {name}")),
        Ok(_) => Ok("hello stranger".to_owned()),
        Err(error) => Err(error.to_string()),
    }
}

/// Greet the user as a task only, asking their name once `release` exists (a path): the
/// question is asked while the task runs, and progress reported once it is answered.
#[tool(task = "required")]
async fn task_greet(
    release: String,
    progress: Progress,
    ctx: CallContext,
) -> Result<String, String> {
    while !std::path::Path::new(&release).exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let greeting = greet(ctx).await;
    progress.report(1.0, Some(1.0), Some("greeted"));
    greeting
}

/// Send the user to a page to sign in, and say whether they went.
#[tool]
async fn sign_in(ctx: CallContext) -> Result<String, String> {
    let page = UrlElicitation::new("Sign in to Example Co", "https://example.com/sign-in");
    match ctx.elicit_url(page).await {
        Ok(Elicited::Accepted(())) => Ok("signed in".to_owned()),
        Ok(_) => Ok("not signed in".to_owned()),
        Err(error) => Err(error.to_string()),
    }
}

/// Ask the client's model about `topic`, and say what it answered.
#[tool]
async fn ask_model(
    /// What the model is asked about.
    topic: String,
    ctx: CallContext,
) -> Result<String, String> {
    let asked = Sampling::new(50).user(format!("Say one thing about {topic}."));
    match ctx.sample(asked).await {
        Ok(sampled) => Ok(format!("the model says: {}", sampled.text())),
        Err(error) => Err(error.to_string()),
    }
}

/// Name the client's roots.
#[tool]
async fn client_roots(ctx: CallContext) -> Result<String, String> {
    match ctx.roots().await {
        Ok(roots) => {
            let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
            Ok(format!("roots: {}", uris.join(" ")))
        }
        Err(error) => Err(error.to_string()),
    }
}

/// Always fail, for the model to read why.
#[tool]
fn broken() -> Result<String, String> {
    Err("the broken tool failed on purpose".to_owned())
}

/// End the server's process at once, without answering: a server that died mid-call.
#[tool]
fn quit() -> String {
    std::process::exit(3)
}

/// Say where a call is routed. Its region is mirrored in the `Mcp-Param-Region` header,
/// which this server checks against the body over HTTP.
#[tool(read_only)]
fn route(
    /// Where the call goes.
    #[arg(header = "Region")]
    region: String,
) -> String {
    format!("routed to {region}")
}

/// Say that the motto changed: its subscribers are told.
#[tool]
fn touch_motto(updates: State<ResourceUpdates>) -> &'static str {
    updates.updated("upstream://motto");
    "touched"
}

/// Ask for a haiku about `topic`.
#[prompt]
fn haiku(
    /// What the haiku is about.
    #[arg(complete = topics)]
    topic: String,
) -> String {
    format!("Write a haiku about {topic}.")
}

/// The topics a haiku is offered about, for completion.
fn topics(typed: &str) -> Vec<String> {
    ["rain", "rivers", "snow"]
        .into_iter()
        .filter(|topic| topic.starts_with(typed))
        .map(str::to_owned)
        .collect()
}

/// Log what it does, then say it is done.
#[tool]
fn chatty(logger: Logger) -> &'static str {
    logger.named("chatter").info("working on it");
    logger.warning("almost there");
    "done"
}

/// A note, by number.
#[resource("upstream://notes/{id}")]
fn note(
    /// The note's number.
    id: String,
) -> String {
    format!("note {id}")
}

/// The motto of the upstream.
#[resource("upstream://motto")]
fn motto() -> String {
    "mounted, not merged".to_owned()
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::Cli::new()
        .setup(|_, builder| {
            let updates = builder.resource_updates();
            Ok(builder.state(updates))
        })
        .run()
}
