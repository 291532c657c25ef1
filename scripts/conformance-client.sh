#!/usr/bin/env bash
# Runs every client scenario of the official MCP conformance suite against the fixture
# client (examples/src/bin/conformance-client/): each scenario the 0.1 release lists, and
# each the 0.2.0-alpha release lists at 2025-03-26, 2025-11-25 and 2026-07-28, the
# authorization ones included; then the extension scenarios (which the suite runs only
# when forced), in both eras. The scenarios come from the suite's own list, so a scenario
# it adds is run too. A scenario passes when the suite says so and at least one of its
# checks succeeded (one whose checks were all skipped tested nothing). Prints one line per
# scenario and a summary line; exits non-zero when any scenario fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
client_env="$(bash scripts/client-env.sh)"
eval "$client_env"
target="$(bash scripts/target-dir.sh)"
logs="$target/conformance-client"
mkdir -p "$logs"
cargo build --quiet -p examples --bin conformance-client
client="$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug/conformance-client"

# The scenarios a release lists, one name per line (`  - name [versions]`).
listed() { # PACKAGE [LIST ARGS...]
    local package="$1"
    shift
    node "$CONFORMANCE_DIR/$package/dist/index.js" list --client "$@" |
        sed -n 's/^  - \([^ ]*\).*/\1/p'
}

passed=0
failed=0
run() { # LABEL PACKAGE SCENARIO [CLIENT ARGS...]
    local label="$1" package="$2" scenario="$3"
    shift 3
    local log="$logs/$label-${scenario//\//_}.log"
    if node "$CONFORMANCE_DIR/$package/dist/index.js" client --command "$client" \
        --scenario "$scenario" "$@" >"$log" 2>&1; then
        if grep -q "^SKIPPED" "$log"; then
            echo "skipped  $label $scenario (not part of this protocol version)"
            passed=$((passed + 1))
        elif ! grep -q "SUCCESS" "$log"; then
            # A scenario whose checks were all skipped says it passed: it tested nothing.
            echo "FAILED   $label $scenario (no check succeeded: nothing was tested; see $log)"
            failed=$((failed + 1))
        else
            echo "passed   $label $scenario"
            passed=$((passed + 1))
        fi
    else
        echo "FAILED   $label $scenario (see $log)"
        failed=$((failed + 1))
    fi
    return 0
}

for scenario in $(listed conformance-2025); do
    run 0.1 conformance-2025 "$scenario"
done
versions=(2025-03-26 2025-11-25 2026-07-28)
for version in "${versions[@]}"; do
    for scenario in $(listed conformance-2026 --spec-version "$version"); do
        run "$version" conformance-2026 "$scenario" --spec-version "$version"
    done
done
# Extension scenarios belong to no protocol version: the suite runs them when forced, in
# the handshake era by default, and at 2026-07-28 when asked.
all="$(listed conformance-2026)"
versioned="$(for version in "${versions[@]}"; do listed conformance-2026 --spec-version "$version"; done | sort -u)"
for scenario in $(comm -23 <(echo "$all" | sort -u) <(echo "$versioned")); do
    run extension conformance-2026 "$scenario" --force
    run extension-2026-07-28 conformance-2026 "$scenario" --force --spec-version 2026-07-28
done
echo "conformance (client): $passed passed, $failed failed"
[ "$failed" -eq 0 ]
