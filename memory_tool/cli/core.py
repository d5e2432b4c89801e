"""Core commands: init, wake, list, show, add, index."""

from __future__ import annotations

import json
from typing import Any

import click

from ..base import paths, tokens
from ..base.config import load_config, today
from ..recall.depth import check_ids
from ..recall.layers import dedupe, l1_candidates, l2_ranked, rank
from ..recall.wake import build_brief
from ..store.globs import read_globs
from ..store.index import open_index
from ..store.palace import WRITABLE_TYPES, add_memory, init_palace, resolve_type
from .app import domain_errors, ensure_built, main, unknown_filters
from .options import cwd_option, json_option, publish_team, team_option


@main.command()
@domain_errors
def init() -> None:
    """Create the memory palace (identity, rooms, wiki, cold, hot) from templates.

    Files you edited are never overwritten; config.yaml and rooms.yaml copies you never edited
    are brought up to the current templates (install.sh runs this on every upgrade)."""
    report = init_palace()
    root = paths.state_root()
    for p in report.created:
        click.echo(f"created  {p}")
    for p in report.updated:
        click.echo(f"updated  {p} (you had not edited it; now the current template)")
    for p in report.kept:
        note = " (edited by you: kept; compare with the shipped template for what is new)"
        click.echo(f"kept     {p}{note if p in report.edited else ''}")
    click.echo(f"palace ready at {root}")


@main.command()
@click.option(
    "--why",
    is_flag=True,
    help="Also say why each candidate is in the brief or not: its reason, weight, and what "
    "cap or budget left it out.",
)
@cwd_option
@json_option
@domain_errors
def wake(why: bool, cwd: str, as_json: bool) -> None:
    """Print exactly what SessionStart injects here, with each layer's tokens."""
    from ..hygiene.wake_line import wake_units
    from ..recall.explain import explain_brief

    explanation = None
    with open_index() as idx:
        idx.refresh_for_wake(cwd)
        # The same extra line SessionStart adds when memory needs attention.
        extra = wake_units(idx, cwd)
        if why:
            explanation = explain_brief(idx, cwd, extra=extra)
            brief = explanation.brief
        else:
            brief = build_brief(idx, cwd, extra=extra)
    exact = tokens.count(brief.text)
    method = tokens.method()
    if as_json:
        data = brief.to_json()
        data["verified_tokens"] = exact
        data["tokenizer"] = method
        if explanation is not None:
            data["why"] = explanation.to_json()
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(brief.text, nl=False)
    click.echo("---")
    for name, layer in brief.layers.items():
        more = f", {len(layer.omitted)} deferred" if layer.omitted else ""
        click.echo(
            f"{name}: {layer.tokens}/{layer.budget} tokens, {len(layer.picked)} entries{more}"
        )
    click.echo(f"frame: {brief.frame_tokens} tokens")
    note = "" if method == tokens.EXACT else " (no cl100k encoding could be loaded: estimated)"
    click.echo(f"total: {exact} tokens ({method}){note}, {len(brief.text)} characters")
    if explanation is not None:
        _print_why(explanation)


def _print_why(explanation: Any) -> None:
    """One line per candidate, in the order the packer took them: loaded (*) or not, the
    reason, the weight, and for those left out, why."""
    click.echo(f"--- why ({explanation.loaded} of at most {explanation.cap} entries loaded)")
    rows = [r for rs in explanation.rows.values() for r in rs] + explanation.dropped
    for r in rows:
        mark = "*" if r.loaded else " "
        name = " ".join((r.entry.description or r.entry.name).split())[:50]
        click.echo(f"{mark} {r.layer} {r.entry.id:<9} {r.reason:<42} {r.weight:5.2f}  {name}")
        if r.dropped:
            click.echo(f"{'':<16}left out: {r.detail}")


def _entry_row(e: Any) -> dict[str, Any]:
    from ..store.entry import status

    return {
        "id": e.id,
        "type": e.type,
        "room": e.room,
        "project": e.project,
        "created": e.created,
        "name": e.name,
        "description": e.description,
        "path": e.path,
        "tokens": e.full_tokens,
        "status": status(e),  # live, superseded, forgotten, ended, pending
    }


@main.command("list")
@click.option("--layer", type=click.Choice(["L1", "L2"], case_sensitive=False))
@click.option("--type", "type_", help="Only memories of this type.")
@click.option("--room", help="Only memories in this room.")
@cwd_option
@json_option
@domain_errors
def list_(layer: str | None, type_: str | None, room: str | None, cwd: str, as_json: bool) -> None:
    """List memories: all, or one always-loaded layer in priority order.

    With --layer, entries the brief holds are marked '*'; the others were deferred."""
    with open_index() as idx:
        if layer:
            idx.refresh_for_wake(cwd)
            brief = build_brief(idx, cwd)
            chosen = {e.id for e in brief.layers[layer.upper()].picked}
            cfg = load_config()
            entries = (
                dedupe(rank(l1_candidates(idx, paths.project_key(cwd)), today(), cfg))
                if layer.upper() == "L1"
                else l2_ranked(
                    idx, paths.project_key(cwd), str(paths.context_file(cwd)), today(), cfg
                )
            )
        else:
            idx.refresh(cwd, sessions=False)  # files are the truth: list what is there now
            entries = idx.entries()
            chosen = set()
        if not [
            e for e in entries if (not type_ or e.type == type_) and (not room or e.room == room)
        ]:
            unknown_filters(idx, room=room, type=type_)
    if type_:
        entries = [e for e in entries if e.type == type_]
    if room:
        entries = [e for e in entries if e.room == room]
    if as_json:
        rows = [_entry_row(e) | ({"loaded": e.id in chosen} if layer else {}) for e in entries]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    from ..store.entry import status

    for e in entries:
        mark = ("* " if e.id in chosen else "  ") if layer else ""
        state = status(e)
        tail = f" ({state})" if state != "live" else ""
        click.echo(
            f"{mark}{e.id}  {e.type:<9} {e.room or '-':<14} {e.created or '?':<10} {e.name}{tail}"
        )
    if not entries:
        click.echo("no memories")


@main.command()
@click.argument("entry_id")
@domain_errors
def show(entry_id: str) -> None:
    """Show one memory in full, with the file it comes from, and its versions: the memories it
    replaced (older) and what replaced it (newer), with their dates."""
    from ..store.entry import full_text
    from ..store.lifecycle import chain, chain_line, status

    check_ids((entry_id,))  # a bad id is refused before anything is opened or built
    with open_index() as idx:
        ensure_built(idx)
        e = idx.get_current(entry_id)
        versions = chain(idx, e)
    click.echo(full_text(e), nl=False)
    click.echo(f"file: {e.path}")
    if e.error:
        click.echo(f"problem: {e.error}")
    state = status(e)
    if state != "live" or versions.older or versions.newer or versions.missing:
        click.echo(f"status: {state}")
    for newer in reversed(versions.newer):
        click.echo(f"newer: {chain_line(newer)}")
    for older in versions.older:
        click.echo(f"older: {chain_line(older)}")
    for missing in versions.missing:
        click.echo(f"broken chain: {missing} is no memory (`memory-tool doctor`)")
    if versions.loop:
        click.echo("broken chain: its versions go round in a loop (`memory-tool doctor`)")


@main.command()
@click.option("--undo", is_flag=True, help="Bring forgotten memories back.")
@json_option
@click.argument("entry_ids", nargs=-1, required=True, metavar="ID...")
@domain_errors
def forget(undo: bool, as_json: bool, entry_ids: tuple[str, ...]) -> None:
    """Retire memories: they stop loading but stay on disk and in search, as history.

    Writes `forgotten: <today>` into each memory's frontmatter (the file is kept) and takes its
    MEMORY.md line out; `--undo` removes the key and puts the line back. A forgotten capture is
    never captured again from the same source."""
    from ..store import lifecycle

    check_ids(entry_ids)
    done = []
    with open_index() as idx:
        ensure_built(idx)
        for entry_id in entry_ids:  # every id known before any file changes
            idx.get_current(entry_id)
        for entry_id in entry_ids:
            e = lifecycle.unforget(idx, entry_id) if undo else lifecycle.forget(idx, entry_id)
            done.append(e)
    if as_json:
        rows = [{"id": e.id, "path": e.path, "forgotten": e.forgotten} for e in done]
        click.echo(json.dumps(rows))
        return
    for e in done:
        if undo:
            click.echo(f"{e.id} is back: it loads again ({e.path})")
        else:
            click.echo(
                f"{e.id} forgotten: it no longer loads; still in search as history "
                f"({e.path}). Undo: memory-tool forget --undo {e.id}"
            )


@main.command()
@click.argument("old_id")
@click.argument("new_id")
@domain_errors
def supersede(old_id: str, new_id: str) -> None:
    """Retire OLD_ID in favour of NEW_ID (a newer version of the same fact).

    OLD_ID gets `valid_to` and `superseded_by`, NEW_ID `valid_from` and `supersedes`: the old
    memory stops loading and stays in search as history; `show` prints the chain."""
    from ..store import lifecycle

    check_ids((old_id, new_id))
    with open_index() as idx:
        ensure_built(idx)
        old, new = lifecycle.supersede(idx, old_id, new_id)
    click.echo(f"{old.id} superseded by {new.id} on {old.valid_to}: only {new.id} loads now")


@main.command()
@click.option(
    "--type",
    "type_",
    type=click.Choice(list(WRITABLE_TYPES)),
    help="What kind of memory this is [default: project; note with --room; wiki with --tier].",
)
@click.option("--room", help="Palace room to file it in (e.g. authentication).")
@click.option("--importance", type=click.IntRange(1, 5), help="1 (trivia) to 5 (critical).")
@click.option("--name", help="Short name; derived from the text when omitted.")
@click.option("--description", help="One-line summary; the first sentence when omitted.")
@click.option("--tier", type=click.Choice(["wiki"]), help="Write to the wiki tier.")
@click.option("--always", is_flag=True, help="Pin to the always-loaded brief.")
@click.option("--force", is_flag=True, help="Save it even if it nearly repeats a memory.")
@click.option(
    "--global",
    "global_",
    is_flag=True,
    help="With --room: recalled in every project (default: only in the project of --cwd).",
)
@click.option(
    "--path",
    "globs",
    multiple=True,
    metavar="GLOB",
    help="Tie it to files (repeatable): it comes when Claude reads or edits one "
    "(e.g. 'db/migrations/*.py', relative to the working tree).",
)
@team_option
@cwd_option
@json_option
@click.argument("text", nargs=-1, required=True)
@domain_errors
def add(
    type_: str | None,
    room: str | None,
    importance: int | None,
    name: str | None,
    description: str | None,
    tier: str | None,
    always: bool,
    force: bool,
    global_: bool,
    globs: tuple[str, ...],
    team: str | None,
    cwd: str,
    as_json: bool,
    text: tuple[str, ...],
) -> None:
    """Save a memory as a Claude-Code-compatible Markdown file and index it.

    user/feedback/project/reference memories go to this project's Claude Code memory folder,
    --room to the palace room (recalled in this project only; with --global in every
    project), --tier wiki to the wiki; with --team, to that team palace's room or wiki, then
    pushed to your teammates. Secrets are redacted and <private> spans dropped before anything
    is written. A memory that nearly repeats one already in that folder (all it says is there,
    or it says all that one does and more) is refused, naming the other; --force saves it
    anyway."""
    type_ = resolve_type(type_, room=room, tier=tier, global_=global_)
    created: list[bool] = []
    bad = [g for g in globs if not read_globs(g)]
    if bad:
        raise click.BadParameter(f"{bad[0]!r} is no file glob", param_hint="--path")
    tied = read_globs(list(globs))
    with open_index() as idx:
        entry = add_memory(
            idx,
            " ".join(text),
            type_=type_,
            cwd=cwd,
            room=room,
            importance=importance,
            name=name,
            description=description,
            tier=tier,
            always=always,
            created=created,
            force=force,
            global_=global_,
            team=team,
            extra={"paths": tied} if tied else None,
        )
    pushed = publish_team(team) if team and created[0] else None
    if as_json:
        row = _entry_row(entry) | {"new": created[0]}
        click.echo(json.dumps(row | ({"pushed": pushed} if team else {}), ensure_ascii=False))
    elif created[0]:
        click.echo(f"saved {entry.id} -> {entry.path}")
    else:
        click.echo(f"already saved {entry.id} -> {entry.path} (the same text; nothing written)")


def _embed_progress() -> Any:
    """A progress line on a terminal: a first index of thousands of memories takes minutes."""
    import sys

    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        click.echo(f"\rsemantic vectors: {done}/{total} entries embedded{end}", err=True, nl=False)

    return show


@main.command()
@click.option("--rebuild", is_flag=True, help="Re-read every file (ids are kept).")
@cwd_option
@json_option
@domain_errors
def index(rebuild: bool, cwd: str, as_json: bool) -> None:
    """Bring the search index up to date with the memory files (and, with the semantic extra
    installed, the sentence vectors of new and changed entries)."""
    from ..store import semantic

    with open_index() as idx:
        stats = idx.rebuild(cwd) if rebuild else idx.refresh(cwd)
        total = idx.count()
        embedded = removed_vectors = 0
        if semantic.available():
            embedded, removed_vectors = semantic.update(idx, progress=_embed_progress())
    if as_json:
        data = {
            "scanned": stats.scanned,
            "added": len(stats.added),
            "changed": len(stats.changed),
            "removed": len(stats.removed),
            "entries": total,
            "embedded": embedded,
        }
        click.echo(json.dumps(data))
        return
    click.echo(
        f"{stats.scanned} files: {len(stats.added)} added, {len(stats.changed)} changed, "
        f"{len(stats.removed)} removed; {total} entries in {paths.index_file()}"
    )
    if embedded or removed_vectors:
        click.echo(f"semantic vectors: {embedded} entries embedded, {removed_vectors} dropped")
