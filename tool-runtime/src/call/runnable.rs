//! How a tool runs, kept by dispatch next to (never inside) its description: the call shim
//! or run-time handler, where its sync work runs, and its compiled argument checker. A
//! [`ToolRef`] pairs the two, and is what a call resolves to once.

use super::blocking::Pace;
use super::complete::CompleteFn;
use super::context::StateRequirement;
use super::dynamic::DynamicHandler;
use super::{ArgumentReader, Invocation};
use crate::catalog::Tool;
use crate::schema::validate::Validator;
use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

/// The call shim `#[tool]` writes: reads the arguments into typed values and returns the
/// work to run, or `None` when an argument could not be read (the problem is then in
/// `ArgumentReader`).
#[doc(hidden)]
pub type InvokeFn = fn(&mut ArgumentReader<'_>) -> Option<Invocation>;

/// The registered state one parameter needs, if any.
#[doc(hidden)]
pub type RequirementFn = fn() -> Option<StateRequirement>;

/// How one tool runs.
pub(crate) struct Runnable {
    pub(crate) how: How,
    pace: Arc<Pace>,
    checker: OnceLock<Validator>,
}

/// What starts a call's work.
pub(crate) enum How {
    /// A `#[tool]`: its call shim, and the state each parameter needs.
    Macro {
        invoke: InvokeFn,
        requirements: &'static [RequirementFn],
        completers: &'static [Option<CompleteFn>],
    },
    /// A tool added at run time.
    Dynamic(Arc<dyn DynamicHandler>),
}

impl Runnable {
    pub(crate) fn from_macro(
        name: &str,
        invoke: InvokeFn,
        requirements: &'static [RequirementFn],
        completers: &'static [Option<CompleteFn>],
    ) -> Runnable {
        Runnable::new(
            name,
            How::Macro {
                invoke,
                requirements,
                completers,
            },
        )
    }

    pub(crate) fn dynamic(name: &str, handler: Arc<dyn DynamicHandler>) -> Runnable {
        Runnable::new(name, How::Dynamic(handler))
    }

    fn new(name: &str, how: How) -> Runnable {
        Runnable {
            how,
            pace: Arc::new(Pace::new(name)),
            checker: OnceLock::new(),
        }
    }

    /// Where the tool's sync work runs (the blocking pool, or a lane once proven quick).
    pub(crate) fn pace(&self) -> &Arc<Pace> {
        &self.pace
    }

    /// The registered state the tool needs.
    pub(crate) fn requirements(&self) -> impl Iterator<Item = StateRequirement> + '_ {
        let requirements: &[RequirementFn] = match &self.how {
            How::Macro { requirements, .. } => requirements,
            How::Dynamic(_) => &[],
        };
        requirements.iter().filter_map(|requirement| requirement())
    }

    /// The `#[arg(complete = ...)]` function of the parameter at `index`, if any.
    pub(crate) fn completer(&self, index: usize) -> Option<CompleteFn> {
        match &self.how {
            How::Macro { completers, .. } => completers.get(index).copied().flatten(),
            How::Dynamic(_) => None,
        }
    }

    /// How the arguments of `tool` are checked, decided on first use (or when the registry
    /// checked the schema at build, which keeps what it compiled).
    pub(crate) fn checker(&self, tool: &Tool) -> &Validator {
        self.checker.get_or_init(|| {
            Validator::for_schema(tool.input_schema()).unwrap_or_else(|error| {
                tracing::error!(
                    tool = %tool.name(),
                    %error,
                    "the input schema cannot be checked; calls are refused"
                );
                Validator::Refused(error)
            })
        })
    }

    /// Compiles the checker of `tool` now; `Err` says why its schema cannot be checked.
    pub(crate) fn compile_checker(&self, tool: &Tool) -> Result<(), String> {
        match self.checker(tool) {
            Validator::Refused(reason) => Err(reason.clone()),
            _ => Ok(()),
        }
    }
}

/// A tool a call resolved to: its description, and how it runs. Cheap to clone (a pointer
/// copy for `#[tool]`s, a reference count for tools added at run time); dereferences to the
/// [`Tool`].
#[derive(Clone)]
pub struct ToolRef(Resolved);

#[derive(Clone)]
enum Resolved {
    Static(&'static Tool, &'static Runnable),
    Dynamic(Arc<dyn Entry>),
}

/// Something added at run time that runs as a tool does: a tool, a prompt or a resource,
/// each kept with its `Runnable`.
pub(crate) trait Entry: Send + Sync {
    /// The description dispatch checks the arguments against.
    fn tool(&self) -> &Tool;
    /// How it runs.
    fn runnable(&self) -> &Runnable;
}

impl Entry for (Tool, Runnable) {
    fn tool(&self) -> &Tool {
        &self.0
    }
    fn runnable(&self) -> &Runnable {
        &self.1
    }
}

impl ToolRef {
    pub(crate) fn of_static(tool: &'static Tool, runnable: &'static Runnable) -> ToolRef {
        ToolRef(Resolved::Static(tool, runnable))
    }

    pub(crate) fn of_dynamic(entry: Arc<dyn Entry>) -> ToolRef {
        ToolRef(Resolved::Dynamic(entry))
    }

    pub(crate) fn runnable(&self) -> &Runnable {
        match &self.0 {
            Resolved::Static(_, runnable) => runnable,
            Resolved::Dynamic(entry) => entry.runnable(),
        }
    }

    /// The tool's name, to keep: borrowed from the catalog for a tool compiled in (no copy
    /// per call), copied for one added at run time.
    pub(crate) fn name_to_keep(&self) -> Cow<'static, str> {
        match &self.0 {
            Resolved::Static(tool, _) => Cow::Borrowed(tool.name()),
            Resolved::Dynamic(entry) => Cow::Owned(entry.tool().name().to_owned()),
        }
    }
}

impl Deref for ToolRef {
    type Target = Tool;
    fn deref(&self) -> &Tool {
        match &self.0 {
            Resolved::Static(tool, _) => tool,
            Resolved::Dynamic(entry) => entry.tool(),
        }
    }
}

impl fmt::Debug for ToolRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}
