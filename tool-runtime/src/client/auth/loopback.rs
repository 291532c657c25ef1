//! How a person authorizes the client: they open the authorization server's page (in
//! their browser), sign in and consent, and the server redirects back to the client with
//! a code. [`Loopback`] receives that redirect on a port of 127.0.0.1 of its own (as RFC
//! 8252 says a native app does); an [`Authorizer`] of one's own may do otherwise.

use crate::client::handler::Answer;
use http_body_util::Full;
use hyper::body::Bytes;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// Has a person authorize the client at an authorization server.
pub trait Authorizer: Send + Sync {
    /// Where the authorization server sends the person back (registered with it, and named
    /// in each authorization request).
    fn redirect_uri(&self) -> Answer<'_, String>;

    /// Has the person authorize at `url` (the authorization request); gives the URL they
    /// were sent back to, with its `code`, `state` and `iss`.
    fn authorize<'a>(&'a self, url: &'a str) -> Answer<'a, String>;
}

/// What opens the authorization page: by default the URL is written on stderr for the
/// person to open.
type Opener = Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Receives the authorization server's redirect on `http://127.0.0.1:PORT/callback`, a port
/// it binds when first asked.
///
/// ```no_run
/// use tool_runtime::client::auth::Loopback;
/// // Open the page with the system's browser rather than printing its URL.
/// let loopback = Loopback::new().open_with(|url| async move {
///     let _ = std::process::Command::new("xdg-open").arg(url).status();
/// });
/// # let _ = loopback;
/// ```
#[derive(Clone)]
pub struct Loopback {
    port: u16,
    wait: Duration,
    open: Opener,
    bound: Arc<tokio::sync::Mutex<Option<Bound>>>,
}

/// The listener, once bound, and the redirects it received.
struct Bound {
    address: SocketAddr,
    arrived: mpsc::UnboundedReceiver<String>,
}

impl std::fmt::Debug for Loopback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loopback")
            .field("port", &self.port)
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

impl Default for Loopback {
    fn default() -> Self {
        Loopback::new()
    }
}

impl Loopback {
    /// A loopback receiver on a port the system picks, waiting five minutes for the person.
    pub fn new() -> Loopback {
        Loopback {
            port: 0,
            wait: Duration::from_secs(300),
            open: Arc::new(|url| {
                Box::pin(async move {
                    eprintln!("Open this page to authorize the client:\n  {url}");
                })
            }),
            bound: Arc::default(),
        }
    }

    /// Receives on `port` (one registered with the authorization server beforehand).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Waits at most `wait` for the person to come back.
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// Opens the authorization page with `open` (given its URL).
    pub fn open_with<F, Fut>(mut self, open: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.open = Arc::new(move |url| Box::pin(open(url)));
        self
    }

    /// The bound listener's address, binding it first.
    async fn address(&self) -> Result<SocketAddr, String> {
        let mut bound = self.bound.lock().await;
        if let Some(bound) = bound.as_ref() {
            return Ok(bound.address);
        }
        let listener = TcpListener::bind(("127.0.0.1", self.port))
            .await
            .map_err(|error| format!("cannot receive the authorization on 127.0.0.1: {error}"))?;
        let address = listener
            .local_addr()
            .map_err(|error| format!("the loopback listener has no address: {error}"))?;
        let (arrived_tx, arrived) = mpsc::unbounded_channel();
        tokio::spawn(serve(listener, arrived_tx));
        *bound = Some(Bound { address, arrived });
        Ok(address)
    }
}

impl Authorizer for Loopback {
    fn redirect_uri(&self) -> Answer<'_, String> {
        Box::pin(async move {
            let address = self.address().await?;
            Ok(format!("http://{address}/callback"))
        })
    }

    fn authorize<'a>(&'a self, url: &'a str) -> Answer<'a, String> {
        Box::pin(async move {
            let address = self.address().await?;
            let mut bound = self.bound.lock().await;
            let bound = bound.as_mut().expect("bound above");
            // A redirect left from an earlier attempt is not this one's.
            while bound.arrived.try_recv().is_ok() {}
            (self.open)(url.to_owned()).await;
            match tokio::time::timeout(self.wait, bound.arrived.recv()).await {
                Ok(Some(path)) => Ok(format!("http://{address}{path}")),
                Ok(None) => Err("the loopback listener stopped".to_owned()),
                Err(_) => Err(format!(
                    "nobody came back from the authorization page within {} s",
                    self.wait.as_secs()
                )),
            }
        })
    }
}

/// Answers every request on `listener`: a request to `/callback` is the redirect, passed
/// on; anything else (a browser's favicon) is not found.
async fn serve(listener: TcpListener, arrived: mpsc::UnboundedSender<String>) {
    let arrived = Arc::new(Mutex::new(arrived));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let arrived = Arc::clone(&arrived);
        let service =
            hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let arrived = Arc::clone(&arrived);
                async move {
                    let uri = request.uri();
                    let (status, text) = if uri.path() == "/callback" {
                        let path = uri
                            .path_and_query()
                            .map_or("/callback".to_owned(), |p| p.as_str().to_owned());
                        let _ = crate::sync::lock(&arrived).send(path);
                        (200, "The client is authorized: you may close this page.")
                    } else {
                        (404, "Not found.")
                    };
                    let response = hyper::Response::builder()
                        .status(status)
                        .header("content-type", "text/plain; charset=utf-8")
                        .body(Full::new(Bytes::from_static(text.as_bytes())))
                        .expect("a valid response");
                    Ok::<_, std::convert::Infallible>(response)
                }
            });
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}
