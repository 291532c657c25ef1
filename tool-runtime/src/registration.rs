//! What `#[tool]` writes for each tool, whole: its description (for the catalog) and how it
//! runs (for dispatch), collected into the binary by `inventory` (or, with the `linkme`
//! feature, a `linkme` distributed slice).
//!
//! This is the one module that names both halves: the catalog stays a pure description and
//! dispatch never reads a registration; both are built from here, once, in the same order.

use crate::call::runnable::{InvokeFn, RequirementFn, Runnable};
use crate::catalog::contract::ToolDescription;
use crate::catalog::{Catalog, CatalogError};
use std::sync::OnceLock;

/// One tool as the macro writes it. Built in a `static`, so every field is constant.
#[doc(hidden)]
#[derive(Debug)]
pub struct ToolRegistration {
    /// What callers see of the tool.
    pub about: ToolDescription,
    /// The call shim.
    pub invoke: InvokeFn,
    /// For each parameter, in order, the registered state it needs (`None` for most).
    pub requirements: &'static [RequirementFn],
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

/// The static tools: the catalog, and how each of its tools runs, at the same index.
pub(crate) struct StaticTools {
    pub(crate) catalog: Catalog,
    pub(crate) runnables: Vec<Runnable>,
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
        let mut registrations: Vec<&'static ToolRegistration> = registrations().collect();
        // The catalog's order, so that runnables line up with its tools.
        registrations.sort_by_key(|registration| Catalog::order_of(&registration.about));
        let catalog = Catalog::from_sorted(registrations.iter().map(|r| &r.about))?;
        let runnables = registrations
            .iter()
            .map(|registration| {
                Runnable::from_macro(
                    registration.about.name,
                    registration.invoke,
                    registration.requirements,
                )
            })
            .collect();
        Ok(StaticTools { catalog, runnables })
    }
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
