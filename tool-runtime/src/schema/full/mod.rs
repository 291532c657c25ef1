//! A validator of whole JSON Schema 2020-12 schemas whose references stay inside the schema
//! (`#`, `#/$defs/...`): every keyword that constrains a value, `unevaluatedProperties` and
//! `unevaluatedItems` included; `format` is an annotation, as the draft says by default.
//!
//! Our own rather than the `jsonschema` crate: that crate resolves remote documents,
//! validates formats and carries two regular-expression engines, which made it half of a
//! tool server's binary and a third of its build, for schemas that are generated from Rust
//! types and never leave the document. What the schemas of tools use is all here; what
//! this validator does not run (`$dynamicRef`, references to other documents, `$id` below
//! the root, look-around in a `pattern`) is refused when the schema is compiled, with the
//! reason, never checked loosely. The test suite holds it to `jsonschema`'s verdicts.

mod eval;

#[cfg(test)]
mod tests;

pub(crate) use eval::{Error, ErrorKind};

use super::simple::type_bit;
use serde_json::{Map, Number, Value};
use std::collections::HashMap;
use tool_rules::Pattern;

/// A schema compiled into nodes, one per schema object, with references resolved.
#[derive(Debug)]
pub(crate) struct Compiled {
    nodes: Vec<Node>,
}

/// Index of a node in [`Compiled::nodes`]; the root is 0.
type NodeId = usize;

/// One schema.
#[derive(Debug)]
enum Node {
    /// `true` or `{}`: anything.
    Any,
    /// `false`: nothing.
    Never,
    Keywords(Box<Keywords>),
}

/// The keywords of one schema object that constrain, each read once.
#[derive(Debug, Default)]
struct Keywords {
    /// Types allowed, as bits of [`type_bit`].
    types: Option<u8>,
    options: Option<Vec<Value>>,
    constant: Option<Value>,
    multiple_of: Option<Number>,
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<Pattern>,
    prefix_items: Vec<NodeId>,
    items: Option<NodeId>,
    contains: Option<NodeId>,
    min_contains: Option<u64>,
    max_contains: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
    unevaluated_items: Option<NodeId>,
    properties: Vec<(String, NodeId)>,
    pattern_properties: Vec<(Pattern, NodeId)>,
    additional_properties: Option<NodeId>,
    property_names: Option<NodeId>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    required: Vec<String>,
    dependent_required: Vec<(String, Vec<String>)>,
    dependent_schemas: Vec<(String, NodeId)>,
    unevaluated_properties: Option<NodeId>,
    all_of: Vec<NodeId>,
    any_of: Vec<NodeId>,
    one_of: Vec<NodeId>,
    not: Option<NodeId>,
    condition: Option<Condition>,
    reference: Option<NodeId>,
    /// Whether any schema is applied beside this one (`$ref`, `allOf`...), read once so
    /// that a check of a plain schema skips them all.
    has_in_place: bool,
    /// Whether any keyword reads an object's properties.
    has_object_rules: bool,
    /// Whether any keyword reads an array's items.
    has_array_rules: bool,
}

/// `if` with its `then` and `else`.
#[derive(Debug)]
struct Condition {
    test: NodeId,
    then: Option<NodeId>,
    otherwise: Option<NodeId>,
}

impl Keywords {
    /// Whether this schema reads the annotations of the schemas applied beside it.
    fn reads_annotations(&self) -> bool {
        self.unevaluated_properties.is_some() || self.unevaluated_items.is_some()
    }

    /// Records which groups of checks the keywords hold, so that evaluation skips the
    /// groups a schema has none of.
    fn summarize(&mut self) {
        let has_in_place = self.in_place().next().is_some();
        self.has_in_place = has_in_place;
        self.has_object_rules = !self.properties.is_empty()
            || !self.pattern_properties.is_empty()
            || self.additional_properties.is_some()
            || self.property_names.is_some()
            || self.min_properties.is_some()
            || self.max_properties.is_some()
            || !self.required.is_empty()
            || !self.dependent_required.is_empty()
            || !self.dependent_schemas.is_empty()
            || self.unevaluated_properties.is_some();
        self.has_array_rules = !self.prefix_items.is_empty()
            || self.items.is_some()
            || self.contains.is_some()
            || self.unevaluated_items.is_some();
    }

    /// The schemas applied to the same value as this one.
    fn in_place(&self) -> impl Iterator<Item = NodeId> + '_ {
        let condition = self
            .condition
            .iter()
            .flat_map(|c| [Some(c.test), c.then, c.otherwise].into_iter().flatten());
        self.reference
            .into_iter()
            .chain(self.all_of.iter().copied())
            .chain(self.any_of.iter().copied())
            .chain(self.one_of.iter().copied())
            .chain(self.not)
            .chain(condition)
            .chain(self.dependent_schemas.iter().map(|(_, id)| *id))
    }
}

/// Keywords that carry no constraint, or only hold schemas that others refer to.
const PASSIVE: [&str; 18] = [
    "$schema",
    "$comment",
    "$defs",
    "definitions",
    "$vocabulary",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "$anchor",
    "$dynamicAnchor",
];

impl Compiled {
    /// Compiles `root`; `Err` says, in words, what in it cannot be checked and where.
    pub(crate) fn new(root: &Value) -> Result<Compiled, String> {
        let mut compiler = Compiler {
            root,
            nodes: Vec::new(),
            at_pointer: HashMap::new(),
        };
        compiler
            .node(root, String::new())
            .map_err(|fault| fault.located(""))?;
        let compiled = Compiled {
            nodes: compiler.nodes,
        };
        compiled.refuse_loops()?;
        Ok(compiled)
    }

    /// Refuses a schema that applies itself to the same value again (`{"$ref": "#"}`):
    /// checking it would never end.
    fn refuse_loops(&self) -> Result<(), String> {
        // 0: not visited, 1: on the current path, 2: done.
        let mut state = vec![0u8; self.nodes.len()];
        let mut stack: Vec<(NodeId, Vec<NodeId>)> = Vec::new();
        for start in 0..self.nodes.len() {
            if state[start] != 0 {
                continue;
            }
            state[start] = 1;
            stack.push((start, self.next_in_place(start)));
            while let Some((node, pending)) = stack.last_mut() {
                let node = *node;
                match pending.pop() {
                    Some(next) if state[next] == 1 => {
                        return Err("applies itself to the same value again through `$ref` (or \
                             `allOf`, `anyOf`...), so checking it would never end"
                            .to_owned())
                    }
                    Some(next) if state[next] == 0 => {
                        state[next] = 1;
                        stack.push((next, self.next_in_place(next)));
                    }
                    Some(_) => {}
                    None => {
                        state[node] = 2;
                        stack.pop();
                    }
                }
            }
        }
        Ok(())
    }

    fn next_in_place(&self, id: NodeId) -> Vec<NodeId> {
        match &self.nodes[id] {
            Node::Keywords(keywords) => keywords.in_place().collect(),
            _ => Vec::new(),
        }
    }

    fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }
}

/// Why a schema does not compile: said of the schema object being read (`Here`), or
/// already of a place inside it.
enum Fault {
    Here(String),
    Located(String),
}

impl From<String> for Fault {
    fn from(why: String) -> Fault {
        Fault::Here(why)
    }
}

impl Fault {
    /// The fault in words, naming its place (`pointer`, unless it names one already).
    fn located(self, pointer: &str) -> String {
        match self {
            Fault::Here(why) => format!("{} {why}", place(pointer)),
            Fault::Located(said) => said,
        }
    }
}

/// Builds the nodes of one schema.
struct Compiler<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    /// The node made for each place in the schema (a JSON pointer), so that a reference
    /// to a place compiled already, the recursive ones included, reuses its node.
    at_pointer: HashMap<String, NodeId>,
}

impl<'a> Compiler<'a> {
    fn node(&mut self, schema: &'a Value, pointer: String) -> Result<NodeId, Fault> {
        if let Some(&id) = self.at_pointer.get(&pointer) {
            return Ok(id);
        }
        let id = self.nodes.len();
        self.nodes.push(Node::Any);
        self.at_pointer.insert(pointer.clone(), id);
        self.nodes[id] = match schema {
            Value::Bool(true) => Node::Any,
            Value::Bool(false) => Node::Never,
            Value::Object(map) => self
                .keywords(map, &pointer)
                .map_err(|fault| Fault::Located(fault.located(&pointer)))?,
            other => {
                return Err(Fault::Located(format!(
                    "{} is {other}, where a schema (an object or a boolean) belongs",
                    place(&pointer)
                )))
            }
        };
        Ok(id)
    }

    fn keywords(&mut self, map: &'a Map<String, Value>, pointer: &str) -> Result<Node, Fault> {
        let mut k = Keywords::default();
        for (keyword, value) in map {
            if !read_assertion(&mut k, keyword, value)? {
                self.read_applicator(&mut k, map, keyword, value, pointer)?;
            }
        }
        k.summarize();
        let constrains = map.keys().any(|keyword| {
            !PASSIVE.contains(&keyword.as_str()) && !matches!(keyword.as_str(), "then" | "else")
        });
        Ok(if constrains {
            Node::Keywords(Box::new(k))
        } else {
            Node::Any
        })
    }

    /// Reads a keyword that applies schemas of its own (`items`, `properties`, `allOf`,
    /// `$ref`, ...) into `k`, refusing the ones the validator does not follow; a keyword no
    /// vocabulary defines (an annotation) is left alone.
    fn read_applicator(
        &mut self,
        k: &mut Keywords,
        map: &'a Map<String, Value>,
        keyword: &str,
        value: &'a Value,
        pointer: &str,
    ) -> Result<(), Fault> {
        let here = || format!("{pointer}/{}", escape(keyword));
        match keyword {
            "items" if value.is_array() => {
                return Err(Fault::Here(
                    "has `items` as a list (an older draft's tuples); JSON Schema 2020-12 \
                     says `prefixItems`"
                        .to_owned(),
                ))
            }
            "items" => k.items = Some(self.node(value, here())?),
            "prefixItems" => k.prefix_items = self.list(keyword, value, &here())?,
            "contains" => k.contains = Some(self.node(value, here())?),
            "unevaluatedItems" => k.unevaluated_items = Some(self.node(value, here())?),
            "properties" => k.properties = self.named(keyword, value, &here())?,
            "patternProperties" => {
                for (source, schema) in object(keyword, value)? {
                    let compiled = pattern(&Value::from(source.as_str()))?;
                    let id = self.node(schema, format!("{}/{}", here(), escape(source)))?;
                    k.pattern_properties.push((compiled, id));
                }
            }
            "additionalProperties" => k.additional_properties = Some(self.node(value, here())?),
            "propertyNames" => k.property_names = Some(self.node(value, here())?),
            "unevaluatedProperties" => k.unevaluated_properties = Some(self.node(value, here())?),
            "dependentRequired" => {
                for (name, required) in object(keyword, value)? {
                    k.dependent_required
                        .push((name.clone(), names(keyword, required)?));
                }
            }
            "dependentSchemas" => k.dependent_schemas = self.named(keyword, value, &here())?,
            "allOf" => k.all_of = self.list(keyword, value, &here())?,
            "anyOf" => k.any_of = self.list(keyword, value, &here())?,
            "oneOf" => k.one_of = self.list(keyword, value, &here())?,
            "not" => k.not = Some(self.node(value, here())?),
            "if" => {
                k.condition = Some(Condition {
                    test: self.node(value, here())?,
                    then: map
                        .get("then")
                        .map(|then| self.node(then, format!("{pointer}/then")))
                        .transpose()?,
                    otherwise: map
                        .get("else")
                        .map(|other| self.node(other, format!("{pointer}/else")))
                        .transpose()?,
                })
            }
            // Without `if`, `then` and `else` do nothing.
            "then" | "else" => {}
            "$ref" => k.reference = Some(self.reference(value)?),
            // A standard draft's meta-schema is read as 2020-12 (what clients send); a
            // meta-schema of its own may turn vocabularies off, which cannot be honoured
            // without reading it.
            "$schema" if !standard_meta_schema(value) => {
                return Err(Fault::Here(format!(
                    "names the meta-schema {value}, which the built-in validator does not \
                     read; use https://json-schema.org/draft/2020-12/schema"
                )))
            }
            "$id" if pointer.is_empty() => {}
            "$id" | "$dynamicRef" | "$recursiveRef" | "$recursiveAnchor" => {
                return Err(Fault::Here(format!(
                    "uses `{keyword}`, which the built-in validator does not follow"
                )))
            }
            "dependencies" | "additionalItems" => {
                return Err(Fault::Here(format!(
                    "uses `{keyword}`, an older draft's keyword; JSON Schema 2020-12 says \
                     {}",
                    if keyword == "dependencies" {
                        "`dependentRequired` or `dependentSchemas`"
                    } else {
                        "`items` after `prefixItems`"
                    }
                )))
            }
            // Annotations, and keywords no vocabulary defines: both constrain nothing.
            _ => {}
        }
        Ok(())
    }

    fn list(&mut self, keyword: &str, value: &'a Value, here: &str) -> Result<Vec<NodeId>, Fault> {
        let schemas = array(keyword, value)?;
        if schemas.is_empty() {
            return Err(Fault::Here(format!(
                "has an empty `{keyword}`; it needs at least one schema"
            )));
        }
        schemas
            .iter()
            .enumerate()
            .map(|(index, schema)| self.node(schema, format!("{here}/{index}")))
            .collect()
    }

    fn named(
        &mut self,
        keyword: &str,
        value: &'a Value,
        here: &str,
    ) -> Result<Vec<(String, NodeId)>, Fault> {
        object(keyword, value)?
            .iter()
            .map(|(name, schema)| {
                let id = self.node(schema, format!("{here}/{}", escape(name)))?;
                Ok((name.clone(), id))
            })
            .collect()
    }

    /// The node a `$ref` points at: a JSON pointer into this schema.
    fn reference(&mut self, value: &Value) -> Result<NodeId, Fault> {
        let target = value
            .as_str()
            .ok_or_else(|| format!("has `$ref` {value}, where a string belongs"))?;
        let Some(fragment) = target.strip_prefix('#') else {
            return Err(Fault::Here(format!(
                "refers to `{target}`, another document; the built-in validator follows \
                 references inside the schema only (`#/$defs/...`)"
            )));
        };
        let fragment = percent_decoded(fragment)
            .ok_or_else(|| format!("refers to `{target}`, which is not a JSON pointer"))?;
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(Fault::Here(format!(
                "refers to `{target}`, an anchor; the built-in validator follows JSON \
                 pointers only (`#/$defs/...`)"
            )));
        }
        let schema = self
            .root
            .pointer(&fragment)
            .ok_or_else(|| format!("refers to `{target}`, which is not in the schema"))?;
        // The same place, however its pointer was spelled.
        self.node(schema, fragment)
    }
}

/// Where `pointer` is, as the compile errors say it.
fn place(pointer: &str) -> String {
    if pointer.is_empty() {
        "the schema".to_owned()
    } else {
        format!("the schema at `{pointer}`")
    }
}

/// `name` as a JSON pointer token.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// `text` with its `%XX` escapes decoded; `None` when they do not make UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn types(value: &Value) -> Result<u8, String> {
    let bit = |name: &Value| match name.as_str().map(type_bit) {
        Some(bit) if bit != 0 => Ok(bit),
        _ => Err(format!(
            "has the type {name}, which JSON Schema does not define"
        )),
    };
    match value {
        Value::Array(names) => names.iter().try_fold(0, |bits, name| Ok(bits | bit(name)?)),
        name => bit(name),
    }
}

fn number(keyword: &str, value: &Value) -> Result<Number, String> {
    value
        .as_number()
        .cloned()
        .ok_or_else(|| format!("has `{keyword}` {value}, where a number belongs"))
}

fn count(keyword: &str, value: &Value) -> Result<u64, String> {
    value
        .as_u64()
        .or_else(|| {
            value
                .as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        })
        .ok_or_else(|| format!("has `{keyword}` {value}, where a count (0 or more) belongs"))
}

fn boolean(keyword: &str, value: &Value) -> Result<bool, String> {
    value
        .as_bool()
        .ok_or_else(|| format!("has `{keyword}` {value}, where true or false belongs"))
}

fn array<'v>(keyword: &str, value: &'v Value) -> Result<&'v Vec<Value>, String> {
    value
        .as_array()
        .ok_or_else(|| format!("has `{keyword}` {value}, where a list belongs"))
}

fn object<'v>(keyword: &str, value: &'v Value) -> Result<&'v Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("has `{keyword}` {value}, where an object belongs"))
}

fn names(keyword: &str, value: &Value) -> Result<Vec<String>, String> {
    array(keyword, value)?
        .iter()
        .map(|name| {
            name.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("has {name} in `{keyword}`, where a name belongs"))
        })
        .collect()
}

fn pattern(value: &Value) -> Result<Pattern, String> {
    let source = value
        .as_str()
        .ok_or_else(|| format!("has the pattern {value}, where a string belongs"))?;
    Pattern::new(source).map_err(|why| format!("has the pattern `{source}`: {why}"))
}

/// Reads a keyword that asserts something of the value itself (`type`, `minimum`,
/// `required`, ...) into `k`; false when `keyword` is not one.
fn read_assertion(k: &mut Keywords, keyword: &str, value: &Value) -> Result<bool, Fault> {
    match keyword {
        "type" => k.types = Some(types(value)?),
        "enum" => k.options = Some(array(keyword, value)?.clone()),
        "const" => k.constant = Some(value.clone()),
        "multipleOf" => {
            let n = number(keyword, value)?;
            if n.as_f64().is_none_or(|f| f <= 0.0) {
                return Err(format!("has `multipleOf` {n}; it must be above 0").into());
            }
            k.multiple_of = Some(n);
        }
        "minimum" => k.minimum = Some(number(keyword, value)?),
        "maximum" => k.maximum = Some(number(keyword, value)?),
        "exclusiveMinimum" => k.exclusive_minimum = Some(number(keyword, value)?),
        "exclusiveMaximum" => k.exclusive_maximum = Some(number(keyword, value)?),
        "minLength" => k.min_length = Some(count(keyword, value)?),
        "maxLength" => k.max_length = Some(count(keyword, value)?),
        "minItems" => k.min_items = Some(count(keyword, value)?),
        "maxItems" => k.max_items = Some(count(keyword, value)?),
        "minContains" => k.min_contains = Some(count(keyword, value)?),
        "maxContains" => k.max_contains = Some(count(keyword, value)?),
        "minProperties" => k.min_properties = Some(count(keyword, value)?),
        "maxProperties" => k.max_properties = Some(count(keyword, value)?),
        "uniqueItems" => k.unique_items = boolean(keyword, value)?,
        "pattern" => k.pattern = Some(pattern(value)?),
        "required" => k.required = names(keyword, value)?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// Whether `value` names a meta-schema of a published JSON Schema draft.
fn standard_meta_schema(value: &Value) -> bool {
    value.as_str().is_some_and(|uri| {
        let uri = uri.trim_end_matches('#');
        let path = uri
            .strip_prefix("https://json-schema.org/")
            .or_else(|| uri.strip_prefix("http://json-schema.org/"));
        path.is_some_and(|path| {
            [
                "draft/2020-12/schema",
                "draft/2019-09/schema",
                "draft-07/schema",
                "draft-06/schema",
                "draft-04/schema",
                "schema",
            ]
            .contains(&path)
        })
    })
}
