use tool_runtime::tool;

/// Get the weather.
#[tool]
fn get_weather(#[arg(optional)] city: String) -> String {
    city
}

fn main() {}
