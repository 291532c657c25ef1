//! The catalog check on a catalog with mistakes the compiler cannot see: examples whose
//! values do not fit, undocumented parameters, a run-time tool without a description.

use tool_runtime::catalog::Tool;
use tool_runtime::check::{check, Severity};
use tool_runtime::{DynamicTool, Registry};

/// Book seats.
///
/// Example: {"seats": "three", "class": "economy"}
/// Example: {"seats": 300}
/// Example: {"seats": 2}
#[tool_runtime::tool]
fn book(seats: u8, class: Option<String>) -> u8 {
    let _ = class;
    seats
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

/// A street address.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Address {
    street: String,
}

/// Where to deliver: a nested struct, which a form cannot show.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Delivery {
    address: Address,
}

/// Ask where to deliver.
#[tool_runtime::tool]
async fn ask_address(
    ctx: tool_runtime::CallContext,
) -> Result<String, tool_runtime::ask::AskError> {
    let answer = ctx.elicit::<Delivery>("Where to?").await?;
    Ok(answer
        .accepted()
        .map_or_else(String::new, |d| d.address.street))
}

#[test]
fn every_problem_is_reported_at_once() {
    let registry = Registry::builder()
        .tool(DynamicTool::new("mystery", "", |_: Empty| async { Ok::<_, String>(1) }).unwrap())
        .build()
        .unwrap();
    let refs = registry.tools();
    let tools: Vec<&Tool> = refs.iter().map(|t| &**t).collect();
    let report = check(&tools);
    let findings: Vec<(Severity, &str, &str)> = report
        .findings
        .iter()
        .map(|f| (f.severity, f.name.as_str(), f.message.as_str()))
        .collect();
    assert_eq!(
        findings,
        [
            (
                Severity::Error,
                "ask_address",
                "it asks the user with the form Delivery, which elicitation cannot show: field `address` of Delivery is a nested struct or map; a form is one flat set of fields"
            ),
            (
                Severity::Error,
                "book",
                r#"example 1 ({"class":"economy","seats":"three"}) does not fit the schema: 'seats' must be an integer between 0 and 255; got "three""#
            ),
            (
                Severity::Error,
                "book",
                r#"example 2 ({"seats":300}) does not fit the schema: 'seats' must be an integer between 0 and 255; got 300"#
            ),
            (
                Severity::Error,
                "mystery",
                "the tool has no description; models choose tools by it"
            ),
            (
                Severity::Warning,
                "book",
                "parameter `seats` has no description; add a `///` comment on it"
            ),
            (
                Severity::Warning,
                "book",
                "parameter `class` has no description; add a `///` comment on it"
            ),
        ]
    );
    assert!(!report.is_ok());
    assert_eq!(report.sizes.len(), 3);
    let text = report.to_string();
    assert!(text.contains("3 tools, "), "{text}");
    assert!(text.contains("4 errors, 2 warnings"), "{text}");
}

#[test]
#[should_panic(
    expected = "the tool catalog has errors:\nerror: tool `ask_address`: it asks the user with the form Delivery"
)]
fn the_one_line_guard_fails_the_test() {
    tool_runtime::assert_catalog_ok!();
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    /// Words to look for.
    words: String,
    filters: std::collections::BTreeMap<String, String>,
    /// Newest first.
    newest: Option<bool>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Shelf {
    shelf: u32,
}

#[test]
fn prompts_and_resources_are_checked_beside_the_tools() {
    use tool_runtime::catalog::{ItemKind, Prompt, Resource};
    use tool_runtime::check::check_all;
    use tool_runtime::registry::{DynamicPrompt, DynamicResource};

    let search = DynamicPrompt::new("search", "Search the notes.", |q: Query| async move {
        Ok::<_, String>(format!("{} {:?} {:?}", q.words, q.filters, q.newest))
    })
    .unwrap();
    let shelf = DynamicResource::template("shelf://{shelf}", "shelf", "", |s: Shelf| async move {
        Ok::<_, String>(s.shelf.to_string())
    })
    .unwrap();
    let registry = Registry::builder()
        .prompt(search)
        .resource(shelf)
        .build()
        .unwrap();
    let prompts = registry.prompts();
    let resources = registry.resources();
    let prompts: Vec<&Prompt> = prompts.iter().map(|p| &**p).collect();
    let resources: Vec<&Resource> = resources.iter().map(|r| &**r).collect();
    let report = check_all(&[], &prompts, &resources);
    let findings: Vec<(Severity, ItemKind, &str, &str)> = report
        .findings
        .iter()
        .map(|f| (f.severity, f.kind, f.name.as_str(), f.message.as_str()))
        .collect();
    assert_eq!(
        findings,
        [
            (
                Severity::Error,
                ItemKind::Prompt,
                "search",
                "argument `filters` takes an object, but clients send it as a string; take a \
                 String, a number, a bool or an enum of unit variants"
            ),
            (
                Severity::Warning,
                ItemKind::Prompt,
                "search",
                "argument `filters` has no description; add a `///` comment on it"
            ),
            (
                Severity::Warning,
                ItemKind::Resource,
                "shelf://{shelf}",
                "the resource has no description; add a `///` comment on it"
            ),
            (
                Severity::Warning,
                ItemKind::Resource,
                "shelf://{shelf}",
                "template variable `shelf` has no description; add a `///` comment on it"
            ),
        ],
        "`newest` (an optional bool) reads from text; `words` is documented"
    );
    assert_eq!(report.sizes.len(), 2);
}
