#!/usr/bin/env bash
# The official JSON-Schema-Test-Suite (draft 2020-12) against both of the runtime's
# validators. The suite is taken, pinned and checked by its hash, from the source
# distribution of the Python `jsonschema` package on PyPI (which carries it under
# `json/tests/`), unpacked under cargo's target directory, and read by the test
# `schema::suite` (ignored in a plain `cargo test`, which has no suite to read).
set -euo pipefail
cd "$(dirname "$0")/.."

version=4.25.1
sha256=e4a9655ce0da0c0b67a085847e00a3a51449e1157f4f75e9fb5aa545e122eb85
dir="$(bash scripts/target-dir.sh)/json-schema-test-suite"
suite="$dir/jsonschema-$version/json/tests/draft2020-12"

if [ ! -d "$suite" ]; then
    mkdir -p "$dir"
    archive="$dir/jsonschema-$version.tar.gz"
    # pip finds the package as the machine is set up to (an index, a mirror); the hash
    # pins the exact archive.
    python3 -m pip download --quiet --no-deps --no-binary :all: "jsonschema==$version" -d "$dir"
    python3 - "$archive" "$sha256" <<'PY'
import hashlib, sys
path, expected = sys.argv[1:]
got = hashlib.sha256(open(path, "rb").read()).hexdigest()
if got != expected:
    sys.exit(f"{path}: sha256 {got}, expected {expected}")
PY
    tar xzf "$archive" -C "$dir" "jsonschema-$version/json/tests/draft2020-12"
fi

JSON_SCHEMA_TEST_SUITE="$suite" cargo test -p tool-runtime --lib schema::suite -- --ignored --nocapture
