"""What reached the model over a scripted week: recall, duplicates, stale facts, mangled text,
noise, leaks, and the cost, computed from the stand-in API's recorded requests and the sandbox.

Pure functions over a run record (``run.json``, written by week.py), so a run can be measured
again without running it again: ``python bench/week/measure.py OUT_DIR``.

How a request is read: the first request of every new session (not of a `--resume`d turn, which
carries that session's own conversation) is what the model was given before it did anything.
Its system prompt and messages, as lines, minus every line that the same client sent in a
baseline session without memory-tool (Claude Code's own boilerplate), minus the user's prompt,
is the *context*: everything that reached the model from memory, by any route (memory-tool's
hooks, Claude Code's auto-memory, CLAUDE.md).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# Lines that open a memory-tool block or say how to use it: the frame, not a fact. They are not
# counted as noise (they are the same in every session and cost what `injected_tokens` shows).
# Nor do they count as a fact: "More on demand: `memory-tool search QUERY` …" matched an open
# item about search (and, in the other project, counted as its fact); the closing recap, which
# names the critical rules by id or short name, is the "last" of "critical rules first and
# last" (issue 22), said on purpose; a heading or the hygiene line is about memory, not a fact.
FRAME_RE = re.compile(
    r"^(?:SessionStart|UserPromptSubmit|SubagentStart) hook additional context:|"
    r"^</?memory-context>$|^Background notes from memory-tool|^More on demand:|"
    r"^Before a long session ends|^Notes from memory-tool|^Recap of the rules that matter most|"
    r"^Memory hygiene:|^#{1,4} "
)
# A handoff is quoted whole ("> - Done: …", "> - Next: finish …"): its lines are one document,
# so a fact on two of its lines is given once.
QUOTE_PREFIX = "> "
# Conversational lead-ins that a clean captured fact should not start with (issue 22, item 2).
# "no" only with its comma: "no, use httpx" is a lead-in, "No emoji in answers." a fact.
LEAD_IN_RE = re.compile(
    r"^\W*(?:no[,:]|(?:also|actually|remember|ok so|ok|okay|so|and|but)\b[,:]?)\s", re.IGNORECASE
)
RAW_TAG_RE = re.compile(r"\[(?:DECISION|GOTCHA|DEFER|REUSE)\]")
# A tag that swallowed the next line or a trailing word ("... TTL. done").
TRAILING_JUNK_RE = re.compile(r"\.\s+(?:done|ok|thanks)\.?$", re.IGNORECASE)
# Lines the client itself varies from run to run (git status of the project, its build hash,
# the date): not from memory, so not context.
CLIENT_LINE_RE = re.compile(
    r"^(?:\?\?|[MADRCU]{1,2}) (?=\S*(?:/|\.\w))[\w./-]+$"
    r"|^x-anthropic-billing-header:|^Today's date is "
)
# A statement about the user rewritten halfway: "The user is Dana, I work on ...".
MIXED_PERSON_RE = re.compile(
    r"^\W*the user (?:is|prefers|likes)\b.*\b(?:I|I'm|my)\b", re.IGNORECASE
)
# A memory as memory-tool lists it: "- [f-0c5758] Use httpx instead of requests ...".
ENTRY_RE = re.compile(r"^[-*] \[[a-z]+-[0-9a-f]{4,}\] (.*)$")
LINK_RE = re.compile(r"\[[^\]]*\]\([^)]*\)")
# Excerpts in the report are cut to this many characters.
EXCERPT_CHARS = 220


def normalize(text: str, roots: Iterable[str]) -> str:
    """Sandbox paths replaced by one placeholder, so the baseline's lines match the week's."""
    for root in sorted(roots, key=len, reverse=True):
        if root:
            text = text.replace(root, "<ROOT>")
    return text


def context_lines(request_text: str, baseline: set[str], prompt: str) -> list[str]:
    """The lines of a request that came from memory (see the module doc), stripped, non-empty."""
    prompt_lines = {ln.strip() for ln in prompt.splitlines() if ln.strip()}
    out = []
    for raw in request_text.splitlines():
        line = raw.strip()
        if not line or line in baseline or line in prompt_lines or CLIENT_LINE_RE.match(line):
            continue
        out.append(line)
    return out


def fact_regex(fact: Mapping[str, Any]) -> re.Pattern[str]:
    return re.compile(str(fact["match"]), re.IGNORECASE)


def hits(lines: Iterable[str], rx: re.Pattern[str]) -> list[str]:
    """The lines that state a fact. A Markdown link (`[slug](file.md)`, an index line's pointer)
    is not the fact: a slug made of the fact's first words would otherwise count as a copy."""
    return [ln for ln in lines if rx.search(LINK_RE.sub("", ln))]


def excerpt(line: str) -> str:
    return line if len(line) <= EXCERPT_CHARS else line[: EXCERPT_CHARS - 1] + "…"


def is_stale_line(line: str, fact: Mapping[str, Any], facts: Mapping[str, Any]) -> bool:
    """A line carrying a superseded fact without its replacement."""
    newer = facts.get(str(fact.get("superseded_by") or ""))
    if not newer:
        return False
    return bool(fact_regex(fact).search(line)) and not fact_regex(newer).search(line)


def mangled_reasons(text: str) -> list[str]:
    """Why one captured line or memory body is not a clean fact (empty: clean)."""
    reasons = []
    first = text.strip().splitlines()[0] if text.strip() else ""
    if LEAD_IN_RE.search(first):
        reasons.append("lead-in")
    if RAW_TAG_RE.search(text):
        reasons.append("raw tag")
    if TRAILING_JUNK_RE.search(first.strip()):
        reasons.append("trailing word")
    if MIXED_PERSON_RE.search(first):
        reasons.append("mixed person")
    return reasons


def _tokens(text: str) -> int:
    try:
        import tiktoken

        return len(tiktoken.get_encoding("cl100k_base").encode(text, disallowed_special=()))
    except Exception:  # noqa: BLE001 - a count is a nicety; words stand in without tiktoken
        return len(text.split())


def _first_requests(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every run that opened a new session and reached the stand-in."""
    return [r for r in record["runs"] if r.get("new_session") and r.get("first_request")]


def _project_facts(facts: Mapping[str, Any], project: str) -> dict[str, Any]:
    return {k: f for k, f in facts.items() if f.get("project") in (None, project)}


def analyze(record: Mapping[str, Any]) -> dict[str, Any]:
    """The figures of one week: see README.md for what each one means."""
    scenario = record["scenario"]
    facts: dict[str, Any] = scenario["facts"]
    baseline = set(record["baseline_lines"])
    roots = record["roots"]
    noise_rx = [re.compile(re.escape(n), re.IGNORECASE) for n in scenario.get("noise", [])]
    privacy = scenario.get("privacy", {})
    secrets = list(privacy.get("secrets", [])) + list(privacy.get("private", []))

    sessions = []
    duplicates: list[dict[str, Any]] = []
    stale: list[dict[str, Any]] = []
    cross: list[dict[str, Any]] = []
    noise: list[dict[str, Any]] = []
    mangled_ctx: list[dict[str, Any]] = []
    leaks: list[dict[str, Any]] = []
    for run in _first_requests(record):
        text = normalize(run["first_request"], roots)
        ctx = context_lines(text, baseline, run["prompt"])
        label = run["label"]
        mine = _project_facts(facts, run["project"])
        said = [ln for ln in ctx if not FRAME_RE.match(ln)]
        for fid, fact in facts.items():
            found = hits(said, fact_regex(fact))
            if not found:
                continue
            if len({QUOTE_PREFIX if ln.startswith(QUOTE_PREFIX) else ln for ln in found}) > 1:
                duplicates.append(
                    {"session": label, "fact": fid, "times": len(found), "lines": found[:4]}
                )
            if fid not in mine:
                cross.append({"session": label, "fact": fid, "line": excerpt(found[0])})
            stale_lines = [ln for ln in found if is_stale_line(ln, fact, facts)]
            # Stale only once the newer fact was said: before that the old one is current.
            if stale_lines and run["order"] > record["planted_at"].get(fact["superseded_by"], 1e9):
                stale.append({"session": label, "fact": fid, "line": excerpt(stale_lines[0])})
        # Every memory entry given (`- [id] text`), and every line that carries a fact.
        fact_lines = {ln for f in facts.values() for ln in hits(ctx, fact_regex(f))}
        for ln in ctx:
            entry = ENTRY_RE.match(ln)
            if entry or ln in fact_lines:
                why = mangled_reasons(entry.group(1) if entry else ln.lstrip("-*• "))
                if why:
                    mangled_ctx.append({"session": label, "why": why, "line": excerpt(ln)})
        for rx in noise_rx:
            found = hits(ctx, rx)
            if found:
                noise.append({"session": label, "needle": rx.pattern, "line": excerpt(found[0])})
        for s in secrets:
            if run["order"] > record["planted_at"].get(f"secret:{s}", 1e9) and s in text:
                leaks.append({"session": label, "secret": s})
        injected = run.get("injected", "")
        sessions.append(
            {
                "label": label,
                "day": run["day"],
                "project": run["project"],
                "kind": run["kind"],
                "context_lines": len(ctx),
                "injected_tokens": _tokens(injected),
                "context_tokens": _tokens("\n".join(ctx)),
            }
        )

    topics = []
    for run in record["runs"]:
        if run["kind"] != "topic":
            continue
        fact = facts[run["fact"]]
        text = normalize(run.get("first_request") or "", roots)
        ctx = [ln for ln in context_lines(text, baseline, run["prompt"]) if not FRAME_RE.match(ln)]
        found = hits(ctx, fact_regex(fact))
        older = [f for f in facts.values() if f.get("superseded_by") == run["fact"]]
        stale_here = [
            ln for f in older for ln in hits(ctx, fact_regex(f)) if is_stale_line(ln, f, facts)
        ]
        topics.append(
            {
                "fact": run["fact"],
                "kind": fact["kind"],
                "prompt": run["prompt"],
                "reached": bool(found),
                "via": sorted({_route(run, ln) for ln in found}),
                "lines": [excerpt(ln) for ln in found[:3]],
                "stale_lines": [excerpt(ln) for ln in stale_here[:2]],
            }
        )

    store = record.get("store", {})
    captured = _captured(store.get("files", []), facts, secrets)
    hooks = _hook_costs(record["runs"])
    sizes = record.get("sizes", [])
    reached = sum(t["reached"] for t in topics)
    return {
        "scenario": scenario["name"],
        "code": record.get("code", {}),
        "clock": record.get("clock"),
        "recall": {"reached": reached, "topics": len(topics)},
        "topics": topics,
        "duplicates": {"requests": len({d["session"] for d in duplicates}), "items": duplicates},
        "stale": {"requests": len({s["session"] for s in stale}), "items": stale},
        "cross_project": {"requests": len({c["session"] for c in cross}), "items": cross},
        "noise": {"requests": len({n["session"] for n in noise}), "items": noise},
        "mangled_in_context": mangled_ctx,
        "leaks": leaks + captured.pop("leaks"),
        "captured": captured,
        "sessions": sessions,
        "cost": {
            "hooks": hooks,
            "sizes": sizes,
            "injected_tokens_mean": round(
                sum(s["injected_tokens"] for s in sessions) / max(1, len(sessions)), 1
            ),
        },
        "warnings": record.get("warnings", []),
        "hook_errors": [
            {"run": r["label"], "line": e} for r in record["runs"] for e in r.get("hook_errors", [])
        ],
    }


def _route(run: Mapping[str, Any], line: str) -> str:
    """Which way a line reached the model: memory-tool's hooks, or something else."""
    injected = run.get("injected", "")
    return "memory-tool" if line in {ln.strip() for ln in injected.splitlines()} else "other"


LOADED_KINDS = {"live", "auto-memory"}


def _captured(
    files: list[dict[str, str]], facts: Mapping[str, Any], secrets: list[str]
) -> dict[str, Any]:
    """What the product wrote to disk: per fact, where it is (live memory, inbox, cold summary,
    Claude's auto-memory); memory files that are mangled, duplicated or hold two facts."""
    where: dict[str, set[str]] = {fid: set() for fid in facts}
    by_fact_live: dict[str, list[str]] = {fid: [] for fid in facts}
    mangled = []
    multi = []
    leaks = []
    unplanned = []  # kept memories that are none of the planted facts: junk, or a wrong guess
    for f in files:
        body = f["body"]
        kind = f["kind"]
        matched = [fid for fid, fact in facts.items() if fact_regex(fact).search(body)]
        for fid in matched:
            where[fid].add(kind)
            # MEMORY.md is auto-memory's index of the files beside it, not a second memory.
            if kind in ("live", "auto-memory") and not f["path"].endswith("/MEMORY.md"):
                by_fact_live[fid].append(f["path"])
        for s in secrets:
            if s in body or s in f.get("frontmatter", ""):
                leaks.append({"file": f["path"], "secret": s})
        memory = kind in ("live", "inbox", "auto-memory") and not f["path"].endswith("/MEMORY.md")
        if memory and kind != "inbox" and not matched:
            unplanned.append({"file": f["path"], "text": excerpt(body.strip())})
        if memory:
            why = mangled_reasons(body)
            if why:
                mangled.append({"file": f["path"], "why": why, "text": excerpt(body.strip())})
            distinct = {fid for fid in matched if facts[fid].get("superseded_by") is None}
            if len(distinct) > 1:
                multi.append({"file": f["path"], "facts": sorted(distinct)})
    dup_files = {fid: paths for fid, paths in by_fact_live.items() if len(paths) > 1}
    return {
        "per_fact": {fid: sorted(k) for fid, k in where.items()},
        # Kept where a session loads it: memory-tool's palace or Claude Code's auto-memory.
        "live": sum(1 for k in where.values() if k & LOADED_KINDS),
        "inbox_only": sum(1 for k in where.values() if "inbox" in k and not k & LOADED_KINDS),
        "unplanned": unplanned,
        "files": {
            kind: sum(1 for f in files if f["kind"] == kind)
            for kind in ("live", "inbox", "cold", "wiki", "auto-memory", "other")
        },
        "duplicate_memories": dup_files,
        "mangled": mangled,
        "two_facts_in_one": multi,
        "leaks": leaks,
    }


def _hook_costs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        ms = sorted(t for r in runs for t in r.get("hook_ms", {}).get(event, []))
        if ms:
            out[event] = _spread(ms)
    # The detached work after a session (the Scribe and what it captures): wall time from the
    # client's exit until no process of the sandbox but the resident server runs.
    detached = sorted(r["detached_ms"] for r in runs if "detached_ms" in r)
    if detached:
        out["detached after exit"] = _spread(detached)
    return out


def _spread(ms: list[int]) -> dict[str, int]:
    return {
        "calls": len(ms),
        "median_ms": ms[len(ms) // 2],
        "p95_ms": ms[min(len(ms) - 1, int(len(ms) * 0.95))],
        "max_ms": ms[-1],
    }


def markdown(result: Mapping[str, Any]) -> str:
    """The short table for a person."""
    r = result
    code = r.get("code", {})
    lines = [
        f"## Week benchmark: scenario `{r['scenario']}` on {code.get('commit', '?')}"
        f" ({code.get('date', '?')}), clock: {r.get('clock')}",
        "",
        "| measure | value |",
        "|---|---|",
        f"| topic prompts that got their fact | "
        f"**{r['recall']['reached']} / {r['recall']['topics']}** |",
        f"| requests with a duplicated fact | {r['duplicates']['requests']} |",
        f"| requests with a superseded (stale) fact | {r['stale']['requests']} |",
        f"| requests with another project's fact | {r['cross_project']['requests']} |",
        f"| requests with noise-session text | {r['noise']['requests']} |",
        f"| requests with a mangled memory line | "
        f"{len({m['session'] for m in r['mangled_in_context']})} |",
        f"| secret or <private> text leaked | {len(r['leaks'])} |",
        f"| hook errors in the client's log (the hook's work did not happen) | "
        f"{len(r.get('hook_errors', []))} |",
        f"| facts kept where sessions load them / inbox only / of | {r['captured']['live']} / "
        f"{r['captured']['inbox_only']} / {len(r['captured']['per_fact'])} |",
        f"| memory files that are mangled / hold two facts / duplicate a fact | "
        f"{len(r['captured']['mangled'])} / {len(r['captured']['two_facts_in_one'])} / "
        f"{len(r['captured']['duplicate_memories'])} |",
        f"| kept memories that are no planted fact (junk or a wrong guess) | "
        f"{len(r['captured']['unplanned'])} |",
        f"| memory-tool tokens injected per session (mean) | {r['cost']['injected_tokens_mean']} |",
    ]
    for event, c in r["cost"]["hooks"].items():
        what = "ms" if event.startswith("detached") else "hook ms"
        lines.append(
            f"| {event} {what}: median / p95 / max ({c['calls']} calls) | "
            f"{c['median_ms']} / {c['p95_ms']} / {c['max_ms']} |"
        )
    sizes = r["cost"]["sizes"]
    if sizes:
        first, last = sizes[0], sizes[-1]
        lines.append(
            f"| state size day {first['day']} -> day {last['day']} (index.db; memory files) | "
            f"{first['index_bytes']:,} -> {last['index_bytes']:,} B; "
            f"{first['md_files']} -> {last['md_files']} files |"
        )
    lines += ["", "| fact | kind | reached | via | prompt |", "|---|---|---|---|---|"]
    for t in r["topics"]:
        mark = "yes" if t["reached"] else "**no**"
        lines.append(
            f"| {t['fact']} | {t['kind']} | {mark} | {', '.join(t['via']) or '-'} | {t['prompt']} |"
        )
    if r.get("warnings"):
        lines += ["", "Harness warnings: " + "; ".join(r["warnings"])]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path("bench/out/week-dev")
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    result = analyze(record)
    (out / "result.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    (out / "result.md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
