//! Replicas of a tool binary sharing a real `redis-server`, behind a real HAProxy running
//! the deployment's own configuration (`examples/deploy/haproxy.cfg`, plus a stats page the
//! tests read), all on 127.0.0.1. Every process is stopped by its own process id when the
//! cluster is dropped, and writes its log to a file of its own (see [`crate::logs`]); a
//! test that fails with a cluster running says where they are. Tests that need HAProxy
//! fail (never skip) when it is missing, and say how to get it.

use crate::redis::{RedisCluster, RedisServer, SharedRedis};
use crate::{free_port, logs, PATIENCE};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The balancer's configuration, as deployed.
const HAPROXY_CONFIG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/deploy/haproxy.cfg"
);

/// The stats page the tests add to it: which replicas the balancer sees up.
const HAPROXY_STATS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/haproxy-stats.cfg");

/// One replica: its port (fixed, the balancer's configuration names it), and its process
/// while it runs.
struct Replica {
    port: u16,
    running: Option<Running>,
}

/// A replica's process and the thread copying its stderr into its log.
struct Running {
    child: Child,
    copying: std::thread::JoinHandle<()>,
}

/// Three replicas, their store and their balancer.
pub struct Cluster {
    /// The Redis the replicas share (unless they share a Redis Cluster).
    pub redis: RedisServer,
    /// A Redis Cluster the replicas share instead of `redis`, when started on one.
    redis_cluster: Option<RedisCluster>,
    binary: String,
    args: Vec<String>,
    prefix: String,
    replicas: Vec<Replica>,
    /// The balancer's process, and its log.
    haproxy: Child,
    haproxy_log: PathBuf,
    /// Where the balancer serves its stats page.
    stats_port: u16,
    /// Every log file of the cluster's processes so far.
    logs: Vec<PathBuf>,
    /// Where clients connect.
    pub port: u16,
}

impl Cluster {
    /// Starts `binary serve --http` three times with `args`, sharing a new Redis (with an
    /// append-only file, so a restarted Redis keeps its data), behind HAProxy; returns once
    /// the balancer sends requests to all three. Each store command may take a test's
    /// patience (`MCP_STORE_TIMEOUT`; an `args` of `--store-timeout` wins): production's
    /// 500 ms is short for the Redis of a machine kept busy by other work, and a command
    /// past its limit changes what a replica does (a call not kept as a task, a rate
    /// checked on the replica alone), which only the tests of a store outage look at.
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
        let mut logs = vec![redis.log().to_owned()];
        logs.extend(redis_cluster.iter().flat_map(RedisCluster::logs));
        // The balancer names the replicas' ports up front, so they are chosen here; a
        // replica that finds its port taken ends, and `start_replica` says so.
        let replicas = (0..3)
            .map(|_| Replica {
                port: free_port(),
                running: None,
            })
            .collect();
        let mut cluster = Cluster {
            redis,
            redis_cluster,
            binary: binary.to_owned(),
            args: args.iter().map(|arg| (*arg).to_owned()).collect(),
            prefix,
            replicas,
            haproxy: spawn_placeholder(),
            haproxy_log: PathBuf::new(),
            stats_port: free_port(),
            logs,
            port: free_port(),
        };
        for index in 0..3 {
            cluster.start_replica(index);
        }
        cluster.spawn_haproxy();
        cluster.wait_until_all_up();
        cluster
    }

    fn spawn_haproxy(&mut self) {
        let log = logs::file("haproxy");
        let mut command = Command::new("haproxy");
        command
            .args(["-f", HAPROXY_CONFIG, "-f", HAPROXY_STATS, "-db"])
            .env("MCP_LB_ADDRESS", format!("127.0.0.1:{}", self.port))
            .env(
                "MCP_STATS_ADDRESS",
                format!("127.0.0.1:{}", self.stats_port),
            )
            .stdout(logs::stdio_to(&log))
            .stderr(logs::stdio_to(&log));
        self.logs.push(log.clone());
        self.haproxy_log = log;
        for (index, replica) in self.replicas.iter().enumerate() {
            command.env(
                format!("MCP_REPLICA_{}", index + 1),
                format!("127.0.0.1:{}", replica.port),
            );
        }
        let child = command.spawn().unwrap_or_else(|error| {
            panic!(
                "this test needs haproxy ({error}): install it (Debian: apt-get install haproxy) \
                 or run the test command, scripts/test.sh, which installs it"
            )
        });
        self.haproxy = child;
    }

    /// Starts replica `index` (again) on its port, and waits until it says it serves there;
    /// fails the test, with the replica's log, if it ends first.
    pub fn start_replica(&mut self, index: usize) {
        let port = self.replicas[index].port;
        let mut command = crate::command(&self.binary);
        command
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .args(&self.args)
            .env("MCP_STORE", self.store_url())
            .env("MCP_STORE_PREFIX", &self.prefix)
            .env("MCP_STORE_TIMEOUT", format!("{}ms", PATIENCE.as_millis()))
            .stdout(Stdio::null());
        let (child, log, copying, served) =
            crate::spawn_serving(command, &format!("replica-{}", index + 1));
        self.logs.push(log.clone());
        assert_eq!(
            served,
            port,
            "replica {index} serves on the port the balancer knows; its log: {}",
            log.display()
        );
        self.replicas[index].running = Some(Running { child, copying });
    }

    /// The URL of the store the replicas share.
    pub fn store_url(&self) -> String {
        match &self.redis_cluster {
            Some(redis_cluster) => redis_cluster.store_url(),
            None => self.redis.url(),
        }
    }

    /// The port of each replica (running or not), on 127.0.0.1.
    pub fn replica_ports(&self) -> Vec<u16> {
        self.replicas.iter().map(|replica| replica.port).collect()
    }

    /// The process id of replica `index`, while it runs.
    pub fn pid(&self, index: usize) -> Option<u32> {
        let running = self.replicas[index].running.as_ref();
        running.map(|running| running.child.id())
    }

    /// The index of the replica whose process id is `pid`.
    pub fn replica_of(&self, pid: u32) -> Option<usize> {
        (0..self.replicas.len()).find(|index| self.pid(*index) == Some(pid))
    }

    /// Sends `signal` (`KILL`, `TERM`) to replica `index` and waits for it to end.
    pub fn stop_replica(&mut self, index: usize, signal: &str) {
        if let Some(mut running) = self.replicas[index].running.take() {
            let _ = Command::new("kill")
                .args([&format!("-{signal}"), &running.child.id().to_string()])
                .status();
            let _ = running.child.wait();
            let _ = running.copying.join();
        }
    }

    /// Waits until every running replica is ready and the balancer's stats say it is `UP`
    /// (two good health checks in a row), so that the balancer sends requests to each.
    pub fn wait_until_all_up(&mut self) {
        let running: Vec<usize> = (0..self.replicas.len())
            .filter(|index| self.pid(*index).is_some())
            .collect();
        let deadline = std::time::Instant::now() + *PATIENCE;
        loop {
            let ready = running
                .iter()
                .all(|index| ready(self.replicas[*index].port));
            let states = self.balancer_states();
            let up = running.iter().all(|index| {
                let name = format!("r{}", index + 1);
                states
                    .iter()
                    .any(|(server, status)| *server == name && status == "UP")
            });
            if ready && up {
                return;
            }
            self.fail_if_the_balancer_ended();
            assert!(
                std::time::Instant::now() < deadline,
                "replicas {running:?} up behind the balancer within {:?} (each ready: {ready}; \
                 the balancer's view: {states:?}); logs: {}",
                *PATIENCE,
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Fails the test, with the balancer's log, if it has ended (it could not bind its port,
    /// say): waiting longer would not bring it up.
    fn fail_if_the_balancer_ended(&mut self) {
        if let Ok(Some(status)) = self.haproxy.try_wait() {
            panic!(
                "the balancer ended ({status}) before every replica was up behind it; its log:\n{}",
                logs::read(&self.haproxy_log)
            );
        }
    }

    /// Each replica the balancer knows, and its status there (`UP`, `DOWN`, `UP 1/2`, ...),
    /// from its stats page; nothing while it does not answer.
    pub fn balancer_states(&self) -> Vec<(String, String)> {
        let Some(csv) = get_text(self.stats_port, "/stats;csv") else {
            return Vec::new();
        };
        csv.lines()
            .filter(|line| !line.starts_with('#'))
            .filter_map(|line| {
                let columns: Vec<&str> = line.split(',').collect();
                let (proxy, server, status) = (columns.first()?, columns.get(1)?, columns.get(17)?);
                (*proxy == "replicas" && server.starts_with('r'))
                    .then(|| ((*server).to_owned(), (*status).to_owned()))
            })
            .collect()
    }

    /// The paths of the log files of the cluster's processes, for a failure message.
    pub fn logs(&self) -> String {
        let paths: Vec<String> = self.logs.iter().map(|p| p.display().to_string()).collect();
        paths.join(", ")
    }
}

/// Whether `GET /readyz` on `port` answers 200 (a port nobody listens on is not ready).
fn ready(port: u16) -> bool {
    get_text(port, "/readyz").is_some()
}

/// The body of `GET path` on `port` when it answers 200; nothing when it does not answer,
/// or answers otherwise.
fn get_text(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    // HTTP/1.0: the body comes whole, never in chunks that could split a line.
    let request = format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    let (head, body) = reply.split_once("\r\n\r\n")?;
    (head.split(' ').nth(1) == Some("200")).then(|| body.to_owned())
}

/// A process that has already ended, to hold a place until the real one starts.
fn spawn_placeholder() -> Child {
    Command::new("true").spawn().expect("`true` runs")
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.haproxy.kill();
        let _ = self.haproxy.wait();
        for replica in &mut self.replicas {
            if let Some(running) = &mut replica.running {
                let _ = running.child.kill();
                let _ = running.child.wait();
            }
        }
        if std::thread::panicking() {
            eprintln!("the cluster's logs: {}", self.logs());
        }
    }
}
