#!/usr/bin/env python3
"""A test hook for Claude Code: records its stdin JSON and optionally prints a canned answer.

Usage (as a hook command, written into settings.json by `Sandbox.add_recording_hook`):
    python hook_recorder.py --log-dir DIR [--output-file FILE] [--skip-when-stop-hook-active]

Appends the stdin JSON as one line to DIR/<hook_event_name>.jsonl. If --output-file is given its
content is printed to stdout (that is the hook's answer to Claude Code), unless
--skip-when-stop-hook-active is set and the input says `stop_hook_active: true` (so a Stop hook
blocks exactly once). Stdlib only; never fails loudly (a broken test hook should not look like a
Claude Code bug), but records parse problems in DIR/errors.log.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log-dir", required=True)
    parser.add_argument("--output-file")
    parser.add_argument("--skip-when-stop-hook-active", action="store_true")
    args = parser.parse_args(argv)

    raw = sys.stdin.read()
    os.makedirs(args.log_dir, exist_ok=True)
    try:
        data = json.loads(raw)
        event = str(data.get("hook_event_name") or "unknown")
    except ValueError as exc:
        with open(os.path.join(args.log_dir, "errors.log"), "a", encoding="utf-8") as f:
            f.write(f"bad stdin JSON ({exc}): {raw!r}\n")
        return 0
    with open(os.path.join(args.log_dir, f"{event}.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps(data, ensure_ascii=False) + "\n")

    if args.output_file is None:
        return 0
    if args.skip_when_stop_hook_active and data.get("stop_hook_active"):
        return 0
    with open(args.output_file, encoding="utf-8") as f:
        sys.stdout.write(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
