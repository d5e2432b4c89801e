#!/usr/bin/env bash
# Install the real Claude Code CLI (npm package @anthropic-ai/claude-code) into <repo>/.cache/claude/
# for the end-to-end tests in tests/e2e/. Idempotent: does nothing if the pinned version is present.
# Prints the path to the `claude` binary on its last line of stdout.
#
# Needs only node + npm. Without npm it prints a message and exits 0 (the e2e tests then skip).
# Override the pin with CLAUDE_CODE_VERSION=<x.y.z> if you need to test another release.
set -euo pipefail

# The version the e2e harness was built and verified against (see tests/e2e/README.md).
PINNED_VERSION="2.1.332"
VERSION="${CLAUDE_CODE_VERSION:-$PINNED_VERSION}"
PACKAGE="@anthropic-ai/claude-code"

SCRIPT_PATH="${BASH_SOURCE[0]}"
case "$SCRIPT_PATH" in */*) SCRIPT_DIR="${SCRIPT_PATH%/*}" ;; *) SCRIPT_DIR="." ;; esac
SCRIPT_DIR="$(cd "$SCRIPT_DIR" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
PREFIX="$REPO_ROOT/.cache/claude"
BIN="$PREFIX/node_modules/.bin/claude"
PKG_JSON="$PREFIX/node_modules/@anthropic-ai/claude-code/package.json"

installed_version() {
    # Reads the version of the installed package without running the binary (fast, no network).
    if [ -f "$PKG_JSON" ]; then
        sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$PKG_JSON" | head -n 1
    fi
}

binary_works() {
    # The package ships a placeholder bin/claude.exe that its postinstall script replaces with
    # the native build; if scripts were skipped the placeholder stays. `--version` is instant
    # and touches no files.
    local out
    [ -x "$BIN" ] && out="$("$BIN" --version 2>/dev/null)" && [[ "$out" == "$VERSION "* ]]
}

if [ "$(installed_version)" = "$VERSION" ] && binary_works; then
    echo "claude-code $VERSION already installed in $PREFIX" >&2
    echo "$BIN"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: cannot install $PACKAGE@$VERSION. Install Node.js (with npm) and re-run" \
         "$0; until then the e2e tests (tests/e2e) are skipped." >&2
    exit 0
fi

mkdir -p "$PREFIX"
# A private package.json keeps npm from walking up to some other project's node_modules.
if [ ! -f "$PREFIX/package.json" ]; then
    printf '{\n  "name": "memory-tool-e2e-claude",\n  "private": true\n}\n' > "$PREFIX/package.json"
fi

echo "installing $PACKAGE@$VERSION into $PREFIX ..." >&2
# --ignore-scripts=false: the postinstall step is what puts the native binary in place.
npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error --save-exact \
    --ignore-scripts=false "$PACKAGE@$VERSION" >&2

if ! binary_works; then
    echo "install finished but $BIN does not run or is not version $VERSION" >&2
    exit 1
fi
echo "installed claude-code $(installed_version) in $PREFIX" >&2
echo "$BIN"
