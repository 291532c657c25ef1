//! A tool binary whose catalog page the browser test opens: the agent and travel fixtures
//! (structured output, text, an image, a tool error, nested objects, enums, lists, maps,
//! a recursive type, an "any value" parameter) and, beside them, what only this page
//! shows: a Markdown description with a link and markup that must stay text, flags, a
//! resource link, progress, a prompt, and a resource and a resource template.

#[path = "../../fixtures/agent.rs"]
mod agent;
#[path = "../../fixtures/travel.rs"]
mod travel;

use std::time::Duration;
use tool_runtime::{prompt, resource, tool, Content, Progress};

/// Format a note for the team board.
///
/// Use `**bold**` for emphasis. The board:
/// - keeps notes for **30 days**,
/// - shows them in [the team's feed](https://example.com/feed).
///
/// <script>document.title = "injected"</script> is shown as text, and
/// [a script link](javascript:alert(1)) stays text too.
#[tool(read_only)]
fn format_note(
    /// The note's text. Markdown is kept as written.
    text: String,
    /// Pin the note to the top of the board.
    pinned: bool,
    /// Notify the team.
    notify: Option<bool>,
) -> String {
    let pin = if pinned { "📌 " } else { "" };
    let bell = if notify == Some(true) { " 🔔" } else { "" };
    format!("{pin}{text}{bell}")
}

/// Find the guide of a city: a link to it as a resource to read.
#[tool(read_only)]
fn find_guide(
    /// The city.
    city: String,
) -> Vec<Content> {
    vec![
        Content::text(format!("The guide of {city} is a resource.")),
        Content::resource_link(format!("guides://{city}"), format!("{city} guide")),
    ]
}

/// Count to a number, reporting each step as progress.
#[tool(read_only)]
async fn count_to(
    /// Where to stop (at most 10).
    to: u8,
    progress: Progress,
) -> u8 {
    let to = to.min(10);
    for step in 1..=to {
        tokio::time::sleep(Duration::from_millis(20)).await;
        progress.report(f64::from(step), Some(f64::from(to)), Some("counting"));
    }
    to
}

/// Suggest a day trip from a city.
#[prompt]
fn day_trip(
    /// Where the trip starts.
    city: String,
    /// What the travellers like, in a few words.
    interests: Option<String>,
) -> String {
    let interests = interests.unwrap_or_else(|| "anything".to_owned());
    format!("Suggest a day trip from {city} for people who like {interests}.")
}

/// What this server is for.
#[resource("page://about", mime_type = "text/markdown")]
fn about() -> String {
    "# About\n\nTools for planning trips.".to_owned()
}

/// The travel guide of a city.
#[resource("guides://{city}", mime_type = "text/plain")]
fn guide(
    /// The city.
    city: String,
) -> String {
    format!("The guide of {city}: walk, eat, rest.")
}

fn main() -> std::process::ExitCode {
    tool_runtime::cli::main()
}
