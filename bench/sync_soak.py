"""Sync soak: two machines (sandboxed HOMEs) syncing through one bare repository, many rounds
of random creates, edits, rewrites, deletes, conflicting edits of one file on both machines and
secrets planted on both sides, with syncs run one after the other, both at once, and two at once
on one machine; files created while a sync runs; now and then a conflict resolved. Memories are
room files (``rooms/soak/``) and Claude Code project memory (one repository cloned at a different
path on each machine), written straight to disk as a person or Claude Code writes them.

Every line written is unique (``L<n>``) and tracked. A line is *retired* when a machine removes
it on purpose: a rewrite or a delete of a file that held it there, or a `sync resolve` that
dropped the version holding it. At the end (after a few quiet syncs) it counts:

- lost: lines never retired that are in no memory file on either machine, plus lines holding a
  secret that are not in their writer's files with the secret itself (only the redacted form is
  left). Goal 0.
- secrets in the remote: planted secrets found anywhere in ``git log -p --all`` of the remote.
  Goal 0.

Usage: .venv/bin/python bench/sync_soak.py [--rounds 100] [--seed 1] [--code CHECKOUT] [--json]
(``--code``: the checkout whose memory_tool runs, e.g. a worktree of an older commit.)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import string
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CLI = "import sys; from memory_tool.cli.main import main; sys.exit(main())"
# Share of new lines that carry a secret, of each kind redaction knows by shape.
SECRET_SHARE = 0.3
_LINE_ID = re.compile(r"\bL\d{4,}\b")


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C")
    return env


def git(*args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=git_env(), capture_output=True, text=True, check=True
    )
    return proc.stdout


@dataclass
class Machine:
    name: str
    home: Path
    code: Path
    project: Path = Path()
    key: str = ""
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        env = git_env()
        for var in ("CLAUDE_CONFIG_DIR", "MEMORY_TOOL_HOME", "CLAUDE_PROJECT_DIR"):
            env.pop(var, None)
        env.update(
            HOME=str(self.home),
            MEMORY_TOOL_MACHINE=self.name,
            MEMORY_TOOL_NO_BACKGROUND="1",
            MEMORY_TOOL_TODAY="2026-11-29",
            MEMORY_TOOL_SEMANTIC="0",
            MEMORY_TOOL_SERVER="0",
            PYTHONPATH=str(self.code),
        )
        self.env = env

    @property
    def state(self) -> Path:
        return self.home / ".claude" / "memory-tool"

    def folder(self, kind: str) -> Path:
        if kind == "room":
            return self.state / "rooms" / "soak"
        return self.home / ".claude" / "projects" / self.key / "memory"

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", CLI, *args],
            cwd=self.project,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = self.start(*args)
        out, err = proc.communicate(timeout=600)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def secret(rng: random.Random) -> str:
    alnum = string.ascii_letters + string.digits
    kind = rng.randrange(4)
    if kind == 0:
        return "sk_test_" + "".join(rng.choice(alnum) for _ in range(24))
    if kind == 1:
        return "AKIA" + "".join(
            rng.choice(string.ascii_uppercase + string.digits) for _ in range(16)
        )
    if kind == 2:
        return "ghp_" + "".join(rng.choice(alnum) for _ in range(36))
    return "sk-ant-api03-" + "".join(rng.choice(alnum) for _ in range(40))


class Soak:
    def __init__(self, root: Path, code: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.root = root
        self.remote = root / "memory.git"
        git("init", "-q", "--bare", str(self.remote))
        origin = root / "code" / "shop.git"
        git("init", "-q", "--bare", str(origin))
        self.machines = [
            Machine("laptop", root / "laptop", code),
            Machine("desktop", root / "desktop", code),
        ]
        for m, where in zip(self.machines, ("src/shop", "work/checkouts/shop"), strict=True):
            m.project = m.home / where
            m.project.parent.mkdir(parents=True)
            git("clone", "-q", str(origin), str(m.project))
            m.key = self._key(m)
            # A Claude Code session in the clone: how memory-tool learns which folder a key is.
            sessions = m.home / ".claude" / "projects" / m.key
            sessions.mkdir(parents=True)
            line = {"type": "user", "cwd": str(m.project), "sessionId": "s1", "message": {}}
            (sessions / "s1.jsonl").write_text(json.dumps(line) + "\n")
            for kind in ("room", "project"):
                m.folder(kind).mkdir(parents=True, exist_ok=True)
        self.next_line = 0
        self.next_file = 0
        self.written: dict[str, tuple[str, str]] = {}  # line id -> (writer, full line)
        self.retired: set[str] = set()
        self.secrets: list[str] = []
        self.stats: dict[str, int] = {
            "syncs": 0, "sync_failures": 0, "concurrent_rounds": 0, "writes": 0,
            "deletes": 0, "rewrites": 0, "conflicting_edits": 0, "resolves": 0,
            "created_during_sync": 0,
        }  # fmt: skip
        self.failures: list[str] = []

    def _key(self, m: Machine) -> str:
        out = subprocess.run(
            [sys.executable, "-c",
             "import sys; from memory_tool.base.paths import sanitize_path; "
             "print(sanitize_path(sys.argv[1]))", str(m.project.resolve())],
            env=m.env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        return out.stdout.strip()

    # --- writing ---------------------------------------------------------------------------
    def new_line(self, m: Machine) -> str:
        self.next_line += 1
        lid = f"L{self.next_line:04d}"
        text = f"{lid} fact {self.rng.randrange(10**6)} written on the {m.name}"
        if self.rng.random() < SECRET_SHARE:
            value = secret(self.rng)
            self.secrets.append(value)
            text += f"; the sandbox key is {value}"
        self.written[lid] = (m.name, text)
        return text + "\n"

    def files(self, m: Machine, kind: str | None = None) -> list[Path]:
        kinds = [kind] if kind else ["room", "project"]
        return sorted(
            p
            for k in kinds
            for p in m.folder(k).glob("*.md")
            if p.name != "MEMORY.md" and ".conflict-" not in p.name
        )

    def create(self, m: Machine) -> None:
        self.next_file += 1
        kind = self.rng.choice(("room", "project"))
        name = f"{'reference_' if kind == 'project' else ''}soak_{self.next_file:04d}"
        body = "".join(self.new_line(m) for _ in range(self.rng.randint(1, 3)))
        head = f"---\nname: {name}\ndescription: soak memory {name}\n"
        text = head + f"metadata:\n  type: reference\n---\n\n{body}"
        write_atomic(m.folder(kind) / f"{name}.md", text)
        self.stats["writes"] += 1

    def edit(self, m: Machine, path: Path | None = None) -> None:
        files = self.files(m)
        if path is None:
            if not files:
                return self.create(m)
            path = self.rng.choice(files)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return None
        lines = text.splitlines(keepends=True)
        roll = self.rng.random()
        if roll < 0.6 or len(lines) < 7:  # add a line at the end or in the middle
            at = self.rng.randint(min(len(lines), 7), len(lines))
            lines.insert(at, self.new_line(m))
        elif roll < 0.85:  # change one line: the old one is removed on purpose
            body = [i for i, line in enumerate(lines) if _LINE_ID.search(line)]
            if not body:
                lines.append(self.new_line(m))
            else:
                i = self.rng.choice(body)
                self.retire(lines[i])
                lines[i] = self.new_line(m)
        else:  # rewrite the whole memory
            self.stats["rewrites"] += 1
            self.retire(text)
            head = text.split("\n---\n", 1)[0] + "\n---\n\n"
            lines = [head, self.new_line(m)]
        write_atomic(path, "".join(lines))
        self.stats["writes"] += 1
        return None

    def delete(self, m: Machine) -> None:
        files = self.files(m)
        if not files:
            return
        path = self.rng.choice(files)
        try:
            self.retire(path.read_text(encoding="utf-8"))
        except OSError:
            return
        path.unlink()
        self.stats["deletes"] += 1

    def retire(self, text: str) -> None:
        self.retired.update(_LINE_ID.findall(text))

    def resolve(self, m: Machine) -> None:
        copies = sorted(p for k in ("room", "project") for p in m.folder(k).glob("*.conflict-*.md"))
        if not copies:
            return
        copy = self.rng.choice(copies)
        original = copy.with_name(copy.name.split(".conflict-", 1)[0] + ".md")
        before = read(copy) + read(original)
        keep = self.rng.choice(("mine", "theirs"))
        proc = m.run("sync", "resolve", str(copy), "--keep", keep)
        if proc.returncode == 0:
            self.stats["resolves"] += 1
            kept = set(_LINE_ID.findall(read(original)))
            self.retired.update(set(_LINE_ID.findall(before)) - kept)

    # --- syncing ---------------------------------------------------------------------------
    def sync(self, *which: Machine) -> None:
        procs = [(m, m.start("sync")) for m in which]
        if len(which) > 1 and self.rng.random() < 0.5:
            # A file created while the syncs run.
            time.sleep(self.rng.uniform(0.0, 0.8))
            self.create(self.rng.choice(which))
            self.stats["created_during_sync"] += 1
        for m, proc in procs:
            out, err = proc.communicate(timeout=900)
            self.stats["syncs"] += 1
            if proc.returncode != 0:
                self.stats["sync_failures"] += 1
                self.failures.append(f"{m.name}: {err.strip()[-300:]}")

    def round(self, n: int) -> None:
        a, b = self.machines
        for m in self.machines:
            for _ in range(self.rng.randint(1, 3)):
                roll = self.rng.random()
                if roll < 0.35:
                    self.create(m)
                elif roll < 0.85:
                    self.edit(m)
                else:
                    self.delete(m)
        if n % 4 == 1:  # the same memory edited on both machines before either syncs
            shared = set(p.name for p in self.files(a, "room")) & set(
                p.name for p in self.files(b, "room")
            )
            if shared:
                name = self.rng.choice(sorted(shared))
                self.edit(a, a.folder("room") / name)
                self.edit(b, b.folder("room") / name)
                self.stats["conflicting_edits"] += 1
        if self.rng.random() < 0.15:
            self.resolve(self.rng.choice(self.machines))
        mode = self.rng.random()
        if mode < 0.4:
            self.sync(*self.rng.sample(self.machines, 1))
            self.sync(*self.rng.sample(self.machines, 1))
        elif mode < 0.85:
            self.stats["concurrent_rounds"] += 1
            self.sync(a, b)
        else:  # two syncs at once on one machine, and one on the other
            self.stats["concurrent_rounds"] += 1
            self.sync(a, a, b)

    # --- the count -------------------------------------------------------------------------
    def settle(self) -> None:
        for m in self.machines * 2:
            self.sync(m)

    def count(self) -> dict[str, Any]:
        on: dict[str, str] = {}
        for m in self.machines:
            on[m.name] = "\n".join(
                read(p) for k in ("room", "project") for p in m.folder(k).glob("*.md")
            )
        everywhere = "\n".join(on.values())
        present = set(_LINE_ID.findall(everywhere))
        expected = set(self.written) - self.retired
        missing = sorted(expected - present)
        secret_lines = [lid for lid in expected if "key is " in self.written[lid][1]]
        redacted = sorted(
            lid
            for lid in secret_lines
            if lid in present and self.written[lid][1] not in on[self.written[lid][0]]
        )
        history = git("log", "-p", "--all", cwd=self.remote)
        leaked = sorted({s for s in self.secrets if s in history})
        per_file: dict[str, int] = {}
        for m in self.machines:
            for k in ("room", "project"):
                for p in m.folder(k).glob("*.conflict-*"):
                    key = f"{m.name}/{p.name.split('.conflict-', 1)[0]}"
                    per_file[key] = per_file.get(key, 0) + 1
        copies = sum(per_file.values())
        return {
            "lines_written": len(self.written),
            "lines_retired": len(self.retired & set(self.written)),
            "lines_expected": len(expected),
            "secret_lines_expected": len(secret_lines),
            "lost": len(missing) + len(redacted),
            "lost_missing": len(missing),
            "lost_to_redaction": len(redacted),
            "examples": [self.written[lid][1][:120] for lid in (missing + redacted)[:5]],
            "secrets_planted": len(self.secrets),
            "secrets_in_remote_history": len(leaked),
            "conflict_copies_left": copies,
            # A file whose copies keep growing is two machines sending theirs back and forth.
            "most_copies_of_one_file": max(per_file.values(), default=0),
            **self.stats,
            "failures": self.failures[:5],
        }


def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.soak.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def soak(rounds: int, seed: int = 1, code: Path = REPO, root: Path | None = None) -> dict[str, Any]:
    """Run the soak; returns the count (see the module doc)."""
    own = root is None
    base = Path(tempfile.mkdtemp(prefix="sync-soak-")) if root is None else root
    try:
        s = Soak(base, code, seed)
        started = time.perf_counter()
        for m in s.machines:
            proc = m.run("sync", "init", str(s.remote))
            if proc.returncode != 0:
                raise RuntimeError(f"{m.name}: sync init failed: {proc.stderr}")
        for n in range(rounds):
            s.round(n)
        s.settle()
        result = s.count()
        result.update(rounds=rounds, seed=seed, seconds=round(time.perf_counter() - started, 1))
        result["code"] = str(code)
        return result
    finally:
        if own:
            shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--code", type=Path, default=REPO)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = soak(args.rounds, args.seed, args.code.resolve())
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(
            f"{result['rounds']} rounds, {result['syncs']} syncs ({result['sync_failures']} "
            f"failed), {result['lines_written']} lines written, {result['lines_expected']} "
            f"expected at the end: lost {result['lost']} "
            f"({result['lost_to_redaction']} of them to redaction), "
            "secrets in the remote's history "
            f"{result['secrets_in_remote_history']} of {result['secrets_planted']} planted; "
            f"{result['conflict_copies_left']} conflict copies left (at most "
            f"{result['most_copies_of_one_file']} of one file); {result['seconds']} s"
        )
    return 0 if result["lost"] == 0 and result["secrets_in_remote_history"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
