"""The MCP server (memory_tool/mcp/server.py), driven by the official SDK's own stdio client:
one real server process for the module, against a sandbox palace, answering as the CLI does.
And the SDK never loads on the hook path."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import REPO, write_memory

pytest.importorskip("mcp", reason="the mcp extra is not installed (test.sh installs it)")

from anyio.from_thread import BlockingPortal, start_blocking_portal  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from memory_tool.base import tokens  # noqa: E402
from memory_tool.cli.main import main  # noqa: E402
from memory_tool.mcp import server  # noqa: E402

TOKEN_LINE = re.compile(r"\[(\d+) tokens\]\n\Z")
# A memory far over one answer's budget (32,000 characters, 8,000 tokens) but under the 256 KB
# a memory file may hold (a larger one is not read at all: entry.MAX_FILE_BYTES): ~190 KB.
HUGE_WORDS = 15_000
# Memories of about this many tokens: three fit one get, a dozen do not.
BIG_TOKENS = 2_500


class Client:
    """Calls into the SDK client session, which lives in the portal's event loop."""

    def __init__(self, portal: BlockingPortal, session: ClientSession, home: Path, cwd: Path):
        self.portal, self.session, self.home, self.cwd = portal, session, home, cwd

    def call(self, tool: str, args: dict[str, Any]) -> tuple[str, bool]:
        result = self.portal.call(self.session.call_tool, tool, args)
        assert len(result.content) == 1 and result.content[0].type == "text"
        return result.content[0].text, bool(result.is_error)

    def ok(self, tool: str, args: dict[str, Any]) -> str:
        text, error = self.call(tool, args)
        assert not error, text
        check_budget(text)
        return text

    def cli(self, *args: str) -> str:
        """The CLI against the same palace, from the same folder."""
        old = os.getcwd()
        os.chdir(self.cwd)
        try:
            res = CliRunner().invoke(main, list(args), env=server_env(self.home))
        finally:
            os.chdir(old)
        assert res.exit_code == 0, res.output
        return res.stdout


def server_env(home: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "MEMORY_TOOL_HOME")
    }
    env.update(
        HOME=str(home),
        MEMORY_TOOL_SEMANTIC="0",
        MEMORY_TOOL_TODAY="2026-11-29",
        MEMORY_TOOL_NO_BACKGROUND="1",
        PYTHONPATH=str(REPO),
    )
    return env


def check_budget(text: str) -> int:
    """The answer's last line states its exact token count; it stays under Claude's limits."""
    m = TOKEN_LINE.search(text)
    assert m, f"no token line: {text[-200:]!r}"
    assert int(m.group(1)) == tokens.count(text)
    assert int(m.group(1)) <= server.ANSWER_MAX_TOKENS
    assert len(text) <= server.ANSWER_MAX_CHARS
    return int(m.group(1))


def body(text: str) -> str:
    """What is inside the fence."""
    assert text.startswith(server.FENCE_OPEN), text
    return text[len(server.FENCE_OPEN) : text.index(server.FENCE_CLOSE)]


def seed(home: Path, project: Path) -> None:
    state = home / ".claude" / "memory-tool"
    auth = state / "rooms" / "authentication"
    write_memory(auth, "rotation.md", "Refresh tokens rotate on every use; a reused one revokes "
                 "the whole family.", type_="note", room="authentication")  # fmt: skip
    write_memory(auth, "jwks.md", "JWT signing keys come from the JWKS endpoint, cached for ten "
                 "minutes.", type_="note", room="authentication")  # fmt: skip
    write_memory(state / "wiki", "postgres.md", "We picked PostgreSQL for billing because of its "
                 "JSONB columns and row level security.", description="Billing store")  # fmt: skip
    big = state / "rooms" / "bulk"
    for i in range(12):
        filler = " ".join(f"ledger{i} entry {n} reconciles" for n in range(BIG_TOKENS // 8))
        write_memory(big, f"ledger-{i}.md", f"Ledger batch {i}. {filler}", type_="note")
    huge = " ".join(f"archive{n}" for n in range(HUGE_WORDS))
    write_memory(state / "wiki", "archive.md", f"Archive of the payments migration. {huge}")
    key = re.sub(r"[^a-zA-Z0-9]", "-", str(project.resolve()))
    write_memory(home / ".claude" / "projects" / key / "memory", "project_deploys.md",
                 "No deploys on Friday afternoons: on-call is thin.", type_="project")  # fmt: skip


@asynccontextmanager
async def connect(params: StdioServerParameters) -> AsyncIterator[ClientSession]:
    with open(os.devnull, "w") as errlog:  # the server's own log lines: not the test's output
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    root = tmp_path_factory.mktemp("mcp")
    home, project = root / "home", root / "work" / "proj"
    project.mkdir(parents=True)
    seed(home, project)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_tool.mcp"], env=server_env(home), cwd=project
    )
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(
        connect(params)
    ) as session:  # fmt: skip
        client = Client(portal, session, home, project)
        client.cli("index")
        yield client


def ids_of(search_answer: str) -> list[str]:
    return [line.split()[0] for line in body(search_answer).splitlines()]


# --- the tools --------------------------------------------------------------------------------
def test_lists_the_six_tools_and_teaches_the_depth_protocol(mcp: Client) -> None:
    listed = mcp.portal.call(mcp.session.list_tools).tools
    tools = {t.name: t for t in listed}
    assert set(tools) == {"search", "peek", "get", "add", "context", "forget"}
    assert "peek" in (tools["search"].description or "")
    assert "confirm" in (tools["peek"].description or "")
    assert "confirmed" in (tools["get"].description or "")
    assert tools["search"].input_schema["required"] == ["query"]
    assert tools["get"].input_schema["properties"]["ids"]["maxItems"] == server.IDS_MAX
    assert tools["search"].annotations and tools["search"].annotations.read_only_hint
    assert tools["add"].annotations and not tools["add"].annotations.read_only_hint


def test_search_ranks_as_the_cli_does(mcp: Client) -> None:
    for query in ("refresh token reuse", "which database for billing", "ledger reconciles"):
        ours = ids_of(mcp.ok("search", {"query": query, "limit": 5}))
        theirs = [h["id"] for h in json.loads(mcp.cli("search", "--json", "--limit", "5", query))]
        assert ours == theirs and ours
    lines = body(mcp.ok("search", {"query": "refresh token reuse"})).splitlines()
    assert lines[0].endswith(" authentication")  # id and where it lives, one line each


def test_search_filters_and_says_which_filter_matched_nothing(mcp: Client) -> None:
    hits = ids_of(mcp.ok("search", {"query": "tokens", "room": "authentication"}))
    assert hits and all(h.startswith("n-") for h in hits)
    empty = mcp.ok("search", {"query": "tokens", "room": "nosuch"})
    assert empty.startswith("no matches\n")
    assert "no memory has room 'nosuch'; rooms in use: " in empty


def test_peek_and_get_give_what_the_cli_prints(mcp: Client) -> None:
    ids = ids_of(mcp.ok("search", {"query": "refresh token signing keys", "limit": 2}))
    assert len(ids) == 2
    for tool in ("peek", "get"):
        cli = TOKEN_LINE.sub("", mcp.cli(tool, *ids))
        assert body(mcp.ok(tool, {"ids": ids})) == cli
    assert "Refresh tokens rotate on every use" in mcp.ok("get", {"ids": ids[:1] + ids[1:]})


def test_every_answer_states_its_exact_token_count(mcp: Client) -> None:
    answers = [
        mcp.ok("search", {"query": "deploys friday"}),
        mcp.ok("context", {"situation": "spec", "prompt": "billing database"}),
        mcp.ok("add", {"text": "Staging resets every Monday at 06:00 UTC."}),
    ]
    counts = [check_budget(a) for a in answers]
    assert all(n > 3 for n in counts)


def test_a_memory_too_long_for_one_answer_is_cut_and_its_file_named(mcp: Client) -> None:
    (archive,) = ids_of(mcp.ok("search", {"query": "archive payments migration", "limit": 1}))
    text = mcp.ok("get", {"ids": [archive]})
    # Cut at whichever cap binds first: tokens, or characters (these words are long tokens).
    full_tokens = check_budget(text) > server.ANSWER_MAX_TOKENS - server.FRAME_RESERVE_TOKENS - 50
    full_chars = len(text) > server.ANSWER_MAX_CHARS - server.FRAME_RESERVE_CHARS - 200
    assert full_tokens or full_chars
    assert f"{archive} was cut to fit this answer: the whole memory is in " in text
    assert "archive.md" in text.splitlines()[-2]


def test_get_names_the_ids_left_out_past_the_budget(mcp: Client) -> None:
    ledgers = ids_of(mcp.ok("search", {"query": "ledger batch reconciles", "limit": 12}))
    assert len(ledgers) == 12
    text = mcp.ok("get", {"ids": ledgers})
    shown = [i for i in ledgers if f"[{i}]" in body(text)]
    left = text.split("ask for them again: ")[1].split("\n")[0].split()
    assert shown == ledgers[: len(shown)] and 1 < len(shown) < 12
    assert left == ledgers[len(shown) :]  # each id either shown whole or named to ask again


def test_peek_of_some_unknown_ids_answers_the_rest(mcp: Client) -> None:
    (known,) = ids_of(mcp.ok("search", {"query": "JWKS signing keys", "limit": 1}))
    text = mcp.ok("peek", {"ids": [known, "p-000000"]})
    assert body(text).startswith(known)
    assert "not found: no memory with id 'p-000000'" in text


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("peek", {"ids": ["../../etc/passwd"]}, "is not a memory id"),
        ("get", {"ids": ["p-000000"]}, "no memory with id 'p-000000'"),
        ("get", {"ids": []}, "give at least one id"),
        ("get", {"ids": "p-000000"}, "ids"),  # a string where a list belongs
        ("search", {"query": "x", "limit": 0}, "limit"),
        ("search", {"query": "   "}, "give a query"),
        ("search", {}, "query"),
        ("context", {"situation": "holiday"}, "situation must be one of new, resume"),
        ("context", {"session": "no-such-session"}, "no hot memory for session"),
        ("add", {"text": "x", "tier": "wiki", "room": "auth"}, "pick one"),
        ("add", {"text": "x", "type": "user", "room": "auth"}, "a user memory is about you"),
        ("add", {"text": "x", "type": "diary"}, "type must be one of"),
        ("add", {"text": "<private>all of it</private>"}, "nothing left to save"),
        ("add", {"text": "x", "importance": 9}, "importance"),
        ("nosuch", {}, "nosuch"),
    ],
)
def test_bad_ids_and_arguments_are_mcp_errors(
    mcp: Client, tool: str, args: dict[str, Any], message: str
) -> None:
    text, error = mcp.call(tool, args)
    assert error and message in text
    assert "Traceback" not in text
    assert mcp.ok("search", {"query": "refresh token"})  # the server is still there


def test_add_refuses_what_the_cli_refuses_with_the_same_words(mcp: Client) -> None:
    text, error = mcp.call("add", {"text": "x", "tier": "wiki", "room": "auth"})
    cli = CliRunner().invoke(
        main, ["add", "--tier", "wiki", "--room", "auth", "x"], env=server_env(mcp.home)
    )
    assert error and cli.exit_code == 1
    assert text.split(": ", 1)[1] in cli.output  # after the SDK's "Error executing tool add"


def test_add_saves_redacted_without_private_parts_once(mcp: Client) -> None:
    secret = "sk-" + "a1b2c3d4" * 5
    text = "Billing webhooks retry 5 times. <private>the CFO's cell</private> key=" + secret
    first = mcp.ok("add", {"text": text, "room": "billing", "importance": 4})
    m = re.match(r"saved (\S+) -> (.+)\n", first)
    assert m, first
    saved = Path(m.group(2)).read_text(encoding="utf-8")
    assert "Billing webhooks retry 5 times." in saved and "importance: 4" in saved
    assert secret not in saved and "CFO" not in saved and "private" not in saved
    assert m.group(2).startswith(str(mcp.home / ".claude" / "memory-tool" / "rooms" / "billing"))
    again = mcp.ok("add", {"text": text, "room": "billing"})
    assert again.startswith(f"already saved {m.group(1)} -> {m.group(2)}")
    assert m.group(1) in ids_of(mcp.ok("search", {"query": "billing webhooks retry"}))


def test_add_ties_a_memory_to_files(mcp: Client) -> None:
    saved = mcp.ok(
        "add",
        {"text": "Migrations run with --lock in CI.", "type": "feedback",
         "paths": ["db/migrations/*.py", " "]},
    )  # fmt: skip
    path = Path(saved.splitlines()[0].split(" -> ")[1])
    assert "db/migrations/*.py" in path.read_text(encoding="utf-8")


def test_forget_retires_a_memory_search_still_finds_it_and_undo_brings_it_back(
    mcp: Client,
) -> None:
    saved = mcp.ok("add", {"text": "Use requests for HTTP calls.", "type": "feedback"})
    mid = saved.split()[1]
    assert "requests" in mcp.cli("wake")
    gone = mcp.ok("forget", {"id": mid})
    assert gone.startswith(f"{mid} forgotten")
    assert "requests" not in mcp.cli("wake")
    found = body(mcp.ok("search", {"query": "requests HTTP calls"}))
    assert f"{mid} " in found and "(history: forgotten 2026-11-29)" in found
    assert mcp.ok("forget", {"id": mid, "undo": True}).startswith(f"{mid} is back")
    assert "requests" in mcp.cli("wake")
    text, error = mcp.call("forget", {"id": "f-abcdef"})
    assert error and "no memory with id 'f-abcdef'" in text


def test_add_names_a_near_duplicate_and_scopes_room_memories_as_the_cli_does(
    mcp: Client,
) -> None:
    rule = "Deploy previews expire after 48 hours on the preview cluster."
    first = mcp.ok("add", {"text": rule, "room": "deployment"})
    m = re.match(r"saved (\S+) -> (.+)\n", first)
    assert m, first
    assert "project: " in Path(m.group(2)).read_text(encoding="utf-8")  # this project's
    longer = rule + " Renew one with the preview-renew job."
    text, error = mcp.call("add", {"text": longer, "room": "deployment"})
    assert error and f"nearly repeats {m.group(1)}" in text and m.group(2) in text
    forced = mcp.ok("add", {"text": longer, "room": "deployment", "force": True})
    assert forced.startswith("saved ")
    everyone = mcp.ok("add", {"text": "Canary first, always.", "room": "deployment",
                              "all_projects": True})  # fmt: skip
    m = re.match(r"saved (\S+) -> (.+)\n", everyone)
    assert m, everyone
    assert "project:" not in Path(m.group(2)).read_text(encoding="utf-8")
    text, error = mcp.call("add", {"text": "x", "all_projects": True})
    assert error and "global" in text


def test_context_gives_what_the_cli_context_gives(mcp: Client) -> None:
    for situation, prompt in (("spec", "billing database choice"), ("onboard", "")):
        cli = json.loads(mcp.cli("context", "--json", "--situation", situation, "--prompt", prompt))
        ours = mcp.ok("context", {"situation": situation, "prompt": prompt})
        assert ours.startswith(f"situation: {situation}  (")
        if cli["text"]:
            assert server.FENCE_OPEN + cli["text"] + server.FENCE_CLOSE in ours
        else:
            assert "(nothing to load)" in ours
        assert f"{cli['tokens']}/{cli['budget']} tokens of memory" in ours
    assert "PostgreSQL" in mcp.ok("context", {"situation": "spec", "prompt": "billing database"})


def test_an_index_deleted_mid_session_is_rebuilt_by_the_next_call(mcp: Client) -> None:
    before = ids_of(mcp.ok("search", {"query": "JWKS signing keys"}))
    db = mcp.home / ".claude" / "memory-tool" / "index.db"
    for path in (db, db.with_name("index.db-wal"), db.with_name("index.db-shm")):
        path.unlink(missing_ok=True)
    assert ids_of(mcp.ok("search", {"query": "JWKS signing keys"})) == before


# --- the process ------------------------------------------------------------------------------
def test_memory_tool_mcp_without_the_sdk_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memory_tool.mcp import register

    monkeypatch.setattr(register, "sdk_installed", lambda: False)
    res = CliRunner().invoke(main, ["mcp"])
    assert res.exit_code == 1 and "memory-tool[mcp]" in res.output


def test_the_semantic_model_loads_once_per_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_tool.store import semantic

    if not semantic.installed():
        pytest.skip(semantic.INSTALL_HINT)
    monkeypatch.setenv("MEMORY_TOOL_SEMANTIC", "1")
    state = Path(os.environ["HOME"]) / ".claude" / "memory-tool"
    write_memory(state / "wiki", "db.md", "We picked PostgreSQL for billing: JSONB columns.")
    write_memory(state / "wiki", "tabs.md", "Indent with four spaces, never tabs.")
    assert CliRunner().invoke(main, ["index"]).exit_code == 0  # stores the vectors
    loads: list[int] = []
    real = semantic.Model.__init__

    def counted(self: Any) -> None:
        loads.append(1)
        real(self)

    monkeypatch.setattr(semantic.Model, "__init__", counted)
    monkeypatch.setattr(semantic, "_MODEL", None)
    for query in ("which relational store holds invoices", "whitespace style"):
        assert "w-" in server.search(query)  # the tool as the SDK calls it, in this process
    assert loads == [1]


HOOK_PROBE = """
import io, json, sys
from memory_tool.runtime import dispatch, server as hook_server  # the resident server too
payload = json.loads(sys.argv[1])
for event, extra in (("SessionStart", {"source": "startup"}),
                     ("UserPromptSubmit", {"prompt": "have we discussed refresh token reuse?"}),
                     ("Stop", {"stop_hook_active": False}), ("SessionEnd", {"reason": "exit"})):
    data = dict(payload, hook_event_name=event, **extra)
    out = io.StringIO()
    dispatch.run(event, io.BytesIO(json.dumps(data).encode()), out)
    assert event != "UserPromptSubmit" or "memory-context" in out.getvalue(), out.getvalue()
print(json.dumps(sorted(m for m in sys.modules
                        if m.split(".")[0] in ("mcp", "mcp_types", "pydantic", "anyio")
                        or m.startswith("memory_tool.mcp"))))
"""


def test_the_hook_path_never_loads_the_mcp_sdk(project: Path, sandbox: Path) -> None:
    state = sandbox / ".claude" / "memory-tool"
    write_memory(state / "rooms" / "authentication", "rotation.md",
                 "Refresh tokens rotate; a reuse revokes the family.", type_="note")  # fmt: skip
    assert CliRunner().invoke(main, ["install", "--mcp"]).exit_code == 0
    assert CliRunner().invoke(main, ["index"]).exit_code == 0
    payload = {"session_id": "s-mcp", "transcript_path": "", "cwd": str(project)}
    res = subprocess.run(
        [sys.executable, "-c", HOOK_PROBE, json.dumps(payload)],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[-1]) == []
