#!/usr/bin/env bash
# Builds every server in release mode and prints the tables: ours, rmcp as its examples
# show it, rmcp tuned, and the floor (serde_json on stdio; hyper alone over HTTP); then
# ours in front of another of ours through a mount, against calling that one directly and
# against a bare relay in front of it (the floor of a mount); and
# draws the same results as SVG charts in bench/charts/ (CPU and latency per scenario,
# start-up against the number of tools). Medians of ROUNDS interleaved rounds (default 3).
# Server CPU per request comes from /proc (user + system over all threads).
set -euo pipefail
cd "$(dirname "$0")"
rounds="${ROUNDS:-3}"
cargo build --release --quiet
# Wherever cargo puts its output (CARGO_TARGET_DIR included).
target="$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
bin="$target/release"
driver="$bin/driver"
results="$target/results-$(date +%s).jsonl"
: > "$results"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

record() { # label scenario driver-args...
    local label="$1" scenario="$2"
    shift 2
    if line="$("$driver" "$@" 2>/dev/null)"; then
        echo "{\"server\":\"$label\",\"scenario\":\"$scenario\",\"data\":$line}" >> "$results"
    else
        echo "{\"server\":\"$label\",\"scenario\":\"$scenario\",\"data\":null}" >> "$results"
        echo "warning: $label $scenario failed" >&2
    fi
}

declare -A stdio=(
    [ours]="$bin/bench-ours serve"
    [rmcp-tuned]="$bin/rmcp-tuned"
    [rmcp-example]="$bin/rmcp-example"
    [floor]="$bin/bench-floor"
)
for round in $(seq 1 "$rounds"); do
    echo "round $round of $rounds" >&2
    for server in ours rmcp-tuned rmcp-example floor; do
        # shellcheck disable=SC2086
        record "$server" "stdio tools/call, 64 in flight" stdio pipelined 20000 add -- ${stdio[$server]}
        # shellcheck disable=SC2086
        record "$server" "stdio tools/call, one at a time" stdio sequential 5000 add -- ${stdio[$server]}
        # shellcheck disable=SC2086
        record "$server" "stdio tools/list, 64 in flight" stdio pipelined 20000 list -- ${stdio[$server]}
    done
    for server in ours rmcp-tuned rmcp-example floor; do
        for concurrency in 1 16; do
            p="$(port)"
            case "$server" in
                ours) command=("$bin/bench-ours" serve --http "127.0.0.1:$p") ;;
                # hyper alone, answering each POST with the stdio floor's code.
                floor) command=("$bin/bench-floor" --http "127.0.0.1:$p") ;;
                # rmcp's stateful mode holds each answer's SSE stream open for tens of
                # milliseconds; its stateless JSON mode is what a careful user would pick.
                *) command=("$bin/$server" --http "127.0.0.1:$p" --stateless --json-response) ;;
            esac
            requests=$((concurrency == 1 ? 3000 : 8000))
            record "$server" "HTTP tools/call, $concurrency client(s)" http "$concurrency" "$requests" "$p" add -- "${command[@]}"
            # Ours again with an async add, which needs no hand-off to a thread of its own
            # (the others' add is served the same way in both rows).
            p="$(port)"
            case "$server" in
                ours) command=("$bin/bench-ours" serve --http "127.0.0.1:$p"); tool=add_async ;;
                floor) command=("$bin/bench-floor" --http "127.0.0.1:$p"); tool=add ;;
                *) command=("$bin/$server" --http "127.0.0.1:$p" --stateless --json-response); tool=add ;;
            esac
            record "$server" "HTTP tools/call of an async tool, $concurrency client(s)" http "$concurrency" "$requests" "$p" "$tool" -- "${command[@]}"
        done
    done
    # Start-up against the number of tools: the benchmark's five, 101 and 1,002. One
    # start is one sample, and a shared machine's noise is large next to it: five each.
    for sample in 1 2 3 4 5; do
        record "ours" "start-up with 5 tools" stdio sequential 200 add -- "$bin/bench-ours" serve
        record "ours" "start-up with 101 tools" stdio sequential 200 add -- "$bin/ours-100" serve
        record "ours" "start-up with 1,002 tools" stdio sequential 200 add -- "$bin/ours-1000" serve
    done
    # Through a mount: our server in front of another of ours, over stdio and over HTTP.
    # The CPU measured is the front server's: what the mount adds to a call (the upstream
    # spends what it spends when called directly).
    mount="up=$bin/bench-ours serve"
    record mounted "stdio tools/call, 64 in flight" stdio pipelined 20000 up_add -- "$bin/bench-ours" serve --mount "$mount"
    record mounted "stdio tools/call, one at a time" stdio sequential 5000 up_add -- "$bin/bench-ours" serve --mount "$mount"
    # The floor of a mount: a relay that only renames the tool and passes bytes on (one
    # request at a time, so only beside the mount's one-at-a-time row).
    record floor-relay "stdio tools/call, one at a time" stdio sequential 5000 up_add -- "$bin/bench-floor" --relay "$bin/bench-ours" serve
    for concurrency in 1 16; do
        up="$(port)"
        "$bin/bench-ours" serve --http "127.0.0.1:$up" 2>/dev/null &
        upstream=$!
        python3 -c 'import socket, sys, time
for _ in range(400):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.1).close(); break
    except OSError:
        time.sleep(0.025)' "$up"
        p="$(port)"
        requests=$((concurrency == 1 ? 3000 : 8000))
        record mounted "HTTP tools/call, $concurrency client(s)" http "$concurrency" "$requests" "$p" up_add -- \
            "$bin/bench-ours" serve --http "127.0.0.1:$p" --mount "up=http://127.0.0.1:$up/mcp"
        p="$(port)"
        record floor-relay "HTTP tools/call, $concurrency client(s)" http "$concurrency" "$requests" "$p" up_add -- \
            "$bin/bench-floor" --http "127.0.0.1:$p" --relay-to "http://127.0.0.1:$up/mcp"
        kill "$upstream" 2>/dev/null || true
        wait "$upstream" 2>/dev/null || true
    done
done
python3 table.py "$results"
# The same run as pictures, for BENCHMARKS.md (committed beside it).
python3 charts.py "$results" charts
