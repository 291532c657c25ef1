//! The four benchmark tools (and an async twin of `add`), written the way a user would.

use serde::{Deserialize, Serialize};
use tool_runtime::tool;

/// Add two integers.
#[tool(read_only)]
fn add(
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
) -> i64 {
    a + b
}

/// Add two integers, as an async function (it runs on the runtime, with no hand-off).
#[tool(read_only)]
async fn add_async(
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
) -> i64 {
    a + b
}

/// Echo a message.
#[tool(read_only)]
fn echo(
    /// The message.
    message: String,
) -> String {
    message
}

/// Temperature units.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Units {
    #[default]
    Metric,
    Imperial,
}

/// The weather in a city.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Weather {
    city: String,
    temperature: f64,
    units: Units,
    #[serde(skip_serializing_if = "Option::is_none")]
    forecast: Option<Vec<f64>>,
}

/// Get the current weather for a city.
#[tool(read_only)]
fn get_weather(
    /// City name.
    city: String,
    /// Temperature units.
    #[arg(default)]
    units: Units,
    /// Add the five-day forecast.
    #[arg(default = false)]
    include_forecast: bool,
) -> Weather {
    let temperature = match units {
        Units::Metric => 19.5,
        Units::Imperial => 67.1,
    };
    Weather {
        city,
        temperature,
        units,
        forecast: include_forecast.then(|| vec![temperature; 5]),
    }
}

/// Search an index.
#[tool(read_only)]
fn search(
    /// What to look for.
    query: String,
    /// At most this many results (default 3).
    limit: Option<u32>,
    /// Tags to attach.
    tags: Vec<String>,
) -> Vec<String> {
    let tags = tags.join(",");
    (0..limit.unwrap_or(3))
        .map(|i| format!("{query}-{i}{tags}"))
        .collect()
}
