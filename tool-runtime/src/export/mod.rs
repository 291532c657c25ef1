//! Everything a catalog is delivered as: the catalog artefact, MCP Tool objects,
//! the tool formats of OpenAI, Anthropic and Gemini, and the REST endpoints as OpenAPI.
//! Each is a pure function of the tools' canonical schemas.

mod anthropic;
mod artefact;
pub(crate) mod canonical;
mod gemini;
mod mcp;
mod openai;
mod openapi;

pub use anthropic::anthropic_tools;
pub use artefact::{
    catalog_artefact, catalog_artefact_all, prompt_list, CatalogArtefact, FunctionEntry,
    PromptEntry, ResourceEntry,
};
pub use gemini::{gemini_declarations, gemini_legacy_declarations};
#[cfg(feature = "http")]
pub(crate) use mcp::handshake_mcp_tools;
pub use mcp::{mcp_prompt, mcp_resource, mcp_tool, mcp_tools};
pub use openai::{openai_chat_tools, openai_responses_tools, strict_schema};
pub use openapi::{call_path, openapi};

use crate::catalog::Tool;
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// An output format of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// The catalog artefact: `{version, hash, count, promptList, functionSchema}`.
    Catalog,
    /// MCP `tools/list` Tool objects.
    Mcp,
    /// OpenAI Chat Completions `tools`.
    OpenAiChat,
    /// OpenAI Chat Completions `tools`, strict.
    OpenAiChatStrict,
    /// OpenAI Responses API `tools`, strict (that API's default).
    OpenAiResponses,
    /// Anthropic Messages `tools`.
    Anthropic,
    /// Gemini `functionDeclarations` with `parametersJsonSchema`.
    Gemini,
    /// Gemini `functionDeclarations` with legacy OpenAPI-subset `parameters`.
    GeminiLegacy,
    /// The `promptList` text, for models without function calling.
    Prompt,
    /// The REST endpoints as an OpenAPI 3.1 document, one operation per tool.
    OpenApi,
}

impl Format {
    /// Every format, with the name the command line uses.
    pub const ALL: [(&'static str, Format); 10] = [
        ("catalog", Format::Catalog),
        ("mcp", Format::Mcp),
        ("openai-chat", Format::OpenAiChat),
        ("openai-chat-strict", Format::OpenAiChatStrict),
        ("openai-responses", Format::OpenAiResponses),
        ("anthropic", Format::Anthropic),
        ("gemini", Format::Gemini),
        ("gemini-legacy", Format::GeminiLegacy),
        ("prompt", Format::Prompt),
        ("openapi", Format::OpenApi),
    ];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        Format::ALL
            .iter()
            .find(|(_, format)| *format == self)
            .map_or("catalog", |(name, _)| name)
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(name: &str) -> Result<Self, String> {
        // The names before the provider formats shared one set of names across commands.
        let name = match name {
            "openai" => "openai-chat",
            "openai-strict" => "openai-chat-strict",
            name => name,
        };
        Format::ALL
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, format)| *format)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|(n, _)| *n).collect();
                format!("unknown format `{name}`; formats: {}", names.join(", "))
            })
    }
}

/// An export and what it could not carry over exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The exported JSON.
    pub value: Value,
    /// Tools exported in a weaker form, and why.
    pub warnings: Vec<ExportWarning>,
}

/// A tool exported in a weaker form than asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportWarning {
    /// The tool.
    pub tool: String,
    /// What happened, and why.
    pub message: String,
}

impl fmt::Display for ExportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool `{}`: {}", self.tool, self.message)
    }
}

/// A target that cannot express some tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError {
    /// The format asked for.
    pub target: &'static str,
    /// Each tool it cannot express, and why.
    pub problems: Vec<ExportProblem>,
}

/// One tool a target cannot express.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportProblem {
    /// The tool.
    pub tool: String,
    /// Why.
    pub message: String,
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the {} export cannot express ", self.target)?;
        for (index, problem) in self.problems.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "tool `{}` ({})", problem.tool, problem.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ExportError {}

/// Exports as [`export`] does, but leaves out the tools the format cannot express instead of
/// refusing: each one left out is a warning saying why.
pub fn export_expressible(
    format: Format,
    tools: &[&Tool],
) -> Result<(String, Vec<ExportWarning>), ExportError> {
    let error = match export(format, tools) {
        Err(error) => error,
        done => return done,
    };
    let left_out: Vec<&str> = error.problems.iter().map(|p| p.tool.as_str()).collect();
    let rest: Vec<&Tool> = tools
        .iter()
        .copied()
        .filter(|tool| !left_out.contains(&tool.name()))
        .collect();
    let (text, mut warnings) = export(format, &rest)?;
    warnings.extend(error.problems.into_iter().map(|problem| ExportWarning {
        tool: problem.tool,
        message: format!(
            "left out of the {} export: {}",
            error.target, problem.message
        ),
    }));
    Ok((text, warnings))
}

/// The catalog in `format`, as text: JSON for every format but `prompt`.
pub fn export(
    format: Format,
    tools: &[&Tool],
) -> Result<(String, Vec<ExportWarning>), ExportError> {
    let plain = |value: Value| Ok((canonical::to_string_pretty(&value), Vec::new()));
    let with_warnings = |exported: Exported| {
        Ok((
            canonical::to_string_pretty(&exported.value),
            exported.warnings,
        ))
    };
    match format {
        Format::Catalog => Ok((catalog_artefact(tools).to_json_pretty(), Vec::new())),
        Format::Prompt => Ok((prompt_list(tools), Vec::new())),
        Format::Mcp => plain(mcp_tools(tools)),
        Format::OpenAiChat => with_warnings(openai_chat_tools(tools, false)),
        Format::OpenAiChatStrict => with_warnings(openai_chat_tools(tools, true)),
        Format::OpenAiResponses => with_warnings(openai_responses_tools(tools, true)),
        Format::Anthropic => plain(anthropic_tools(tools)),
        Format::Gemini => plain(gemini_declarations(tools)),
        Format::GeminiLegacy => plain(gemini_legacy_declarations(tools)?),
        // A document of the tools alone; `list --format openapi` and `GET /openapi.json`
        // title it with the server's name and version.
        Format::OpenApi => plain(openapi(tools, "tools", "0.0.0")),
    }
}
