//! Three replicas behind a real HAProxy (round robin per request, the deployment's own
//! configuration), sharing a real Redis: a replica killed mid-task, every replica
//! restarted, one client's rate across replicas, a rolling restart under load, and Redis
//! stopped under load.

use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tool_tests::cluster::{post_to, Cluster};
use tool_tests::{messages, per_request, with_tasks, HttpReply};

const BINARY: &str = env!("CARGO_BIN_EXE_replica-tools");

/// The one JSON-RPC message of a reply.
fn answer(reply: &HttpReply) -> Value {
    messages(&reply.body)
        .pop()
        .unwrap_or_else(|| panic!("an answer: {} {}", reply.head, reply.body))
}

/// Starts a 2026-07-28 task of `tool` with `arguments` through the balancer: its id.
fn start_task(cluster: &Cluster, tool: &str, arguments: Value) -> String {
    let request = per_request(
        1,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        with_tasks(),
    );
    let created = answer(&cluster.post(&request));
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

/// `tasks/get` of `task` through the balancer.
fn get_task(cluster: &Cluster, task: &str) -> Value {
    let request = per_request(2, "tasks/get", json!({"taskId": task}), with_tasks());
    answer(&cluster.post(&request))
}

/// Polls `task` until `done` says so, for `most` at most; the task then, and how long it
/// took. Each poll is one request through the balancer, which must answer.
fn poll(
    cluster: &Cluster,
    task: &str,
    most: Duration,
    done: impl Fn(&Value) -> bool,
) -> (Value, Duration) {
    let started = Instant::now();
    loop {
        let got = get_task(cluster, task);
        if done(&got) {
            return (got, started.elapsed());
        }
        assert!(
            started.elapsed() < most,
            "task {task} within {most:?}: {got}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The process ids written to `path`, one per run.
fn runs(path: &std::path::Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// Waits until a run has written its process id to `path`; the id.
fn first_run(path: &std::path::Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(pid) = runs(path).first() {
            return *pid;
        }
        assert!(Instant::now() < deadline, "the task started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pid_file(name: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("replicas-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// Starts a task of `slow_lookup` that runs until `release` exists (a minute at most), so
/// that it is surely still running when the server decides whether the call becomes a task.
fn start_held_lookup(
    cluster: &Cluster,
    pid_file: &std::path::Path,
    release: &std::path::Path,
) -> String {
    let _ = std::fs::remove_file(release);
    let arguments = json!({
        "seconds": 60,
        "pid_file": pid_file.to_str().unwrap(),
        "release_file": release.to_str().unwrap(),
    });
    start_task(cluster, "slow_lookup", arguments)
}

/// Ends a lookup started by [`start_held_lookup`].
fn release(release: &std::path::Path) {
    std::fs::write(release, b"").expect("the release file is written");
}

/// GET `path` on `port`: its status and body.
fn get(port: u16, path: &str) -> HttpReply {
    tool_tests::http(port, "GET", path, &[], "")
}

/// The bound within which a task whose replica died is reported, as the deployment guide
/// states it: the lease (3 s) and a look for lost tasks (every second), with a margin.
const LOST_WITHIN: Duration = Duration::from_secs(8);

#[test]
fn a_task_whose_replica_is_killed_fails_or_runs_again_elsewhere() {
    a_killed_replica(&mut Cluster::start(BINARY, &[]));
}

/// The same with the replicas sharing a Redis Cluster of three nodes: leases, the index of
/// leases and the tasks live on different nodes.
#[test]
fn a_task_whose_replica_is_killed_fails_or_runs_again_elsewhere_on_a_redis_cluster() {
    a_killed_replica(&mut Cluster::start_on_redis_cluster(BINARY, &[]));
}

/// A task whose replica is killed: reported failed when it is not idempotent, run again
/// elsewhere when it is. Its files are named after the balancer's port: the two variants
/// run at once.
fn a_killed_replica(cluster: &mut Cluster) {
    let tag = cluster.port;

    // Not idempotent: another replica reports it failed, saying the worker was lost.
    let file = pid_file(&format!("job-{tag}"));
    let arguments = json!({"seconds": 60, "pid_file": file.to_str().unwrap()});
    let task = start_task(cluster, "slow_job", arguments);
    let runner = cluster
        .replica_of(first_run(&file))
        .expect("a replica runs it");
    cluster.stop_replica(runner, "KILL");
    let (failed, took) = poll(cluster, &task, LOST_WITHIN, |t| {
        t["result"]["status"] != "working"
    });
    assert_eq!(failed["result"]["status"], "failed", "{failed}");
    let message = failed["result"]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("worker was lost"), "{failed}");
    assert_eq!(runs(&file).len(), 1, "not run again: it is not idempotent");
    eprintln!("lost task reported failed {took:?} after its replica was killed");

    // Idempotent: it runs again on another replica, and completes.
    cluster.start_replica(runner);
    cluster.wait_until_all_up();
    let file = pid_file(&format!("lookup-{tag}"));
    let released = pid_file(&format!("lookup-{tag}-release"));
    let task = start_held_lookup(cluster, &file, &released);
    let runner = cluster
        .replica_of(first_run(&file))
        .expect("a replica runs it");
    cluster.stop_replica(runner, "KILL");
    // The run that takes over ends as soon as it starts.
    release(&released);
    let (done, _) = poll(cluster, &task, LOST_WITHIN + Duration::from_secs(3), |t| {
        t["result"]["status"] == "completed"
    });
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "found it",
        "{done}"
    );
    let pids = runs(&file);
    assert_eq!(pids.len(), 2, "run once more: {pids:?}");
    assert_ne!(pids[0], pids[1], "by another replica");
}

#[test]
fn tasks_and_their_results_outlive_a_restart_of_every_replica() {
    let mut cluster = Cluster::start(BINARY, &[]);
    let file = pid_file("restart");
    let released = pid_file("restart-release");
    let task = start_held_lookup(&cluster, &file, &released);
    release(&released);
    poll(&cluster, &task, Duration::from_secs(20), |t| {
        t["result"]["status"] == "completed"
    });
    for index in 0..3 {
        cluster.stop_replica(index, "TERM");
    }
    for index in 0..3 {
        cluster.start_replica(index);
    }
    cluster.wait_until_all_up();
    for _ in 0..3 {
        let got = get_task(&cluster, &task);
        assert_eq!(got["result"]["status"], "completed", "{got}");
        assert_eq!(got["result"]["result"]["content"][0]["text"], "found it");
    }
}

#[test]
fn one_client_is_held_to_its_rate_across_replicas() {
    let cluster = Cluster::start(
        BINARY,
        &["--rate-limit", "30/s", "--trusted-proxy", "127.0.0.1"],
    );
    let admitted = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let run_for = Duration::from_secs(5);
    let started = Instant::now();
    let workers: Vec<_> = (0..4)
        .map(|worker| {
            let (admitted, refused, port) =
                (Arc::clone(&admitted), Arc::clone(&refused), cluster.port);
            std::thread::spawn(move || {
                let mut id = worker * 1_000_000;
                while started.elapsed() < run_for {
                    id += 1;
                    let request = per_request(
                        id,
                        "tools/call",
                        json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
                        json!({}),
                    );
                    let reply = answer(&post_to(port, &request));
                    match reply["result"]["_meta"]["status"].as_str() {
                        Some("rate_limited") => refused.fetch_add(1, Ordering::Relaxed),
                        _ => {
                            assert_eq!(
                                reply["result"]["structuredContent"]["result"], 3,
                                "{reply}"
                            );
                            admitted.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let admitted = admitted.load(Ordering::Relaxed) as f64;
    // GCRA: the burst (30 at once), then 30 a second.
    let expected = 30.0 + 30.0 * elapsed;
    let refused = refused.load(Ordering::Relaxed);
    assert!(refused > 0, "the client asked for more than its rate");
    assert!(
        (admitted - expected).abs() <= expected * 0.1,
        "admitted {admitted} calls in {elapsed:.2}s; 30/s with its burst is {expected:.0}"
    );
}

#[test]
fn a_rolling_restart_under_load_loses_no_request() {
    let mut cluster = Cluster::start(BINARY, &[]);
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..3)
        .map(|worker| {
            let (stop, answered, port) = (Arc::clone(&stop), Arc::clone(&answered), cluster.port);
            std::thread::spawn(move || {
                let mut failures = Vec::new();
                let mut id = worker * 1_000_000;
                while !stop.load(Ordering::Relaxed) {
                    id += 1;
                    let request = per_request(
                        id,
                        "tools/call",
                        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
                        json!({}),
                    );
                    let reply = post_to(port, &request);
                    let ok = reply.status == 200
                        && messages(&reply.body)
                            .first()
                            .is_some_and(|m| m["result"]["structuredContent"]["result"] == 5);
                    if ok {
                        answered.fetch_add(1, Ordering::Relaxed);
                    } else {
                        failures.push(format!(
                            "{} {}",
                            reply.head.lines().next().unwrap_or(""),
                            reply.body
                        ));
                    }
                }
                failures
            })
        })
        .collect();
    for index in 0..3 {
        cluster.stop_replica(index, "TERM");
        cluster.start_replica(index);
        cluster.wait_until_all_up();
    }
    stop.store(true, Ordering::Relaxed);
    let failures: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let answered = answered.load(Ordering::Relaxed);
    assert!(
        answered > 100,
        "the load went on throughout: {answered} answered"
    );
    assert!(
        failures.is_empty(),
        "{} of {} requests failed: {:?}",
        failures.len(),
        answered + failures.len() as u64,
        &failures[..failures.len().min(5)]
    );
}

#[test]
fn with_redis_stopped_requests_that_need_it_say_retry_and_the_rest_go_on() {
    let mut cluster = Cluster::start(BINARY, &[]);
    let file = pid_file("outage");
    let released = pid_file("outage-release");
    let task = start_held_lookup(&cluster, &file, &released);
    release(&released);
    poll(&cluster, &task, Duration::from_secs(20), |t| {
        t["result"]["status"] == "completed"
    });

    cluster.redis.stop();
    // Every replica says the store is unreachable, on /healthz, once it has asked it.
    for (port, _) in &cluster.replicas {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let health = get(*port, "/healthz");
            assert_eq!(health.status, 200, "{}", health.body);
            let health: Value = serde_json::from_str(health.body.trim()).expect("JSON");
            if health["store"] == "unreachable" {
                assert_eq!(health["ready"], true, "{health}");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the store is seen unreachable: {health}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // Readiness is a replica's own: the shared store being down takes none out, so the
    // balancer keeps every replica and calls that need no store go on. The calls run over
    // six of the balancer's check intervals (500 ms each, two failures take a replica out),
    // which is where a replica reporting the store as unready would be taken out.
    for port in cluster.replicas.iter().map(|(port, _)| *port) {
        assert_eq!(
            get(port, "/readyz").status,
            200,
            "replica on {port} stays ready"
        );
    }
    let window = Instant::now();
    let mut id = 100;
    while window.elapsed() < Duration::from_secs(3) || id < 110 {
        id += 1;
        let call = per_request(
            id,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
            json!({}),
        );
        let reply = cluster.post(&call);
        assert_eq!(reply.status, 200, "{} {}", reply.head, reply.body);
        let reply = answer(&reply);
        assert_eq!(reply["result"]["structuredContent"]["result"], 2, "{reply}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Reading the task needs the store: a clear error that says to retry. In good time: a
    // client must not hang on it (the store's commands time out after 500 ms; the bound is
    // generous for a busy machine).
    let asked = Instant::now();
    let reply = get_task(&cluster, &task);
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("retry"), "{reply}");
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "no request hangs"
    );

    cluster.redis.restart();
    // The client reconnects by itself; nothing acknowledged was lost.
    let (got, _) = poll(&cluster, &task, Duration::from_secs(30), |t| {
        t.get("result").is_some()
    });
    assert_eq!(got["result"]["status"], "completed", "{got}");
    let task = start_held_lookup(&cluster, &file, &released);
    release(&released);
    poll(&cluster, &task, Duration::from_secs(20), |t| {
        t["result"]["status"] == "completed"
    });
}
