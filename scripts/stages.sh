# Stages of a test run: each runs whatever the ones before it ended with, and
# `stage_summary` prints one line per stage (PASS, FAIL or SKIP, and how long it took),
# then fails when any stage failed. Sourced by scripts/test.sh and .ci/run.
#
# Call `stage` as a plain statement, never inside `if`, `&&` or `||`: bash ignores `set -e`
# in anything run in such a context, also in a subshell that sets it again, and a stage
# must stop at its own first failing command.

stage_names=()
stage_results=()
stage_times=()

# stage NAME COMMAND [ARGUMENT...]: runs the command (a function too) with `set -e` in force.
stage() {
    local name="$1" started="$SECONDS" status had_e=0
    shift
    case $- in *e*) had_e=1 ;; esac
    echo "== $name"
    set +e
    (
        set -e
        "$@"
    )
    status=$?
    if [ "$had_e" -eq 1 ]; then set -e; fi
    if [ "$status" -eq 130 ] || [ "$status" -eq 143 ]; then stage_interrupted; fi
    stage_names+=("$name")
    stage_times+=("$((SECONDS - started))")
    if [ "$status" -eq 0 ]; then
        stage_results+=(PASS)
    else
        stage_results+=(FAIL)
        echo "== $name: FAILED (exit $status)" >&2
    fi
}

# stage_skip NAME WHY: a stage that could not run, because one it needs failed.
stage_skip() {
    echo "== $1: skipped ($2)"
    stage_names+=("$1 (skipped: $2)")
    stage_results+=(SKIP)
    stage_times+=(0)
}

# Whether the stage run last passed.
stage_passed() {
    [ "${stage_results[${#stage_results[@]}-1]}" = PASS ]
}

# One line per stage; fails when a stage failed or was skipped.
stage_summary() {
    local index failed=0 took
    echo "== summary"
    for index in "${!stage_names[@]}"; do
        took="${stage_times[$index]}"
        printf '%-4s %3dm%02ds  %s\n' "${stage_results[$index]}" $((took / 60)) $((took % 60)) \
            "${stage_names[$index]}"
        if [ "${stage_results[$index]}" != PASS ]; then failed=1; fi
    done
    return "$failed"
}

stage_interrupted() {
    echo "== interrupted" >&2
    stage_summary || true
    exit 130
}
trap stage_interrupted INT TERM
