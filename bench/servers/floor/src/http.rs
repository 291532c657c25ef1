//! The floor over HTTP: hyper's HTTP/1.1 server on a current-thread tokio runtime, one task
//! per connection, each POST's body answered by the same code as stdio. No routing, no
//! sessions, no headers checked: what any framework built on hyper pays at least.

use std::convert::Infallible;
use std::io;
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

pub fn serve(address: &str, tools_list: String) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let tools_list: Arc<str> = tools_list.into();
    runtime.block_on(async move {
        let listener = TcpListener::bind(address).await?;
        loop {
            let (stream, _) = listener.accept().await?;
            stream.set_nodelay(true)?;
            let tools_list = Arc::clone(&tools_list);
            tokio::spawn(async move {
                let service = service_fn(move |request| respond(request, Arc::clone(&tools_list)));
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

async fn respond(
    request: Request<Incoming>,
    tools_list: Arc<str>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
    };
    let mut out = Vec::with_capacity(256);
    Ok(match super::answer(&body, &tools_list, &mut out) {
        Ok(true) => Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(out)))
            .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR)),
        _ => status(StatusCode::ACCEPTED),
    })
}

/// An empty answer of `code`.
pub(crate) fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}
