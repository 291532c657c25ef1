#!/usr/bin/env bash
# What traces cost a call: `tools/call add` in-process (criterion), built without the
# `otel` feature, built with it and nothing exported (what every server pays for having
# it), and with its span exported (batched to an exporter that drops it). The two builds
# run in turns, three rounds each, so that the machine's load weighs on both alike; the
# figures are medians over the rounds, as ratios against the build without traces.
set -euo pipefail
cd "$(dirname "$0")"
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
executable() { # FEATURES...: the bench binary cargo builds
    cargo bench -p micro --bench protocol --no-run --message-format=json "$@" |
        python3 -c 'import json, sys
found = [m["executable"] for m in map(json.loads, sys.stdin)
         if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "protocol"]
print(found[-1])'
}
without="$(executable)"
with="$(executable --features otel)"
export CRITERION_HOME="$target/criterion"
call='^tools/call add \(request bytes to response bytes\)$'
for round in 1 2 3; do
    "$without" --bench --save-baseline "without-otel-$round" "$call"
    "$with" --bench --save-baseline "with-otel-$round" "$call|^tools/call add, its span exported$"
done
python3 - "$CRITERION_HOME" <<'PY'
import json, statistics, sys
root = sys.argv[1]
def ns(name, baseline):
    values = []
    for round in (1, 2, 3):
        with open(f"{root}/{name}/{baseline}-{round}/estimates.json") as f:
            values.append(json.load(f)["median"]["point_estimate"])
    return statistics.median(values)
plain = "tools_call add (request bytes to response bytes)"
base = ns(plain, "without-otel")
rows = [("built without otel", base), ("built with otel, nothing exported", ns(plain, "with-otel")),
        ("built with otel, its span exported", ns("tools_call add, its span exported", "with-otel"))]
print(f"{'tools/call add':40} {'median':>10} {'ratio':>7}")
for label, value in rows:
    print(f"{label:40} {value / 1000:9.2f}µs {value / base:6.2f}x")
PY
