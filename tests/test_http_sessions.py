"""MCP sessions of `serve --http` are bounded per client and in all, and expire when idle
(issue 35, item 6), on a real router: a client over its bound, or a new client over the
total, closes the least recently used idle session instead of being refused; a closed
session answers 404; an idle one is closed after [http] session_idle_s, even while it holds
a GET stream; and one process opening sessions without end leaves the router's memory flat
and a new client served."""

import threading
import time

import httpx2
import pytest

from bench.http_flood import MINIMAL_SERVERS, router_with_open_file_limit, seeded_db
from tests.http_support import POST_HEADERS, PROTOCOL_VERSION, RawHttpSession, initialize_request

pytestmark = pytest.mark.slow


def router_with(tmp_path, http_settings: str):
    db = seeded_db(tmp_path / "r.db")
    servers = tmp_path / "servers.toml"
    servers.write_text(f"[http]\n{http_settings}\n{MINIMAL_SERVERS}", encoding="utf-8")
    return router_with_open_file_limit(db, servers, 4096, tmp_path / "serve.stderr")


def alive(session: RawHttpSession) -> bool:
    answer = session.post({"jsonrpc": "2.0", "id": 99, "method": "ping"})
    assert answer.status_code in (200, 404), (answer.status_code, answer.text)
    return answer.status_code == 200


def test_sessions_over_a_clients_bound_or_the_total_close_the_least_recently_used_idle_one(tmp_path):
    settings = "max_sessions = 20\nmax_sessions_per_client = 8\nsession_idle_s = 600"
    with router_with(tmp_path, settings) as (_process, port):
        url = f"http://127.0.0.1:{port}/mcp"
        greedy = [RawHttpSession(url, name="greedy") for _ in range(30)]  # none refused
        agents = [RawHttpSession(url, name=f"agent-{index}") for index in range(12)]
        # greedy kept its last 8; all used since but agent-0, now the least recently used
        assert [alive(s) for s in greedy] == [False] * 22 + [True] * 8
        for agent in agents[1:]:
            assert alive(agent)
        newcomer = RawHttpSession(url, name="newcomer")  # 21st: the total bound makes room
        assert "content" in newcomer.search("what time is it")
        assert [alive(s) for s in greedy] == [False] * 22 + [True] * 8
        assert [alive(a) for a in agents] == [False] + [True] * 11
        for session in greedy + agents + [newcomer]:
            session.close()
    stderr = (tmp_path / "serve.stderr").read_text()
    assert "closed the least recently used idle session of greedy at 127.0.0.1, which has 8" in stderr
    assert "closed the least recently used idle session: 20 sessions were open (the bound)" in stderr


def test_an_idle_session_is_closed_even_while_it_holds_a_get_stream(tmp_path):
    with router_with(tmp_path, "session_idle_s = 1.0") as (_process, port):
        url = f"http://127.0.0.1:{port}/mcp"
        idle, streaming, busy = (RawHttpSession(url, name=name) for name in ("idle", "streaming", "busy"))
        stream_ended = threading.Event()

        def hold_get_stream() -> None:
            headers = {"Accept": "text/event-stream", "mcp-session-id": streaming.session_id}
            headers["mcp-protocol-version"] = PROTOCOL_VERSION
            with httpx2.stream("GET", url, headers=headers, timeout=30) as response:
                assert response.status_code == 200
                for _ in response.iter_bytes():
                    pass
            stream_ended.set()

        holder = threading.Thread(target=hold_get_stream, daemon=True)
        holder.start()
        until = time.monotonic() + 3.0
        while time.monotonic() < until:
            assert alive(busy)  # used every 0.2 s: never idle for 1 s
            time.sleep(0.2)
        assert not alive(idle)
        assert not alive(streaming)
        assert stream_ended.wait(10)  # its GET stream was ended with it
        assert alive(busy)
        for session in (idle, streaming, busy):
            session.close()


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


# The bench's shape at a smaller scale (bench/http_sessions.py: 10,050 sessions at the
# default bound): one process opens OPENED sessions, never closing any, against a bound of
# BOUND; unbounded, each would keep about 41 KB.
BOUND = 20
OPENED = 1000


def test_one_process_opening_sessions_without_end_leaves_memory_flat_and_new_clients_served(tmp_path):
    with router_with(tmp_path, f"max_sessions = {BOUND}\nmax_sessions_per_client = {BOUND}") as (
        process,
        port,
    ):
        url = f"http://127.0.0.1:{port}/mcp"
        # a first search loads what search needs once (the model, the indexes: tens of MB the
        # warm-up would load meanwhile), so what follows measures the sessions alone
        with RawHttpSession(url, name="first") as first:
            assert "content" in first.search("what time is it")
        http = httpx2.Client(timeout=30)
        body = initialize_request("leaky")
        statuses: dict[int, int] = {}
        for opened in range(OPENED):
            status = http.post(url, json=body, headers=POST_HEADERS).status_code
            statuses[status] = statuses.get(status, 0) + 1
            if opened == 2 * BOUND:
                rss_at_bound = rss_kib(process.pid)
        rss_after = rss_kib(process.pid)
        with RawHttpSession(url, name="newcomer") as newcomer:
            assert "content" in newcomer.search("what time is it")
        http.close()
    assert statuses == {200: OPENED}  # none refused
    # 980 more sessions unbounded would hold about 40 MB more
    assert rss_after - rss_at_bound < 15 * 1024, (rss_at_bound, rss_after)
