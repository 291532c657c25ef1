//! A TCP forwarder put in front of a server that keeps what each connection sent, to see
//! how a client uses its connections (how many it opens, what travels on each).

use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What one connection sent towards the server, as it came.
type Sent = Arc<Mutex<Vec<u8>>>;

/// The forwarder: connect to [`Tap::port`] on 127.0.0.1 to reach the server behind it.
/// It runs in tasks of the runtime it was made on, and stops with it.
pub struct Tap {
    /// Where it listens.
    pub port: u16,
    connections: Arc<Mutex<Vec<Sent>>>,
}

impl Tap {
    /// A forwarder to the server listening on 127.0.0.1:`server`.
    pub async fn before(server: u16) -> Tap {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port for the tap");
        let port = listener.local_addr().expect("the tap's address").port();
        let connections = Arc::new(Mutex::new(Vec::new()));
        let opened = Arc::clone(&connections);
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                // As the client and server set their own: what is relayed goes at once.
                let _ = inbound.set_nodelay(true);
                let sent = Sent::default();
                opened.lock().unwrap().push(Arc::clone(&sent));
                tokio::spawn(forward(inbound, server, sent));
            }
        });
        Tap { port, connections }
    }

    /// What each connection opened so far sent towards the server, in the order they were
    /// opened (bytes that are not UTF-8 replaced).
    pub fn connections(&self) -> Vec<String> {
        self.connections
            .lock()
            .unwrap()
            .iter()
            .map(|sent| String::from_utf8_lossy(&sent.lock().unwrap()).into_owned())
            .collect()
    }

    /// How many JSON-RPC messages with `method` were sent, on every connection: counted by
    /// the method's member as the client writes it (compact JSON).
    pub fn sent_method(&self, method: &str) -> usize {
        let member = format!("\"method\":\"{method}\"");
        self.connections()
            .iter()
            .map(|sent| sent.matches(&member).count())
            .sum()
    }

    /// How many connections carried at least one message with `method`.
    pub fn connections_with(&self, method: &str) -> usize {
        let member = format!("\"method\":\"{method}\"");
        self.connections()
            .iter()
            .filter(|sent| sent.contains(&member))
            .count()
    }

    /// The distinct values the HTTP header `name` (lowercase, as HTTP/1 clients built on
    /// hyper write it) had, on every connection.
    pub fn header_values(&self, name: &str) -> Vec<String> {
        let start = format!("\r\n{name}: ");
        let mut values: Vec<String> = self
            .connections()
            .iter()
            .flat_map(|sent| {
                sent.match_indices(&start)
                    .map(|(at, _)| {
                        let value = &sent[at + start.len()..];
                        value[..value.find("\r\n").unwrap_or(value.len())].to_owned()
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        values.sort();
        values.dedup();
        values
    }
}

/// Passes `inbound`'s bytes to the server and the server's back, keeping a copy of the
/// former in `sent`, until either side closes.
async fn forward(inbound: TcpStream, server: u16, sent: Sent) {
    let Ok(outbound) = TcpStream::connect(("127.0.0.1", server)).await else {
        return;
    };
    let _ = outbound.set_nodelay(true);
    let (mut from_client, mut to_client) = inbound.into_split();
    let (mut from_server, mut to_server) = outbound.into_split();
    let upward = async move {
        let mut buffer = vec![0; 16 * 1024];
        loop {
            let read = match from_client.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            sent.lock().unwrap().extend_from_slice(&buffer[..read]);
            if to_server.write_all(&buffer[..read]).await.is_err() {
                break;
            }
        }
        let _ = to_server.shutdown().await;
    };
    let downward = async move {
        let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
        let _ = to_client.shutdown().await;
    };
    tokio::join!(upward, downward);
}
