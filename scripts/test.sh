#!/usr/bin/env bash
# The whole test suite: unit, integration, UI (trybuild) and doc tests, with tools
# registered through inventory (the default) and through linkme; then real MCP clients
# nobody here wrote: the official Python and TypeScript SDKs and the official conformance
# suite (installed by scripts/client-env.sh, pinned, under target/).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== tests, inventory registration"
cargo test --workspace
echo "== tests, linkme registration"
cargo test --workspace --features tool-runtime/linkme

echo "== real MCP clients"
eval "$(bash scripts/client-env.sh)"
cargo build --quiet -p examples --bin conformance-server
"$CLIENT_PYTHON" tests/clients/python_clients.py target/debug/conformance-server
node tests/clients/typescript_clients.mjs target/debug/conformance-server
bash scripts/conformance.sh
