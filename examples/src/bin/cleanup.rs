//! A tool that asks before it acts and may run long: it looks through a folder, asks the
//! user to confirm, then deletes. A client that can follow tasks gets one while the tool
//! works; the question reaches the user in every protocol version. Run it with
//! `cargo run -p examples --bin cleanup -- serve` (stdio) or `-- serve --http 127.0.0.1:8080`.

use schemars::JsonSchema;
use serde::Deserialize;
use std::process::ExitCode;
use std::time::Duration;
use tool_runtime::ask::{AskError, Elicited, Sampling};
use tool_runtime::{tool, CallContext, Progress};

/// What the user decides.
#[derive(Deserialize, JsonSchema)]
struct Decision {
    /// Delete the files found?
    delete: bool,
    /// Keep a list of what was deleted
    #[serde(default)]
    keep_list: bool,
}

/// Delete old files from the downloads folder, once the user agrees.
#[tool(destructive, task = "optional")]
async fn clean_downloads(
    /// Files older than this many days go.
    older_than_days: u32,
    ctx: CallContext,
    progress: Progress,
) -> Result<String, AskError> {
    // Looking through the folder takes a while: a client that can follow tasks has one by now.
    for step in 1..=4 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        progress.report(
            f64::from(step),
            Some(4.0),
            Some("looking through downloads"),
        );
    }
    let found = 40;
    let question = format!("Delete {found} files older than {older_than_days} days?");
    Ok(match ctx.elicit::<Decision>(question).await? {
        Elicited::Accepted(Decision {
            delete: true,
            keep_list,
        }) => {
            let list = if keep_list {
                ", and kept a list of them"
            } else {
                ""
            };
            format!("Deleted {found} files{list}.")
        }
        Elicited::Accepted(_) | Elicited::Declined => "Kept every file.".to_owned(),
        Elicited::Cancelled => "Nothing done: the question was dismissed.".to_owned(),
    })
}

/// Explain an error message in plain words, with the client's own model.
#[tool(read_only)]
async fn explain_error(
    /// The error message.
    message: String,
    ctx: CallContext,
) -> Result<String, AskError> {
    let asked = Sampling::new(200)
        .system_prompt("You explain error messages to non-programmers in two sentences.")
        .user(message);
    Ok(ctx.sample(asked).await?.text())
}

fn main() -> ExitCode {
    tool_runtime::cli::Cli::new()
        .name("cleanup")
        .version(env!("CARGO_PKG_VERSION"))
        .run()
}
