//! The validator agrees with the `jsonschema` crate, keyword by keyword: on chosen values,
//! and on thousands of values made at random from each schema's own constants.

use super::Compiled;
use serde_json::{json, Value};

/// Schemas that use each keyword, alone and together, as tool schemas do.
fn schemas() -> Vec<Value> {
    vec![
        json!({"type": "integer", "minimum": -3, "exclusiveMaximum": 7, "multipleOf": 2}),
        json!({"type": ["number", "null"], "exclusiveMinimum": 0.5, "maximum": 2.5}),
        json!({"multipleOf": 0.5}),
        json!({"multipleOf": 3}),
        json!({"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-c]+$"}),
        json!({"pattern": "b\\d", "enum": ["ab1", "b2", 3, null, [1], {"a": 1}]}),
        json!({"const": {"a": [1, 2.0]}}),
        json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
               "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3}),
        json!({"type": "array", "items": {"enum": [1, 2, "a"]}, "uniqueItems": true}),
        json!({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3}),
        json!({"contains": {"const": 1}}),
        json!({"contains": {"const": 1}, "minContains": 0, "maxContains": 1}),
        json!({"prefixItems": [{"const": 1}], "unevaluatedItems": false}),
        json!({"allOf": [{"prefixItems": [true, true]}], "contains": {"type": "string"},
               "unevaluatedItems": {"type": "integer"}}),
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
               "required": ["a"], "additionalProperties": false}),
        json!({"properties": {"a": true}, "patternProperties": {"^x": {"type": "integer"}},
               "additionalProperties": {"type": "string"}}),
        json!({"propertyNames": {"maxLength": 1}, "minProperties": 1, "maxProperties": 2}),
        json!({"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"b": {"required": ["c"]}}}),
        json!({"properties": {"a": true}, "allOf": [{"properties": {"b": true}}],
               "unevaluatedProperties": false}),
        json!({"anyOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                         {"properties": {"b": true}, "required": ["b"]}],
               "unevaluatedProperties": false}),
        json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}),
        json!({"oneOf": [{"properties": {"kind": {"const": "a"}, "x": {"type": "integer"}},
                          "required": ["kind", "x"]},
                         {"properties": {"kind": {"const": "b"}}, "required": ["kind"]}],
               "unevaluatedProperties": false}),
        json!({"not": {"type": ["string", "null"]}}),
        json!({"if": {"properties": {"a": {"const": 1}}, "required": ["a"]},
               "then": {"required": ["b"]}, "else": {"required": ["c"]},
               "unevaluatedProperties": {"type": "integer"}}),
        json!({"then": {"const": 1}, "else": {"const": 2}}),
        json!({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object",
               "properties": {"value": {"type": "integer"},
                              "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}},
               "required": ["value"], "additionalProperties": false}}}),
        json!({"properties": {"a": {"$ref": "#/properties/b"}, "b": {"type": "integer"}}}),
        json!({"$defs": {"x y": {"type": "integer"}}, "items": {"$ref": "#/$defs/x%20y"}}),
        json!({"items": {"$ref": "#"}, "maxItems": 2}),
        json!({"type": "string", "format": "email"}),
        json!({"type": "object", "x-vendor": 1, "title": "t"}),
        json!({"properties": {"a": false}}),
        json!({"items": false}),
        json!(true),
        json!(false),
        json!({"type": "string", "pattern": "^\\s+$"}),
        json!({"type": "string", "pattern": "^.$"}),
    ]
}

/// Every constant inside `schema`, and the values around them: the values most likely to
/// sit on the edge of a rule.
fn constants(schema: &Value, found: &mut Vec<Value>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                found.push(Value::String(key.clone()));
                match key.as_str() {
                    "const" => found.push(value.clone()),
                    "enum" => found.extend(value.as_array().into_iter().flatten().cloned()),
                    _ => {}
                }
                constants(value, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| constants(item, found)),
        Value::Number(n) => {
            found.push(schema.clone());
            if let Some(f) = n.as_f64() {
                found.extend([
                    json!(f + 1.0),
                    json!(f - 1.0),
                    json!(f + 0.5),
                    json!(f * 2.0),
                ]);
            }
        }
        other => found.push(other.clone()),
    }
}

/// A small deterministic generator (xorshift), so that a failure replays.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn value(&mut self, pool: &[Value], depth: usize) -> Value {
        let strings = [
            "", "a", "ab", "abc", "abcd", "b1", "x", "xy", " ", "\u{a0}", "\n", "é",
        ];
        match self.below(if depth > 2 { 6 } else { 8 }) {
            0 => Value::Null,
            1 => Value::Bool(self.below(2) == 0),
            2 => json!(self.below(9) as i64 - 4),
            3 => {
                let odd = [0.1 * 3.0, 1e300, -0.0, 2.25, 1.0 / 3.0, 4.5, 1.75];
                match self.below(3) {
                    0 => json!(odd[self.below(odd.len())]),
                    _ => json!(self.below(9) as f64 / 2.0 - 2.0),
                }
            }
            4 => json!(strings[self.below(strings.len())]),
            5 => pool[self.below(pool.len())].clone(),
            6 => {
                let len = self.below(5);
                Value::Array((0..len).map(|_| self.value(pool, depth + 1)).collect())
            }
            _ => {
                let keys = ["a", "b", "c", "x1", "xy", "kind", "value", "next", "long"];
                let len = self.below(4);
                let mut map = serde_json::Map::new();
                for _ in 0..len {
                    let key = keys[self.below(keys.len())];
                    let value = match key {
                        "kind" => json!(["a", "b", "c"][self.below(3)]),
                        "value" => json!(self.below(3)),
                        _ => self.value(pool, depth + 1),
                    };
                    map.insert(key.to_owned(), value);
                }
                Value::Object(map)
            }
        }
    }
}

/// Whether `value` is a float past 2^53 checked against `multipleOf`: `jsonschema` divides
/// the binary float nearest to what was written (an integer that large), this validator
/// reads the number as written in decimal (`1e300` is not a multiple of 3), so their
/// verdicts may differ, and the decimal one is what the JSON says.
fn decimal_reading_differs(schema: &Value, value: &Value) -> bool {
    schema.get("multipleOf").is_some()
        && value.as_number().is_some_and(|number| {
            !number.is_i64()
                && !number.is_u64()
                && number
                    .as_f64()
                    .is_some_and(|float| float.abs() >= 9_007_199_254_740_992.0)
        })
}

#[test]
fn verdicts_agree_with_jsonschema() {
    let mut random = Random(0x5eed_1234_abcd_0001);
    let mut checked = 0;
    for schema in schemas() {
        let ours = Compiled::new(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
        let theirs = jsonschema::validator_for(&schema).unwrap();
        let mut pool = Vec::new();
        constants(&schema, &mut pool);
        pool.push(json!({"value": 1, "next": {"value": 2, "next": null}}));
        pool.push(json!({"value": 1, "next": {"value": "2"}}));
        let mut accepted = 0;
        for _ in 0..3000 {
            let value = random.value(&pool, 0);
            if decimal_reading_differs(&schema, &value) {
                continue;
            }
            let verdict = theirs.is_valid(&value);
            assert_eq!(ours.is_valid(&value), verdict, "{schema} and {value}");
            // Errors are found exactly when the verdict is no.
            assert_eq!(
                ours.errors(&value).is_empty(),
                verdict,
                "{schema} and {value}"
            );
            accepted += usize::from(verdict);
            checked += 1;
        }
        // Each schema was tried on both sides of its rules (two accept anything, one
        // nothing: `then` and `else` without `if` do nothing).
        let anything = schema == json!(true)
            || schema
                .get("then")
                .is_some_and(|_| schema.get("if").is_none());
        match schema {
            _ if anything => assert_eq!(accepted, 3000, "{schema}"),
            Value::Bool(false) => assert_eq!(accepted, 0),
            _ => assert!(
                accepted > 0 && accepted < 3000,
                "{schema}: {accepted} of 3000"
            ),
        }
    }
    assert!(checked > 100_000);
}

#[test]
fn errors_name_their_place_and_kind() {
    let schema = json!({
        "type": "object",
        "properties": {
            "window": {"type": "object", "properties": {"w": {"type": "integer"}},
                       "required": ["w"], "additionalProperties": false},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "unevaluatedProperties": false
    });
    let compiled = Compiled::new(&schema).unwrap();
    let errors = compiled.errors(&json!({
        "window": {"h": 1}, "tags": ["a", 2], "extra": true
    }));
    let said: Vec<(String, String)> = errors
        .iter()
        .map(|e| (crate::schema::describe::format_path(&e.path), e.to_string()))
        .collect();
    assert!(
        said.contains(&("window".into(), "unexpected properties 'h'".into())),
        "{said:?}"
    );
    assert!(
        said.contains(&("window".into(), "'w' is required".into())),
        "{said:?}"
    );
    assert!(said.iter().any(|(at, _)| at == "tags[1]"), "{said:?}");
    assert!(
        said.contains(&("".into(), "unexpected properties 'extra'".into())),
        "{said:?}"
    );
    assert_eq!(said.len(), 4, "{said:?}");
}

#[test]
fn what_cannot_be_checked_is_refused_when_compiled() {
    for (schema, reason) in [
        (json!({"$ref": "other.json#/x"}), "another document"),
        (json!({"$ref": "#anchor"}), "an anchor"),
        (json!({"$ref": "#/$defs/missing"}), "not in the schema"),
        (
            json!({"items": {"$dynamicRef": "#x"}}),
            "at `/items` uses `$dynamicRef`",
        ),
        (json!({"properties": {"a": {"$id": "x"}}}), "`$id`"),
        (json!({"pattern": "a(?=b)"}), "look-around"),
        (json!({"items": [true]}), "`prefixItems`"),
        (json!({"dependencies": {}}), "`dependentRequired`"),
        (json!({"type": "text"}), "JSON Schema does not define"),
        (json!({"minLength": -1}), "a count"),
        (json!({"multipleOf": 0}), "above 0"),
        (json!({"anyOf": []}), "at least one"),
        (json!({"properties": {"a": 3}}), "`/properties/a` is 3"),
    ] {
        let error = Compiled::new(&schema).unwrap_err();
        assert!(error.contains(reason), "{schema}: {error}");
        // One place named, the innermost.
        assert!(error.starts_with("the schema "), "{error}");
        assert!(error.matches("the schema at").count() <= 1, "{error}");
        assert!(!error.contains("the schema the schema"), "{error}");
    }
}

#[test]
fn recursion_through_references_ends() {
    for looping in [
        json!({"$ref": "#"}),
        json!({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]},
                         "b": {"not": {"$ref": "#/$defs/a"}}},
               "properties": {"x": {"$ref": "#/$defs/a"}}}),
    ] {
        let error = Compiled::new(&looping).unwrap_err();
        assert!(error.contains("never end"), "{looping}: {error}");
    }
    let list = json!({"$defs": {"l": {"anyOf": [{"type": "null"},
        {"type": "array", "prefixItems": [{"type": "integer"}, {"$ref": "#/$defs/l"}]}]}},
        "$ref": "#/$defs/l"});
    let compiled = Compiled::new(&list).unwrap();
    assert!(compiled.is_valid(&json!([1, [2, [3, null]]])));
    assert!(!compiled.is_valid(&json!([1, [2, ["3", null]]])));
}
