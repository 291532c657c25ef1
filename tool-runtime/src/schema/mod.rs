//! The canonical schema of a tool: JSON Schema 2020-12, a root object of
//! the parameters, no `$schema`, no `title` noise, nested user types under `$defs`, optional
//! parameters left out of `required` rather than typed `[T, "null"]`.

pub(crate) mod decimal;
pub mod describe;
pub(crate) mod full;
#[cfg(fuzzing)]
pub mod fuzzing;
pub(crate) mod simple;
#[cfg(test)]
mod suite;
pub(crate) mod tagged;
pub(crate) mod validate;
pub(crate) mod walk;

use schemars::generate::SchemaSettings;
use schemars::transform::{RecursiveTransform, Transform};
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

/// A generator with the canonical settings: 2020-12 without a `$schema` key.
pub(crate) fn generator_for_input() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .for_deserialize()
        .into_generator()
}

fn generator_for_output() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .for_serialize()
        .into_generator()
}

/// Builds the root object schema from its parts, in canonical form.
pub(crate) fn object_schema(
    properties: Map<String, Value>,
    required: Vec<Value>,
    definitions: Map<String, Value>,
) -> Value {
    let mut root = Map::new();
    root.insert("type".to_owned(), "object".into());
    root.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        root.insert("required".to_owned(), Value::Array(required));
    }
    root.insert("additionalProperties".to_owned(), false.into());
    if !definitions.is_empty() {
        root.insert("$defs".to_owned(), Value::Object(definitions));
    }
    let mut schema = Schema::from(root);
    RecursiveTransform(|schema: &mut Schema| {
        schema.remove("title");
        complete_integer_bounds(schema);
    })
    .transform(&mut schema);
    let mut value = schema.to_value();
    publishable(&mut value);
    value
}

/// Adds the bounds schemars leaves out for integers narrower than a JSON number the
/// runtime reads (`i32`, `u32`), and the lower bound of the unsigned 64- and 128-bit ones,
/// keyed on the `format` its impl for each type writes: without them the schema would
/// accept a number the type's `Deserialize` refuses. The 64-bit types' other edges are the
/// whole range a call's numbers can carry (serde_json holds 64 bits), so saying them would
/// only be noise in every export, and numbers a JavaScript client cannot hold exactly; a
/// number past them is refused when the arguments are read, naming the parameter.
fn complete_integer_bounds(schema: &mut Schema) {
    let is_integer = match schema.get("type") {
        Some(Value::String(kind)) => kind == "integer",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "integer"),
        _ => false,
    };
    if !is_integer {
        return;
    }
    let (minimum, maximum): (Option<Value>, Option<Value>) =
        match schema.get("format").and_then(Value::as_str) {
            Some("int32") => (Some(i32::MIN.into()), Some(i32::MAX.into())),
            Some("uint32") => (Some(0.into()), Some(u32::MAX.into())),
            Some("uint64" | "uint" | "uint128") => (Some(0.into()), None),
            _ => return,
        };
    let object = schema.ensure_object();
    if let Some(minimum) = minimum {
        object.entry("minimum").or_insert(minimum);
    }
    if let Some(maximum) = maximum {
        object.entry("maximum").or_insert(maximum);
    }
}

/// A tool's output schema: the schema of the value the tool returns, and, for a value
/// that is not an object, the object schema `{"result": value}` that MCP's handshake era
/// needs (its structured content must be an object; 2026-07-28 takes any JSON value).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OutputSchema {
    /// The value's own schema.
    pub(crate) value: Value,
    /// `{"result": value}`, when the value is not always an object.
    pub(crate) wrapped: Option<Value>,
}

impl OutputSchema {
    /// `value`, with the wrapped form beside it when it does not describe an object.
    pub(crate) fn of(value: Value) -> OutputSchema {
        let wrapped = (value.get("type").and_then(Value::as_str) != Some("object"))
            .then(|| wrapped(value.clone()));
        OutputSchema { value, wrapped }
    }
}

/// The output schema `describe` gives with the canonical settings; `None` when there is
/// no schema or the output is nothing.
pub(crate) fn output_schema(
    describe: impl FnOnce(&mut SchemaGenerator) -> Option<Schema>,
) -> Option<OutputSchema> {
    let mut generator = generator_for_output();
    canonical_output(describe(&mut generator)?)
}

/// The output schema of a return type, for tools made at run time.
pub(crate) fn output_schema_of<T: schemars::JsonSchema>() -> Option<OutputSchema> {
    canonical_output(generator_for_output().into_root_schema_for::<T>())
}

fn canonical_output(mut schema: Schema) -> Option<OutputSchema> {
    remove_titles(&mut schema);
    let mut value = schema.to_value();
    publishable(&mut value);
    if value.get("type").and_then(Value::as_str) == Some("null") {
        return None; // A tool returning nothing has no structured output.
    }
    Some(OutputSchema::of(value))
}

/// `{"type": "object", "properties": {"result": value}, "required": ["result"]}`: the
/// root's `$defs` move to the new root so references still resolve.
fn wrapped(mut value: Value) -> Value {
    let definitions = value
        .as_object_mut()
        .and_then(|object| object.remove("$defs"))
        .and_then(|defs| match defs {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default();
    let mut root = Map::new();
    root.insert("type".to_owned(), "object".into());
    let mut properties = Map::new();
    properties.insert("result".to_owned(), value);
    root.insert("properties".to_owned(), Value::Object(properties));
    root.insert("required".to_owned(), Value::Array(vec!["result".into()]));
    if !definitions.is_empty() {
        root.insert("$defs".to_owned(), Value::Object(definitions));
    }
    // Again once wrapped: a root that accepted anything (`Value`) is now a property, which
    // is spelled out as on the input side.
    let mut root = Value::Object(root);
    publishable(&mut root);
    root
}

/// Keywords that annotate a schema rather than constrain it: they stay on the outside when
/// a nullable type becomes an `anyOf`.
const ANNOTATIONS: [&str; 8] = [
    "description",
    "default",
    "examples",
    "title",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Keywords where a boolean is the customary switch (`additionalProperties: false`), which
/// every client and linter reads; anywhere else (`items` included) a boolean schema is
/// rewritten.
const BOOLEAN_SWITCHES: [&str; 3] = [
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Rewrites, at every depth, the forms of JSON Schema that some MCP clients refuse into
/// equivalent ones every client accepts:
///
/// - a boolean schema (`true`, which `serde_json::Value` gives) becomes `{}`, and `false`
///   becomes `{"not": {}}`: the official TypeScript client rejects a whole tool list when
///   one property schema is a boolean;
/// - a nullable type array (`{"type": ["string", "null"]}`, which an `Option` field of a
///   nested struct gives) becomes `{"anyOf": [{"type": "string"}, {"type": "null"}]}`,
///   with annotations (`description`, `default`, ...) kept outside;
/// - a schema that constrains nothing (`{}`, perhaps with a description) says so in a form
///   schema linters and strict clients accept: an `anyOf` of the six JSON types; under
///   `additionalProperties` it is the switch `true`.
///
/// Every rewrite keeps the set of accepted values exactly the same.
pub(crate) fn publishable(schema: &mut Value) {
    replace_boolean(schema);
    walk::transform(schema, &mut |node| {
        let Value::Object(map) = node else {
            return;
        };
        drop_unknown_format(map);
        if !walk::holds_schemas(map) {
            split_nullable_type(map);
            return;
        }
        // Children first, so that a nullable type split below copies rewritten children
        // into its branches.
        for (keyword, child) in map.iter_mut() {
            if walk::ONE.contains(&keyword.as_str()) {
                publish_child(keyword, child);
            }
        }
        for keyword in walk::MAPS {
            if let Some(Value::Object(children)) = map.get_mut(keyword) {
                children
                    .values_mut()
                    .for_each(|child| publish_child(keyword, child));
            }
        }
        for keyword in walk::LISTS {
            if let Some(Value::Array(children)) = map.get_mut(keyword) {
                children
                    .iter_mut()
                    .for_each(|child| publish_child(keyword, child));
            }
        }
        split_nullable_type(map);
    });
}

/// The formats JSON Schema defines (2020-12); validators in clients flag any other as
/// unknown. schemars writes Rust's (`uint32`, `int64`, `double`), whose range the bounds
/// already say.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops a `format` JSON Schema does not define.
fn drop_unknown_format(map: &mut Map<String, Value>) {
    if let Some(Value::String(format)) = map.get("format") {
        if !STANDARD_FORMATS.contains(&format.as_str()) {
            map.remove("format");
        }
    }
}

/// One child schema, under `keyword`, in the form every client and linter accepts.
fn publish_child(keyword: &str, child: &mut Value) {
    if BOOLEAN_SWITCHES.contains(&keyword) {
        // A switch stays a boolean, and `{}` there is the switch `true`.
        if unconstrained(child) {
            *child = Value::Bool(true);
        }
        return;
    }
    replace_boolean(child);
    if keyword != "not" {
        // `not: {}` is the never-schema, and says so already.
        spell_out_any(child);
    }
}

/// Keywords that constrain the values a schema accepts; a schema with none of them (and no
/// `if` with a `then` or `else`) accepts any value.
const CONSTRAINING: [&str; 36] = [
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "items",
    "prefixItems",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "dependentSchemas",
    "unevaluatedItems",
    "unevaluatedProperties",
    "$ref",
];

/// Whether a schema (in object form) accepts every value.
fn unconstrained(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return schema == &Value::Bool(true);
    };
    let conditional =
        map.contains_key("if") && (map.contains_key("then") || map.contains_key("else"));
    !conditional && !map.keys().any(|key| CONSTRAINING.contains(&key.as_str()))
}

/// Whether a schema accepts every JSON value: `true`, `{}` (perhaps with annotations), or
/// the `anyOf` of the six JSON types that [`publishable`] writes for them.
pub(crate) fn accepts_any(schema: &Value) -> bool {
    if unconstrained(schema) {
        return true;
    }
    let Value::Object(map) = schema else {
        return false;
    };
    let Some(Value::Array(branches)) = map.get("anyOf") else {
        return false;
    };
    let others_constrain = map
        .keys()
        .any(|key| key != "anyOf" && CONSTRAINING.contains(&key.as_str()));
    let kinds: Vec<&str> = branches
        .iter()
        .filter_map(|branch| match branch {
            Value::Object(branch) if branch.len() == 1 => branch.get("type")?.as_str(),
            _ => None,
        })
        .collect();
    !others_constrain
        && kinds.len() == branches.len()
        && ANY_VALUE_TYPES.iter().all(|kind| kinds.contains(kind))
}

/// The six JSON types (`integer` is a kind of `number`).
const ANY_VALUE_TYPES: [&str; 6] = ["object", "array", "string", "number", "boolean", "null"];

/// `{}` (any value) becomes `{"anyOf": [{"type": "object"}, ..., {"type": "null"}]}`, the
/// same set of values said in a form that names it; annotations stay.
fn spell_out_any(schema: &mut Value) {
    if !unconstrained(schema) {
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    let branches = ANY_VALUE_TYPES
        .iter()
        .map(|kind| {
            let mut branch = Map::new();
            branch.insert("type".to_owned(), (*kind).into());
            Value::Object(branch)
        })
        .collect();
    map.insert("anyOf".to_owned(), Value::Array(branches));
}

fn replace_boolean(schema: &mut Value) {
    match schema {
        Value::Bool(true) => *schema = Value::Object(Map::new()),
        Value::Bool(false) => {
            let mut never = Map::new();
            never.insert("not".to_owned(), Value::Object(Map::new()));
            *schema = Value::Object(never);
        }
        _ => {}
    }
}

/// `{"type": [T, "null"], ...}` becomes `{"anyOf": [{"type": T, ...}, {"type": "null"}]}`.
/// Every constraint goes into each typed branch (a keyword for another type is ignored by
/// JSON Schema, so copying it changes nothing); `null` leaves the branches' `enum`.
fn split_nullable_type(map: &mut Map<String, Value>) {
    let Some(Value::Array(kinds)) = map.get("type") else {
        return;
    };
    if kinds.len() < 2 || !kinds.iter().any(|kind| kind == "null") {
        return;
    }
    let typed: Vec<Value> = kinds
        .iter()
        .filter(|kind| *kind != "null")
        .cloned()
        .collect();
    map.remove("type");
    let mut outer = Map::new();
    for keyword in ANNOTATIONS.iter().chain(["$defs"].iter()) {
        if let Some(value) = map.remove(*keyword) {
            outer.insert((*keyword).to_owned(), value);
        }
    }
    let constraints = std::mem::take(map);
    let mut branches: Vec<Value> = typed
        .into_iter()
        .map(|kind| {
            let mut branch = constraints.clone();
            if let Some(Value::Array(options)) = branch.get_mut("enum") {
                options.retain(|option| !option.is_null());
            }
            branch.insert("type".to_owned(), kind);
            Value::Object(branch)
        })
        .collect();
    let mut null = Map::new();
    null.insert("type".to_owned(), "null".into());
    branches.push(Value::Object(null));
    outer.insert("anyOf".to_owned(), Value::Array(branches));
    *map = outer;
}

/// Makes the schema of an optional parameter its inner type's: `[T, "null"]` becomes `T`,
/// `anyOf: [T, {"type": "null"}]` becomes `T`, and `null` leaves an `enum`.
pub(crate) fn strip_null(schema: &mut Schema) {
    if let Some(object) = schema.as_object_mut() {
        strip_null_of(object);
    }
}

/// [`strip_null`] on a schema object; whether it said `null` was allowed.
pub(crate) fn strip_null_of(object: &mut Map<String, Value>) -> bool {
    let mut stripped = false;
    if let Some(Value::Array(kinds)) = object.get_mut("type") {
        let before = kinds.len();
        kinds.retain(|kind| kind != "null");
        stripped |= kinds.len() < before;
        if kinds.len() == 1 {
            let only = kinds.remove(0);
            object.insert("type".to_owned(), only);
        }
    }
    for keyword in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = object.get_mut(keyword) else {
            continue;
        };
        let before = branches.len();
        branches.retain(|branch| branch.get("type").and_then(Value::as_str) != Some("null"));
        stripped |= branches.len() < before;
        if branches.len() == 1 {
            if let Some(Value::Object(inner)) = branches.pop() {
                object.remove(keyword);
                for (key, value) in inner {
                    object.entry(key).or_insert(value);
                }
            }
        }
        break;
    }
    if !object.get("const").is_some_and(Value::is_null) {
        if let Some(Value::Array(options)) = object.get_mut("enum") {
            let before = options.len();
            options.retain(|option| !option.is_null());
            stripped |= options.len() < before;
        }
    }
    stripped
}

/// Removes `title` from every schema position (not from property names called `title`).
pub(crate) fn remove_titles(schema: &mut Schema) {
    RecursiveTransform(|schema: &mut Schema| {
        schema.remove("title");
    })
    .transform(schema);
}

/// The JSON types `schema`'s own `type` keyword names (one name or a list); empty when it
/// has none.
pub(crate) fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The names a schema object lists as `required`.
pub(crate) fn required(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The one value a schema allows: its `const`, or an `enum` of one value.
pub(crate) fn constant(schema: &Value) -> Option<&Value> {
    schema
        .get("const")
        .or_else(|| match schema.get("enum")?.as_array()?.as_slice() {
            [only] => Some(only),
            _ => None,
        })
}

/// A bound on the length of a value's compact JSON text, worked out without serializing
/// it (a string's escapes are counted, at six bytes for a control character, and an
/// integer takes at most 20), so that a small answer is known to fit a limit without being
/// written twice. Only a number with a fraction is written out to be measured.
pub(crate) fn json_len_at_most(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        // Other numbers are written out: with serde_json's `arbitrary_precision`, which
        // any crate of a build may turn on, their text has no fixed bound.
        Value::Number(number) if number.is_i64() || number.is_u64() => 20,
        Value::Number(number) => number.to_string().len(),
        Value::String(text) => json_str_len_at_most(text),
        Value::Array(items) => json_list_len_at_most(items),
        Value::Object(entries) => entries.iter().fold(2usize, |total, (key, entry)| {
            total
                .saturating_add(json_str_len_at_most(key))
                .saturating_add(json_len_at_most(entry))
                .saturating_add(2)
        }),
    }
}

/// Whether `text` (JSON) is an object. Serde reads a list into a struct too, field by
/// field: what must be an object is checked first.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn is_json_object(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// Whether `text` (JSON) is a list.
pub(crate) fn is_json_list(text: &str) -> bool {
    text.trim_start().starts_with('[')
}

/// [`json_len_at_most`] of a list of values, as a JSON array.
pub(crate) fn json_list_len_at_most(items: &[Value]) -> usize {
    items.iter().fold(2usize, |total, item| {
        total
            .saturating_add(json_len_at_most(item))
            .saturating_add(1)
    })
}

/// A bound on the length of `text` as a JSON string, quotes included: exact but for
/// control characters, counted at six bytes each.
pub(crate) fn json_str_len_at_most(text: &str) -> usize {
    let escapes = text.bytes().fold(0usize, |escapes, byte| match byte {
        b'"' | b'\\' => escapes.saturating_add(1),
        0..0x20 => escapes.saturating_add(5),
        _ => escapes,
    });
    text.len().saturating_add(escapes).saturating_add(2)
}

/// The length of `value` as JSON text, counted without building the text.
pub(crate) fn json_len(value: &impl serde::Serialize) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing to a counter cannot fail; what fails to serialize counts what was written.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// Follows local `$ref`s (`#/...`) from `schema` within `root`, at most eight hops so a
/// cycle of references cannot loop; an unresolvable reference stops where it is.
pub(crate) fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..8 {
        match current.get("$ref").and_then(Value::as_str) {
            Some(reference) => match reference.strip_prefix('#').and_then(|p| root.pointer(p)) {
                Some(target) => current = target,
                None => break,
            },
            None => break,
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_length_bound_is_never_below_the_length() {
        let values = [
            json!({}),
            json!({"a": null, "b": [true, false, []], "c": {"d": {}}}),
            json!({"n": [-1.2345678901234567e-308, u64::MAX, i64::MIN, 0.1]}),
            json!({"s": "\u{1}\u{1f}\"\\\n", "é": "naïve ☃", "": ""}),
        ];
        for value in values {
            let length = serde_json::to_string(&value).unwrap().len();
            let bound = json_len_at_most(&value);
            assert!(bound >= length, "{value}: {bound} < {length}");
            assert_eq!(json_len(&value), length, "{value}");
        }
        // Text without control characters is counted exactly (the one byte over is the
        // comma the bound counts after every entry).
        let text = json!({"text": "say \"hi\" \\ naïve ☃ ".repeat(100)});
        let length = serde_json::to_string(&text).unwrap().len();
        assert_eq!(json_len_at_most(&text), length + 1);
    }

    #[test]
    fn strip_null_handles_type_arrays_and_any_of() {
        let mut schema = Schema::try_from(json!({"type": ["string", "null"]})).unwrap();
        strip_null(&mut schema);
        assert_eq!(schema.to_value(), json!({"type": "string"}));

        let mut schema = Schema::try_from(
            json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}], "description": "d"}),
        )
        .unwrap();
        strip_null(&mut schema);
        assert_eq!(
            schema.to_value(),
            json!({"$ref": "#/$defs/A", "description": "d"})
        );
    }

    #[test]
    fn boolean_schemas_become_objects_and_switches_stay() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "any": true,
                "described": {"description": "anything"},
                "map": {"type": "object", "additionalProperties": true},
                "free_map": {"type": "object", "additionalProperties": {}},
                "never": false,
                "list": {"type": "array", "items": {"anyOf": [true, {"type": "null"}]}}
            },
            "additionalProperties": false,
            "$defs": {"Free": true}
        });
        publishable(&mut schema);
        let any = json!([
            {"type": "object"}, {"type": "array"}, {"type": "string"},
            {"type": "number"}, {"type": "boolean"}, {"type": "null"}
        ]);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "any": {"anyOf": any},
                    "described": {"description": "anything", "anyOf": any},
                    "map": {"type": "object", "additionalProperties": true},
                    "free_map": {"type": "object", "additionalProperties": true},
                    "never": {"not": {}},
                    "list": {
                        "type": "array",
                        "items": {"anyOf": [{"anyOf": any}, {"type": "null"}]}
                    }
                },
                "additionalProperties": false,
                "$defs": {"Free": {"anyOf": any}}
            })
        );
    }

    #[test]
    fn nullable_type_arrays_become_any_of_with_annotations_outside() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "limit": {
                    "type": ["integer", "null"],
                    "minimum": 0,
                    "maximum": 255,
                    "description": "How many.",
                    "default": null
                },
                "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "either": {"type": ["string", "number"]}
            }
        });
        publishable(&mut schema);
        assert_eq!(
            schema["properties"]["limit"],
            json!({
                "anyOf": [{"type": "integer", "minimum": 0, "maximum": 255}, {"type": "null"}],
                "description": "How many.",
                "default": null
            })
        );
        assert_eq!(
            schema["properties"]["mode"],
            json!({"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]})
        );
        // Not nullable: left as it is.
        assert_eq!(
            schema["properties"]["either"],
            json!({"type": ["string", "number"]})
        );
    }

    #[test]
    fn rewritten_schemas_accept_exactly_what_the_originals_accept() {
        let original = json!({
            "type": "object",
            "properties": {
                "any": true,
                "limit": {"type": ["integer", "null"], "minimum": 0},
                "mode": {"type": ["string", "null"], "enum": ["a", null]},
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}, true],
                    "items": false
                },
                "maybe": {"type": ["object", "null"], "properties": {"free": true}}
            },
            "additionalProperties": false
        });
        let mut rewritten = original.clone();
        publishable(&mut rewritten);
        let before = full::Compiled::new(&original).unwrap();
        let after = full::Compiled::new(&rewritten).unwrap();
        for value in [
            json!({}),
            json!({"any": [1, "x"], "limit": null, "mode": null}),
            json!({"limit": 3, "mode": "a"}),
            json!({"limit": -1}),
            json!({"limit": "3"}),
            json!({"mode": "b"}),
            json!({"mode": 1}),
            json!({"other": 1}),
            json!({"pair": [1, {"x": null}]}),
            json!({"pair": [1, 2, 3]}),
            json!({"pair": ["1", 2]}),
            json!({"maybe": null}),
            json!({"maybe": {"free": [null]}}),
            json!({"maybe": 3}),
        ] {
            assert_eq!(before.is_valid(&value), after.is_valid(&value), "{value}");
        }
        // Every child schema is rewritten, also inside the branches of a split nullable type.
        assert_eq!(rewritten["properties"]["pair"]["items"], json!({"not": {}}));
        assert!(accepts_any(
            &rewritten["properties"]["pair"]["prefixItems"][1]
        ));
        assert!(accepts_any(
            &rewritten["properties"]["maybe"]["anyOf"][0]["properties"]["free"]
        ));
    }

    #[test]
    fn titles_go_but_properties_named_title_stay() {
        let mut schema = Schema::try_from(json!({
            "title": "Root",
            "type": "object",
            "properties": {"title": {"type": "string", "title": "Inner"}}
        }))
        .unwrap();
        remove_titles(&mut schema);
        assert_eq!(
            schema.to_value(),
            json!({"type": "object", "properties": {"title": {"type": "string"}}})
        );
    }
}
