//! What the runtime hands to a call besides its arguments: shared state, and the injected
//! parameter types that read it.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Shared application state, registered once when the registry is built and handed to every
/// tool that asks for it with a `State<T>` parameter.
///
/// A `State<T>` parameter never appears in the tool's schema; callers cannot set it.
///
/// ```
/// use tool_runtime::{tool, State};
///
/// struct Greeter { greeting: String }
///
/// /// Greet someone.
/// #[tool]
/// fn greet(name: String, greeter: State<Greeter>) -> String {
///     format!("{}, {name}!", greeter.greeting)
/// }
/// ```
pub struct State<T: ?Sized>(Arc<T>);

impl<T: ?Sized> State<T> {
    /// The shared `Arc` behind this state.
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(Arc::clone(&self.0))
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

/// The state a tool needs, so a registry can refuse to start without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateRequirement {
    /// The state's type.
    pub type_id: TypeId,
    /// The state's type name, for messages.
    pub type_name: &'static str,
}

/// Values registered as state, by type.
#[derive(Default, Clone)]
pub(crate) struct StateMap {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    names: Vec<&'static str>,
}

impl StateMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        if self
            .values
            .insert(TypeId::of::<T>(), Arc::new(value))
            .is_none()
        {
            self.names.push(std::any::type_name::<T>());
        }
    }

    pub(crate) fn contains(&self, type_id: TypeId) -> bool {
        self.values.contains_key(&type_id)
    }

    fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|value| Arc::clone(value).downcast::<T>().ok())
    }
}

impl fmt::Debug for StateMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(&self.names).finish()
    }
}

/// Everything a call can draw on besides its arguments: the registered state, and the
/// client that made the call (to ask its user, its model or its roots, see
/// [`elicit`](CallContext::elicit), [`sample`](CallContext::sample) and
/// [`roots`](CallContext::roots)). A tool takes it as a parameter, which callers never see.
///
/// ```
/// use tool_runtime::{tool, CallContext, Registry};
///
/// struct Greeting(&'static str);
///
/// /// Greet someone, in the server's greeting if it has one.
/// #[tool]
/// fn greet(name: String, ctx: CallContext) -> String {
///     let greeting = ctx.state::<Greeting>().map_or("Hello", |greeting| greeting.0);
///     format!("{greeting}, {name}!")
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::builder().state(Greeting("Hola")).build().unwrap();
/// let schema = registry.get("greet").unwrap().input_schema().clone();
/// assert_eq!(schema["required"], serde_json::json!(["name"]));
///
/// let result = registry.call("greet", serde_json::json!({"name": "Ana"})).await;
/// assert_eq!(result.output(), Some(&serde_json::json!("Hola, Ana!")));
/// # });
/// ```
#[derive(Clone, Default)]
pub struct CallContext {
    state: Arc<StateMap>,
    scope: Option<Arc<super::scope::CallScope>>,
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("state", &self.state)
            .field("in_call", &self.scope.is_some())
            .finish()
    }
}

impl CallContext {
    pub(crate) fn new(state: Arc<StateMap>) -> Self {
        CallContext { state, scope: None }
    }

    /// The same context, for one call with its own scope.
    pub(crate) fn with_scope(&self, scope: Arc<super::scope::CallScope>) -> Self {
        CallContext {
            state: Arc::clone(&self.state),
            scope: Some(scope),
        }
    }

    pub(crate) fn scope(&self) -> Option<&Arc<super::scope::CallScope>> {
        self.scope.as_ref()
    }

    /// The registered state of type `T`, if any.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.state.get::<T>().map(State)
    }

    /// The id of the request that made the call, as the client wrote it (`7`, `"abc"`);
    /// `None` for a call made directly on the registry.
    pub fn request_id(&self) -> Option<&str> {
        self.scope
            .as_ref()
            .and_then(|scope| scope.request_id.as_deref())
    }

    /// How the call came: over MCP (and in which era), over REST, or directly.
    pub fn protocol(&self) -> super::scope::Protocol {
        self.scope
            .as_ref()
            .map_or(super::scope::Protocol::Direct, |scope| scope.protocol)
    }

    /// Who made the call: its transport, session, authenticated subject and scopes, as far
    /// as they are known (a call made directly on a registry has none of them).
    pub fn caller(&self) -> &super::caller::Caller {
        static DIRECT: super::caller::Caller = super::caller::Caller::DIRECT;
        self.scope.as_ref().map_or(&DIRECT, |scope| &scope.caller)
    }
}
