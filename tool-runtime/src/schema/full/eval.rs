//! Checks a value against a [`Compiled`] schema: the verdict, or every error with its place,
//! and the annotations (which properties and items a schema evaluated) that
//! `unevaluatedProperties` and `unevaluatedItems` read.

use super::{Compiled, Keywords, Node, NodeId};
use crate::schema::describe::{self, PathSegment};
use crate::schema::simple::{compare, equal, type_bits};
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::fmt;

/// One way a value breaks the schema.
#[derive(Debug, Clone)]
pub(crate) struct Error {
    /// Where, from the value checked.
    pub(crate) path: Vec<PathSegment>,
    /// The value at that place.
    pub(crate) instance: Value,
    pub(crate) kind: ErrorKind,
}

/// What kind of rule an [`Error`] breaks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ErrorKind {
    /// An object lacks a property that `required` (or `dependentRequired`) names.
    Required { property: String },
    /// An object has properties that `additionalProperties` or `unevaluatedProperties`
    /// (being `false`) refuses.
    AdditionalProperties { unexpected: Vec<String> },
    /// Any other rule, said in words that name its keyword.
    Rule(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Required { property } => write!(f, "'{property}' is required"),
            ErrorKind::AdditionalProperties { unexpected } => {
                let names: Vec<String> = unexpected.iter().map(|n| format!("'{n}'")).collect();
                write!(f, "unexpected properties {}", names.join(", "))
            }
            ErrorKind::Rule(rule) => f.write_str(rule),
        }
    }
}

impl Compiled {
    /// Whether `value` fits the schema.
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        let mut run = Run {
            compiled: self,
            errors: None,
        };
        run.eval(0, value, &mut Vec::new(), false).is_some()
    }

    /// Every way `value` breaks the schema; empty when it fits.
    pub(crate) fn errors(&self, value: &Value) -> Vec<Error> {
        let mut run = Run {
            compiled: self,
            errors: Some(Vec::new()),
        };
        run.eval(0, value, &mut Vec::new(), false);
        run.errors.unwrap_or_default()
    }
}

/// One check of a value.
struct Run<'c> {
    compiled: &'c Compiled,
    /// The errors found, when they are wanted; `None` for a verdict alone, which stops at
    /// the first.
    errors: Option<Vec<Error>>,
}

/// Which properties (of an object, by position) or items (of an array) the schemas
/// applied to it evaluated; empty when nobody reads it.
#[derive(Default)]
struct Marks(Vec<bool>);

impl Marks {
    fn for_value(value: &Value, tracked: bool) -> Marks {
        let len = match value {
            Value::Object(map) if tracked => map.len(),
            Value::Array(items) if tracked => items.len(),
            _ => 0,
        };
        Marks(vec![false; len])
    }

    fn set(&mut self, index: usize) {
        if let Some(seen) = self.0.get_mut(index) {
            *seen = true;
        }
    }

    fn merge(&mut self, other: &Marks) {
        for (seen, other) in self.0.iter_mut().zip(&other.0) {
            *seen |= *other;
        }
    }

    fn seen(&self, index: usize) -> bool {
        self.0.get(index).copied().unwrap_or(false)
    }
}

impl Run<'_> {
    /// Steps into a property or an item: its place is kept only when errors are (a verdict
    /// needs no places, and a key's place costs a copy of the key).
    fn enter(&self, path: &mut Vec<PathSegment>, segment: impl FnOnce() -> PathSegment) {
        if self.errors.is_some() {
            path.push(segment());
        }
    }

    fn leave(&self, path: &mut Vec<PathSegment>) {
        if self.errors.is_some() {
            path.pop();
        }
    }

    /// Records a broken rule; whether the check goes on (it does when errors are collected).
    fn fail(&mut self, path: &[PathSegment], value: &Value, kind: ErrorKind) -> bool {
        match &mut self.errors {
            Some(errors) => {
                errors.push(Error {
                    path: path.to_vec(),
                    instance: value.clone(),
                    kind,
                });
                true
            }
            None => false,
        }
    }

    /// Records a failure like [`fail`](Self::fail); `None` when that loses the verdict (no
    /// errors are collected, so the first failure ends the check), for `?`.
    fn failed(&mut self, path: &[PathSegment], value: &Value, kind: ErrorKind) -> Option<()> {
        self.fail(path, value, kind).then_some(())
    }

    /// Whether `value` fits node `id`, asked without recording errors, and what it marked.
    fn quietly(
        &self,
        id: NodeId,
        value: &Value,
        path: &mut Vec<PathSegment>,
        tracked: bool,
    ) -> Option<Marks> {
        let mut quiet = Run {
            compiled: self.compiled,
            errors: None,
        };
        quiet.eval(id, value, path, tracked)
    }

    /// Checks `value` (at `path`) against node `id`; `None` when it does not fit. `tracked`
    /// asks for the marks of what was evaluated, for a schema beside this one.
    fn eval(
        &mut self,
        id: NodeId,
        value: &Value,
        path: &mut Vec<PathSegment>,
        tracked: bool,
    ) -> Option<Marks> {
        let keywords = match self.compiled.node(id) {
            Node::Any => return Some(Marks::default()),
            Node::Never => {
                self.fail(path, value, rule("no value is allowed here"));
                return None;
            }
            Node::Keywords(keywords) => keywords,
        };
        let tracked = tracked || keywords.reads_annotations();
        let mut marks = Marks::for_value(value, tracked);
        let mut broken = Broken {
            words: self.errors.is_some(),
            any: false,
            kinds: Vec::new(),
        };
        own_rules(keywords, value, &mut broken);
        if broken.any && !broken.words {
            return None;
        }
        let mut valid = !broken.any;
        for kind in broken.kinds {
            self.fail(path, value, kind);
        }
        // Applicators in place: each sees the same value, and what they evaluate counts as
        // evaluated here.
        if keywords.has_in_place {
            valid &= self.in_place(keywords, value, path, tracked, &mut marks)?;
        }
        match value {
            Value::Object(map) if keywords.has_object_rules => {
                valid &= self.object(keywords, map, value, path, &mut marks, tracked);
            }
            Value::Array(items) if keywords.has_array_rules => {
                valid &= self.array(keywords, items, value, path, &mut marks);
            }
            _ => {}
        }
        valid.then_some(marks)
    }

    /// The schemas applied beside `keywords` to the same value (`$ref`, `allOf`, `anyOf`,
    /// `oneOf`, `not`, `if`), adding what they evaluated to `marks`; whether the value fits
    /// them, or `None` for a verdict already lost.
    fn in_place(
        &mut self,
        keywords: &Keywords,
        value: &Value,
        path: &mut Vec<PathSegment>,
        tracked: bool,
        marks: &mut Marks,
    ) -> Option<bool> {
        let mut valid = true;
        if let Some(target) = keywords.reference {
            valid &= self.applied(target, value, path, tracked, marks)?;
        }
        for &each in &keywords.all_of {
            valid &= self.applied(each, value, path, tracked, marks)?;
        }
        valid &= self.alternatives(keywords, value, path, tracked, marks)?;
        if let Some(not) = keywords.not {
            if self.quietly(not, value, path, false).is_some() {
                valid = false;
                let kind = rule("the value fits the schema of `not`, which it must not");
                self.failed(path, value, kind)?;
            }
        }
        if let Some(condition) = &keywords.condition {
            let branch = match self.quietly(condition.test, value, path, tracked) {
                Some(found) => {
                    marks.merge(&found);
                    condition.then
                }
                None => condition.otherwise,
            };
            if let Some(branch) = branch {
                valid &= self.applied(branch, value, path, tracked, marks)?;
            }
        }
        Some(valid)
    }

    /// Applies the schema `id` to the same value, adding what it evaluated to `marks`;
    /// whether the value fits it, or `None` for a verdict already lost.
    fn applied(
        &mut self,
        id: NodeId,
        value: &Value,
        path: &mut Vec<PathSegment>,
        tracked: bool,
        marks: &mut Marks,
    ) -> Option<bool> {
        match self.eval(id, value, path, tracked) {
            Some(found) => {
                marks.merge(&found);
                Some(true)
            }
            None if self.errors.is_none() => None,
            None => Some(false),
        }
    }

    /// `anyOf` and `oneOf`, adding what the alternatives that fit evaluated to `marks`;
    /// whether the value fits them, or `None` for a verdict already lost.
    fn alternatives(
        &mut self,
        keywords: &Keywords,
        value: &Value,
        path: &mut Vec<PathSegment>,
        tracked: bool,
        marks: &mut Marks,
    ) -> Option<bool> {
        let mut valid = true;
        if !keywords.any_of.is_empty() {
            let mut any = false;
            for &each in &keywords.any_of {
                if let Some(found) = self.quietly(each, value, path, tracked) {
                    marks.merge(&found);
                    any = true;
                    if !tracked {
                        break;
                    }
                }
            }
            if !any {
                valid = false;
                let kind = rule("the value fits none of the alternatives of `anyOf`");
                self.failed(path, value, kind)?;
            }
        }
        if !keywords.one_of.is_empty() {
            let (mut fitting, mut first) = (0, None);
            for &each in &keywords.one_of {
                if let Some(found) = self.quietly(each, value, path, tracked) {
                    fitting += 1;
                    first.get_or_insert(found);
                }
            }
            let kind = match fitting {
                1 => {
                    marks.merge(&first.unwrap_or_default());
                    return Some(valid);
                }
                0 => rule("the value fits none of the alternatives of `oneOf`"),
                n => ErrorKind::Rule(format!(
                    "the value fits {n} of the alternatives of `oneOf`, where exactly one must"
                )),
            };
            valid = false;
            self.failed(path, value, kind)?;
        }
        Some(valid)
    }

    /// The object keywords; whether the object fits them.
    fn object(
        &mut self,
        keywords: &Keywords,
        map: &Map<String, Value>,
        value: &Value,
        path: &mut Vec<PathSegment>,
        marks: &mut Marks,
        tracked: bool,
    ) -> bool {
        // Each step's `None` is a verdict already lost (the first failure ends the check).
        let Some(entries) = self.entries(keywords, map, value, path, marks) else {
            return false;
        };
        let Some(counted) = self.object_rules(keywords, map, value, path) else {
            return false;
        };
        let Some(dependent) = self.dependent_schemas(keywords, map, value, path, marks, tracked)
        else {
            return false;
        };
        let Some(unevaluated) = self.unevaluated_properties(keywords, map, value, path, marks)
        else {
            return false;
        };
        entries && counted && dependent && unevaluated
    }

    /// Each entry against `properties`, `patternProperties` and `additionalProperties`,
    /// marking the entries they evaluated; whether all fit, or `None` for a verdict lost.
    fn entries(
        &mut self,
        keywords: &Keywords,
        map: &Map<String, Value>,
        value: &Value,
        path: &mut Vec<PathSegment>,
        marks: &mut Marks,
    ) -> Option<bool> {
        let mut valid = true;
        let mut unexpected = Vec::new();
        for (index, (name, entry)) in map.iter().enumerate() {
            let mut matched = false;
            let key = || PathSegment::Key(name.clone());
            if let Some((_, id)) = keywords.properties.iter().find(|(known, _)| known == name) {
                matched = true;
                valid &= self.child(*id, entry, path, key);
            }
            for (pattern, id) in &keywords.pattern_properties {
                if pattern.is_match(name) {
                    matched = true;
                    valid &= self.child(*id, entry, path, key);
                }
            }
            if !matched {
                if let Some(id) = keywords.additional_properties {
                    matched = true;
                    if matches!(self.compiled.node(id), Node::Never) {
                        unexpected.push(name.clone());
                    } else {
                        valid &= self.child(id, entry, path, key);
                    }
                }
            }
            if !valid && self.errors.is_none() {
                return None;
            }
            if matched {
                marks.set(index);
            }
        }
        valid &= self.refuse_unexpected(path, value, unexpected)?;
        Some(valid)
    }

    /// `propertyNames`, the counts and the required names; whether the object meets them,
    /// or `None` for a verdict lost.
    fn object_rules(
        &mut self,
        keywords: &Keywords,
        map: &Map<String, Value>,
        value: &Value,
        path: &mut Vec<PathSegment>,
    ) -> Option<bool> {
        let mut failures = Vec::new();
        if let Some(id) = keywords.property_names {
            for name in map.keys() {
                let key = Value::String(name.clone());
                if self.quietly(id, &key, path, false).is_none() {
                    failures.push(ErrorKind::Rule(format!(
                        "the name '{name}' does not fit `propertyNames`"
                    )));
                }
            }
        }
        let count = map.len() as u64;
        if keywords.min_properties.is_some_and(|min| count < min) {
            failures.push(ErrorKind::Rule(format!(
                "the object has {count} properties, fewer than `minProperties` allows"
            )));
        }
        if keywords.max_properties.is_some_and(|max| count > max) {
            failures.push(ErrorKind::Rule(format!(
                "the object has {count} properties, more than `maxProperties` allows"
            )));
        }
        for name in &keywords.required {
            if !map.contains_key(name) {
                failures.push(ErrorKind::Required {
                    property: name.clone(),
                });
            }
        }
        for (present, names) in &keywords.dependent_required {
            if map.contains_key(present) {
                for name in names.iter().filter(|name| !map.contains_key(*name)) {
                    failures.push(ErrorKind::Required {
                        property: name.clone(),
                    });
                }
            }
        }
        let valid = failures.is_empty();
        for kind in failures {
            self.failed(path, value, kind)?;
        }
        Some(valid)
    }

    /// `dependentSchemas`, applied to the whole object; whether it fits them, or `None` for
    /// a verdict lost.
    fn dependent_schemas(
        &mut self,
        keywords: &Keywords,
        map: &Map<String, Value>,
        value: &Value,
        path: &mut Vec<PathSegment>,
        marks: &mut Marks,
        tracked: bool,
    ) -> Option<bool> {
        let mut valid = true;
        for (present, id) in &keywords.dependent_schemas {
            if map.contains_key(present) {
                valid &= self.applied(*id, value, path, tracked, marks)?;
            }
        }
        Some(valid)
    }

    /// `unevaluatedProperties`, for the entries nothing else evaluated; whether they fit
    /// it, or `None` for a verdict lost.
    fn unevaluated_properties(
        &mut self,
        keywords: &Keywords,
        map: &Map<String, Value>,
        value: &Value,
        path: &mut Vec<PathSegment>,
        marks: &mut Marks,
    ) -> Option<bool> {
        let Some(id) = keywords.unevaluated_properties else {
            return Some(true);
        };
        let mut valid = true;
        let mut unexpected = Vec::new();
        for (index, (name, entry)) in map.iter().enumerate() {
            if marks.seen(index) {
                continue;
            }
            if matches!(self.compiled.node(id), Node::Never) {
                unexpected.push(name.clone());
                continue;
            }
            valid &= self.child(id, entry, path, || PathSegment::Key(name.clone()));
            if !valid && self.errors.is_none() {
                return None;
            }
            marks.set(index);
        }
        valid &= self.refuse_unexpected(path, value, unexpected)?;
        Some(valid)
    }

    /// Records the properties a `false` (`additionalProperties`, `unevaluatedProperties`)
    /// refuses: whether there were none, or `None` for a verdict lost.
    fn refuse_unexpected(
        &mut self,
        path: &[PathSegment],
        value: &Value,
        unexpected: Vec<String>,
    ) -> Option<bool> {
        if unexpected.is_empty() {
            return Some(true);
        }
        self.failed(path, value, ErrorKind::AdditionalProperties { unexpected })?;
        Some(false)
    }

    /// The array keywords; whether the array fits them.
    fn array(
        &mut self,
        keywords: &Keywords,
        items: &[Value],
        value: &Value,
        path: &mut Vec<PathSegment>,
        marks: &mut Marks,
    ) -> bool {
        let mut valid = true;
        for (index, item) in items.iter().enumerate() {
            let id = match keywords.prefix_items.get(index) {
                Some(&id) => Some(id),
                None => keywords.items,
            };
            if let Some(id) = id {
                valid &= self.child(id, item, path, || PathSegment::Index(index));
                if !valid && self.errors.is_none() {
                    return false;
                }
                marks.set(index);
            }
        }
        if let Some(id) = keywords.contains {
            let mut fitting = 0u64;
            for (index, item) in items.iter().enumerate() {
                self.enter(path, || PathSegment::Index(index));
                if self.quietly(id, item, path, false).is_some() {
                    fitting += 1;
                    marks.set(index);
                }
                self.leave(path);
            }
            let min = keywords.min_contains.unwrap_or(1);
            if fitting < min {
                valid = false;
                let said = format!("{fitting} items fit `contains`, where at least {min} must");
                if !self.fail(path, value, ErrorKind::Rule(said)) {
                    return false;
                }
            }
            if let Some(max) = keywords.max_contains.filter(|&max| fitting > max) {
                valid = false;
                let said = format!("{fitting} items fit `contains`, where at most {max} may");
                if !self.fail(path, value, ErrorKind::Rule(said)) {
                    return false;
                }
            }
        }
        if let Some(id) = keywords.unevaluated_items {
            for (index, item) in items.iter().enumerate() {
                if marks.seen(index) {
                    continue;
                }
                valid &= self.child(id, item, path, || PathSegment::Index(index));
                if !valid && self.errors.is_none() {
                    return false;
                }
                marks.set(index);
            }
        }
        valid
    }

    /// Checks a property's value or an item (at `segment` of the value), a place of its
    /// own: nothing it evaluates counts for its parent.
    fn child(
        &mut self,
        id: NodeId,
        child: &Value,
        path: &mut Vec<PathSegment>,
        segment: impl FnOnce() -> PathSegment,
    ) -> bool {
        self.enter(path, segment);
        let fits = self.eval(id, child, path, false).is_some();
        self.leave(path);
        fits
    }
}

fn rule(said: &str) -> ErrorKind {
    ErrorKind::Rule(said.to_owned())
}

/// The rules a value breaks: worded when errors are wanted, else only noticed (a check
/// for a verdict, such as each alternative of a `oneOf`, words nothing).
struct Broken {
    words: bool,
    any: bool,
    kinds: Vec<ErrorKind>,
}

impl Broken {
    fn add(&mut self, said: impl FnOnce() -> String) {
        self.any = true;
        if self.words {
            self.kinds.push(ErrorKind::Rule(said()));
        }
    }
}

/// The rules of a schema that read `value` alone (not its properties or items, nor the
/// schemas beside it) that it breaks, added to `broken`.
fn own_rules(keywords: &Keywords, value: &Value, broken: &mut Broken) {
    let shown = || describe::compact(value);
    if keywords
        .types
        .is_some_and(|types| types & type_bits(value) == 0)
    {
        broken.add(|| format!("{} is not of the `type` allowed", shown()));
    }
    if let Some(options) = &keywords.options {
        if !options.iter().any(|option| equal(option, value)) {
            broken.add(|| format!("{} is not one of `enum`", shown()));
        }
    }
    if let Some(constant) = &keywords.constant {
        if !equal(constant, value) {
            broken.add(|| {
                format!(
                    "{} is not the `const` {}",
                    shown(),
                    describe::compact(constant)
                )
            });
        }
    }
    match value {
        Value::Number(number) => number_rules(keywords, number, broken),
        Value::String(text) => {
            if keywords.min_length.is_some() || keywords.max_length.is_some() {
                let length = text.chars().count() as u64;
                if keywords.min_length.is_some_and(|min| length < min) {
                    broken.add(|| format!("{} is shorter than `minLength` allows", shown()));
                }
                if keywords.max_length.is_some_and(|max| length > max) {
                    broken.add(|| format!("{} is longer than `maxLength` allows", shown()));
                }
            }
            if keywords
                .pattern
                .as_ref()
                .is_some_and(|pattern| !pattern.is_match(text))
            {
                broken.add(|| format!("{} does not match `pattern`", shown()));
            }
        }
        Value::Array(items) => {
            let length = items.len() as u64;
            if keywords.min_items.is_some_and(|min| length < min) {
                broken.add(|| "the list is shorter than `minItems` allows".to_owned());
            }
            if keywords.max_items.is_some_and(|max| length > max) {
                broken.add(|| "the list is longer than `maxItems` allows".to_owned());
            }
            if keywords.unique_items
                && items
                    .iter()
                    .enumerate()
                    .any(|(index, item)| items[..index].iter().any(|earlier| equal(earlier, item)))
            {
                broken.add(|| "the list repeats an item, which `uniqueItems` forbids".to_owned());
            }
        }
        _ => {}
    }
}

fn number_rules(keywords: &Keywords, number: &Number, broken: &mut Broken) {
    let bounds = [
        (
            &keywords.minimum,
            Ordering::is_lt as fn(Ordering) -> bool,
            "minimum",
        ),
        (&keywords.maximum, Ordering::is_gt, "maximum"),
        (
            &keywords.exclusive_minimum,
            Ordering::is_le,
            "exclusiveMinimum",
        ),
        (
            &keywords.exclusive_maximum,
            Ordering::is_ge,
            "exclusiveMaximum",
        ),
    ];
    for (bound, out, keyword) in bounds {
        if bound
            .as_ref()
            .is_some_and(|bound| out(compare(number, bound)))
        {
            broken.add(|| format!("{number} is beyond `{keyword}`"));
        }
    }
    if let Some(step) = &keywords.multiple_of {
        if !crate::schema::decimal::is_multiple(number, step) {
            broken.add(|| format!("{number} is not a multiple of `multipleOf` {step}"));
        }
    }
}
