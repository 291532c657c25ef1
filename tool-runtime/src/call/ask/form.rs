//! Elicitation forms from Rust types: the `JsonSchema` of a struct, turned into the
//! restricted schema elicitation allows (a flat object of strings, numbers, booleans,
//! single-choice and multiple-choice enums, with titles and defaults), or refused with the
//! field and the reason.

use super::Elicited;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A type the user can be asked to fill in: any struct that derives `Deserialize` and
/// `JsonSchema` whose fields are strings, numbers, integers, booleans, `Option`s of those,
/// unit-variant enums (one choice), or `Vec`s of unit-variant enums (several choices).
///
/// - A field's doc comment becomes its description; `#[schemars(title = "...")]` its
///   title (on an enum's variants, the choice's label).
/// - With `#[serde(default)]` on the struct, the defaults are shown pre-filled.
/// - String constraints (`#[schemars(length(min = 1, max = 40))]`, `#[schemars(email)]`)
///   and number ranges (`#[schemars(range(min = 1, max = 10))]`) are shown too.
///
/// Anything else (a nested struct, a list of free text, a map) cannot be shown as a form:
/// asking with such a type fails with [`AskError::InvalidQuestion`](super::AskError),
/// naming the field, and `check` reports it for every form a `#[tool]` names.
pub trait ElicitForm: DeserializeOwned + Send + 'static {
    /// The `requestedSchema` of the form, or why the type cannot be one.
    fn requested_schema() -> Result<Value, String>;
}

impl<T: JsonSchema + DeserializeOwned + Send + 'static> ElicitForm for T {
    fn requested_schema() -> Result<Value, String> {
        let settings = schemars::generate::SchemaSettings::draft2020_12().with(|settings| {
            settings.inline_subschemas = true;
        });
        let schema = settings.into_generator().into_root_schema_for::<T>();
        form_schema(&schema.to_value(), &T::schema_name())
    }
}

/// Keywords that only describe: dropped from a form, which has its own few.
const ANNOTATIONS: [&str; 6] = [
    "$schema",
    "$comment",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// The elicitation schema of `schema` (a type named `name`).
pub(crate) fn form_schema(schema: &Value, name: &str) -> Result<Value, String> {
    let Some(root) = schema.as_object() else {
        return Err(format!("{name} is not a struct"));
    };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "{name} is not a struct with named fields; a form is a flat set of fields"
        ));
    }
    let mut required: Vec<Value> = root
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut properties = Map::new();
    for (field, property) in root
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let (property, optional) =
            field_schema(property).map_err(|why| format!("field `{field}` of {name} {why}"))?;
        if optional {
            required.retain(|r| r != field);
        }
        properties.insert(field.clone(), property);
    }
    for key in root.keys() {
        let known = [
            "type",
            "properties",
            "required",
            "title",
            "description",
            "$defs",
            "additionalProperties",
        ];
        if !known.contains(&key.as_str()) && !ANNOTATIONS.contains(&key.as_str()) {
            return Err(format!(
                "{name} uses `{key}`, which a form cannot show; a form is a flat set of fields"
            ));
        }
    }
    let mut form = Map::new();
    form.insert("type".to_owned(), "object".into());
    form.insert("properties".to_owned(), Value::Object(properties));
    form.insert("required".to_owned(), Value::Array(required));
    Ok(Value::Object(form))
}

/// One field's form schema, and whether it may be left empty (an `Option`).
fn field_schema(schema: &Value) -> Result<(Value, bool), String> {
    let Some(object) = schema.as_object() else {
        return Err(ANY_VALUE.to_owned());
    };
    let mut object = object.clone();
    // `Option<T>`: the field may be left empty.
    let optional = crate::schema::strip_null_of(&mut object);
    if object.contains_key("$ref") {
        return Err("refers to a type a form cannot inline (a recursive type)".to_owned());
    }
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let shaped = match kind.as_deref() {
        Some("string") | None => single_choice_or_string(object)?,
        Some("integer") | Some("number") => number(object)?,
        Some("boolean") => only(object, &[], "a boolean")?,
        Some("array") => multiple_choice(object)?,
        Some("object") => {
            return Err("is a nested struct or map; a form is one flat set of fields".to_owned())
        }
        Some(other) => return Err(format!("has type `{other}`, which a form cannot show")),
    };
    Ok((shaped, optional))
}

/// Why a field that accepts any value cannot be a form field.
const ANY_VALUE: &str = "accepts any value; a form field must be a string, number, boolean or enum";

/// What every form field may say, whatever its kind.
const EVERY_FIELD: [&str; 4] = ["type", "title", "description", "default"];

/// `object` without its annotations, refused if it says more than every field may plus
/// `allowed`.
fn only(mut object: Map<String, Value>, allowed: &[&str], what: &str) -> Result<Value, String> {
    for annotation in ANNOTATIONS {
        object.remove(annotation);
    }
    let fits = |key: &str| EVERY_FIELD.contains(&key) || allowed.contains(&key);
    if let Some(key) = object.keys().find(|k| !fits(k)) {
        return Err(format!("uses `{key}`, which a form cannot show for {what}"));
    }
    Ok(Value::Object(object))
}

fn number(mut object: Map<String, Value>) -> Result<Value, String> {
    // `format` (int32, double...) says how Rust stores it, nothing a form shows.
    object.remove("format");
    only(object, &["minimum", "maximum"], "a number")
}

/// A string field, or one choice among strings (with titles, when the choices have them).
fn single_choice_or_string(mut object: Map<String, Value>) -> Result<Value, String> {
    if let Some(choices) = titled_choices(&mut object)? {
        object.insert("type".to_owned(), "string".into());
        object.insert("oneOf".to_owned(), choices);
        return only(object, &["oneOf"], "a choice");
    }
    if object.get("type").is_none() {
        return Err(ANY_VALUE.to_owned());
    }
    if let Some(format) = object.get("format").and_then(Value::as_str) {
        if !["email", "uri", "date", "date-time"].contains(&format) {
            return Err(format!(
                "has format `{format}`; a form knows email, uri, date and date-time"
            ));
        }
    }
    if let Some(choices) = object.get("enum") {
        if !choices
            .as_array()
            .is_some_and(|c| c.iter().all(Value::is_string))
        {
            return Err("has choices that are not all strings".to_owned());
        }
    }
    only(
        object,
        &["minLength", "maxLength", "format", "enum", "enumNames"],
        "a string",
    )
}

/// Several choices: a list of enum values, untitled (`items.enum`) or titled
/// (`items.anyOf` of `{const, title}`).
fn multiple_choice(mut object: Map<String, Value>) -> Result<Value, String> {
    object.remove("uniqueItems");
    // `#[serde(default)]` on a list gives `[]`, which a `minItems` of 1 or more forbids: a
    // default the form itself would refuse is no default.
    let too_short = |default: &Value| {
        let least = object.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        default.as_array().is_some_and(|d| (d.len() as u64) < least)
    };
    if object.get("default").is_some_and(too_short) {
        object.remove("default");
    }
    let Some(Value::Object(mut items)) = object.remove("items") else {
        return Err(
            "is a list without an item type; a form list is several choices of an enum".to_owned(),
        );
    };
    for annotation in ANNOTATIONS {
        items.remove(annotation);
    }
    items.remove("description");
    items.remove("title");
    let items = if let Some(choices) = titled_choices(&mut items)? {
        let mut titled = Map::new();
        titled.insert("anyOf".to_owned(), choices);
        titled
    } else if items.get("type").and_then(Value::as_str) == Some("string")
        && items
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|c| c.iter().all(Value::is_string))
    {
        let mut untitled = Map::new();
        untitled.insert("type".to_owned(), "string".into());
        untitled.insert("enum".to_owned(), items["enum"].clone());
        untitled
    } else {
        return Err(
            "is a list of something other than enum choices; a form list is several choices of a \
            unit-variant enum"
                .to_owned(),
        );
    };
    object.insert("items".to_owned(), Value::Object(items));
    only(
        object,
        &["minItems", "maxItems", "items"],
        "a list of choices",
    )
}

/// `oneOf`/`anyOf` branches that are each one string constant (an enum whose variants have
/// doc comments or titles) as `[{const, title}]`, taking them out of `object`; the title is
/// the variant's title, else its description, else the value itself.
fn titled_choices(object: &mut Map<String, Value>) -> Result<Option<Value>, String> {
    let keyword = match (object.get("oneOf"), object.get("anyOf")) {
        (Some(_), _) => "oneOf",
        (None, Some(_)) => "anyOf",
        (None, None) => return Ok(None),
    };
    let Some(Value::Array(branches)) = object.remove(keyword) else {
        return Err(format!("has a `{keyword}` that is not a list"));
    };
    let mut choices = Vec::with_capacity(branches.len());
    for branch in &branches {
        let constant = crate::schema::constant(branch).and_then(Value::as_str);
        let Some(constant) = constant else {
            return Err(
                "is an enum with data in its variants, or a union; a form choice is a unit-variant \
                enum"
                    .to_owned(),
            );
        };
        let title = branch
            .get("title")
            .or_else(|| branch.get("description"))
            .and_then(Value::as_str)
            .unwrap_or(constant);
        choices.push(serde_json::json!({"const": constant, "title": title}));
    }
    Ok(Some(Value::Array(choices)))
}

/// The answer to a form: its values read as `T` when accepted.
pub(super) fn decode_elicited<T: DeserializeOwned>(answer: Value) -> Result<Elicited<T>, String> {
    match action(&answer)? {
        "accept" => {
            let content = answer
                .get("content")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            serde_json::from_value(content)
                .map(Elicited::Accepted)
                .map_err(|error| format!("the form's values do not fit: {error}"))
        }
        "decline" => Ok(Elicited::Declined),
        _ => Ok(Elicited::Cancelled),
    }
}

/// The action of an elicitation result: `accept`, `decline` or `cancel`.
pub(super) fn action(answer: &Value) -> Result<&str, String> {
    match answer.get("action").and_then(Value::as_str) {
        Some(action @ ("accept" | "decline" | "cancel")) => Ok(action),
        _ => Err(format!(
            "an elicitation result needs \"action\": \"accept\", \"decline\" or \"cancel\"; got {}",
            crate::schema::describe::compact(answer)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Status {
        Active,
        Inactive,
    }

    #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
    enum Titled {
        #[schemars(title = "First")]
        A,
        /// Second one
        B,
    }

    /// A profile.
    #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
    #[serde(default)]
    struct Profile {
        /// The name.
        name: String,
        age: u32,
        score: f64,
        status: Status,
        verified: bool,
        nickname: Option<String>,
        picks: Vec<Titled>,
        #[schemars(length(min = 1, max = 2))]
        states: Vec<Status>,
    }

    impl Default for Profile {
        fn default() -> Self {
            Profile {
                name: "Ann".into(),
                age: 30,
                score: 9.5,
                status: Status::Active,
                verified: true,
                nickname: None,
                picks: vec![],
                states: vec![Status::Inactive],
            }
        }
    }

    #[test]
    fn a_flat_struct_becomes_a_form_with_defaults_titles_and_choices() {
        let form = Profile::requested_schema().unwrap();
        let p = &form["properties"];
        assert_eq!(
            p["name"],
            json!({"type": "string", "description": "The name.", "default": "Ann"})
        );
        assert_eq!(p["age"]["type"], "integer");
        assert_eq!(p["age"]["default"], 30);
        assert!(p["age"].get("format").is_none());
        assert_eq!(p["score"]["type"], "number");
        assert_eq!(p["status"]["enum"], json!(["active", "inactive"]));
        assert_eq!(p["status"]["default"], "active");
        assert_eq!(p["verified"]["default"], true);
        assert_eq!(p["nickname"]["type"], "string");
        assert_eq!(
            p["picks"]["items"],
            json!({"anyOf": [
                {"const": "A", "title": "First"},
                {"const": "B", "title": "Second one"}
            ]})
        );
        assert_eq!(
            p["states"]["items"],
            json!({"type": "string", "enum": ["active", "inactive"]})
        );
        assert_eq!(
            (
                p["states"]["minItems"].clone(),
                p["states"]["maxItems"].clone()
            ),
            (json!(1), json!(2))
        );
        assert_eq!(form["required"], json!([]));
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Booking {
        name: String,
        note: Option<String>,
        status: Option<Status>,
    }

    #[test]
    fn option_fields_may_be_left_empty_and_others_are_required() {
        let form = Booking::requested_schema().unwrap();
        assert_eq!(form["required"], json!(["name"]));
        assert_eq!(form["properties"]["note"], json!({"type": "string"}));
        assert_eq!(
            form["properties"]["status"],
            json!({"type": "string", "enum": ["active", "inactive"]})
        );
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        x: u8,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Inner,
    }

    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct FreeList {
        tags: Vec<String>,
    }

    #[test]
    fn what_a_form_cannot_show_is_refused_naming_the_field() {
        let nested = Nested::requested_schema().unwrap_err();
        assert!(
            nested.contains("field `inner` of Nested") && nested.contains("nested"),
            "{nested}"
        );
        let list = FreeList::requested_schema().unwrap_err();
        assert!(
            list.contains("field `tags`") && list.contains("enum"),
            "{list}"
        );
        assert!(String::requested_schema()
            .unwrap_err()
            .contains("not a struct"));
    }

    #[test]
    fn answers_are_read_as_the_form_type() {
        let accepted: Elicited<FreeList> =
            decode_elicited(json!({"action": "accept", "content": {"tags": ["a"]}})).unwrap();
        assert!(matches!(accepted, Elicited::Accepted(FreeList { ref tags }) if tags == &["a"]));
        let declined: Elicited<FreeList> = decode_elicited(json!({"action": "decline"})).unwrap();
        assert!(matches!(declined, Elicited::Declined));
        let wrong =
            decode_elicited::<FreeList>(json!({"action": "accept", "content": {"tags": 3}}));
        assert!(wrong.unwrap_err().contains("do not fit"));
        assert!(decode_elicited::<FreeList>(json!(12345))
            .unwrap_err()
            .contains("\"action\""));
    }
}
