#!/usr/bin/env bash
# The whole test suite: unit, integration, UI (trybuild) and doc tests, with tools
# registered through inventory (the default) and through linkme; then real MCP clients
# nobody here wrote: the official Python and TypeScript SDKs (the Python SDK's OAuth client
# too, against an authorization server of the test's own) and the official conformance
# suite, and the MCP Inspector's schema lint (installed by scripts/client-env.sh, pinned,
# under cargo's target directory); then the conformance suite again through a real HAProxy
# over three replicas sharing a real Redis (both installed by scripts/system-deps.sh).
# Between them, every message the agent layer produces is checked against the request
# types of the providers' official Python SDKs (openai, anthropic, google-genai), the
# OpenAPI document by a validator and a generic client, and the catalog page in a real
# headless Chromium (installed by scripts/system-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# The tests of replicas run a real redis-server and a real HAProxy.
bash scripts/system-deps.sh

echo "== tests, inventory registration"
cargo test --workspace
echo "== tests, linkme registration"
cargo test --workspace --features tool-runtime/linkme
echo "== the default features alone: a flag whose feature is left out says which to enable"
cargo test -p tool-runtime --lib cli::missing

echo "== real MCP clients"
eval "$(bash scripts/client-env.sh)"
cargo build --quiet -p examples --bin conformance-server -p tool-tests --bin ops-tools --bin agent-tools
binaries="$(bash scripts/target-dir.sh)/debug"
server="$binaries/conformance-server"
"$CLIENT_PYTHON" tests/clients/python_clients.py "$server"
"$CLIENT_PYTHON" tests/clients/python_oauth.py "$binaries/ops-tools"
node tests/clients/typescript_clients.mjs "$server"
echo "== what the agent layer hands each provider, against the providers' own SDK types"
"$CLIENT_PYTHON" tests/clients/provider_types.py "$binaries/agent-tools" tests/golden/agent
echo "== the REST endpoints as OpenAPI 3.1: a validator and a generic client"
"$CLIENT_PYTHON" tests/clients/openapi_check.py "$binaries/agent-tools"
echo "== the catalog page in headless Chromium"
"$CLIENT_PYTHON" tests/clients/catalog_page.py "$binaries/agent-tools"
bash scripts/inspector-strict.sh
bash scripts/conformance.sh
echo "== the conformance suite through HAProxy, over three replicas sharing Redis"
bash scripts/replicas.sh
