//! An example's values against the Rust types the macro can see: strings, `char`, booleans,
//! integers (within their type's range), floats, and `Option`s, lists, sets and arrays of
//! these. A type it cannot see through (your own structs, maps, `Value`) is left to the
//! schema check; what it can see must fit, or the build fails on the example's line.

use serde_json::Value;
use syn::{GenericArgument, PathArguments, Type};

/// What a value of `ty` must be, in words, when `value` is not one; `None` when it fits or
/// the type is not one the macro can see through.
pub fn mismatch(ty: &Type, value: &Value) -> Option<String> {
    let kind = Kind::of(ty)?;
    (!kind.fits(value)).then(|| kind.describe())
}

/// A type, as far as the macro can tell what its values look like.
enum Kind {
    Text,
    Char,
    Bool,
    Integer {
        min: i128,
        max: i128,
    },
    Float,
    Optional(Box<Kind>),
    List(Box<Kind>, Option<usize>),
    /// A type the macro cannot see through: anything fits.
    Opaque,
}

impl Kind {
    fn of(ty: &Type) -> Option<Kind> {
        let kind = Kind::read(ty);
        (!matches!(kind, Kind::Opaque)).then_some(kind)
    }

    fn read(ty: &Type) -> Kind {
        match ty {
            Type::Group(group) => Kind::read(&group.elem),
            Type::Paren(paren) => Kind::read(&paren.elem),
            Type::Array(array) => {
                let length = match &array.len {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(length),
                        ..
                    }) => length.base10_parse::<usize>().ok(),
                    _ => None,
                };
                Kind::List(Box::new(Kind::read(&array.elem)), length)
            }
            Type::Path(path) if path.qself.is_none() => {
                let Some(last) = path.path.segments.last() else {
                    return Kind::Opaque;
                };
                let inner = || match &last.arguments {
                    PathArguments::AngleBracketed(arguments) if arguments.args.len() == 1 => {
                        match arguments.args.first() {
                            Some(GenericArgument::Type(inner)) => Kind::read(inner),
                            _ => Kind::Opaque,
                        }
                    }
                    _ => Kind::Opaque,
                };
                match last.ident.to_string().as_str() {
                    "String" => Kind::Text,
                    "char" => Kind::Char,
                    "bool" => Kind::Bool,
                    "f32" | "f64" => Kind::Float,
                    "Option" => Kind::Optional(Box::new(inner())),
                    "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => {
                        Kind::List(Box::new(inner()), None)
                    }
                    integer => match integer_range(integer) {
                        Some((min, max)) => Kind::Integer { min, max },
                        None => Kind::Opaque,
                    },
                }
            }
            _ => Kind::Opaque,
        }
    }

    fn fits(&self, value: &Value) -> bool {
        match (self, value) {
            (Kind::Opaque, _) => true,
            (Kind::Text, Value::String(_)) | (Kind::Bool, Value::Bool(_)) => true,
            (Kind::Char, Value::String(text)) => text.chars().count() == 1,
            (Kind::Float, Value::Number(_)) => true,
            (Kind::Integer { min, max }, Value::Number(number)) => {
                let whole = number
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| number.as_u64().map(i128::from));
                whole.is_some_and(|whole| (*min..=*max).contains(&whole))
            }
            (Kind::Optional(_), Value::Null) => true,
            (Kind::Optional(inner), value) => inner.fits(value),
            (Kind::List(item, length), Value::Array(items)) => {
                length.is_none_or(|length| items.len() == length)
                    && items.iter().all(|value| item.fits(value))
            }
            _ => false,
        }
    }

    fn describe(&self) -> String {
        match self {
            Kind::Text => "a string".to_owned(),
            Kind::Char => "a string of one character".to_owned(),
            Kind::Bool => "true or false".to_owned(),
            Kind::Float => "a number".to_owned(),
            Kind::Integer { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Optional(inner) => format!("{}, or null", inner.describe()),
            Kind::List(item, Some(length)) => {
                format!("a list of exactly {length} items, each {}", item.describe())
            }
            Kind::List(item, None) => format!("a list whose items are each {}", item.describe()),
            Kind::Opaque => "any value".to_owned(),
        }
    }
}

/// The range of an integer type's values, as JSON can carry them.
fn integer_range(name: &str) -> Option<(i128, i128)> {
    Some(match name {
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" | "usize" | "u128" => (0, u64::MAX.into()),
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" | "i128" => (i64::MIN.into(), i64::MAX.into()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::mismatch;
    use serde_json::json;

    fn ty(text: &str) -> syn::Type {
        syn::parse_str(text).unwrap()
    }

    #[test]
    fn values_that_fit_pass_and_others_say_what_was_expected() {
        assert_eq!(mismatch(&ty("String"), &json!("Paris")), None);
        assert_eq!(
            mismatch(&ty("String"), &json!(42)),
            Some("a string".to_owned())
        );
        assert_eq!(mismatch(&ty("u8"), &json!(255)), None);
        assert_eq!(
            mismatch(&ty("u8"), &json!(300)),
            Some("a whole number from 0 to 255".to_owned())
        );
        assert!(mismatch(&ty("i32"), &json!(1.5)).is_some(), "not whole");
        assert_eq!(mismatch(&ty("f64"), &json!(1.5)), None);
        assert_eq!(
            mismatch(&ty("bool"), &json!("yes")),
            Some("true or false".to_owned())
        );
        assert_eq!(mismatch(&ty("Option<u8>"), &json!(null)), None);
        assert_eq!(
            mismatch(&ty("Option<bool>"), &json!(1)),
            Some("true or false, or null".to_owned())
        );
        assert_eq!(mismatch(&ty("Vec<String>"), &json!(["a", "b"])), None);
        assert!(mismatch(&ty("Vec<String>"), &json!(["a", 2])).is_some());
        assert!(
            mismatch(&ty("[u8; 2]"), &json!([1, 2, 3])).is_some(),
            "length"
        );
        assert_eq!(
            mismatch(&ty("char"), &json!("ab")),
            Some("a string of one character".to_owned())
        );
    }

    #[test]
    fn types_the_macro_cannot_see_through_are_left_to_the_schema() {
        assert_eq!(mismatch(&ty("Address"), &json!(42)), None);
        assert_eq!(mismatch(&ty("Vec<Address>"), &json!([1])), None);
        assert_eq!(mismatch(&ty("serde_json::Value"), &json!(1)), None);
        assert_eq!(mismatch(&ty("HashMap<String, u8>"), &json!(1)), None);
    }
}
