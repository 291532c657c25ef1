//! The catalog check: every problem in a catalog at once, so a CI can guard it.

use crate::catalog::Tool;
use crate::export::{self, canonical};
use crate::schema::validate::Validator;
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
    /// The tool concerned.
    pub tool: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The size of a tool's MCP definition: what it costs in a model's context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSize {
    /// The tool.
    pub tool: String,
    /// Bytes of its MCP Tool object as compact JSON.
    pub bytes: usize,
}

/// Everything the check found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckReport {
    /// Findings, errors first, then by tool.
    pub findings: Vec<Finding>,
    /// Every tool's size, largest first.
    pub sizes: Vec<ToolSize>,
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
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for finding in &self.findings {
            let label = match finding.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            writeln!(f, "{label}: tool `{}`: {}", finding.tool, finding.message)?;
        }
        writeln!(
            f,
            "{} tools, {} bytes of MCP definitions; {} errors, {} warnings",
            self.sizes.len(),
            self.total_bytes(),
            self.errors().count(),
            self.warnings().count()
        )?;
        for size in &self.sizes {
            writeln!(f, "  {:>7} bytes  {}", size.bytes, size.tool)?;
        }
        Ok(())
    }
}

/// Checks every tool: examples against their schema, names every provider accepts,
/// descriptions, parameter docs, and what each provider export can carry.
pub fn check(tools: &[&Tool]) -> CheckReport {
    let mut findings = Vec::new();
    let mut sizes = Vec::new();
    for tool in tools {
        let mut add = |severity, message: String| {
            findings.push(Finding {
                severity,
                tool: tool.name().to_owned(),
                message,
            })
        };
        if let Err(reason) = crate::catalog::names::check_name(tool.name()) {
            add(
                Severity::Error,
                format!("the name is rejected by providers: {reason}"),
            );
        }
        if tool.description().trim().is_empty() {
            add(
                Severity::Error,
                "the tool has no description; models choose tools by it".to_owned(),
            );
        }
        let validator = match Validator::for_schema(tool.input_schema()) {
            Ok(validator) => validator,
            Err(reason) => {
                add(
                    Severity::Error,
                    format!("the input schema does not compile: {reason}"),
                );
                Validator::Unchecked
            }
        };
        for (index, example) in tool.argument_examples().enumerate() {
            let problems = validator.problems(tool.input_schema(), example);
            if !problems.is_empty() {
                let said: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
                add(
                    Severity::Error,
                    format!(
                        "example {} ({}) does not fit the schema: {}",
                        index + 1,
                        canonical::to_string(example),
                        said.join(". ")
                    ),
                );
            }
        }
        for param in tool.arguments() {
            if param.description().is_none_or(|d| d.trim().is_empty()) {
                add(
                    Severity::Warning,
                    format!(
                        "parameter `{}` has no description; add a `///` comment on it",
                        param.name()
                    ),
                );
            }
        }
        if let Err(reason) = export::strict_schema(tool.input_schema()) {
            add(
                Severity::Warning,
                format!("OpenAI strict mode cannot take it: {reason}"),
            );
        }
        if let Err(error) = export::gemini_legacy_declarations(&[tool]) {
            for problem in error.problems {
                add(
                    Severity::Warning,
                    format!("Gemini's legacy schema cannot take it: {}", problem.message),
                );
            }
        }
        sizes.push(ToolSize {
            tool: tool.name().to_owned(),
            bytes: canonical::to_string(&export::mcp_tool(tool)).len(),
        });
    }
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.tool.cmp(&b.tool))
    });
    sizes.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.tool.cmp(&b.tool)));
    CheckReport { findings, sizes }
}

/// Checks this binary's static catalog and panics with the whole report on any error.
/// Meant for one test that guards a catalog: `tool_runtime::assert_catalog_ok!();`.
#[track_caller]
pub fn assert_catalog_ok() {
    let catalog = match crate::catalog::Catalog::global() {
        Ok(catalog) => catalog,
        Err(error) => panic!("the tool catalog does not build: {error}"),
    };
    let tools: Vec<&Tool> = catalog.tools().iter().collect();
    let report = check(&tools);
    if !report.is_ok() {
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
        $crate::check::assert_catalog_ok()
    };
}
