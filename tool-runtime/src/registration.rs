//! What `#[tool]`, `#[prompt]` and `#[resource]` write for each function, whole: its
//! description (for the catalog) and how it runs (for dispatch), collected into the binary
//! by `inventory` (or, with the `linkme` feature, a `linkme` distributed slice).
//!
//! This is the one module that names both halves: the catalog stays a pure description and
//! dispatch never reads a registration; both are built from here, once, in the same order.

use crate::call::complete::CompleteFn;
use crate::call::runnable::{InvokeFn, RequirementFn, Runnable};
use crate::catalog::contract::{Surface, ToolDescription};
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
    pub surface: Surface,
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

    fn build() -> Result<StaticTools, CatalogError> {
        let mut tools = Vec::new();
        let mut prompts = Vec::new();
        let mut resources = Vec::new();
        for registration in registrations() {
            match &registration.surface {
                Surface::Tool => tools.push(registration),
                Surface::Prompt => prompts.push(registration),
                Surface::Resource(spec) => resources.push((registration, spec)),
            }
        }
        // The catalog's orders, so that runnables line up with its lists.
        tools.sort_by_key(|registration| Catalog::order_of(&registration.about));
        prompts.sort_by_key(|registration| Catalog::order_of(&registration.about));
        resources
            .sort_by_key(|(registration, spec)| (spec.uri, Catalog::order_of(&registration.about)));
        let mut catalog = Catalog::from_sorted(tools.iter().map(|r| &r.about))?;
        catalog.add_prompts(prompts.iter().map(|r| &r.about))?;
        catalog.add_resources(resources.iter().map(|(r, spec)| (&r.about, *spec)))?;
        Ok(StaticTools {
            catalog,
            runnables: tools.into_iter().map(runnable).collect(),
            prompt_runnables: prompts.into_iter().map(runnable).collect(),
            resource_runnables: resources.into_iter().map(|(r, _)| runnable(r)).collect(),
        })
    }
}

fn runnable(registration: &'static ToolRegistration) -> Runnable {
    Runnable::from_macro(
        registration.about.name,
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
