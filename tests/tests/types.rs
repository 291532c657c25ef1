//! Every supported parameter type: its schema, and a value sent as arguments reaching the
//! function intact (each tool returns what it received).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use tool_runtime::catalog::Catalog;
use tool_runtime::{tool, Registry};
use tool_tests::call;

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    Circle { radius: f64 },
    Square(f64),
    Dot,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, PartialEq)]
pub struct Point {
    x: i32,
    y: i32,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, PartialEq)]
pub struct Drawing {
    name: String,
    points: Vec<Point>,
    shapes: BTreeMap<String, Shape>,
    note: Option<String>,
}

/// A recursive type.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, PartialEq)]
pub struct Tree {
    label: String,
    children: Vec<Tree>,
}

/// Echo integers of every width.
#[tool]
#[allow(clippy::too_many_arguments)]
fn integers(
    a: i8,
    b: i16,
    c: i32,
    d: i64,
    e: i128,
    f: isize,
    g: u8,
    h: u16,
    i: u32,
    j: u64,
    k: u128,
    l: usize,
) -> Value {
    json!({
        "a": a, "b": b, "c": c, "d": d, "e": e as i64, "f": f, "g": g, "h": h, "i": i, "j": j,
        "k": k as u64, "l": l
    })
}

/// Echo scalars.
#[tool]
fn scalars(flag: bool, ratio: f32, precise: f64, letter: char, text: String) -> Value {
    json!({"flag": flag, "ratio": ratio, "precise": precise, "letter": letter, "text": text})
}

/// Echo collections.
#[tool]
fn collections(
    list: Vec<String>,
    fixed: [u8; 3],
    unique: HashSet<String>,
    ordered: BTreeSet<i32>,
    lookup: HashMap<String, u16>,
    sorted: BTreeMap<String, Vec<bool>>,
) -> Value {
    let mut unique: Vec<String> = unique.into_iter().collect();
    unique.sort();
    let lookup: BTreeMap<String, u16> = lookup.into_iter().collect();
    json!({
        "list": list, "fixed": fixed, "unique": unique, "ordered": ordered, "lookup": lookup,
        "sorted": sorted
    })
}

/// Echo optional and any values.
#[tool]
fn optionals(maybe: Option<String>, anything: Value, nested: Option<Vec<Option<i32>>>) -> Value {
    json!({"maybe": maybe, "anything": anything, "nested": nested})
}

/// Echo user types.
#[tool]
fn user_types(drawing: Drawing, shape: Shape, tree: Tree) -> Value {
    json!({"drawing": drawing, "shape": shape, "tree": tree})
}

type Name = String;
type Maybe<T> = Option<T>;

/// Echo aliased and fully qualified types.
#[tool]
fn aliases(
    name: Name,
    count: ::std::primitive::u8,
    later: Maybe<u8>,
    full: std::option::Option<std::string::String>,
) -> Value {
    json!({"name": name, "count": count, "later": later, "full": full})
}

fn registry() -> Registry {
    Registry::new().expect("registry")
}

/// What a tool here returned: its output is the value itself.
fn returned(name: &str, input: Value) -> Value {
    let result = call(&registry(), name, input);
    match result.output() {
        Some(output) => output.clone(),
        None => panic!("{name} failed: {}", result.error().unwrap()),
    }
}

fn roundtrip(name: &str, input: Value) {
    assert_eq!(returned(name, input.clone()), input, "{name}");
}

#[test]
fn integers_of_every_width_arrive_intact_and_only_bounds_narrower_than_a_call_are_said() {
    roundtrip(
        "integers",
        json!({"a": -128, "b": -32768, "c": -2147483648i64, "d": i64::MIN, "e": -5, "f": -7,
               "g": 255, "h": 65535, "i": 4294967295u64, "j": u64::MAX, "k": 12, "l": 99}),
    );
    let schema = Catalog::global()
        .unwrap()
        .get("integers")
        .unwrap()
        .input_schema()
        .clone();
    let bounds = |name: &str| {
        (
            schema["properties"][name]["minimum"].clone(),
            schema["properties"][name]["maximum"].clone(),
        )
    };
    assert_eq!(bounds("a"), (json!(-128), json!(127)));
    assert_eq!(bounds("b"), (json!(-32768), json!(32767)));
    assert_eq!(bounds("c"), (json!(-2147483648i64), json!(2147483647)));
    assert_eq!(bounds("g"), (json!(0), json!(255)));
    assert_eq!(bounds("h"), (json!(0), json!(65535)));
    assert_eq!(bounds("i"), (json!(0), json!(4294967295u64)));
    // The 64-bit types' edges are the whole range a call's numbers carry: not said (they
    // would be noise in every export, and beyond what a JavaScript number holds exactly).
    // An unsigned type still says it takes no negative number.
    assert_eq!(bounds("d"), (Value::Null, Value::Null));
    assert_eq!(bounds("e"), (Value::Null, Value::Null));
    assert_eq!(bounds("f"), (Value::Null, Value::Null));
    assert_eq!(bounds("j"), (json!(0), Value::Null));
    assert_eq!(bounds("k"), (json!(0), Value::Null));
    assert_eq!(bounds("l"), (json!(0), Value::Null));
    // A number past what the type holds is refused when the arguments are read, naming
    // the parameter.
    let mut arguments = json!({"a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 0, "h": 0,
                               "i": 0, "j": 0, "k": 0, "l": 0});
    arguments["d"] = json!(1e20);
    let refused = call(&registry(), "integers", arguments)
        .error()
        .unwrap()
        .to_string();
    assert!(
        refused.contains("'d'") || refused.contains("`d`"),
        "{refused}"
    );
    for name in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"] {
        assert_eq!(schema["properties"][name]["type"], "integer", "{name}");
    }
    assert_eq!(schema["required"].as_array().unwrap().len(), 12);
}

#[test]
fn scalars_arrive_intact() {
    roundtrip(
        "scalars",
        json!({"flag": true, "ratio": 0.5, "precise": 1.25e-7, "letter": "ñ",
               "text": "héllo \"quoted\"\n"}),
    );
    let schema = Catalog::global()
        .unwrap()
        .get("scalars")
        .unwrap()
        .input_schema()
        .clone();
    assert_eq!(
        schema["properties"]["letter"],
        json!({"type": "string", "minLength": 1, "maxLength": 1})
    );
    assert_eq!(schema["properties"]["flag"], json!({"type": "boolean"}));
    assert_eq!(
        schema["properties"]["precise"],
        json!({"type": "number"}),
        "Rust's formats (double, int32, uint8) are not JSON Schema's: left out"
    );
}

#[test]
fn collections_arrive_intact_with_the_right_schemas() {
    roundtrip(
        "collections",
        json!({"list": ["a", "b", "a"], "fixed": [1, 2, 3], "unique": ["x", "y"],
               "ordered": [-1, 5], "lookup": {"k": 7}, "sorted": {"a": [true, false]}}),
    );
    let schema = Catalog::global()
        .unwrap()
        .get("collections")
        .unwrap()
        .input_schema()
        .clone();
    let p = &schema["properties"];
    assert_eq!(
        p["list"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(p["fixed"]["minItems"], 3);
    assert_eq!(p["fixed"]["maxItems"], 3);
    assert_eq!(p["unique"]["uniqueItems"], true);
    assert_eq!(p["ordered"]["uniqueItems"], true);
    assert_eq!(p["lookup"]["type"], "object");
    assert_eq!(p["lookup"]["additionalProperties"]["type"], "integer");
    assert_eq!(
        p["sorted"]["additionalProperties"]["items"],
        json!({"type": "boolean"})
    );
}

#[test]
fn optionals_are_not_required_have_their_inner_schema_and_accept_null() {
    roundtrip(
        "optionals",
        json!({"maybe": "here", "anything": {"deep": [1, null, "x"]}, "nested": [1, null, 3]}),
    );
    assert_eq!(
        returned("optionals", json!({"anything": 5})),
        json!({"maybe": null, "anything": 5, "nested": null})
    );
    // An explicit null means absent.
    assert_eq!(
        returned("optionals", json!({"anything": [], "maybe": null})),
        json!({"maybe": null, "anything": [], "nested": null})
    );

    let schema = Catalog::global()
        .unwrap()
        .get("optionals")
        .unwrap()
        .input_schema()
        .clone();
    assert_eq!(schema["required"], json!(["anything"]));
    assert_eq!(schema["properties"]["maybe"], json!({"type": "string"}));
    // "Any value" is spelled out, never the boolean schema `true` nor a bare `{}`.
    assert_eq!(
        schema["properties"]["anything"],
        json!({"anyOf": [
            {"type": "object"}, {"type": "array"}, {"type": "string"},
            {"type": "number"}, {"type": "boolean"}, {"type": "null"}
        ]})
    );
    // Only the outer Option is the parameter's; the inner one stays nullable, as an anyOf.
    assert_eq!(
        schema["properties"]["nested"],
        json!({"type": "array", "items": {"anyOf": [
            {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX},
            {"type": "null"}
        ]}})
    );
}

#[test]
fn user_types_nest_under_defs_and_arrive_intact() {
    roundtrip(
        "user_types",
        json!({
            "drawing": {"name": "d", "points": [{"x": 1, "y": -2}],
                        "shapes": {"s": {"circle": {"radius": 2.5}}, "t": "dot"}, "note": null},
            "shape": {"square": 3.0},
            "tree": {"label": "root", "children": [{"label": "leaf", "children": []}]}
        }),
    );
    let schema = Catalog::global()
        .unwrap()
        .get("user_types")
        .unwrap()
        .input_schema()
        .clone();
    assert_eq!(
        schema["properties"]["drawing"],
        json!({"$ref": "#/$defs/Drawing"})
    );
    assert_eq!(
        schema["properties"]["tree"],
        json!({"$ref": "#/$defs/Tree"})
    );
    let defs = schema["$defs"].as_object().unwrap();
    let mut names: Vec<&String> = defs.keys().collect();
    names.sort();
    assert_eq!(names, ["Drawing", "Point", "Shape", "Tree"]);
    assert_eq!(
        defs["Tree"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Tree"})
    );
    assert_eq!(defs["Tree"]["description"], "A recursive type.");
}

#[test]
fn aliases_and_full_paths_behave_like_the_types_they_name() {
    roundtrip(
        "aliases",
        json!({"name": "n", "count": 3, "later": 4, "full": "f"}),
    );
    let schema = Catalog::global()
        .unwrap()
        .get("aliases")
        .unwrap()
        .input_schema()
        .clone();
    assert_eq!(schema["required"], json!(["name", "count"]));
    assert_eq!(
        schema["properties"]["later"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    assert_eq!(schema["properties"]["full"], json!({"type": "string"}));
}
