#!/usr/bin/env bash
# Builds every server in release mode and prints the tables: ours, rmcp as its examples
# show it, rmcp tuned, and the floor (serde_json on stdio; hyper alone over HTTP); then
# ours in front of another of ours through a mount, against calling that one directly and
# against a bare relay in front of it (the floor of a mount); and
# draws the same results as SVG charts in bench/charts/ (CPU and latency per scenario,
# start-up against the number of tools). Medians of ROUNDS interleaved rounds (default 3).
# Server CPU per request comes from /proc (user + system over all threads).
#
# The mount's rows are measured twice: as the machine places the processes, and with every
# process of the row (driver, front server, upstream) on one CPU. On a virtual machine,
# waking a process whose CPU is idle can cost tens of microseconds of the woken process's
# CPU (the round-trip rows measure it with no server at all), and a call one at a time
# pays it on every hop; on one CPU that cost is gone and what is left is the servers' work.
#
# `bash run.sh mount` runs the mount's rows alone (with the direct calls they compare to).
set -euo pipefail
cd "$(dirname "$0")"
rounds="${ROUNDS:-3}"
only="${1:-all}"
if [ "$only" = mount ]; then
    cargo build --release --quiet -p bench-ours -p bench-floor -p driver
else
    cargo build --release --quiet
fi
# Wherever cargo puts its output (CARGO_TARGET_DIR included).
target="$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
bin="$target/release"
driver="$bin/driver"
results="$target/results-$(date +%s).jsonl"
pin=()
: > "$results"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

record() { # label scenario driver-args...
    local label="$1" scenario="$2"
    shift 2
    if line="$("${pin[@]}" "$driver" "$@" 2>/dev/null)"; then
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
# Every server called directly: the main table.
direct() {
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
}

# The direct calls the mount's rows compare to, when the main table is not run.
direct_of_mount() {
    record ours "stdio tools/call, 64 in flight" stdio pipelined 20000 add -- "$bin/bench-ours" serve
    record ours "stdio tools/call, one at a time" stdio sequential 5000 add -- "$bin/bench-ours" serve
    for concurrency in 1 16; do
        p="$(port)"
        requests=$((concurrency == 1 ? 3000 : 8000))
        record ours "HTTP tools/call, $concurrency client(s)" http "$concurrency" "$requests" "$p" add -- \
            "$bin/bench-ours" serve --http "127.0.0.1:$p"
    done
}

wait_for_port() {
    python3 -c 'import socket, sys, time
for _ in range(400):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.1).close(); break
    except OSError:
        time.sleep(0.025)' "$1"
}

# Through a mount: our server in front of another of ours, over stdio and over HTTP, with
# every process run by `pin` (nothing, or `taskset` to one CPU) and recorded as `mounted`
# and `floor-relay` plus `suffix`. The CPU measured is the front server's: what the mount
# adds to a call (the upstream spends what it spends when called directly).
mounted() {
    local suffix="$1" mount="up=$bin/bench-ours serve"
    record "mounted$suffix" "stdio tools/call, 64 in flight" stdio pipelined 20000 up_add -- "$bin/bench-ours" serve --mount "$mount"
    record "mounted$suffix" "stdio tools/call, one at a time" stdio sequential 5000 up_add -- "$bin/bench-ours" serve --mount "$mount"
    # The floor of a mount: a relay that only renames the tool and passes bytes on (one
    # request at a time, so only beside the mount's one-at-a-time row).
    record "floor-relay$suffix" "stdio tools/call, one at a time" stdio sequential 5000 up_add -- "$bin/bench-floor" --relay "$bin/bench-ours" serve
    for concurrency in 1 16; do
        up="$(port)"
        "${pin[@]}" "$bin/bench-ours" serve --http "127.0.0.1:$up" 2>/dev/null &
        upstream=$!
        wait_for_port "$up"
        p="$(port)"
        requests=$((concurrency == 1 ? 3000 : 8000))
        record "mounted$suffix" "HTTP tools/call, $concurrency client(s)" http "$concurrency" "$requests" "$p" up_add -- \
            "$bin/bench-ours" serve --http "127.0.0.1:$p" --mount "up=http://127.0.0.1:$up/mcp"
        p="$(port)"
        record "floor-relay$suffix" "HTTP tools/call, $concurrency client(s)" http "$concurrency" "$requests" "$p" up_add -- \
            "$bin/bench-floor" --http "127.0.0.1:$p" --relay-to "http://127.0.0.1:$up/mcp"
        kill "$upstream" 2>/dev/null || true
        wait "$upstream" 2>/dev/null || true
    done
}

# What waking a process and being woken back costs here, with no server at all: over a
# pipe (a hop on stdio) and over TCP on 127.0.0.1 (a hop over HTTP), labelled `where`.
round_trip() {
    local where="$1" over name line
    for over in pipe tcp; do
        name="$over"
        if [ "$over" = tcp ]; then name=TCP; fi
        if line="$("${pin[@]}" "$driver" round-trip 30000 "$over")"; then
            echo "{\"server\":\"machine\",\"scenario\":\"a $name round trip$where\",\"data\":$line}" >> "$results"
        else
            echo "warning: the $name round trip$where failed" >&2
        fi
    done
}

for round in $(seq 1 "$rounds"); do
    echo "round $round of $rounds" >&2
    pin=()
    if [ "$only" = mount ]; then direct_of_mount; else direct; fi
    mounted ""
    round_trip ""
    pin=(taskset -c 0)
    mounted " on one CPU"
    round_trip " on one CPU"
done
python3 table.py "$results"
if [ "$only" != mount ]; then
    # The same run as pictures, for BENCHMARKS.md (committed beside it).
    python3 charts.py "$results" charts
fi
