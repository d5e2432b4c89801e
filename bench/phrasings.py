"""How the person's signals fare on phrasings: the rule phrasings of tests/data/rule_phrasings.jsonl
(a tuning set: rules with the marker inside the sentence, and tasks and reports that look like
them), and what changes over every prompt of tests/data against another commit's capture (its whole
package, run in a copy of it).

    .venv/bin/python bench/phrasings.py                 # the phrasing set
    .venv/bin/python bench/phrasings.py --against HEAD  # and the captures that differ from HEAD's

Every prompt of tests/data is a task or a question (none is a rule said for good), so a capture
that appears there is a candidate false capture: read each one.
"""

from __future__ import annotations

import argparse
import json
import os
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


# Run in a checkout of the other ref (its whole package: signals.py reads changes.py,
# statements.py and more, and comparing one file against today's others hid their changes).
_DUMP = """
import json, sys
from memory_tool.tiers import signals
prompts = json.load(sys.stdin)
print(json.dumps([[[s.kind, s.text] for s in signals.user_signals(p)
                   if s.kind in signals.EXPLICIT_KINDS] for p in prompts]))
"""


def _explicit_at(ref: str, prompts: list[str]) -> list[list[tuple[str, str]]]:
    """What ``ref``'s package captures from each of ``prompts`` (explicit signals only)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "archive", ref, "memory_tool"], cwd=REPO, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        res = subprocess.run(
            [sys.executable, "-c", _DUMP], input=json.dumps(prompts), capture_output=True,
            text=True, check=True, cwd=tmp, env={**os.environ, "PYTHONPATH": tmp},
        )  # fmt: skip
    return [[(k, t) for k, t in row] for row in json.loads(res.stdout)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", help="a git ref whose capture to compare with")
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
        prompts = _prompts()
        then = _explicit_at(args.against, prompts)
        changed = 0
        for p, a in zip(prompts, then, strict=True):
            b = _explicit(signals, p)
            if a != b:
                changed += 1
                print(f"- {p[:160]}\n    {args.against}: {a}\n    now: {b}")
        print(f"{changed} of {len(prompts)} tests/data prompts capture differently")


if __name__ == "__main__":
    main()
