//! A small tool binary: two `#[tool]` functions, their catalog, and calls from the
//! command line.
//!
//! ```text
//! weather list                         print every tool as JSON (name, schemas, examples)
//! weather call NAME '{"arg": ...}'     call a tool; prints seed 004's ToolResult
//! ```

use serde::{Deserialize, Serialize};
use std::process::ExitCode;
use tool_runtime::{tool, Registry, State};

/// Temperature units.
#[derive(Debug, Default, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Units {
    #[default]
    Metric,
    Imperial,
}

/// The weather in one city.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Weather {
    city: String,
    temperature: f64,
    units: Units,
    /// Five daily highs, when asked for.
    forecast: Option<Vec<f64>>,
}

/// The station cache, shared by every call.
struct Stations {
    celsius: Vec<(&'static str, f64)>,
}

/// Get the current weather for a city.
///
/// Data comes from the local station cache; it is at most ten minutes old.
///
/// Example: {"city": "London"}
/// Example: {"city": "Lima", "units": "imperial", "include_forecast": true}
#[tool(read_only)]
async fn get_weather(
    /// City name, as people write it.
    city: String,
    /// Temperature units.
    #[arg(default)]
    units: Units,
    /// Add the five-day forecast.
    #[arg(default = false)]
    include_forecast: bool,
    stations: State<Stations>,
) -> Result<Weather, String> {
    let celsius = stations
        .celsius
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(&city))
        .map(|(_, celsius)| *celsius)
        .ok_or_else(|| format!("no station near {city}; known cities: London, Lima, Oslo"))?;
    let temperature = match units {
        Units::Metric => celsius,
        Units::Imperial => celsius * 9.0 / 5.0 + 32.0,
    };
    Ok(Weather {
        city,
        temperature,
        units,
        forecast: include_forecast
            .then(|| (1..=5).map(|day| temperature + day as f64 * 0.5).collect()),
    })
}

/// List the cities the station cache knows.
#[tool(read_only, idempotent)]
fn list_cities(stations: State<Stations>) -> Vec<&'static str> {
    stations.celsius.iter().map(|(name, _)| *name).collect()
}

fn main() -> ExitCode {
    let registry = match Registry::builder()
        .state(Stations {
            celsius: vec![("London", 14.0), ("Lima", 19.5), ("Oslo", 6.0)],
        })
        .build()
    {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["list"] => {
            let tools: Vec<serde_json::Value> = registry
                .tools()
                .iter()
                .map(|tool| {
                    serde_json::json!({
                        "name": tool.name(),
                        "description": tool.description(),
                        "inputSchema": tool.input_schema(),
                        "outputSchema": tool.output_schema(),
                    })
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&tools).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        ["call", name, rest @ ..] => {
            let input = match rest {
                [] => Ok(serde_json::Value::Null),
                [json] => serde_json::from_str(json),
                _ => {
                    eprintln!("error: give the arguments as one JSON object");
                    return ExitCode::from(2);
                }
            };
            let input = match input {
                Ok(input) => input,
                Err(error) => {
                    eprintln!("error: the arguments are not valid JSON: {error}");
                    return ExitCode::from(2);
                }
            };
            let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
            let result = runtime.block_on(registry.call(name, input));
            println!(
                "{}",
                serde_json::to_string_pretty(&result).unwrap_or_default()
            );
            if result.is_error() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        _ => {
            eprintln!("usage: weather list | weather call NAME ['{{\"arg\": ...}}']");
            ExitCode::from(2)
        }
    }
}
