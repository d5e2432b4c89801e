#!/usr/bin/env bash
# Install the real Codex CLI (@openai/codex) and Gemini CLI (@google/gemini-cli) into
# <repo>/.cache/agents/ for the end-to-end tests in tests/e2e/test_agents_e2e.py. Idempotent: does
# nothing when the pinned versions are there. Without npm it says so and exits 0 (those tests
# then skip, except in CI where they fail).
set -euo pipefail

# The versions docs/agents.md records payloads and output rules for.
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
GEMINI_VERSION="${GEMINI_VERSION:-0.61.0}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="$here/.cache/agents"

installed() {  # package dir, version
    [ -f "$1/package.json" ] && grep -q "\"version\": *\"$2\"" "$1/package.json"
}

if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: cannot install the Codex and Gemini CLIs for the agent e2e tests" >&2
    exit 0
fi
mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || printf '{\n  "name": "memory-tool-e2e-agents",\n  "private": true\n}\n' > "$prefix/package.json"
want=()
installed "$prefix/node_modules/@openai/codex" "$CODEX_VERSION" || want+=("@openai/codex@$CODEX_VERSION")
installed "$prefix/node_modules/@google/gemini-cli" "$GEMINI_VERSION" || want+=("@google/gemini-cli@$GEMINI_VERSION")
if [ "${#want[@]}" -gt 0 ]; then
    echo "installing ${want[*]} into $prefix ..." >&2
    npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error --save-exact "${want[@]}" >&2
fi
"$prefix/node_modules/.bin/codex" --version >/dev/null
"$prefix/node_modules/.bin/gemini" --version >/dev/null
echo "$prefix/node_modules/.bin"
