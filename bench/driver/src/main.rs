//! Drives one MCP server process and reports, as one JSON line: requests per second, p50
//! and p99 latency, the server's CPU time per request (user + system, summed over its
//! threads from /proc/<pid>/task/*/schedstat, which stays stable on a noisy machine), its
//! peak RSS (VmHWM) and its start-up time to the first response.
//!
//! driver stdio <mode> <requests> <tool> -- <server command...>
//!     mode: pipelined (64 in flight) | sequential
//!     tool: add (tools/call of add) | list (tools/list)
//! driver http <concurrency> <requests> <port> [tool] -- <server command...>
//!     tool: add (default) | add_async (the same sum by an async tool, where the server has
//!     one) | task (a 2025-11-25 call of `wait_task` that becomes a task at once: its
//!     latency is the task's creation); the server command gets `--http 127.0.0.1:<port>`
//!     style arguments from the caller
//! driver round-trip <round trips> [pipe|tcp]
//!     the machine's own cost of one process waking another and being woken back: a byte
//!     sent to a child (this program again, as `driver echo`) over a pipe, or over a TCP
//!     connection on 127.0.0.1, and read back; the parent's and the child's CPU per round
//!     trip (the least any relay pays per hop)

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const IN_FLIGHT: usize = 64;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("echo") => return echo(args.get(1)),
        Some("round-trip") => {
            let over = args.get(2).map_or("pipe", String::as_str);
            println!("{}", round_trip(args[1].parse().unwrap(), over));
            return;
        }
        _ => {}
    }
    let split = args
        .iter()
        .position(|a| a == "--")
        .expect("usage: driver <transport> ... -- <server command>");
    let (options, command) = (&args[..split], &args[split + 1..]);
    let report = match options.first().map(String::as_str) {
        Some("stdio") => stdio(
            &options[1],
            options[2].parse().unwrap(),
            &options[3],
            command,
        ),
        Some("http") => http(
            options[1].parse().unwrap(),
            options[2].parse().unwrap(),
            options[3].parse().unwrap(),
            options.get(4).map_or("add", String::as_str),
            command,
        ),
        _ => panic!("the transport is stdio or http"),
    };
    println!("{report}");
}

fn spawn(command: &[String], stdin: Stdio, stdout: Stdio) -> Child {
    Command::new(&command[0])
        .args(&command[1..])
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"))
}

/// Sends back each byte read, until the input ends: the child of `round-trip`. Over its
/// stdin and stdout, or over a TCP connection to the port given.
fn echo(port: Option<&String>) {
    let mut byte = [0u8; 1];
    let mut answer = |input: &mut dyn Read, output: &mut dyn Write| {
        while matches!(input.read(&mut byte), Ok(1)) {
            output.write_all(&byte).unwrap();
            output.flush().unwrap();
        }
    };
    match port {
        Some(port) => {
            let stream = std::net::TcpStream::connect(("127.0.0.1", port.parse().unwrap()))
                .expect("cannot reach the round trip's port");
            stream.set_nodelay(true).unwrap();
            answer(&mut &stream, &mut &stream);
        }
        None => answer(&mut std::io::stdin().lock(), &mut std::io::stdout().lock()),
    }
}

/// One byte to a child and back, `trips` times, one at a time, over a pipe or TCP: what
/// waking another process and being woken by it costs on this machine, with no server's
/// work at all.
fn round_trip(trips: u64, over: &str) -> Value {
    let me = std::env::current_exe().expect("the driver's own path");
    let mut command = Command::new(me);
    command.arg("echo");
    let (mut child, mut to, mut from): (Child, Box<dyn Write>, Box<dyn Read>) = match over {
        "tcp" => {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let child = command
                .arg(port.to_string())
                .spawn()
                .expect("cannot start the echo child");
            let (stream, _) = listener.accept().unwrap();
            stream.set_nodelay(true).unwrap();
            (
                child,
                Box::new(stream.try_clone().unwrap()),
                Box::new(stream),
            )
        }
        _ => {
            let mut child = command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("cannot start the echo child");
            let (to, from) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
            (child, Box::new(to), Box::new(from))
        }
    };
    let (me, them) = (std::process::id(), child.id());
    let (mine_before, theirs_before) = (cpu_ns(me), cpu_ns(them));
    let began = Instant::now();
    let mut byte = [7u8; 1];
    for _ in 0..trips {
        to.write_all(&byte).unwrap();
        from.read_exact(&mut byte).unwrap();
    }
    let elapsed = began.elapsed();
    let (mine, theirs) = (cpu_ns(me) - mine_before, cpu_ns(them) - theirs_before);
    drop((to, from));
    let _ = child.wait();
    json!({
        "over": over,
        "round_trips": trips,
        "us_per_round_trip": elapsed.as_secs_f64() * 1e6 / trips as f64,
        "cpu_us_per_round_trip": mine as f64 / 1000.0 / trips as f64,
        "child_cpu_us_per_round_trip": theirs as f64 / 1000.0 / trips as f64,
    })
}

/// On-CPU nanoseconds of every thread of the process so far.
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|text| {
            text.split_whitespace()
                .next()
                .and_then(|ns| ns.parse::<u64>().ok())
        })
        .sum()
}

fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1e6
}

/// The protocol version the driver speaks: 2025-11-25 for tasks, else 2025-06-18 (which
/// every server here serves).
fn version(tool: &str) -> &'static str {
    match tool {
        "task" => "2025-11-25",
        _ => "2025-06-18",
    }
}

fn initialize(id: u64, tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version(tool), "capabilities": {},
        "clientInfo": {"name": "driver", "version": "1"}
    }})
    .to_string()
}

fn call(id: u64, tool: &str) -> String {
    match tool {
        "list" => json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string(),
        "task" => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "wait_task", "arguments": {"ms": 0}, "task": {}
        }})
        .to_string(),
        name => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": name, "arguments": {"a": id, "b": 1}
        }})
        .to_string(),
    }
}

/// Whether `answer` is the right result for request `id`.
fn check(answer: &Value, id: u64, tool: &str) -> bool {
    let result = &answer["result"];
    if tool == "task" {
        return result["task"]["taskId"].is_string();
    }
    if tool == "list" {
        return result["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty());
    }
    let expected = id + 1;
    result["structuredContent"]["result"] == expected
        || result["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.trim() == expected.to_string())
}

fn stdio(mode: &str, requests: u64, tool: &str, command: &[String]) -> Value {
    let started = Instant::now();
    let mut child = spawn(command, Stdio::piped(), Stdio::piped());
    let pid = child.id();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    writeln!(input, "{}", initialize(0, tool)).unwrap();
    input.flush().unwrap();
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    let startup = started.elapsed();
    assert!(line.contains("\"result\""), "initialize failed: {line}");
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    // Warm up: the first calls pay for lazy work (validators, pages).
    for id in 1..=100 {
        writeln!(input, "{}", call(id, tool)).unwrap();
        input.flush().unwrap();
        line.clear();
        output.read_line(&mut line).unwrap();
    }

    let base = 1_000;
    let sent_at: Arc<Mutex<Vec<Option<Instant>>>> =
        Arc::new(Mutex::new(vec![None; requests as usize]));
    let window = Arc::new((Mutex::new(0usize), Condvar::new()));
    let cpu_before = cpu_ns(pid);
    let began = Instant::now();
    let reader = {
        let sent_at = Arc::clone(&sent_at);
        let window = Arc::clone(&window);
        let tool = tool.to_owned();
        std::thread::spawn(move || {
            let mut latencies = Vec::with_capacity(requests as usize);
            let mut wrong = 0u64;
            let mut seen = vec![false; requests as usize];
            let mut line = String::new();
            for _ in 0..requests {
                line.clear();
                if output.read_line(&mut line).unwrap() == 0 {
                    panic!("the server closed its output");
                }
                let now = Instant::now();
                let answer: Value = serde_json::from_str(&line).unwrap();
                let id = answer["id"].as_u64().expect("an id");
                let index = (id - base) as usize;
                assert!(!seen[index], "response {id} arrived twice");
                seen[index] = true;
                if !check(&answer, id, &tool) {
                    wrong += 1;
                }
                let sent = sent_at.lock().unwrap()[index].expect("sent before answered");
                latencies.push(now - sent);
                let (lock, ready) = &*window;
                *lock.lock().unwrap() -= 1;
                ready.notify_one();
            }
            (latencies, wrong)
        })
    };
    let limit = if mode == "sequential" { 1 } else { IN_FLIGHT };
    let mut batch = String::new();
    for i in 0..requests {
        {
            let (lock, ready) = &*window;
            let mut in_flight = lock.lock().unwrap();
            while *in_flight >= limit {
                in_flight = ready.wait(in_flight).unwrap();
            }
            *in_flight += 1;
        }
        batch.clear();
        batch.push_str(&call(base + i, tool));
        batch.push('\n');
        sent_at.lock().unwrap()[i as usize] = Some(Instant::now());
        input.write_all(batch.as_bytes()).unwrap();
        input.flush().unwrap();
    }
    let (mut latencies, wrong) = reader.join().unwrap();
    let elapsed = began.elapsed();
    let cpu = cpu_ns(pid) - cpu_before;
    let rss = peak_rss_kib(pid);
    drop(input);
    let _ = child.wait();
    latencies.sort();
    assert_eq!(wrong, 0, "{wrong} wrong results");
    json!({
        "transport": "stdio",
        "mode": mode,
        "tool": tool,
        "requests": requests,
        "rps": requests as f64 / elapsed.as_secs_f64(),
        "p50_us": percentile(&latencies, 0.5),
        "p99_us": percentile(&latencies, 0.99),
        "cpu_us_per_request": cpu as f64 / 1000.0 / requests as f64,
        "peak_rss_kib": rss,
        "startup_ms": startup.as_secs_f64() * 1000.0,
    })
}

/// Reads the JSON-RPC answer from a JSON or an SSE body.
fn answer_of(body: &str) -> Value {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return value;
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("id").is_some())
        .unwrap_or(Value::Null)
}

fn post(
    agent: &ureq::Agent,
    url: &str,
    session: Option<&str>,
    body: &str,
    tool: &str,
) -> (Option<String>, String) {
    try_post(agent, url, session, body, tool).unwrap_or_else(|e| panic!("POST failed: {e}"))
}

fn try_post(
    agent: &ureq::Agent,
    url: &str,
    session: Option<&str>,
    body: &str,
    tool: &str,
) -> Result<(Option<String>, String), ureq::Error> {
    let mut request = agent
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version(tool));
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let mut response = request.send(body)?;
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.body_mut().read_to_string().unwrap_or_default();
    Ok((session, text))
}

fn http(concurrency: usize, requests: u64, port: u16, tool: &str, command: &[String]) -> Value {
    let started = Instant::now();
    let mut child = spawn(command, Stdio::null(), Stdio::null());
    let pid = child.id();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut session = None;
    for _ in 0..400 {
        if let Ok(response) = try_post(&agent, &url, None, &initialize(0, tool), tool) {
            session = response.0;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let startup = started.elapsed();
    post(
        &agent,
        &url,
        session.as_deref(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        tool,
    );
    for id in 1..=50 {
        post(&agent, &url, session.as_deref(), &call(id, tool), tool);
    }
    let per_client = requests / concurrency as u64;
    let cpu_before = cpu_ns(pid);
    let began = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|worker| {
            let url = url.clone();
            let session = session.clone();
            let tool = tool.to_owned();
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                let mut latencies = Vec::with_capacity(per_client as usize);
                let mut wrong = 0;
                for i in 0..per_client {
                    let id = 1_000 + worker as u64 * per_client + i;
                    let sent = Instant::now();
                    let (_, body) = post(&agent, &url, session.as_deref(), &call(id, &tool), &tool);
                    latencies.push(sent.elapsed());
                    if !check(&answer_of(&body), id, &tool) {
                        wrong += 1;
                    }
                }
                (latencies, wrong)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut wrong = 0;
    for worker in workers {
        let (l, w) = worker.join().unwrap();
        latencies.extend(l);
        wrong += w;
    }
    let elapsed = began.elapsed();
    let cpu = cpu_ns(pid) - cpu_before;
    let rss = peak_rss_kib(pid);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(wrong, 0, "{wrong} wrong results");
    latencies.sort();
    let total = per_client * concurrency as u64;
    json!({
        "transport": "http",
        "mode": format!("c{concurrency}"),
        "tool": tool,
        "requests": total,
        "rps": total as f64 / elapsed.as_secs_f64(),
        "p50_us": percentile(&latencies, 0.5),
        "p99_us": percentile(&latencies, 0.99),
        "cpu_us_per_request": cpu as f64 / 1000.0 / total as f64,
        "peak_rss_kib": rss,
        "startup_ms": startup.as_secs_f64() * 1000.0,
    })
}
