#!/usr/bin/env bash
# Runs every server scenario of the official MCP conformance suite against the fixture
# server (examples/src/bin/conformance-server/) over HTTP, for 2025-11-25 (release 0.1.x)
# and 2026-07-28 (release 0.2.0-alpha), and the tasks extension. Prints one line per
# scenario and a summary line; exits non-zero when any scenario fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
client_env="$(bash scripts/client-env.sh)"
eval "$client_env"
target="$(bash scripts/target-dir.sh)"
# CONFORMANCE_URL names a server already running (replicas behind a balancer, say), and
# CONFORMANCE_LABEL tells its logs apart; without it, the fixture is started here.
url="${CONFORMANCE_URL:-}"
logs="$target/conformance${CONFORMANCE_LABEL:+-$CONFORMANCE_LABEL}"
mkdir -p "$logs"
if [ -z "$url" ]; then
    cargo build --quiet -p examples --bin conformance-server
    server="$target/debug/conformance-server"
    source scripts/serving.sh
    env -u RUST_LOG "$server" serve --http "127.0.0.1:0" 2>"$logs/server.log" &
    server_pid=$!
    trap 'kill "$server_pid" 2>/dev/null || true' EXIT
    port="$(serving_port "$logs/server.log" "$server_pid" "the conformance server")"
    url="http://127.0.0.1:$port/mcp"
fi

scenarios=(server-initialize ping tools-list tools-call-simple-text tools-call-image
    tools-call-audio tools-call-embedded-resource tools-call-mixed-content
    tools-call-with-logging tools-call-error tools-call-with-progress dns-rebinding-protection
    resources-list resources-read-text resources-read-binary resources-templates-read
    resources-subscribe resources-unsubscribe prompts-list prompts-get-simple
    prompts-get-with-args prompts-get-embedded-resource prompts-get-with-image
    completion-complete tools-call-sampling tools-call-elicitation
    elicitation-sep1034-defaults elicitation-sep1330-enums json-schema-2020-12
    logging-set-level server-sse-polling server-sse-multiple-streams)
# Scenarios only the 0.2 releases have.
scenarios_0_2=(server-session-lifecycle http-header-validation http-custom-header-server-validation
    sep-2164-resource-not-found caching server-stateless
    input-required-result-basic-elicitation input-required-result-basic-sampling
    input-required-result-basic-list-roots input-required-result-request-state
    input-required-result-multiple-input-requests input-required-result-multi-round
    input-required-result-missing-input-response input-required-result-non-tool-request
    input-required-result-result-type input-required-result-unsupported-methods
    input-required-result-tampered-state input-required-result-capability-check
    input-required-result-ignore-extra-params input-required-result-validate-input)

passed=0
failed=0
run() {
    local label="$1" package="$2"
    shift 2
    local all=("${scenarios[@]}")
    if [ "$package" = conformance-2026 ]; then all+=("${scenarios_0_2[@]}"); fi
    for scenario in "${all[@]}"; do
        local log="$logs/$label-$scenario.log"
        if node "$CONFORMANCE_DIR/$package/dist/index.js" server --url "$url" --scenario "$scenario" "$@" >"$log" 2>&1; then
            if grep -q "^SKIPPED" "$log"; then
                echo "skipped  $label $scenario (not part of this protocol version)"
            else
                echo "passed   $label $scenario"
            fi
            passed=$((passed + 1))
        else
            echo "FAILED   $label $scenario (see $log)"
            failed=$((failed + 1))
        fi
    done
}
run 2025-11-25 conformance-2025
run 2025-11-25-alpha conformance-2026 --spec-version 2025-11-25
run 2026-07-28 conformance-2026 --spec-version 2026-07-28
# The tasks extension (io.modelcontextprotocol/tasks) at 2026-07-28: the suite skips
# extension scenarios unless forced.
scenarios=(tasks-lifecycle tasks-capability-negotiation tasks-wire-fields
    tasks-request-state-removal tasks-mrtr-input tasks-request-headers
    tasks-dispatch-and-envelope tasks-status-notifications tasks-required-task-error
    tasks-mrtr-composition)
scenarios_0_2=()
run 2026-07-28-tasks conformance-2026 --spec-version 2026-07-28 --force
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
