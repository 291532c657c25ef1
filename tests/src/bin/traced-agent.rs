//! An agent that exports its traces: it runs the agent loop once against the
//! OpenAI-compatible model at the URL given, with the tools of the MCP server whose command
//! line is given mounted under `up`, and prints the outcome's status. The collector is the
//! one `OTEL_EXPORTER_OTLP_ENDPOINT` names (the server started for the mount inherits it).
//!
//! Once it has printed the status it waits for its input to end before it stops the
//! mount's server, so that a test reads the spans of both processes first.
//!
//! Usage: traced-agent MODEL_BASE_URL "SERVER COMMAND LINE" QUESTION

use std::sync::Arc;
use tool_runtime::agent::openai::ChatClient;
use tool_runtime::agent::{AgentLoop, Dialect, Tools};
use tool_runtime::mount::Mount;
use tool_runtime::otel::OtlpExport;
use tool_runtime::Registry;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

fn main() -> std::process::ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [model, upstream, question] = arguments.as_slice() else {
        eprintln!("usage: traced-agent MODEL_BASE_URL \"SERVER COMMAND LINE\" QUESTION");
        return std::process::ExitCode::from(2);
    };
    let Some(export) = OtlpExport::from_env() else {
        eprintln!("OTEL_EXPORTER_OTLP_ENDPOINT names no collector");
        return std::process::ExitCode::from(2);
    };
    let (layer, guard) = export
        .service_name("traced-agent")
        .install()
        .expect("the export starts");
    tracing_subscriber::registry().with(layer).init();
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let status = runtime.block_on(async {
        let registry = Arc::new(
            Registry::builder()
                .mount(Mount::new("up", upstream).expect("a mount"))
                .build()
                .expect("a registry"),
        );
        registry.start_mounts().await.expect("the mount starts");
        let model = ChatClient::new(model, "scripted").api_key("test-key");
        let outcome = AgentLoop::new(model, Tools::new(&registry))
            .run(vec![Dialect::OpenAiChat.user_message(question)])
            .await;
        println!("{}", outcome.status.as_str());
        let _ = tokio::task::spawn_blocking(|| {
            use std::io::Read;
            std::io::stdin().read_to_end(&mut Vec::new())
        })
        .await;
        // Its input closed, the mount's server ends as a server does: sending its last
        // spans.
        registry.close_mounts().await;
        outcome.status
    });
    drop(runtime);
    guard.shutdown();
    if status == tool_runtime::agent::Status::Done {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
