use tool_runtime::prompt;

fn cities(typed: u32) -> Vec<String> {
    vec![typed.to_string()]
}

/// The weather in a city.
#[prompt]
fn weather(#[arg(complete = cities)] city: String) -> String {
    city
}

fn main() {}
