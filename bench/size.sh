#!/usr/bin/env bash
# Release binary size of the four benchmark tools served over stdio and HTTP: ours
# (`servers/ours`, the defaults and `http`) against the tuned rmcp server of the same tools
# with Streamable HTTP (`servers/rmcp`). Both as cargo builds them (symbols kept) and stripped.
# Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")"
target="$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
cargo build --release -p bench-ours -p bench-rmcp >&2
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
size() { stat -c %s "$1"; }
stripped() { strip -o "$scratch/stripped" "$1" && size "$scratch/stripped"; }
mb() { python3 -c "print(f'{$1 / 1e6:.2f} MB')"; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
ours="$target/release/bench-ours"
rmcp="$target/release/rmcp-tuned"
echo "| release binary | tool-runtime | rmcp 3.9.0 | ratio |"
echo "| --- | --- | --- | --- |"
echo "| as built | $(mb "$(size "$ours")") | $(mb "$(size "$rmcp")") | $(ratio "$(size "$ours")" "$(size "$rmcp")") |"
echo "| stripped | $(mb "$(stripped "$ours")") | $(mb "$(stripped "$rmcp")") | $(ratio "$(stripped "$ours")" "$(stripped "$rmcp")") |"
