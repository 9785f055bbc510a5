#!/usr/bin/env bash
# Builds the janua wheel with maturin as a release does (the binary inside, `bindings = "bin"`),
# but with the dev profile and stripped, so it reuses the test build's artifacts. Installs it
# into a fresh venv and checks, with no JANUA_BIN and no activated environment, that the package
# finds its bundled binary and answers a call through it.
# Usage: python/check-wheel.sh TOOLS_DIR   (TOOLS_DIR as for tests/mcp/setup.sh, which pins maturin)
# Silent on success; on failure prints what went wrong and exits non-zero.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 TOOLS_DIR" >&2
    exit 2
fi
PYTHON_DIR="$(cd "$(dirname "$0")" && pwd)"
bash "$PYTHON_DIR/../tests/mcp/setup.sh" "$1"
TOOLS="$(cd "$1" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() {
    echo "python/check-wheel.sh: FAILED: $*" >&2
    exit 1
}

(cd "$PYTHON_DIR" && "$TOOLS/venv/bin/maturin" build --quiet --profile dev --strip -o "$WORK/wheels") \
    >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; fail "maturin build"; }
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index \
    "$WORK"/wheels/janua-*.whl || fail "pip install of the wheel"
[ -x "$WORK/venv/bin/janua" ] || fail "the wheel did not install the janua binary"

mkdir "$WORK/project"
printf 'hello from the wheel\n' >"$WORK/project/notes.txt"
cd "$WORK/project"
env -u JANUA_BIN HOME="$WORK" XDG_STATE_HOME="$WORK/state" XDG_CONFIG_HOME="$WORK/config" \
    "$WORK/venv/bin/python" - "$WORK/venv/bin/janua" <<'PY' || fail "the installed package"
import asyncio, sys
import janua

assert janua.find_janua() == sys.argv[1], (janua.find_janua(), sys.argv[1])

async def main():
    async with janua.Session(".", allowed_tools=["Read"]) as session:
        return await session.dispatch({"id": "w1", "name": "Read", "input": {"file_path": "notes.txt"}})

result = asyncio.run(main())
assert result["is_error"] is False and "hello from the wheel" in result["content"], result
PY
