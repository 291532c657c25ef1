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

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
wait_for() { # port what
    for _ in $(seq 1 200); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.05
    done
    echo "error: $2 did not listen on 127.0.0.1:$1" >&2
    return 1
}

pids=()
trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT

redis_port="$(free_port)"
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$logs/redis" --save "" \
    --appendonly yes --appendfsync everysec >"$logs/redis.log" 2>&1 &
pids+=($!)
wait_for "$redis_port" redis-server

export MCP_STORE="redis://127.0.0.1:$redis_port/0"
export MCP_STORE_PREFIX="conformance-$$"
for n in 1 2 3; do
    port="$(free_port)"
    "$server" serve --http "127.0.0.1:$port" 2>"$logs/replica-$n.log" &
    pids+=($!)
    wait_for "$port" "replica $n"
    export "MCP_REPLICA_$n=127.0.0.1:$port"
done

lb_port="$(free_port)"
export MCP_LB_ADDRESS="127.0.0.1:$lb_port"
haproxy -f examples/deploy/haproxy.cfg -db >"$logs/haproxy.log" 2>&1 &
pids+=($!)
wait_for "$lb_port" haproxy
# Ready once every replica passed its health checks (two, 500 ms apart).
for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$lb_port/readyz" >/dev/null 2>&1; then break; fi
    sleep 0.1
done
sleep 1.2

CONFORMANCE_URL="http://127.0.0.1:$lb_port/mcp" CONFORMANCE_LABEL=replicas \
    bash scripts/conformance.sh
