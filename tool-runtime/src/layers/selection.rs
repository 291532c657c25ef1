//! Which tools a layer applies to: every one, some by name, those that name it, or those a
//! rule picks.

use crate::catalog::Tool;
use std::fmt;
use std::sync::Arc;

/// The tools a layer applies to, for
/// [`RegistryBuilder::layer_for`](crate::registry::RegistryBuilder::layer_for).
///
/// A name or a list of names converts into one; every name must be a tool of the registry
/// when it is built (a misspelt name is an error, not a layer that never runs), or be under
/// a mounted server's prefix (its tools come once it is reached; a name it does not bring is
/// logged as a warning then).
///
/// ```
/// use tool_runtime::layers::Tools;
///
/// let one: Tools = "search".into();
/// let some: Tools = ["search", "fetch"].into();
/// let read_only = Tools::matching(|tool| tool.annotations().read_only == Some(true));
/// # let _ = (one, some, read_only);
/// ```
#[derive(Clone)]
pub struct Tools(pub(super) Select);

#[derive(Clone)]
pub(super) enum Select {
    All,
    Named(Arc<[String]>),
    /// The tools that name the layer in `#[tool(layers = [...])]`.
    NamingLayer(Arc<str>),
    Matching(Arc<dyn Fn(&Tool) -> bool + Send + Sync>),
}

impl Tools {
    /// Every tool, those added later included.
    pub fn all() -> Self {
        Tools(Select::All)
    }

    /// The tools named.
    pub fn named<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Tools(Select::Named(names.into_iter().map(Into::into).collect()))
    }

    /// The tools `rule` picks, from their description (annotations, scopes, name), those
    /// added later included.
    pub fn matching(rule: impl Fn(&Tool) -> bool + Send + Sync + 'static) -> Self {
        Tools(Select::Matching(Arc::new(rule)))
    }

    pub(crate) fn naming_layer(name: &str) -> Self {
        Tools(Select::NamingLayer(name.into()))
    }

    /// Whether the layer applies to `tool`.
    pub(super) fn picks(&self, tool: &Tool) -> bool {
        match &self.0 {
            Select::All => true,
            Select::Named(names) => names.iter().any(|name| name == tool.name()),
            Select::NamingLayer(layer) => tool.layers().iter().any(|named| **named == **layer),
            Select::Matching(rule) => rule(tool),
        }
    }

    /// The names it lists, each to be a tool of the registry.
    pub(crate) fn names(&self) -> &[String] {
        match &self.0 {
            Select::Named(names) => names,
            _ => &[],
        }
    }

    /// The name tools give the layer in `#[tool(layers = [...])]`, for a named layer.
    pub(crate) fn layer_name(&self) -> Option<&str> {
        match &self.0 {
            Select::NamingLayer(name) => Some(name),
            _ => None,
        }
    }
}

impl From<&str> for Tools {
    fn from(name: &str) -> Self {
        Tools::named([name])
    }
}

impl From<String> for Tools {
    fn from(name: String) -> Self {
        Tools::named([name])
    }
}

impl<const N: usize> From<[&str; N]> for Tools {
    fn from(names: [&str; N]) -> Self {
        Tools::named(names)
    }
}

impl From<Vec<String>> for Tools {
    fn from(names: Vec<String>) -> Self {
        Tools::named(names)
    }
}

impl fmt::Debug for Tools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Select::All => f.write_str("Tools::all()"),
            Select::Named(names) => f.debug_tuple("Tools::named").field(names).finish(),
            Select::NamingLayer(name) => f.debug_tuple("Tools::naming").field(name).finish(),
            Select::Matching(_) => f.write_str("Tools::matching(..)"),
        }
    }
}
