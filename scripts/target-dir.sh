#!/usr/bin/env bash
# Prints cargo's target directory for this workspace (CARGO_TARGET_DIR, a config file or
# the default), as cargo itself resolves it: scripts never assume `target/`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
