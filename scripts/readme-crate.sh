#!/usr/bin/env bash
# What README.md tells a new user to do, done as written: a new crate, the `cargo add`
# lines of "In your own crate" (the clone's path put in for the placeholder), and the
# example of "A tool" as its `main`, which asserts what the README says it gives.
set -euo pipefail
cd "$(dirname "$0")/.."
repository="$PWD"
# The new crate lives outside this repository (inside it, `cargo new` would make it a
# member of this workspace); its build is kept under cargo's target directory.
export CARGO_TARGET_DIR="$(bash scripts/target-dir.sh)/readme-crate"
work="$(mktemp -d "${TMPDIR:-/tmp}/readme-crate.XXXXXX")"
trap 'rm -rf "$work"' EXIT

python3 - "$repository/README.md" "$work" <<'PY'
import re, sys
readme, work = open(sys.argv[1]).read(), sys.argv[2]
section = readme.split("### In your own crate", 1)[1]
commands = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
adds = [line.split("#", 1)[0].strip() for line in commands.splitlines() if line.startswith("cargo add")]
if len(adds) < 3:
    sys.exit(f"README.md: expected the cargo add lines of 'In your own crate', found {adds}")
open(f"{work}/adds.sh", "w").write("\n".join(adds) + "\n")
example = readme.split("## A tool", 1)[1]
code = re.search(r"```rust\n(.*?)```", example, re.S).group(1)
open(f"{work}/main.rs", "w").write(code)
PY

cd "$work"
cargo new --quiet --bin my-tools
cd my-tools
sed "s#/where/you/cloned/this/repository#$repository#" ../adds.sh | while read -r line; do
    echo "+ $line"
    # Each line exactly as the README has it (word splitting as a shell would do it).
    eval "$line --quiet"
done
cp ../main.rs src/main.rs
cargo run --quiet
echo "the README's crate builds and its example's assertions hold"
