//! Agreeing on an era with a server, as the specification says: ask at 2026-07-28 first
//! (`server/discover`); a server that answers speaks it; one whose error is one of that
//! era's (a version it does not take, with the ones it does) is asked again at one of those;
//! any other refusal means a server of the handshake era, spoken to with `initialize`.

use super::error::ClientError;
use super::handler;
use super::link::Link;
use super::session::{RequestOptions, ServerSide, Session};
use super::wire::Speaker;
use super::{ClientBuilder, Target};
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::code;
use crate::mcp::{HANDSHAKE_VERSIONS, STATELESS_VERSIONS};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// How long a server of the handshake era may take to refuse `server/discover` over stdio
/// (some say nothing at all to a method they do not know).
const DISCOVER_PATIENCE: Duration = Duration::from_secs(10);
/// How long the session waits for the server to open its stream of what it says on its
/// own (the GET stream, or the listen stream) before it goes on.
const LISTEN_PATIENCE: Duration = Duration::from_secs(10);

/// Connects to `target` and agrees on an era: the session, ready for requests.
pub(super) async fn connect(
    target: &Target,
    options: &ClientBuilder,
) -> Result<Arc<Session>, ClientError> {
    let shown = target.shown();
    let link = match target {
        Target::Command(command) => {
            let stdio = super::stdio::Stdio::spawn(
                command,
                &options.environment,
                options.max_message_bytes,
                &shown,
            )
            .map_err(|reason| ClientError::TransportDown {
                server: shown.clone(),
                reason,
            })?;
            Link::Stdio(Box::new(stdio))
        }
        Target::Http(url) => {
            let http = super::http::Http::new(
                url,
                options.credentials.clone(),
                options.max_message_bytes,
                options.connect_timeout,
            )
            .map_err(|reason| ClientError::TransportDown {
                server: shown.clone(),
                reason,
            })?;
            Link::Http(http)
        }
    };
    let capabilities = handler::capabilities(&*options.handler);
    let mut capabilities_2026 = capabilities.clone();
    capabilities_2026["extensions"] = json!({super::tasks::EXTENSION: {}});
    let speaker = Speaker::new(
        options.era.unwrap_or(Era::PerRequest),
        match options.era {
            Some(Era::Handshake) => HANDSHAKE_VERSIONS[0].to_owned(),
            _ => STATELESS_VERSIONS[0].to_owned(),
        },
        &json!({"name": options.name, "version": options.version}),
        capabilities,
        &capabilities_2026,
        options.log_level.clone(),
    );
    let session = Session::new(
        shown,
        link,
        speaker,
        Arc::clone(&options.handler),
        options.timeout,
    );
    session.link.start(&session);
    let agreed = match options.era {
        Some(Era::Handshake) => initialize(&session).await,
        Some(Era::PerRequest) => discover(&session, true).await.map(|_| ()),
        None => match discover(&session, false).await? {
            true => Ok(()),
            false => initialize(&session).await,
        },
    };
    match agreed {
        Ok(()) => {
            if session.era() == Era::PerRequest {
                // As with the handshake era's GET stream: what the server says on its own
                // from now on reaches the client, once its listen stream is acknowledged.
                if let Some(opened) = super::listen::start(&session) {
                    let _ =
                        tokio::time::timeout(session.timeout.min(LISTEN_PATIENCE), opened).await;
                }
            }
            Ok(session)
        }
        Err(error) => {
            session.link.close(&session).await;
            // A server that wrote something else than messages and never answered is most
            // likely no MCP server (or one that logs on its output): say what it wrote.
            match (error, session.first_not_understood()) {
                (ClientError::TimedOut { method, after }, Some(written)) => {
                    Err(ClientError::protocol(format!(
                        "no answer to {method} within {}, and what it wrote is no JSON-RPC \
                         message: {written:?} (is it an MCP server, and does it log on its \
                         standard output?)",
                        crate::catalog::time::show_duration(after)
                    )))
                }
                (error, _) => Err(error),
            }
        }
    }
}

/// Asks `server/discover` at 2026-07-28: `true` once agreed; `false` when the server is
/// one of the handshake era (unless `strict`, when that is an error).
async fn discover(session: &Arc<Session>, strict: bool) -> Result<bool, ClientError> {
    for _ in 0..2 {
        let options = RequestOptions {
            timeout: Some(DISCOVER_PATIENCE.min(session.timeout)),
            ..RequestOptions::default()
        };
        let asked = session
            .request("server/discover", &json!({}), options)
            .await;
        let error = match asked {
            Ok(result) => {
                let supported = strings(&result["supportedVersions"]);
                let version = crate::sync::read(&session.speaker).version().to_owned();
                if !supported.is_empty() && !supported.contains(&version) {
                    return Err(ClientError::UnsupportedVersion { offered: supported });
                }
                agreed_with(session, &result, result.get("serverInfo"));
                return Ok(true);
            }
            Err(error) => error,
        };
        match &error {
            ClientError::Server { code, data, .. }
                if *code == code::UNSUPPORTED_PROTOCOL_VERSION =>
            {
                let offered = data
                    .as_ref()
                    .map(|d| strings(&d["supported"]))
                    .unwrap_or_default();
                match offered
                    .iter()
                    .find(|v| STATELESS_VERSIONS.contains(&v.as_str()))
                {
                    // Asked again at a version it takes (the same, if the refusal was a slip).
                    Some(version) => {
                        crate::sync::write(&session.speaker)
                            .speak(Era::PerRequest, version.clone());
                        continue;
                    }
                    None if offered
                        .iter()
                        .any(|v| HANDSHAKE_VERSIONS.contains(&v.as_str()))
                        && !strict =>
                    {
                        return Ok(false)
                    }
                    None => return Err(ClientError::UnsupportedVersion { offered }),
                }
            }
            // The other errors of 2026-07-28 come from a server that speaks it.
            ClientError::Server { code, .. }
                if *code == code::HEADER_MISMATCH || *code == code::MISSING_CAPABILITY =>
            {
                return Err(error)
            }
            ClientError::TransportDown { .. } | ClientError::Unauthorized { .. } => {
                return Err(error)
            }
            _ if strict => return Err(error),
            // Any other refusal (a method it does not know, a request it cannot read, a
            // session it expected) is a server of the handshake era.
            _ => return Ok(false),
        }
    }
    Err(ClientError::protocol(
        "the server refused the version it said it takes",
    ))
}

/// Opens a session of the handshake era: `initialize`, then `notifications/initialized`;
/// over HTTP, the stream of what the server sends on its own.
async fn initialize(session: &Arc<Session>) -> Result<(), ClientError> {
    let params = {
        let mut speaker = crate::sync::write(&session.speaker);
        speaker.speak(Era::Handshake, HANDSHAKE_VERSIONS[0].to_owned());
        speaker.initialize_params()
    };
    let result = session
        .request("initialize", &params, RequestOptions::default())
        .await?;
    let version = result["protocolVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if !HANDSHAKE_VERSIONS.contains(&version.as_str()) {
        return Err(ClientError::UnsupportedVersion {
            offered: vec![version],
        });
    }
    crate::sync::write(&session.speaker).speak(Era::Handshake, version);
    agreed_with(session, &result, result.get("serverInfo"));
    session.notify("notifications/initialized", None).await?;
    let level = crate::sync::read(&session.speaker)
        .log_level()
        .map(str::to_owned);
    let logs = result["capabilities"].get("logging").is_some();
    if let (Some(level), true) = (level, logs) {
        let asked = json!({"level": level});
        if let Err(error) = session
            .request("logging/setLevel", &asked, RequestOptions::default())
            .await
        {
            tracing::debug!(%error, "the server did not take the log level asked for");
        }
    }
    if let Link::Http(http) = &session.link {
        // What the server asks outside any request comes on this stream: it is open (or
        // refused) before the first request, so nothing sent meanwhile is lost.
        let opened = http.listen(session);
        let _ = tokio::time::timeout(session.timeout.min(LISTEN_PATIENCE), opened).await;
    }
    Ok(())
}

/// Keeps what the server said of itself.
fn agreed_with(session: &Session, result: &Value, info: Option<&Value>) {
    let info = info
        .or_else(|| result["_meta"].get(crate::mcp::SERVER_INFO_META))
        .cloned()
        .unwrap_or(Value::Null);
    *crate::sync::write(&session.side) = ServerSide {
        capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
        info,
        instructions: result["instructions"].as_str().map(str::to_owned),
    };
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}
