//! Checks a JSON object of arguments against a root object schema, and says what is wrong
//! in words a model can act on: which place, what was expected, what came.
//!
//! The check is the schema's own (the `jsonschema` crate, or the small exact validator in
//! [`simple`](super::simple) when every property schema is simple), so what the schema
//! accepts and what a call accepts are the same by construction. The one deliberate
//! difference: `null` for a parameter means "absent", because clients in strict modes (such
//! as OpenAI's) send `null` for optional parameters they do not use.

use super::describe::{self, PathSegment};
use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde_json::{Map, Value};

/// How arguments are checked against one root schema, decided once per schema.
pub(crate) enum Validator {
    /// Every parameter has a simple schema: checked by [`simple`](super::simple).
    Simple,
    /// Anything else: a compiled `jsonschema` validator.
    Full(Box<jsonschema::Validator>),
    /// The schema did not compile (a bug, logged by the caller): only names are checked.
    Unchecked,
}

/// One way the arguments break the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// Where, as a caller writes it (`units`, `filter.limit`, `tags[2]`); empty for the
    /// arguments as a whole.
    pub(crate) path: String,
    /// One sentence naming the place, what was expected and what came.
    pub(crate) message: String,
}

impl Problem {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl Validator {
    /// The validator for a root object schema; `Err` says why the schema does not compile.
    pub(crate) fn for_schema(schema: &Value) -> Result<Validator, String> {
        if super::simple::is_simple(schema) {
            return Ok(Validator::Simple);
        }
        jsonschema::validator_for(schema)
            .map(|validator| Validator::Full(Box::new(validator)))
            .map_err(|error| error.to_string())
    }

    /// Every problem with `input` (a JSON object) against `schema`, the root schema this
    /// validator was made for; empty when the arguments fit.
    pub(crate) fn problems(&self, schema: &Value, input: &Value) -> Vec<Problem> {
        let empty = Map::new();
        let arguments = input.as_object().unwrap_or(&empty);
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
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str);
        for name in required {
            if arguments.get(name).is_none_or(Value::is_null) {
                let expected = properties
                    .get(name)
                    .map(|property| describe::describe(property, schema))
                    .unwrap_or_default();
                problems.push(Problem::new(
                    name,
                    format!("missing required parameter '{name}' ({expected})"),
                ));
            }
        }

        let validator = match self {
            Validator::Full(validator) => validator,
            Validator::Unchecked => return problems,
            Validator::Simple => {
                for (key, value) in arguments {
                    if let (false, Some(property)) = (value.is_null(), properties.get(key)) {
                        let mut path = vec![PathSegment::Key(key.clone())];
                        super::simple::check(property, value, &mut path, schema, &mut problems);
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
            problems.push(Problem::new(shown, problem));
        }
        problems
    }
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

fn unexpected_parameter(key: &str, properties: &Map<String, Value>) -> Problem {
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
    Problem::new(key, message)
}
