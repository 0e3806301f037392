"""The MCP facade end to end over real stdio: `context-router serve` as a subprocess, driven by
a lean JSON-RPC client (one request line out, one response line in), so the numbers are the
server's round trip and not a client library's overhead.

- search (10,000-tool synthetic catalog) and inspect through the router, next to a minimal
  echo tool on the same SDK in the same run (bench/echo_server.py: the framework floor), once
  on the SDK's own stdio transport and once on the router's (router/facade/stdio_transport.py);
- mcp_call_tool to a real backend (mcp-server-time) through the router, next to the same
  call made directly to that backend: the difference of medians is the router's overhead
  (role check, schema validation, breaker, two audit rows, forwarding).

The series are taken in turns of BLOCK calls, so a burst of load on this noisy machine lands
on every series alike and their differences stay fair. Two in-process series split the
overhead: the call through the backend pool alone, and through call_handler.call_tool.

Run alone: `python -m bench.facade_bench`.
"""

import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio

from bench import synthetic
from bench.load import load_synthetic
from bench.paths import BENCH_DIR
from bench.report import Options, Section, markdown_table
from router.catalog.load import INSERT_TOOL, tool_row
from router.catalog.sources import read_seed_file
from router.db import connect
from router.facade.jsonrpc_lines import LineClient
from router.paths import SEEDS_DIR

CATALOG_SIZE = 10_000
ROUND_TRIPS = 600  # per measured series, after WARM_UP
WARM_UP = 50
BLOCK = 50  # calls of one series in a row, before the next series' turn
ECHO_SERVER = BENCH_DIR / "echo_server.py"
VENV_BIN = Path(sys.executable).parent
TIME_ARGS = {"timezone": "Asia/Tokyo"}

# The bars, in milliseconds.
BARS = {"search_median": 1.5, "search_p99": 4.0, "call_overhead_median": 1.0}


class StdioPeer(LineClient):
    """An MCP server subprocess spoken to with raw JSON-RPC lines (protocol 2025-11-25)."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv, client_name="facade-bench")

    def call(self, tool: str, arguments: dict) -> dict:
        result = self.call_tool(tool, arguments)
        if result.get("isError"):
            raise RuntimeError(f"{tool} failed: {result['content'][0]['text']}")
        return result


@dataclass(frozen=True)
class Series:
    """One measured kind of round trip: which server, which tool, which arguments in turn."""

    peer: StdioPeer
    tool: str
    argument_list: list[dict]


def time_interleaved(series: dict[str, Series]) -> dict[str, list[float]]:
    """Milliseconds per tools/call for each series, taken in turns of BLOCK calls: a burst of
    load on the machine lands on every series alike, so the differences between them (the
    router's overhead) stay fair, while each block still measures calls made back to back."""
    for one in series.values():
        for i in range(WARM_UP):
            one.peer.call(one.tool, one.argument_list[i % len(one.argument_list)])
    timings: dict[str, list[float]] = {name: [] for name in series}
    for turn in range(ROUND_TRIPS // BLOCK):
        for name, one in series.items():
            for i in range(turn * BLOCK, (turn + 1) * BLOCK):
                arguments = one.argument_list[i % len(one.argument_list)]
                started = time.perf_counter()
                one.peer.call(one.tool, arguments)
                timings[name].append((time.perf_counter() - started) * 1000)
    return timings


def summarize(timings: list[float]) -> dict[str, float]:
    ordered = sorted(timings)
    return {
        "median_ms": statistics.median(ordered),
        "p99_ms": ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))],
    }


def _router(db: Path, servers: Path, workspace: Path) -> StdioPeer:
    return StdioPeer(
        [
            str(VENV_BIN / "context-router"),
            "serve",
            "--db",
            str(db),
            "--servers",
            str(servers),
            "--workspace",
            str(workspace),
            "--no-wake-on-search",
        ]
    )


def measure(scratch: Path) -> dict[str, dict[str, float]]:
    tools = synthetic.catalog(CATALOG_SIZE)
    db = scratch / "facade-bench.db"
    conn = connect(db)
    load_synthetic(conn, tools, scratch)
    # the real backend's tool as its seed lists it (the router checks a starting backend's
    # tools/list against the catalog: a made-up definition would be quarantined)
    time_seed = read_seed_file(SEEDS_DIR / "time.json")
    [tool] = [t for t in time_seed.tools if t.name == "get_current_time"]
    conn.execute(
        "INSERT INTO profiles(name) VALUES ('core') ON CONFLICT DO NOTHING;"
        "INSERT INTO servers(name, profile) VALUES ('time', 'core');"
    )
    conn.execute(INSERT_TOOL, tool_row(tool, server="time", catalog_name=tool.name).__dict__)
    conn.close()
    servers = scratch / "servers.toml"
    servers.write_text(
        '[servers.time]\nprofile = "core"\ncommand = "mcp-server-time"\nargs = ["--local-timezone", "UTC"]\n',
        encoding="utf-8",
    )

    queries = [{"query": q} for q in synthetic.queries(tools, 300)]
    names = [{"toolName": t["name"]} for t in tools[:: max(1, CATALOG_SIZE // 300)]]
    results: dict[str, dict[str, float]] = {}

    echo = StdioPeer([sys.executable, str(ECHO_SERVER)])
    echo_event_loop = StdioPeer([sys.executable, str(ECHO_SERVER), "--event-loop-stdio"])
    router = _router(db, servers, scratch)
    direct = StdioPeer([str(VENV_BIN / "mcp-server-time"), "--local-timezone", "UTC"])
    try:
        call = [{"toolName": "get_current_time", "args": TIME_ARGS}]
        timings = time_interleaved(
            {
                "echo floor (SDK stdio)": Series(echo, "echo", [{"text": "ping"}]),
                "echo floor (router's stdio)": Series(echo_event_loop, "echo", [{"text": "ping"}]),
                "mcp_search_tools @10k": Series(router, "mcp_search_tools", queries),
                "mcp_inspect_schema @10k": Series(router, "mcp_inspect_schema", names),
                "get_current_time direct": Series(direct, "get_current_time", [TIME_ARGS]),
                "get_current_time via mcp_call_tool": Series(router, "mcp_call_tool", call),
            }
        )
        results.update({name: summarize(values) for name, values in timings.items()})
    finally:
        for peer in (echo, echo_event_loop, router, direct):
            peer.close()
    results.update(anyio.run(_in_process_series, db, servers, scratch))
    return results


async def _in_process_series(db: Path, servers_file: Path, workspace: Path) -> dict[str, dict[str, float]]:
    """The same forwarded call without the router's own stdio hop: through call_handler.call_tool
    (role, schema validation, breaker, two audit rows) and through the backend pool alone.
    Their difference is the router's own work per call."""
    from router.agents.roles import get_role
    from router.backends.servers import load_servers
    from router.facade import call_handler, handlers
    from router.facade.backends import BackendPool
    from router.facade.database import FacadeDatabase
    from router.facade.placeholders import Placeholders, default_data_dir

    placeholders = Placeholders(workspace, default_data_dir(db))
    async with FacadeDatabase(db) as database, BackendPool(load_servers(servers_file), placeholders) as pool:
        ctx = handlers.FacadeContext(
            db=database, role=get_role("staff-backend"), session_id="bench", pool=pool, wake_on_search=False
        )
        call = {"toolName": "get_current_time", "args": TIME_ARGS}
        series = {
            "backend pool only (the hop to the backend)": lambda: pool.call(
                "time", "get_current_time", TIME_ARGS
            ),
            "call_handler.call_tool (router work + hop)": lambda: call_handler.call_tool(ctx, call),
        }
        for _ in range(WARM_UP):
            await call_handler.call_tool(ctx, call)
        timings: dict[str, list[float]] = {name: [] for name in series}
        for _ in range(ROUND_TRIPS // BLOCK):  # in turns of BLOCK calls, like the stdio series
            for name, make_call in series.items():
                for _ in range(BLOCK):
                    started = time.perf_counter()
                    await make_call()
                    timings[name].append((time.perf_counter() - started) * 1000)
        return {name: summarize(values) for name, values in timings.items()}


def bar_checks(results: dict[str, dict[str, float]]) -> list[str]:
    search = results["mcp_search_tools @10k"]
    overhead = (
        results["get_current_time via mcp_call_tool"]["median_ms"]
        - results["get_current_time direct"]["median_ms"]
    )
    own_work = (
        results["call_handler.call_tool (router work + hop)"]["median_ms"]
        - results["backend pool only (the hop to the backend)"]["median_ms"]
    )
    checks = [
        ("search median", search["median_ms"], BARS["search_median"]),
        ("search p99", search["p99_ms"], BARS["search_p99"]),
        ("router overhead on a call, end to end (median)", overhead, BARS["call_overhead_median"]),
        ("router's own work on a call, in-process (median)", own_work, BARS["call_overhead_median"]),
    ]
    return [
        f"{name}: {value:.3f} ms (bar ≤ {bar} ms) {'PASS' if value <= bar else 'MISS'}"
        for name, value, bar in checks
    ]


def run(options: Options) -> Section:
    with tempfile.TemporaryDirectory(prefix="facade-bench-") as scratch:
        results = measure(Path(scratch))
    rows = [[name, f"{r['median_ms']:.3f}", f"{r['p99_ms']:.3f}"] for name, r in results.items()]
    checks = bar_checks(results)
    load = os.getloadavg()[0]
    markdown = (
        f"Load average during the run: {load:.1f} on {os.cpu_count()} CPUs. "
        f"MCP round trip over real stdio, {ROUND_TRIPS} calls per series after {WARM_UP} warm-up "
        f"calls, the series taken in turns of {BLOCK} calls, lean JSON-RPC client; "
        f"catalog of {CATALOG_SIZE:,} tools.\n\n"
        + markdown_table(["series", "median ms", "p99 ms"], rows)
        + "\n\n"
        + "\n".join(f"- {line}" for line in checks)
    )
    return Section("MCP facade over stdio", markdown, {"results": results, "bars": checks})


def main() -> int:
    section = run(Options(sizes=(CATALOG_SIZE,), write=False))
    print(f"## {section.title}\n\n{section.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
