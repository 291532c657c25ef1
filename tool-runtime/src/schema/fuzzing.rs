//! What the fuzz targets reach of the validators, which are otherwise private: the
//! verdicts each gives on a schema and a value. Built only with `--cfg fuzzing`.

use serde_json::{json, Map, Value};

/// The verdicts on one value against one schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdicts {
    /// The validator of whole schemas: whether the value fits.
    pub full: bool,
    /// Whether that validator finds no error (it must be `full`).
    pub full_finds_no_error: bool,
    /// The simple validator's, on the schema as a tool's one parameter, when it takes the
    /// schema (and the value is not `null`, which means "absent" for an argument).
    pub simple: Option<bool>,
    /// Whether the words of a refusal were produced without a panic (and some were).
    pub refusal_worded: bool,
}

/// The verdicts on `value` against `schema`; `Err` with the reason when the validator of
/// whole schemas refuses the schema.
pub fn verdicts(schema: &Value, value: &Value) -> Result<Verdicts, String> {
    let compiled = super::full::Compiled::new(schema)?;
    let full = compiled.is_valid(value);
    let full_finds_no_error = compiled.errors(value).is_empty();
    let mut parameter = schema.clone();
    if let Some(object) = parameter.as_object_mut() {
        object.remove("$schema");
    }
    let root = json!({
        "type": "object",
        "properties": {"value": parameter},
        "required": ["value"]
    });
    let mut arguments = Map::new();
    arguments.insert("value".to_owned(), value.clone());
    let simple = (super::simple::is_simple(&root) && !value.is_null())
        .then(|| super::simple::Compiled::new(&root).accepts(&arguments));
    let arguments = Value::Object(arguments);
    let refusal_worded = match super::validate::Validator::for_schema(&root) {
        Ok(validator) => {
            let problems = validator.problems(&root, &arguments);
            // `null` is "absent" for an argument: the required parameter is then missing.
            let fits = full && !value.is_null();
            problems.is_empty() == fits
        }
        Err(_) => true,
    };
    Ok(Verdicts {
        full,
        full_finds_no_error,
        simple,
        refusal_worded,
    })
}
