"""Where a hook's time goes, in-process (run by bench/scale_bench.py with `python -S`, like the
hook, in a sandboxed environment): importing memory_tool.runtime.dispatch and the event's handler,
the first handler call (which also pays for lazy imports and cold caches), and the median of
later calls (the hook's own work). Prints one JSON object.

Usage: python -S bench/probe_hook.py EVENT PAYLOAD_JSON RUNS
"""

import sys
import time

# Timed before anything else is imported: what the hook imports, it pays for here too.
_t0 = time.perf_counter()
from memory_tool.base.event import HookEvent  # noqa: E402
from memory_tool.runtime import dispatch  # noqa: E402

_handler = dispatch.load_handler(sys.argv[1])
_imports = time.perf_counter() - _t0


def main() -> int:
    import json  # already imported by the dispatcher
    import os
    import statistics

    payload, runs = json.loads(sys.argv[2]), int(sys.argv[3])
    calls = []
    for _ in range(runs + 1):
        payload["session_id"] = os.urandom(8).hex()  # a fresh session: nothing already seen
        t = time.perf_counter()
        _handler(HookEvent.from_payload(sys.argv[1], payload))
        calls.append(time.perf_counter() - t)
    out = {
        "import_ms": _imports * 1000,
        "first_call_ms": calls[0] * 1000,
        "work_ms": statistics.median(calls[1:]) * 1000,
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
