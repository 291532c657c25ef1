# Waits for the servers a script starts (sourced): each wait ends as soon as the awaited
# thing happens, and fails loudly, with the end of the server's log, when it does not
# happen within a minute or the server ends first; none falls through.

# serving_port LOG PID WHAT: waits until the `serve --http` whose stderr goes to LOG (PID,
# named WHAT in messages) says where it serves; prints the port.
serving_port() {
    local log="$1" pid="$2" what="$3" line _
    for _ in $(seq 1 1200); do
        line="$(grep -m1 -o 'serving MCP over HTTP at http://[^/ ]*' "$log" 2>/dev/null || true)"
        if [ -n "$line" ]; then
            echo "${line##*:}"
            return 0
        fi
        if ! alive "$pid"; then
            serving_failed "$log" "$what ended before it served"
            return 1
        fi
        sleep 0.05
    done
    serving_failed "$log" "$what did not say where it serves within a minute"
    return 1
}

# wait_until LOG PID WHAT COMMAND...: runs COMMAND every 50 ms until it succeeds; fails as
# serving_port does.
wait_until() {
    local log="$1" pid="$2" what="$3" _
    shift 3
    for _ in $(seq 1 1200); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        if ! alive "$pid"; then
            serving_failed "$log" "$what: the process ended"
            return 1
        fi
        sleep 0.05
    done
    serving_failed "$log" "$what did not happen within a minute"
    return 1
}

alive() { # PID: running, and not a zombie
    kill -0 "$1" 2>/dev/null && [[ "$(ps -o stat= -p "$1" 2>/dev/null)" != Z* ]]
}

serving_failed() { # LOG WHY
    echo "error: $2; the end of its log ($1):" >&2
    tail -n 40 "$1" >&2 || true
}
