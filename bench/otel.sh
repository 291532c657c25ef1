#!/usr/bin/env bash
# What traces cost a call: `tools/call add` in-process (criterion), built without the
# `otel` feature, built with it and no exporter (what every server pays for having it),
# and with its span exported (batched to an exporter that drops it). One run, so the
# figures are ratios against the build without traces measured beside them.
set -euo pipefail
cd "$(dirname "$0")"
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
call='^tools/call add \(request bytes to response bytes\)$'
cargo bench -p micro --bench protocol -- --save-baseline without-otel "$call"
cargo bench -p micro --bench protocol --features otel -- --save-baseline with-otel \
    "$call|^tools/call add, its span exported$"
python3 - "$target/criterion" <<'PY'
import json, sys
root = sys.argv[1]
def ns(name, baseline):
    with open(f"{root}/{name}/{baseline}/estimates.json") as f:
        return json.load(f)["median"]["point_estimate"]
plain = "tools_call add (request bytes to response bytes)"
base = ns(plain, "without-otel")
rows = [("built without otel", base), ("built with otel, nothing exported", ns(plain, "with-otel")),
        ("built with otel, its span exported", ns("tools_call add, its span exported", "with-otel"))]
print(f"{'tools/call add':40} {'median':>10} {'ratio':>7}")
for label, value in rows:
    print(f"{label:40} {value / 1000:9.2f}µs {value / base:6.2f}x")
PY
