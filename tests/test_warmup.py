"""`serve` loads what the first search needs once it serves (router/facade/warmup.py): the
model, the tokenizer and the catalog's indexes, without a search; a search arriving before
the warm-up ends waits for it (nothing is loaded twice); a failing warm-up is logged and
search still answers. The real server, in-process over the SDK's Client, on the seeded
catalog; and a real `serve` over stdio."""

import json
import logging
import os
import subprocess
import threading
import time

import anyio
import pytest
import tiktoken
from mcp import Client

from router.agents.roles import get_role
from router.backends.servers import ServersConfig
from router.catalog.semantic_index import semantic_index
from router.db import connect
from router.facade import warmup
from router.facade.server import RouterState, ServeOptions, build_server
from router.semantic import static_model
from router.tokens import _encoding
from tests.facade_support import CONTEXT_ROUTER

pytestmark = pytest.mark.anyio


@pytest.fixture
def options(seeded_db, tmp_path) -> ServeOptions:
    # opened once more as a router finds it after a first run: PRAGMA optimize has written its
    # statistics, and no write-ahead log is left over
    connect(seeded_db).close()
    return ServeOptions(
        db_path=seeded_db,
        servers=ServersConfig(servers={}),
        role=get_role("staff-backend"),
        workspace=tmp_path,
        wake_on_search=False,
    )


@pytest.fixture
def cold():
    """This process as a new router finds it: no tokenizer, no model loaded yet."""
    _encoding.cache_clear()
    static_model.default_model.cache_clear()
    yield
    _encoding.cache_clear()
    static_model.default_model.cache_clear()


def page_of(result) -> dict:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def write_ahead_log(db_path) -> int:
    """Bytes in the database's -wal file (none or empty until a write on an open connection)."""
    wal = db_path.with_name(db_path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def finds_git_log(page: dict) -> bool:
    """The page's best match (no server is set up here: it is named under `unavailable`)."""
    return page["unavailable"][0]["tools"][0] == "git_log"


async def test_serving_loads_the_model_tokenizer_and_indexes_before_any_search(options, cold):
    states: list[RouterState] = []
    wal_at_start = write_ahead_log(options.db_path)
    async with Client(build_server(options, on_started=states.append)) as client:
        await client.list_tools()
        [state] = states
        await state.warmup.ready()
        loaded_tokenizer = _encoding.cache_info().currsize
        loaded_model = static_model.default_model.cache_info().currsize
        # the loop's own connection, which searches use, holds the catalog's vectors already
        vectors = len(semantic_index(state.db.conn))
        # and the first audit row will not have to start the file's write-ahead log
        wal_before_any_call = write_ahead_log(options.db_path)
        page = page_of(await client.call_tool("mcp_search_tools", {"query": "show the commit log"}))
    assert loaded_tokenizer == 1 and loaded_model == 1
    assert vectors == 183
    assert wal_at_start == 0 and wal_before_any_call > 0
    assert finds_git_log(page)


async def test_with_the_warm_up_off_the_first_search_loads_everything(options, cold, monkeypatch):
    monkeypatch.setenv(warmup.SETTING, "off")
    states: list[RouterState] = []
    wal_at_start = write_ahead_log(options.db_path)
    async with Client(build_server(options, on_started=states.append)) as client:
        await states[0].warmup.ready()
        before = _encoding.cache_info().currsize, len(semantic_index(states[0].db.conn))
        wal = write_ahead_log(options.db_path)
        page = page_of(await client.call_tool("mcp_search_tools", {"query": "show the commit log"}))
        after = _encoding.cache_info().currsize, len(semantic_index(states[0].db.conn))
    assert before == (0, 0) and after == (1, 183) and wal == wal_at_start == 0
    assert finds_git_log(page)


async def test_a_search_during_the_warm_up_waits_for_it_and_nothing_is_loaded_twice(
    options, cold, monkeypatch
):
    loads: list[str] = []
    real_get_encoding = tiktoken.get_encoding

    def slow_get_encoding(name: str):
        # a loader still busy when the first search arrives
        loads.append(threading.current_thread().name)
        time.sleep(0.5)
        return real_get_encoding(name)

    monkeypatch.setattr(tiktoken, "get_encoding", slow_get_encoding)
    async with Client(build_server(options)) as client:
        page = page_of(await client.call_tool("mcp_search_tools", {"query": "show the commit log"}))
    assert finds_git_log(page)
    assert len(loads) == 1, loads  # the warm-up's, in its worker thread
    assert loads[0] != threading.main_thread().name


async def test_a_failing_warm_up_is_logged_and_search_still_answers(options, cold, monkeypatch, caplog):
    def broken() -> None:
        raise RuntimeError("the model file is unreadable")

    monkeypatch.setattr(warmup, "load_shared", broken)
    with caplog.at_level(logging.WARNING, logger="router.facade.warmup"):
        async with Client(build_server(options)) as client:
            page = page_of(await client.call_tool("mcp_search_tools", {"query": "show the commit log"}))
    assert finds_git_log(page)
    assert "warming up search failed" in caplog.text and "the model file is unreadable" in caplog.text


def test_a_real_serve_warms_up_after_its_ready_line_and_says_when_warming_fails(seeded_db, tmp_path):
    """A setting the model cannot honour fails the warm-up (logged on stderr, after the
    ready line); the handshake and a search still get their answers (the search its own
    error for the setting, as without a warm-up)."""
    argv = [str(CONTEXT_ROUTER), "serve", "--db", str(seeded_db), "--workspace", str(tmp_path)]
    env = dict(os.environ, CONTEXT_ROUTER_SEMANTIC_MODEL="no-such-model")
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "mcp_search_tools", "arguments": {"query": "show the commit log"}},
        },
    ]
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        answers = {}
        for message in requests:
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
            if "id" in message:
                answers[message["id"]] = json.loads(process.stdout.readline())
        process.stdin.close()
        stderr = process.stderr.read() if process.stderr else ""
        process.wait(timeout=30)
    assert answers[1]["result"]["serverInfo"]["name"] == "context-router"
    assert len(answers[2]["result"]["tools"]) == 3
    search = answers[3]["result"]
    assert search["isError"]  # answered, with the search's own error for the setting
    ready = stderr.index("context-router serve: ready on stdio")
    failed = stderr.index("warming up search failed")
    assert ready < failed and "CONTEXT_ROUTER_SEMANTIC_MODEL" in stderr[failed:]


async def test_the_warm_up_waits_for_the_clients_tools_list_so_the_handshake_runs_alone(
    options, cold, monkeypatch
):
    monkeypatch.setattr(warmup, "START_BY_S", 60.0)
    states: list[RouterState] = []
    async with Client(build_server(options, on_started=states.append)) as client:
        await anyio.sleep(0.3)  # handshake done (the Client's initialize), tools not listed yet
        during_handshake = _encoding.cache_info().currsize
        await client.list_tools()
        with anyio.fail_after(20):  # started by tools/list, long before the 60 s fallback
            await states[0].warmup.ready()
        after_tools_list = _encoding.cache_info().currsize
    assert during_handshake == 0 and after_tools_list == 1


async def test_without_a_client_the_warm_up_starts_after_a_while(options, cold, monkeypatch):
    monkeypatch.setattr(warmup, "START_BY_S", 0.1)
    states: list[RouterState] = []
    async with Client(build_server(options, on_started=states.append)):
        await states[0].warmup.ready()  # no tools/list, no call: the timer starts it
        loaded = _encoding.cache_info().currsize
    assert loaded == 1
