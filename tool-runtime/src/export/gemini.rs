//! Gemini `functionDeclarations`, with `parametersJsonSchema` (JSON Schema) or in the
//! legacy `parameters` form (an OpenAPI 3.0 subset: no `$ref`, `nullable` instead of a
//! `"null"` type, upper-case type names).

use super::{ExportError, ExportProblem};
use crate::catalog::Tool;
use crate::schema::walk;
use serde_json::{json, Map, Value};

/// Keywords Gemini's JSON Schema mode accepts.
const JSON_SCHEMA_KEYWORDS: [&str; 20] = [
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
];

/// Keywords of the legacy OpenAPI-subset `Schema` we write.
const LEGACY_KEYWORDS: [&str; 15] = [
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "anyOf",
];

/// Formats both forms understand.
const FORMATS: [&str; 7] = [
    "date-time",
    "date",
    "time",
    "int32",
    "int64",
    "float",
    "double",
];

/// `{"functionDeclarations": [...]}` with `parametersJsonSchema`.
pub fn gemini_declarations(tools: &[&Tool]) -> Value {
    let declarations: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let mut declaration = Map::new();
            declaration.insert("name".to_owned(), tool.name().into());
            declaration.insert("description".to_owned(), tool.description().into());
            declaration.insert(
                "parametersJsonSchema".to_owned(),
                json_schema_form(tool.input_schema()),
            );
            Value::Object(declaration)
        })
        .collect();
    json!({"functionDeclarations": declarations})
}

fn json_schema_form(canonical: &Value) -> Value {
    let mut schema = canonical.clone();
    walk::transform(&mut schema, &mut |node| {
        if let Value::Bool(true) = node {
            *node = json!({});
            return;
        }
        let Value::Object(map) = node else {
            return;
        };
        if let Some(constant) = map.remove("const") {
            map.insert("enum".to_owned(), json!([constant]));
        }
        map.retain(|keyword, _| JSON_SCHEMA_KEYWORDS.contains(&keyword.as_str()));
        keep_known_format(map);
    });
    schema
}

/// `{"functionDeclarations": [...]}` with legacy `parameters`; fails, naming each tool and
/// why, when a tool's schema cannot be written in that form.
pub fn gemini_legacy_declarations(tools: &[&Tool]) -> Result<Value, ExportError> {
    let mut problems = Vec::new();
    let mut declarations = Vec::new();
    for tool in tools {
        let mut declaration = Map::new();
        declaration.insert("name".to_owned(), tool.name().into());
        declaration.insert("description".to_owned(), tool.description().into());
        let schema = tool.input_schema();
        let has_parameters = schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        if has_parameters {
            match legacy_schema(schema, schema, &mut Vec::new()) {
                Ok(parameters) => {
                    declaration.insert("parameters".to_owned(), parameters);
                }
                Err(reason) => problems.push(ExportProblem {
                    tool: tool.name().to_owned(),
                    message: reason,
                }),
            }
        }
        declarations.push(Value::Object(declaration));
    }
    if problems.is_empty() {
        Ok(json!({"functionDeclarations": declarations}))
    } else {
        Err(ExportError {
            target: "gemini-legacy",
            problems,
        })
    }
}

/// Rewrites one schema in the legacy form, inlining `$ref`s. `inlining` holds the
/// definitions being inlined, to catch recursion.
fn legacy_schema(
    schema: &Value,
    root: &Value,
    inlining: &mut Vec<String>,
) -> Result<Value, String> {
    let map = match schema {
        Value::Object(map) if !crate::schema::accepts_any(schema) => map,
        _ => {
            return Err(
                "a value accepts any JSON, which the legacy form cannot describe".to_owned(),
            )
        }
    };
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        return inline(map, reference, root, inlining);
    }
    let mut legacy = Legacy {
        root,
        inlining,
        out: Map::new(),
        nullable: false,
    };
    for (keyword, value) in map {
        legacy.keyword(keyword, value)?;
    }
    legacy.finish()
}

/// The schema a `$ref` points to, in the legacy form, keeping the description given beside
/// the reference.
fn inline(
    map: &Map<String, Value>,
    reference: &str,
    root: &Value,
    inlining: &mut Vec<String>,
) -> Result<Value, String> {
    let name = reference.rsplit('/').next().unwrap_or(reference).to_owned();
    if inlining.contains(&name) {
        return Err(format!(
            "type `{name}` contains itself, and the legacy form has no references to \
             describe a recursive type; use the `gemini` (parametersJsonSchema) export"
        ));
    }
    let target = reference
        .strip_prefix('#')
        .and_then(|pointer| root.pointer(pointer))
        .ok_or_else(|| format!("reference `{reference}` does not resolve"))?;
    inlining.push(name);
    let mut inlined = legacy_schema(target, root, inlining)?;
    inlining.pop();
    if let (Some(description), Value::Object(out)) = (map.get("description"), &mut inlined) {
        out.insert("description".to_owned(), description.clone());
    }
    Ok(inlined)
}

/// One schema object being rewritten in the legacy form, keyword by keyword.
struct Legacy<'a> {
    root: &'a Value,
    inlining: &'a mut Vec<String>,
    out: Map<String, Value>,
    /// Whether `null` is one of the values (the legacy form says so with `nullable`).
    nullable: bool,
}

impl Legacy<'_> {
    /// Rewrites `keyword`; a keyword the legacy form has no way to say is an error, one it
    /// does not know is left out.
    fn keyword(&mut self, keyword: &str, value: &Value) -> Result<(), String> {
        match keyword {
            "type" => self.types(value),
            "anyOf" | "oneOf" => self.branches(value)?,
            "properties" => {
                let mut properties = Map::new();
                for (name, property) in value.as_object().into_iter().flatten() {
                    let property = legacy_schema(property, self.root, self.inlining)
                        .map_err(|reason| format!("parameter `{name}`: {reason}"))?;
                    properties.insert(name.clone(), property);
                }
                self.out
                    .insert("properties".to_owned(), Value::Object(properties));
            }
            "items" => {
                let items = legacy_schema(value, self.root, self.inlining)?;
                self.out.insert("items".to_owned(), items);
            }
            "additionalProperties" if value.is_object() || value == &Value::Bool(true) => {
                return Err(
                    "an object takes free-form keys (a map), which the legacy form cannot describe"
                        .to_owned(),
                );
            }
            "const" => {
                self.out.insert("enum".to_owned(), json!([value]));
            }
            "enum" => self.enumeration(value),
            other if LEGACY_KEYWORDS.contains(&other) => {
                self.out.insert(other.to_owned(), value.clone());
            }
            _ => {}
        }
        Ok(())
    }

    /// `type`: upper case; a list of types becomes `nullable` and an `anyOf`.
    fn types(&mut self, value: &Value) {
        match value {
            Value::String(kind) => {
                self.out.insert("type".to_owned(), upper(kind).into());
            }
            Value::Array(kinds) => {
                let named: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
                self.nullable = named.contains(&"null");
                let rest: Vec<&str> = named.into_iter().filter(|k| *k != "null").collect();
                match rest.as_slice() {
                    [one] => {
                        self.out.insert("type".to_owned(), upper(one).into());
                    }
                    _ => {
                        let branches: Vec<Value> =
                            rest.iter().map(|k| json!({"type": upper(k)})).collect();
                        self.out.insert("anyOf".to_owned(), Value::Array(branches));
                    }
                }
            }
            _ => {}
        }
    }

    /// `anyOf` or `oneOf`: a `null` branch becomes `nullable`, and one branch left stands
    /// for itself.
    fn branches(&mut self, value: &Value) -> Result<(), String> {
        let mut kept = Vec::new();
        for branch in value.as_array().into_iter().flatten() {
            if branch.get("type").and_then(Value::as_str) == Some("null") {
                self.nullable = true;
            } else {
                kept.push(legacy_schema(branch, self.root, self.inlining)?);
            }
        }
        if kept.len() == 1 {
            if let Some(Value::Object(only)) = kept.pop() {
                for (key, value) in only {
                    self.out.entry(key).or_insert(value);
                }
            }
        } else {
            self.out.insert("anyOf".to_owned(), Value::Array(kept));
        }
        Ok(())
    }

    /// `enum`: the legacy form only has string enums; a `null` option is `nullable`.
    fn enumeration(&mut self, value: &Value) {
        let options: Vec<&Value> = value.as_array().into_iter().flatten().collect();
        if options.iter().any(|o| o.is_null()) {
            self.nullable = true;
        }
        let strings: Vec<Value> = options
            .into_iter()
            .filter(|o| o.is_string())
            .cloned()
            .collect();
        if !strings.is_empty() {
            self.out.insert("enum".to_owned(), Value::Array(strings));
        }
    }

    /// The rewritten schema, refused when it is an object without named fields (which the
    /// legacy form rejects).
    fn finish(mut self) -> Result<Value, String> {
        let out = &mut self.out;
        if self.nullable {
            out.insert("nullable".to_owned(), true.into());
        }
        if out.get("type").and_then(Value::as_str) == Some("OBJECT")
            && out
                .get("properties")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty)
        {
            return Err("an object without named fields, which the legacy form rejects".to_owned());
        }
        if out.contains_key("enum") {
            out.insert("format".to_owned(), "enum".into());
        } else {
            keep_known_format(out);
        }
        Ok(Value::Object(self.out))
    }
}

fn upper(kind: &str) -> String {
    kind.to_ascii_uppercase()
}

fn keep_known_format(map: &mut Map<String, Value>) {
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| !FORMATS.contains(&format))
    {
        map.remove("format");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keywords Gemini's JSON Schema form does not take go at every depth; `const` becomes a
    /// one-value `enum`, `true` an empty schema.
    #[test]
    fn json_schema_form_keeps_only_known_keywords_at_every_depth() {
        let canonical = json!({
            "type": "object",
            "properties": {
                "list": {"type": "array", "uniqueItems": true, "items": {"$ref": "#/$defs/Item"}},
                "either": {"anyOf": [{"const": "a", "readOnly": true}, true]}
            },
            "$defs": {
                "Item": {"type": "object", "patternProperties": {"^x": {}}, "minProperties": 1}
            }
        });
        assert_eq!(
            json_schema_form(&canonical),
            json!({
                "type": "object",
                "properties": {
                    "list": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                    "either": {"anyOf": [{"enum": ["a"]}, {}]}
                },
                "$defs": {"Item": {"type": "object"}}
            })
        );
    }
}
