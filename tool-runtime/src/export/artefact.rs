//! The catalog artefact: `{version, hash, count, promptList, functionSchema}`, plus
//! `prompts` and `resources` when the catalog has any.

use super::canonical;
use super::mcp::schema_with_examples;
use crate::catalog::{Prompt, Resource, Tool, ToolExample};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The catalog as one document, for providers, prompts and CI.
///
/// `hash` is the SHA-1 of the canonical serialization of the catalog (tools sorted by name,
/// then prompts by name and resources by URI when there are any; keys sorted), so the same
/// source gives the same hash on every build and platform; `version` is its first 12
/// characters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogArtefact {
    /// The first 12 characters of `hash`.
    pub version: String,
    /// SHA-1 (hex) of the canonical catalog.
    pub hash: String,
    /// How many tools.
    pub count: usize,
    /// One entry per tool: `- name: summary`, then `  e.g. example` lines.
    pub prompt_list: String,
    /// `[{name, description, parameters}]`, plus `outputSchema` when the tool has one.
    pub function_schema: Vec<FunctionEntry>,
    /// The prompts, by name (left out when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<PromptEntry>,
    /// The resources and resource templates, by URI (left out when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ResourceEntry>,
}

/// One prompt of `prompts`: what `diff` compares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptEntry {
    /// The prompt's name.
    pub name: String,
    /// The prompt's description.
    pub description: String,
    /// Its arguments as an input schema (each a property; `required` says which must be
    /// given).
    #[serde(serialize_with = "sorted")]
    pub parameters: Value,
}

/// One resource (or resource template) of `resources`: what `diff` compares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceEntry {
    /// The URI, or the URI template.
    pub uri: String,
    /// The name clients show.
    pub name: String,
    /// The description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The MIME type of the contents, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// A template's variables as an input schema (left out for a plain resource).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "sorted_option"
    )]
    pub parameters: Option<Value>,
}

/// One tool of `functionSchema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionEntry {
    /// The tool's name.
    pub name: String,
    /// The tool's description.
    pub description: String,
    /// The canonical input schema.
    #[serde(serialize_with = "sorted")]
    pub parameters: Value,
    /// The output schema, when the tool has one (used by `diff`).
    #[serde(
        rename = "outputSchema",
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "sorted_option"
    )]
    pub output_schema: Option<Value>,
}

/// Serializes a schema with its keys sorted, whatever map type serde_json was built with.
fn sorted<S: serde::Serializer>(schema: &Value, serializer: S) -> Result<S::Ok, S::Error> {
    canonical::Sorted(schema).serialize(serializer)
}

fn sorted_option<S: serde::Serializer>(
    schema: &Option<Value>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    schema.as_ref().map(canonical::Sorted).serialize(serializer)
}

/// Builds the artefact of `tools` alone. They may come in any order; they are sorted by
/// name.
pub fn catalog_artefact(tools: &[&Tool]) -> CatalogArtefact {
    catalog_artefact_all(tools, &[], &[])
}

/// Builds the artefact of tools, prompts and resources, in any order: tools and prompts
/// are sorted by name, resources by URI.
pub fn catalog_artefact_all(
    tools: &[&Tool],
    prompts: &[&Prompt],
    resources: &[&Resource],
) -> CatalogArtefact {
    let mut tools: Vec<&Tool> = tools.to_vec();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let mut prompts: Vec<PromptEntry> = prompts
        .iter()
        .map(|prompt| PromptEntry {
            name: prompt.name().to_owned(),
            description: prompt.description().to_owned(),
            parameters: prompt.about().input_schema().clone(),
        })
        .collect();
    prompts.sort_by(|a, b| a.name.cmp(&b.name));
    let mut resources: Vec<ResourceEntry> = resources
        .iter()
        .map(|resource| ResourceEntry {
            uri: resource.uri().to_owned(),
            name: resource.name().to_owned(),
            description: resource.description().to_owned(),
            mime_type: resource.mime_type().map(str::to_owned),
            parameters: resource
                .is_template()
                .then(|| resource.about().input_schema().clone()),
        })
        .collect();
    resources.sort_by(|a, b| a.uri.cmp(&b.uri));
    let canonical_tools: Vec<Value> = tools.iter().map(|tool| canonical_tool(tool)).collect();
    // A catalog of tools alone hashes as it always has; prompts and resources join the
    // hashed document only when there are some.
    let hashed = if prompts.is_empty() && resources.is_empty() {
        Value::Array(canonical_tools)
    } else {
        serde_json::json!({
            "tools": canonical_tools,
            "prompts": serde_json::to_value(&prompts).unwrap_or_default(),
            "resources": serde_json::to_value(&resources).unwrap_or_default(),
        })
    };
    let hash = canonical::sha1_hex(canonical::to_string(&hashed).as_bytes());
    CatalogArtefact {
        version: hash[..12].to_owned(),
        hash,
        count: tools.len(),
        prompt_list: prompt_list(&tools),
        function_schema: tools
            .iter()
            .map(|tool| FunctionEntry {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                parameters: tool.input_schema().clone(),
                output_schema: tool.published_output_schema().cloned(),
            })
            .collect(),
        prompts,
        resources,
    }
}

impl CatalogArtefact {
    /// The artefact as indented JSON with sorted schema keys: byte-identical for identical
    /// source.
    pub fn to_json_pretty(&self) -> String {
        // Field order is the struct's (the documented one); schemas sort themselves (`sorted`).
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Everything callers see of a tool, with fixed keys: what the hash covers.
fn canonical_tool(tool: &Tool) -> Value {
    let mut object = Map::new();
    object.insert("name".to_owned(), tool.name().into());
    object.insert("title".to_owned(), tool.title().into());
    object.insert("description".to_owned(), tool.description().into());
    object.insert("inputSchema".to_owned(), schema_with_examples(tool));
    object.insert(
        "outputSchema".to_owned(),
        tool.published_output_schema().cloned().into(),
    );
    let annotations = tool.annotations();
    object.insert(
        "annotations".to_owned(),
        serde_json::json!({
            "readOnly": annotations.read_only,
            "destructive": annotations.destructive,
            "idempotent": annotations.idempotent,
            "openWorld": annotations.open_world,
        }),
    );
    let texts: Vec<&str> = tool
        .examples()
        .iter()
        .filter_map(|example| match example {
            ToolExample::Text(text) => Some(text.as_str()),
            ToolExample::Arguments(_) => None,
        })
        .collect();
    object.insert("textExamples".to_owned(), texts.into());
    Value::Object(object)
}

/// The human-readable list: `- name: summary`, then `  e.g. example` per example.
pub fn prompt_list(tools: &[&Tool]) -> String {
    let mut out = String::new();
    for tool in tools {
        out.push_str(&format!("- {}: {}\n", tool.name(), tool.summary()));
        for example in tool.examples() {
            let text = match example {
                ToolExample::Arguments(arguments) => canonical::to_string(arguments),
                ToolExample::Text(text) => text.clone(),
            };
            out.push_str(&format!("  e.g. {text}\n"));
        }
    }
    out
}
