use tool_runtime::tool;

/// Get the weather.
///
/// Example: {"city": "Lima", "country": "Peru"}
#[tool]
fn get_weather(city: String) -> String {
    city
}

fn main() {}
