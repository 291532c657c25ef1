//! Reading each parameter of a macro-registered tool from the JSON arguments.
//!
//! Parameters are read one at a time, rather than through one derived struct, so that
//! every problem names its parameter. The schema was checked first (see `validate`), so a
//! problem here is rare: a type whose `Deserialize` checks more than its schema says.

use super::context::CallContext;
use super::error::ArgumentProblem;
use super::inject::Injected;
use crate::catalog::Tool;
use crate::schema::describe;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Visitor};
use serde_json::{Map, Value};

/// A type that can be a tool argument: read from JSON, described by a JSON Schema. Generated
/// code reaches it only through `ToolParam`, whose diagnostic a
/// user sees when a type is neither.
pub trait ToolArgument: DeserializeOwned + JsonSchema + Send + 'static {}

impl<T: DeserializeOwned + JsonSchema + Send + 'static> ToolArgument for T {}

/// The schema of one argument type.
#[doc(hidden)]
pub fn schema_of<T: ToolArgument>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// Whether the type accepts a missing value (an `Option`, under any alias). Decided by the
/// type's own `Deserialize`, the way serde decides it for a missing struct field.
#[doc(hidden)]
pub fn is_optional<T: ToolArgument>() -> bool {
    T::deserialize(Missing).is_ok()
}

/// Confirms that a parameter spelled `Option<...>` is the standard `Option`.
#[doc(hidden)]
pub fn assert_option<T: IsOption>() {}

/// Implemented only by `core::option::Option`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is spelled `Option` but is not `core::option::Option`",
    label = "#[tool] treats parameters spelled `Option<...>` as optional",
    note = "import your type under another name"
)]
#[doc(hidden)]
pub trait IsOption {}
impl<T> IsOption for Option<T> {}

/// The arguments of one call, as the generated call shim reads them.
#[doc(hidden)]
pub struct ArgumentReader<'a> {
    tool: &'a Tool,
    values: &'a Map<String, Value>,
    context: &'a CallContext,
    pub(crate) problems: Vec<ArgumentProblem>,
    pub(crate) unavailable: Option<String>,
}

impl<'a> ArgumentReader<'a> {
    pub(crate) fn new(
        tool: &'a Tool,
        values: &'a Map<String, Value>,
        context: &'a CallContext,
    ) -> Self {
        ArgumentReader {
            tool,
            values,
            context,
            problems: Vec::new(),
            unavailable: None,
        }
    }

    /// The value of a parameter; `null` counts as absent.
    fn present(&self, index: usize) -> Option<&'a Value> {
        let values: &'a Map<String, Value> = self.values;
        values
            .get(self.name(index))
            .filter(|value| !value.is_null())
    }

    /// The name callers use for the parameter at `index`.
    fn name(&self, index: usize) -> &'a str {
        let tool: &'a Tool = self.tool;
        tool.params()[index].name()
    }

    /// Reads the parameter at `index`; `None` records a problem.
    pub(crate) fn argument<T: ToolArgument>(&mut self, index: usize) -> Option<T> {
        match self.present(index) {
            Some(value) => self.decode(index, value),
            None => match T::deserialize(Missing) {
                Ok(value) => Some(value),
                Err(_) => {
                    let name = self.name(index);
                    self.problems.push(ArgumentProblem::new(
                        name,
                        format!("missing required parameter '{name}'"),
                    ));
                    None
                }
            },
        }
    }

    /// Reads the parameter at `index`, or its default when absent.
    pub(crate) fn argument_or_else<T: ToolArgument>(
        &mut self,
        index: usize,
        default: impl FnOnce() -> T,
    ) -> Option<T> {
        match self.present(index) {
            Some(value) => self.decode(index, value),
            None => Some(default()),
        }
    }

    /// Builds a runtime-provided parameter.
    pub(crate) fn injected<T: Injected>(&mut self, _index: usize) -> Option<T> {
        match T::inject(self.context) {
            Ok(value) => Some(value),
            Err(reason) => {
                self.unavailable = Some(reason);
                None
            }
        }
    }

    fn decode<T: ToolArgument>(&mut self, index: usize, value: &Value) -> Option<T> {
        match decode::<T>(value) {
            Ok(decoded) => Some(decoded),
            Err(error) => {
                let name = self.name(index);
                let schema = self.tool.input_schema();
                let expected = schema
                    .get("properties")
                    .and_then(|p| p.get(name))
                    .map(|property| describe::describe(property, schema))
                    .unwrap_or_else(|| "a value of the documented shape".to_owned());
                self.problems.push(ArgumentProblem::new(
                    name,
                    format!(
                        "'{name}' must be {expected}; got {} ({})",
                        describe::compact(value),
                        serde_message(&error)
                    ),
                ));
                None
            }
        }
    }
}

/// serde_json's message without its " at line 1 column 2" suffix, which means nothing when
/// reading from a value.
fn serde_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(cut) => text[..cut].to_owned(),
        None => text,
    }
}

/// Reads a `T` from JSON. JSON does not tell `1` from `1.0`, and models often write
/// integers as `5.0`; serde refuses those for integer types, so they are retried as
/// integers.
pub(crate) fn decode<T: DeserializeOwned>(value: &Value) -> Result<T, serde_json::Error> {
    match T::deserialize(value) {
        Ok(decoded) => Ok(decoded),
        Err(error) => match integral_floats_as_integers(value) {
            Some(normalized) => T::deserialize(&normalized).map_err(|_| error),
            None => Err(error),
        },
    }
}

/// A copy of `value` with every float that holds a whole number written as an integer, or
/// `None` when there is no such float.
fn integral_floats_as_integers(value: &Value) -> Option<Value> {
    fn has_integral_float(value: &Value) -> bool {
        match value {
            Value::Number(n) => n.is_f64() && as_integer(n.as_f64().unwrap_or(0.5)).is_some(),
            Value::Array(items) => items.iter().any(has_integral_float),
            Value::Object(map) => map.values().any(has_integral_float),
            _ => false,
        }
    }
    fn as_integer(float: f64) -> Option<Value> {
        if float.fract() != 0.0 || !float.is_finite() {
            return None;
        }
        if float >= 0.0 && float < u64::MAX as f64 {
            Some(Value::from(float as u64))
        } else if float < 0.0 && float >= i64::MIN as f64 {
            Some(Value::from(float as i64))
        } else {
            None
        }
    }
    fn normalize(value: &Value) -> Value {
        match value {
            Value::Number(n) if n.is_f64() => n
                .as_f64()
                .and_then(as_integer)
                .unwrap_or_else(|| value.clone()),
            Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, item)| (key.clone(), normalize(item)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    has_integral_float(value).then(|| normalize(value))
}

/// A deserializer for a value that is not there: an `Option` reads it as `None`, every
/// other type refuses it. This is how serde itself treats a missing struct field.
struct Missing;

impl<'de> serde::Deserializer<'de> for Missing {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("missing value"))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    type Maybe<T> = Option<T>;

    #[test]
    fn optional_types_are_found_by_their_deserialize() {
        assert!(is_optional::<Option<String>>());
        assert!(is_optional::<Maybe<u8>>());
        assert!(!is_optional::<String>());
        assert!(!is_optional::<Value>());
        assert!(!is_optional::<Vec<u8>>());
    }

    #[test]
    fn whole_floats_read_as_integers() {
        assert_eq!(decode::<u8>(&json!(5.0)).unwrap(), 5);
        assert_eq!(
            decode::<Vec<i64>>(&json!([1.0, -2.0])).unwrap(),
            vec![1, -2]
        );
        assert!(decode::<u8>(&json!(5.5)).is_err());
        assert_eq!(decode::<f64>(&json!(5.5)).unwrap(), 5.5);
    }
}
