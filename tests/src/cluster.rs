//! Replicas of a tool binary sharing a real `redis-server`, behind a real HAProxy running
//! the deployment's own configuration (`examples/deploy/haproxy.cfg`), all on 127.0.0.1.
//! Every process is stopped by its own process id when the cluster is dropped. Tests that
//! need HAProxy fail (never skip) when it is missing, and say how to get it.

use crate::redis::{RedisCluster, RedisServer, SharedRedis};
use crate::{free_port, http, standard_headers, HttpReply};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The balancer's configuration, as deployed.
const HAPROXY_CONFIG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/deploy/haproxy.cfg"
);

/// Three replicas, their store and their balancer.
pub struct Cluster {
    pub redis: RedisServer,
    /// A Redis Cluster the replicas share instead of `redis`, when started on one.
    redis_cluster: Option<RedisCluster>,
    binary: String,
    args: Vec<String>,
    prefix: String,
    /// Each replica: its port, and its process while it runs.
    pub replicas: Vec<(u16, Option<Child>)>,
    haproxy: Child,
    /// Where clients connect.
    pub port: u16,
}

impl Cluster {
    /// Starts `binary serve --http` three times with `args`, sharing a new Redis (with an
    /// append-only file, so a restarted Redis keeps its data), behind HAProxy; returns once
    /// the balancer sends requests to all three.
    pub fn start(binary: &str, args: &[&str]) -> Cluster {
        Cluster::start_with(binary, args, None)
    }

    /// As [`Cluster::start`], with the replicas sharing a Redis Cluster of three nodes.
    pub fn start_on_redis_cluster(binary: &str, args: &[&str]) -> Cluster {
        Cluster::start_with(binary, args, Some(RedisCluster::start()))
    }

    fn start_with(binary: &str, args: &[&str], redis_cluster: Option<RedisCluster>) -> Cluster {
        let redis = RedisServer::start_persistent();
        let prefix = format!("cluster-{}-{}", std::process::id(), redis.port());
        let mut cluster = Cluster {
            redis,
            redis_cluster,
            binary: binary.to_owned(),
            args: args.iter().map(|arg| (*arg).to_owned()).collect(),
            prefix,
            replicas: (0..3).map(|_| (free_port(), None)).collect(),
            haproxy: spawn_placeholder(),
            port: free_port(),
        };
        for index in 0..3 {
            cluster.start_replica(index);
        }
        cluster.haproxy = cluster.spawn_haproxy();
        cluster.wait_until_all_up();
        cluster
    }

    fn spawn_haproxy(&self) -> Child {
        let mut command = Command::new("haproxy");
        command
            .args(["-f", HAPROXY_CONFIG, "-db"])
            .env("MCP_LB_ADDRESS", format!("127.0.0.1:{}", self.port))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (index, (port, _)) in self.replicas.iter().enumerate() {
            command.env(
                format!("MCP_REPLICA_{}", index + 1),
                format!("127.0.0.1:{port}"),
            );
        }
        command.spawn().unwrap_or_else(|error| {
            panic!(
                "this test needs haproxy ({error}): install it (Debian: apt-get install haproxy) \
                 or run the test command, scripts/test.sh, which installs it"
            )
        })
    }

    /// Starts replica `index` (again) on its port, and waits until it listens.
    pub fn start_replica(&mut self, index: usize) {
        let port = self.replicas[index].0;
        let child = crate::command(&self.binary)
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .args(&self.args)
            .env("MCP_STORE", self.store_url())
            .env("MCP_STORE_PREFIX", &self.prefix)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the replica starts");
        self.replicas[index].1 = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "replica {index} listens");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The URL of the store the replicas share.
    pub fn store_url(&self) -> String {
        match &self.redis_cluster {
            Some(redis_cluster) => redis_cluster.store_url(),
            None => self.redis.url(),
        }
    }

    /// The process id of replica `index`, while it runs.
    pub fn pid(&self, index: usize) -> Option<u32> {
        self.replicas[index].1.as_ref().map(Child::id)
    }

    /// The index of the replica whose process id is `pid`.
    pub fn replica_of(&self, pid: u32) -> Option<usize> {
        (0..self.replicas.len()).find(|index| self.pid(*index) == Some(pid))
    }

    /// Sends `signal` (`KILL`, `TERM`) to replica `index` and waits for it to end.
    pub fn stop_replica(&mut self, index: usize, signal: &str) {
        if let Some(mut child) = self.replicas[index].1.take() {
            let _ = Command::new("kill")
                .args([&format!("-{signal}"), &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }

    /// Waits until the balancer's health checks pass for every running replica.
    pub fn wait_until_all_up(&self) {
        // Two checks 500 ms apart make a replica up; readiness through the balancer
        // answers once any is.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let all = (0..self.replicas.len())
                .filter(|index| self.pid(*index).is_some())
                .all(|index| ready(self.replicas[index].0));
            if all && ready(self.port) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the replicas are up behind the balancer"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_millis(1_200));
    }

    /// POSTs the 2026-07-28 message `body` to the balancer, with the standard headers.
    pub fn post(&self, body: &str) -> HttpReply {
        post_to(self.port, body)
    }
}

/// POSTs the 2026-07-28 message `body` to `/mcp` on `port`, with the standard headers.
pub fn post_to(port: u16, body: &str) -> HttpReply {
    let standard = standard_headers(body.as_bytes());
    let mut headers: Vec<(&str, &str)> = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    headers.extend(standard.iter().map(|(name, value)| (*name, value.as_str())));
    http(port, "POST", "/mcp", &headers, body)
}

/// Whether `GET /readyz` on `port` answers 200 (a port nobody listens on is not ready).
fn ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = "GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply.starts_with("HTTP/1.1 200")
}

/// A process that has already ended, to hold a place until the real one starts.
fn spawn_placeholder() -> Child {
    Command::new("true").spawn().expect("`true` runs")
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.haproxy.kill();
        let _ = self.haproxy.wait();
        for (_, child) in &mut self.replicas {
            if let Some(child) = child {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}
