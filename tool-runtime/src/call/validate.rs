//! Checks a call's arguments against the tool's schema, and says what is wrong in words a
//! model can act on: which parameter, what was expected, what came.
//!
//! Validation uses the tool's own schema (through the `jsonschema` crate), so what the
//! schema accepts and what a call accepts are the same by construction. The one deliberate
//! difference: `null` for a parameter means "absent", because clients in strict modes (such
//! as OpenAI's) send `null` for optional parameters they do not use.

use super::error::ArgumentProblem;
use crate::catalog::{Checker, Tool};
use crate::schema::describe::{self, PathSegment};
use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde_json::{Map, Value};

/// Every problem with `input` (a JSON object) for `tool`; empty when the call may go ahead.
pub(crate) fn problems(tool: &Tool, input: &Value) -> Vec<ArgumentProblem> {
    let empty = Map::new();
    let arguments = input.as_object().unwrap_or(&empty);
    let schema = tool.input_schema();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut problems = Vec::new();

    for key in arguments.keys() {
        if !properties.contains_key(key) {
            problems.push(unexpected_parameter(key, properties));
        }
    }
    for param in tool.params() {
        let absent = arguments.get(param.name()).is_none_or(Value::is_null);
        if param.is_required() && absent {
            let expected = properties
                .get(param.name())
                .map(|property| describe::describe(property, schema))
                .unwrap_or_default();
            problems.push(ArgumentProblem::new(
                param.name(),
                format!("missing required parameter '{}' ({expected})", param.name()),
            ));
        }
    }

    let validator = match tool.checker() {
        Checker::Full(validator) => validator,
        Checker::Unchecked => return problems,
        Checker::Simple => {
            for (key, value) in arguments {
                if let (false, Some(property)) = (value.is_null(), properties.get(key)) {
                    let mut path = vec![PathSegment::Key(key.clone())];
                    crate::schema::simple::check(property, value, &mut path, schema, &mut problems);
                }
            }
            return problems;
        }
    };
    let cleaned: Value;
    let instance = if arguments.values().any(Value::is_null) {
        cleaned = without_nulls(arguments);
        &cleaned
    } else {
        input
    };
    if validator.is_valid(instance) {
        return problems;
    }
    let mut seen_paths: Vec<String> = Vec::new();
    for error in validator.iter_errors(instance) {
        let path: Vec<PathSegment> = error
            .instance_path()
            .segments()
            .map(|segment| match segment {
                LocationSegment::Property(name) => PathSegment::Key(name.into_owned()),
                LocationSegment::Index(index) => PathSegment::Index(index),
            })
            .collect();
        let shown = describe::format_path(&path);
        let problem = match error.kind() {
            // Names at the top level were checked above, with better messages.
            ValidationErrorKind::Required { .. }
            | ValidationErrorKind::AdditionalProperties { .. }
                if path.is_empty() =>
            {
                continue
            }
            ValidationErrorKind::Required { property } => {
                let field = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_owned);
                let mut field_path = path.clone();
                field_path.push(PathSegment::Key(field.clone()));
                let expected = describe::subschema_at(schema, &field_path)
                    .map(|s| format!(" ({})", describe::describe(s, schema)))
                    .unwrap_or_default();
                format!("'{shown}' is missing required field '{field}'{expected}")
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let fields: Vec<String> = unexpected.iter().map(|f| format!("'{f}'")).collect();
                let expected = describe::subschema_at(schema, &path)
                    .map(|s| format!("; expected {}", describe::describe(s, schema)))
                    .unwrap_or_default();
                format!(
                    "'{shown}' has unexpected field {}{expected}",
                    fields.join(", ")
                )
            }
            _ => {
                if seen_paths.contains(&shown) {
                    continue;
                }
                let expected = describe::subschema_at(schema, &path)
                    .map(|s| describe::describe(s, schema))
                    .unwrap_or_else(|| "a value of the documented shape".to_owned());
                format!(
                    "'{shown}' must be {expected}; got {}",
                    describe::compact(error.instance())
                )
            }
        };
        seen_paths.push(shown.clone());
        problems.push(ArgumentProblem::new(shown, problem));
    }
    problems
}

/// The arguments without `null` values: a `null` means the parameter was left out.
fn without_nulls(arguments: &Map<String, Value>) -> Value {
    Value::Object(
        arguments
            .iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
    )
}

fn unexpected_parameter(key: &str, properties: &Map<String, Value>) -> ArgumentProblem {
    let closest = properties
        .keys()
        .map(|name| (strsim::jaro_winkler(key, name), name))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name);
    let message = match closest {
        Some(name) => format!("unexpected parameter '{key}'; did you mean '{name}'?"),
        None if properties.is_empty() => {
            format!("unexpected parameter '{key}'; this tool takes no parameters")
        }
        None => {
            let names: Vec<&str> = properties.keys().map(String::as_str).collect();
            format!(
                "unexpected parameter '{key}'; parameters are: {}",
                names.join(", ")
            )
        }
    };
    ArgumentProblem::new(key, message)
}
