#!/usr/bin/env bash
# What sharing state through Redis costs: the same binary (bench-ours-store) with its
# state in memory, then in a real redis-server, in interleaved rounds (ROUNDS, default 5):
# HTTP tools/call at 1 and 16 clients in one session (server CPU per request; Redis's own
# CPU is shown apart), and the p50 latency of creating a 2025-11-25 task. Prints a
# markdown table.
set -euo pipefail
cd "$(dirname "$0")"
rounds="${ROUNDS:-5}"
bash ../scripts/system-deps.sh
cargo build --release --quiet
# Wherever cargo puts its output (CARGO_TARGET_DIR included).
target="$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
bin="$target/release"
results="$target/store-$(date +%s).jsonl"
: > "$results"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
# On-CPU nanoseconds of a process so far (all its threads).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{sum += $1} END {print sum + 0}'; }

data="$(mktemp -d)"
redis_port="$(port)"
# Persistence as the deployment guide sets it: an append-only file, fsync every second.
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$data" --save "" \
    --appendonly yes --appendfsync everysec >/dev/null 2>&1 &
redis_pid=$!
trap 'kill "$redis_pid" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null; then break; fi
    sleep 0.05
done

record() { # mode scenario requests driver-args...
    local mode="$1" scenario="$2" requests="$3"
    shift 3
    local before after line
    before="$(cpu_ns "$redis_pid")"
    if line="$("$bin/driver" "$@" 2>/dev/null)"; then
        after="$(cpu_ns "$redis_pid")"
        local redis_us
        redis_us="$(python3 -c "print(($after - $before) / 1000 / $requests)")"
        echo "{\"mode\":\"$mode\",\"scenario\":\"$scenario\",\"redis_cpu_us\":$redis_us,\"data\":$line}" >> "$results"
    else
        echo "warning: $mode $scenario failed" >&2
    fi
}

for round in $(seq 1 "$rounds"); do
    echo "round $round of $rounds" >&2
    for mode in memory redis; do
        for scenario in "16 8000 add" "1 3000 add" "1 1000 task"; do
            read -r clients requests tool <<< "$scenario"
            p="$(port)"
            command=("$bin/bench-ours-store" serve --http "127.0.0.1:$p")
            if [ "$mode" = redis ]; then
                command+=(--store "redis://127.0.0.1:$redis_port/0" --store-prefix "bench-$round-$p")
            fi
            case "$tool" in
                task) label="task creation (2025-11-25), $clients client" ;;
                *) label="HTTP tools/call, $clients client(s)" ;;
            esac
            record "$mode" "$label" "$requests" http "$clients" "$requests" "$p" "$tool" -- "${command[@]}"
        done
    done
done
python3 - "$results" <<'PY'
import json, statistics, sys
from collections import defaultdict
runs, order = defaultdict(list), []
for line in open(sys.argv[1]):
    row = json.loads(line)
    if row["scenario"] not in order:
        order.append(row["scenario"])
    runs[(row["mode"], row["scenario"])].append(row)
def med(mode, scenario, get):
    values = [get(r) for r in runs[(mode, scenario)]]
    return statistics.median(values) if values else None
print("| scenario | metric | memory | Redis | Redis / memory |")
print("| --- | --- | --- | --- | --- |")
for scenario in order:
    metrics = [("server CPU µs/request", lambda r: r["data"]["cpu_us_per_request"]),
               ("Redis CPU µs/request", lambda r: r["redis_cpu_us"]),
               ("p50 µs", lambda r: r["data"]["p50_us"]),
               ("p99 µs", lambda r: r["data"]["p99_us"])]
    for label, get in metrics:
        memory, redis = med("memory", scenario, get), med("redis", scenario, get)
        ratio = "-" if not memory else f"{redis / memory:.2f}"
        if label.startswith("Redis CPU"):
            ratio = "-"
            memory = None
        show = lambda v: "-" if v is None else f"{v:,.2f}"
        print(f"| {scenario} | {label} | {show(memory)} | {show(redis)} | {ratio} |")
PY
