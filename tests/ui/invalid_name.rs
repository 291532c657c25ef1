use tool_runtime::tool;

/// Get the weather.
#[tool(name = "get.weather")]
fn get_weather(city: String) -> String {
    city
}

fn main() {}
