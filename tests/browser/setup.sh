#!/usr/bin/env bash
# Provisions a headless Chromium for the Browser tests on a machine without Debian's `chromium`
# (idempotent, concurrency-safe). The binary comes from the npm registry's @sparticuz/chromium,
# which ships Chromium's headless shell inside the package (brotli-compressed; no download from
# anywhere else at install time):
#   DIR/npm/                  the npm package as installed
#   DIR/chromium/chromium     the browser, with its SwiftShader libraries beside it
#   DIR/ready                 written last; holds the pinned version
# Usage: tests/browser/setup.sh DIR     (prints the browser's path on success)
# Needs node and npm. On failure prints a message to stderr and exits non-zero.
set -euo pipefail

CHROMIUM_VERSION="153.0.0"                 # npm: @sparticuz/chromium (Chromium 153)

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
DIR="$1"
MARKER="@sparticuz/chromium@${CHROMIUM_VERSION}"

is_ready() { [ -f "$DIR/ready" ] && [ "$(cat "$DIR/ready")" = "$MARKER" ] && [ -x "$DIR/chromium/chromium" ]; }
done_path() { echo "$DIR/chromium/chromium"; exit 0; }

fail() {
    echo "tests/browser/setup.sh: FAILED: $*" >&2
    exit 1
}

# Fast path: no lock.
if is_ready; then
    done_path
fi

mkdir -p "$DIR" || fail "cannot create $DIR"
DIR="$(cd "$DIR" && pwd)"

exec 9>"$DIR/.lock"
flock 9 || fail "cannot lock $DIR/.lock"
if is_ready; then
    done_path
fi
rm -f "$DIR/ready"

LOG="$DIR/setup.log"
: >"$LOG"
run() {
    if ! "$@" >>"$LOG" 2>&1; then
        cat "$LOG" >&2
        fail "command failed: $*  (log: $LOG)"
    fi
}
command -v npm >/dev/null || fail "npm is needed to fetch @sparticuz/chromium (or install Debian's chromium)"
command -v node >/dev/null || fail "node is needed to unpack @sparticuz/chromium (or install Debian's chromium)"

# Own package.json so npm does not walk up to a parent project.
mkdir -p "$DIR/npm"
if [ ! -f "$DIR/npm/package.json" ]; then
    echo '{"name":"janua-test-browser","private":true}' >"$DIR/npm/package.json"
fi
run npm install --prefix "$DIR/npm" --no-audit --no-fund --no-update-notifier \
    --loglevel=error --save-exact --ignore-scripts "@sparticuz/chromium@${CHROMIUM_VERSION}"
PACKAGE="$DIR/npm/node_modules/@sparticuz/chromium/bin"
[ -f "$PACKAGE/chromium.br" ] || fail "missing $PACKAGE/chromium.br"

# Unpack beside the final place, then move it in, so a half-written browser is never used.
rm -rf "$DIR/chromium.partial" "$DIR/chromium"
mkdir -p "$DIR/chromium.partial"
run node -e '
const zlib = require("zlib"), fs = require("fs");
const [from, to] = process.argv.slice(1);
for (const name of ["chromium", "swiftshader.tar"]) {
  fs.writeFileSync(to + "/" + name, zlib.brotliDecompressSync(fs.readFileSync(from + "/" + name + ".br")));
}' "$PACKAGE" "$DIR/chromium.partial"
run tar -xf "$DIR/chromium.partial/swiftshader.tar" -C "$DIR/chromium.partial"
rm -f "$DIR/chromium.partial/swiftshader.tar"
chmod 755 "$DIR/chromium.partial/chromium"

# The package is built for AWS Lambda; here it runs on the system's own libraries.
missing=$(ldd "$DIR/chromium.partial/chromium" 2>&1 | grep 'not found' || true)
[ -z "$missing" ] || fail "the packaged Chromium lacks system libraries: $missing (install Debian's chromium instead)"
run "$DIR/chromium.partial/chromium" --version
mv "$DIR/chromium.partial" "$DIR/chromium"

printf '%s' "$MARKER" >"$DIR/ready.tmp"
mv -f "$DIR/ready.tmp" "$DIR/ready"
done_path
