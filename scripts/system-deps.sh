#!/usr/bin/env bash
# Makes sure the real parts the tests run are installed: redis-server and haproxy for the
# replica tests, Chromium and its ChromeDriver for the catalog page (Debian packages). Installs what is missing when it can (as root, with apt-get), and
# otherwise says how, and fails: tests that need them never skip.
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]} (apt-get)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
        { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
    exit 0
fi
echo "error: the tests need ${missing[*]}; install them (Debian/Ubuntu: sudo apt-get install ${missing[*]}), or run this as root to let it install them" >&2
exit 1
