use tool_runtime::tool;

/// Get the weather.
///
/// Example: {"city": "Lima"}
/// Example: {"units": "metric"}
#[tool]
fn get_weather(city: String, units: Option<String>, #[arg(default)] days: u8) -> String {
    format!("{city} {units:?} {days}")
}

fn main() {}
