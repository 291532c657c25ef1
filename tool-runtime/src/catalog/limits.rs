//! Limits on a parameter's value given in `#[arg(...)]` (`range`, `length`, `pattern`): the
//! schema keywords they become, and the parameter types each applies to.
//!
//! The type rules are traits, so the compiler checks them through any alias and names the
//! limit and the type when one does not fit (`range` on a `String`, say).

use serde_json::Value;
use std::collections::{BTreeSet, HashSet, VecDeque};

/// The value of one limit keyword, as the macro read it from the attribute.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimitValue {
    /// An integer bound or length.
    Integer(i64),
    /// A bound with a fraction.
    Number(f64),
    /// A regular expression.
    Text(&'static str),
}

impl LimitValue {
    pub(crate) fn to_json(self) -> Value {
        match self {
            LimitValue::Integer(value) => value.into(),
            LimitValue::Number(value) => value.into(),
            LimitValue::Text(text) => text.into(),
        }
    }
}

/// One limit of a parameter: the JSON Schema keyword and its value.
#[doc(hidden)]
pub type Limit = (&'static str, LimitValue);

/// Parameter types `#[arg(range(min = .., max = ..))]` bounds: numbers.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`range` bounds a number, and `{Self}` is not one",
    label = "`range` needs a number type (or an `Option` of one)"
)]
pub trait RangeLimit {
    /// The keyword of the least value.
    const MIN: &'static str = "minimum";
    /// The keyword of the greatest value.
    const MAX: &'static str = "maximum";
}

/// Parameter types `#[arg(length(min = .., max = ..))]` bounds: strings (in characters)
/// and lists (in items).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`length` bounds a string or a list, and `{Self}` is neither",
    label = "`length` needs `String`, `Vec<T>` or another string or list type \
        (or an `Option` of one)"
)]
pub trait LengthLimit {
    /// The keyword of the least length.
    const MIN: &'static str;
    /// The keyword of the greatest length.
    const MAX: &'static str;
}

/// Parameter types `#[arg(pattern = "...")]` applies to: strings.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`pattern` matches a string, and `{Self}` is not one",
    label = "`pattern` needs `String` (or an `Option` of it)"
)]
pub trait PatternLimit {
    /// The keyword of the pattern.
    const KEYWORD: &'static str = "pattern";
}

macro_rules! numbers {
    ($($number:ty),*) => { $(impl RangeLimit for $number {})* };
}
numbers!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);

macro_rules! strings {
    ($($string:ty),*) => {
        $(
            impl LengthLimit for $string {
                const MIN: &'static str = "minLength";
                const MAX: &'static str = "maxLength";
            }
            impl PatternLimit for $string {}
        )*
    };
}
strings!(String, Box<str>, std::sync::Arc<str>);

macro_rules! lists {
    ($($list:ident),*) => {
        $(
            impl<T> LengthLimit for $list<T> {
                const MIN: &'static str = "minItems";
                const MAX: &'static str = "maxItems";
            }
        )*
    };
}
lists!(Vec, VecDeque, BTreeSet);

impl<T, S> LengthLimit for HashSet<T, S> {
    const MIN: &'static str = "minItems";
    const MAX: &'static str = "maxItems";
}

impl<T: RangeLimit> RangeLimit for Option<T> {}

impl<T: LengthLimit> LengthLimit for Option<T> {
    const MIN: &'static str = T::MIN;
    const MAX: &'static str = T::MAX;
}

impl<T: PatternLimit> PatternLimit for Option<T> {}

/// Adds `limits` to a parameter's property schema, narrowing what the type says: a `u8`'s
/// 0 to 255 becomes the 1 to 3 the attribute gives, but a `range(max = 1000)` on a `u8`
/// keeps 255, since a larger value could not be read into it.
pub(crate) fn apply(property: &mut schemars::Schema, limits: &[Limit]) {
    for (keyword, value) in limits {
        let value = value.to_json();
        let own = property.get(*keyword).and_then(Value::as_f64);
        let wider = match (*keyword, own, value.as_f64()) {
            ("minimum", Some(own), Some(new)) => new < own,
            ("maximum", Some(own), Some(new)) => new > own,
            _ => false,
        };
        if !wider {
            property.insert((*keyword).to_owned(), value);
        }
    }
}
