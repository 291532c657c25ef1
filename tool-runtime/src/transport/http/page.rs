//! `GET /`: the catalog as a page a person reads and tries: every tool, prompt and resource
//! in a side list with a filter, its description rendered as Markdown, its parameters,
//! examples and schemas, and a form built from its schema that calls it (gets the prompt,
//! reads the resource) through the MCP endpoint and shows the result or the error.
//! Everything is in the binary (one HTML file, its style and script inline): no CDN, no
//! network.

use super::guard::Admitted;
use super::App;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::sync::Arc;

/// The page, with `{{TITLE}}` and `{{CATALOG}}` to fill in.
const PAGE: &str = include_str!("page.html");

pub(super) async fn catalog_page(
    State(app): State<Arc<App>>,
    Admitted(caller): Admitted,
) -> Response {
    let registry = app.server.registry();
    let tools: Vec<Value> = registry
        .tools()
        .iter()
        .filter(|tool| caller.may_call(tool))
        .map(|tool| {
            let mut entry = crate::export::mcp_tool(tool);
            let examples: Vec<Value> = tool.argument_examples().cloned().collect();
            entry["examples"] = Value::Array(examples);
            entry
        })
        .collect();
    let prompts: Vec<Value> = registry
        .prompts()
        .iter()
        .map(|prompt| crate::export::mcp_prompt(prompt))
        .collect();
    let resources: Vec<Value> = registry
        .resources()
        .iter()
        .map(|resource| crate::export::mcp_resource(resource))
        .collect();
    let catalog = json!({
        "endpoint": app.options.endpoint,
        "tools": tools,
        "prompts": prompts,
        "resources": resources,
    });
    let title = html_escaped(app.server.info().name());
    let page = PAGE
        .replace("{{TITLE}}", &title)
        .replace("{{CATALOG}}", &script_safe(&catalog.to_string()));
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            // The page runs its own inline script and talks to this server only; images and
            // sound a tool returns are shown from the result itself (`data:`), never fetched.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 img-src data:; media-src data:; connect-src 'self'; base-uri 'none'; \
                 form-action 'none'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        page,
    )
        .into_response()
}

/// `text` safe inside an HTML element.
fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JSON safe inside a `<script>` element: nothing in it can close the element or open a
/// comment (`\u003c` is the same character to JSON).
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
}
