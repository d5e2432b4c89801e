"""Where a hook's time goes, in-process (run by bench/scale_bench.py in a sandboxed
environment): the import of memory_tool.hooks and its handlers, the first handler call (which
also pays for lazy imports), and the median of later calls (the hook's own work).
Prints one JSON object.

Usage: python bench/probe_hook.py EVENT PAYLOAD_JSON RUNS
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import uuid


def main() -> int:
    event, payload, runs = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
    t = time.perf_counter()
    from memory_tool import hooks

    # The way hooks.run finds the handler (one module per event, or all of them, by version).
    load_one = getattr(hooks, "_load_handler", None)
    if load_one is not None:
        handler = load_one(event)
    else:
        hooks._load_handlers()
        handler = hooks.HANDLERS[event]
    imports = time.perf_counter() - t
    calls = []
    for _ in range(runs + 1):
        payload["session_id"] = str(uuid.uuid4())
        t = time.perf_counter()
        handler(payload)
        calls.append(time.perf_counter() - t)
    out = {
        "import_ms": imports * 1000,
        "first_call_ms": calls[0] * 1000,
        "work_ms": statistics.median(calls[1:]) * 1000,
        "modules": len([m for m in sys.modules if m.startswith("memory_tool")]),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
