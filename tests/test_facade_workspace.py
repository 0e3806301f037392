"""Backends run in the client's workspace: the root a client declares (MCP roots), else
`serve --workspace`, else the router's working directory. Real `context-router serve`
processes, real mcp-server-git, real temporary git repositories; the router itself is
started in a directory that is not a git repository."""

import json
import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from router.facade.client_workspace import ROOTS_TIMEOUT_S
from router.facade.jsonrpc_lines import LineClient
from tests.facade_support import CONTEXT_ROUTER, audit_rows, json_of, make_workspace, text_of
from tests.http_support import free_port, wait_for_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FIX = (
    "open the agent in a git repository (clients that declare MCP roots, such as Claude Code and "
    "OpenCode, use the project they open); for a client without roots, start the router in one or "
    "pass --workspace DIR"
)


def commit(repository: Path, message: str) -> None:
    git = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-C", str(repository)]
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", message], check=True)


@pytest.fixture
def projects(facade, tmp_path):
    """Two git repositories with a commit each of their own, and a directory that is none
    (where the router starts)."""
    first, second = make_workspace(tmp_path / "first"), make_workspace(tmp_path / "second")
    commit(first, "only in the first project")
    commit(second, "only in the second project")
    elsewhere = tmp_path / "not-a-repository"
    elsewhere.mkdir()
    return first, second, elsewhere


class Roots:
    """A client's list_roots_callback: the roots it declares now, and how often it was asked."""

    def __init__(self, *directories: Path) -> None:
        self.directories = list(directories)
        self.asked = 0

    async def __call__(self, _context) -> types.ListRootsResult:
        self.asked += 1
        return types.ListRootsResult(
            roots=[types.Root(uri=d.as_uri(), name=d.name) for d in self.directories]
        )


def router_in(facade, directory: Path) -> StdioServerParameters:
    """`context-router serve` started in `directory`, with no --workspace."""
    args = ["serve", "--db", str(facade.db), "--servers", str(facade.servers_file)]
    return StdioServerParameters(command=str(CONTEXT_ROUTER), args=args, cwd=str(directory))


async def git_log(client: Client, repository: Path):
    return await client.call_tool(
        "mcp_call_tool", {"toolName": "git_log", "args": {"repo_path": str(repository)}}
    )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_client_declaring_a_repository_as_its_root_gets_git_there(facade, projects, mode):
    """Handshake versions: roots/list once per connection, again after list_changed.
    2026-07-28: the roots ride each call's inputResponses (an InputRequiredResult first); a
    search takes the roots the client gave last."""
    first, second, elsewhere = projects
    roots = Roots(first)
    async with Client(router_in(facade, elsewhere), mode=mode, list_roots_callback=roots) as client:
        found = json_of(await client.call_tool("mcp_search_tools", {"query": "show the commit log"}))
        in_first = await git_log(client, first)
        outside = await git_log(client, second)  # mcp-server-git is confined to the root
        asked_for_three = roots.asked
        json_of(await client.call_tool("mcp_search_tools", {"query": "show the commit log"}))
        asked_for_four = roots.asked
        roots.directories = [second]
        if mode == "legacy":
            await client.send_roots_list_changed()
        in_second = await git_log(client, second)
    git_hits = [hit for hit in found["tools"] if hit["name"] == "git_log"]
    assert git_hits and "available" not in git_hits[0]  # callable, in the client's root
    assert not in_first.is_error, text_of(in_first)
    assert "only in the first project" in text_of(in_first)
    assert outside.is_error and "only in the second project" not in text_of(outside)
    assert not in_second.is_error, text_of(in_second)
    assert "only in the second project" in text_of(in_second)
    # asked once for the connection (handshake), or for the first search and each call (2026)
    assert asked_for_three == (1 if mode == "legacy" else 3)
    assert asked_for_four == asked_for_three  # a search again: the roots the client gave last


async def test_without_roots_git_outside_a_repository_is_unavailable_with_the_fix(facade, projects):
    first, _, elsewhere = projects
    async with Client(router_in(facade, elsewhere), mode="legacy") as client:
        found = json_of(await client.call_tool("mcp_search_tools", {"query": "show the commit log"}))
        refused = await git_log(client, first)
    reason = f"not usable in this workspace: {elsewhere.resolve()} is not inside a git repository; to fix it: {FIX}"
    # no slot among the callable tools: git is one entry of the page, with the reason and the fix
    assert "git_log" not in [hit["name"] for hit in found["tools"]]
    [git] = [entry for entry in found["unavailable"] if entry["server"] == "git"]
    assert "git_log" in git["tools"] and git["reason"] == reason
    assert refused.is_error and reason in text_of(refused)
    assert audit_rows(facade.db)[-1]["outcome"] == "unavailable"  # refused before any backend started


def test_servers_says_roots_decide_and_search_says_git_is_unavailable_outside_a_repository(facade, projects):
    first, _, elsewhere = projects

    def git_row(*extra: str) -> dict:
        argv = [str(CONTEXT_ROUTER), "servers", "--db", str(facade.db), "--servers", str(facade.servers_file)]
        listed = subprocess.run(
            argv + ["--json", *extra], cwd=elsewhere, capture_output=True, text=True, check=True, timeout=60
        )
        return next(row for row in json.loads(listed.stdout) if row["server"] == "git")

    # `servers` runs where no client is: git is installed, each client's root decides
    outside, inside = git_row(), git_row("--workspace", str(first))
    assert outside["installed"] and outside["problem"] is None and inside["problem"] is None
    assert outside["workspace"].startswith("each client's root decides: usable where the client's root is")
    assert (
        f"a client without roots gets {elsewhere.resolve()}, which is not inside a git repository"
        in (outside["workspace"])
    )
    assert f"a client without roots gets {first}, which is a git repository too" in inside["workspace"]
    # `search` at a terminal is about its own working directory: there git cannot work
    searched = subprocess.run(
        [str(CONTEXT_ROUTER), "search", "--db", str(facade.db), "--servers", str(facade.servers_file)]
        + ["--json", "show the commit log"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    hit = next(hit for hit in json.loads(searched.stdout) if hit["name"] == "git_log")
    assert hit["available"] is False and FIX in hit["unavailable_reason"]


def test_serve_says_per_client_root_whether_git_works_there(facade, projects, tmp_path):
    """The ready line says roots decide; each root a client declares is then judged on
    stderr, once per router, where git will run."""
    first, _, elsewhere = projects
    log = tmp_path / "serve.stderr"
    argv = [str(CONTEXT_ROUTER), "serve", "--db", str(facade.db), "--servers", str(facade.servers_file)]
    argv += ["--workspace", str(elsewhere)]
    pages = []
    with log.open("wb") as stderr, LineClient(argv, capabilities={"roots": {}}, stderr=stderr) as client:
        for root in (first, first, elsewhere):
            client.send(
                "tools/call", {"name": "mcp_search_tools", "arguments": {"query": "show the commit log"}}
            )
            asked = json.loads(client.read_line())
            assert asked["method"] == "roots/list"
            answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": root.as_uri()}]}}
            client.write_raw((json.dumps(answer) + "\n").encode())
            pages.append(json.loads(json.loads(client.read_line())["result"]["content"][0]["text"]))
            client.notify("notifications/roots/list_changed")  # the next search asks again
    said = log.read_text(encoding="utf-8")
    assert "git per client root" in said and "context-router serve: git: each client's root decides" in said
    assert f"context-router serve: client root {first}: git usable there (a git repository)" in said
    assert (
        f"context-router serve: client root {elsewhere.resolve()}: git unavailable there: not usable in "
        f"this workspace: {elsewhere.resolve()} is not inside a git repository; to fix it: {FIX}"
    ) in said
    assert said.count(f"client root {first}:") == 1  # the same root again: said once
    assert [page["tools"][0]["name"] for page in pages[:2]] == ["git_log", "git_log"]
    assert "git_log" not in [tool["name"] for tool in pages[2]["tools"]]


@contextmanager
def http_router_in(facade, directory: Path):
    """`context-router serve --http` on a free loopback port, started in `directory`."""
    port = free_port()
    argv = [str(CONTEXT_ROUTER), "serve", "--http", f"127.0.0.1:{port}", "--role", "staff-backend"]
    argv += ["--db", str(facade.db), "--servers", str(facade.servers_file)]
    env = {k: v for k, v in os.environ.items() if k != "CONTEXT_ROUTER_ROLE"}
    process = subprocess.Popen(
        argv, cwd=directory, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=15)


async def test_one_http_router_runs_git_in_each_clients_own_project(facade, projects):
    """Two clients of one HTTP router, in two projects, at once: each one's git sees its
    own repository and is refused the other's."""
    first, second, elsewhere = projects
    with http_router_in(facade, elsewhere) as url:
        one_roots = Roots(first)
        async with (
            Client(streamable_http_client(url), mode="legacy", list_roots_callback=one_roots) as one,
            Client(streamable_http_client(url), mode="legacy", list_roots_callback=Roots(second)) as two,
        ):
            one_own, two_own = await git_log(one, first), await git_log(two, second)
            one_other, two_other = await git_log(one, second), await git_log(two, first)
            one_roots.directories = [second]  # told over HTTP: only this session asks again
            await one.send_roots_list_changed()
            one_moved, two_stays = await git_log(one, second), await git_log(two, second)
            # a 2026-07-28 client (no session) gets its own root too
            async with Client(url, mode="2026-07-28", list_roots_callback=Roots(second)) as modern:
                modern_own = await git_log(modern, second)
    assert "only in the first project" in text_of(one_own) and not one_own.is_error
    assert "only in the second project" in text_of(two_own) and not two_own.is_error
    assert one_other.is_error and "only in the second project" not in text_of(one_other)
    assert two_other.is_error and "only in the first project" not in text_of(two_other)
    assert "only in the second project" in text_of(modern_own) and not modern_own.is_error
    assert "only in the second project" in text_of(one_moved) and not one_moved.is_error
    assert not two_stays.is_error and one_roots.asked == 2


def test_a_client_that_declares_roots_but_never_lists_them_gets_the_routers_workspace(facade, projects):
    """The router waits ROOTS_TIMEOUT_S for roots/list, once per connection, then serves in
    its own workspace (here not a git repository: git is unavailable, and says why)."""
    _, _, elsewhere = projects
    argv = [str(CONTEXT_ROUTER), "serve", "--db", str(facade.db), "--servers", str(facade.servers_file)]
    argv += ["--workspace", str(elsewhere)]
    with LineClient(argv, capabilities={"roots": {}}) as client:
        client.send("tools/call", {"name": "mcp_search_tools", "arguments": {"query": "show the commit log"}})
        asked = json.loads(client.read_line())
        assert asked["method"] == "roots/list"  # and never answered
        lines = [json.loads(client.read_line(timeout_s=ROOTS_TIMEOUT_S + 30))]
        while "result" not in lines[-1]:
            lines.append(json.loads(client.read_line()))
        found = lines[-1]
        # the unanswered request is cancelled, the search answered
        assert [line.get("method") for line in lines[:-1]] == ["notifications/cancelled"], lines
        again = client.call_tool("mcp_search_tools", {"query": "show the commit log"})  # not asked again
    for result in (found["result"], again):
        page = json.loads(result["content"][0]["text"])
        assert "git_log" not in [tool["name"] for tool in page["tools"]]
        git = next(entry for entry in page["unavailable"] if entry["server"] == "git")
        assert "git_log" in git["tools"] and "is not inside a git repository" in git["reason"]
