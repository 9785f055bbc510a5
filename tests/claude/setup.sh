#!/usr/bin/env bash
# Installs the real Claude Code CLI (pinned, from npm) into DIR for tests/all/claude_code.rs
# (idempotent, concurrency-safe): DIR/npm/node_modules/@anthropic-ai/claude-code-linux-x64/claude,
# DIR/ready written last with the pinned version. ../shared/reference/claude-code-offline.md has
# the facts this relies on.
# Usage: tests/claude/setup.sh DIR
# Silent on success; on failure prints a message to stderr and exits non-zero.
set -euo pipefail

CLAUDE_CODE_VERSION="2.1.332"     # npm: @anthropic-ai/claude-code (native binary, linux-x64)

# shellcheck source=tests/setup-lib.sh
. "$(dirname "$0")/../setup-lib.sh"
setup_begin tests/claude/setup.sh "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" "$@"
mkdir -p "$DIR/npm"
if [ ! -f "$DIR/npm/package.json" ]; then
    echo '{"name":"janua-claude-code-tests","private":true}' >"$DIR/npm/package.json"
fi
# --ignore-scripts: the postinstall only links the platform binary, which is run directly.
run npm install --prefix "$DIR/npm" --no-audit --no-fund --no-update-notifier --ignore-scripts \
    "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"
BIN="$DIR/npm/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
[ -x "$BIN" ] || fail "missing $BIN"
run "$BIN" --version
setup_done
