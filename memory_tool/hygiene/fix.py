"""``memory-tool doctor --fix``: safe, reversible repairs, each file backed up first under
``<state>/backups/<time>/`` with a manifest saying how to undo it. Nothing is deleted or
reworded. YAML and frontmatter are imported only inside the function that needs them."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base import paths
from ..store.index import Index
from .report import Finding, Report


@dataclass
class FixResult:
    backup: Path | None
    actions: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "backup": str(self.backup) if self.backup else None,
            "actions": self.actions,
            "skipped": self.skipped,
        }


def backups_dir() -> Path:
    return paths.state_root() / "backups"


def _new_backup_dir() -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = backups_dir()
    for n in range(1, 1000):
        target = base / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            target.mkdir(parents=True, mode=0o700)
            return target
        except FileExistsError:
            continue
    raise OSError(f"no free backup folder under {base}")


def _mirror(path: Path) -> Path:
    for prefix, root in (("state", paths.state_root()), ("claude", paths.config_dir())):
        with contextlib.suppress(ValueError):
            return Path(prefix) / path.relative_to(root)
    return Path("other") / str(path).lstrip("/")


def _backup(path: Path, backup: Path, manifest: list[dict[str, Any]], action: str) -> None:
    entry: dict[str, Any] = {"path": str(path), "action": action}
    if path.exists():
        copy = backup / "files" / _mirror(path)
        copy.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copy2(path, copy)
        entry["backup"] = str(copy)
    else:
        entry["backup"] = None  # created by the fix: undo by deleting it
    manifest.append(entry)


def _replace_bytes(path: Path, data: bytes, st: os.stat_result) -> None:
    """Atomic rewrite keeping the file's mode and timestamps (its mtime is the evidence a date was
    inferred from, and a person's `ls -t` should not change because we added one line)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, st.st_mode & 0o7777)
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def insert_created(raw: bytes, date: str) -> bytes | None:
    """``raw`` with ``created: DATE`` added as the last frontmatter line (or a new frontmatter
    block holding only it), every other byte unchanged; None when that cannot be done safely."""
    bom = b"\xef\xbb\xbf" if raw.startswith(b"\xef\xbb\xbf") else b""
    text = raw[len(bom) :]
    lines = text.splitlines(keepends=True)
    nl = b"\r\n" if lines and lines[0].endswith(b"\r\n") else b"\n"
    line = b"created: " + date.encode("ascii") + nl
    if lines and lines[0].rstrip() == b"---":
        close = next((i for i in range(1, len(lines)) if lines[i].rstrip() == b"---"), None)
        if close is None:
            return None
        new = bom + b"".join(lines[:close]) + line + b"".join(lines[close:])
    elif not text.lstrip().startswith(b"---"):
        new = bom + b"---" + nl + line + b"---" + nl + text
    else:
        return None
    return new if _only_created_added(raw, new, date) else None


def _only_created_added(old: bytes, new: bytes, date: str) -> bool:
    import frontmatter
    import yaml

    try:
        a = frontmatter.loads(old.decode("utf-8").lstrip("\ufeff"))
        b = frontmatter.loads(new.decode("utf-8").lstrip("\ufeff"))
    except (UnicodeDecodeError, yaml.YAMLError, ValueError, TypeError):
        return False
    meta_a, meta_b = dict(a.metadata), dict(b.metadata)
    if "created" in meta_a:
        return False  # an unreadable created value: a person decides
    created = meta_b.pop("created", None)
    return str(created) == date and meta_a == meta_b and a.content == b.content


def can_add_created(path: str | Path, date: str) -> bool:
    """Whether ``fix`` can write ``created: DATE`` into this file: the very check it runs."""
    try:
        raw = Path(path).read_bytes()
    except OSError:
        return False
    return insert_created(raw, date) is not None


def mark_fixable(findings: list[Finding]) -> None:
    """Mark each inferred date fixable exactly when ``fix`` can write it (same check), and say
    so when it cannot: a report must not promise a repair that --fix will skip every time."""
    for f in findings:
        if f.check != "inferred_date":
            continue
        f.data["fixable"] = can_add_created(f.path, str(f.data["created"]))
        if not f.data["fixable"]:
            f.message += " (--fix cannot extend this frontmatter safely: add created: by hand)"


def fix(idx: Index, report: Report) -> FixResult:
    """Safe, reversible repairs, each file backed up first under ``<state>/backups/<time>/``:
    write inferred ``created`` dates into frontmatter, and append missing ``MEMORY.md`` lines.
    Nothing is deleted or reworded. The caller refreshes the index afterwards."""
    from ..base.fsutil import append_line_locked
    from ..store.palace import memory_index_line

    dates = [f for f in report.findings if f.check == "inferred_date" and f.data.get("fixable")]
    unlisted: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        if f.check == "index_unlisted":
            unlisted[str(f.data["index"])].append(f)
    result = FixResult(None)
    manifest: list[dict[str, Any]] = []

    def back_up(path: Path, action: str) -> None:
        # The backup folder is made at the first change: a run that changes nothing (every
        # file skipped) leaves no folder behind.
        if result.backup is None:
            result.backup = _new_backup_dir()
        _backup(path, result.backup, manifest, action)

    try:
        for f in dates:
            path, date = Path(f.path), str(f.data["created"])
            try:
                st = os.stat(path)
                entry = idx.get_by_path(f.path)
                if (st.st_mtime_ns, st.st_size) != (entry.mtime_ns, entry.size):
                    raise ValueError("changed since it was checked: run doctor again")
                new = insert_created(path.read_bytes(), date)
                if new is None:
                    raise ValueError("frontmatter could not be extended safely: edit by hand")
            except (OSError, ValueError, LookupError) as exc:
                result.skipped.append({"path": f.path, "reason": str(exc)})
                continue
            back_up(path, f"add created: {date}")
            _replace_bytes(path, new, st)
            result.actions.append({"path": f.path, "action": f"added created: {date}"})
        for index_name, items in sorted(unlisted.items()):
            index_path = Path(index_name)
            back_up(index_path, f"append {len(items)} lines")
            for f in items:
                p = Path(f.path)
                e = next((x for x in idx.entries(path=f.path)), None)
                title = (e.name if e else "") or p.stem
                link = f"<{p.name}>" if re.search(r"[\s()<>]", p.name) else p.name
                hook = " ".join((e.description if e else "").split())
                line = memory_index_line(title, link, hook) if hook else f"- [{title}]({link})"
                append_line_locked(index_path, line)
            lines = f"{len(items)} line{'s' if len(items) != 1 else ''}"
            result.actions.append({"path": index_name, "action": f"appended {lines}"})
    finally:
        if result.backup is not None:
            manifest_path = result.backup / "manifest.json"
            manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return result
