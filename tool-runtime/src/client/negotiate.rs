//! Agreeing on an era with a server, as the specification says: ask at 2026-07-28 first
//! (`server/discover`); a server that answers speaks it; one whose error is one of that
//! era's (a version it does not take, with the ones it does) is asked again at one of those;
//! any other refusal means a server of the handshake era, spoken to with `initialize`. A
//! question left unanswered a while has `initialize` sent beside it, and the first answer
//! that agrees decides.

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

/// How long `server/discover` goes unanswered before `initialize` is sent beside it: a
/// server of the handshake era may say nothing to a method it does not know, and one of
/// 2026-07-28 may be slow to start (an interpreter loading on a busy machine), so both
/// questions are then left open and the first answer that agrees decides.
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
        Some(Era::PerRequest) => agree(&session, true).await,
        None => agree(&session, false).await,
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

/// What one `server/discover` showed of the server.
enum Discovered {
    /// It speaks 2026-07-28, at the version asked: what it said of itself is kept.
    Agreed,
    /// It speaks 2026-07-28, but not at the version asked: at this one, which it named.
    AskAgainAt(String),
    /// It is a server of the handshake era; the error is what a client that speaks only
    /// 2026-07-28 reports.
    HandshakeEra(ClientError),
}

/// Agrees on an era, asking at 2026-07-28 first: with a server of the handshake era too,
/// unless `strict`.
async fn agree(session: &Arc<Session>, strict: bool) -> Result<(), ClientError> {
    let mut version = crate::sync::read(&session.speaker).version().to_owned();
    let patience = DISCOVER_PATIENCE.min(session.timeout);
    // Once sent, `initialize` is not sent again, whatever discover shows later.
    let mut initialize_sent = false;
    // Asked again at most once: a server that refuses the version it named is broken.
    for again in [false, true] {
        let answer = if strict || again {
            // Only 2026-07-28 is spoken (or the server answered it before): nothing else
            // to ask meanwhile, so it is waited for as any request is.
            discover(session, version.clone(), session.timeout).await
        } else {
            // Open for as long as an `initialize` sent beside it may take.
            let mut asked = Box::pin(discover(
                session,
                version.clone(),
                patience.saturating_add(session.timeout),
            ));
            tokio::select! {
                answer = &mut asked => answer,
                () = tokio::time::sleep(patience) => {
                    initialize_sent = true;
                    match initialize_unless_discovered(session, asked).await? {
                        Some(discovered) => Ok(discovered),
                        None => return Ok(()),
                    }
                }
            }
        };
        match answer? {
            Discovered::Agreed => {
                crate::sync::write(&session.speaker).speak(Era::PerRequest, version);
                return Ok(());
            }
            Discovered::AskAgainAt(offered) => {
                crate::sync::write(&session.speaker).speak(Era::PerRequest, offered.clone());
                version = offered;
            }
            Discovered::HandshakeEra(error) if strict || initialize_sent => return Err(error),
            Discovered::HandshakeEra(_) => return initialize(session).await,
        }
    }
    Err(ClientError::protocol(
        "the server refused the version it said it takes",
    ))
}

/// `server/discover` (`asked`) went unanswered past its patience: `initialize` is sent
/// beside it, and the first answer that agrees decides. A server that speaks 2026-07-28
/// but was slow answers the first and refuses the second; a server of the handshake era
/// that says nothing to methods it does not know answers only the second. `None` once the
/// handshake era's session is open; else what discover showed (not of the handshake era),
/// for the caller to go on with at 2026-07-28.
async fn initialize_unless_discovered<F>(
    session: &Arc<Session>,
    mut asked: std::pin::Pin<Box<F>>,
) -> Result<Option<Discovered>, ClientError>
where
    F: std::future::Future<Output = Result<Discovered, ClientError>>,
{
    let initializing = ask_initialize(session);
    tokio::pin!(initializing);
    let initialized = tokio::select! {
        // The server's own order: the question asked first, answered first, decides.
        biased;
        discovered = &mut asked => match discovered? {
            // A refusal, late: `initialize` decides.
            Discovered::HandshakeEra(_) => initializing.await,
            discovered => {
                // The session `initialize` may have opened meanwhile (its exchange is not
                // polled again) is no longer wanted: never named from now on, and the
                // server asked to end it.
                session.link.forget_session(session, HANDSHAKE_VERSIONS[0]);
                return Ok(Some(discovered));
            }
        },
        initialized = &mut initializing => match initialized {
            Ok(result) => Ok(result),
            // Refused (most likely as the connection already serves 2026-07-28): the
            // answer to the first question decides, unless it says the same.
            Err(refused) => match asked.as_mut().await? {
                Discovered::HandshakeEra(_) => Err(refused),
                discovered => {
                    session.link.forget_session(session, HANDSHAKE_VERSIONS[0]);
                    return Ok(Some(discovered));
                }
            },
        },
    };
    // Answered in the handshake era (agreed, or refused for good): the first question is
    // not waited for any more.
    drop(asked);
    open_handshake(session, initialized?).await?;
    Ok(None)
}

/// Asks `server/discover` at `version` (the version the speaker is set to), waiting up to
/// `limit`, and says what the answer shows.
async fn discover(
    session: &Arc<Session>,
    version: String,
    limit: Duration,
) -> Result<Discovered, ClientError> {
    let options = RequestOptions {
        timeout: Some(limit),
        ..RequestOptions::default()
    };
    let error = match session
        .request("server/discover", &json!({}), options)
        .await
    {
        Ok(result) => {
            let supported = strings(&result["supportedVersions"]);
            if !supported.is_empty() && !supported.contains(&version) {
                return Err(ClientError::UnsupportedVersion { offered: supported });
            }
            agreed_with(session, &result, result.get("serverInfo"));
            return Ok(Discovered::Agreed);
        }
        Err(error) => error,
    };
    match &error {
        ClientError::Server { code, data, .. } if *code == code::UNSUPPORTED_PROTOCOL_VERSION => {
            let offered = data
                .as_ref()
                .map(|d| strings(&d["supported"]))
                .unwrap_or_default();
            match offered
                .iter()
                .find(|v| STATELESS_VERSIONS.contains(&v.as_str()))
            {
                // Asked again at a version it takes (the same, if the refusal was a slip).
                Some(version) => Ok(Discovered::AskAgainAt(version.clone())),
                None if offered
                    .iter()
                    .any(|v| HANDSHAKE_VERSIONS.contains(&v.as_str())) =>
                {
                    Ok(Discovered::HandshakeEra(ClientError::UnsupportedVersion {
                        offered,
                    }))
                }
                None => Err(ClientError::UnsupportedVersion { offered }),
            }
        }
        // The other errors of 2026-07-28 come from a server that speaks it.
        ClientError::Server { code, .. }
            if *code == code::HEADER_MISMATCH || *code == code::MISSING_CAPABILITY =>
        {
            Err(error)
        }
        ClientError::TransportDown { .. } | ClientError::Unauthorized { .. } => Err(error),
        // Any other refusal (a method it does not know, a request it cannot read, a
        // session it expected) is a server of the handshake era.
        _ => Ok(Discovered::HandshakeEra(error)),
    }
}

/// Opens a session of the handshake era: `initialize`, then `notifications/initialized`;
/// over HTTP, the stream of what the server sends on its own.
async fn initialize(session: &Arc<Session>) -> Result<(), ClientError> {
    let result = ask_initialize(session).await?;
    open_handshake(session, result).await
}

/// Sends `initialize` (the speaker now of the handshake era): the server's answer, once it
/// names a version this client speaks.
async fn ask_initialize(session: &Arc<Session>) -> Result<Value, ClientError> {
    let params = {
        let mut speaker = crate::sync::write(&session.speaker);
        speaker.speak(Era::Handshake, HANDSHAKE_VERSIONS[0].to_owned());
        speaker.initialize_params()
    };
    let options = RequestOptions {
        // The protocol has clients never cancel it, even when it is no longer wanted.
        never_cancelled: true,
        ..RequestOptions::default()
    };
    let result = session.request("initialize", &params, options).await?;
    let version = result["protocolVersion"].as_str().unwrap_or_default();
    if !HANDSHAKE_VERSIONS.contains(&version) {
        return Err(ClientError::UnsupportedVersion {
            offered: vec![version.to_owned()],
        });
    }
    Ok(result)
}

/// Opens the session of the handshake era that `initialize`'s answer `result` agreed to.
async fn open_handshake(session: &Arc<Session>, result: Value) -> Result<(), ClientError> {
    let version = result["protocolVersion"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
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
