//! Why a registry could not be built or changed, in words that name both sides of a clash.

use crate::catalog::{CatalogError, ItemKind};
use std::fmt;

/// Why a registry could not be built or changed.
///
/// Its `Debug` is its message, so `Registry::new().expect("tools")` reads as well as
/// `{}` does.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// The static catalog could not be built.
    Catalog(CatalogError),
    /// A tool or prompt with this name, or a resource with this URI, exists already.
    AlreadyExists {
        /// What was added.
        what: ItemKind,
        /// The name (the URI, for a resource).
        name: String,
        /// What holds the name now: a `#[tool]` and where, or a tool added at run time.
        existing: String,
    },
    /// The name breaks the naming rule.
    InvalidName {
        /// What was made.
        what: ItemKind,
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A run-time tool's (prompt's, resource's) argument type does not describe an object.
    InvalidSchema {
        /// What was made.
        what: ItemKind,
        /// Its name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A run-time resource's URI or template is refused.
    InvalidResource {
        /// The URI or URI template.
        uri: String,
        /// Why.
        reason: String,
    },
    /// A rate limit ([`RegistryBuilder::rate_limit`](super::RegistryBuilder::rate_limit)) names a
    /// tool the registry does not have.
    UnknownTool {
        /// The name given.
        name: String,
    },
    /// A run-time tool's OAuth scope ([`DynamicTool::scopes`](super::DynamicTool::scopes)) cannot
    /// be one.
    InvalidScope {
        /// The tool.
        tool: String,
        /// The scope given.
        scope: String,
        /// Why.
        reason: String,
    },
    /// A tool, prompt or resource takes `State<T>` but no `T` was registered.
    MissingState {
        /// What takes it.
        what: ItemKind,
        /// Its name.
        tool: String,
        /// The state's type.
        type_name: &'static str,
    },
    /// A doc example does not fit its tool's parameters (of a type the `#[tool]` macro
    /// cannot see through, or it would not have compiled): it must never reach a client.
    ExampleDoesNotFit {
        /// What the example is of.
        what: ItemKind,
        /// Its name.
        name: String,
        /// The example, as JSON.
        example: String,
        /// What does not fit, naming the parameter.
        problem: String,
    },
    /// An input schema uses what the runtime's validator does not check (a `$ref` to
    /// another document, look-around in a `pattern`...): its calls could not be held to it.
    SchemaNotCheckable {
        /// What the schema is of.
        what: ItemKind,
        /// Its name.
        name: String,
        /// What in the schema cannot be checked, and where.
        reason: String,
    },
    /// A layer was given for a tool the registry does not have
    /// ([`RegistryBuilder::layer_for`](super::RegistryBuilder::layer_for)).
    LayerForUnknownTool {
        /// The name given.
        name: String,
        /// The closest tool name, when one is close.
        suggestion: Option<String>,
    },
    /// A run-time tool keeps its answers ([`DynamicTool::cache`](super::DynamicTool::cache))
    /// but does not say it changes nothing ([`DynamicTool::read_only`](super::DynamicTool::read_only)).
    CacheNotReadOnly {
        /// The tool.
        tool: String,
    },
    /// A tool names a layer (`#[tool(layers = [...])]`) the registry was not given, or a
    /// layer was given a name that cannot be one.
    UnknownLayer {
        /// The tool that names it, if a tool does.
        tool: Option<String>,
        /// The layer's name.
        layer: String,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::Catalog(error) => error.fmt(f),
            RegistryError::AlreadyExists {
                what: ItemKind::Resource,
                name,
                existing,
            } => write!(
                f,
                "a resource with URI `{name}` already exists ({existing})"
            ),
            RegistryError::AlreadyExists {
                what,
                name,
                existing,
            } => write!(f, "a {what} named `{name}` already exists ({existing})"),
            RegistryError::InvalidResource { uri, reason } => {
                write!(f, "resource `{uri}` cannot be built: {reason}")
            }
            RegistryError::InvalidName { what, name, reason } => {
                write!(f, "`{name}` is not a valid {what} name: {reason}")
            }
            RegistryError::InvalidSchema { what, name, reason } => {
                write!(f, "{what} `{name}` cannot be built: {reason}")
            }
            RegistryError::UnknownTool { name } => {
                write!(
                    f,
                    "a rate limit names the tool `{name}`, but no tool has that name"
                )
            }
            RegistryError::InvalidScope {
                tool,
                scope,
                reason,
            } => write!(
                f,
                "tool `{tool}` cannot require the scope {scope:?}: {reason}"
            ),
            RegistryError::MissingState {
                what,
                tool,
                type_name,
            } => write!(
                f,
                "{what} `{tool}` takes State<{type_name}>, but no {type_name} was registered; add \
                 it with Registry::builder().state(...)"
            ),
            RegistryError::ExampleDoesNotFit {
                what,
                name,
                example,
                problem,
            } => write!(
                f,
                "{what} `{name}`: its doc example {example} does not fit its parameters: \
                 {problem}; fix the `Example:` line of its doc comment (`check` lists every \
                 such problem)"
            ),
            RegistryError::SchemaNotCheckable { what, name, reason } => write!(
                f,
                "{what} `{name}`: its input schema cannot be checked: {reason}; calls must \
                 never get past a rule that is not checked, so write the rule another way \
                 (a JSON Schema 2020-12 schema whose `$ref`s point inside it, patterns \
                 without look-around or back-references)"
            ),
            RegistryError::LayerForUnknownTool { name, suggestion } => {
                write!(
                    f,
                    "a layer is given for the tool `{name}`, but no tool has that name"
                )?;
                match suggestion {
                    Some(suggestion) => write!(f, "; did you mean `{suggestion}`?"),
                    None => f.write_str(
                        "; for tools added once the registry runs (a mounted server's), pick \
                         them with Tools::matching",
                    ),
                }
            }
            RegistryError::CacheNotReadOnly { tool } => write!(
                f,
                "tool `{tool}` keeps its answers but is not read-only: an answer is given \
                 again only for a tool that changes nothing; mark it read_only if calling it \
                 has no effect"
            ),
            RegistryError::UnknownLayer {
                tool: Some(tool),
                layer,
                reason,
            } => write!(
                f,
                "tool `{tool}` goes through the layer `{layer}`, but {reason}"
            ),
            RegistryError::UnknownLayer {
                tool: None,
                layer,
                reason,
            } => write!(f, "a layer cannot be named `{layer}`: {reason}"),
        }
    }
}

impl std::error::Error for RegistryError {}

/// What holds a name (or URI) already.
pub(crate) enum Holder {
    /// One of the binary's own, written where it says.
    Static(Option<crate::catalog::SourceLocation>),
    /// One added at run time.
    RunTime,
}

impl RegistryError {
    /// The name of a `what` clashes with what `holder` is.
    pub(crate) fn already_exists(what: ItemKind, name: String, holder: Holder) -> RegistryError {
        let existing = match holder {
            Holder::Static(Some(location)) => format!("a #[{what}] at {location}"),
            Holder::Static(None) => format!("a #[{what}]"),
            Holder::RunTime => format!("a {what} added at run time"),
        };
        RegistryError::AlreadyExists {
            what,
            name,
            existing,
        }
    }
}

impl From<CatalogError> for RegistryError {
    fn from(error: CatalogError) -> Self {
        RegistryError::Catalog(error)
    }
}

impl fmt::Debug for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
