//! The HTTP connections under Streamable HTTP to one server: plain HTTP/1.1 on connections
//! of this client's own for an `http://` URL, hyper's pooled client for https (rustls with
//! the platform's certificate verifier; HTTP/2 where TLS negotiates it); through reqwest
//! when a proxy is set for the server.
//!
//! Each MCP message is a POST, so here the cost per request counts: reqwest wraps the same
//! hyper client in layers this client does not use (redirects, retries), and its redirect
//! layer parses the URL back from the request's text for each request and again for its
//! response, even with redirects turned off: together about a fifth of a mounted call's
//! instructions over HTTP. Here hyper's client is set up with what reqwest gives it that
//! this client needs (a time limit on opening a connection, TCP keepalive and no Nagle
//! delay, credentials written in the URL sent as Basic authorization) and no more. Proxies
//! are what reqwest does and this does not: a server that the environment's proxy settings
//! (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY`, in either case, read as reqwest
//! reads them) send through a proxy is reached through reqwest and that proxy.

use super::plain::{Plain, PlainBody};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use hyper::{Method, Request, Response, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::{Intercept, Matcher};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// How long an idle connection is kept for the next request: well within the time common
/// servers keep one (5 s for Node's and uvicorn's), since a request sent on a connection
/// just as its server closes it is reset, not served, and a POST cannot be sent again
/// safely (it may be a call that did something). The pool hands out no connection idle
/// longer: the next request opens another.
pub(crate) const IDLE: Duration = Duration::from_secs(3);
/// When an idle connection is first probed, and then how often, and how many unanswered
/// probes end it (reqwest's defaults): a server gone without a word, or a middlebox that
/// dropped the flow, ends a long-lived stream rather than leaving it waiting forever.
const KEEPALIVE: Duration = Duration::from_secs(15);
const KEEPALIVE_PROBES: u32 = 3;

type Pool = hyper_util::client::legacy::Client<TimedConnector, Full<Bytes>>;

/// The connections to one server's endpoint; cheap to clone.
#[derive(Clone)]
pub(crate) struct Connections {
    route: Route,
    uri: Uri,
}

#[derive(Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "one for each server, made once and kept in place"
)]
enum Route {
    /// `uri` without the credentials written in it, which go as `authorization` instead
    /// (unless the request has its own).
    Direct {
        pool: Pool,
        authorization: Option<HeaderValue>,
    },
    /// An `http://` URL: plain HTTP/1.1, on connections of this client's own (see
    /// [`Plain`]), the credentials as for `Direct`.
    Plain {
        connections: Plain,
        authorization: Option<HeaderValue>,
    },
    /// Through the proxy the environment names for the server.
    Proxied(reqwest::Client, reqwest::Url),
}

impl Connections {
    /// The connections to `url`'s server, each opened within `connect_timeout`, through the
    /// proxy the environment names for it if any.
    pub(crate) fn to(url: &reqwest::Url, connect_timeout: Duration) -> Result<Connections, String> {
        Connections::with_proxies(url, connect_timeout, &Matcher::from_system())
    }

    /// The connections to `url`'s server, through the proxy `proxies` names for it if any.
    fn with_proxies(
        url: &reqwest::Url,
        connect_timeout: Duration,
        proxies: &Matcher,
    ) -> Result<Connections, String> {
        // TLS takes the process's default provider: ring, unless the application set one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (uri, authorization) = without_credentials(url)?;
        match proxies.intercept(&uri) {
            Some(proxy) => {
                let mut through = reqwest::Proxy::all(proxy.uri().to_string())
                    .map_err(|error| format!("the proxy {} is no proxy: {error}", proxy.uri()))?;
                if let Some((user, password)) = proxy_credentials(&proxy) {
                    through = through.basic_auth(&user, &password);
                }
                let client = reqwest::Client::builder()
                    .connect_timeout(connect_timeout)
                    .pool_idle_timeout(IDLE)
                    // A redirect could carry the credentials elsewhere.
                    .redirect(reqwest::redirect::Policy::none())
                    .proxy(through)
                    .build()
                    .map_err(|error| format!("cannot make an HTTP client: {error}"))?;
                // reqwest sends the URL's credentials itself.
                Ok(Connections {
                    route: Route::Proxied(client, url.clone()),
                    uri,
                })
            }
            None if uri.scheme() == Some(&hyper::http::uri::Scheme::HTTP) => Ok(Connections {
                route: Route::Plain {
                    connections: Plain::new(uri.clone(), connector(connect_timeout)?)?,
                    authorization,
                },
                uri,
            }),
            None => Ok(Connections {
                route: Route::Direct {
                    pool: pool(connect_timeout)?,
                    authorization,
                },
                uri,
            }),
        }
    }

    /// How many connections of this client's own are idle now (those of hyper-util's pool
    /// and of a proxy are not counted).
    #[cfg(test)]
    pub(crate) fn idle_count(&self) -> usize {
        match &self.route {
            Route::Plain { connections, .. } => connections.idle_count(),
            Route::Direct { .. } | Route::Proxied(..) => 0,
        }
    }

    /// Sends one request and gives the response once its head came; its body is read as it
    /// comes. A failure says what happened, with its causes.
    pub(crate) async fn send(
        &self,
        method: Method,
        mut headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response<ResponseBody>, String> {
        match &self.route {
            Route::Plain {
                connections,
                authorization,
            } => {
                with_url_credentials(&mut headers, authorization.as_ref());
                let response = connections.send(method, headers, body).await?;
                Ok(response.map(ResponseBody::Plain))
            }
            Route::Direct {
                pool,
                authorization,
            } => {
                with_url_credentials(&mut headers, authorization.as_ref());
                let mut request = Request::new(Full::new(body));
                *request.method_mut() = method;
                *request.uri_mut() = self.uri.clone();
                *request.headers_mut() = headers;
                let response = pool.request(request).await.map_err(|error| {
                    // Its own text only says which step failed ("client error
                    // (Connect)"); the causes say what happened.
                    let what = match std::error::Error::source(&error) {
                        Some(cause) => describe(cause),
                        None => error.to_string(),
                    };
                    if error.is_connect() {
                        format!("cannot connect: {what}")
                    } else {
                        what
                    }
                })?;
                Ok(response.map(ResponseBody::Direct))
            }
            Route::Proxied(client, url) => {
                let response = client
                    .request(method, url.clone())
                    .headers(headers)
                    .body(body)
                    .send()
                    .await
                    .map_err(|error| describe(&error))?;
                Ok(Response::from(response).map(ResponseBody::Proxied))
            }
        }
    }
}

/// The credentials written in the URL (`authorization`), as the request's authorization
/// unless it has its own.
fn with_url_credentials(headers: &mut HeaderMap, authorization: Option<&HeaderValue>) {
    if let Some(authorization) = authorization {
        headers
            .entry(AUTHORIZATION)
            .or_insert_with(|| authorization.clone());
    }
}

/// The URI requests to `url` name, without the user and password written in it, and those
/// as the Basic authorization a client sends for such a URL (left in, HTTP/2 would send
/// them in `:authority`).
fn without_credentials(url: &reqwest::Url) -> Result<(Uri, Option<HeaderValue>), String> {
    let mut bare = url.clone();
    // Only URLs that cannot have credentials refuse these, and such a URL has none.
    let _ = bare.set_username("");
    let _ = bare.set_password(None);
    // Errors name the URL without its credentials.
    let decode = |text: &str| {
        percent_encoding::percent_decode_str(text)
            .decode_utf8()
            .map(|text| text.into_owned())
            .map_err(|_| format!("the credentials in the URL of {bare} are not UTF-8"))
    };
    let authorization = if url.username().is_empty() && url.password().is_none() {
        None
    } else {
        use base64::Engine as _;
        let pair = format!(
            "{}:{}",
            decode(url.username())?,
            decode(url.password().unwrap_or_default())?
        );
        let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
        // Base64 is always a valid header value.
        let mut value = HeaderValue::try_from(format!("Basic {encoded}")).map_err(|error| {
            format!("the credentials in the URL of {bare} cannot be sent: {error}")
        })?;
        value.set_sensitive(true);
        Some(value)
    };
    let uri = bare
        .as_str()
        .parse()
        .map_err(|error| format!("{bare} is no URL to send requests to: {error}"))?;
    Ok((uri, authorization))
}

/// The credentials written in a proxy's URL. hyper's matcher gives those of an HTTP proxy
/// only as the `Proxy-Authorization` value they make; reqwest sends that header for plain
/// HTTP requests only when the credentials are in the proxy's URL it was given, so they are
/// read back from it.
fn proxy_credentials(proxy: &Intercept) -> Option<(String, String)> {
    if let Some((user, password)) = proxy.raw_auth() {
        return Some((user.to_owned(), password.to_owned()));
    }
    use base64::Engine as _;
    let header = proxy.basic_auth()?.to_str().ok()?;
    let encoded = header.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let (user, password) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

/// hyper's pooled client: connections opened within `connect_timeout` (the name looked up,
/// TCP and TLS), kept alive, reused while idle for at most [`IDLE`].
fn pool(connect_timeout: Duration) -> Result<Pool, String> {
    Ok(
        hyper_util::client::legacy::Client::builder(TokioExecutor::new())
            .pool_idle_timeout(IDLE)
            .pool_timer(TokioTimer::new())
            .timer(TokioTimer::new())
            .build(connector(connect_timeout)?),
    )
}

/// What opens a connection (TCP, then TLS for an https URL) within `connect_timeout`: the
/// name looked up, TCP kept alive and without Nagle's delay.
pub(crate) fn connector(connect_timeout: Duration) -> Result<TimedConnector, String> {
    let mut tcp = HttpConnector::new();
    // https URLs are the TLS layer's to open: this one only connects.
    tcp.enforce_http(false);
    // Messages are small and each waits for its answer: no Nagle delay.
    tcp.set_nodelay(true);
    tcp.set_keepalive(Some(KEEPALIVE));
    tcp.set_keepalive_interval(Some(KEEPALIVE));
    tcp.set_keepalive_retries(Some(KEEPALIVE_PROBES));
    tcp.set_connect_timeout(Some(connect_timeout));
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let tls = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_platform_verifier(provider)
        .map_err(|error| format!("cannot set up TLS: {error}"))?
        .https_or_http()
        .enable_all_versions()
        .wrap_connector(tcp);
    Ok(TimedConnector {
        inner: tls,
        limit: connect_timeout,
    })
}

/// The TLS connector with a time limit on the whole of opening a connection: the TCP
/// connector's own limit covers its connect only, not the name's lookup or a TLS handshake
/// a server lets stall.
#[derive(Clone)]
pub(crate) struct TimedConnector {
    inner: HttpsConnector<HttpConnector>,
    limit: Duration,
}

type Stream = <HttpsConnector<HttpConnector> as tower::Service<Uri>>::Response;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl tower::Service<Uri> for TimedConnector {
    type Response = Stream;
    type Error = BoxError;
    // Boxed: a connection is opened rarely, and the time limit's timer cannot move.
    type Future = Pin<Box<dyn Future<Output = Result<Stream, BoxError>> + Send>>;

    fn poll_ready(&mut self, context: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let (opening, limit) = (self.inner.call(uri), self.limit);
        Box::pin(async move {
            match tokio::time::timeout(limit, opening).await {
                Ok(opened) => opened,
                Err(_) => Err(format!("no connection within {} s", limit.as_secs_f64()).into()),
            }
        })
    }
}

/// A response's body, read as it comes, whichever way it came.
pub(crate) enum ResponseBody {
    Plain(PlainBody),
    Direct(Incoming),
    Proxied(reqwest::Body),
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = String;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, String>>> {
        match self.get_mut() {
            ResponseBody::Plain(body) => Pin::new(body)
                .poll_frame(context)
                .map_err(|error| describe(&error)),
            ResponseBody::Direct(body) => Pin::new(body)
                .poll_frame(context)
                .map_err(|error| describe(&error)),
            ResponseBody::Proxied(body) => Pin::new(body)
                .poll_frame(context)
                .map_err(|error| describe(&error)),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Plain(body) => body.is_end_stream(),
            ResponseBody::Direct(body) => body.is_end_stream(),
            ResponseBody::Proxied(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Plain(body) => body.size_hint(),
            ResponseBody::Direct(body) => body.size_hint(),
            ResponseBody::Proxied(body) => body.size_hint(),
        }
    }
}

/// An error with its causes, which hyper and reqwest keep apart.
pub(crate) fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // Some layers end their own message with their cause's.
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// No proxy for any server.
    fn no_proxies() -> Matcher {
        Matcher::builder().build()
    }

    /// Accepts one connection and gives what came first; answers `reply` if given, else
    /// closes the connection unanswered.
    async fn first_bytes(listener: TcpListener, reply: Option<&'static str>) -> Vec<u8> {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut buffer = vec![0; 4096];
        // A TLS hello comes in one read; an HTTP head ends with an empty line (its body
        // may come with it).
        loop {
            let read = stream.read(&mut buffer).await.unwrap();
            head.extend_from_slice(&buffer[..read]);
            let head_ended = memchr::memmem::find(&head, b"\r\n\r\n").is_some();
            if read == 0 || head.first() == Some(&0x16) || head_ended {
                break;
            }
        }
        if let Some(reply) = reply {
            stream.write_all(reply.as_bytes()).await.unwrap();
        }
        head
    }

    const ACCEPTED: &str = "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";

    /// Sends one POST to the URL, through the proxy settings, that `route` makes of a
    /// listener's port, and gives what the listener read; its answer is a 202.
    async fn head_of_one_post(
        route: impl FnOnce(u16) -> (String, Matcher),
        headers: HeaderMap,
    ) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let head = tokio::spawn(first_bytes(listener, Some(ACCEPTED)));
        let (url, proxies) = route(port);
        let url = reqwest::Url::parse(&url).unwrap();
        let connections =
            Connections::with_proxies(&url, Duration::from_secs(5), &proxies).unwrap();
        let response = connections
            .send(Method::POST, headers, Bytes::from_static(b"{}"))
            .await
            .unwrap();
        assert_eq!(response.status(), 202);
        String::from_utf8(head.await.unwrap()).unwrap()
    }

    /// The value of header `name` in a request's head, if it came exactly once.
    fn only_header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
        let mut values = head.lines().filter_map(|line| {
            let (line_name, value) = line.split_once(':')?;
            line_name.eq_ignore_ascii_case(name).then(|| value.trim())
        });
        let first = values.next()?;
        values.next().is_none().then_some(first)
    }

    /// An https URL is opened with TLS (the connector is not the plain one, which would
    /// refuse the scheme), offering HTTP/2 and HTTP/1.1.
    #[tokio::test]
    async fn an_https_url_is_opened_with_tls_offering_both_http_versions() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hello = tokio::spawn(first_bytes(listener, None));
        let url = reqwest::Url::parse(&format!("https://127.0.0.1:{port}/mcp")).unwrap();
        let connections =
            Connections::with_proxies(&url, Duration::from_secs(5), &no_proxies()).unwrap();
        let sent = connections
            .send(Method::POST, HeaderMap::new(), Bytes::from_static(b"{}"))
            .await;
        let hello = hello.await.unwrap();
        assert_eq!(
            hello.first(),
            Some(&0x16),
            "a TLS handshake record: {hello:?}"
        );
        assert!(memchr::memmem::find(&hello, b"\x02h2").is_some());
        assert!(memchr::memmem::find(&hello, b"\x08http/1.1").is_some());
        assert!(sent.is_err(), "no TLS server answered");
    }

    /// With no proxy for it, a server is reached directly: the request names only the path.
    #[tokio::test]
    async fn a_server_without_a_proxy_is_reached_directly() {
        let head = head_of_one_post(
            |port| (format!("http://127.0.0.1:{port}/mcp"), no_proxies()),
            HeaderMap::new(),
        )
        .await;
        assert!(head.starts_with("POST /mcp HTTP/1.1\r\n"), "{head}");
    }

    /// A server the proxy settings send through a proxy is reached through it, with the
    /// proxy's credentials; the proxy answers for the server.
    #[tokio::test]
    async fn a_server_behind_a_proxy_is_reached_through_it_with_its_credentials() {
        // The listener is the proxy; nothing listens at the server's own address, so only
        // the proxy can answer.
        let head = head_of_one_post(
            |port| {
                let proxies = Matcher::builder()
                    .http(format!("http://someone:secret@127.0.0.1:{port}"))
                    .build();
                ("http://mcp.invalid:8080/mcp".to_owned(), proxies)
            },
            HeaderMap::new(),
        )
        .await;
        assert!(
            head.starts_with("POST http://mcp.invalid:8080/mcp HTTP/1.1\r\n"),
            "{head}"
        );
        // someone:secret
        assert_eq!(
            only_header(&head, "proxy-authorization"),
            Some("Basic c29tZW9uZTpzZWNyZXQ="),
            "{head}"
        );
    }

    /// A server the proxy settings leave out (`NO_PROXY`) is reached directly.
    #[tokio::test]
    async fn a_server_the_proxy_settings_leave_out_is_reached_directly() {
        let head = head_of_one_post(
            |port| {
                // A proxy nothing listens at: using it would fail.
                let proxies = Matcher::builder()
                    .all("http://proxy.invalid:3128")
                    .no("127.0.0.1")
                    .build();
                (format!("http://127.0.0.1:{port}/mcp"), proxies)
            },
            HeaderMap::new(),
        )
        .await;
        assert!(head.starts_with("POST /mcp HTTP/1.1\r\n"), "{head}");
    }

    /// The credentials written in a server's URL go as Basic authorization, not in the
    /// request's target or `host`; a request's own authorization goes instead.
    #[tokio::test]
    async fn credentials_in_the_url_go_as_basic_authorization() {
        let with_credentials = |credentials: &'static str| {
            move |port| {
                let url = format!("http://{credentials}@127.0.0.1:{port}/mcp");
                (url, no_proxies())
            }
        };
        let head =
            head_of_one_post(with_credentials("some%20one:se%3Acret"), HeaderMap::new()).await;
        assert!(head.starts_with("POST /mcp HTTP/1.1\r\n"), "{head}");
        assert!(!head.contains('@'), "{head}");
        // "some one:se:cret"
        assert_eq!(
            only_header(&head, "authorization"),
            Some("Basic c29tZSBvbmU6c2U6Y3JldA=="),
            "{head}"
        );

        let mut own = HeaderMap::new();
        own.insert(AUTHORIZATION, HeaderValue::from_static("Bearer a-token"));
        let head = head_of_one_post(with_credentials("someone:secret"), own).await;
        assert_eq!(
            only_header(&head, "authorization"),
            Some("Bearer a-token"),
            "{head}"
        );
    }

    /// Opening a connection is given up when a server takes it and then lets the TLS
    /// handshake stall: the time limit covers all of opening, not only TCP's connect.
    #[tokio::test]
    async fn a_stalled_tls_handshake_ends_at_the_connect_time_limit() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        // Takes the connection and its hello, and answers nothing while the client waits.
        let silent = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            std::future::pending::<()>().await;
            drop(stream);
        });
        let url = reqwest::Url::parse(&format!("https://127.0.0.1:{port}/mcp")).unwrap();
        let connections =
            Connections::with_proxies(&url, Duration::from_secs(1), &no_proxies()).unwrap();
        // Far beyond the limit: without it, opening would wait for ever.
        let sent = tokio::time::timeout(
            Duration::from_secs(60),
            connections.send(Method::POST, HeaderMap::new(), Bytes::new()),
        )
        .await
        .expect("opening the connection was given up at its time limit");
        let Err(error) = sent else {
            panic!("no handshake came, yet a response did");
        };
        assert!(error.contains("no connection within 1 s"), "{error}");
        silent.abort();
    }

    /// An error reads with its causes, each once.
    #[test]
    fn an_error_is_described_with_its_causes_each_once() {
        #[derive(Debug)]
        struct Layer(&'static str, std::io::Error);
        impl std::fmt::Display for Layer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Layer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.1)
            }
        }
        let refused = || std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let apart = Layer("client error (Connect)", refused());
        assert_eq!(
            describe(&apart),
            format!("client error (Connect): {}", refused())
        );
        let repeated = Layer("connect failed: connection refused", refused());
        assert_eq!(describe(&repeated), "connect failed: connection refused");
    }
}
