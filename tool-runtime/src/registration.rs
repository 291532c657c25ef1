//! What `#[tool]`, `#[prompt]` and `#[resource]` write for each function, whole: its
//! description (for the catalog) and how it runs (for dispatch), collected into the binary
//! by `inventory` (or, with the `linkme` feature, a `linkme` distributed slice).
//!
//! This is the one module that names both halves: the catalog stays a pure description and
//! dispatch never reads a registration; both are built from here, once, in the same order.

use crate::call::complete::CompleteFn;
use crate::call::runnable::{InvokeFn, RequirementFn, Runnable};
use crate::catalog::contract::{Registered, ToolDescription};
use crate::catalog::{Catalog, CatalogError};
use std::sync::OnceLock;

/// One tool, prompt or resource as the macro writes it. Built in a `static`, so every
/// field is constant.
#[doc(hidden)]
#[derive(Debug)]
pub struct ToolRegistration {
    /// What callers see of the function.
    pub about: ToolDescription,
    /// Whether it is a tool, a prompt or a resource.
    pub registered: Registered,
    /// The call shim.
    pub invoke: InvokeFn,
    /// For each parameter, in order, the registered state it needs (`None` for most).
    pub requirements: &'static [RequirementFn],
    /// For each parameter, in order, its `#[arg(complete = ...)]` function, if any.
    pub completers: &'static [Option<CompleteFn>],
}

#[cfg(not(feature = "linkme"))]
inventory::collect!(ToolRegistration);

/// The linkme slice every tool lands in when the `linkme` feature is on.
#[cfg(feature = "linkme")]
#[doc(hidden)]
#[linkme::distributed_slice]
pub static TOOL_REGISTRY: [ToolRegistration];

/// `namespace!` in a module: every `#[tool]` of that module, and of the modules inside it,
/// is named `prefix_name`.
#[doc(hidden)]
#[derive(Debug)]
pub struct NamespaceRegistration {
    /// The module's path, as `module_path!()` writes it (`my_crate::files`).
    pub module: &'static str,
    /// The prefix.
    pub prefix: &'static str,
}

#[cfg(not(feature = "linkme"))]
inventory::collect!(NamespaceRegistration);

/// The linkme slice every namespace lands in when the `linkme` feature is on.
#[cfg(feature = "linkme")]
#[doc(hidden)]
#[linkme::distributed_slice]
pub static NAMESPACE_REGISTRY: [NamespaceRegistration];

/// Every namespace linked into this binary.
fn namespaces() -> Vec<&'static NamespaceRegistration> {
    #[cfg(not(feature = "linkme"))]
    {
        inventory::iter::<NamespaceRegistration>
            .into_iter()
            .collect()
    }
    #[cfg(feature = "linkme")]
    {
        NAMESPACE_REGISTRY.iter().collect()
    }
}

/// The name callers use for a tool written in `module`: under the namespace of the nearest
/// module (itself or the closest one around it) that has one, else its own.
fn name_under_namespace(
    namespaces: &[&NamespaceRegistration],
    module: &str,
    name: &'static str,
) -> std::borrow::Cow<'static, str> {
    let inside = |namespace: &&&NamespaceRegistration| {
        module == namespace.module
            || module
                .strip_prefix(namespace.module)
                .is_some_and(|rest| rest.starts_with("::"))
    };
    match namespaces
        .iter()
        .filter(inside)
        .max_by_key(|namespace| namespace.module.len())
    {
        Some(namespace) => format!("{}_{name}", namespace.prefix).into(),
        None => name.into(),
    }
}

/// Every tool registration linked into this binary, in no particular order.
fn registrations() -> impl Iterator<Item = &'static ToolRegistration> {
    #[cfg(not(feature = "linkme"))]
    {
        inventory::iter::<ToolRegistration>.into_iter()
    }
    #[cfg(feature = "linkme")]
    {
        TOOL_REGISTRY.iter()
    }
}

/// The static tools, prompts and resources: the catalog, and how each runs, at the same
/// index as in the catalog's lists.
pub(crate) struct StaticTools {
    pub(crate) catalog: Catalog,
    pub(crate) runnables: Vec<Runnable>,
    pub(crate) prompt_runnables: Vec<Runnable>,
    pub(crate) resource_runnables: Vec<Runnable>,
}

impl StaticTools {
    /// The static tools of this binary, built on first use.
    pub(crate) fn global() -> Result<&'static StaticTools, CatalogError> {
        static GLOBAL: OnceLock<Result<StaticTools, CatalogError>> = OnceLock::new();
        GLOBAL
            .get_or_init(StaticTools::build)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// No static tools at all: for a registry of another server's tools only.
    #[cfg(all(feature = "client", feature = "cli"))]
    pub(crate) fn none() -> &'static StaticTools {
        static NONE: OnceLock<StaticTools> = OnceLock::new();
        NONE.get_or_init(|| StaticTools {
            catalog: Catalog::from_sorted(std::iter::empty()).expect("an empty catalog is valid"),
            runnables: Vec::new(),
            prompt_runnables: Vec::new(),
            resource_runnables: Vec::new(),
        })
    }

    fn build() -> Result<StaticTools, CatalogError> {
        let namespaces = namespaces();
        let mut tools = Vec::new();
        let mut prompts = Vec::new();
        let mut resources = Vec::new();
        for registration in registrations() {
            match &registration.registered {
                Registered::Tool => tools.push((
                    name_under_namespace(
                        &namespaces,
                        registration.about.location.module_path,
                        registration.about.name,
                    ),
                    registration,
                )),
                Registered::Prompt => prompts.push(registration),
                Registered::Resource(spec) => resources.push((registration, spec)),
            }
        }
        // The catalog's orders, so that runnables line up with its lists.
        tools.sort_by(|(a_name, a), (b_name, b)| {
            Catalog::order_of(a_name, &a.about).cmp(&Catalog::order_of(b_name, &b.about))
        });
        prompts.sort_by_key(|r| Catalog::order_of(r.about.name, &r.about));
        resources.sort_by_key(|(r, spec)| (spec.uri, Catalog::order_of(r.about.name, &r.about)));
        let mut catalog = Catalog::from_sorted(tools.iter().map(|(name, r)| (&**name, &r.about)))?;
        catalog.add_prompts(prompts.iter().map(|r| &r.about))?;
        catalog.add_resources(resources.iter().map(|(r, spec)| (&r.about, *spec)))?;
        Ok(StaticTools {
            catalog,
            runnables: tools
                .iter()
                .map(|(name, registration)| runnable_named(name, registration))
                .collect(),
            prompt_runnables: prompts.into_iter().map(runnable).collect(),
            resource_runnables: resources.into_iter().map(|(r, _)| runnable(r)).collect(),
        })
    }
}

fn runnable(registration: &'static ToolRegistration) -> Runnable {
    runnable_named(registration.about.name, registration)
}

fn runnable_named(name: &str, registration: &'static ToolRegistration) -> Runnable {
    Runnable::from_macro(
        name,
        registration.invoke,
        registration.requirements,
        registration.completers,
    )
}

impl Catalog {
    /// The catalog of this binary, built on first use.
    ///
    /// ```
    /// use tool_runtime::{tool, catalog::Catalog};
    ///
    /// /// Add two integers.
    /// #[tool]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::global().expect("tool names are unique");
    /// let add = catalog.get("add").unwrap();
    /// assert_eq!(add.summary(), "Add two integers.");
    /// assert_eq!(add.input_schema()["required"], serde_json::json!(["a", "b"]));
    /// ```
    pub fn global() -> Result<&'static Catalog, CatalogError> {
        StaticTools::global().map(|tools| &tools.catalog)
    }

    /// Builds the catalog afresh from every registration in the binary: what
    /// [`Catalog::global`] does once. For measuring start-up; servers use `global`.
    pub fn build() -> Result<Catalog, CatalogError> {
        StaticTools::build().map(|tools| tools.catalog)
    }
}

/// Registers one tool; the macro calls it so the registration mechanism is chosen by this
/// crate's features, not by the crate the tool is written in.
#[cfg(not(feature = "linkme"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __register_tool {
    ($registration:expr) => {
        $crate::__private::inventory::submit! { $registration }
    };
}

/// Registers one tool; the macro calls it so the registration mechanism is chosen by this
/// crate's features, not by the crate the tool is written in.
#[cfg(feature = "linkme")]
#[doc(hidden)]
#[macro_export]
macro_rules! __register_tool {
    ($registration:expr) => {
        #[$crate::__private::linkme::distributed_slice($crate::__private::TOOL_REGISTRY)]
        #[linkme(crate = $crate::__private::linkme)]
        static __TOOL_REGISTRATION: $crate::__private::ToolRegistration = $registration;
    };
}

/// Registers one namespace, by this crate's registration mechanism.
#[cfg(not(feature = "linkme"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __register_namespace {
    ($registration:expr) => {
        $crate::__private::inventory::submit! { $registration }
    };
}

/// Registers one namespace, by this crate's registration mechanism.
#[cfg(feature = "linkme")]
#[doc(hidden)]
#[macro_export]
macro_rules! __register_namespace {
    ($registration:expr) => {
        #[$crate::__private::linkme::distributed_slice($crate::__private::NAMESPACE_REGISTRY)]
        #[linkme(crate = $crate::__private::linkme)]
        static __TOOL_NAMESPACE: $crate::__private::NamespaceRegistration = $registration;
    };
}

/// Whether `prefix` can start a tool name: an ASCII letter or `_`, then letters, digits,
/// `_` and `-`. A `const fn`, so [`namespace!`](crate::namespace) refuses a bad prefix at
/// compile time.
#[doc(hidden)]
pub const fn namespace_prefix_is_valid(prefix: &str) -> bool {
    let bytes = prefix.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        if !tool_rules::is_name_byte(bytes[index], index == 0) {
            return false;
        }
        index += 1;
    }
    !bytes.is_empty()
}

/// Puts every `#[tool]` of this module, and of the modules inside it, under a prefix:
/// `read` in a module with `namespace!("files")` is the tool `files_read`. Written at a
/// crate's root, it names all of the crate's tools; a module's own namespace wins over
/// the one around it.
///
/// With a module path, it names the tools of another module or crate, such as a library
/// of tools the binary links:
///
/// ```
/// mod files {
///     tool_runtime::namespace!("files");
///
///     /// Read a file.
///     #[tool_runtime::tool]
///     fn read(path: String) -> String { path }
/// }
///
/// mod notes {
///     /// Read a note.
///     #[tool_runtime::tool]
///     fn read(id: u32) -> u32 { id }
/// }
/// tool_runtime::namespace!("notes", module = concat!(module_path!(), "::notes"));
///
/// let registry = tool_runtime::Registry::new().unwrap();
/// assert!(registry.get("files_read").is_some());
/// assert!(registry.get("notes_read").is_some());
/// assert!(registry.get("read").is_none());
/// ```
///
/// Run-time tools get a prefix the same way with
/// [`RegistryBuilder::group`](crate::registry::RegistryBuilder::group). Prompts and resources keep
/// their names: a prompt is picked by a person from a list, and a resource is already namespaced by
/// its URI's scheme.
#[macro_export]
macro_rules! namespace {
    ($prefix:expr $(,)?) => {
        $crate::namespace!($prefix, module = ::core::module_path!());
    };
    ($prefix:expr, module = $module:expr $(,)?) => {
        const _: () = ::core::assert!(
            $crate::__private::namespace_prefix_is_valid($prefix),
            "a namespace is an ASCII letter or `_`, then letters, digits, `_` and `-`"
        );
        const _: () = {
            $crate::__register_namespace! {
                $crate::__private::NamespaceRegistration {
                    module: $module,
                    prefix: $prefix,
                }
            }
        };
    };
}
