//! What a `#[tool]` parameter is, decided by its type: an argument the caller gives, or a
//! value the runtime fills in (state, the call context, progress, logs, cancellation).
//!
//! Deciding by type rather than by spelling means an alias works: after
//! `type Db = State<Pool>;`, a parameter `db: Db` is filled in by the runtime.

use super::arguments::{is_optional, schema_of, ArgumentReader, ToolArgument};
use super::context::{CallContext, State, StateRequirement};
use super::inject::Injected;
use super::scope::{Cancellation, Logger, Progress};
use crate::catalog::contract::ParamKind;
use std::marker::PhantomData;

/// A type a `#[tool]` parameter can have: any `ToolArgument`, or a type the runtime fills
/// in.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument",
    label = "the caller's JSON cannot be read into this type",
    note = "an argument type must implement `serde::Deserialize` (owned, so no borrowed `&str`) \
            and `schemars::JsonSchema`: add `#[derive(serde::Deserialize, schemars::JsonSchema)]` \
            to your type. If it derives `JsonSchema` already, check that your crate depends on \
            schemars 1 (`schemars = \"1\"`): the `JsonSchema` of schemars 0.8 is another trait"
)]
pub trait ToolParam: Sized + Send + 'static {
    /// How the catalog shows the parameter.
    const KIND: ParamKind;
    /// Whether the runtime fills it in.
    const INJECTED: bool;
    /// The registered state it needs, if any.
    fn requirement() -> Option<StateRequirement>;
    /// Reads or builds the value for one call; `None` records why in `arguments`.
    fn read(arguments: &mut ArgumentReader<'_>, index: usize) -> Option<Self>;
    /// Reads the value, or `default()` when the caller left it out (`#[arg(default)]`). A
    /// runtime-provided value has no default: it is always filled in.
    fn read_or_else(
        arguments: &mut ArgumentReader<'_>,
        index: usize,
        default: impl FnOnce() -> Self,
    ) -> Option<Self>;
}

impl<T: ToolArgument> ToolParam for T {
    const KIND: ParamKind = ParamKind::Argument {
        schema: schema_of::<T>,
        optional: is_optional::<T>,
    };
    const INJECTED: bool = false;
    fn requirement() -> Option<StateRequirement> {
        None
    }
    fn read(arguments: &mut ArgumentReader<'_>, index: usize) -> Option<Self> {
        arguments.argument(index)
    }
    fn read_or_else(
        arguments: &mut ArgumentReader<'_>,
        index: usize,
        default: impl FnOnce() -> Self,
    ) -> Option<Self> {
        arguments.argument_or_else(index, default)
    }
}

/// Implements [`ToolParam`] for runtime-provided types through their [`Injected`] impl.
macro_rules! injected_param {
    ($(impl$([$($generics:tt)*])? for $ty:ty;)*) => {$(
        impl$(<$($generics)*>)? ToolParam for $ty {
            const KIND: ParamKind = ParamKind::Injected;
            const INJECTED: bool = true;
            fn requirement() -> Option<StateRequirement> {
                <Self as Injected>::requirement()
            }
            fn read(arguments: &mut ArgumentReader<'_>, index: usize) -> Option<Self> {
                arguments.injected(index)
            }
            fn read_or_else(
                arguments: &mut ArgumentReader<'_>,
                index: usize,
                _default: impl FnOnce() -> Self,
            ) -> Option<Self> {
                arguments.injected(index)
            }
        }
    )*};
}

injected_param! {
    impl[T: Send + Sync + 'static] for State<T>;
    impl for CallContext;
    impl for Progress;
    impl for Logger;
    impl for Cancellation;
}

/// Whether a type is an `Option`, known at compile time through aliases: the inherent
/// constant applies to `Option<T>` only, and every other type falls back to [`NotOption`]'s.
/// Used by the compile-time check of doc-comment examples.
pub struct OptionProbe<T>(PhantomData<T>);

impl<T> OptionProbe<Option<T>> {
    /// An `Option`: a caller may leave it out.
    pub const IS_OPTION: bool = true;
}

/// The fallback of [`OptionProbe`] for every type that is not an `Option`.
pub trait NotOption {
    /// Not an `Option`.
    const IS_OPTION: bool = false;
}

impl<T> NotOption for OptionProbe<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    type Maybe = Option<u8>;
    type Db = State<String>;

    #[test]
    fn the_probe_sees_options_through_aliases() {
        let probed = [
            OptionProbe::<Maybe>::IS_OPTION,
            OptionProbe::<Option<String>>::IS_OPTION,
            OptionProbe::<String>::IS_OPTION,
            OptionProbe::<Vec<Option<u8>>>::IS_OPTION,
        ];
        assert_eq!(probed, [true, true, false, false]);
    }

    #[test]
    fn injected_types_are_known_through_aliases() {
        let injected = [<Db as ToolParam>::INJECTED, <String as ToolParam>::INJECTED];
        assert_eq!(injected, [true, false]);
        assert!(<Db as ToolParam>::requirement().is_some());
        assert!(matches!(<Db as ToolParam>::KIND, ParamKind::Injected));
        assert!(matches!(
            <u8 as ToolParam>::KIND,
            ParamKind::Argument { .. }
        ));
    }
}
