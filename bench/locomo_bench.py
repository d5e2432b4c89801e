"""LoCoMo retrieval through the shipped search path, both recipes of ../shared/bench/README.md,
and the token cost of the progressive flow (search -> peek -> get) against eager loading.

The data (CC BY-NC 4.0) is read from ../shared/bench/locomo10.json (or $MEMORY_TOOL_LOCOMO) and
never copied into the repository; without it this benchmark is skipped with a message.

Each conversation is its own haystack: a sandboxed HOME whose palace wiki holds the memories as
real Markdown files, indexed by `memory-tool index`, queried by
`memory-tool search --json --queries FILE --limit 10` (batch mode, one process per conversation):
the code the hooks and CLI run, not a benchmark-only ranker.
- Recipe 1, sessions: one file per session, `created:` its date, the turns as `speaker: text`
  (image captions included), the date and time as its description.
- Recipe 2, facts: one file per observation fact, written as `memory-tool add --tier wiki` writes
  it (slug name, first sentence as description, the fact as body), `created:` its session's date.

Metrics (per question with gold): hit@k (any gold item in the top k), frac@k (share of the gold
items in the top k), NDCG@10 (binary relevance); all questions, categories 1-4, each category.

With the semantic extra installed in the interpreter that runs `memory-tool` (set
MEMORY_TOOL_BENCH_CLI to another environment's `memory-tool` to use it), `memory-tool index` also
stores sentence vectors and search fuses them in; `--lexical` searches by words only.

Usage: python bench/locomo_bench.py [--in-process] [--conversations N | --range A-B]
                                    [--recipes sessions,facts] [--lexical]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import re
import shutil
import sqlite3
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import LOCOMO, MEMORY_TOOL, Results, bench_env, log, run_process  # noqa: E402

# The `memory-tool` under test: the dev venv's, or another environment's (the semantic extra).
CLI = (
    os.environ["MEMORY_TOOL_BENCH_CLI"].split()
    if os.environ.get("MEMORY_TOOL_BENCH_CLI")
    else MEMORY_TOOL
)
# Search flags added to every query batch (--lexical turns semantic fusion off), and the
# environment of every memory-tool process: set by run()'s mode.
SEARCH_FLAGS: list[str] = []
MODE_ENV: dict[str, str] = {}
MODES = {
    # The default install: words only.
    "lexical": (["--lexical"], {"MEMORY_TOOL_SEMANTIC": "0"}),
    # With the semantic extra (MEMORY_TOOL_SEMANTIC=1 ./install.sh): vectors stored by index.
    "semantic": ([], {"MEMORY_TOOL_SEMANTIC": "1"}),
}

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
EVIDENCE_RE = re.compile(r"D:?(\d+):(\d+)")
SESSION_KEY_RE = re.compile(r"^session_(\d+)$")
LIMIT = 10
# The progressive flow the issue asks about: depth 1 for the top 10, depth 2 for the top 3,
# depth 3 for the top 1-2.
FLOW_D1, FLOW_D2 = 10, 3
# Reference points on recipe 1 (../shared/bench/README.md) and the issue 3 targets.
BM25_REF = {"hit@5": 0.877, "hit@10": 0.950, "frac@10": 0.907, "ndcg@10": 0.763}
TARGET = {"hit@5": 0.93, "hit@10": 0.98}
_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES.split(), 1)}


def load() -> list[dict[str, Any]] | None:
    if not LOCOMO.exists():
        return None
    data: list[dict[str, Any]] = json.loads(LOCOMO.read_text(encoding="utf-8"))
    return data


def parse_date(text: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08' (the file's created: date)."""
    m = re.search(r"(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", text)
    if not m:
        return ""
    month = MONTHS.get(m.group(2).lower())
    if not month:
        return ""
    return dt.date(int(m.group(3)), month, int(m.group(1))).isoformat()


def sessions_of(conv: dict[str, Any]) -> list[int]:
    return sorted(int(m.group(1)) for k in conv if (m := SESSION_KEY_RE.match(k)))


def evidence(qa: dict[str, Any]) -> set[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    for ev in qa.get("evidence") or []:
        for m in EVIDENCE_RE.finditer(str(ev)):
            out.add((int(m.group(1)), int(m.group(2))))
    return out


def _turn(t: dict[str, Any]) -> str:
    line = f"{t.get('speaker', '?')}: {t.get('text', '')}"
    if t.get("blip_caption"):
        line += f" (image: {t['blip_caption']})"
    return line


def _yaml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


@dataclass
class Haystack:
    """One conversation under one recipe: its files and, per question, the gold keys."""

    sample: str
    recipe: str
    home: Path
    files: dict[str, Any] = field(default_factory=dict)  # file stem -> gold key(s)
    questions: list[tuple[str, int, set[Any]]] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)  # entry id -> file stem
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> tokens/texts
    index_s: float = 0.0  # wall time of `memory-tool index`
    search_s: float = 0.0  # wall time of the batch search process


def write_sessions(sample: dict[str, Any], home: Path) -> Haystack:
    conv = sample["conversation"]
    hs = Haystack(sample["sample_id"], "sessions", home)
    wiki = home / ".claude" / "memory-tool" / "wiki" / sample["sample_id"]
    wiki.mkdir(parents=True)
    for n in sessions_of(conv):
        when = conv.get(f"session_{n}_date_time", "")
        body = "\n".join(_turn(t) for t in conv[f"session_{n}"])
        stem = f"session-{n}"
        meta = [f"name: {stem}", f"description: {_yaml_str(when)}", "type: wiki"]
        if parse_date(when):
            meta.append(f"created: {parse_date(when)}")
        (wiki / f"{stem}.md").write_text(
            "---\n" + "\n".join(meta) + "\n---\n\n" + body + "\n", encoding="utf-8"
        )
        hs.files[stem] = n
    for qa in sample["qa"]:
        gold = {s for s, _ in evidence(qa)} & set(hs.files.values())
        if gold:
            hs.questions.append((qa["question"], int(qa["category"]), gold))
    return hs


def write_facts(sample: dict[str, Any], home: Path) -> Haystack:
    from memory_tool.store.palace import first_sentence, slugify

    conv = sample["conversation"]
    hs = Haystack(sample["sample_id"], "facts", home)
    wiki = home / ".claude" / "memory-tool" / "wiki" / sample["sample_id"]
    wiki.mkdir(parents=True)
    k = 0
    for key, by_speaker in sorted(sample.get("observation", {}).items()):
        m = re.match(r"session_(\d+)_observation", key)
        if not m:
            continue
        created = parse_date(conv.get(f"session_{m.group(1)}_date_time", ""))
        for _speaker, facts in sorted(by_speaker.items()):
            for fact, dia in facts:
                k += 1
                dias = {(int(a), int(b)) for a, b in EVIDENCE_RE.findall(str(dia))}
                stem = f"{slugify(fact)}-{k}"
                meta = [
                    f"name: {slugify(fact)}",
                    f"description: {_yaml_str(first_sentence(fact))}",
                    "type: wiki",
                ]
                if created:
                    meta.append(f"created: {created}")
                (wiki / f"{stem}.md").write_text(
                    "---\n" + "\n".join(meta) + "\n---\n\n" + fact.strip() + "\n", encoding="utf-8"
                )
                hs.files[stem] = dias
    for qa in sample["qa"]:
        ev = evidence(qa)
        gold = {stem for stem, dias in hs.files.items() if dias & ev}
        if gold:
            hs.questions.append((qa["question"], int(qa["category"]), gold))
    return hs


def index(hs: Haystack) -> None:
    env = bench_env(hs.home, **MODE_ENV)
    r = run_process([*CLI, "index", "--json"], env=env).check(f"index {hs.sample}")
    hs.index_s = r.seconds
    db = hs.home / ".claude" / "memory-tool" / "index.db"
    conn = sqlite3.connect(db)
    try:
        for eid, path, summary, st, ft in conn.execute(
            "SELECT id, path, summary, summary_tokens, full_tokens FROM entries"
        ):
            stem = Path(path).stem
            hs.ids[eid] = stem
            hs.entries[eid] = {"summary": summary, "summary_tokens": st, "full_tokens": ft}
    finally:
        conn.close()


def query_cli(hs: Haystack) -> list[list[str]]:
    """`memory-tool search --json --queries FILE --limit 10`: one JSON line per query."""
    qfile = hs.home / "queries.txt"
    qfile.write_text(
        "".join(" ".join(q.split()) + "\n" for q, _, _ in hs.questions), encoding="utf-8"
    )
    r = run_process(
        [*CLI, "search", "--json", "--queries", str(qfile), "--limit", str(LIMIT), *SEARCH_FLAGS],
        env=bench_env(hs.home, **MODE_ENV),
    ).check(f"search {hs.sample}")
    hs.search_s = r.seconds
    lines = [json.loads(x) for x in r.stdout.decode().splitlines() if x.strip()]
    if len(lines) != len(hs.questions):
        raise RuntimeError(f"{hs.sample}: {len(lines)} answers for {len(hs.questions)} queries")
    return [x["ids"] for x in lines]


def query_in_process(hs: Haystack) -> list[list[str]]:
    """The same function the CLI calls (store.search.search), without a process per conversation."""
    from memory_tool.store.index import open_index
    from memory_tool.store.search import search

    old = dict(os.environ)
    os.environ.update(bench_env(hs.home, **MODE_ENV))
    semantic = "--lexical" not in SEARCH_FLAGS
    try:
        with open_index() as idx:
            return [
                [
                    h.entry.id
                    for h in search(idx, " ".join(q.split()), limit=LIMIT, semantic=semantic)
                ]
                for q, _, _ in hs.questions
            ]
    finally:
        os.environ.clear()
        os.environ.update(old)


def metrics(ranked: list[Any], gold: set[Any]) -> dict[str, float]:
    out = {}
    for k in (1, 2, 3, 5, 10):
        top = ranked[:k]
        out[f"hit@{k}"] = float(any(g in top for g in gold))
        out[f"frac@{k}"] = len(gold & set(top)) / len(gold)
    dcg = sum(1 / math.log2(i + 2) for i, x in enumerate(ranked[:LIMIT]) if x in gold)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(gold), LIMIT)))
    out["ndcg@10"] = dcg / idcg
    return out


def gold_key(hs: Haystack, eid: str) -> Any:
    stem = hs.ids.get(eid)
    if stem is None:
        return None
    return hs.files[stem] if hs.recipe == "sessions" else stem


def flow_tokens(hs: Haystack, ranked_ids: list[str], question: str, d3: int) -> dict[str, int]:
    """Exact cl100k tokens the agent reads (and types) in the progressive flow for one
    question: `search` (top 10 ids), `peek` of the top 3, `get` of the top ``d3``; each output
    ends with its token footer as the CLI prints it."""
    from memory_tool.base import tokens

    def with_footer(text: str) -> int:
        n = tokens.count(text)
        return n + tokens.count(f"[{n} tokens]\n")

    d1_text = "".join(f"{i} wiki\n" for i in ranked_ids[:FLOW_D1]) or "no matches\n"
    d2 = [hs.entries[i] for i in ranked_ids[:FLOW_D2]]
    d2_text = "".join(e["summary"] for e in d2)
    full = sum(hs.entries[i]["full_tokens"] for i in ranked_ids[:d3])
    cmds = (
        f"memory-tool search {question}\n"
        f"memory-tool peek {' '.join(ranked_ids[:FLOW_D2])}\n"
        f"memory-tool get {' '.join(ranked_ids[:d3])}\n"
    )
    return {
        "d1": with_footer(d1_text),
        "d2": with_footer(d2_text) if d2 else 0,
        "d3": full + (tokens.count(f"[{full} tokens]\n") if d3 else 0),
        "commands": tokens.count(cmds),
    }


def evaluate(
    samples: list[dict[str, Any]],
    recipe: str,
    workdir: Path,
    in_process: bool,
    with_tokens: bool = True,
) -> dict[str, Any]:
    per_q: list[dict[str, Any]] = []
    eager_by_conv: dict[str, int] = {}
    timing: list[dict[str, Any]] = []
    for sample in samples:
        home = workdir / f"{recipe}-{sample['sample_id']}"
        if home.exists():
            shutil.rmtree(home)
        hs = (write_sessions if recipe == "sessions" else write_facts)(sample, home)
        index(hs)
        results = query_in_process(hs) if in_process else query_cli(hs)
        eager = sum(e["full_tokens"] for e in hs.entries.values())
        eager_by_conv[hs.sample] = eager
        timing.append(
            {
                "sample": hs.sample,
                "entries": len(hs.files),
                "questions": len(hs.questions),
                "index_s": hs.index_s,
                "search_s": hs.search_s,
            }
        )
        for (q, cat, gold), ids in zip(hs.questions, results, strict=True):
            ranked = [gold_key(hs, i) for i in ids]
            row: dict[str, Any] = {
                "sample": hs.sample,
                "category": cat,
                "n_gold": len(gold),
                **metrics(ranked, gold),
            }
            if with_tokens:
                full, cum = 0, []
                for i in ids:
                    full += hs.entries[i]["full_tokens"]
                    cum.append(full)
                row["full_cum"] = cum  # full text of the top k, k = 1..10
                row["flow2"] = flow_tokens(hs, ids, q, 2)
                row["flow1"] = flow_tokens(hs, ids, q, 1)
                row["eager"] = eager
            per_q.append(row)
        shutil.rmtree(home, ignore_errors=True)
    return {"recipe": recipe, "questions": per_q, "eager_by_conv": eager_by_conv, "timing": timing}


def summarise(per_q: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in per_q:
        groups["all"].append(r)
        if r["category"] in (1, 2, 3, 4):
            groups["cat 1-4"].append(r)
        groups[f"{r['category']} {CATEGORIES.get(r['category'], '?')}"].append(r)
    keys = ("hit@1", "hit@2", "hit@3", "hit@5", "hit@10", "frac@10", "ndcg@10")
    return {
        g: {"n": float(len(rows)), **{k: sum(r[k] for r in rows) / len(rows) for k in keys}}
        for g, rows in sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0]))
    }


def token_summary(per_q: list[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    if not per_q or "flow2" not in per_q[0]:
        return out
    n = len(per_q)
    for name in ("flow1", "flow2"):
        tot = [sum(r[name].values()) for r in per_q]
        out[f"{name}_mean"] = sum(tot) / n
        out[f"{name}_ratio_of_means"] = sum(r["eager"] for r in per_q) / sum(tot)
        for part in ("d1", "d2", "d3", "commands"):
            out[f"{name}_{part}_mean"] = sum(r[name][part] for r in per_q) / n
    out["eager_mean"] = sum(r["eager"] for r in per_q) / n
    out["depth3_only_mean"] = sum(r["flow2"]["d3"] for r in per_q) / n
    return out


def run(
    res: Results,
    workdir: Path | None = None,
    in_process: bool = False,
    conversations: int | None = None,
    first: int = 0,
    recipes: tuple[str, ...] = ("sessions", "facts"),
    mode: str = "lexical",
) -> bool:
    flags, env = MODES[mode]
    SEARCH_FLAGS[:] = flags
    MODE_ENV.clear()
    MODE_ENV.update(env)
    data = load()
    if data is None:
        msg = (
            f"LoCoMo skipped: {LOCOMO} not found (CC BY-NC data, not in the repository; "
            "set MEMORY_TOOL_LOCOMO to its path)"
        )
        log(msg)
        res.skipped.append(msg)
        return False
    data = data[first:]
    if conversations:
        data = data[:conversations]
    base = Path(tempfile.mkdtemp(prefix="mt-bench-locomo-", dir=workdir))
    try:
        out = {}
        for recipe in recipes:
            log(
                f"LoCoMo: recipe {recipe}, {len(data)} conversations "
                f"({'in-process' if in_process else 'memory-tool search --queries'})"
            )
            ev = evaluate(data, recipe, base, in_process)
            out[recipe] = {
                "summary": summarise(ev["questions"]),
                "tokens": token_summary(ev["questions"]),
                "eager_by_conv": ev["eager_by_conv"],
                "curve": curve(ev["questions"]),
                "timing": ev["timing"],
            }
        key = "locomo" if mode == "lexical" else f"locomo_{mode}"
        res.data[key] = out | {"conversations": len(data), "in_process": in_process}
        report(out, res, len(data), mode)
        for recipe, o in out.items():
            t = o["timing"]
            n_e, n_q = sum(x["entries"] for x in t), sum(x["questions"] for x in t)
            ix, sx = sum(x["index_s"] for x in t), sum(x["search_s"] for x in t)
            cost = (
                f"index {ix:.1f} s for {n_e} entries ({ix / n_e * 1000:.0f} ms each, process "
                f"start included); search {sx:.1f} s for {n_q} queries in {len(t)} processes "
                f"({sx / n_q * 1000:.0f} ms a query, model load included)"
            )
            log(f"LoCoMo {recipe} ({mode}): {cost}")
            res.add("Retrieval (LoCoMo)", f"{mode}: cost of recipe {recipe}", cost, runs="1")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return True


def curve(per_q: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Tokens against recall for the plot: eager, and the flow fetching full text of the top k."""
    n = len(per_q)
    if not n or "flow2" not in per_q[0]:
        return []
    pts = []
    d1 = sum(r["flow2"]["d1"] for r in per_q) / n
    for k in (1, 2, 3, 5, 10):
        # Depth 1 for the top 10, then the full text of the top k (exact stored counts).
        full_k = sum(r["full_cum"][min(k, len(r["full_cum"])) - 1] for r in per_q if r["full_cum"])
        full_k /= n
        pts.append(
            {
                "k": k,
                "tokens": d1 + full_k,
                "hit": sum(r[f"hit@{k}"] for r in per_q) / n,
                "frac": sum(r[f"frac@{k}"] for r in per_q) / n,
            }
        )
    pts.append({"k": -1, "tokens": sum(r["eager"] for r in per_q) / n, "hit": 1.0, "frac": 1.0})
    return pts


def report(out: dict[str, Any], res: Results, n_conv: int, mode: str = "lexical") -> None:
    how = "`memory-tool search --json --queries`"
    tag = "" if mode == "lexical" else f"[{mode} extra] "
    for recipe, label in (("sessions", "recipe 1 (sessions)"), ("facts", "recipe 2 (facts)")):
        if recipe not in out:
            continue
        s = out[recipe]["summary"]
        for group, m in s.items():
            cmp_ = ""
            target = ""
            if recipe == "sessions" and group == "all":
                cmp_ = (
                    "plain BM25 (README): hit@5 0.877, hit@10 0.950, frac@10 0.907, NDCG@10 0.763"
                )
                target = ", ".join(
                    f"{k} >= {v}: {'met' if m[k] >= v else 'NOT met'} ({m[k]:.4f}, "
                    f"{round(m[k] * m['n'])} of {int(m['n'])})"
                    for k, v in TARGET.items()
                )
            res.add(
                "Retrieval (LoCoMo)",
                f"{tag}{label}: {group} (n={int(m['n'])})",
                f"hit@5 {m['hit@5']:.3f}, hit@10 {m['hit@10']:.3f}, "
                f"frac@10 {m['frac@10']:.3f}, NDCG@10 {m['ndcg@10']:.3f}",
                compare=cmp_,
                runs=f"{n_conv} conversations, {how}",
                target=target,
            )
    for recipe, label, eager_what in (
        ("facts", "recipe 2 (facts)", "every fact"),
        ("sessions", "recipe 1 (sessions)", "every session"),
    ):
        if recipe not in out:
            continue
        t = out[recipe]["tokens"]
        s = out[recipe]["summary"]["all"]
        if not t:
            continue
        for flow, d3 in (("flow2", 2), ("flow1", 1)):
            res.add(
                "Tokens (progressive flow)",
                f"{tag}{label}: search top 10 + peek top 3 + get top {d3}",
                f"{t[f'{flow}_mean']:.0f} tokens/question (d1 {t[f'{flow}_d1_mean']:.0f}, "
                f"d2 {t[f'{flow}_d2_mean']:.0f}, d3 {t[f'{flow}_d3_mean']:.0f}, commands "
                f"{t[f'{flow}_commands_mean']:.0f}) = {t[f'{flow}_ratio_of_means']:.1f}x fewer; "
                f"recall reached: gold in full text {s[f'hit@{d3}']:.3f}, in peek "
                f"{s['hit@3']:.3f}, in ids {s['hit@10']:.3f}",
                compare=f"eager ({eager_what} of the conversation) {t['eager_mean']:.0f} tokens; "
                "design claims 10-50x",
                runs=f"{int(s['n'])} questions",
            )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--in-process", action="store_true")
    ap.add_argument("--conversations", type=int, help="the first N conversations")
    ap.add_argument("--range", help="conversations A-B (0-based, inclusive), e.g. 5-9")
    ap.add_argument("--recipes", default="sessions,facts")
    ap.add_argument("--lexical", action="store_true", help="search by words only")
    args = ap.parse_args()
    from common import compile_bytecode

    compile_bytecode()
    first, count = 0, args.conversations
    if args.range:
        a, _, b = args.range.partition("-")
        first, count = int(a), int(b or a) - int(a) + 1
    res = Results()
    recipes = tuple(r for r in args.recipes.split(",") if r)
    mode = "lexical" if args.lexical else "semantic"
    if not run(
        res,
        in_process=args.in_process,
        conversations=count,
        first=first,
        recipes=recipes,
        mode=mode,
    ):
        return 0
    for f in res.figures:
        print(f"{f.name:55} {f.value}  {f.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
