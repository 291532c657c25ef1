//! Generated schemas and values, judged by the runtime's two validators and by the
//! `jsonschema` crate: the verdicts are equal, the validator of whole schemas finds errors
//! exactly when its verdict is no, the simple validator (when it takes the schema) agrees,
//! and a refusal is worded without a panic. `multipleOf` steps are those a binary float
//! holds exactly (integers, halves, quarters), where `jsonschema`'s division is exact too;
//! decimal steps are the runtime's own unit tests' and the official suite's.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};

const NAMES: [&str; 4] = ["a", "b", "c", "d"];
const PATTERNS: [&str; 6] = ["^a", "b$", "^[a-c]*$", "\\d", "^.{2}$", "x|y"];

fn number(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.int_in_range(0..=3)? {
        0 => json!(u.int_in_range(-20i64..=20)?),
        1 => json!(f64::from(u.int_in_range(-80i32..=80)?) / 4.0),
        2 => json!(u.int_in_range(-3i64..=3)? * 1_000_000_007),
        _ => json!(f64::from(u.int_in_range(-1000i32..=1000)?) / 100.0),
    })
}

fn string(u: &mut Unstructured) -> Result<String> {
    let length = u.int_in_range(0..=4)?;
    (0..length)
        .map(|_| Ok(*u.choose(&["a", "b", "c", "x", "1", "é", "🐲", " "])?))
        .collect()
}

fn value(u: &mut Unstructured, depth: u32) -> Result<Value> {
    let most = if depth >= 3 { 4 } else { 6 };
    Ok(match u.int_in_range(0..=most)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 | 3 => number(u)?,
        4 => Value::String(string(u)?),
        5 => Value::Array(
            (0..u.int_in_range(0..=3)?)
                .map(|_| value(u, depth + 1))
                .collect::<Result<_>>()?,
        ),
        _ => {
            let mut map = Map::new();
            for _ in 0..u.int_in_range(0..=3)? {
                map.insert((*u.choose(&NAMES)?).to_owned(), value(u, depth + 1)?);
            }
            Value::Object(map)
        }
    })
}

fn schema(u: &mut Unstructured, depth: u32) -> Result<Value> {
    if u.ratio(1, 12)? {
        return Ok(Value::Bool(u.arbitrary()?));
    }
    let mut map = Map::new();
    for _ in 0..u.int_in_range(0..=3)? {
        let nested = depth < 3;
        let (keyword, rule) = match u.int_in_range(0..=25)? {
            0 => ("type", json!(*u.choose(&["null", "boolean", "integer", "number", "string", "array", "object"])?)),
            1 => ("type", json!(["integer", "string"])),
            2 => ("minimum", number(u)?),
            3 => ("maximum", number(u)?),
            4 => ("exclusiveMinimum", number(u)?),
            5 => ("exclusiveMaximum", number(u)?),
            6 => ("multipleOf", json!(*u.choose(&[0.25, 0.5, 1.0, 2.0, 3.0, 1.5])?)),
            7 => ("minLength", json!(u.int_in_range(0..=3)?)),
            8 => ("maxLength", json!(u.int_in_range(0..=3)?)),
            9 => ("pattern", json!(*u.choose(&PATTERNS)?)),
            10 => ("enum", Value::Array(vec![value(u, 3)?, value(u, 3)?])),
            11 => ("const", value(u, 2)?),
            12 if nested => ("items", schema(u, depth + 1)?),
            13 if nested => ("prefixItems", json!([schema(u, depth + 1)?])),
            14 => ("minItems", json!(u.int_in_range(0..=3)?)),
            15 => ("maxItems", json!(u.int_in_range(0..=3)?)),
            16 => ("uniqueItems", json!(u.arbitrary::<bool>()?)),
            17 if nested => {
                let mut properties = Map::new();
                for _ in 0..u.int_in_range(1..=2)? {
                    properties.insert((*u.choose(&NAMES)?).to_owned(), schema(u, depth + 1)?);
                }
                ("properties", Value::Object(properties))
            }
            18 => ("required", json!([*u.choose(&NAMES)?])),
            19 if nested => ("additionalProperties", schema(u, depth + 1)?),
            20 if nested => (
                *u.choose(&["allOf", "anyOf", "oneOf"])?,
                json!([schema(u, depth + 1)?, schema(u, depth + 1)?]),
            ),
            21 if nested => ("not", schema(u, depth + 1)?),
            22 if nested => {
                map.insert("then".to_owned(), schema(u, depth + 1)?);
                ("if", schema(u, depth + 1)?)
            }
            23 if nested => ("contains", schema(u, depth + 1)?),
            24 => ("minProperties", json!(u.int_in_range(0..=2)?)),
            25 if nested => ("unevaluatedProperties", schema(u, depth + 1)?),
            _ => continue,
        };
        map.insert(keyword.to_owned(), rule);
    }
    Ok(Value::Object(map))
}

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let (Ok(schema), Ok(value)) = (schema(&mut u, 0), value(&mut u, 0)) else {
        return;
    };
    let Ok(theirs) = jsonschema::validator_for(&schema) else {
        return;
    };
    let ours = tool_runtime::__fuzzing::verdicts(&schema, &value)
        .unwrap_or_else(|why| panic!("{schema} refused: {why}"));
    let expected = theirs.is_valid(&value);
    assert_eq!(ours.full, expected, "full: {schema} on {value}");
    assert_eq!(ours.full_finds_no_error, expected, "errors: {schema} on {value}");
    if let Some(simple) = ours.simple {
        assert_eq!(simple, expected, "simple: {schema} on {value}");
    }
    assert!(ours.refusal_worded, "words: {schema} on {value}");
});
