//! A validator for the schemas of simple parameters: numbers with bounds, strings with
//! lengths, booleans, enums of values, and arrays, sets and maps of those.
//!
//! Most tools take only such parameters. For them, building a `jsonschema` validator would
//! cost far more than checking: the crate validates every schema against the draft's
//! meta-schema when it compiles one (a few MiB of memory, once, and time on first use).
//! Schemas with anything else (`$ref`, unions, nested objects) still go to `jsonschema`,
//! so what is accepted is exactly what the published schema says either way: the keywords
//! here follow JSON Schema 2020-12 (an integer is any number with no fraction; `format` is
//! an annotation, not checked).

use super::describe::{self, PathSegment};
use super::validate::Problem;
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// Keywords that carry no constraint.
const ANNOTATIONS: [&str; 6] = [
    "description",
    "default",
    "examples",
    "title",
    "format",
    "deprecated",
];
/// Keywords this validator checks.
const CHECKED: [&str; 13] = [
    "type",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "enum",
    "const",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
];

/// Whether every property schema of `root` is one this validator checks exactly.
pub(crate) fn is_simple(root: &Value) -> bool {
    // Rules of the whole object (`allOf`, `if`, `$defs`...), which a hand-written schema
    // may have, are the full validator's.
    let whole_object_rules = root.as_object().is_some_and(|root| {
        root.iter().any(|(keyword, value)| match keyword.as_str() {
            "type" | "properties" | "required" => false,
            "additionalProperties" => value != &Value::Bool(false),
            keyword => !ANNOTATIONS.contains(&keyword),
        })
    });
    if whole_object_rules {
        return false;
    }
    root.get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| properties.values().all(simple))
}

fn simple(schema: &Value) -> bool {
    match schema {
        Value::Bool(_) => true,
        Value::Object(map) => map.iter().all(|(keyword, value)| match keyword.as_str() {
            "items" => simple(value),
            "additionalProperties" => {
                // A map: `{"type": "object", "additionalProperties": <schema>}`.
                map.get("type") == Some(&Value::from("object")) && simple(value)
            }
            keyword => ANNOTATIONS.contains(&keyword) || CHECKED.contains(&keyword),
        }),
        _ => false,
    }
}

/// A root schema of simple parameters read once into rules, so that the common case (the
/// arguments fit) reads no keyword by name and allocates nothing. Arguments that do not fit
/// are then checked again by [`check`], which words the problems.
#[derive(Debug)]
pub(crate) struct Compiled {
    /// Each parameter's rule, sorted by name.
    properties: Vec<(Box<str>, Rule)>,
    required: Vec<Box<str>>,
    /// Whether names the schema does not list are refused (`additionalProperties: false`).
    closed: bool,
}

/// What one schema allows.
#[derive(Debug)]
enum Rule {
    Any,
    Never,
    Checks(Box<Checks>),
}

/// The keywords of one schema object, each read once; a keyword whose value has the wrong
/// JSON type is ignored, as [`fits`] ignores it.
#[derive(Debug, Default)]
struct Checks {
    /// The types allowed, as bits of [`type_bit`]; `None` when `type` is absent.
    types: Option<u8>,
    options: Option<Vec<Value>>,
    constant: Option<Value>,
    minimum: Option<serde_json::Number>,
    maximum: Option<serde_json::Number>,
    exclusive_minimum: Option<serde_json::Number>,
    exclusive_maximum: Option<serde_json::Number>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
    items: Option<Rule>,
    /// `additionalProperties`: the rule of every entry of a map.
    values: Option<Rule>,
}

const TYPES: [&str; 7] = [
    "null", "boolean", "string", "array", "object", "number", "integer",
];

fn type_bit(kind: &str) -> u8 {
    TYPES
        .iter()
        .position(|known| *known == kind)
        .map_or(0, |index| 1 << index)
}

impl Compiled {
    /// The rules of `root`, a schema [`is_simple`] accepts.
    pub(crate) fn new(root: &Value) -> Compiled {
        let mut properties: Vec<(Box<str>, Rule)> = root
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, schema)| (name.as_str().into(), Rule::new(schema)))
            .collect();
        properties.sort_by(|a, b| a.0.cmp(&b.0));
        let required = root
            .as_object()
            .map(super::required)
            .unwrap_or_default()
            .into_iter()
            .map(Box::from)
            .collect();
        Compiled {
            properties,
            required,
            closed: root.get("additionalProperties") == Some(&Value::Bool(false)),
        }
    }

    /// Whether `arguments` fit: required names present and not `null`, no unknown name
    /// when the schema is closed, and every value not `null` allowed by its parameter.
    pub(crate) fn accepts(&self, arguments: &Map<String, Value>) -> bool {
        if self
            .required
            .iter()
            .any(|name| arguments.get(&**name).is_none_or(Value::is_null))
        {
            return false;
        }
        arguments.iter().all(|(name, value)| {
            match self
                .properties
                .binary_search_by(|(known, _)| (**known).cmp(name.as_str()))
            {
                Ok(index) => value.is_null() || self.properties[index].1.accepts(value),
                Err(_) => !self.closed,
            }
        })
    }
}

impl Rule {
    fn new(schema: &Value) -> Rule {
        let Value::Object(map) = schema else {
            return if schema == &Value::Bool(false) {
                Rule::Never
            } else {
                Rule::Any
            };
        };
        let number = |keyword: &str| map.get(keyword).and_then(Value::as_number).cloned();
        let count = |keyword: &str| map.get(keyword).and_then(Value::as_u64);
        let types = map.get("type").map(|kind| match kind {
            Value::Array(kinds) => kinds
                .iter()
                .filter_map(Value::as_str)
                .fold(0, |bits, kind| bits | type_bit(kind)),
            kind => kind.as_str().map_or(0, type_bit),
        });
        Rule::Checks(Box::new(Checks {
            types,
            options: map.get("enum").and_then(Value::as_array).cloned(),
            constant: map.get("const").cloned(),
            minimum: number("minimum"),
            maximum: number("maximum"),
            exclusive_minimum: number("exclusiveMinimum"),
            exclusive_maximum: number("exclusiveMaximum"),
            min_length: count("minLength"),
            max_length: count("maxLength"),
            min_items: count("minItems"),
            max_items: count("maxItems"),
            unique_items: map.get("uniqueItems") == Some(&Value::Bool(true)),
            items: map.get("items").map(Rule::new),
            values: map.get("additionalProperties").map(Rule::new),
        }))
    }

    /// Whether `value` breaks none of the rule, its items' and its entries' (what [`check`]
    /// finds no problem with).
    fn accepts(&self, value: &Value) -> bool {
        let checks = match self {
            Rule::Any => return true,
            Rule::Never => return false,
            Rule::Checks(checks) => checks,
        };
        if let Some(types) = checks.types {
            if !TYPES
                .iter()
                .enumerate()
                .any(|(index, kind)| types & (1 << index) != 0 && is_type(value, kind))
            {
                return false;
            }
        }
        if checks
            .options
            .as_ref()
            .is_some_and(|options| !options.iter().any(|option| equal(option, value)))
            || checks
                .constant
                .as_ref()
                .is_some_and(|constant| !equal(constant, value))
        {
            return false;
        }
        match value {
            Value::Number(number) => {
                let beyond = |bound: &Option<serde_json::Number>, out: fn(Ordering) -> bool| {
                    bound
                        .as_ref()
                        .is_some_and(|bound| out(compare(number, bound)))
                };
                !(beyond(&checks.minimum, Ordering::is_lt)
                    || beyond(&checks.maximum, Ordering::is_gt)
                    || beyond(&checks.exclusive_minimum, Ordering::is_le)
                    || beyond(&checks.exclusive_maximum, Ordering::is_ge))
            }
            Value::String(text) => {
                if checks.min_length.is_none() && checks.max_length.is_none() {
                    return true;
                }
                let length = text.chars().count() as u64;
                within(length, checks.min_length, checks.max_length)
            }
            Value::Array(items) => {
                within(items.len() as u64, checks.min_items, checks.max_items)
                    && !(checks.unique_items
                        && items.iter().enumerate().any(|(index, item)| {
                            items[..index].iter().any(|earlier| equal(earlier, item))
                        }))
                    && checks
                        .items
                        .as_ref()
                        .is_none_or(|rule| items.iter().all(|item| rule.accepts(item)))
            }
            Value::Object(entries) => checks
                .values
                .as_ref()
                .is_none_or(|rule| entries.values().all(|entry| rule.accepts(entry))),
            Value::Null | Value::Bool(_) => true,
        }
    }
}

fn within(count: u64, min: Option<u64>, max: Option<u64>) -> bool {
    min.is_none_or(|min| count >= min) && max.is_none_or(|max| count <= max)
}

/// Adds a problem for each way `value` at `path` breaks `schema`.
pub(crate) fn check(
    schema: &Value,
    value: &Value,
    path: &mut Vec<PathSegment>,
    root: &Value,
    problems: &mut Vec<Problem>,
) {
    let Value::Object(map) = schema else {
        if schema == &Value::Bool(false) {
            fail(schema, value, path, root, problems);
        }
        return;
    };
    if !fits(map, value) {
        fail(schema, value, path, root, problems);
        return;
    }
    match value {
        Value::Array(items) => {
            if let Some(item_schema) = map.get("items") {
                for (index, item) in items.iter().enumerate() {
                    path.push(PathSegment::Index(index));
                    check(item_schema, item, path, root, problems);
                    path.pop();
                }
            }
        }
        Value::Object(entries) => {
            if let Some(value_schema) = map.get("additionalProperties") {
                for (key, entry) in entries {
                    path.push(PathSegment::Key(key.clone()));
                    check(value_schema, entry, path, root, problems);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

fn fail(
    schema: &Value,
    value: &Value,
    path: &[PathSegment],
    root: &Value,
    problems: &mut Vec<Problem>,
) {
    let shown = describe::format_path(path);
    problems.push(Problem::new(
        shown.clone(),
        format!(
            "'{shown}' must be {}; got {}",
            describe::describe(schema, root),
            describe::compact(value)
        ),
    ));
}

/// The constraints of one schema on one value (not its items or entries).
fn fits(schema: &Map<String, Value>, value: &Value) -> bool {
    if let Some(kind) = schema.get("type") {
        let matches = |kind: &Value| kind.as_str().is_some_and(|kind| is_type(value, kind));
        let ok = match kind {
            Value::Array(kinds) => kinds.iter().any(matches),
            kind => matches(kind),
        };
        if !ok {
            return false;
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.iter().any(|option| equal(option, value)) {
            return false;
        }
    }
    if let Some(constant) = schema.get("const") {
        if !equal(constant, value) {
            return false;
        }
    }
    if let Value::Number(number) = value {
        let bound = |keyword: &str| schema.get(keyword).and_then(Value::as_number);
        if bound("minimum").is_some_and(|min| compare(number, min).is_lt())
            || bound("maximum").is_some_and(|max| compare(number, max).is_gt())
            || bound("exclusiveMinimum").is_some_and(|min| compare(number, min).is_le())
            || bound("exclusiveMaximum").is_some_and(|max| compare(number, max).is_ge())
        {
            return false;
        }
    }
    if let Value::String(text) = value {
        let length = text.chars().count() as u64;
        if schema
            .get("minLength")
            .and_then(Value::as_u64)
            .is_some_and(|min| length < min)
            || schema
                .get("maxLength")
                .and_then(Value::as_u64)
                .is_some_and(|max| length > max)
        {
            return false;
        }
    }
    if let Value::Array(items) = value {
        let count = items.len() as u64;
        if schema
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|min| count < min)
            || schema
                .get("maxItems")
                .and_then(Value::as_u64)
                .is_some_and(|max| count > max)
        {
            return false;
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            for (index, item) in items.iter().enumerate() {
                if items[..index].iter().any(|earlier| equal(earlier, item)) {
                    return false;
                }
            }
        }
    }
    true
}

fn is_type(value: &Value, kind: &str) -> bool {
    match kind {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => false,
    }
}

/// JSON equality, where `1` and `1.0` are the same number.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y).is_eq(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, value)| y.get(key).is_some_and(|other| equal(value, other)))
        }
        _ => a == b,
    }
}

/// Compares two JSON numbers exactly when both are integers, as floats otherwise.
fn compare(a: &serde_json::Number, b: &serde_json::Number) -> std::cmp::Ordering {
    let exact = |n: &serde_json::Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (exact(a), exact(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => a
            .as_f64()
            .unwrap_or(f64::NAN)
            .partial_cmp(&b.as_f64().unwrap_or(f64::NAN))
            .unwrap_or(std::cmp::Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(schema: Value, value: Value) -> Vec<String> {
        let mut found = Vec::new();
        check(
            &schema,
            &value,
            &mut vec![PathSegment::Key("x".into())],
            &json!({}),
            &mut found,
        );
        found.into_iter().map(|p| p.message).collect()
    }

    /// The compiled rules accept exactly what `check` finds no problem with.
    #[test]
    fn compiled_rules_agree_with_the_check() {
        let cases = [
            (
                json!({"type": "integer", "minimum": 0, "maximum": 255}),
                vec![
                    json!(0),
                    json!(255),
                    json!(255.0),
                    json!(256),
                    json!(-1),
                    json!(1.5),
                    json!("1"),
                ],
            ),
            (
                json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}),
                vec![json!(0), json!(0.5), json!(1), json!(u64::MAX)],
            ),
            (
                json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
                vec![json!(u64::MAX), json!(-1), json!(i64::MIN)],
            ),
            (
                json!({"type": "string", "minLength": 1, "maxLength": 1}),
                vec![json!("é"), json!(""), json!("ab"), json!(1)],
            ),
            (
                json!({"type": "string", "minLength": "x", "maxLength": -1}),
                vec![json!(""), json!("long")],
            ),
            (
                json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true, "minItems": 1, "maxItems": 2}),
                vec![
                    json!([]),
                    json!(["a"]),
                    json!(["a", "a"]),
                    json!(["a", 1]),
                    json!(["a", "b", "c"]),
                ],
            ),
            (
                json!({"type": "array", "items": false}),
                vec![json!([]), json!([1])],
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "boolean"}}),
                vec![
                    json!({}),
                    json!({"k": true}),
                    json!({"k": "no"}),
                    json!([true]),
                ],
            ),
            (
                json!({"type": "string", "enum": ["metric", "imperial"]}),
                vec![json!("metric"), json!("kelvin")],
            ),
            (
                json!({"enum": [1, "one"]}),
                vec![json!(1.0), json!("one"), json!(2)],
            ),
            (
                json!({"const": {"a": [1, 2]}}),
                vec![json!({"a": [1.0, 2]}), json!({"a": [2, 1]})],
            ),
            (
                json!({"type": ["string", "null"]}),
                vec![json!(null), json!("s"), json!(1)],
            ),
            (
                json!({"type": ["whatever", "integer"]}),
                vec![json!(1), json!("s")],
            ),
            (json!({"type": 7}), vec![json!(1), json!(null)]),
            (
                json!({"enum": "not a list", "minimum": "zero"}),
                vec![json!(-5), json!("x")],
            ),
            (json!({"type": "boolean"}), vec![json!(true), json!(0)]),
            (json!(true), vec![json!({"any": "thing"}), json!(null)]),
            (json!(false), vec![json!(1), json!(null)]),
        ];
        for (schema, values) in cases {
            let rule = Rule::new(&schema);
            for value in values {
                assert_eq!(
                    rule.accepts(&value),
                    problems(schema.clone(), value.clone()).is_empty(),
                    "{schema} and {value}"
                );
            }
        }
    }

    #[test]
    fn compiled_roots_check_names_and_treat_null_as_absent() {
        let root = json!({
            "type": "object",
            "properties": {"b": {"type": "integer"}, "a": {"type": "string"}},
            "required": ["a"],
            "additionalProperties": false
        });
        let compiled = Compiled::new(&root);
        let accepts = |arguments: Value| compiled.accepts(arguments.as_object().unwrap());
        assert!(accepts(json!({"a": "x"})));
        assert!(accepts(json!({"a": "x", "b": 2})));
        assert!(accepts(json!({"a": "x", "b": null})), "null is absent");
        assert!(!accepts(json!({"b": 2})), "a is required");
        assert!(
            !accepts(json!({"a": null})),
            "a null required parameter is missing"
        );
        assert!(!accepts(json!({"a": "x", "b": "2"})));
        assert!(!accepts(json!({"a": "x", "c": 1})), "the schema is closed");
        let open = Compiled::new(&json!({"properties": {"a": {"type": "string"}}}));
        assert!(open.accepts(json!({"c": 1}).as_object().unwrap()));
    }

    #[test]
    fn simple_schemas_are_recognised() {
        assert!(is_simple(
            &json!({"properties": {"a": {"type": "integer", "format": "int64", "minimum": 0}}})
        ));
        assert!(is_simple(
            &json!({"properties": {"t": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}})
        ));
        assert!(is_simple(
            &json!({"properties": {"m": {"type": "object", "additionalProperties": {"type": "number"}}, "v": true}})
        ));
        assert!(!is_simple(
            &json!({"properties": {"r": {"$ref": "#/$defs/X"}}, "$defs": {}})
        ));
        assert!(!is_simple(
            &json!({"properties": {"u": {"anyOf": [{"type": "string"}]}}})
        ));
        assert!(!is_simple(
            &json!({"properties": {"o": {"type": "object", "properties": {}}}})
        ));
    }

    #[test]
    fn checks_follow_json_schema() {
        let byte = json!({"type": "integer", "minimum": 0, "maximum": 255});
        assert!(problems(byte.clone(), json!(255)).is_empty());
        assert!(
            problems(byte.clone(), json!(255.0)).is_empty(),
            "an integer is a number without fraction"
        );
        assert_eq!(
            problems(byte.clone(), json!(256)),
            ["'x' must be an integer between 0 and 255; got 256"]
        );
        assert_eq!(problems(byte, json!(1.5)).len(), 1);
        let wide = json!({"type": "integer", "minimum": 0, "maximum": u64::MAX});
        assert!(problems(wide.clone(), json!(u64::MAX)).is_empty());
        assert_eq!(problems(wide, json!(-1)).len(), 1);
        let letter = json!({"type": "string", "minLength": 1, "maxLength": 1});
        assert!(problems(letter.clone(), json!("é")).is_empty());
        assert_eq!(problems(letter, json!("ab")).len(), 1);
        let set = json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true});
        assert_eq!(problems(set.clone(), json!(["a", "a"])).len(), 1);
        assert_eq!(
            problems(set, json!(["a", 1])),
            ["'x[1]' must be a string; got 1"]
        );
        let map = json!({"type": "object", "additionalProperties": {"type": "boolean"}});
        assert_eq!(
            problems(map, json!({"k": "no"})),
            ["'x.k' must be a boolean (true or false); got \"no\""]
        );
        let units = json!({"type": "string", "enum": ["metric", "imperial"]});
        assert_eq!(
            problems(units, json!("kelvin")),
            [r#"'x' must be one of "metric", "imperial"; got "kelvin""#]
        );
        assert!(problems(json!({"type": ["string", "null"]}), json!(null)).is_empty());
        assert!(problems(json!(true), json!({"any": "thing"})).is_empty());
    }
}
