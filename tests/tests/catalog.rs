//! The static catalog: registration from any module and crate, descriptions, parameter
//! docs, examples, annotations and the canonical schema.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tool_runtime::catalog::{Catalog, ToolExample};
use tool_runtime::tool;

// Link the second crate so its tools are in this binary.
use extra_tools as _;

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, Default, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    #[default]
    Metric,
    Imperial,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Weather {
    city: String,
    temperature: f64,
    forecast: Option<Vec<f64>>,
}

#[derive(Debug)]
pub struct WeatherError;

impl std::fmt::Display for WeatherError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no station near that city")
    }
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
) -> Result<Weather, WeatherError> {
    if city == "Atlantis" {
        return Err(WeatherError);
    }
    let temperature = if units == Units::Metric { 18.0 } else { 64.4 };
    Ok(Weather {
        city,
        temperature,
        forecast: include_forecast.then(|| vec![temperature; 5]),
    })
}

mod deeply {
    pub mod nested {
        use tool_runtime::tool;

        /**
         * Ping the server.
         *
         * Answers `pong`.
         */
        #[tool(name = "ping", title = "Ping", idempotent, open_world = false)]
        pub fn ping_tool() -> &'static str {
            "pong"
        }
    }
}

#[doc = concat!("Search the ", "index.")]
///
/// # Arguments
///
/// * `query` - What to look for,
///   matched literally.
/// * `limit` - At most this many hits.
///
/// # Errors
///
/// Fails when the index is cold.
///
/// Ejemplo: {"query": "auth"}
/// Example: search for everything about login
#[tool(destructive = false)]
fn search(
    query: String,
    limit: Option<u32>,
    #[arg(rename = "caseSensitive", default)] case_sensitive: bool,
) -> Vec<String> {
    let _ = (limit, case_sensitive);
    vec![query]
}

#[tool(description = "Say hello.\n\nA friendly tool.")]
fn hello() {}

fn catalog() -> &'static Catalog {
    Catalog::global().expect("the catalog builds")
}

#[test]
fn tools_from_every_module_and_crate_are_found_sorted() {
    let names: Vec<&str> = catalog().tools().iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "get_weather",
            "hello",
            "ping",
            "reverse",
            "search",
            "word_count"
        ]
    );
    let reverse = catalog().get("reverse").unwrap();
    assert!(reverse
        .location()
        .unwrap()
        .file
        .ends_with("extra-tools/src/lib.rs"));
    assert_eq!(
        catalog()
            .get("word_count")
            .unwrap()
            .location()
            .unwrap()
            .module_path,
        "extra_tools::nested"
    );
}

#[test]
fn the_weather_tool_has_the_canonical_schema() {
    let tool = catalog().get("get_weather").unwrap();
    assert_eq!(
        tool.input_schema(),
        &json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, as people write it."},
                "units": {"$ref": "#/$defs/Units", "description": "Temperature units.",
                          "default": "metric"},
                "include_forecast": {"type": "boolean", "description": "Add the five-day forecast.",
                                     "default": false}
            },
            "required": ["city"],
            "additionalProperties": false,
            "$defs": {"Units": {"type": "string", "enum": ["metric", "imperial"]}}
        })
    );
    assert_eq!(tool.summary(), "Get the current weather for a city.");
    assert_eq!(
        tool.description(),
        "Get the current weather for a city.\n\n\
         Data comes from the local station cache; it is at most ten minutes old."
    );
    assert_eq!(
        tool.examples(),
        &[
            ToolExample::Arguments(json!({"city": "London"})),
            ToolExample::Arguments(
                json!({"city": "Lima", "units": "imperial", "include_forecast": true})
            ),
        ]
    );
    assert_eq!(tool.annotations().read_only, Some(true));
    assert_eq!(tool.annotations().destructive, None);
}

#[test]
fn output_schemas_come_from_the_ok_type_and_say_when_the_handshake_era_wraps_them() {
    let weather = catalog().get("get_weather").unwrap();
    let output = weather.output_schema().expect("Weather describes itself");
    assert_eq!(output["type"], "object");
    // Serialized, an `Option` field is always present (as `null` when empty).
    assert_eq!(
        output["required"],
        json!(["city", "temperature", "forecast"])
    );
    assert!(!weather.wraps_output());

    // The schema of the value itself; a list is not an object, so MCP's handshake era
    // carries it as {"result": [...]}.
    let search = catalog().get("search").unwrap();
    assert_eq!(
        search.output_schema().unwrap(),
        &json!({"type": "array", "items": {"type": "string"}})
    );
    assert!(search.wraps_output());
    assert!(
        catalog().get("hello").unwrap().output_schema().is_none(),
        "() has no output"
    );
}

#[test]
fn rustdoc_arguments_sections_block_comments_and_concat_are_read() {
    let search = catalog().get("search").unwrap();
    assert_eq!(search.summary(), "Search the index.");
    assert_eq!(
        search.description(),
        "Search the index.\n\n# Errors\n\nFails when the index is cold."
    );
    let schema = search.input_schema();
    assert_eq!(
        schema["properties"]["query"]["description"],
        "What to look for, matched literally."
    );
    assert_eq!(
        schema["properties"]["limit"],
        json!({
            "type": "integer", "minimum": 0, "maximum": 4294967295u64,
            "description": "At most this many hits."
        })
    );
    assert_eq!(
        schema["properties"]["caseSensitive"],
        json!({"type": "boolean", "default": false})
    );
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(
        search.examples(),
        &[
            ToolExample::Arguments(json!({"query": "auth"})),
            ToolExample::Text("search for everything about login".into()),
        ]
    );
    assert_eq!(search.annotations().destructive, Some(false));

    let ping = catalog().get("ping").unwrap();
    assert_eq!(ping.description(), "Ping the server.\n\nAnswers `pong`.");
    assert_eq!(ping.title(), Some("Ping"));
    assert_eq!(ping.annotations().idempotent, Some(true));
    assert_eq!(ping.annotations().open_world, Some(false));
}

#[test]
fn a_tool_without_parameters_has_the_empty_object_schema() {
    let hello = catalog().get("hello").unwrap();
    assert_eq!(
        hello.input_schema(),
        &json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(hello.summary(), "Say hello.");
    assert_eq!(hello.description(), "Say hello.\n\nA friendly tool.");
}

#[test]
fn no_schema_has_a_dollar_schema_or_a_title() {
    fn walk(value: &Value, path: &str) {
        match value {
            Value::Object(map) => {
                assert!(!map.contains_key("$schema"), "$schema at {path}");
                for (key, item) in map {
                    // `title` may be a property name, never a keyword.
                    if key == "title" && !path.ends_with("/properties") {
                        panic!("title keyword at {path}");
                    }
                    walk(item, &format!("{path}/{key}"));
                }
            }
            Value::Array(items) => items.iter().for_each(|item| walk(item, path)),
            _ => {}
        }
    }
    for tool in catalog().tools() {
        walk(tool.input_schema(), tool.name());
        if let Some(output) = tool.output_schema() {
            walk(output, tool.name());
        }
    }
}

#[tokio::test]
async fn results_follow_seed_004s_tool_result() {
    let registry = tool_runtime::Registry::new().unwrap();
    let result = registry
        .call(
            "get_weather",
            json!({"city": "Lima", "include_forecast": true}),
        )
        .await;
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({
            "name": "get_weather",
            "input": {"city": "Lima", "include_forecast": true},
            "output": {"city": "Lima", "temperature": 18.0,
                       "forecast": [18.0, 18.0, 18.0, 18.0, 18.0]}
        })
    );
    let failed = registry
        .call("get_weather", json!({"city": "Atlantis"}))
        .await;
    assert_eq!(
        serde_json::to_value(&failed).unwrap(),
        json!({
            "name": "get_weather", "input": {"city": "Atlantis"},
            "error": "no station near that city"
        })
    );
    let reversed = registry.call("reverse", json!({"text": "abc"})).await;
    assert_eq!(reversed.output(), Some(&json!("cba")));
    let pong = registry.call("ping", Value::Null).await;
    assert_eq!(pong.output(), Some(&json!("pong")));
    let unit = registry.call("hello", json!({})).await;
    assert_eq!(unit.output(), Some(&Value::Null));
}
