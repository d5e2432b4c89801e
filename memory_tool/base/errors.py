"""Domain errors. Each message says what went wrong and how to fix it; the CLI shows it as is."""

from __future__ import annotations


class MemoryToolError(Exception):
    """Base class for every error memory-tool reports to a person."""


class UnknownIdError(MemoryToolError):
    def __init__(self, entry_id: str) -> None:
        super().__init__(
            f"no memory with id {entry_id!r}. Find ids with `memory-tool search QUERY` or "
            "`memory-tool list`; if you edited files by hand, run `memory-tool index` first."
        )
        self.entry_id = entry_id


class DeletedMemoryError(UnknownIdError):
    def __init__(self, entry_id: str, path: str) -> None:
        MemoryToolError.__init__(
            self,
            f"memory {entry_id!r} is gone: its file {path} was deleted (the index no longer "
            "lists it). Find others with `memory-tool search QUERY`.",
        )
        self.entry_id = entry_id


class InvalidIdError(MemoryToolError):
    def __init__(self, entry_id: str) -> None:
        super().__init__(
            f"{entry_id!r} is not a memory id: ids look like p-3fa9c1 (a type letter, a dash, "
            "six hex digits) or are a short name of letters, digits, '-' and '_'."
        )
        self.entry_id = entry_id


class SettingsError(MemoryToolError):
    """settings.json cannot be read or safely changed."""


class ConfigError(MemoryToolError):
    """config.yaml or rooms.yaml is invalid."""


class IndexCorruptError(MemoryToolError):
    """The SQLite index cannot be read; it is derived, so it is rebuilt from the files."""


class SyncError(MemoryToolError):
    """A sync, team or archive operation could not be done; the message says what to do.
    Nothing is lost when one is raised: local changes stay committed or on disk."""
