//! The fixture server for the official MCP conformance suite: the `test_*` tools, prompts
//! and resources its server scenarios use, each written with `#[tool]`, `#[prompt]` or
//! `#[resource]` as a user would. Run it with
//! `conformance-server serve --http 127.0.0.1:PORT` and point the suite at `/mcp`.

mod asking;
mod tasks;

use std::process::ExitCode;
use std::time::Duration;
use tool_runtime::context::CompletionContext;
use tool_runtime::registry::RegistryHandle;
use tool_runtime::result::{EmbeddedResource, PromptMessage};
use tool_runtime::{prompt, resource, tool, Content, DynamicTool, Logger, Progress, State};

/// A 1x1 red PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAA\
     AABJRU5ErkJggg==";
/// A tiny WAV file.
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn decode(base64: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(base64)
        .unwrap_or_default()
}

/// Answer with a simple text.
#[tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Answer with an image.
#[tool(read_only)]
fn test_image_content() -> Content {
    Content::image(decode(PNG), "image/png")
}

/// Answer with audio.
#[tool(read_only)]
fn test_audio_content() -> Content {
    Content::audio(decode(WAV), "audio/wav")
}

/// Answer with an embedded resource.
#[tool(read_only)]
fn test_embedded_resource() -> Content {
    Content::resource_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Answer with text, an image and a resource.
#[tool(read_only)]
fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Content::image(decode(PNG), "image/png"),
        Content::resource_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]
}

/// Send three log messages while working.
#[tool(read_only)]
async fn test_tool_with_logging(logger: Logger) -> &'static str {
    logger.info("Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    logger.info("Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    logger.info("Tool execution completed");
    "Logging test completed"
}

/// Echo a region; clients mirror it in the `Mcp-Param-Region` header, so gateways can
/// route on it without reading the body.
#[tool(read_only)]
fn test_custom_header(
    /// Where to route the call.
    #[arg(header = "Region")]
    region: String,
) -> String {
    format!("Routed to {region}")
}

/// Log one message; a client that set no log level hears nothing of it.
#[tool(read_only)]
fn test_logging_tool(logger: Logger) -> &'static str {
    logger.info("test_logging_tool ran");
    "Logged"
}

/// Report progress three times while working.
#[tool(read_only)]
async fn test_tool_with_progress(progress: Progress) -> &'static str {
    for (step, value) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        progress.report(
            value,
            Some(100.0),
            Some(&format!("Completed step {value} of 100")),
        );
    }
    "Progress test completed"
}

/// Fail on purpose.
#[tool]
fn test_error_handling() -> Result<(), String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Add two integers (used by the Python client tests for argument errors).
///
/// Example: {"a": 2, "b": 3}
#[tool(read_only, idempotent)]
fn add_numbers(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

/// A filter with an optional limit.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Filter {
    /// At most this many; no limit when absent.
    limit: Option<u32>,
    // Left undocumented on purpose: an undocumented `Value` field is the boolean schema
    // `true` in schemars' output.
    context: Option<serde_json::Value>,
}

/// Describe any JSON value, with an optional filter.
///
/// Its schema holds what some clients refuse unless the server rewrites it: "any value"
/// (`serde_json::Value`) and an `Option` field of a nested struct.
#[tool(read_only)]
fn describe_value(
    /// Any JSON value.
    value: serde_json::Value,
    /// How much to show.
    filter: Option<Filter>,
    // Undocumented on purpose: an undocumented `Value` parameter is the boolean schema
    // `true` in schemars' output, which the server must publish as `{}`.
    context: Option<serde_json::Value>,
) -> String {
    let _ = context;
    let limit = filter.and_then(|filter| filter.limit);
    let text = value.to_string();
    match limit {
        Some(limit) => text.chars().take(limit as usize).collect(),
        None => text,
    }
}

/// A static text resource for testing.
#[resource(
    "test://static-text",
    title = "Static Text Resource",
    mime_type = "text/plain"
)]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (image) for testing.
#[resource(
    "test://static-binary",
    title = "Static Binary Resource",
    mime_type = "image/png"
)]
fn static_binary() -> Vec<u8> {
    decode(PNG)
}

/// A resource that clients subscribe to.
#[resource(
    "test://watched-resource",
    title = "Watched Resource",
    mime_type = "text/plain"
)]
fn watched_resource() -> &'static str {
    "Watched resource content"
}

/// A resource template with parameter substitution.
#[resource(
    "test://template/{id}/data",
    name = "template",
    title = "Resource Template",
    mime_type = "application/json"
)]
fn template_data(
    /// The identifier substituted into the URI.
    #[arg(complete = known_ids)]
    id: String,
) -> serde_json::Value {
    serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
}

/// Identifiers the template knows, for completion.
fn known_ids(typed: &str) -> Vec<String> {
    ["123", "456", "789"]
        .into_iter()
        .filter(|id| id.starts_with(typed))
        .map(str::to_owned)
        .collect()
}

/// A simple prompt without arguments.
#[prompt(title = "Simple Test Prompt")]
fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with required arguments.
#[prompt(title = "Prompt With Arguments")]
fn test_prompt_with_arguments(
    /// First test argument.
    #[arg(complete = test_words)]
    arg1: String,
    /// Second test argument.
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// Words starting with what was typed, given what the other argument says.
fn test_words(typed: &str, context: &CompletionContext) -> Vec<String> {
    let suffix = context.argument("arg2").unwrap_or("value");
    ["test", "testing", "tested"]
        .into_iter()
        .filter(|word| word.starts_with(typed))
        .map(|word| format!("{word}-{suffix}"))
        .collect()
}

/// A prompt that includes an embedded resource.
#[prompt(title = "Prompt With Embedded Resource")]
fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed.
    #[arg(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    let resource = EmbeddedResource {
        uri: resource_uri,
        mime_type: Some("text/plain".to_owned()),
        text: Some("Embedded resource content for testing.".to_owned()),
        blob: None,
    };
    vec![
        PromptMessage::user(Content::Resource { resource }),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt that includes image content.
#[prompt(title = "Prompt With Image")]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::image(decode(PNG), "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// How to reach a contact, with a schema written by hand: it uses what derived schemas
/// never do (an anchor, composition, a conditional), which clients must keep as written.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Contact {
    name: Option<String>,
    address: Option<serde_json::Value>,
    contact_method: Option<String>,
    phone: Option<String>,
    email: Option<String>,
}

impl schemars::JsonSchema for Contact {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Contact".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {
                "properties": {"contactMethod": {"const": "phone"}},
                "required": ["contactMethod"]
            },
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        })
    }
}

/// `json_schema_2020_12_tool`, added at run time: its arguments are one type with a
/// hand-written schema.
fn contact_tool() -> DynamicTool {
    DynamicTool::new(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        |contact: Contact| async move {
            let how = contact.phone.or(contact.email).unwrap_or_default();
            let who = contact.name.unwrap_or_else(|| "someone".to_owned());
            let _ = (contact.address, contact.contact_method);
            Ok::<_, String>(format!("Contact {who} at {how}"))
        },
    )
    .expect("a valid run-time tool")
}

/// The arguments of a tool that takes none.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArguments {}

/// Change the tool list (the suite's hook for list-change notifications): adds a tool, or
/// removes it when it is there.
#[tool]
fn test_trigger_tool_change(registry: State<RegistryHandle>) -> Result<&'static str, String> {
    let registry = registry.registry().ok_or("the registry is not served")?;
    if registry.remove_tool("test_added_tool") {
        return Ok("removed test_added_tool");
    }
    let added = DynamicTool::new(
        "test_added_tool",
        "A tool added at run time",
        |_: NoArguments| async { Ok::<_, String>("added") },
    )
    .map_err(|error| error.to_string())?;
    registry
        .add_tool(added)
        .map_err(|error| error.to_string())?;
    Ok("added test_added_tool")
}

fn main() -> ExitCode {
    tool_runtime::cli::Cli::new()
        .name("conformance-server")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(contact_tool())
        .setup(|_, builder| {
            let handle = builder.handle();
            Ok(builder.state(handle))
        })
        .run()
}
