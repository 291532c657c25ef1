//! Completion of a prompt's arguments and a resource template's variables: the function a
//! user names with `#[arg(complete = ...)]`, and what it is given.

use std::collections::BTreeMap;

/// The most values one completion answers with (the protocol's limit).
pub(crate) const MAX_VALUES: usize = 100;

/// What a completion function knows besides the text typed so far: the arguments (or
/// template variables) the user already filled in.
///
/// ```
/// use tool_runtime::context::CompletionContext;
///
/// /// Cities of the country chosen so far.
/// fn cities(typed: &str, context: &CompletionContext) -> Vec<&'static str> {
///     let all: &[&str] = match context.argument("country") {
///         Some("France") => &["Paris", "Lyon", "Lille"],
///         _ => &["Berlin", "Bern", "Lisbon"],
///     };
///     all.iter().copied().filter(|city| city.starts_with(typed)).collect()
/// }
/// # let _ = cities;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompletionContext {
    arguments: BTreeMap<String, String>,
}

impl CompletionContext {
    pub(crate) fn new(arguments: BTreeMap<String, String>) -> Self {
        CompletionContext { arguments }
    }

    /// The value already given for the argument `name`, if any.
    pub fn argument(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).map(String::as_str)
    }

    /// Every argument already given, by name.
    pub fn arguments(&self) -> &BTreeMap<String, String> {
        &self.arguments
    }
}

/// What `#[arg(complete = ...)]` compiles to: the typed text and the context in, the
/// candidate values out.
#[doc(hidden)]
pub type CompleteFn = fn(&str, &CompletionContext) -> Vec<String>;

/// A function that completes an argument: `fn(&str) -> I` or
/// `fn(&str, &CompletionContext) -> I`, where `I` is any list of strings.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot complete an argument",
    label = "not a completion function",
    note = "a completion function takes the text typed so far (`&str`), and optionally a \
            `&CompletionContext`, and returns the candidates: `Vec<String>`, `Vec<&str>`, or \
            any iterator of strings"
)]
pub trait Completer<Marker> {
    /// The candidates for `typed`.
    fn candidates(&self, typed: &str, context: &CompletionContext) -> Vec<String>;
}

impl<F, I> Completer<fn(&str) -> I> for F
where
    F: Fn(&str) -> I,
    I: IntoIterator,
    I::Item: Into<String>,
{
    fn candidates(&self, typed: &str, _: &CompletionContext) -> Vec<String> {
        self(typed).into_iter().map(Into::into).collect()
    }
}

impl<F, I> Completer<fn(&str, &CompletionContext) -> I> for F
where
    F: Fn(&str, &CompletionContext) -> I,
    I: IntoIterator,
    I::Item: Into<String>,
{
    fn candidates(&self, typed: &str, context: &CompletionContext) -> Vec<String> {
        self(typed, context).into_iter().map(Into::into).collect()
    }
}

/// Runs a completion function; generated code calls it.
#[doc(hidden)]
pub fn complete_with<M, F: Completer<M>>(
    function: F,
    typed: &str,
    context: &CompletionContext,
) -> Vec<String> {
    function.candidates(typed, context)
}

/// The candidates an enumeration's values give: those that start with `typed`.
pub(crate) fn from_enum(values: &[serde_json::Value], typed: &str) -> Vec<String> {
    values
        .iter()
        .filter_map(serde_json::Value::as_str)
        .filter(|value| value.starts_with(typed))
        .map(str::to_owned)
        .collect()
}
