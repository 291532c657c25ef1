//! The fixture client for the official MCP conformance suite's client scenarios: the suite
//! starts it with the URL of a mock server as its last argument and the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO` (the protocol version in `MCP_CONFORMANCE_PROTOCOL_VERSION`,
//! anything the scenario gives in `MCP_CONFORMANCE_CONTEXT`), and checks what it sends.
//! It does each scenario's steps with `tool_runtime::client` as a user would, and exits 0
//! when they worked, 1 (saying why on stderr) when they did not.
//!
//! ```text
//! conformance client --command "conformance-client" --scenario tools_call
//! ```

mod arguments;
mod auth;
mod forms;

use serde_json::{json, Value};
use std::process::ExitCode;
use tool_runtime::client::{Client, ClientError, RemoteTool};

/// What the suite tells the client.
struct Scenario {
    /// The scenario's name.
    name: String,
    /// The mock server's URL.
    url: String,
    /// The protocol version the scenario runs at (absent: 2025-11-25).
    version: String,
    /// What the scenario gives (credentials, the calls to make), as JSON.
    context: Value,
}

impl Scenario {
    fn from_environment() -> Result<Scenario, String> {
        let url = std::env::args()
            .skip(1)
            .last()
            .ok_or("the server's URL is the last argument")?;
        let name = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
        let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
            .unwrap_or_else(|_| "2025-11-25".to_owned());
        let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|error| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {error}"))?,
            Err(_) => Value::Null,
        };
        Ok(Scenario {
            name,
            url,
            version,
            context,
        })
    }

    /// Whether the scenario runs in the handshake era (`initialize`, sessions).
    fn handshake(&self) -> bool {
        self.version.as_str() < "2026-07-28"
    }
}

fn main() -> ExitCode {
    let scenario = match Scenario::from_environment() {
        Ok(scenario) => scenario,
        Err(why) => {
            eprintln!("error: {why}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    match runtime.block_on(run(&scenario)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}: {error}", scenario.name);
            ExitCode::FAILURE
        }
    }
}

/// Does the scenario's steps.
async fn run(scenario: &Scenario) -> Result<(), ClientError> {
    let mut builder = Client::builder()
        .named("tool-runtime-conformance-client", env!("CARGO_PKG_VERSION"))
        .handshake_era(scenario.handshake())
        .handler(forms::Defaults);
    if scenario.name.starts_with("auth/") {
        let mut context = scenario.context.clone();
        if !context.is_object() {
            context = json!({});
        }
        context["name"] = json!(scenario.name);
        builder = builder.credentials(auth::credentials(&context));
    }
    let client = builder.connect(&scenario.url).await?;
    let outcome = steps(scenario, &client).await;
    client.close().await;
    outcome
}

async fn steps(scenario: &Scenario, client: &Client) -> Result<(), ClientError> {
    match scenario.name.as_str() {
        // Connecting is the scenario (with the tools listed, as a client does).
        "initialize" | "request-metadata" | "json-schema-ref-no-deref" => {
            client.list_tools().await?;
        }
        "http-custom-headers" => {
            client.list_tools().await?;
            for call in scenario.context["toolCalls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let name = call["name"].as_str().unwrap_or_default();
                client.call_tool(name, call["arguments"].clone()).await?;
            }
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_tools().await?;
            let focal = tools
                .iter()
                .find(|tool| tool.name == "json_schema_2020_12_tool")
                .ok_or_else(|| missing("json_schema_2020_12_tool"))?;
            let schema = focal.input_schema.clone();
            client
                .call_tool("json_schema_echo", json!({"schema": schema}))
                .await?;
        }
        "http-standard-headers" => {
            every_tool(client).await?;
            for resource in client.list_resources().await? {
                if let Some(uri) = resource["uri"].as_str() {
                    client.read_resource(uri).await?;
                }
            }
            for prompt in client.list_prompts().await? {
                if let Some(name) = prompt["name"].as_str() {
                    client.get_prompt(name, prompt_arguments(&prompt)).await?;
                }
            }
        }
        // Skills are listed; none is read before it is loaded.
        "sep-2640-client-no-prefetch" => {
            client.list_skills().await?;
        }
        // A skill loaded is checked against its listing before any other file is read.
        name if name.starts_with("sep-2640-client-verify") => {
            for skill in client.list_skills().await? {
                client.load_skill(&skill).await?;
                for file in skill.files.iter().filter(|file| file.uri != skill.uri) {
                    client.read_skill_file(&skill, &file.uri).await?;
                }
            }
        }
        // Every other scenario: list the tools and call each, as a model would.
        _ => every_tool(client).await?,
    }
    Ok(())
}

/// Calls every tool the server lists, with arguments that fit its schema.
async fn every_tool(client: &Client) -> Result<(), ClientError> {
    let tools: Vec<RemoteTool> = client.list_tools().await?;
    for tool in tools {
        let arguments = arguments::example(&tool.input_schema);
        let result = client.call_tool(&tool.name, arguments).await?;
        if result.is_error {
            eprintln!(
                "the tool {} answered an error: {}",
                tool.name,
                result.text()
            );
        }
    }
    Ok(())
}

/// A value for each of a prompt's arguments.
fn prompt_arguments(prompt: &Value) -> Value {
    let mut arguments = serde_json::Map::new();
    for argument in prompt["arguments"].as_array().into_iter().flatten() {
        if let Some(name) = argument["name"].as_str() {
            arguments.insert(name.to_owned(), json!("example"));
        }
    }
    Value::Object(arguments)
}

fn missing(tool: &str) -> ClientError {
    ClientError::Protocol {
        reason: format!("the server lists no tool {tool}"),
    }
}
