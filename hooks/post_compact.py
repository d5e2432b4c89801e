#!/usr/bin/env python3
"""The PostCompact hook of installs made before the start-up moved into the package (see
_bootstrap.py); `memory-tool install` replaces their command."""

import _bootstrap

_bootstrap.run("PostCompact")
