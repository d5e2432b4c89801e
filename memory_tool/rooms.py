"""The palace's rooms: ``rooms.yaml`` plus any ``rooms/<name>/`` folder, compiled once into JSON
(cached by file state) so that hooks classify a prompt without parsing YAML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import paths, tree
from .cache import cached_json
from .errors import ConfigError

if TYPE_CHECKING:
    from .entry import Entry


def rooms_yaml() -> Path:
    return paths.state_root() / "rooms.yaml"


def instincts_files() -> list[Path]:
    root = paths.state_root()
    return [root / "instincts.json", root / "instincts.yaml"]


def _load_yaml(path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid YAML ({exc}); fix it or delete it.") from exc


def _spec() -> dict[str, Any]:
    path = rooms_yaml()
    if not path.exists():
        from .resources import templates_dir

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


def _build() -> Any:
    from .classify import compile_rooms, load_instincts

    compiled = compile_rooms(
        _spec(), tree.room_folder_names(), instincts=load_instincts(load_instinct_records())
    )
    value: Any = compiled.to_json()
    return value


# The last compiled tables and the JSON they came from: cached_json hands back the very same
# object while nothing changed, so a long-lived process (the hook server) decodes once.
_DECODED: list[Any] = [None, None]


def compiled_rooms() -> Any:
    from .classify import CompiledRooms
    from .resources import template_path

    # The template counts too: without a rooms.yaml of the user's it is what gets compiled,
    # and an upgrade that changes it must not leave the old compile in the cache.
    sources = [rooms_yaml(), template_path("rooms.yaml"), paths.palace_dir("rooms")]
    sources += instincts_files()
    value = cached_json("rooms", sources, _build)
    if value is not _DECODED[0]:
        try:
            decoded = CompiledRooms.from_json(value)
        except ConfigError:
            # A cache written by another version of the compiler: rebuild it once.
            from .cache import forget

            forget("rooms")
            value = cached_json("rooms", sources, _build)
            decoded = CompiledRooms.from_json(value)
        _DECODED[:] = [value, decoded]
    return _DECODED[1]


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
