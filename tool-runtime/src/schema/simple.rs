//! A validator for the schemas of simple parameters: numbers with bounds, strings with
//! lengths, booleans, enums of values, and arrays, sets and maps of those.
//!
//! Most tools take only such parameters, and a call checks its arguments on every request:
//! here arguments that fit cost no allocation and no keyword lookup. Schemas with anything
//! else (`$ref`, unions, nested objects) go to the validator of whole schemas in
//! [`full`](super::full), so what is accepted is exactly what the published schema says
//! either way: the keywords here follow JSON Schema 2020-12 (an integer is any number with
//! no fraction; `format` is an annotation, not checked).

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

/// A root schema of simple parameters read once into rules, so that a check reads no
/// keyword by name, and arguments that fit cost no allocation.
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

/// The keywords of one schema object, each read once. A keyword whose value has the wrong
/// JSON type constrains nothing, except `type`, which then allows no type.
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

/// The JSON Schema types, one bit each.
mod types {
    pub(super) const NULL: u8 = 1;
    pub(super) const BOOLEAN: u8 = 1 << 1;
    pub(super) const STRING: u8 = 1 << 2;
    pub(super) const ARRAY: u8 = 1 << 3;
    pub(super) const OBJECT: u8 = 1 << 4;
    pub(super) const NUMBER: u8 = 1 << 5;
    pub(super) const INTEGER: u8 = 1 << 6;
}

/// The bit of a type named in a schema (none for a name JSON Schema does not have).
pub(super) fn type_bit(kind: &str) -> u8 {
    match kind {
        "null" => types::NULL,
        "boolean" => types::BOOLEAN,
        "string" => types::STRING,
        "array" => types::ARRAY,
        "object" => types::OBJECT,
        "number" => types::NUMBER,
        "integer" => types::INTEGER,
        _ => 0,
    }
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

    fn rule(&self, name: &str) -> Option<&Rule> {
        self.properties
            .binary_search_by(|(known, _)| (**known).cmp(name))
            .ok()
            .map(|index| &self.properties[index].1)
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
        arguments.iter().all(|(name, value)| match self.rule(name) {
            Some(rule) => value.is_null() || rule.accepts(value),
            None => !self.closed,
        })
    }

    /// Adds a problem for each value not `null` that its parameter refuses, in the words of
    /// the parameter's schema in `root` (the schema these rules were read from).
    pub(crate) fn check_values(
        &self,
        arguments: &Map<String, Value>,
        root: &Value,
        problems: &mut Vec<Problem>,
    ) {
        let schemas = root.get("properties").and_then(Value::as_object);
        for (key, value) in arguments.iter().filter(|(_, value)| !value.is_null()) {
            let rule = self.rule(key);
            let schema = schemas.and_then(|schemas| schemas.get(key));
            if let (Some(rule), Some(schema)) = (rule, schema) {
                let mut path = vec![PathSegment::Key(key.clone())];
                check(rule, schema, value, &mut path, root, problems);
            }
        }
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
        // A count may be written as a number with a zero fraction (`2.0`): the same count.
        let count = |keyword: &str| {
            map.get(keyword).and_then(|value| {
                value.as_u64().or_else(|| {
                    value
                        .as_f64()
                        .filter(|float| *float >= 0.0 && float.fract() == 0.0)
                        .map(|float| float as u64)
                })
            })
        };
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

    /// Whether `value` breaks none of the rule, its items' and its entries'.
    fn accepts(&self, value: &Value) -> bool {
        self.fits(value)
            && match value {
                Value::Array(items) => self
                    .items()
                    .is_none_or(|rule| items.iter().all(|item| rule.accepts(item))),
                Value::Object(entries) => self
                    .values()
                    .is_none_or(|rule| entries.values().all(|entry| rule.accepts(entry))),
                _ => true,
            }
    }

    fn items(&self) -> Option<&Rule> {
        match self {
            Rule::Checks(checks) => checks.items.as_ref(),
            _ => None,
        }
    }

    fn values(&self) -> Option<&Rule> {
        match self {
            Rule::Checks(checks) => checks.values.as_ref(),
            _ => None,
        }
    }

    /// Whether `value` itself meets the rule (not its items or entries).
    fn fits(&self, value: &Value) -> bool {
        let checks = match self {
            Rule::Any => return true,
            Rule::Never => return false,
            Rule::Checks(checks) => checks,
        };
        if let Some(types) = checks.types {
            if types & type_bits(value) == 0 {
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
            }
            Value::Null | Value::Bool(_) | Value::Object(_) => true,
        }
    }
}

fn within(count: u64, min: Option<u64>, max: Option<u64>) -> bool {
    min.is_none_or(|min| count >= min) && max.is_none_or(|max| count <= max)
}

/// Adds a problem for each way `value` at `path` breaks `rule`, read from `schema`, whose
/// words the problem uses.
fn check(
    rule: &Rule,
    schema: &Value,
    value: &Value,
    path: &mut Vec<PathSegment>,
    root: &Value,
    problems: &mut Vec<Problem>,
) {
    if !rule.fits(value) {
        fail(schema, value, path, root, problems);
        return;
    }
    match value {
        Value::Array(items) => {
            if let (Some(rule), Some(schema)) = (rule.items(), schema.get("items")) {
                for (index, item) in items.iter().enumerate() {
                    path.push(PathSegment::Index(index));
                    check(rule, schema, item, path, root, problems);
                    path.pop();
                }
            }
        }
        Value::Object(entries) => {
            if let (Some(rule), Some(schema)) = (rule.values(), schema.get("additionalProperties"))
            {
                for (key, entry) in entries {
                    path.push(PathSegment::Key(key.clone()));
                    check(rule, schema, entry, path, root, problems);
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

/// The types `value` is, as bits of [`type_bit`]: a number with no fraction is an integer
/// too.
pub(super) fn type_bits(value: &Value) -> u8 {
    match value {
        Value::Null => types::NULL,
        Value::Bool(_) => types::BOOLEAN,
        Value::String(_) => types::STRING,
        Value::Array(_) => types::ARRAY,
        Value::Object(_) => types::OBJECT,
        Value::Number(n)
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) =>
        {
            types::NUMBER | types::INTEGER
        }
        Value::Number(_) => types::NUMBER,
    }
}

/// JSON equality, where `1` and `1.0` are the same number.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
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

/// `n` when it is an integer serde_json holds exactly (not as a float).
pub(super) fn exact_integer(n: &serde_json::Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// Compares two JSON numbers exactly when both are integers, as floats otherwise.
pub(super) fn compare(a: &serde_json::Number, b: &serde_json::Number) -> std::cmp::Ordering {
    match (exact_integer(a), exact_integer(b)) {
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
            &Rule::new(&schema),
            &schema,
            &value,
            &mut vec![PathSegment::Key("x".into())],
            &json!({}),
            &mut found,
        );
        found.into_iter().map(|p| p.message).collect()
    }

    /// What a schema accepts and refuses, as JSON Schema 2020-12 says; the verdict and the
    /// worded check agree on each.
    #[test]
    fn rules_accept_what_json_schema_accepts() {
        let cases = [
            (
                json!({"type": "integer", "minimum": 0, "maximum": 255}),
                vec![json!(0), json!(255), json!(255.0)],
                vec![json!(256), json!(-1), json!(1.5), json!("1")],
            ),
            (
                json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}),
                vec![json!(0.5)],
                vec![json!(0), json!(1), json!(u64::MAX)],
            ),
            (
                json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
                vec![json!(u64::MAX)],
                vec![json!(-1), json!(i64::MIN)],
            ),
            (
                json!({"type": "string", "minLength": 1, "maxLength": 1}),
                vec![json!("é")],
                vec![json!(""), json!("ab"), json!(1)],
            ),
            // Keywords whose values have the wrong type constrain nothing.
            (
                json!({"type": "string", "minLength": "x", "maxLength": -1}),
                vec![json!(""), json!("long")],
                vec![],
            ),
            (
                json!({"enum": "not a list", "minimum": "zero"}),
                vec![json!(-5), json!("x")],
                vec![],
            ),
            (
                json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true,
                    "minItems": 1, "maxItems": 2}),
                vec![json!(["a"]), json!(["a", "b"])],
                vec![
                    json!([]),
                    json!(["a", "a"]),
                    json!(["a", 1]),
                    json!(["a", "b", "c"]),
                ],
            ),
            (
                json!({"type": "array", "items": false}),
                vec![json!([])],
                vec![json!([1])],
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "boolean"}}),
                vec![json!({}), json!({"k": true})],
                vec![json!({"k": "no"}), json!([true])],
            ),
            (
                json!({"type": "string", "enum": ["metric", "imperial"]}),
                vec![json!("metric")],
                vec![json!("kelvin")],
            ),
            (
                json!({"enum": [1, "one"]}),
                vec![json!(1.0), json!("one")],
                vec![json!(2)],
            ),
            (
                json!({"const": {"a": [1, 2]}}),
                vec![json!({"a": [1.0, 2]})],
                vec![json!({"a": [2, 1]})],
            ),
            (
                json!({"type": ["string", "null"]}),
                vec![json!(null), json!("s")],
                vec![json!(1)],
            ),
            (
                json!({"type": ["whatever", "integer"]}),
                vec![json!(1)],
                vec![json!("s")],
            ),
            (json!({"type": 7}), vec![], vec![json!(1), json!(null)]),
            (
                json!({"type": "boolean"}),
                vec![json!(true)],
                vec![json!(0)],
            ),
            (
                json!(true),
                vec![json!({"any": "thing"}), json!(null)],
                vec![],
            ),
            (json!(false), vec![], vec![json!(1), json!(null)]),
        ];
        for (schema, accepted, refused) in cases {
            let rule = Rule::new(&schema);
            for value in accepted {
                assert!(rule.accepts(&value), "{schema} accepts {value}");
                let found = problems(schema.clone(), value.clone());
                assert!(found.is_empty(), "{schema} accepts {value}: {found:?}");
            }
            for value in refused {
                assert!(!rule.accepts(&value), "{schema} refuses {value}");
                let found = problems(schema.clone(), value.clone());
                assert_eq!(found.len(), 1, "{schema} refuses {value}: {found:?}");
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
        assert!(is_simple(&json!({"properties": {
            "t": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
        }})));
        assert!(is_simple(&json!({"properties": {
            "m": {"type": "object", "additionalProperties": {"type": "number"}},
            "v": true
        }})));
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
