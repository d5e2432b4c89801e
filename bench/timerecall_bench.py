"""Recall across time and preferences (issue 26) on coding-session scenarios: recall@1/@5 per
question type, through `memory-tool search`, against plain BM25 on the same entries.

A scenario file (bench/data/timerecall_*.json) holds one project's past: dated session
transcripts (written as Claude Code writes them), cold summaries, and memory files, some
superseded by later ones (`valid_to`, `superseded_by`, `supersedes`, as INTERFACES.md gives
them); and questions, each with its gold items and a type:
- window: names a time ("on Monday", "last month", "since the rounding fix");
- first / last: asks for the first or the latest occurrence;
- latest: a question whose answer changed over time, with no time words ("how do we deploy?");
- preference: the user's own likes, asked in words the memory does not use;
- plain: no time, no preference: must not get worse.
The questions are asked at the file's `now` (`memory-tool search --now`, and MEMORY_TOOL_TODAY
for the recency prior). `timerecall_dev.json` is tuned on; `timerecall_blind.json` was written
before any change and is run once, at the end.

Usage: python bench/timerecall_bench.py [--set dev|blind] [--modes lexical,semantic]
                                        [--no-now] [--misses]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sqlite3
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import MEMORY_TOOL, bench_env, run_process  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
CLI = (
    os.environ["MEMORY_TOOL_BENCH_CLI"].split()
    if os.environ.get("MEMORY_TOOL_BENCH_CLI")
    else MEMORY_TOOL
)
LIMIT = 10
MODES = {
    "lexical": (["--lexical"], {"MEMORY_TOOL_SEMANTIC": "0"}),
    "semantic": ([], {"MEMORY_TOOL_SEMANTIC": "1"}),
}
BM25_K1, BM25_B = 1.2, 0.75
_TOKEN = re.compile(r"\w+")


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def write(scn: dict[str, Any], home: Path) -> None:
    proj = scn["project"]
    projects = home / ".claude" / "projects" / proj
    mem = projects / "memory"
    mem.mkdir(parents=True)
    for s in scn["sessions"]:
        lines = []
        for i, msg in enumerate(s["messages"]):
            role, _, text = msg.partition(": ")
            kind = "user" if role == "person" else "assistant"
            content: Any = text if kind == "user" else [{"type": "text", "text": text}]
            lines.append(
                json.dumps(
                    {
                        "type": kind,
                        "uuid": f"{s['key']}-{i:04d}-0000-0000-000000000000",
                        "sessionId": s["key"],
                        "cwd": "/work/" + proj.rsplit("-", 1)[-1],
                        "timestamp": f"{s['date']}T10:{i:02d}:00.000Z",
                        "isSidechain": False,
                        "message": {"role": kind, "content": content},
                    }
                )
            )
        (projects / f"{s['key']}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    cold = home / ".claude" / "memory-tool" / "cold" / proj
    cold.mkdir(parents=True)
    for c in scn["cold"]:
        meta = [f"name: {c['key']}", f"description: {_q(c['text'][:80])}", f"created: {c['date']}"]
        (cold / f"{c['date']}-{c['key']}.md").write_text(
            "---\n" + "\n".join(meta) + "\n---\n\n" + c["text"] + "\n", encoding="utf-8"
        )
    for m in scn["memories"]:
        meta = [
            f"name: {m['key']}",
            f"description: {_q(m['text'])}",
            f"type: {m['type']}",
            f"created: {m['created']}",
        ]
        (mem / f"{m['key']}.md").write_text(
            "---\n" + "\n".join(meta) + "\n---\n\n" + m["text"] + "\n", encoding="utf-8"
        )


def link_versions(scn: dict[str, Any], home: Path, ids: dict[str, str]) -> None:
    """Add valid_to / superseded_by / supersedes with the real ids (known once indexed)."""
    by_key = {v: k for k, v in ids.items()}
    mem = home / ".claude" / "projects" / scn["project"] / "memory"
    for m in scn["memories"]:
        extra = []
        if m.get("valid_to"):
            extra.append(f"valid_to: {m['valid_to']}")
        for key in ("superseded_by", "supersedes"):
            if m.get(key):
                extra.append(f"{key}: {by_key[m[key]]}")
        if extra:
            path = mem / f"{m['key']}.md"
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace("\n---\n", "\n" + "\n".join(extra) + "\n---\n", 1))


def id_map(home: Path) -> tuple[dict[str, str], dict[str, str]]:
    """entry id -> scenario key, and entry id -> its searchable text (for plain BM25)."""
    conn = sqlite3.connect(home / ".claude" / "memory-tool" / "index.db")
    try:
        keys, texts = {}, {}
        for eid, path, name, desc, body in conn.execute(
            "SELECT id, path, name, description, body FROM entries"
        ):
            p = Path(path.split("#", 1)[0])
            stem = p.stem
            key = stem.split("-")[-1] if p.parent.name != "memory" else stem
            keys[eid] = key
            texts[eid] = f"{name} {desc} {body}"
        return keys, texts
    finally:
        conn.close()


def bm25(texts: dict[str, str], query: str) -> list[str]:
    toks = {k: _TOKEN.findall(v.lower()) for k, v in texts.items()}
    avg = sum(len(t) for t in toks.values()) / max(len(toks), 1)
    df: Counter[str] = Counter()
    for t in toks.values():
        df.update(set(t))
    n = len(toks)
    scores = {}
    for k, t in toks.items():
        tf = Counter(t)
        s = 0.0
        for w in _TOKEN.findall(query.lower()):
            f = tf.get(w, 0)
            if f:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * f * (BM25_K1 + 1) / (f + BM25_K1 * (1 - BM25_B + BM25_B * len(t) / avg))
        if s > 0:
            scores[k] = s
    return sorted(scores, key=lambda k: (-scores[k], k))


def dedupe(keys: list[str]) -> list[str]:
    seen: list[str] = []
    for k in keys:
        if k not in seen:
            seen.append(k)
    return seen


def run_set(name: str, modes: list[str], use_now: bool, misses: bool) -> dict[str, Any]:
    scn = json.loads((DATA / f"timerecall_{name}.json").read_text(encoding="utf-8"))
    now = scn["now"]
    out: dict[str, Any] = {}
    base = Path(tempfile.mkdtemp(prefix="mt-bench-timerecall-"))
    try:
        for mode in modes:
            flags, env_extra = MODES[mode]
            home = base / mode
            write(scn, home)
            env = bench_env(home, MEMORY_TOOL_TODAY=now, **env_extra)
            run_process([*CLI, "index", "--json"], env=env).check("index")
            keys, texts = id_map(home)
            link_versions(scn, home, keys)
            run_process([*CLI, "index", "--json"], env=env).check("index")
            keys, texts = id_map(home)
            qfile = home / "queries.txt"
            qfile.write_text("".join(q["q"] + "\n" for q in scn["questions"]), encoding="utf-8")
            now_flags = ["--now", now] if use_now else []
            r = run_process(
                [
                    *CLI,
                    "search",
                    "--json",
                    "--queries",
                    str(qfile),
                    "--limit",
                    str(LIMIT),
                    *flags,
                    *now_flags,
                ],
                env=env,
            ).check("search")
            answers = [json.loads(x)["ids"] for x in r.stdout.decode().splitlines() if x.strip()]
            runs = {mode: answers}
            if "bm25" not in out:
                runs["bm25"] = [bm25(texts, q["q"]) for q in scn["questions"]]
            for label, ranked_ids in runs.items():
                rows: dict[str, list[dict[str, float]]] = defaultdict(list)
                for q, ids in zip(scn["questions"], ranked_ids, strict=True):
                    ranked = dedupe([keys[i] for i in ids if i in keys])
                    gold = set(q["gold"])
                    row = {
                        "hit@1": float(bool(gold & set(ranked[:1]))),
                        "hit@5": float(bool(gold & set(ranked[:5]))),
                    }
                    rows[q["type"]].append(row)
                    rows["all"].append(row)
                    if misses and not row["hit@1"] and label != "bm25":
                        print(
                            f"  [{label}] miss@1 {q['type']}: {q['q']!r} {q['gold']} {ranked[:5]}"
                        )
                out[label] = {
                    t: {
                        "n": len(rs),
                        "hit@1": sum(r["hit@1"] for r in rs) / len(rs),
                        "hit@5": sum(r["hit@5"] for r in rs) / len(rs),
                    }
                    for t, rs in rows.items()
                }
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="dev", choices=("dev", "blind"))
    ap.add_argument("--modes", default="lexical")
    ap.add_argument("--no-now", action="store_true", help="for a search without --now")
    ap.add_argument("--misses", action="store_true", help="print the questions missed at 1")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    out = run_set(args.set, args.modes.split(","), not args.no_now, args.misses)
    order = ("all", "window", "first", "last", "latest", "preference", "plain")
    for label, groups in out.items():
        print(f"== {args.set} / {label}")
        for t in order:
            if t in groups:
                m = groups[t]
                print(f"  {t:11} n={m['n']:3d}  hit@1 {m['hit@1']:.3f}  hit@5 {m['hit@5']:.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
