//! A real `redis-server` for a test: started on a free port of 127.0.0.1 with a data
//! directory of its own, its log in a file of its own (see [`crate::logs`]), and stopped by
//! its process id when dropped. Tests that need one fail (never skip) when `redis-server`
//! is missing, and say how to get it.

use crate::{wait_until, PATIENCE};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// One running Redis.
pub struct RedisServer {
    child: Child,
    port: u16,
    dir: PathBuf,
    /// Its log file, for every run of it.
    log: PathBuf,
    /// The arguments it was started with, to start it again on the same port and data.
    args: Vec<String>,
}

/// The `redis-server` to run: `REDIS_SERVER` if set, else the one on the `PATH`.
fn binary() -> String {
    std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned())
}

impl RedisServer {
    /// Starts one, without persistence.
    pub fn start() -> RedisServer {
        RedisServer::start_with(&["--save", "", "--appendonly", "no"])
    }

    /// Starts one with an append-only file, so that its data outlives a stop and a start:
    /// a stop ([`RedisServer::stop`], SIGTERM) writes and syncs the file. Synced once a
    /// second otherwise, as deployed: syncing every write can stall a write on a busy disk
    /// past the store's time limit on commands.
    pub fn start_persistent() -> RedisServer {
        RedisServer::start_with(&[
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
        ])
    }

    /// Starts one with `extra` arguments. Its port is chosen free here, and another
    /// process may take it first: the server is ours once it answers with its own process
    /// id (not merely once something answers on the port); one that could not listen
    /// there ends, and another port is tried.
    pub(crate) fn start_with(extra: &[&str]) -> RedisServer {
        for _ in 0..5 {
            if let Some(server) = RedisServer::try_start(extra) {
                return server;
            }
        }
        panic!("redis-server could not listen on any of five free ports (see its logs)");
    }

    fn try_start(extra: &[&str]) -> Option<RedisServer> {
        let port = crate::free_port();
        let dir =
            std::env::temp_dir().join(format!("tool-tests-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut args: Vec<String> = [
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--dir",
            dir.to_str().unwrap(),
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
        ]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect();
        args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        let log = crate::logs::file(&format!("redis-{port}"));
        let child = spawn(&args, &log);
        let mut server = RedisServer {
            child,
            port,
            dir,
            log,
            args,
        };
        server.wait_until_ours().then_some(server)
    }

    /// Waits until this server answers on its port, as itself: `true`; `false` when it
    /// ended first (its port was taken).
    fn wait_until_ours(&mut self) -> bool {
        let what = format!(
            "redis-server answering on port {} (its log: {})",
            self.port,
            self.log.display()
        );
        let own = format!("process_id:{}", self.child.id());
        let mut ended = false;
        wait_until(&what, || {
            ended = matches!(self.child.try_wait(), Ok(Some(_)));
            ended || info_server(self.port).is_some_and(|info| info.contains(&own))
        });
        !ended
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its log file.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Stops it (SIGTERM: it saves what it must) and waits for it to end; nothing when it
    /// has already ended (its process id may belong to another process by now).
    pub fn stop(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }

    /// Starts it again on the same port and data directory.
    pub fn restart(&mut self) {
        self.stop();
        self.child = spawn(&self.args, &self.log);
        self.wait_until_ready();
    }

    fn wait_until_ready(&self) {
        let what = format!(
            "redis-server answering on port {} (its log: {})",
            self.port,
            self.log.display()
        );
        wait_until(&what, || ping(self.port));
    }
}

/// Starts `redis-server` with `args`, appending what it says to `log`.
fn spawn(args: &[String], log: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap_or_else(|error| panic!("a log file at {}: {error}", log.display()));
    let stderr = log.try_clone().expect("a second handle on the log file");
    match Command::new(binary())
        .args(args)
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(stderr))
        .spawn()
    {
        Ok(child) => child,
        Err(error) => panic!(
            "this test needs redis-server ({error}): install it (Debian: apt-get install \
             redis-server) or run the test command, scripts/test.sh, which installs it; \
             REDIS_SERVER names another binary"
        ),
    }
}

/// Whether a Redis answers PING on `port`.
/// What `INFO server` says on `port`, when something there answers.
fn info_server(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    stream.write_all(b"INFO server\r\n").ok()?;
    let mut reply = vec![0u8; 16 * 1024];
    let read = stream.read(&mut reply).ok()?;
    Some(String::from_utf8_lossy(&reply[..read]).into_owned())
}

fn ping(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut reply = [0u8; 7];
    stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
        if std::thread::panicking() {
            eprintln!("redis-server's log: {}", self.log.display());
        }
    }
}

/// A Redis Cluster of three masters (no replicas) on free ports of 127.0.0.1, each with a
/// data directory of its own, stopped by their process ids when dropped.
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts three nodes, gives each a third of the slots, introduces them to each other
    /// (as `redis-cli --cluster create` does) and waits until the cluster says it is ok.
    pub fn start() -> RedisCluster {
        let nodes: Vec<RedisServer> = (0..3)
            .map(|_| {
                RedisServer::start_with(&[
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "2000",
                ])
            })
            .collect();
        let ranges = [(0, 5460), (5461, 10922), (10923, 16383)];
        for (node, (start, end)) in nodes.iter().zip(ranges) {
            let reply = command(
                node.port(),
                &[
                    "CLUSTER",
                    "ADDSLOTSRANGE",
                    &start.to_string(),
                    &end.to_string(),
                ],
            );
            assert!(reply.starts_with("+OK"), "ADDSLOTSRANGE: {reply}");
        }
        for other in &nodes[1..] {
            let port = other.port().to_string();
            let reply = command(nodes[0].port(), &["CLUSTER", "MEET", "127.0.0.1", &port]);
            assert!(reply.starts_with("+OK"), "CLUSTER MEET: {reply}");
        }
        wait_until("the Redis Cluster saying it is ok", || {
            nodes.iter().all(|node| {
                let info = command(node.port(), &["CLUSTER", "INFO"]);
                info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:3")
            })
        });
        RedisCluster { nodes }
    }

    /// The log files of its nodes.
    pub fn logs(&self) -> Vec<PathBuf> {
        self.nodes.iter().map(|node| node.log.clone()).collect()
    }

    /// Its URL, naming every node.
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|node| format!("127.0.0.1:{}", node.port()))
            .collect();
        format!("redis+cluster://{}", nodes.join(","))
    }

    /// The ports of its nodes.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(RedisServer::port).collect()
    }
}

/// Sends one command to the Redis on `port` and returns the start of its reply, as text.
pub fn command(port: u16, args: &[&str]) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))
        .unwrap_or_else(|error| panic!("redis on port {port} answers: {error}"));
    let _ = stream.set_read_timeout(Some(*PATIENCE));
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(request.as_bytes()).expect("redis reads");
    let mut reply = vec![0u8; 16 * 1024];
    let read = stream.read(&mut reply).unwrap_or(0);
    String::from_utf8_lossy(&reply[..read]).into_owned()
}

/// A Redis a test can point replicas at: one server or a cluster.
pub trait SharedRedis {
    /// The store URL of it.
    fn store_url(&self) -> String;
}

impl SharedRedis for RedisServer {
    fn store_url(&self) -> String {
        self.url()
    }
}

impl SharedRedis for RedisCluster {
    fn store_url(&self) -> String {
        self.url()
    }
}
