# Sourced by the scripts that install pinned external test tooling (tests/mcp/setup.sh,
# tests/claude/setup.sh): the usage check, the ready marker, the lock and the log they share.
#
#   setup_begin NAME MARKER "$@"   checks the arguments (one: DIR); exits 0 at once when DIR/ready
#                                  holds MARKER; otherwise creates DIR, takes DIR/.lock (so
#                                  concurrent installs wait for one another), and sets DIR
#                                  (absolute) and LOG (DIR/setup.log, emptied)
#   run CMD ARGS...                runs a command quietly; on failure shows the log and exits 1
#   fail MESSAGE                   prints "NAME: FAILED: MESSAGE" to stderr and exits 1
#   setup_done                     writes DIR/ready (MARKER) last, atomically

setup_begin() {
    SETUP_NAME="$1"
    SETUP_MARKER="$2"
    shift 2
    if [ $# -ne 1 ] || [ -z "$1" ]; then
        echo "usage: $SETUP_NAME DIR" >&2
        exit 2
    fi
    DIR="$1"
    # Fast path: no lock, no output.
    if setup_is_ready; then
        exit 0
    fi
    mkdir -p "$DIR" || fail "cannot create $DIR"
    DIR="$(cd "$DIR" && pwd)"
    exec 9>"$DIR/.lock"
    flock 9 || fail "cannot lock $DIR/.lock"
    # Another process may have finished the install while this one waited for the lock.
    if setup_is_ready; then
        exit 0
    fi
    rm -f "$DIR/ready"
    LOG="$DIR/setup.log"
    : >"$LOG"
}

setup_is_ready() { [ -f "$DIR/ready" ] && [ "$(cat "$DIR/ready")" = "$SETUP_MARKER" ]; }

fail() {
    echo "$SETUP_NAME: FAILED: $*" >&2
    exit 1
}

run() {
    if ! "$@" >>"$LOG" 2>&1; then
        cat "$LOG" >&2
        fail "command failed: $*  (log: $LOG)"
    fi
}

setup_done() {
    printf '%s' "$SETUP_MARKER" >"$DIR/ready.tmp"
    mv -f "$DIR/ready.tmp" "$DIR/ready"
}
