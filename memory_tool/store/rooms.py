"""The palace's rooms: ``rooms.yaml`` plus any ``rooms/<name>/`` folder, compiled once into JSON
(cached by file state) so that hooks classify a prompt without parsing YAML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base import paths
from ..base.cache import cached_json
from ..base.errors import ConfigError
from . import tree

if TYPE_CHECKING:
    from .entry import Entry


def rooms_yaml() -> Path:
    return paths.state_root() / "rooms.yaml"


def instincts_files() -> list[Path]:
    root = paths.state_root()
    return [root / "instincts.json", root / "instincts.yaml"]


def _load_yaml(path: Path) -> Any:
    import yaml

    from ..base.config import yaml_error_text

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{path} is not valid YAML ({yaml_error_text(exc)}); fix it or delete it."
        ) from exc


def _spec(path: Path | None = None) -> dict[str, Any]:
    if path is None:
        path = rooms_yaml()
    if not path.exists():
        from ..base.resources import templates_dir

        path = templates_dir() / "rooms.yaml"  # == template_path("rooms.yaml"), checked
    data = _load_yaml(path) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must map room names to keywords, phrases and aliases.")
    return data


def load_instinct_records() -> list[dict[str, Any]]:
    for path in instincts_files():
        if not path.exists():
            continue
        if path.suffix == ".json":
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path} is not valid JSON ({exc}).") from exc
        else:
            data = _load_yaml(path)
        if isinstance(data, dict):
            data = data.get("instincts", [])
        return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []
    return []


# Said of a room table compiled from the shipped rooms because the user's files are broken.
FALLBACK_NOTE = "Room recall uses the shipped rooms meanwhile."


def _build() -> dict[str, Any]:
    """The compiled room table as the cache keeps it: ``{"table": JSON, "problems": [...]}``.
    A rooms.yaml that does not parse or compile must not switch room recall off: the shipped
    rooms are compiled instead, and the problem is kept for doctor and the SessionStart line
    (and logged once: this runs only when a source changed)."""
    from ..base.resources import template_path
    from .classify import compile_rooms, load_instincts

    problems: list[dict[str, str]] = []
    try:
        instincts = load_instincts(load_instinct_records())
    except ConfigError as exc:
        instincts = []
        problems.append({"file": "instincts", "message": f"{exc} Instincts are left out."})
    folders = tree.room_folder_names()
    try:
        compiled = compile_rooms(_spec(), folders, instincts=instincts)
    except ConfigError as exc:
        if not rooms_yaml().exists():
            raise  # the shipped rooms themselves: nothing to fall back on
        compiled = compile_rooms(_spec(template_path("rooms.yaml")), folders, instincts=instincts)
        problems.append({"file": "rooms.yaml", "message": f"{exc} {FALLBACK_NOTE}"})
    if problems:
        from ..base.log import log_error

        log_error("rooms", " ".join(p["message"] for p in problems))
    return {"table": compiled.to_json(), "problems": problems}


def _sources() -> list[Path]:
    from ..base.resources import template_path

    # The template counts too: without a rooms.yaml of the user's it is what gets compiled,
    # and an upgrade that changes it must not leave the old compile in the cache.
    sources = [rooms_yaml(), template_path("rooms.yaml"), paths.palace_dir("rooms")]
    # A team palace's room folders are rooms too (a new team, or a room a teammate added).
    sources += [tree.teams_root(), *tree.team_room_dirs()]
    return sources + instincts_files()


# The last compiled tables and the JSON they came from: cached_json hands back the very same
# object while nothing changed, so a long-lived process (the hook server) decodes once.
_DECODED: list[Any] = [None, None]


def _table(value: Any) -> Any:
    return value.get("table") if isinstance(value, dict) else value


def compiled_rooms() -> Any:
    from .classify import CompiledRooms

    sources = _sources()
    value = cached_json("rooms", sources, _build)
    if value is not _DECODED[0]:
        try:
            decoded = CompiledRooms.from_json(_table(value))
        except (ConfigError, TypeError):
            # A cache written by another version of the compiler: rebuild it once.
            from ..base.cache import forget

            forget("rooms")
            value = cached_json("rooms", sources, _build)
            decoded = CompiledRooms.from_json(_table(value))
        _DECODED[:] = [value, decoded]
    return _DECODED[1]


def _status() -> dict[str, Any]:
    value = cached_json("rooms", _sources(), _build)
    problems = value.get("problems") if isinstance(value, dict) else None
    return {"problems": problems if isinstance(problems, list) else []}


def rooms_problems() -> list[dict[str, str]]:
    """What is wrong with rooms.yaml or the instincts file (``file``, ``message``), as the last
    compile found it; [] when nothing is. Cheap: a small JSON cache of its own, so SessionStart
    does not read the whole compiled table to learn that all is well. Raises ConfigError when
    not even the shipped rooms compile."""
    value = cached_json("rooms-status", _sources(), _status)
    problems = value.get("problems") if isinstance(value, dict) else None
    return [p for p in problems if isinstance(p, dict)] if isinstance(problems, list) else []


def room_classifier() -> Any:
    """A callable giving a memory its room at index time (None when no room fits). The rooms
    are compiled only if a memory actually needs classifying."""
    state: dict[str, Any] = {}

    def classify(entry: Entry) -> str | None:
        from .classify import classify_entry

        if "rooms" not in state:
            try:
                state["rooms"] = compiled_rooms()
            except ConfigError:
                state["rooms"] = None  # a broken rooms.yaml must not stop indexing; doctor says
        if state["rooms"] is None:
            return None
        # A cold summary's name is generated ("session-2026-11-30-ab12"): only what the session
        # was about says which room it belongs to ("session" is an authentication word).
        name = "" if entry.source == "cold" else entry.name
        room: str | None = classify_entry(name, entry.description, entry.body, state["rooms"])
        return room

    return classify


# The kinds of words a room lists in rooms.yaml, in the order a person reads them.
VOCABULARY_KINDS = ("keywords", "phrases", "aliases", "weak", "decisive")


def room_vocabulary() -> dict[str, dict[str, Any]]:
    """Each room's own words as rooms.yaml lists them (``description`` and the lists of
    VOCABULARY_KINDS), folder-only rooms with their name alone: what the classifier matches a
    prompt against, for a person to read. A rooms.yaml that does not parse shows the shipped
    rooms, as room recall then uses them. Cached by file state, as the compiled rooms are
    (parsing the shipped rooms.yaml takes a few hundred milliseconds)."""
    value: dict[str, dict[str, Any]] = cached_json("rooms-vocabulary", _sources(), _vocabulary)
    return value


def _vocabulary() -> dict[str, dict[str, Any]]:
    from ..base.resources import template_path

    try:
        spec = _spec()
    except ConfigError:
        spec = _spec(template_path("rooms.yaml"))
    rooms = spec.get("rooms") if isinstance(spec.get("rooms"), dict) else {}
    out: dict[str, dict[str, Any]] = {}
    for raw_name, body in (rooms or {}).items():
        body = body if isinstance(body, dict) else {}
        words: dict[str, Any] = {"description": str(body.get("description") or "")}
        for kind in VOCABULARY_KINDS:
            value = body.get(kind) or []
            words[kind] = [str(v) for v in (value if isinstance(value, list) else [value])]
        out[str(raw_name).strip().lower()] = words
    for name in tree.room_folder_names():
        out.setdefault(name.lower(), {"description": "", **{k: [] for k in VOCABULARY_KINDS}})
    return out
