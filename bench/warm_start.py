"""The first search of a `serve` session against the later ones, and the handshake, with the
background warm-up (router/facade/warmup.py) and without it (CONTEXT_ROUTER_WARM_UP=off).

Each session is a real `context-router serve` over stdio on the seeded catalog (the shipped
servers file, --no-wake-on-search so no backend starts and adds load). The client waits for
the ready line on stderr, then times the handshake (initialize → initialized → tools/list),
waits PAUSE_S (a model's first turn: a client's first search never follows the handshake at
once), then times the first search and LATER_SEARCHES more, each another everyday request.
A third series sends its first search right after the handshake: what is left of the
warm-up then. The three kinds of session are taken in turns, so load on this shared machine
lands on each alike.

Run alone: `python -m bench.warm_start`.
"""

import json
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.report import Options, Section, markdown_table
from router.catalog.load import load_catalog
from router.db import connect
from router.facade.jsonrpc_lines import encode, notification, request
from router.facade.warmup import SETTING
from router.paths import SEEDS_DIR, SHIPPED_SERVERS_FILE

RUNS = 5  # sessions per series
PAUSE_S = 2.0
READY_TIMEOUT_S = 120.0
ANSWER_TIMEOUT_S = 60.0
READY_LINE = b"context-router serve: ready on stdio"
# The bar: the first search within this many times the median of the later ones.
BAR_RATIO = 3.0
QUERIES = [
    "show the commit log",
    "what changed in my working tree",
    "current time in Tokyo",
    "read the contents of README.md",
    "download a web page as markdown",
    "remember that the user prefers tabs",
    "list the files in this folder",
    "create a new branch",
    "convert 3pm London time to New York",
    "search my notes for a person",
    "write a file",
]
LATER_SEARCHES = len(QUERIES) - 1
CONTEXT_ROUTER = Path(sys.executable).parent / "context-router"
SERIES = {
    "warm-up, first search after the pause": ("on", PAUSE_S),
    "no warm-up, first search after the pause": ("off", PAUSE_S),
    "warm-up, first search right after the handshake": ("on", 0.0),
}


class _Session:
    """One `serve` process spoken to in JSON-RPC lines, the handshake left to the caller."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        assert self.process.stdin and self.process.stdout and self.process.stderr
        self._ready = threading.Event()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self._buffer = b""
        self._next_id = 0
        if not self._ready.wait(READY_TIMEOUT_S):
            self.close()
            raise TimeoutError(f"no ready line within {READY_TIMEOUT_S} s: {b''.join(self._stderr)!r}")

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)
            if line.startswith(READY_LINE):
                self._ready.set()

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        self._write(encode(request(self._next_id, method, params)))
        reply = json.loads(self._read_line())
        if "error" in reply or reply.get("result", {}).get("isError"):
            raise RuntimeError(f"{method} failed: {reply}")
        return dict(reply["result"])

    def notify(self, method: str) -> None:
        self._write(encode(notification(method)))

    def _write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def _read_line(self) -> bytes:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                if not selector.select(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"no answer within {ANSWER_TIMEOUT_S} s")
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise ConnectionError("serve closed its stdout")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def session(db: Path, workspace: Path, warm_up: str, pause_s: float) -> dict[str, Any]:
    """One session's handshake, first search and later searches, in milliseconds."""
    argv = [str(CONTEXT_ROUTER), "serve", "--db", str(db), "--servers", str(SHIPPED_SERVERS_FILE)]
    argv += ["--workspace", str(workspace), "--no-wake-on-search"]
    peer = _Session(argv, dict(os.environ, **{SETTING: warm_up}))
    try:
        started = time.perf_counter()
        peer.send(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "warm-start-bench", "version": "0"},
            },
        )
        peer.notify("notifications/initialized")
        peer.send("tools/list")
        handshake = _ms(started)
        time.sleep(pause_s)
        searches = []
        for query in QUERIES:
            started = time.perf_counter()
            peer.send("tools/call", {"name": "mcp_search_tools", "arguments": {"query": query}})
            searches.append(_ms(started))
    finally:
        peer.close()
    later = statistics.median(searches[1:])
    return {
        "handshake_ms": handshake,
        "first_ms": searches[0],
        "later_median_ms": later,
        "ratio": searches[0] / later,
    }


def measure(scratch: Path, runs: int = RUNS) -> dict[str, Any]:
    db = scratch / "warm-start.db"
    conn = connect(db)
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    conn.close()
    sessions: dict[str, list[dict[str, Any]]] = {name: [] for name in SERIES}
    for _ in range(runs):
        for name, (warm_up, pause_s) in SERIES.items():
            sessions[name].append(session(db, scratch, warm_up, pause_s))
    figures: dict[str, Any] = {}
    for name, rows in sessions.items():
        figures[name] = {
            "sessions": rows,
            "handshake_median_ms": statistics.median(r["handshake_ms"] for r in rows),
            "first_median_ms": statistics.median(r["first_ms"] for r in rows),
            "later_median_ms": statistics.median(r["later_median_ms"] for r in rows),
            "ratio_median": statistics.median(r["ratio"] for r in rows),
            "ratio_max": max(r["ratio"] for r in rows),
            "within_bar": sum(r["ratio"] <= BAR_RATIO for r in rows),
        }
    return figures


def run(options: Options) -> Section:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        figures = measure(Path(scratch))
    load_after = os.getloadavg()[0]
    rows = [
        [
            name,
            f"{f['handshake_median_ms']:.1f}",
            f"{f['first_median_ms']:.1f}",
            f"{f['later_median_ms']:.1f}",
            f"{f['ratio_median']:.1f}× (max {f['ratio_max']:.1f}×)",
            f"{f['within_bar']}/{len(f['sessions'])}",
        ]
        for name, f in figures.items()
    ]
    barred = figures["warm-up, first search after the pause"]
    verdict = "PASS" if barred["within_bar"] == len(barred["sessions"]) else "FAIL"
    markdown = (
        f"Real `serve` sessions over stdio on the seeded catalog, {RUNS} per series, taken in turns; "
        f"a first search {PAUSE_S:g} s after the handshake unless said; later searches: "
        f"{LATER_SEARCHES} others back to back. Load average {load_before:.1f} before and "
        f"{load_after:.1f} after, on {os.cpu_count()} CPUs.\n\n"
        + markdown_table(
            [
                "series",
                "handshake ms (median)",
                "first search ms (median)",
                "later searches ms (median)",
                "first ÷ later",
                f"sessions within {BAR_RATIO:g}×",
            ],
            rows,
        )
        + f"\n\n- every session's first search within {BAR_RATIO:g}× the median of its later ones, "
        f"with the warm-up: {barred['within_bar']}/{len(barred['sessions'])} {verdict}"
    )
    return Section(
        "First search of a session", markdown, {"figures": figures, "load_average": [load_before, load_after]}
    )


if __name__ == "__main__":
    print(run(Options(sizes=(), write=False)).markdown)
