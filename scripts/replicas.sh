#!/usr/bin/env bash
# Three replicas of the conformance fixture sharing one real redis-server, behind a real
# HAProxy (examples/deploy/haproxy.cfg, round robin per request, health checks on
# /readyz), all on 127.0.0.1; then every server scenario of the official conformance suite
# through the balancer. Each process is stopped by its own process id at the end.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/system-deps.sh
cargo build --quiet -p examples --bin conformance-server
target="$(bash scripts/target-dir.sh)"
server="$target/debug/conformance-server"
logs="$target/replicas"
rm -rf "$logs"
mkdir -p "$logs/redis"

source scripts/serving.sh
# HAProxy names the replicas' ports up front, so they are chosen here, all at once (none
# twice), below the system's ephemeral range, where no outgoing connection takes them first;
# a replica that finds its port taken ends all the same, and serving_port says so.
read -r redis_port replica_port_1 replica_port_2 replica_port_3 lb_port stats_port \
    < <(python3 tests/clients/checks.py 6)

pids=()
trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT

redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$logs/redis" --save "" \
    --appendonly yes --appendfsync everysec >"$logs/redis.log" 2>&1 &
pids+=($!)
redis_answers() { [ "$(redis-cli -p "$redis_port" ping)" = PONG ]; }
wait_until "$logs/redis.log" "${pids[-1]}" "redis-server answering on $redis_port" redis_answers

export MCP_STORE="redis://127.0.0.1:$redis_port/0"
export MCP_STORE_PREFIX="conformance-$$"
# Each store command may take a test's patience: production's 500 ms is short for the Redis
# of a machine kept busy by other work, and a command past its limit changes what a replica
# does (a call not kept as a task), which is not what the conformance suite looks at.
export MCP_STORE_TIMEOUT="${TOOL_TESTS_PATIENCE_SECS:-30}s"
for n in 1 2 3; do
    port_variable="replica_port_$n"
    port="${!port_variable}"
    env -u RUST_LOG "$server" serve --http "127.0.0.1:$port" 2>"$logs/replica-$n.log" &
    pids+=($!)
    served="$(serving_port "$logs/replica-$n.log" "${pids[-1]}" "replica $n")"
    if [ "$served" != "$port" ]; then
        echo "error: replica $n serves on $served, not on $port" >&2
        exit 1
    fi
    export "MCP_REPLICA_$n=127.0.0.1:$port"
done

stats="127.0.0.1:$stats_port"
export MCP_LB_ADDRESS="127.0.0.1:$lb_port" MCP_STATS_ADDRESS="$stats"
haproxy -f examples/deploy/haproxy.cfg -f tests/fixtures/haproxy-stats.cfg -db \
    >"$logs/haproxy.log" 2>&1 &
pids+=($!)
# Ready once the balancer says every replica is UP (two good health checks in a row).
all_up() {
    [ "$(curl -fsS "http://$stats/stats;csv" |
        awk -F, '$1 == "replicas" && $2 ~ /^r[0-9]+$/ && $18 == "UP"' | wc -l)" -eq 3 ]
}
wait_until "$logs/haproxy.log" "${pids[-1]}" "every replica UP behind haproxy" all_up

CONFORMANCE_URL="http://127.0.0.1:$lb_port/mcp" CONFORMANCE_LABEL=replicas \
    bash scripts/conformance.sh
