"""Memory hygiene: what has gone stale or wrong in the memory tree, before it misleads the agent.

One module per check family, each a function returning ``Finding`` objects (``report``):
- ``config_files``: config.yaml settings that are not valid (their defaults apply meanwhile),
  a broken rooms.yaml (the shipped rooms apply meanwhile);
- ``age``: stale by type or past ``expires:`` (the rules live in ``layers``); inferred dates;
- ``files``: broken or missing frontmatter, unreadable or oversized files;
- ``drift``: paths named in a memory that no longer exist; ``[[links]]`` to memories not
  written yet (``roots`` finds the project folder a relative path is relative to);
- ``memory_index``: ``MEMORY.md`` lines pointing at missing files, files it does not list;
- ``duplicates``: near-duplicates and contradictions (rapidfuzz; CLI path only);
- ``always_load``: more than ``always_load_max`` entries in L1+L2, with a triage list.

Three entry points: ``doctor.diagnose`` (everything, for ``memory-tool doctor``),
``wake_line.wake_units`` (the one line SessionStart adds, cached by index state) and ``fix.fix``
(safe, reversible repairs after a backup).

Hook path: SessionStart imports ``wake_line`` and what it needs, never ``doctor``,
``duplicates`` or ``fix``; this file imports nothing so that stays true.
"""
