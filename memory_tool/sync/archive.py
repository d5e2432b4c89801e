"""Export and import: memory moved as one ``.tar.gz``, for a move without a remote.

The archive holds what a sync sends, in the sync repository's layout (``layout``), redacted the
same way; projects with no origin URL and no id travel by their path key (``path:<key>``), which
maps back on a machine where the project has the same absolute path. Import never overwrites:
an archive's version of a file that exists here with other text is written beside it as a
conflict copy (as a sync keeps a second version; ``MEMORY.md`` and ``.decided`` gain its lines
instead), and a project this machine does not have is skipped and reported.
"""

from __future__ import annotations

import glob
import io
import json
import tarfile
import time
from pathlib import Path
from typing import Any

from ..base import paths
from ..base.config import today
from ..base.errors import SyncError
from ..base.fsutil import atomic_write_bytes, create_exclusive
from ..base.privacy import sanitize
from ..base.record import field, record
from ..store import tree
from . import layout
from .merge import union
from .projects import PATH_ID_PREFIX, Projects, resolve
from .repo import UNION_FILES, conflict_copy_name, free_name, machine_name

MANIFEST = "memory-tool-export.json"
FORMAT = 1
# An archive member larger than a memory can be is refused unread, and so is an archive that
# would unpack to more than this in all (a tar bomb).
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024


@record
class ExportReport:
    path: Path
    files: int = 0
    redacted: list[tuple[str, str]] = field(default_factory=list)
    held: list[tuple[str, str]] = field(default_factory=list)
    projects: int = 0


@record
class ImportReport:
    written: list[str] = field(default_factory=list)
    same: int = 0  # already here (byte for byte, or as this file would be sent)
    beside: list[tuple[str, str]] = field(default_factory=list)  # (local file, the copy)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (archive path, why)


def export(target: str | Path, cwd: str | Path | None = None) -> ExportReport:
    path = Path(target).expanduser()
    if not path.name.endswith((".tar.gz", ".tgz")):
        raise SyncError(f"{path} should end in .tar.gz: the export is a gzip-compressed tar file.")
    if path.exists():
        raise SyncError(f"{path} exists: export never overwrites; pick another name.")
    projects = resolve(cwd, by_path=True)
    report = ExportReport(path, projects=len(projects.ids))
    members: list[tuple[str, bytes]] = []
    for rel, local in sorted(layout.local_files(projects).items()):
        try:
            data = Path(local).read_bytes()
        except OSError:
            continue
        out = layout.outgoing(data)
        if out.data is None:
            report.held.append((rel, out.why))
            continue
        if out.why:
            report.redacted.append((rel, out.why))
        members.append((rel, out.data))
    manifest = {
        "format": FORMAT,
        "machine": machine_name(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "files": len(members),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        _add(tar, MANIFEST, json.dumps(manifest, indent=1).encode())
        for rel, data in members:
            _add(tar, rel, data)
    tmp.chmod(0o600)
    tmp.replace(path)
    report.files = len(members)
    return report


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o600
    info.mtime = int(time.time())
    tar.addfile(info, io.BytesIO(data))


def import_(source: str | Path, cwd: str | Path | None = None) -> ImportReport:
    path = Path(source).expanduser()
    report = ImportReport()
    projects = resolve(cwd)
    try:
        with tarfile.open(path, "r:*") as tar:
            _unpack(tar, path, projects, cwd, report)
    except tarfile.ReadError as exc:  # its message lists every compression tried
        raise SyncError(
            f"cannot import {path}: it is not a memory-tool export (not a tar archive at all)"
        ) from exc
    except (OSError, tarfile.TarError) as exc:
        raise SyncError(f"cannot import {path}: {exc}") from exc
    if report.written or report.beside or projects.reseeded:
        from ..store.index import open_index

        with open_index() as idx:
            idx.refresh()
    return report


def _unpack(
    tar: tarfile.TarFile,
    path: Path,
    projects: Projects,
    cwd: str | Path | None,
    report: ImportReport,
) -> None:
    total = 0
    members = tar.getmembers()
    names = {m.name for m in members}
    if MANIFEST not in names:
        raise SyncError(
            f"{path} is not a memory-tool export (no {MANIFEST} in it): "
            "make one with `memory-tool export FILE.tar.gz`."
        )
    manifest = _manifest(tar)
    who = _machine(manifest.get("machine"))
    if manifest.get("format") != FORMAT:
        raise SyncError(
            f"{path} was written by another version of memory-tool (format "
            f"{manifest.get('format')!r}, this one reads {FORMAT}): upgrade and import again."
        )
    for member in members:
        rel = member.name
        if rel == MANIFEST:
            continue
        if not member.isfile():
            report.skipped.append((rel, "not a regular file"))
            continue
        if member.size > layout.MAX_SYNC_BYTES or total + member.size > MAX_TOTAL_BYTES:
            report.skipped.append((rel, "too large for a memory"))
            continue
        local = layout.local_path(rel, projects)
        if local is not None and not _here(rel, projects, cwd):
            local = None
        if local is None:
            project = layout.project_of(rel)
            why = (
                f"project {project} is not on this machine (open it in Claude Code or "
                "`memory-tool sync link ID` in its folder, then import again)"
                if project
                else "not a memory path"
            )
            report.skipped.append((rel, why))
            continue
        handle = tar.extractfile(member)
        if handle is None:
            continue
        data = handle.read(layout.MAX_SYNC_BYTES + 1)
        total += len(data)
        _place(local, rel, data, who, report)


def _here(rel: str, projects: Projects, cwd: str | Path | None) -> bool:
    """A project known by its path only maps to a folder Claude Code has on this machine (or
    the one the import runs in): a path that exists only elsewhere gets no folder here."""
    project = layout.project_of(rel)
    if project is None or not project.startswith(PATH_ID_PREFIX) or project in projects.keys:
        return True
    key = project[len(PATH_ID_PREFIX) :]
    here = paths.project_key(cwd) if cwd is not None else None
    return key == here or (paths.projects_dir() / key).is_dir()


def _manifest(tar: tarfile.TarFile) -> dict[str, Any]:
    handle = tar.extractfile(MANIFEST)
    try:
        data = json.loads(handle.read(64 * 1024)) if handle is not None else {}
    except ValueError:
        data = {}
    return data if isinstance(data, dict) else {}


def _machine(name: Any) -> str:
    """The exporting machine's name, as a conflict copy names it."""
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in str(name or "").lower())
    return safe.strip("-")[:40] or "import"


def _place(local: Path, rel: str, data: bytes, who: str, report: ImportReport) -> None:
    try:
        text = sanitize(data.decode("utf-8"))
    except UnicodeDecodeError:
        report.skipped.append((rel, "not UTF-8 text"))
        return
    new = text.encode("utf-8")
    if create_exclusive(local, text):
        report.written.append(str(local))
        return
    try:
        mine = local.read_bytes()
    except OSError as exc:
        report.skipped.append((rel, f"{local} cannot be read ({exc.strerror}): kept as it is"))
        return
    # Secrets and <private> text of the file here never went into an archive: the archive's
    # version of this very file is its redacted form.
    if new in (mine, layout.outgoing(mine).data):
        report.same += 1
        return
    if local.name in UNION_FILES:  # they only gain lines
        merged = union(mine, new)
        if merged == mine:
            report.same += 1
        else:
            atomic_write_bytes(local, merged)
            report.written.append(str(local))
        return
    for copy in local.parent.glob(f"{glob.escape(local.stem)}{tree.CONFLICT_MARK}*"):
        try:
            if copy.read_bytes() == new:  # imported before
                report.same += 1
                return
        except OSError:
            continue
    day = today().isoformat()
    copy = local.parent / free_name(local.parent, conflict_copy_name(local.name, who, day))
    if create_exclusive(copy, text):
        report.beside.append((str(local), str(copy)))
    else:
        report.skipped.append((rel, f"{copy} appeared meanwhile (kept as it is)"))
