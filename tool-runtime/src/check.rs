//! The catalog check: every problem in a catalog at once, so a CI can guard it.

use crate::catalog::{ItemKind, Prompt, Resource, Tool};
use crate::export::{self, canonical};
use crate::schema::validate::Validator;
use serde_json::Value;
use std::fmt;

/// How serious a finding is: errors fail the check, warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth fixing; does not fail the check.
    Warning,
    /// Fails the check.
    Error,
}

/// One finding of the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Error or warning.
    pub severity: Severity,
    /// What the item is: a tool, a prompt or a resource.
    pub kind: ItemKind,
    /// The item's name (a resource's URI).
    pub name: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The size of an item's MCP definition: what it costs in a model's (or a client's)
/// context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionSize {
    /// What the item is.
    pub kind: ItemKind,
    /// The item's name (a resource's URI).
    pub name: String,
    /// Bytes of its MCP object (Tool, Prompt, Resource) as compact JSON.
    pub bytes: usize,
    /// Tokens of that JSON, as a model's tokenizer counts them.
    pub tokens: usize,
}

/// Everything the check found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckReport {
    /// Findings, errors first, then by kind and name.
    pub findings: Vec<Finding>,
    /// Every item's size, largest first.
    pub sizes: Vec<DefinitionSize>,
}

impl CheckReport {
    /// Whether there is no error (warnings allowed).
    pub fn is_ok(&self) -> bool {
        self.errors().next().is_none()
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
    }

    /// Total bytes of every MCP definition.
    pub fn total_bytes(&self) -> usize {
        self.sizes.iter().map(|size| size.bytes).sum()
    }

    /// Total tokens of every MCP definition: what listing them all costs a model.
    pub fn total_tokens(&self) -> usize {
        self.sizes.iter().map(|size| size.tokens).sum()
    }

    fn count(&self, kind: ItemKind) -> usize {
        self.sizes.iter().filter(|size| size.kind == kind).count()
    }
}

/// `count` and its noun, in the singular for one: `1 tool`, `2 tools`.
fn counted(count: usize, noun: &str) -> String {
    match count {
        1 => format!("1 {noun}"),
        _ => format!("{count} {noun}s"),
    }
}

impl CheckReport {
    /// The findings, one line each (`error: tool `x`: ...`), errors first.
    pub fn findings_text(&self) -> String {
        let mut text = String::new();
        for finding in &self.findings {
            let label = match finding.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            text.push_str(&format!(
                "{label}: {} `{}`: {}\n",
                finding.kind, finding.name, finding.message
            ));
        }
        text
    }

    /// The counts, then each definition's size: what the catalog costs a model.
    pub fn summary_text(&self) -> String {
        let mut text = format!(
            "{}, {}, {}, {} bytes ({} tokens) of MCP definitions; {}, {}\n",
            counted(self.count(ItemKind::Tool), "tool"),
            counted(self.count(ItemKind::Prompt), "prompt"),
            counted(self.count(ItemKind::Resource), "resource"),
            self.total_bytes(),
            self.total_tokens(),
            counted(self.errors().count(), "error"),
            counted(self.warnings().count(), "warning"),
        );
        for size in &self.sizes {
            let (bytes, tokens, name) = (size.bytes, size.tokens, &size.name);
            text.push_str(&match size.kind {
                ItemKind::Tool => format!("  {bytes:>7} bytes {tokens:>6} tokens  {name}\n"),
                kind => format!("  {bytes:>7} bytes {tokens:>6} tokens  {name} ({kind})\n"),
            });
        }
        text
    }
}

/// The findings, then the summary.
impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.findings_text())?;
        f.write_str(&self.summary_text())
    }
}

/// Checks every tool: examples against their schema, names every provider accepts,
/// descriptions, parameter docs, and what each provider export can carry.
pub fn check(tools: &[&Tool]) -> CheckReport {
    check_all(tools, &[], &[])
}

/// Checks every tool as [`check`] does, and every prompt and resource: examples against
/// their schema, descriptions, argument docs, arguments a client can send as text (prompt
/// arguments and URI variables arrive as strings).
pub fn check_all(tools: &[&Tool], prompts: &[&Prompt], resources: &[&Resource]) -> CheckReport {
    check_items(tools, prompts, resources, true)
}

/// [`check_all`], measuring each definition's size (bytes and tokens) only when `sizes`
/// asks: counting tokens loads the tokenizer's vocabulary, which a test that only wants
/// the findings need not pay for.
fn check_items(
    tools: &[&Tool],
    prompts: &[&Prompt],
    resources: &[&Resource],
    sizes: bool,
) -> CheckReport {
    let mut report = CheckReport::default();
    let items = tools
        .iter()
        .map(|tool| (ItemKind::Tool, tool.name(), *tool, export::mcp_tool(tool)))
        .chain(prompts.iter().map(|prompt| {
            let mcp = export::mcp_prompt(prompt);
            (ItemKind::Prompt, prompt.name(), prompt.about(), mcp)
        }))
        .chain(resources.iter().map(|resource| {
            let mcp = export::mcp_resource(resource);
            (ItemKind::Resource, resource.uri(), resource.about(), mcp)
        }));
    for (kind, name, about, mcp) in items {
        let mut findings = Findings::new(&mut report, kind, name);
        match kind {
            ItemKind::Tool => check_tool(about, &mut findings),
            _ => check_described(about, &mut findings),
        }
        if !sizes {
            continue;
        }
        let text = canonical::to_string(&mcp);
        report.sizes.push(DefinitionSize {
            kind,
            name: name.to_owned(),
            bytes: text.len(),
            tokens: crate::tokens::count(&text),
        });
    }
    report.findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.kind.cmp(&b.kind))
            .then_with(|| a.name.cmp(&b.name))
    });
    report.sizes.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| a.kind.cmp(&b.kind))
            .then_with(|| a.name.cmp(&b.name))
    });
    report
}

/// Where one item's findings go.
struct Findings<'a> {
    report: &'a mut CheckReport,
    kind: ItemKind,
    name: String,
}

impl<'a> Findings<'a> {
    fn new(report: &'a mut CheckReport, kind: ItemKind, name: &str) -> Self {
        Findings {
            report,
            kind,
            name: name.to_owned(),
        }
    }

    fn add(&mut self, severity: Severity, message: String) {
        self.report.findings.push(Finding {
            severity,
            kind: self.kind,
            name: self.name.clone(),
            message,
        });
    }
}

fn check_tool(tool: &Tool, findings: &mut Findings<'_>) {
    if let Err(reason) = crate::catalog::names::check_name(tool.name()) {
        findings.add(
            Severity::Error,
            format!("the name is rejected by providers: {reason}"),
        );
    }
    if tool.description().trim().is_empty() {
        findings.add(
            Severity::Error,
            "the tool has no description; models choose tools by it".to_owned(),
        );
    }
    check_schema_and_examples(tool, findings);
    check_parameter_docs(tool, "parameter", findings);
    check_header_types(tool, findings);
    check_forms(tool, findings);
    if let Err(reason) = export::strict_schema(tool.input_schema()) {
        findings.add(
            Severity::Warning,
            format!("OpenAI strict mode cannot take it: {reason}"),
        );
    }
    if let Err(error) = export::gemini_legacy_declarations(&[tool]) {
        for problem in error.problems {
            findings.add(
                Severity::Warning,
                format!("Gemini's legacy schema cannot take it: {}", problem.message),
            );
        }
    }
}

/// An argument mirrored in an HTTP header must be a string, an integer or a boolean: those
/// are what a header can say exactly.
fn check_header_types(tool: &Tool, findings: &mut Findings<'_>) {
    let root = tool.input_schema();
    for param in tool.arguments() {
        let Some(header) = param.header() else {
            continue;
        };
        let schema = crate::schema::resolve(&root["properties"][param.name()], root);
        let kinds = crate::schema::types(schema);
        let fits = !kinds.is_empty()
            && kinds
                .iter()
                .all(|kind| matches!(*kind, "string" | "integer" | "boolean" | "null"));
        if !fits {
            findings.add(
                Severity::Error,
                format!(
                    "parameter `{}` is mirrored in the header Mcp-Param-{header}, but only a \
                     string, an integer or a boolean can be; it is {}",
                    param.name(),
                    if kinds.is_empty() {
                        "not one type".to_owned()
                    } else {
                        kinds.join(" or ")
                    }
                ),
            );
        }
    }
}

/// What a prompt and a resource share: a description (a warning when missing: people
/// pick them, and a description helps), a schema that compiles, examples that fit it,
/// documented arguments that a string can be read as.
fn check_described(about: &Tool, findings: &mut Findings<'_>) {
    let kind = findings.kind;
    if about.description().trim().is_empty() {
        findings.add(
            Severity::Warning,
            format!("the {kind} has no description; add a `///` comment on it"),
        );
    }
    check_schema_and_examples(about, findings);
    let argument = if kind == ItemKind::Prompt {
        "argument"
    } else {
        "template variable"
    };
    check_parameter_docs(about, argument, findings);
    check_text_arguments(about, argument, findings);
    check_forms(about, findings);
}

/// The elicitation forms the code asks with: each must be one a client can show.
fn check_forms(about: &Tool, findings: &mut Findings<'_>) {
    for (form, why) in about.unshowable_forms() {
        findings.add(
            Severity::Error,
            format!("it asks the user with the form {form}, which elicitation cannot show: {why}"),
        );
    }
}

fn check_schema_and_examples(tool: &Tool, findings: &mut Findings<'_>) {
    let validator = match Validator::for_schema(tool.input_schema()) {
        Ok(validator) => validator,
        Err(reason) => {
            // Its examples cannot be judged either.
            findings.add(
                Severity::Error,
                format!("the input schema cannot be checked: {reason}"),
            );
            return;
        }
    };
    for (index, example) in tool.argument_examples().enumerate() {
        let problems = validator.problems(tool.input_schema(), example);
        if !problems.is_empty() {
            let said =
                crate::schema::validate::join_problems(problems.iter().map(|p| p.message.as_str()));
            findings.add(
                Severity::Error,
                format!(
                    "example {} ({}) does not fit the schema: {}",
                    index + 1,
                    canonical::to_string(example),
                    said
                ),
            );
        }
    }
}

fn check_parameter_docs(tool: &Tool, what: &str, findings: &mut Findings<'_>) {
    for param in tool.arguments() {
        if param.description().is_none_or(|d| d.trim().is_empty()) {
            findings.add(
                Severity::Warning,
                format!(
                    "{what} `{}` has no description; add a `///` comment on it",
                    param.name()
                ),
            );
        }
    }
}

/// Prompt arguments and URI template variables arrive as strings: each must be a type a
/// string can be read as (text, a number, a boolean, an enumeration), never an object or
/// a list, which no client can send.
fn check_text_arguments(about: &Tool, what: &str, findings: &mut Findings<'_>) {
    let root = about.input_schema();
    for param in about.arguments() {
        let schema = &root["properties"][param.name()];
        if !readable_from_text(schema, root, 0) {
            findings.add(
                Severity::Error,
                format!(
                    "{what} `{}` takes {}, but clients send it as a string; take a String, a \
                     number, a bool or an enum of unit variants",
                    param.name(),
                    describe_kind(crate::schema::resolve(schema, root))
                ),
            );
        }
    }
}

/// Whether some value a string reads as fits `schema`.
fn readable_from_text(schema: &Value, root: &Value, depth: usize) -> bool {
    let schema = crate::schema::resolve(schema, root);
    if depth > 8 || schema.get("enum").is_some() || schema.get("const").is_some() {
        return true;
    }
    let scalar = |kind: &str| matches!(kind, "string" | "integer" | "number" | "boolean");
    let kinds = crate::schema::types(schema);
    let typed = (!kinds.is_empty()).then(|| kinds.iter().any(|kind| scalar(kind)));
    let branches: Vec<&Value> = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_array))
        .flatten()
        .collect();
    match (typed, branches.is_empty()) {
        (Some(readable), _) => readable,
        (None, false) => branches
            .iter()
            .any(|branch| readable_from_text(branch, root, depth + 1)),
        // No type said: any value, a string included.
        (None, true) => true,
    }
}

fn describe_kind(schema: &Value) -> &'static str {
    let kinds = crate::schema::types(schema);
    if kinds.contains(&"object") {
        "an object"
    } else if kinds.contains(&"array") {
        "a list"
    } else {
        "a value no string reads as"
    }
}

/// Checks this binary's static catalog and panics with the whole report on any error: what
/// [`assert_catalog_ok!`](crate::assert_catalog_ok) runs.
#[doc(hidden)]
#[track_caller]
pub fn __assert_catalog_ok() {
    let catalog = match crate::catalog::Catalog::global() {
        Ok(catalog) => catalog,
        Err(error) => panic!("the tool catalog does not build: {error}"),
    };
    let tools: Vec<&Tool> = catalog.tools().iter().collect();
    let prompts: Vec<&Prompt> = catalog.prompts().iter().collect();
    let resources: Vec<&Resource> = catalog.resources().iter().collect();
    // The findings decide; the sizes are measured only for the report of a failure.
    if !check_items(&tools, &prompts, &resources, false).is_ok() {
        let report = check_all(&tools, &prompts, &resources);
        panic!("the tool catalog has errors:\n{report}");
    }
}

/// Fails (panics) when this binary's tool catalog has errors: duplicate names, examples that
/// do not fit their schema, missing descriptions. Warnings do not fail it.
///
/// ```
/// /// Add two integers.
/// ///
/// /// Example: {"a": 1, "b": 2}
/// #[tool_runtime::tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// tool_runtime::assert_catalog_ok!();
/// ```
#[macro_export]
macro_rules! assert_catalog_ok {
    () => {
        $crate::check::__assert_catalog_ok()
    };
}
