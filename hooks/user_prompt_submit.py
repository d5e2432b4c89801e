#!/usr/bin/env python3
"""The UserPromptSubmit hook of installs made before the start-up moved into the package (see
_bootstrap.py); `memory-tool install` replaces their command."""

import _bootstrap

_bootstrap.run("UserPromptSubmit")
