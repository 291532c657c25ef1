//! The catalog check on a catalog with mistakes the compiler cannot see: examples whose
//! values do not fit, undocumented parameters, a run-time tool without a description.

use tool_runtime::catalog::Tool;
use tool_runtime::check::{check, Severity};
use tool_runtime::{DynamicTool, Registry};

/// How many seats: a type of the program's own, which the macro cannot see through (a `u8`
/// it can: examples that do not fit one are compile errors).
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(transparent)]
struct Seats(u8);

/// Book seats.
///
/// Example: {"seats": "three", "class": "economy"}
/// Example: {"seats": 300}
/// Example: {"seats": 2}
#[tool_runtime::tool]
fn book(seats: Seats, class: Option<String>) -> u8 {
    let _ = class;
    seats.0
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
    // Described, not built: a registry would refuse to start with `book`'s examples.
    let mystery = DynamicTool::new("mystery", "", |_: Empty| async { Ok::<_, String>(1) }).unwrap();
    let catalog = tool_runtime::catalog::Catalog::global().unwrap();
    let tools: Vec<&Tool> = catalog.tools().iter().chain([mystery.tool()]).collect();
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
                "it asks the user with the form Delivery, which elicitation cannot show: \
                 field `address` of Delivery is a nested struct or map; \
                 a form is one flat set of fields"
            ),
            (
                Severity::Error,
                "book",
                "example 1 ({\"class\":\"economy\",\"seats\":\"three\"}) does not fit the schema: \
                 'seats' must be an integer between 0 and 255; got \"three\""
            ),
            (
                Severity::Error,
                "book",
                "example 2 ({\"seats\":300}) does not fit the schema: \
                 'seats' must be an integer between 0 and 255; got 300"
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
fn a_registry_with_an_example_that_does_not_fit_refuses_to_start() {
    let error = Registry::new().unwrap_err().to_string();
    assert_eq!(
        error,
        "tool `book`: its doc example {\"class\":\"economy\",\"seats\":\"three\"} does not fit its \
         parameters: 'seats' must be an integer between 0 and 255; got \"three\"; \
         fix the `Example:` line of its doc comment (`check` lists every such problem)"
    );
}

#[test]
#[should_panic(expected = "the tool catalog has errors:\nerror: tool `ask_address`: \
                           it asks the user with the form Delivery")]
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
    let prompts: Vec<&Prompt> = vec![search.prompt()];
    let resources: Vec<&Resource> = vec![shelf.resource()];
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
