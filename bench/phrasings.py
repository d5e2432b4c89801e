"""How the person's signals fare on phrasings: the rule phrasings of tests/data/rule_phrasings.jsonl
(a tuning set: rules with the marker inside the sentence, and tasks and reports that look like
them), and what changes over every prompt of tests/data against another checkout's signals.py.

    .venv/bin/python bench/phrasings.py                 # the phrasing set
    .venv/bin/python bench/phrasings.py --against HEAD  # and the captures that differ from HEAD's

Every prompt of tests/data is a task or a question (none is a rule said for good), so a capture
that appears there is a candidate false capture: read each one.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memory_tool.tiers import signals  # noqa: E402

DATA = REPO / "tests" / "data"


def _explicit(mod: ModuleType, prompt: str) -> list[tuple[str, str]]:
    return [(s.kind, s.text) for s in mod.user_signals(prompt) if s.kind in mod.EXPLICIT_KINDS]


def _prompts() -> list[str]:
    out: list[str] = []
    for path in sorted(DATA.glob("*.jsonl")):
        if path.name == "rule_phrasings.jsonl":
            continue
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            out += [row[k] for k in ("first", "second", "prompt", "text", "query")
                    if isinstance(row.get(k), str)]  # fmt: skip
    return list(dict.fromkeys(out))


def _module_at(ref: str) -> ModuleType:
    src = subprocess.run(
        ["git", "show", f"{ref}:memory_tool/tiers/signals.py"],
        cwd=REPO, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    path = Path(tempfile.mkdtemp()) / "signals_then.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("memory_tool.tiers.signals_then", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", help="a git ref whose signals.py to compare with")
    args = parser.parse_args()
    rows = [json.loads(x) for x in (DATA / "rule_phrasings.jsonl").read_text().splitlines() if x]
    rules = [r for r in rows if r["standing"]]
    others = [r for r in rows if not r["standing"]]
    took = sum(bool(_explicit(signals, r["prompt"])) for r in rules)
    wrong = [r["prompt"] for r in others if _explicit(signals, r["prompt"])]
    print(f"rules taken: {took}/{len(rules)}; tasks and reports taken: {len(wrong)}/{len(others)}")
    for r in rules:
        if not _explicit(signals, r["prompt"]):
            print("  missed:", r["prompt"])
    if args.against:
        then = _module_at(args.against)
        prompts = _prompts()
        changed = 0
        for p in prompts:
            a, b = _explicit(then, p), _explicit(signals, p)
            if a != b:
                changed += 1
                print(f"- {p[:160]}\n    {args.against}: {a}\n    now: {b}")
        print(f"{changed} of {len(prompts)} tests/data prompts capture differently")


if __name__ == "__main__":
    main()
