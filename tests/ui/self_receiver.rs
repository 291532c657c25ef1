use tool_runtime::tool;

struct Weather;

impl Weather {
    /// Get the weather.
    #[tool]
    fn get(&self, city: String) -> String {
        city
    }
}

fn main() {}
