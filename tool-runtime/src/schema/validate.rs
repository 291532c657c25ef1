//! Checks a JSON object of arguments against a root object schema, and says what is wrong
//! in words a model can act on: which place, what was expected, what came.
//!
//! The check is the schema's own (the validator of whole schemas in [`full`](super::full),
//! or the small one in [`simple`](super::simple) when every property schema is simple, which
//! allocates nothing when arguments fit), so what the schema
//! accepts and what a call accepts are the same by construction. The one deliberate
//! difference: `null` for a parameter means "absent", because clients in strict modes (such
//! as OpenAI's) send `null` for optional parameters they do not use.

use super::describe::{self, PathSegment};
use super::full::{self, ErrorKind};
use serde_json::{Map, Value};

/// How arguments are checked against one root schema, decided once per schema.
pub(crate) enum Validator {
    /// Every parameter has a simple schema: checked by [`simple`](super::simple).
    Simple(super::simple::Compiled),
    /// Anything else: the whole schema, compiled.
    Full(Box<full::Compiled>),
    /// The schema cannot be checked (the registry refuses such a schema; this is for a
    /// registry built only to describe its tools): every call is refused with the reason,
    /// never let through unchecked.
    Refused(String),
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
    /// The validator for a root object schema; `Err` says why the schema cannot be checked.
    pub(crate) fn for_schema(schema: &Value) -> Result<Validator, String> {
        if super::simple::is_simple(schema) {
            return Ok(Validator::Simple(super::simple::Compiled::new(schema)));
        }
        full::Compiled::new(schema).map(|compiled| Validator::Full(Box::new(compiled)))
    }

    /// Every problem with `input` (a JSON object) against `schema`, the root schema this
    /// validator was made for; empty when the arguments fit.
    pub(crate) fn problems(&self, schema: &Value, input: &Value) -> Vec<Problem> {
        let empty = Map::new();
        let arguments = input.as_object().unwrap_or(&empty);
        // Read from the schema only when there are problems to word (not on the way of
        // arguments that fit a simple schema, the common case).
        let root = || Root::of(schema, &empty);
        match self {
            Validator::Refused(reason) => vec![Problem::new(
                "",
                format!(
                    "the tool's input schema cannot be checked, so no call is accepted: {reason}"
                ),
            )],
            Validator::Simple(compiled) if compiled.accepts(arguments) => Vec::new(),
            Validator::Simple(compiled) => {
                let mut problems = root().name_problems(arguments);
                compiled.check_values(arguments, schema, &mut problems);
                problems
            }
            Validator::Full(validator) => {
                let root = root();
                let mut problems = root.name_problems(arguments);
                let cleaned: Value;
                let instance = if arguments.values().any(Value::is_null) {
                    cleaned = without_nulls(arguments);
                    &cleaned
                } else {
                    input
                };
                if !validator.is_valid(instance) {
                    root.value_problems(validator, instance, &mut problems);
                }
                problems
            }
        }
    }
}

/// A root object schema, as the checks of arguments read it.
struct Root<'a> {
    schema: &'a Value,
    properties: &'a Map<String, Value>,
    required: Vec<&'a str>,
    /// A schema of our own making is closed; one written by hand may leave it open.
    closed: bool,
}

impl<'a> Root<'a> {
    fn of(schema: &'a Value, empty: &'a Map<String, Value>) -> Root<'a> {
        Root {
            schema,
            properties: schema
                .get("properties")
                .and_then(Value::as_object)
                .unwrap_or(empty),
            required: schema.as_object().map(super::required).unwrap_or_default(),
            closed: schema.get("additionalProperties") == Some(&Value::Bool(false)),
        }
    }

    /// The problems with the names of the arguments: unknown ones (of a closed schema),
    /// and required ones missing (or `null`, which counts as absent).
    fn name_problems(&self, arguments: &Map<String, Value>) -> Vec<Problem> {
        let mut problems = Vec::new();
        for key in arguments.keys() {
            if self.closed && !self.properties.contains_key(key) {
                problems.push(unexpected_parameter(key, self.properties));
            }
        }
        for &name in &self.required {
            if arguments.get(name).is_none_or(Value::is_null) {
                let expected = self.described(name).unwrap_or_default();
                problems.push(Problem::new(
                    name,
                    format!("missing required parameter '{name}' ({expected})"),
                ));
            }
        }
        problems
    }

    /// The parameter `name`, described in words.
    fn described(&self, name: &str) -> Option<String> {
        let property = self.properties.get(name)?;
        Some(describe::describe(property, self.schema))
    }

    /// The problems the full validator finds in `instance`, one per place, added to
    /// `problems`; never none (the validator refused the arguments).
    fn value_problems(
        &self,
        validator: &full::Compiled,
        instance: &Value,
        problems: &mut Vec<Problem>,
    ) {
        let mut seen_paths: Vec<String> = Vec::new();
        let mut first_error = None;
        for error in validator.errors(instance) {
            first_error.get_or_insert_with(|| error.to_string());
            let shown = describe::format_path(&error.path);
            if let Some(problem) = self.problem(&error, &shown, &seen_paths, problems) {
                seen_paths.push(shown.clone());
                problems.push(Problem::new(shown, problem));
            }
        }
        // The validator refused the arguments: never let them through with no problem said.
        if problems.is_empty() {
            let why = first_error.unwrap_or_else(|| "they do not fit the schema".to_owned());
            problems.push(Problem::new(
                "",
                format!("the arguments break a rule of the schema: {why}"),
            ));
        }
    }

    /// One validator error, in words, at its place (shown as `shown`); `None` for what was
    /// said already (names at the top level, a place with a problem told). Unknown names
    /// at the top level that only `unevaluatedProperties` refuses are added to `problems`
    /// one by one, as those of a closed schema are.
    fn problem(
        &self,
        error: &full::Error,
        shown: &str,
        seen_paths: &[String],
        problems: &mut Vec<Problem>,
    ) -> Option<String> {
        let schema = self.schema;
        let path = error.path.as_slice();
        Some(match &error.kind {
            // Names at the top level were checked first, with better messages: the root's
            // own `required` list, and unknown names of a closed schema.
            ErrorKind::Required { property }
                if path.is_empty() && self.required.contains(&property.as_str()) =>
            {
                return None
            }
            ErrorKind::AdditionalProperties { .. } if path.is_empty() && self.closed => {
                return None
            }
            ErrorKind::AdditionalProperties { unexpected } if path.is_empty() => {
                for name in unexpected {
                    if !problems.iter().any(|p| p.path == *name) {
                        problems.push(unexpected_parameter(name, self.properties));
                    }
                }
                return None;
            }
            // Required by a condition or a composition of the root (`if`/`then`, `allOf`,
            // `anyOf`): said with the parameter's description.
            ErrorKind::Required { property } if path.is_empty() => {
                let name = property.clone();
                let expected = self
                    .described(&name)
                    .map(|described| format!(" ({described})"))
                    .unwrap_or_default();
                format!(
                    "missing required parameter '{name}'{expected}, which the schema requires \
                     given the other arguments"
                )
            }
            ErrorKind::Required { property } => {
                let field = property.clone();
                let mut field_path = path.to_vec();
                field_path.push(PathSegment::Key(field.clone()));
                let expected = describe::subschema_at(schema, &field_path)
                    .map(|s| format!(" ({})", describe::describe(s, schema)))
                    .unwrap_or_default();
                format!("'{shown}' is missing required field '{field}'{expected}")
            }
            ErrorKind::AdditionalProperties { unexpected } => {
                let fields: Vec<String> = unexpected.iter().map(|f| format!("'{f}'")).collect();
                let expected = describe::subschema_at(schema, path)
                    .map(|s| format!("; expected {}", describe::describe(s, schema)))
                    .unwrap_or_default();
                format!(
                    "'{shown}' has unexpected field {}{expected}",
                    fields.join(", ")
                )
            }
            // A rule of the whole object (a composition, a condition): the validator's own
            // words name it.
            _ if path.is_empty() => format!("the arguments break a rule of the schema: {error}"),
            _ if seen_paths.iter().any(|seen| seen == shown) => return None,
            _ => {
                let problem = self.value_problem(path, shown, &error.instance);
                // A schema with a type is said in words that name each of its rules
                // ("between 0 and 255", "a multiple of 0.01"); without one, the rule the
                // value broke is named as the validator says it.
                let typed =
                    describe::subschema_at(schema, path).is_some_and(|at| at.get("type").is_some());
                const VALUE_RULES: [&str; 13] = [
                    "`minimum`",
                    "`maximum`",
                    "`exclusiveMinimum`",
                    "`exclusiveMaximum`",
                    "`multipleOf`",
                    "`minLength`",
                    "`maxLength`",
                    "`pattern`",
                    "`minItems`",
                    "`maxItems`",
                    "`uniqueItems`",
                    "`minProperties`",
                    "`maxProperties`",
                ];
                match &error.kind {
                    ErrorKind::Rule(rule)
                        if !typed && VALUE_RULES.iter().any(|named| rule.contains(named)) =>
                    {
                        format!("{problem} ({rule})")
                    }
                    _ => problem,
                }
            }
        })
    }

    /// A value at `path` (shown as `shown`) that does not fit its schema: what was expected
    /// and what came.
    fn value_problem(&self, path: &[PathSegment], shown: &str, value: &Value) -> String {
        let schema = self.schema;
        let at = describe::subschema_at(schema, path);
        // A union told apart by a tag is judged by the tag the value gives.
        let tagged = at
            .and_then(|s| super::tagged::Tagged::of(s, schema))
            .and_then(|t| t.problem(shown, value, schema));
        tagged.unwrap_or_else(|| {
            let expected = at.map_or_else(
                || "a value of the documented shape".to_owned(),
                |s| describe::describe(s, schema),
            );
            format!(
                "'{shown}' must be {expected}; got {}",
                describe::compact(value)
            )
        })
    }
}

/// Problems as one text: sentences joined with `. `, except after one that already ends
/// (a did-you-mean question), which gets a space only.
pub(crate) fn join_problems<'a>(messages: impl IntoIterator<Item = &'a str>) -> String {
    let mut joined = String::new();
    for message in messages {
        if !joined.is_empty() {
            let ended = joined.ends_with(['.', '?', '!']);
            joined.push_str(if ended { " " } else { ". " });
        }
        joined.push_str(message);
    }
    joined
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
    let closest = tool_rules::closest(key, properties.keys().map(String::as_str), 0.8);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(schema: &Value, input: Value) -> Vec<String> {
        Validator::for_schema(schema)
            .unwrap()
            .problems(schema, &input)
            .into_iter()
            .map(|p| p.message)
            .collect()
    }

    #[test]
    fn a_price_in_cents_fits_a_step_of_a_cent_and_a_refusal_names_the_step() {
        let schema = json!({
            "type": "object",
            "properties": {"price": {"type": "object", "properties": {
                "amount": {"type": "number", "multipleOf": 0.01}
            }}}
        });
        for amount in [0.07, 19.99, 0.1, 1234.56] {
            let said = problems(&schema, json!({"price": {"amount": amount}}));
            assert!(said.is_empty(), "{amount}: {said:?}");
        }
        let said = problems(&schema, json!({"price": {"amount": 0.075}}));
        assert_eq!(
            said,
            ["'price.amount' must be a number that is a multiple of 0.01; got 0.075"]
        );
    }

    #[test]
    fn every_rule_a_value_breaks_is_named_in_its_refusal() {
        // Nested under an object, so the whole-schema validator finds them; each keyword
        // that reads a value alone, a value that breaks only it, and the words that name
        // it: in the description of a typed schema, or as the validator says it.
        let cases = [
            (
                json!({"type": "integer", "minimum": 5}),
                json!(4),
                "an integer of at least 5",
            ),
            (
                json!({"type": "integer", "maximum": 5}),
                json!(6),
                "an integer of at most 5",
            ),
            (
                json!({"type": "number", "exclusiveMinimum": 5}),
                json!(5),
                "a number that is above 5",
            ),
            (
                json!({"type": "number", "exclusiveMaximum": 5}),
                json!(5),
                "a number that is below 5",
            ),
            (
                json!({"type": "number", "multipleOf": 0.5}),
                json!(0.75),
                "a number that is a multiple of 0.5",
            ),
            (
                json!({"type": "string", "minLength": 3}),
                json!("ab"),
                "a string of at least 3 characters",
            ),
            (
                json!({"type": "string", "maxLength": 1}),
                json!("ab"),
                "a string of at most 1 character",
            ),
            (
                json!({"type": "string", "pattern": "^a"}),
                json!("b"),
                "a string matching the pattern ^a",
            ),
            (
                json!({"type": "array", "minItems": 2}),
                json!([1]),
                "of at least 2 items",
            ),
            (
                json!({"type": "array", "maxItems": 1}),
                json!([1, 2]),
                "of at most 1 items",
            ),
            (
                json!({"type": "array", "uniqueItems": true}),
                json!([1, 1]),
                "(no duplicates)",
            ),
            (json!({"enum": ["a", "b"]}), json!("c"), "\"a\", \"b\""),
            (json!({"const": "a"}), json!("c"), "\"a\""),
            (json!({"minimum": 5}), json!(4), "`minimum`"),
            (
                json!({"multipleOf": 0.01}),
                json!(0.075),
                "`multipleOf` 0.01",
            ),
            (json!({"maxLength": 1}), json!("ab"), "`maxLength`"),
            (json!({"pattern": "^a"}), json!("b"), "`pattern`"),
            (json!({"uniqueItems": true}), json!([1, 1]), "`uniqueItems`"),
        ];
        for (rule, value, words) in cases {
            let schema = json!({
                "type": "object",
                "properties": {"outer": {"type": "object", "properties": {"field": rule}}}
            });
            let said = problems(&schema, json!({"outer": {"field": value}}));
            assert_eq!(said.len(), 1, "{rule}: {said:?}");
            assert!(
                said[0].starts_with("'outer.field' must be ") && said[0].contains("; got "),
                "{rule}: {said:?}"
            );
            assert!(said[0].contains(words), "{rule}: {words:?} not in {said:?}");
        }
    }

    #[test]
    fn rules_of_the_whole_object_are_enforced_and_said() {
        let schema = json!({
            "type": "object",
            "properties": {
                "method": {"type": "string"},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "if": {"properties": {"method": {"const": "phone"}}, "required": ["method"]},
            "then": {"required": ["phone"]},
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "additionalProperties": false
        });
        assert!(problems(&schema, json!({"email": "a@b"})).is_empty());
        let conditional = problems(&schema, json!({"method": "phone", "email": "a@b"}));
        assert_eq!(conditional.len(), 1, "{conditional:?}");
        assert!(
            conditional[0].contains("missing required parameter 'phone' (a string)"),
            "{conditional:?}"
        );
        let composed = problems(&schema, json!({}));
        assert!(composed.iter().any(|p| p.contains("anyOf")), "{composed:?}");
    }

    #[test]
    fn a_schema_that_cannot_be_checked_refuses_every_call() {
        let schema = json!({"type": "object", "properties": {"a": {"pattern": "(?=x)"}}});
        let reason = Validator::for_schema(&schema).err().unwrap();
        assert!(reason.contains("look-around"), "{reason}");
        let refused = Validator::Refused(reason.clone()).problems(&schema, &json!({}));
        assert_eq!(refused.len(), 1);
        assert!(refused[0].message.ends_with(&reason), "{refused:?}");
    }

    #[test]
    fn an_open_schema_takes_names_it_does_not_list() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "$defs": {"unused": {"type": "string"}},
            "additionalProperties": true
        });
        assert!(problems(&schema, json!({"a": 1, "b": 2})).is_empty());
        let closed = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "additionalProperties": false
        });
        assert!(problems(&closed, json!({"b": 2}))[0].contains("unexpected parameter 'b'"));
    }
}
