#!/usr/bin/env bash
# Installs the external test tooling into DIR (idempotent, concurrency-safe):
#   DIR/venv                      Python venv with the official MCP Python SDK, componentize-py
#                                 (builds the Python guest, example-tools/python-line-count) and
#                                 pytest (copied into a Bash sandbox test's workspace; runs the
#                                 janua Python package's suite), and the agent SDKs whose runners
#                                 that suite drives: anthropic, openai-agents; maturin, which
#                                 builds the package's wheel (python/check-wheel.sh); mypy,
#                                 which type-checks the package
#   DIR/npm/node_modules/.bin/    mcp-server-everything, mcp-server-filesystem
#   DIR/ready                     written last; holds the pinned versions
# Usage: tests/mcp/setup.sh DIR
# Silent on success; on failure prints a message to stderr and exits non-zero.
set -euo pipefail

MCP_PY_VERSION="2.3.0"                     # PyPI: mcp (needs Python >= 3.10)
SERVER_EVERYTHING_VERSION="2026.8.31"      # npm: @modelcontextprotocol/server-everything
SERVER_FILESYSTEM_VERSION="2026.8.31"      # npm: @modelcontextprotocol/server-filesystem
COMPONENTIZE_PY_VERSION="0.25.1"           # PyPI: componentize-py
PYTEST_VERSION="8.3.5"                     # PyPI: pytest (the Bash sandbox's test-runner test)
ANTHROPIC_VERSION="2.17.0"                 # PyPI: anthropic (its tool runner, python/tests)
OPENAI_AGENTS_VERSION="0.24.0"             # PyPI: openai-agents (its Runner, python/tests)
MATURIN_VERSION="1.9.4"                    # PyPI: maturin (python/check-wheel.sh)
MYPY_VERSION="2.4.1"                       # PyPI: mypy (tests/all/python_package.rs)

PYTHON="${PYTHON:-python3}"

# shellcheck source=tests/setup-lib.sh
. "$(dirname "$0")/../setup-lib.sh"
setup_begin tests/mcp/setup.sh "mcp==${MCP_PY_VERSION}
componentize-py==${COMPONENTIZE_PY_VERSION}
pytest==${PYTEST_VERSION}
anthropic==${ANTHROPIC_VERSION}
openai-agents==${OPENAI_AGENTS_VERSION}
maturin==${MATURIN_VERSION}
mypy==${MYPY_VERSION}
@modelcontextprotocol/server-everything@${SERVER_EVERYTHING_VERSION}
@modelcontextprotocol/server-filesystem@${SERVER_FILESYSTEM_VERSION}" "$@"

# Python SDK.
if [ ! -x "$DIR/venv/bin/python" ]; then
    run "$PYTHON" -m venv "$DIR/venv"
fi
run "$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "mcp==${MCP_PY_VERSION}" "componentize-py==${COMPONENTIZE_PY_VERSION}" \
    "pytest==${PYTEST_VERSION}" "anthropic==${ANTHROPIC_VERSION}" \
    "openai-agents==${OPENAI_AGENTS_VERSION}" "maturin==${MATURIN_VERSION}" \
    "mypy==${MYPY_VERSION}"
[ -x "$DIR/venv/bin/componentize-py" ] || fail "missing $DIR/venv/bin/componentize-py"
[ -x "$DIR/venv/bin/maturin" ] || fail "missing $DIR/venv/bin/maturin"
[ -x "$DIR/venv/bin/mypy" ] || fail "missing $DIR/venv/bin/mypy"
run "$DIR/venv/bin/python" -c "import mcp, mcp.client.stdio; from mcp import ClientSession, StdioServerParameters"
run "$DIR/venv/bin/python" -c "from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool, ToolError; from agents import FunctionTool, Runner"

# Reference servers (own package.json so npm does not walk up to a parent project).
mkdir -p "$DIR/npm"
if [ ! -f "$DIR/npm/package.json" ]; then
    echo '{"name":"janua-mcp-test-servers","private":true}' >"$DIR/npm/package.json"
fi
run npm install --prefix "$DIR/npm" --no-audit --no-fund --no-update-notifier \
    --loglevel=error --save-exact \
    "@modelcontextprotocol/server-everything@${SERVER_EVERYTHING_VERSION}" \
    "@modelcontextprotocol/server-filesystem@${SERVER_FILESYSTEM_VERSION}"
for bin in mcp-server-everything mcp-server-filesystem; do
    [ -x "$DIR/npm/node_modules/.bin/$bin" ] || fail "missing $DIR/npm/node_modules/.bin/$bin"
done

setup_done
