//! Comparing two catalog artefacts: which changes break callers, which do not.
//!
//! An input schema may only widen: every call that was valid must stay valid. An output
//! schema may only narrow: every consumer of the old output must still understand the new
//! one. Where a change cannot be proved safe (two unions that differ, say), it counts as
//! breaking: a CI guard should err on the side of asking a human.
//!
//! Prompts and resources follow the rule of arguments: a prompt argument (or template
//! variable) added as required, removed, or narrowed breaks callers; a prompt or resource
//! removed breaks them too, and so does a resource whose MIME type changes.

use crate::catalog::ItemKind;
use crate::export::{canonical, CatalogArtefact, FunctionEntry, PromptEntry, ResourceEntry};
use crate::schema::resolve;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt;

/// Whether a change breaks existing callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Impact {
    /// Existing callers keep working.
    Compatible,
    /// Some existing caller may break.
    Breaking,
}

/// One difference between two catalogs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Breaking or compatible.
    pub impact: Impact,
    /// What the item is: a tool, a prompt or a resource.
    pub kind: ItemKind,
    /// The item's name (a resource's URI).
    pub name: String,
    /// What changed.
    pub message: String,
}

impl Impact {
    /// `Breaking` when `breaking` holds, else `Compatible`.
    fn breaking_if(breaking: bool) -> Self {
        if breaking {
            Impact::Breaking
        } else {
            Impact::Compatible
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.impact {
            Impact::Breaking => "breaking",
            Impact::Compatible => "compatible",
        };
        write!(
            f,
            "{label}: {} `{}`: {}",
            self.kind, self.name, self.message
        )
    }
}

/// Every change from `old` to `new`, breaking ones first.
pub fn diff(old: &CatalogArtefact, new: &CatalogArtefact) -> Vec<Change> {
    let mut changes = Vec::new();
    // A removed tool whose parameters a new tool has was likely renamed: say so.
    let removed_tool = |old_tool: &FunctionEntry| {
        let renamed = new.function_schema.iter().find(|candidate| {
            candidate.parameters == old_tool.parameters
                && !old.function_schema.iter().any(|t| t.name == candidate.name)
        });
        match renamed {
            Some(candidate) => format!("removed (renamed to `{}`?)", candidate.name),
            None => "removed".to_owned(),
        }
    };
    compare_items(
        &old.function_schema,
        &new.function_schema,
        |tool| &tool.name,
        removed_tool,
        compare_tool,
        &mut changes,
    );
    compare_items(
        &old.prompts,
        &new.prompts,
        |prompt| &prompt.name,
        |_| "removed".to_owned(),
        compare_prompt,
        &mut changes,
    );
    compare_items(
        &old.resources,
        &new.resources,
        |resource| &resource.uri,
        |_| "removed".to_owned(),
        compare_resource,
        &mut changes,
    );
    changes.sort_by(|a, b| {
        b.impact
            .cmp(&a.impact)
            .then_with(|| a.kind.cmp(&b.kind))
            .then_with(|| a.name.cmp(&b.name))
    });
    changes
}

fn added(kind: ItemKind, name: &str) -> Change {
    Change {
        impact: Impact::Compatible,
        kind,
        name: name.to_owned(),
        message: "added".to_owned(),
    }
}

/// Pairs old and new items by key: removed ones break callers (`removed` says how),
/// added ones do not, and each pair is compared by `compare`.
fn compare_items<T: Item>(
    old: &[T],
    new: &[T],
    key: impl Fn(&T) -> &String,
    removed: impl Fn(&T) -> String,
    compare: impl Fn(&T, &T, &mut Vec<Change>),
    changes: &mut Vec<Change>,
) {
    for old_item in old {
        match new.iter().find(|n| key(n) == key(old_item)) {
            Some(new_item) => compare(old_item, new_item, changes),
            None => changes.push(Change {
                impact: Impact::Breaking,
                kind: T::KIND,
                name: key(old_item).clone(),
                message: removed(old_item),
            }),
        }
    }
    for new_item in new {
        if !old.iter().any(|o| key(o) == key(new_item)) {
            changes.push(added(T::KIND, key(new_item)));
        }
    }
}

/// What kind of item an artefact entry is.
trait Item {
    const KIND: ItemKind;
}

impl Item for FunctionEntry {
    const KIND: ItemKind = ItemKind::Tool;
}

impl Item for PromptEntry {
    const KIND: ItemKind = ItemKind::Prompt;
}

impl Item for ResourceEntry {
    const KIND: ItemKind = ItemKind::Resource;
}

fn compare_prompt(old: &PromptEntry, new: &PromptEntry, changes: &mut Vec<Change>) {
    compare_arguments(
        ItemKind::Prompt,
        &new.name,
        (&old.description, &new.description),
        (&old.parameters, &new.parameters),
        changes,
    );
}

/// What tools and prompts share: a description, and arguments that may only widen.
fn compare_arguments(
    kind: ItemKind,
    name: &str,
    (old_description, new_description): (&str, &str),
    (old_parameters, new_parameters): (&Value, &Value),
    changes: &mut Vec<Change>,
) {
    compare_descriptions(kind, name, old_description, new_description, changes);
    compare_schemas(
        kind,
        name,
        old_parameters,
        new_parameters,
        Direction::Input,
        changes,
    );
}

fn compare_resource(old: &ResourceEntry, new: &ResourceEntry, changes: &mut Vec<Change>) {
    compare_descriptions(
        ItemKind::Resource,
        &new.uri,
        &old.description,
        &new.description,
        changes,
    );
    let mut push = |impact, message: String| {
        changes.push(Change {
            impact,
            kind: ItemKind::Resource,
            name: new.uri.clone(),
            message,
        })
    };
    if old.name != new.name {
        push(
            Impact::Compatible,
            format!("name changed from `{}` to `{}`", old.name, new.name),
        );
    }
    if old.mime_type != new.mime_type {
        let show = |mime: &Option<String>| mime.clone().unwrap_or_else(|| "none".to_owned());
        push(
            Impact::Breaking,
            format!(
                "MIME type changed from {} to {}",
                show(&old.mime_type),
                show(&new.mime_type)
            ),
        );
    }
    if let (Some(old_parameters), Some(new_parameters)) = (&old.parameters, &new.parameters) {
        compare_schemas(
            ItemKind::Resource,
            &new.uri,
            old_parameters,
            new_parameters,
            Direction::Input,
            changes,
        );
    }
}

/// Compares the old and new schema of one item (its arguments, or a tool's output).
fn compare_schemas(
    kind: ItemKind,
    name: &str,
    old: &Value,
    new: &Value,
    direction: Direction,
    changes: &mut Vec<Change>,
) {
    Comparison {
        kind,
        tool: name,
        old_root: old,
        new_root: new,
        direction,
        changes,
    }
    .compare(old, new, "", 0);
}

/// A changed description breaks nobody, but is worth a line.
fn compare_descriptions(
    kind: ItemKind,
    name: &str,
    old: &str,
    new: &str,
    changes: &mut Vec<Change>,
) {
    if old != new {
        changes.push(Change {
            impact: Impact::Compatible,
            kind,
            name: name.to_owned(),
            message: "description changed".to_owned(),
        });
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// Arguments: the new schema must accept all the old one did.
    Input,
    /// Results: the new schema must produce nothing the old one did not.
    Output,
}

struct Comparison<'a> {
    kind: ItemKind,
    tool: &'a str,
    old_root: &'a Value,
    new_root: &'a Value,
    direction: Direction,
    changes: &'a mut Vec<Change>,
}

fn compare_tool(old: &FunctionEntry, new: &FunctionEntry, changes: &mut Vec<Change>) {
    compare_arguments(
        ItemKind::Tool,
        &new.name,
        (&old.description, &new.description),
        (&old.parameters, &new.parameters),
        changes,
    );
    match (&old.output_schema, &new.output_schema) {
        (Some(old_output), Some(new_output)) => compare_schemas(
            ItemKind::Tool,
            &new.name,
            old_output,
            new_output,
            Direction::Output,
            changes,
        ),
        (Some(_), None) => changes.push(Change {
            impact: Impact::Breaking,
            kind: ItemKind::Tool,
            name: new.name.clone(),
            message: "the output schema was removed".to_owned(),
        }),
        (None, Some(_)) => changes.push(Change {
            impact: Impact::Compatible,
            kind: ItemKind::Tool,
            name: new.name.clone(),
            message: "an output schema was added".to_owned(),
        }),
        (None, None) => {}
    }
}

impl Comparison<'_> {
    fn push(&mut self, impact: Impact, message: String) {
        self.changes.push(Change {
            impact,
            kind: self.kind,
            name: self.tool.to_owned(),
            message,
        });
    }

    fn subject(&self, path: &str) -> String {
        match (self.direction, path.is_empty()) {
            (Direction::Input, true) => "the arguments".to_owned(),
            (Direction::Input, false) => match self.kind {
                ItemKind::Tool => format!("parameter `{path}`"),
                ItemKind::Prompt => format!("argument `{path}`"),
                ItemKind::Resource => format!("template variable `{path}`"),
            },
            (Direction::Output, true) => "the output".to_owned(),
            (Direction::Output, false) => format!("output field `{path}`"),
        }
    }

    fn compare(&mut self, old: &Value, new: &Value, path: &str, depth: usize) {
        let old = resolve(old, self.old_root);
        let new = resolve(new, self.new_root);
        // `Value`'s equality ignores key order, so no canonical form is needed here.
        if depth > 16 || old == new {
            return;
        }
        let subject = self.subject(path);

        let old_types = types(old);
        let new_types = types(new);
        if let (Some(old_types), Some(new_types)) = (&old_types, &new_types) {
            let (widened, narrowed) = type_difference(old_types, new_types);
            let (safe, unsafe_) = match self.direction {
                Direction::Input => (widened, narrowed),
                Direction::Output => (narrowed, widened),
            };
            if !unsafe_.is_empty() || !safe.is_empty() {
                let message = format!(
                    "{subject}: type changed from {} to {}",
                    join(old_types),
                    join(new_types)
                );
                let impact = Impact::breaking_if(!unsafe_.is_empty());
                self.push(impact, message);
                if impact == Impact::Breaking {
                    return;
                }
            }
        }

        self.compare_enums(old, new, &subject);
        self.compare_bounds(old, new, &subject);
        self.compare_properties(old, new, path, depth);

        for keyword in ["items", "additionalProperties"] {
            if let (Some(old_child @ Value::Object(_)), Some(new_child @ Value::Object(_))) =
                (old.get(keyword), new.get(keyword))
            {
                let child_path = if keyword == "items" {
                    format!("{path}[]")
                } else {
                    format!("{path}.*")
                };
                self.compare(old_child, new_child, &child_path, depth + 1);
            }
        }

        for keyword in ["anyOf", "oneOf"] {
            let (old_branches, new_branches) = (old.get(keyword), new.get(keyword));
            if old_branches.is_some() || new_branches.is_some() {
                let old_set = branch_set(old_branches);
                let new_set = branch_set(new_branches);
                if old_set != new_set {
                    let gone = !old_set.is_subset(&new_set);
                    let came = !new_set.is_subset(&old_set);
                    let breaking = match self.direction {
                        Direction::Input => gone,
                        Direction::Output => came,
                    };
                    self.push(
                        Impact::breaking_if(breaking),
                        format!("{subject}: the accepted shapes changed"),
                    );
                }
            }
        }
    }

    fn compare_enums(&mut self, old: &Value, new: &Value, subject: &str) {
        let (Some(old_values), Some(new_values)) = (enum_values(old), enum_values(new)) else {
            return;
        };
        let removed: Vec<&String> = old_values.difference(&new_values).collect();
        let added: Vec<&String> = new_values.difference(&old_values).collect();
        let (breaking_word, safe_word, breaking, safe) = match self.direction {
            Direction::Input => ("removed", "added", removed, added),
            Direction::Output => ("added", "removed", added, removed),
        };
        if !breaking.is_empty() {
            self.push(
                Impact::Breaking,
                format!(
                    "{subject}: enum value {} {breaking_word}",
                    quote_all(&breaking)
                ),
            );
        }
        if !safe.is_empty() {
            self.push(
                Impact::Compatible,
                format!("{subject}: enum value {} {safe_word}", quote_all(&safe)),
            );
        }
    }

    fn compare_bounds(&mut self, old: &Value, new: &Value, subject: &str) {
        for (keyword, lower) in [
            ("minimum", true),
            ("exclusiveMinimum", true),
            ("minLength", true),
            ("minItems", true),
            ("maximum", false),
            ("exclusiveMaximum", false),
            ("maxLength", false),
            ("maxItems", false),
        ] {
            let old_bound = old.get(keyword).and_then(Value::as_f64);
            let new_bound = new.get(keyword).and_then(Value::as_f64);
            let tighter = match (old_bound, new_bound) {
                (None, None) => continue,
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (Some(o), Some(n)) if o == n => continue,
                (Some(o), Some(n)) => (lower && n > o) || (!lower && n < o),
            };
            let breaking = match self.direction {
                Direction::Input => tighter,
                Direction::Output => !tighter,
            };
            let show = |bound: Option<f64>| bound.map_or("none".to_owned(), |b| b.to_string());
            self.push(
                Impact::breaking_if(breaking),
                format!(
                    "{subject}: {keyword} {} from {} to {}",
                    if tighter { "narrowed" } else { "widened" },
                    show(old_bound),
                    show(new_bound)
                ),
            );
        }
    }

    fn compare_properties(&mut self, old: &Value, new: &Value, path: &str, depth: usize) {
        let (Some(old_properties), Some(new_properties)) = (
            old.get("properties").and_then(Value::as_object),
            new.get("properties").and_then(Value::as_object),
        ) else {
            return;
        };
        let old_required = required(old);
        let new_required = required(new);
        let join_path = |name: &str| {
            if path.is_empty() {
                name.to_owned()
            } else {
                format!("{path}.{name}")
            }
        };
        for (name, new_property) in new_properties {
            let child = join_path(name);
            let subject = self.subject(&child);
            let now_required = new_required.contains(name);
            match old_properties.get(name) {
                None => {
                    let breaking = match self.direction {
                        Direction::Input => now_required,
                        Direction::Output => false,
                    };
                    let what = if now_required { "required" } else { "optional" };
                    self.push(
                        Impact::breaking_if(breaking),
                        format!("{subject} added as {what}"),
                    );
                }
                Some(old_property) => {
                    let was_required = old_required.contains(name);
                    if was_required != now_required {
                        let breaking = match self.direction {
                            Direction::Input => now_required,
                            Direction::Output => was_required,
                        };
                        let became = if now_required { "required" } else { "optional" };
                        self.push(
                            Impact::breaking_if(breaking),
                            format!("{subject} became {became}"),
                        );
                    }
                    self.compare(old_property, new_property, &child, depth + 1);
                }
            }
        }
        for name in old_properties.keys() {
            if !new_properties.contains_key(name) {
                let subject = self.subject(&join_path(name));
                let closed = new.get("additionalProperties") == Some(&Value::Bool(false));
                let breaking = match self.direction {
                    Direction::Input => closed,
                    Direction::Output => old_required.contains(name),
                };
                self.push(Impact::breaking_if(breaking), format!("{subject} removed"));
            }
        }
    }
}

fn types(schema: &Value) -> Option<BTreeSet<String>> {
    let kinds = crate::schema::types(schema);
    (!kinds.is_empty()).then(|| kinds.into_iter().map(str::to_owned).collect())
}

/// Types only in `new` (widened) and only in `old` (narrowed), counting integer as a kind of
/// number.
fn type_difference(old: &BTreeSet<String>, new: &BTreeSet<String>) -> (Vec<String>, Vec<String>) {
    let covers = |set: &BTreeSet<String>, kind: &String| {
        set.contains(kind) || (kind == "integer" && set.contains("number"))
    };
    let widened = new.iter().filter(|k| !covers(old, k)).cloned().collect();
    let narrowed = old.iter().filter(|k| !covers(new, k)).cloned().collect();
    (widened, narrowed)
}

fn enum_values(schema: &Value) -> Option<BTreeSet<String>> {
    if let Some(constant) = schema.get("const") {
        return Some(BTreeSet::from([constant.to_string()]));
    }
    schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|values| values.iter().map(Value::to_string).collect())
}

fn branch_set(branches: Option<&Value>) -> BTreeSet<String> {
    branches
        .and_then(Value::as_array)
        .map(|b| b.iter().map(canonical::to_string).collect())
        .unwrap_or_default()
}

fn required(schema: &Value) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn join(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(" or ")
}

fn quote_all(values: &[&String]) -> String {
    values
        .iter()
        .map(|v| v.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn artefact(parameters: Value, output: Option<Value>) -> CatalogArtefact {
        CatalogArtefact {
            version: String::new(),
            hash: String::new(),
            count: 1,
            prompt_list: String::new(),
            function_schema: vec![FunctionEntry {
                name: "t".into(),
                description: "d".into(),
                parameters,
                output_schema: output,
            }],
            prompts: Vec::new(),
            resources: Vec::new(),
        }
    }

    fn messages(old: &CatalogArtefact, new: &CatalogArtefact) -> Vec<String> {
        diff(old, new).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn inputs_may_widen_but_not_narrow() {
        let old = artefact(
            json!({"type": "object",
                "properties": {
                    "n": {"type": "integer", "minimum": 0, "maximum": 10},
                    "s": {"type": "string"}
                },
                "required": ["n"], "additionalProperties": false}),
            None,
        );
        let new = artefact(
            json!({"type": "object",
                "properties": {"n": {"type": "number", "minimum": 1, "maximum": 20}},
                "required": ["n"], "additionalProperties": false}),
            None,
        );
        assert_eq!(
            messages(&old, &new),
            [
                "breaking: tool `t`: parameter `n`: minimum narrowed from 0 to 1",
                "breaking: tool `t`: parameter `s` removed",
                "compatible: tool `t`: parameter `n`: type changed from integer to number",
                "compatible: tool `t`: parameter `n`: maximum widened from 10 to 20",
            ]
        );
    }

    #[test]
    fn outputs_may_narrow_but_not_widen() {
        let params = json!({"type": "object", "properties": {}, "additionalProperties": false});
        let old = artefact(
            params.clone(),
            Some(json!({"type": "object",
                    "properties": {
                        "status": {"type": "string", "enum": ["ok", "late"]},
                        "eta": {"type": "integer"}
                    },
                    "required": ["status", "eta"]})),
        );
        let new = artefact(
            params,
            Some(json!({"type": "object",
                    "properties": {
                        "status": {"type": "string", "enum": ["ok", "late", "lost"]},
                        "note": {"type": "string"}
                    },
                    "required": ["status"]})),
        );
        assert_eq!(
            messages(&old, &new),
            [
                "breaking: tool `t`: output field `status`: enum value \"lost\" added",
                "breaking: tool `t`: output field `eta` removed",
                "compatible: tool `t`: output field `note` added as optional",
            ]
        );
    }

    #[test]
    fn a_rename_is_a_removal_with_a_hint() {
        let params =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let old = artefact(params.clone(), None);
        let mut new = artefact(params, None);
        new.function_schema[0].name = "t2".into();
        assert_eq!(
            messages(&old, &new),
            [
                "breaking: tool `t`: removed (renamed to `t2`?)",
                "compatible: tool `t2`: added"
            ]
        );
    }

    fn prompt(name: &str, parameters: Value) -> PromptEntry {
        PromptEntry {
            name: name.into(),
            description: "d".into(),
            parameters,
        }
    }

    fn resource(uri: &str, mime_type: &str, parameters: Option<Value>) -> ResourceEntry {
        ResourceEntry {
            uri: uri.into(),
            name: "r".into(),
            description: String::new(),
            mime_type: Some(mime_type.into()),
            parameters,
        }
    }

    #[test]
    fn prompts_and_resources_follow_the_rules_of_arguments() {
        let params = json!({"type": "object", "properties": {}});
        let mut old = artefact(params.clone(), None);
        let mut new = artefact(params, None);
        old.prompts = vec![
            prompt(
                "greet",
                json!({"type": "object", "properties": {"name": {"type": "string"}},
                    "required": ["name"]}),
            ),
            prompt("gone", json!({"type": "object", "properties": {}})),
        ];
        new.prompts = vec![prompt(
            "greet",
            json!({"type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "tone": {"type": "string"},
                    "lang": {"type": "string"}
                },
                "required": ["name", "lang"]}),
        )];
        let note = |kind: &str| {
            json!({"type": "object",
                "properties": {"id": {"type": kind}},
                "required": ["id"]})
        };
        old.resources = vec![
            resource("notes://{id}", "text/plain", Some(note("string"))),
            resource("notes://index", "text/plain", None),
            resource("notes://old", "text/plain", None),
        ];
        new.resources = vec![
            resource("notes://{id}", "text/plain", Some(note("integer"))),
            resource("notes://index", "application/json", None),
            resource("notes://new", "text/plain", None),
        ];
        assert_eq!(
            messages(&old, &new),
            [
                "breaking: prompt `gone`: removed",
                "breaking: prompt `greet`: argument `lang` added as required",
                "breaking: resource `notes://index`: MIME type changed from text/plain to \
                application/json",
                "breaking: resource `notes://old`: removed",
                "breaking: resource `notes://{id}`: template variable `id`: type changed from \
                string to integer",
                "compatible: prompt `greet`: argument `tone` added as optional",
                "compatible: resource `notes://new`: added",
            ]
        );
    }
}
