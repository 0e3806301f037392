"""Search and inspect latency against catalog size, router vs rank-bm25, in-process.

For each size N: the synthetic catalog of N tools is loaded into a fresh SQLite file; the
router's `search` (limit 10) and `inspect_tool` are timed per call over a fixed query set,
and rank-bm25 over the same tools on a sample of the same queries (it scores every tool
in Python, so at 100k a full pass would take minutes). Median and p99 per engine; the
ratio is rank-bm25's median over the router's.
"""

import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: write the PNG only
import matplotlib.pyplot as plt

from bench import synthetic
from bench.baseline import Bm25Baseline
from bench.load import load_synthetic
from bench.paths import CHART
from bench.report import Options, Section, markdown_table
from router.catalog.search import search
from router.catalog.tool_schema import inspect_tool
from router.db import connect

QUERIES = 300
ROUTER_PASSES = 3  # after one warm-up pass
INSPECT_CALLS = 3000
# rank-bm25 queries timed per size: its cost is linear in N
BASELINE_SAMPLE = {100: 300, 1_000: 300, 10_000: 100, 100_000: 20}

# The bars (milliseconds), checked and printed.
BARS = {
    10_000: {"search_median": 0.5, "search_p99": 3.0},
    100_000: {"search_median": 1.5, "search_p99": 5.0},
}
INSPECT_MEDIAN_BAR_MS = 0.050


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summarize(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {"median_ms": statistics.median(ms), "p99_ms": percentile(ms, 0.99), "samples": len(ms)}


def time_calls(fn, args_list, cpu: list[float] | None = None) -> list[float]:
    """Wall time per call; with `cpu`, also this thread's CPU time per call (which time spent
    waiting for a core, on a busy machine, does not inflate)."""
    times = []
    for args in args_list:
        started, started_cpu = time.perf_counter(), time.thread_time()
        fn(args)
        times.append(time.perf_counter() - started)
        if cpu is not None:
            cpu.append(time.thread_time() - started_cpu)
    return times


def measure_size(all_tools: list[dict], n: int, scratch: Path) -> dict:
    tools = all_tools[:n]
    queries = synthetic.queries(tools, QUERIES)
    conn = connect(scratch / f"bench-{n}.db")
    started = time.perf_counter()
    load_synthetic(conn, tools, scratch)
    load_s = time.perf_counter() - started

    def run_search(query):
        return search(conn, query, limit=10)

    time_calls(run_search, queries)  # warm-up: page cache, statement cache, term statistics
    search_times, search_cpu = [], []
    for _ in range(ROUTER_PASSES):
        search_times += time_calls(run_search, queries, search_cpu)

    names = [t["name"] for t in random.Random(n).choices(tools, k=INSPECT_CALLS)]
    time_calls(lambda name: inspect_tool(conn, name), names[:200])
    inspect_times = time_calls(lambda name: inspect_tool(conn, name), names)
    conn.close()

    started = time.perf_counter()
    baseline = Bm25Baseline([(t["name"], t["description"]) for t in tools])
    baseline_build_s = time.perf_counter() - started
    sample = queries[: BASELINE_SAMPLE.get(n, 20)]
    baseline_times = time_calls(baseline.rank, sample)

    return {
        "tools": n,
        "load_s": load_s,
        "router_search": summarize(search_times),
        "router_search_cpu": summarize(search_cpu),
        "router_inspect": summarize(inspect_times),
        "rank_bm25_search": summarize(baseline_times),
        "rank_bm25_build_s": baseline_build_s,
    }


def ratio(value: float) -> str:
    return f"{value:.0f}×" if value >= 10 else f"{value:.2g}×"


def bar_checks(results: list[dict]) -> list[str]:
    lines = []
    for row in results:
        n = row["tools"]
        for key, bar in BARS.get(n, {}).items():
            value = row["router_search"]["median_ms" if key.endswith("median") else "p99_ms"]
            verdict = "meets" if value <= bar else "MISSES"
            lines.append(
                f"search at {n:,} tools, {key.split('_')[1]}: {value:.3f} ms {verdict} the {bar} ms bar"
            )
        value = row["router_inspect"]["median_ms"]
        verdict = "meets" if value <= INSPECT_MEDIAN_BAR_MS else "MISSES"
        lines.append(f"inspect at {n:,} tools, median: {value * 1000:.1f} µs {verdict} the 50 µs bar")
    return lines


def chart(results: list[dict], path: Path) -> None:
    sizes = [row["tools"] for row in results]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    lines = [
        ("router search (median)", [r["router_search"]["median_ms"] for r in results], "o-"),
        ("router search (p99)", [r["router_search"]["p99_ms"] for r in results], "o--"),
        ("router inspect (median)", [r["router_inspect"]["median_ms"] for r in results], "s-"),
        ("rank-bm25 search (median)", [r["rank_bm25_search"]["median_ms"] for r in results], "^-"),
    ]
    for label, values, style in lines:
        ax.plot(sizes, values, style, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("tools in the catalog")
    ax.set_ylabel("latency per call (ms)")
    ax.set_title("Search latency against catalog size (in-process, this machine)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def run(options: Options) -> Section:
    all_tools = synthetic.catalog(max(options.sizes))
    with tempfile.TemporaryDirectory(prefix="context-router-bench-") as tmp:
        results = []
        for n in options.sizes:
            results.append(measure_size(all_tools, n, Path(tmp)))
            print(f"  latency: {n:,} tools measured", flush=True)
    rows = []
    for r in results:
        router, base = r["router_search"], r["rank_bm25_search"]
        rows.append(
            [
                f"{r['tools']:,}",
                f"{router['median_ms']:.3f}",
                f"{router['p99_ms']:.3f}",
                f"{r['router_search_cpu']['median_ms']:.3f}",
                f"{r['router_inspect']['median_ms'] * 1000:.1f}",
                f"{r['router_inspect']['p99_ms'] * 1000:.1f}",
                f"{base['median_ms']:.2f}",
                f"{base['p99_ms']:.2f}",
                ratio(base["median_ms"] / router["median_ms"]),
            ]
        )
    table = markdown_table(
        [
            "tools",
            "router search median ms",
            "p99 ms",
            "CPU median ms",
            "inspect median µs",
            "inspect p99 µs",
            "rank-bm25 median ms",
            "p99 ms",
            "rank-bm25 / router",
        ],
        rows,
    )
    checks = bar_checks(results)
    if options.write:
        chart(results, CHART)
    load = os.getloadavg()[0]
    markdown = (
        f"{table}\n\n"
        + "\n".join(f"- {line}" for line in checks)
        + f"\n\nSynthetic catalogs from `bench/synthetic.py` (schemas 300–1,500 bytes), "
        f"{QUERIES} agent-style queries × {ROUTER_PASSES} passes for the router, "
        f"{INSPECT_CALLS} inspect calls, rank-bm25 on a sample "
        f"({', '.join(f'{BASELINE_SAMPLE.get(n, 20)} at {n:,}' for n in options.sizes)}). "
        f"Machine: {os.cpu_count()} cores, load average {load:.1f} at the end of the run; the CPU "
        f"column is the search thread's own CPU time, which waiting for a busy core does not "
        f"inflate. Chart: `bench/latency.png`.\n\n![latency against catalog size](bench/latency.png)"
    )
    return Section("Latency against catalog size", markdown, {"sizes": results, "bars": checks})
