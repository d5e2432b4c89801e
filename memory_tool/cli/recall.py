"""Recall commands: classify, and the three depths search -> peek -> get.

Each depth command ends with the exact cl100k token count of what it printed, so an agent (and a
person) sees what a lookup cost."""

from __future__ import annotations

import json
from typing import Any

import click

from ..base import paths, tokens
from ..base.errors import MemoryToolError
from ..recall import depth
from ..store.entry import full_text
from ..store.index import open_index
from ..store.rooms import compiled_rooms, rooms_problems
from ..store.search import Hit
from .app import domain_errors, ensure_built, main, unknown_filters
from .options import json_option


def _footer(text: str) -> None:
    click.echo(text, nl=False)
    click.echo(f"[{tokens.count(text)} tokens]")


@main.command()
@click.argument("prompt", nargs=-1, required=True)
@click.option("--explain", is_flag=True, help="Also show the words each room matched.")
@json_option
@domain_errors
def classify(prompt: tuple[str, ...], explain: bool, as_json: bool) -> None:
    """Which room(s) a prompt is about, with scores (nothing: no room recall)."""
    from ..store.classify import ROOM_THRESHOLD, classify_detail, false_friends_in, injectable

    compiled = compiled_rooms()
    for problem in rooms_problems():  # classified all the same, with the shipped rooms
        click.echo(f"memory-tool: {problem.get('message', '')}", err=True)
    text = " ".join(prompt)
    detail = classify_detail(text, compiled)
    rooms = injectable(detail, compiled)
    if as_json:
        rows: list[dict[str, Any]] = [{"room": m.room, "score": round(m.score, 3)} for m in rooms]
        if explain:
            for row, m in zip(rows, rooms, strict=True):
                row["terms"] = list(m.terms)
        click.echo(json.dumps(rows))
        return
    if not rooms:
        click.echo("no room (nothing would be injected)")
    for m in rooms:
        click.echo(f"{m.room}\t{m.score:.2f}" + (f"\t{', '.join(m.terms)}" if explain else ""))
    if explain:
        for m in detail:
            if m in rooms:
                continue
            why = f"below {ROOM_THRESHOLD}" if m.score < ROOM_THRESHOLD else "background room"
            click.echo(f"({m.room}\t{m.score:.2f}\t{', '.join(m.terms)}: {why})")
        # Words that look like a keyword but were not read as one: the place to look when a
        # prompt misses its room, or to add a word when one fires a room it should not.
        ignored = false_friends_in(text, compiled)
        if ignored:
            click.echo(f"(not read as keywords, rooms.yaml false_friends: {', '.join(ignored)})")


def _hit_json(h: Hit) -> dict[str, Any]:
    from ..store.entry import history_label

    out: dict[str, Any] = {
        "id": h.entry.id,
        "score": float(f"{h.score:.4g}"),  # significant digits: BM25 scores can be ~1e-5
        "room": h.entry.room,
        "type": h.entry.type,
    }
    history = history_label(h.entry)
    if history:  # superseded, forgotten, or dated: found as history, said so
        out["history"] = history
    return out


@main.command("search")
@click.argument("query", nargs=-1)
@click.option("--room", help="Only this room.")
@click.option(
    "--type", "type_", help="Only this type (user, feedback, project, wiki, cold, session…)."
)
@click.option(
    "--project",
    help="Only this project: its folder (a path, or .) or its key under <config>/projects.",
)
@click.option("--limit", type=click.IntRange(1, 500), default=10, show_default=True)
@click.option(
    "--queries",
    "queries_file",
    type=click.File("r"),
    help="Batch: one query per line; one JSON line of ranked ids per query.",
)
@click.option("--no-sessions", is_flag=True, help="Leave past session transcripts out.")
@click.option(
    "--lexical",
    is_flag=True,
    help="Words only: no semantic similarity, even where `memory-tool index` stored vectors.",
)
@click.option(
    "--now",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help='The day time words count from ("last week", "on Friday"); default today.',
)
@json_option
@domain_errors
def search_cmd(
    query: tuple[str, ...],
    room: str | None,
    type_: str | None,
    project: str | None,
    limit: int,
    queries_file: Any,
    no_sessions: bool,
    lexical: bool,
    now: Any,
    as_json: bool,
) -> None:
    """Depth 1: ids of the best matches, one line each (about 10 tokens a hit).

    Searches every memory, room, wiki page, cold summary and past session: by words, and by
    meaning too where the semantic extra is installed and `memory-tool index` stored vectors."""
    project = depth.project_filter(project)
    with open_index() as idx:
        idx.refresh()

        def ranked(q: str) -> list[Hit]:
            return depth.find(
                idx,
                q,
                limit=limit,
                room=room,
                type_=type_,
                project=project,
                sessions=not no_sessions,
                lexical=lexical,
                now=now.date() if now else None,
            )

        if queries_file is not None:
            for line in queries_file:
                q = line.rstrip("\n")
                click.echo(json.dumps({"query": q, "ids": [h.entry.id for h in ranked(q)]}))
            return
        text = " ".join(query)
        if not text.strip():
            raise MemoryToolError("give a query, or --queries FILE for a batch.")
        hits = ranked(text)
        if not hits:
            unknown_filters(idx, room=room, type=type_, project=project)
    if as_json:
        click.echo(json.dumps([_hit_json(h) for h in hits]))
        return
    out = "".join(depth.hit_line(h) for h in hits)
    _footer(out or "no matches\n")


@main.command()
@click.argument("ids", nargs=-1, required=True)
@json_option
@domain_errors
def peek(ids: tuple[str, ...], as_json: bool) -> None:
    """Depth 2: id, room, type, date and the first 80 characters (about 50 tokens each)."""
    entries, missing = _fetch(ids)
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "id": e.id,
                        "room": e.room,
                        "type": e.type,
                        "created": e.created,
                        "summary": e.summary.strip(),
                    }
                    for e in entries
                ]
            )
        )
    elif entries:
        _footer("".join(depth.peek_text(e) for e in entries))
    _report_missing(missing)


@main.command()
@click.argument("ids", nargs=-1, required=True)
@json_option
@domain_errors
def get(ids: tuple[str, ...], as_json: bool) -> None:
    """Depth 3: the full text. Fetch only what search and peek confirmed."""
    entries, missing = _fetch(ids)
    if as_json:
        click.echo(
            json.dumps([{"id": e.id, "text": full_text(e), "path": e.path} for e in entries])
        )
    elif entries:
        _footer("".join(depth.get_text(e) for e in entries))
    _report_missing(missing)


def _fetch(ids: tuple[str, ...]) -> tuple[list[Any], list[str]]:
    wanted = depth.check_ids(ids)  # a bad id is refused before anything is opened or built
    with open_index() as idx:
        ensure_built(idx)
        return depth.fetch(idx, wanted)


def _report_missing(missing: list[str]) -> None:
    """Errors for the ids that were not found, after what was: exit 1 if any."""
    if missing:
        for message in missing:
            click.echo(f"Error: {message}", err=True)
        raise SystemExit(1)


__all__ = ["classify", "get", "paths", "peek", "search_cmd"]
