"""Sync commands: sync (init / status / link / resolve), team (add / list / sync / remove),
export, import. Each parses its arguments and makes one library call (``memory_tool.sync``)."""

from __future__ import annotations

import json
from typing import Any

import click

from ..sync import archive, conflicts, personal, projects, team
from .app import domain_errors, main
from .options import cwd_option, json_option


def _say_privacy(redacted: list[tuple[str, str]], held: list[tuple[str, str]]) -> None:
    for rel, why in redacted:
        click.echo(f"  redacted {rel}: {why}")
    for rel, why in held:
        click.echo(f"  held back {rel}: {why} (stays on this machine)")


def _report_rows(report: personal.Report) -> dict[str, Any]:
    return {
        "remote": report.remote,
        "exported": report.exported,
        "committed": report.committed,
        "pushed": report.pushed,
        "attempts": report.attempts,
        "received": report.pulled,
        "conflicts": [{"path": c.path, "kept": c.kept, "copy": c.copy} for c in report.conflicts],
        "kept_local": report.kept_local,
        "redacted": report.redacted,
        "held": report.held,
        "waiting": report.waiting,
        "unsynced": report.unsynced,
    }


def _print_report(report: personal.Report) -> None:
    click.echo(f"synced with {report.remote}: {personal.summary(report)}")
    _say_privacy(report.redacted, report.held)
    for c in report.conflicts:
        if c.kept == "both":
            click.echo(f"  both versions kept: {c.path} (theirs: {c.copy})")
        elif c.kept == "edit":
            click.echo(f"  edited here, deleted there (or the other way round): kept {c.path}")
    for path in report.kept_local:
        click.echo(f"  changed here while syncing, kept: {path} (the incoming version beside it)")
    if report.conflicts or report.kept_local:
        click.echo("  keep one version: `memory-tool sync resolve FILE --keep mine|theirs`")
    if report.waiting:
        click.echo(
            f"  {len(report.waiting)} project(s) in the remote are not on this machine yet "
            "(open them in Claude Code, or `memory-tool sync link ID` in their folder)"
        )


@main.group(invoke_without_command=True)
@cwd_option
@json_option
@click.pass_context
@domain_errors
def sync(ctx: click.Context, cwd: str, as_json: bool) -> None:
    """Sync memory with your other machines through a git remote.

    Without a subcommand: send this machine's changes (redacted first), fetch, merge, bring
    what changed here and push. Both versions of a file changed on two machines are kept. Set
    it up once with `memory-tool sync init REMOTE`."""
    if ctx.invoked_subcommand is not None:
        return
    report = personal.sync(cwd)
    if as_json:
        click.echo(json.dumps(_report_rows(report), indent=2, ensure_ascii=False))
    else:
        _print_report(report)


@sync.command("init")
@click.argument("remote")
@cwd_option
@domain_errors
def sync_init(remote: str, cwd: str) -> None:
    """Sync with REMOTE (any git URL: a path, ssh://, git@host:path, https://).

    The palace's identity, rooms, wiki, inbox and cold summaries and every project's Claude
    Code memory (keyed by its repository's origin URL) travel; the index, logs, hot session
    state, transcripts, config.yaml and rooms.yaml never do. A remote with memory in it
    already is merged with yours: nothing is overwritten."""
    report = personal.init(remote, cwd)
    _print_report(report)
    click.echo(
        "sync is on: it runs by itself after each session (and pulls at session start); "
        "`memory-tool sync status` shows where it stands."
    )


@sync.command("status")
@click.option("--fetch", is_flag=True, help="Ask the remote first (else: as of the last sync).")
@json_option
@domain_errors
def sync_status(fetch: bool, as_json: bool) -> None:
    """Ahead, behind, changes not sent yet, conflicts, and how the last sync went."""
    data = personal.status(fetch=fetch)
    data["conflicts"] = [str(p) for p in conflicts.find()]
    data["teams"] = team.listing()
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return
    if not data["set_up"]:
        click.echo("personal sync: not set up (`memory-tool sync init REMOTE`)")
    else:
        last = data["last"]
        click.echo(f"personal sync with {data['remote']}")
        click.echo(f"  ahead {data['ahead']}, behind {data['behind']} (as of the last fetch)")
        click.echo(f"  not sent yet: {len(data['pending'])} files")
        if last:
            state = "ok" if last.get("ok") else "FAILED"
            click.echo(f"  last sync {last.get('at')}: {state}: {last.get('message')}")
        if data.get("fetch_error"):
            click.echo(f"  fetch: {data['fetch_error']}")
        _say_privacy(data["redacted"], data["held"])
        if data["unsynced"]:
            click.echo(
                f"  {len(data['unsynced'])} project(s) stay here (no origin URL and no id; "
                "`memory-tool sync link ID` in the folder gives one): "
                + ", ".join(data["unsynced"][:5])
                + (" …" if len(data["unsynced"]) > 5 else "")
            )
        for key, pid in data["shadowed"].items():
            click.echo(f"  {key}: another folder of {pid} on this machine syncs instead")
        if data["waiting"]:
            click.echo(f"  waiting for a folder here: {', '.join(data['waiting'])}")
    for row in data["teams"]:
        last = row["last"]
        state = ("ok" if last.get("ok") else "FAILED") if last else "never synced"
        click.echo(
            f"team {row['name']} ({row['remote']}): ahead {row['ahead']}, behind "
            f"{row['behind']}, last {state}"
            + (f": {last.get('message')}" if last and not last.get("ok") else "")
        )
    if data["conflicts"]:
        click.echo(f"conflicts ({len(data['conflicts'])}): two versions kept, keep one with")
        click.echo("`memory-tool sync resolve FILE --keep mine|theirs`")
        for path in data["conflicts"]:
            click.echo(f"  {path}")


@sync.command("link")
@click.argument("project_id", required=False)
@click.option("--clear", is_flag=True, help="Forget the id set here (the origin URL keys it).")
@cwd_option
@domain_errors
def sync_link(project_id: str | None, clear: bool, cwd: str) -> None:
    """Give this project an id to sync by, the same on every machine.

    Projects are keyed by their repository's origin URL; one without (or one you want keyed
    otherwise) syncs under PROJECT_ID. Set the same id on each machine, in its folder."""
    if clear == bool(project_id):
        raise click.UsageError("give a PROJECT_ID, or --clear (not both).")
    key, before = projects.link(cwd, None if clear else project_id)
    if clear:
        click.echo(f"{key}: id {before!r} cleared" if before else f"{key}: had no id set")
    else:
        click.echo(f"{key} syncs as {project_id!r}" + (f" (was {before!r})" if before else ""))


@sync.command("resolve")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--keep",
    type=click.Choice(conflicts.KEEP),
    required=True,
    help="mine: the file in place; theirs: the conflict copy.",
)
@domain_errors
def sync_resolve(file: str, keep: str) -> None:
    """Keep one version of a memory that two machines changed (FILE: it or its copy).

    The next sync carries the choice to your other machines (and a team's to teammates)."""
    original, copy = conflicts.resolve(file, keep)
    click.echo(f"kept {keep} in {original}; removed {copy}")


@main.group("team", invoke_without_command=True)
@click.pass_context
@domain_errors
def team_group(ctx: click.Context) -> None:
    """Team palaces: shared rooms and wiki on a git remote, recalled with your own.

    Who may read or write is the git server's business (its keys and repository permissions).
    Without a subcommand: the teams joined here."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(team_list)


@team_group.command("add")
@click.argument("name")
@click.argument("remote")
@domain_errors
def team_add(name: str, remote: str) -> None:
    """Join team NAME: clone its palace from REMOTE (an empty repository is set up)."""
    report = team.add(name, remote)
    click.echo(f"team {name} joined from {report.remote}: {team.team_dir(name)}")
    click.echo(
        f"its rooms are recalled with yours, labelled (team {name}); write with "
        f"`memory-tool add --team {name} --room ROOM TEXT`"
    )


@team_group.command("list")
@json_option
@domain_errors
def team_list(as_json: bool = False) -> None:
    """The teams joined on this machine, with where each stands."""
    rows = team.listing()
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for row in rows:
        last = row["last"]
        state = ("ok" if last.get("ok") else "FAILED") if last else "never"
        click.echo(
            f"{row['name']:<16} {row['memories']:>5} memories  ahead {row['ahead']} behind "
            f"{row['behind']}  last sync {state}  {row['remote']}"
        )
    if not rows:
        click.echo("no teams (`memory-tool team add NAME REMOTE` joins one)")


@team_group.command("sync")
@click.argument("name", required=False)
@domain_errors
def team_sync(name: str | None) -> None:
    """Send your team memories and pull your teammates' (NAME, or every team)."""
    names = [team.check_name(name)] if name else team.names()
    if not names:
        click.echo("no teams (`memory-tool team add NAME REMOTE` joins one)")
    for each in names:
        report = team.sync_team(each)
        click.echo(f"team {each}: {team.summary(report)}")
        _say_privacy(report.redacted, [])
        for c in report.conflicts:
            if c.copy:
                click.echo(f"  both versions kept: {c.path} (theirs: {c.copy})")


@team_group.command("remove")
@click.argument("name")
@click.option("--force", is_flag=True, help="Also drop memories not pushed yet.")
@domain_errors
def team_remove(name: str, force: bool) -> None:
    """Leave team NAME on this machine (the remote is untouched)."""
    path = team.remove(name, force=force)
    click.echo(f"removed {path}")


@main.command("export")
@click.argument("file", type=click.Path(dir_okay=False), required=False)
@click.option(
    "--agents-md",
    "agents_md",
    flag_value="AGENTS.md",
    help="Instead: write this project's critical rules and facts into AGENTS.md, between "
    "markers (for agents without hooks: Cursor, Copilot, Windsurf); the Scribe keeps it current.",
)
@click.option("--gemini-md", "agents_md", flag_value="GEMINI.md", help="The same into GEMINI.md.")
@cwd_option
@domain_errors
def export_cmd(file: str | None, agents_md: str | None, cwd: str) -> None:
    """Write what a sync would send to FILE.tar.gz (a move without a remote).

    Redacted like a sync; projects are keyed by origin URL (or their id, or their path)."""
    if agents_md:
        from ..store.index import open_index
        from ..tiers import agents_md as instructions

        with open_index() as idx:
            idx.refresh(cwd)
            path, changed = instructions.export(idx, cwd, agents_md)
        click.echo(f"{path}: {'updated' if changed else 'already up to date'}")
        click.echo("  only the text between the memory-tool markers is ours; the rest is kept")
        return
    if not file:
        raise click.UsageError("give FILE (an archive to write) or --agents-md / --gemini-md")
    report = archive.export(file, cwd)
    projects = f"{report.projects} project{'' if report.projects == 1 else 's'}"
    click.echo(f"exported {report.files} files ({projects}) to {report.path}")
    _say_privacy(report.redacted, report.held)


@main.command("import")
@click.argument("file", type=click.Path(dir_okay=False, exists=True))
@cwd_option
@json_option
@domain_errors
def import_cmd(file: str, cwd: str, as_json: bool) -> None:
    """Bring memory from an export; never overwrites (another version is kept beside).

    A project's memory lands in this machine's folder for the same repository; run it inside a
    project to map that one even before Claude Code has opened it here."""
    report = archive.import_(file, cwd)
    if as_json:
        data = {
            "written": report.written,
            "same": report.same,
            "beside": report.beside,
            "skipped": report.skipped,
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(
        f"imported {len(report.written)} files; {report.same} already here; "
        f"{len(report.beside)} kept beside another version; {len(report.skipped)} skipped"
    )
    for local, copy in report.beside:
        click.echo(f"  {local} has other text here: the archive's version is {copy}")
    if report.beside:
        click.echo("  keep one version: `memory-tool sync resolve FILE --keep mine|theirs`")
    for rel, why in report.skipped:
        click.echo(f"  skipped {rel}: {why}")
