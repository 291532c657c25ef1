//! A mount's life: one connection to its server, made (and made again, waiting longer each
//! time, while the server cannot be reached) for as long as the registry lives; the
//! server's tools, prompts and resources read into the registry, and read again whenever
//! the connection is made anew or the server says they changed.

use super::forward::{self, Callers};
use super::Mount;
use crate::client::{Client, Notification, ServerDescription};
use crate::registry::{DynamicPrompt, DynamicResource, Registry};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// How long a call through a mount may take unless the mount says (the registry's default
/// time limit, when set, applies too).
const CALL_LIMIT: Duration = Duration::from_secs(300);
/// How often the items of a mount whose server could not list them are asked for again.
const LOOK_AGAIN_EVERY: Duration = Duration::from_secs(5);
/// The wait after a first failure to connect; it doubles after each, up to `LONGEST_WAIT`.
const FIRST_WAIT: Duration = Duration::from_millis(200);
const LONGEST_WAIT: Duration = Duration::from_secs(10);

/// What the mount has put in the registry, to take out again when it reads anew.
#[derive(Default)]
struct Placed {
    tools: Vec<String>,
    prompts: Vec<String>,
    resources: Vec<String>,
    /// The resources subscribed to on the server, so their updates reach this one's
    /// subscribers.
    subscribed: std::collections::BTreeSet<String>,
    /// The names warned of as given for tools the server does not bring: once each.
    warned: std::collections::BTreeSet<String>,
}

/// Keeps what `mount`'s server offers in the registry for as long as the registry lives;
/// `tried` is told how the first try went.
pub(super) async fn keep(
    mount: Arc<Mount>,
    registry: Weak<Registry>,
    tried: tokio::sync::oneshot::Sender<Result<(), String>>,
) {
    let mut tried = Some(tried);
    let callers = Arc::new(Callers::default());
    let mut wait = FIRST_WAIT;
    let client = loop {
        let mut builder = Client::builder()
            .named("tool-runtime mount", env!("CARGO_PKG_VERSION"))
            .handler(Arc::clone(&callers))
            // The mount's own time limit is the limit of its tools' calls, which the
            // registry holds them to (and then cancels them here); this one is only the
            // backstop, for listing and connecting too.
            .timeout(CALL_LIMIT)
            // Every message is passed on; the caller's own level filters them there.
            .log_level("debug");
        if let Some(handshake) = mount.handshake_era {
            builder = builder.handshake_era(handshake);
        }
        for (name, value) in &mount.environment.0 {
            builder = builder.env(name, value);
        }
        if let Some(credentials) = &mount.credentials {
            builder = builder.shared_credentials(Arc::clone(&credentials.0));
        }
        let connected = builder.connect_to(mount.target.clone()).await;
        match connected {
            Ok(client) => break client,
            Err(error) => {
                if let Some(tried) = tried.take() {
                    let _ = tried.send(Err(match mount.prefix.is_empty() {
                        true => error.to_string(),
                        false => format!("mount `{}`: {error}", mount.prefix),
                    }));
                }
                tracing::warn!(mount = %mount.prefix, %error, "a mounted MCP server cannot be reached; trying again");
                if registry.strong_count() == 0 {
                    return;
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(LONGEST_WAIT);
            }
        }
    };
    if let Some(registry) = registry.upgrade() {
        let closing = client.clone();
        registry.on_close(Box::new(move || {
            Box::pin(async move { closing.close().await })
        }));
    }
    let mut events = client.notifications();
    let mut placed = Placed::default();
    loop {
        let Some(live) = registry.upgrade() else {
            client.close().await;
            return;
        };
        let listed = refresh(&mount, &client, &live, &callers, &mut placed).await;
        drop(live);
        if let Some(tried) = tried.take() {
            let _ = tried.send(listed.clone());
        }
        let listed = listed.is_ok();
        loop {
            let event = tokio::select! {
                event = events.recv() => event,
                () = tokio::time::sleep(LOOK_AGAIN_EVERY), if !listed => break,
            };
            match event {
                Ok(
                    Notification::ToolsChanged
                    | Notification::PromptsChanged
                    | Notification::ResourcesChanged,
                ) => break,
                // A new connection holds none of the old one's subscriptions: all anew.
                Ok(Notification::Connected) => {
                    placed.subscribed.clear();
                    break;
                }
                Ok(Notification::ResourceUpdated { uri }) => {
                    // A mounted resource keeps its URI: this server's subscribers of it
                    // hear of the change (and other replicas', through a shared store).
                    if let Some(registry) = registry.upgrade() {
                        registry.resource_updates().updated(&uri);
                    }
                    continue;
                }
                Ok(Notification::Log {
                    level,
                    logger,
                    data,
                }) => {
                    // What the server logs outside any call is this server's to log.
                    tracing::info!(mount = %mount.prefix, %level, ?logger, %data, "a mounted MCP server logged");
                }
                Ok(_) => continue,
                Err(RecvError::Lagged(_)) => break,
                Err(RecvError::Closed) => return,
            }
        }
    }
}

/// Reads what the server offers and puts it in the registry in place of what the mount put
/// there before; `Err` says why the tools could not be read. Prompts and resources that
/// cannot be read are left as they were, with a warning.
async fn refresh(
    mount: &Arc<Mount>,
    client: &Client,
    registry: &Registry,
    callers: &Arc<Callers>,
    placed: &mut Placed,
) -> Result<(), String> {
    let listed = client.list_tools().await.map_err(|error| {
        tracing::warn!(mount = %mount.prefix, %error, "the tools of a mounted MCP server cannot be listed");
        format!(
            "the tools of the mounted server `{}` ({}) cannot be listed: {error}",
            mount.prefix,
            mount.shown()
        )
    })?;
    let mut tools = Vec::new();
    let offered: Vec<&str> = listed.iter().map(|tool| tool.name.as_str()).collect();
    for name in mount.tools_named() {
        if !offered.contains(&name) && placed.warned.insert(name.to_owned()) {
            let closest = tool_rules::closest(name, offered.iter().copied(), 0.7)
                .map(|closest| format!(" (did you mean `{closest}`?)"));
            tracing::warn!(
                mount = %mount.prefix,
                "the mount's scopes or approval name the tool `{name}`, which its server does \
                 not list{}",
                closest.unwrap_or_default()
            );
        }
    }
    for remote in listed {
        let Some(local) = mount.local_name(&remote.name) else {
            continue;
        };
        match forward::tool(mount, client, callers, local, remote) {
            Ok(tool) => tools.push(tool),
            Err(error) => {
                tracing::warn!(mount = %mount.prefix, %error, "a tool of a mounted MCP server is left out");
            }
        }
    }
    let added: Vec<String> = tools.iter().map(|tool| tool.name().to_owned()).collect();
    // One swap: the tools of before stay listed and callable until the new list is in.
    if let Err(error) = registry.replace_group(&placed.tools, tools) {
        tracing::error!(mount = %mount.prefix, %error, "the tools of a mounted MCP server cannot join the catalog");
        return Err(format!(
            "the tools of the mounted server `{}` cannot join the catalog: {error}",
            mount.prefix
        ));
    }
    placed.tools = added;
    for (name, closest) in registry.expected_of_mount(&mount.prefix) {
        if !placed.warned.insert(name.clone()) {
            continue;
        }
        let closest = closest.map(|closest| format!(" (did you mean `{closest}`?)"));
        tracing::warn!(
            mount = %mount.prefix,
            "a rate limit or a layer is given for the tool `{name}`, which the mounted \
             server does not bring{}",
            closest.unwrap_or_default()
        );
    }
    if let Ok(server) = client.server().await {
        surfaces(mount, client, registry, callers, placed, &server).await;
    }
    Ok(())
}

/// Reads the server's prompts, resources and resource templates into the registry, each
/// named under the mount's prefix (a resource keeps its URI).
async fn surfaces(
    mount: &Arc<Mount>,
    client: &Client,
    registry: &Registry,
    callers: &Arc<Callers>,
    placed: &mut Placed,
    server: &ServerDescription,
) {
    if server.offers("prompts") {
        match client.list_prompts().await {
            Ok(listed) => {
                for name in placed.prompts.drain(..) {
                    registry.remove_prompt(&name);
                }
                for remote in listed {
                    let Some(prompt) = forward::prompt(mount, client, callers, &remote) else {
                        continue;
                    };
                    place_prompt(mount, registry, prompt, &mut placed.prompts);
                }
            }
            Err(error) => {
                tracing::warn!(mount = %mount.prefix, %error, "the prompts of a mounted MCP server cannot be listed");
            }
        }
    }
    if server.offers("resources") {
        let resources = client.list_resources().await;
        let templates = client.list_resource_templates().await;
        match (resources, templates) {
            (Ok(resources), Ok(templates)) => {
                for uri in placed.resources.drain(..) {
                    registry.remove_resource(&uri);
                }
                let listed = resources
                    .iter()
                    .map(|r| (r, "uri"))
                    .chain(templates.iter().map(|t| (t, "uriTemplate")));
                let mut fixed = std::collections::BTreeSet::new();
                for (remote, key) in listed {
                    let Some(resource) = forward::resource(mount, client, callers, remote, key)
                    else {
                        continue;
                    };
                    if key == "uri" {
                        fixed.insert(resource.uri().to_owned());
                    }
                    place_resource(mount, registry, resource, &mut placed.resources);
                }
                if server.capabilities["resources"]["subscribe"] == true {
                    follow_updates(mount, client, &mut placed.subscribed, fixed).await;
                }
            }
            (Err(error), _) | (_, Err(error)) => {
                tracing::warn!(mount = %mount.prefix, %error, "the resources of a mounted MCP server cannot be listed");
            }
        }
    }
}

/// Subscribes on the server to each resource of `fixed` not subscribed to yet, and
/// unsubscribes from those no longer listed: the server then says when one changes, and
/// the mount passes it on. (A template's resources are not known in advance: their
/// updates are not followed.)
async fn follow_updates(
    mount: &Mount,
    client: &Client,
    subscribed: &mut std::collections::BTreeSet<String>,
    fixed: std::collections::BTreeSet<String>,
) {
    for gone in subscribed.difference(&fixed) {
        if let Err(error) = client.unsubscribe(gone).await {
            tracing::debug!(mount = %mount.prefix, %error, uri = %gone, "could not unsubscribe");
        }
    }
    for uri in fixed.difference(subscribed) {
        if let Err(error) = client.subscribe(uri).await {
            tracing::warn!(mount = %mount.prefix, %error, %uri, "the updates of a mounted resource cannot be followed");
        }
    }
    *subscribed = fixed;
}

fn place_prompt(
    mount: &Mount,
    registry: &Registry,
    prompt: DynamicPrompt,
    placed: &mut Vec<String>,
) {
    let name = prompt.name().to_owned();
    match registry.add_prompt(prompt) {
        Ok(()) => placed.push(name),
        Err(error) => {
            tracing::warn!(mount = %mount.prefix, %error, "a prompt of a mounted MCP server is left out");
        }
    }
}

fn place_resource(
    mount: &Mount,
    registry: &Registry,
    resource: DynamicResource,
    placed: &mut Vec<String>,
) {
    let uri = resource.uri().to_owned();
    match registry.add_resource(resource) {
        Ok(()) => placed.push(uri),
        Err(error) => {
            tracing::warn!(mount = %mount.prefix, %error, "a resource of a mounted MCP server is left out");
        }
    }
}
