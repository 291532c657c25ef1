//! Provider exports and the catalog artefact: golden files in `tests/golden/` (regenerate
//! with `UPDATE_GOLDEN=1` and review the diff), and every keyword checked against what its
//! target accepts.

#[path = "../fixtures/travel.rs"]
mod travel;

use serde_json::{json, Value};
use std::collections::BTreeSet;
use tool_runtime::catalog::{Catalog, Tool};
use tool_runtime::export::{self, Format};
use tool_tests::golden;

fn tools() -> Vec<&'static Tool> {
    Catalog::global().expect("catalog").tools().iter().collect()
}

fn named(names: &[&str]) -> Vec<&'static Tool> {
    tools()
        .into_iter()
        .filter(|t| names.contains(&t.name()))
        .collect()
}

fn exported(format: Format, tools: &[&Tool]) -> String {
    let (text, _) = export::export(format, tools).expect("export");
    text
}

#[test]
fn every_format_matches_its_golden_file() {
    let all = tools();
    for (file, format) in [
        ("catalog.json", Format::Catalog),
        ("mcp.json", Format::Mcp),
        ("openai.json", Format::OpenAiChat),
        ("openai-strict.json", Format::OpenAiChatStrict),
        ("openai-responses.json", Format::OpenAiResponses),
        ("anthropic.json", Format::Anthropic),
        ("gemini.json", Format::Gemini),
        ("prompt.txt", Format::Prompt),
        ("openapi.json", Format::OpenApi),
    ] {
        golden(file, &exported(format, &all));
    }
    // The legacy form cannot express every tool; its golden file holds those it can.
    golden(
        "gemini-legacy.json",
        &exported(
            Format::GeminiLegacy,
            &named(&["always_fails", "health", "plan_trip"]),
        ),
    );
}

#[test]
fn the_artefact_is_byte_identical_and_its_hash_is_sha1_of_the_canonical_catalog() {
    let all = tools();
    let first = export::catalog_artefact(&all);
    let mut reversed = all.clone();
    reversed.reverse();
    let second = export::catalog_artefact(&reversed);
    assert_eq!(
        first.to_json_pretty(),
        second.to_json_pretty(),
        "tool order does not matter"
    );
    assert_eq!(first.hash.len(), 40);
    assert!(first.hash.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(first.version, first.hash[..12]);
    assert_eq!(first.count, 6);

    // Any change to what callers see changes the hash.
    let fewer = export::catalog_artefact(&named(&["health", "inspect"]));
    assert_ne!(fewer.hash, first.hash);

    let parsed: Value = serde_json::from_str(&first.to_json_pretty()).unwrap();
    let keys: Vec<&String> = parsed.as_object().unwrap().keys().collect();
    let mut expected = vec!["version", "hash", "count", "promptList", "functionSchema"];
    expected.sort();
    let mut keys_sorted: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
    keys_sorted.sort();
    assert_eq!(keys_sorted, expected);
    assert_eq!(
        parsed["functionSchema"][0],
        json!({
            "name": "always_fails",
            "description": "Fail on purpose, to show how tool errors look.",
            "parameters": {
                "type": "object",
                "properties": {"reason": {"type": "string", "description": "Why it fails."}},
                "required": ["reason"],
                "additionalProperties": false
            }
        })
    );
}

#[test]
fn the_prompt_list_follows_the_seed() {
    let text = export::prompt_list(&named(&["plan_trip", "health"]));
    assert_eq!(
        text,
        "- health: Check that the service answers.\n\
         - plan_trip: Plan a trip to a destination, with stops on the way.\n  \
         e.g. {\"destination\":{\"city\":\"Lima\",\"country\":\"PE\"},\
         \"mode\":\"plane\",\"stops\":[]}\n  \
         e.g. plan a train trip to Paris with a night in Lyon\n"
    );
}

// What each target accepts, from its documentation, written apart from the exporter's own
// lists. The OpenAI strict and Gemini lists agree with the exporters' (which keep only what
// they list), so those checks mostly guard the walk; the unit tests in `export::openai` and
// `export::gemini` prove the stripping at every depth, and a documentation mistake would sit
// in both places.
const JSON_SCHEMA_2020: &[&str] = &[
    "$defs",
    "$ref",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "description",
    "default",
    "examples",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "title",
];
const OPENAI_STRICT: &[&str] = &[
    "$defs",
    "$ref",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "description",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
const GEMINI_JSON_SCHEMA: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "oneOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
];
const GEMINI_LEGACY: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// Every keyword used anywhere in `schema`, with where it is.
fn keywords(schema: &Value, at: &str, out: &mut Vec<(String, String)>) {
    let Value::Object(map) = schema else { return };
    for (key, value) in map {
        out.push((key.clone(), at.to_owned()));
        match key.as_str() {
            "properties" | "$defs" => {
                for (name, child) in value.as_object().into_iter().flatten() {
                    keywords(child, &format!("{at}/{key}/{name}"), out);
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                for (index, child) in value.as_array().into_iter().flatten().enumerate() {
                    keywords(child, &format!("{at}/{key}/{index}"), out);
                }
            }
            "items" | "additionalProperties" | "not" => {
                keywords(value, &format!("{at}/{key}"), out)
            }
            _ => {}
        }
    }
}

fn assert_only(schemas: &[(String, &Value)], allowed: &[&str], target: &str) {
    let mut bad = BTreeSet::new();
    for (tool, schema) in schemas {
        let mut found = Vec::new();
        keywords(schema, tool, &mut found);
        for (keyword, at) in found {
            if !allowed.contains(&keyword.as_str()) {
                bad.insert(format!("{keyword} at {at}"));
            }
        }
    }
    assert!(bad.is_empty(), "{target} does not accept: {bad:#?}");
}

#[test]
fn every_keyword_is_one_its_target_accepts() {
    let all = tools();
    let mcp = export::mcp_tools(&all);
    let schemas: Vec<(String, &Value)> = mcp
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| {
            let name = t["name"].as_str().unwrap().to_owned();
            [(name.clone(), &t["inputSchema"])]
                .into_iter()
                .chain(t.get("outputSchema").map(|o| (name, o)))
        })
        .collect();
    assert_only(&schemas, JSON_SCHEMA_2020, "MCP");

    let anthropic = export::anthropic_tools(&all);
    let schemas: Vec<(String, &Value)> = anthropic
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), &t["input_schema"]))
        .collect();
    assert_only(&schemas, JSON_SCHEMA_2020, "Anthropic");

    for exported in [
        export::openai_chat_tools(&all, true),
        export::openai_responses_tools(&all, true),
    ] {
        let schemas: Vec<(String, &Value)> = exported
            .value
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.get("function").unwrap_or(t))
            .filter(|f| f["strict"] == true)
            .map(|f| (f["name"].as_str().unwrap().to_owned(), &f["parameters"]))
            .collect();
        assert_eq!(
            schemas.len(),
            4,
            "all but the map and the any-value tool are strict"
        );
        assert_only(&schemas, OPENAI_STRICT, "OpenAI strict");
        for (tool, schema) in &schemas {
            assert_strict_objects(schema, tool);
        }
    }

    let gemini = export::gemini_declarations(&all);
    let schemas: Vec<(String, &Value)> = gemini["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_owned(),
                &d["parametersJsonSchema"],
            )
        })
        .collect();
    assert_only(&schemas, GEMINI_JSON_SCHEMA, "Gemini");

    let legacy =
        export::gemini_legacy_declarations(&named(&["always_fails", "health", "plan_trip"]))
            .unwrap();
    let schemas: Vec<(String, &Value)> = legacy["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| {
            d.get("parameters")
                .map(|p| (d["name"].as_str().unwrap().to_owned(), p))
        })
        .collect();
    assert_only(&schemas, GEMINI_LEGACY, "Gemini legacy");
    let text = legacy.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("\"null\""),
        "{text}"
    );
    for kind in [
        "\"type\":\"object\"",
        "\"type\":\"string\"",
        "\"type\":\"integer\"",
    ] {
        assert!(!text.contains(kind), "legacy types are upper case: {kind}");
    }
}

/// Strict mode: every object closed, every property required.
fn assert_strict_objects(schema: &Value, at: &str) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Object(properties)) = map.get("properties") {
        assert_eq!(
            map.get("additionalProperties"),
            Some(&Value::Bool(false)),
            "{at}"
        );
        let required: BTreeSet<&str> = map["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let names: BTreeSet<&str> = properties.keys().map(String::as_str).collect();
        assert_eq!(required, names, "{at}: every property is required");
        for (name, child) in properties {
            assert_strict_objects(child, &format!("{at}.{name}"));
        }
    }
    if map.contains_key("$ref") {
        assert_eq!(map.len(), 1, "{at}: $ref stands alone");
    }
    for key in ["items", "$defs", "anyOf"] {
        match map.get(key) {
            Some(Value::Object(children)) if key == "$defs" => {
                for (name, child) in children {
                    assert_strict_objects(child, &format!("{at}/$defs/{name}"));
                }
            }
            Some(Value::Array(children)) => {
                children.iter().for_each(|c| assert_strict_objects(c, at))
            }
            Some(child @ Value::Object(_)) => assert_strict_objects(child, at),
            _ => {}
        }
    }
}

#[test]
fn targets_that_cannot_express_a_tool_say_which_and_why() {
    let strict = export::openai_chat_tools(&tools(), true);
    let warned: Vec<(&str, &str)> = strict
        .warnings
        .iter()
        .map(|w| (w.tool.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        warned,
        [
            (
                "inspect",
                "exported with strict: false: \
                 a value accepts any JSON, which strict mode cannot describe",
            ),
            (
                "tag_items",
                "exported with strict: false: an object takes free-form keys (a map), \
                 but strict mode needs every key named",
            ),
        ]
    );

    let error = export::gemini_legacy_declarations(&tools()).unwrap_err();
    let problems: Vec<(&str, &str)> = error
        .problems
        .iter()
        .map(|p| (p.tool.as_str(), p.message.as_str()))
        .collect();
    assert_eq!(
        problems,
        [
            (
                "inspect",
                "parameter `value`: \
                 a value accepts any JSON, which the legacy form cannot describe",
            ),
            (
                "org_chart",
                "parameter `root`: parameter `reports`: type `Employee` contains itself, \
                 and the legacy form has no references to describe a recursive type; \
                 use the `gemini` (parametersJsonSchema) export",
            ),
            (
                "tag_items",
                "parameter `tags`: an object takes free-form keys (a map), \
                 which the legacy form cannot describe",
            ),
        ]
    );
}

#[test]
fn the_check_of_this_catalog_passes_with_warnings_and_sizes() {
    tool_runtime::assert_catalog_ok!();
    let report = tool_runtime::check::check(&tools());
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.sizes.len(), 6);
    assert!(
        report.sizes.windows(2).all(|w| w[0].bytes >= w[1].bytes),
        "largest first"
    );
    assert_eq!(report.sizes[0].name, "plan_trip");
    let mcp_size = serde_json::to_string(&export::mcp_tool(
        tools().iter().find(|t| t.name() == "health").unwrap(),
    ))
    .unwrap()
    .len();
    assert_eq!(
        report
            .sizes
            .iter()
            .find(|s| s.name == "health")
            .unwrap()
            .bytes,
        mcp_size
    );
    assert!(report
        .warnings()
        .any(|w| w.name == "org_chart" && w.message.contains("Gemini's legacy schema")));
}
