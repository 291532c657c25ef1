//! Unions told apart by a tag (serde's internally and adjacently tagged enums): each branch
//! an object whose tag property is a constant. Their errors name the tag and its values,
//! and a value whose tag picks a branch is described against that branch alone.

use super::describe::{compact, describe};
use super::{constant, required, resolve};
use serde_json::Value;

/// A union whose branches share a tag property, each with its own constant.
pub(crate) struct Tagged<'a> {
    /// The tag property's name (`kind`, `type`...).
    pub(crate) tag: &'a str,
    /// Each branch's tag value and schema.
    pub(crate) branches: Vec<(&'a Value, &'a Value)>,
}

impl<'a> Tagged<'a> {
    /// The union `schema` is, if it is one told apart by a tag.
    pub(crate) fn of(schema: &'a Value, root: &'a Value) -> Option<Tagged<'a>> {
        let schema = resolve(schema, root);
        let branches = ["oneOf", "anyOf"]
            .iter()
            .find_map(|keyword| schema.get(*keyword).and_then(Value::as_array))?;
        let branches: Vec<&Value> = branches.iter().map(|b| resolve(b, root)).collect();
        let tag_of = |branch: &'a Value, name: &str| constant(branch.get("properties")?.get(name)?);
        let tag = branches
            .first()?
            .get("properties")?
            .as_object()?
            .keys()
            .find(|name| branches.iter().all(|branch| tag_of(branch, name).is_some()))?;
        let branches = branches
            .into_iter()
            .map(|branch| (tag_of(branch, tag).unwrap_or(&Value::Null), branch))
            .collect();
        Some(Tagged { tag, branches })
    }

    /// How the union reads in an error: `an object whose 'kind' is "circle" (with
    /// radius) or "square" (with side)`.
    pub(crate) fn description(&self) -> String {
        let options: Vec<String> = self
            .branches
            .iter()
            .map(|(value, branch)| {
                let fields: Vec<&str> = fields(branch)
                    .into_iter()
                    .filter(|field| *field != self.tag)
                    .collect();
                if fields.is_empty() {
                    compact(value)
                } else {
                    format!("{} (with {})", compact(value), fields.join(", "))
                }
            })
            .collect();
        format!("an object whose '{}' is {}", self.tag, options.join(" or "))
    }

    /// What is wrong with `value` at `shown`, judged by its tag: no tag, an unknown one,
    /// the fields its branch requires and it lacks, or else the shape of that branch alone.
    /// `None` when the value is not an object (the whole union is described then).
    pub(crate) fn problem(&self, shown: &str, value: &Value, root: &Value) -> Option<String> {
        let object = value.as_object()?;
        let tags: Vec<String> = self.branches.iter().map(|(v, _)| compact(v)).collect();
        let Some(given) = object.get(self.tag) else {
            return Some(format!(
                "'{shown}' is missing its '{}' ({}), which says which kind of object it is; got {}",
                self.tag,
                tags.join(" or "),
                compact(value)
            ));
        };
        let Some((_, branch)) = self.branches.iter().find(|(v, _)| *v == given) else {
            return Some(format!(
                "'{shown}' has '{}' {}, which is not one of {}",
                self.tag,
                compact(given),
                tags.join(", ")
            ));
        };
        let properties = branch.get("properties").and_then(Value::as_object);
        let missing: Vec<String> = branch
            .as_object()
            .map(required)
            .unwrap_or_default()
            .into_iter()
            .filter(|field| object.get(*field).is_none_or(Value::is_null))
            .map(|field| {
                let expected = properties
                    .and_then(|p| p.get(field))
                    .map(|schema| format!(" ({})", describe(schema, root)))
                    .unwrap_or_default();
                format!("'{field}'{expected}")
            })
            .collect();
        if missing.is_empty() {
            return Some(format!(
                "'{shown}' with '{}' {} must be {}; got {}",
                self.tag,
                compact(given),
                describe(branch, root),
                compact(value)
            ));
        }
        Some(format!(
            "'{shown}' with '{}' {} is missing required field {}",
            self.tag,
            compact(given),
            missing.join(", ")
        ))
    }
}

fn fields(branch: &Value) -> Vec<&str> {
    branch
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default()
}
