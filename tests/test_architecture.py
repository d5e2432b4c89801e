"""The layers hold: a module imports only from its own layer or the layers below it, no module
closes an import cycle (imports inside functions and under TYPE_CHECKING count), SQL stays in
the store layer, and a package's ``__init__.py`` imports nothing (every prompt would pay for it).
docs/architecture.md describes the same map."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import REPO

PACKAGE = REPO / "memory_tool"

# Bottom to top. A module may import from its own subpackage and from any layer of a lower
# rank; layers of one rank (the front ends) may not import each other.
LAYERS: list[tuple[str, ...]] = [
    ("base",),
    ("store",),
    ("recall",),
    ("tiers",),
    ("hygiene",),
    ("sync",),
    ("runtime", "mcp", "ui"),
    ("cli",),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
# Attributes that mean SQL: only the store layer talks to the database.
SQL_ATTRIBUTES = frozenset({"conn", "execute", "executemany", "executescript", "query"})
SQL_LAYER = "store"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module of the package that ``name`` imports, anywhere in its source."""
    package = name.split(".")[0]
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [f"{target}.{a.name}" for a in node.names] + [target]
        for target in targets:
            while target and target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != name and target.startswith(package):
                found.add(target)
    # "from .x import a" names both .x (a module) and .x.a (not one): keep the modules only.
    return found


def layer_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def violations(root: Path) -> list[str]:
    """What breaks the rules in the package at ``root``: upward or sideways imports, cycles,
    SQL outside the store layer, imports in an ``__init__.py``."""
    known = modules(root)
    graph = {name: imports_of(name, path, known) for name, path in known.items()}
    out: list[str] = []
    for name, targets in sorted(graph.items()):
        src = layer_of(name)
        if src is not None and src not in RANK and known[name].name != "__init__.py":
            out.append(f"{name}: module outside every layer (add its package to LAYERS)")
        for target in sorted(targets):
            dst = layer_of(target)
            if src is None or dst is None or src == dst or src not in RANK or dst not in RANK:
                continue
            if RANK[dst] > RANK[src]:
                out.append(f"{name} imports {target}: upward ({src} is below {dst})")
            elif RANK[dst] == RANK[src]:
                out.append(f"{name} imports {target}: sideways ({src} and {dst} are one rank)")
    out += [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree))
        if path.name == "__init__.py" and name.count(".") and imports:
            out.append(f"{name}: __init__.py imports (every importer would pay for it)")
        if layer_of(name) != SQL_LAYER:
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and node.attr in SQL_ATTRIBUTES:
                    out.append(f"{name}:{node.lineno}: .{node.attr} (SQL belongs in store/)")
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_keeps_its_layers() -> None:
    assert violations(PACKAGE) == []


def test_every_layer_in_the_map_exists_and_every_subpackage_is_in_the_map() -> None:
    present = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert present == set(RANK)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "memory_tool"
    for rel, text in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(text)
    return root


def test_an_upward_import_a_cycle_and_stray_sql_are_caught(tmp_path: Path) -> None:
    """The checks can fail: a package with one of each broken rule is reported in full."""
    root = _package(
        tmp_path,
        {
            "base/paths.py": "def f():\n    from ..cli.app import main\n",  # inside a function
            "store/a.py": "from . import b\n",
            "store/b.py": "if TYPE_CHECKING:\n    from . import a\n",
            "recall/room.py": "def f(idx):\n    return idx.conn.execute('SELECT 1')\n",
            "runtime/dispatch.py": "from ..cli import app\n",
            "cli/app.py": "main = None\n",
            "tiers/__init__.py": "from . import hot\n",
            "tiers/hot.py": "",
        },
    )
    found = violations(root)
    assert "memory_tool.base.paths imports memory_tool.cli.app: upward (base is below cli)" in found
    assert "import cycle: memory_tool.store.a -> memory_tool.store.b" in found
    assert any(v.startswith("memory_tool.recall.room:2: .conn") for v in found)
    assert any("runtime.dispatch imports memory_tool.cli.app: upward" in v for v in found)
    assert "memory_tool.tiers: __init__.py imports (every importer would pay for it)" in found
    clean = _package(
        tmp_path / "clean", {"base/paths.py": "", "store/a.py": "from ..base import paths\n"}
    )
    assert violations(clean) == []
