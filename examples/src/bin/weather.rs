//! A small tool binary: two `#[tool]` functions sharing state, and the standard command
//! line (`weather --help`): `list`, `call`, `check`, `diff`, `serve`.

use serde::{Deserialize, Serialize};
use std::process::ExitCode;
use tool_runtime::{tool, State};

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
    tool_runtime::cli::Cli::new()
        .name("weather")
        .version(env!("CARGO_PKG_VERSION"))
        .state(Stations {
            celsius: vec![("London", 14.0), ("Lima", 19.5), ("Oslo", 6.0)],
        })
        .run()
}
