#!/usr/bin/env bash
# Installs the real Claude Code CLI (pinned, from npm) into DIR for tests/all/claude_code.rs
# (idempotent, concurrency-safe): DIR/npm/node_modules/@anthropic-ai/claude-code-linux-x64/claude,
# DIR/ready written last with the pinned version. ../shared/reference/claude-code-offline.md has
# the facts this relies on.
# Usage: tests/claude/setup.sh DIR
# Silent on success; on failure prints a message to stderr and exits non-zero.
set -euo pipefail

CLAUDE_CODE_VERSION="2.1.332"     # npm: @anthropic-ai/claude-code (native binary, linux-x64)

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
DIR="$1"
MARKER="@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"
is_ready() { [ -f "$DIR/ready" ] && [ "$(cat "$DIR/ready")" = "$MARKER" ]; }
if is_ready; then
    exit 0
fi
fail() {
    echo "tests/claude/setup.sh: FAILED: $*" >&2
    exit 1
}
mkdir -p "$DIR" || fail "cannot create $DIR"
DIR="$(cd "$DIR" && pwd)"
exec 9>"$DIR/.lock"
flock 9 || fail "cannot lock $DIR/.lock"
if is_ready; then
    exit 0
fi
rm -f "$DIR/ready"
LOG="$DIR/setup.log"
: >"$LOG"
mkdir -p "$DIR/npm"
if [ ! -f "$DIR/npm/package.json" ]; then
    echo '{"name":"janua-claude-code-tests","private":true}' >"$DIR/npm/package.json"
fi
# --ignore-scripts: the postinstall only links the platform binary, which is run directly.
if ! npm install --prefix "$DIR/npm" --no-audit --no-fund --no-update-notifier --ignore-scripts \
    "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" >>"$LOG" 2>&1; then
    cat "$LOG" >&2
    fail "npm install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} (log: $LOG)"
fi
BIN="$DIR/npm/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
[ -x "$BIN" ] || fail "missing $BIN"
"$BIN" --version >>"$LOG" 2>&1 || fail "$BIN --version failed (log: $LOG)"
echo "$MARKER" >"$DIR/ready"
