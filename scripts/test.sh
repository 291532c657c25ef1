#!/usr/bin/env bash
# The whole test suite: unit, integration, UI (trybuild) and doc tests, with tools
# registered through inventory (the default) and through linkme.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== tests, inventory registration"
cargo test --workspace
echo "== tests, linkme registration"
cargo test --workspace --features tool-runtime/linkme
