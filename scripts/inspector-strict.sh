#!/usr/bin/env bash
# The MCP Inspector's schema portability lint (`--strict`) over every catalog this
# repository serves: the example servers and the test servers. A tool list passes only with
# no error and no warning. Needs the environment of scripts/client-env.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CONFORMANCE_DIR:?source scripts/client-env.sh first}"

cargo build --quiet -p workspace-tools -p examples -p tool-tests --bins
bin="$(bash scripts/target-dir.sh)/debug"
inspector="$CONFORMANCE_DIR/.bin/mcp-inspector"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT

failed=0
for server in "workspace-tools --root . serve" "weather serve" "cleanup serve" "conformance-server serve" \
    "travel-tools serve" "stall-tools serve"; do
    # shellcheck disable=SC2086 # the server's command line is split on purpose
    if ! "$inspector" --cli --method tools/list --strict "$bin"/$server >/dev/null 2>"$report"; then
        echo "inspector --strict: ${server%% *} failed" >&2
        cat "$report" >&2
        failed=1
    elif grep -qiE '^(warning|error)' "$report" || grep -qE '[1-9][0-9]* (error|warning)' "$report"; then
        echo "inspector --strict: ${server%% *} has findings" >&2
        cat "$report" >&2
        failed=1
    else
        echo "inspector --strict: ${server%% *}: no error, no warning"
    fi
done
exit "$failed"
