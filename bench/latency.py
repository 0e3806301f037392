"""Search latency and quality against catalog size on the registry-shaped synthetic catalog
(bench/synthetic.py), in-process; and the query shapes that break engines, at 100,000.

For each size N: the synthetic catalog of N tools is loaded into a fresh SQLite file (with its
vectors, as `catalog` does); the router's `search` (limit 10: hybrid, and by the words alone),
`search --batch` (the batch mean) and `inspect_tool` are timed per call over a fixed set of
agent-style queries, next to plain FTS5 (bench/plain_fts5.py) and tantivy
(bench/tantivy_engine.py) on the same tools and queries in the same run, and rank-bm25 on a
sample of the same queries (it scores every tool in Python, so at 100k a full pass would take
minutes). The planted
labelled queries (the same at every size) give recall and nDCG as distractors grow. At
ADVERSARIAL_SIZE, each adversarial shape (fuzzed text, 16 KB pastes, only stop words, only
punctuation) is timed too: refused queries count with the time it took to refuse them.
"""

import json
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
from bench.plain_fts5 import PlainFts5
from bench.report import Options, Section, link_from_page, markdown_table
from bench.tantivy_engine import Tantivy
from router.catalog.evaluation import QueryLine, quality, router_ranker, run_ranker
from router.catalog.query_words import MAX_QUERY_CHARS, stop_words
from router.catalog.search import search
from router.catalog.tool_schema import inspect_tool
from router.catalog.vector_groups import EXHAUSTIVE_MAX_TOOLS
from router.commands.search import batch_lines
from router.db import connect
from router.errors import QueryError

QUERIES = 300
ROUTER_PASSES = 3  # after one warm-up pass
INSPECT_CALLS = 3000
# rank-bm25 queries timed per size: its cost is linear in N
BASELINE_SAMPLE = {1_000: 300, 10_000: 100, 100_000: 20, 250_000: 10}
ADVERSARIAL_SIZE = 100_000
ADVERSARIAL_PER_SHAPE = 40
ADVERSARIAL_BAR_MS = 20.0

# The bars (milliseconds), checked and printed.
BARS = {
    10_000: {"search_median": 0.5},
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


def adversarial_queries(tools: list[dict]) -> dict[str, list[str]]:
    """Query shapes that break engines, deterministic."""
    rng = random.Random(13)
    vocabulary = sorted({w for t in tools[:2_000] for w in (t["name"] + " " + t["description"]).split()})
    stops = sorted(stop_words())
    punctuation = "!?.,;:-_*\"'()[]{}<>/\\|@#$%^&~`+="
    alphabet = punctuation + "abcdefghij XYZ éü漢字🚀\u200b\u2028\t\n" + "".join(map(str, range(10)))

    def sized(words: list[str], limit: int) -> str:
        text = ""
        while True:
            word = rng.choice(words)
            if len(text) + len(word) + 1 > limit:
                return text
            text += word + " "

    return {
        "fuzzed": [
            "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 400)))
            for _ in range(ADVERSARIAL_PER_SHAPE)
        ],
        "16 KB of catalog words": [sized(vocabulary, MAX_QUERY_CHARS) for _ in range(ADVERSARIAL_PER_SHAPE)],
        "16 KB of stop words": [sized(stops, MAX_QUERY_CHARS) for _ in range(ADVERSARIAL_PER_SHAPE)],
        "only stop words": [sized(stops, rng.randint(10, 120)) for _ in range(ADVERSARIAL_PER_SHAPE)],
        "only punctuation": [
            "".join(rng.choice(punctuation) for _ in range(rng.randint(1, 2_000)))
            for _ in range(ADVERSARIAL_PER_SHAPE)
        ],
    }


def time_shapes(conn, shapes: dict[str, list[str]]) -> dict[str, dict]:
    def run(query):
        try:
            search(conn, query, limit=10)
        except QueryError:
            pass  # refused: the time to refuse is what counts

    out = {}
    for shape, queries in shapes.items():
        time_calls(run, queries)  # warm-up
        times = [t * 1000 for t in time_calls(run, queries)]
        out[shape] = {"median_ms": statistics.median(times), "max_ms": max(times), "samples": len(times)}
    return out


def planted_quality(conn) -> dict:
    lines = [QueryLine(q["id"], q["query"], tuple(q["relevant"])) for q in synthetic.planted_queries()]
    rankings, times = run_ranker(router_ranker(conn), lines)
    return quality(rankings, lines, times).as_row()


def measure_size(n: int, scratch: Path) -> dict:
    # The router is measured with no tool dicts alive: a router process holds no catalog as
    # Python objects, and 250,000 tool dicts kept alive made a 10,000-tool search ~20% slower
    # (0.51 -> 0.63 ms median; gc.freeze did not help). So each size makes its own tools
    # (synthetic.catalog(n) is the first n of one sequence), drops them after the load, and
    # makes them again for the reference engines.
    tools = synthetic.catalog(n)
    queries = synthetic.queries(tools, QUERIES)
    shape_queries = adversarial_queries(tools) if n == ADVERSARIAL_SIZE else None
    names = [t["name"] for t in random.Random(n).choices(tools, k=INSPECT_CALLS)]
    conn = connect(scratch / f"bench-{n}.db")
    started = time.perf_counter()
    load_synthetic(conn, tools, scratch)
    load_s = time.perf_counter() - started
    del tools

    def run_search(query):
        return search(conn, query, limit=10)

    def run_lexical(query):
        return search(conn, query, limit=10, semantic=False)

    # the first search loads the catalog's vectors (and groups them, on a large catalog)
    semantic_load_s = time_calls(run_search, queries[:1])[0]
    # warm-up: page cache, statement cache, term statistics, and each word's postings, read
    # the first time a process searches the word: reported as the first pass
    first_pass = time_calls(run_search, queries)
    search_times, search_cpu, lexical_times, lexical_cpu = [], [], [], []
    for _ in range(ROUTER_PASSES):
        search_times += time_calls(run_search, queries, search_cpu)
        lexical_times += time_calls(run_lexical, queries, lexical_cpu)
    batch_file = scratch / f"batch-{n}.jsonl"
    batch_file.write_text(
        "".join(f'{{"id": {i}, "query": {json.dumps(q)}}}\n' for i, q in enumerate(queries))
    )
    started = time.perf_counter()
    for _ in batch_lines(conn, batch_file, profile=None, limit=10):
        pass
    batch_mean_ms = (time.perf_counter() - started) * 1000 / len(queries)

    planted = planted_quality(conn)
    shapes = time_shapes(conn, shape_queries) if shape_queries is not None else None
    time_calls(lambda name: inspect_tool(conn, name), names[:200])
    inspect_times = time_calls(lambda name: inspect_tool(conn, name), names)
    conn.close()
    (scratch / f"bench-{n}.db").unlink()

    tools = synthetic.catalog(n)
    started = time.perf_counter()
    baseline = Bm25Baseline([(t["name"], t["description"]) for t in tools])
    baseline_build_s = time.perf_counter() - started
    sample = queries[: BASELINE_SAMPLE.get(n, 20)]
    baseline_times = time_calls(baseline.rank, sample)
    references = {}
    for key, engine in (("plain_fts5", PlainFts5), ("tantivy", Tantivy)):
        started = time.perf_counter()
        ranker = engine(tools)
        build_s = time.perf_counter() - started
        time_calls(ranker.rank, queries)  # warm-up
        times = [t for _ in range(ROUTER_PASSES) for t in time_calls(ranker.rank, queries)]
        references[key] = {**summarize(times), "build_s": build_s}

    return {
        "tools": n,
        "load_s": load_s,
        "router_search": summarize(search_times),
        "router_search_cpu": summarize(search_cpu),
        "router_lexical_search": summarize(lexical_times),
        "router_lexical_search_cpu": summarize(lexical_cpu),
        "router_batch_mean_ms": batch_mean_ms,
        "semantic_load_s": semantic_load_s,
        "router_first_pass": summarize(first_pass),
        "router_first_pass_mean_ms": statistics.mean(first_pass) * 1000,
        **references,
        "router_inspect": summarize(inspect_times),
        "rank_bm25_search": summarize(baseline_times),
        "rank_bm25_build_s": baseline_build_s,
        "planted": planted,
        "adversarial": shapes,
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
            if key.endswith("median"):
                value = row["router_batch_mean_ms"]
                verdict = "meets" if value <= bar else "MISSES"
                lines.append(
                    f"search --batch at {n:,} tools, mean: {value:.3f} ms {verdict} the {bar} ms bar"
                )
        for shape, times in (row.get("adversarial") or {}).items():
            verdict = "meets" if times["max_ms"] <= ADVERSARIAL_BAR_MS else "MISSES"
            lines.append(
                f"{shape} at {n:,} tools, slowest: {times['max_ms']:.2f} ms {verdict} the "
                f"{ADVERSARIAL_BAR_MS:.0f} ms bar"
            )
        value = row["router_inspect"]["median_ms"]
        verdict = "meets" if value <= INSPECT_MEDIAN_BAR_MS else "MISSES"
        lines.append(f"inspect at {n:,} tools, median: {value * 1000:.1f} µs {verdict} the 50 µs bar")
    return lines


def chart(results: list[dict], path: Path) -> None:
    sizes = [row["tools"] for row in results]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    lines = [
        ("router hybrid search (median)", [r["router_search"]["median_ms"] for r in results], "o-"),
        ("router, words alone (median)", [r["router_lexical_search"]["median_ms"] for r in results], "o:"),
        ("plain FTS5 (median)", [r["plain_fts5"]["median_ms"] for r in results], "d-"),
        ("tantivy (median)", [r["tantivy"]["median_ms"] for r in results], "v-"),
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
    with tempfile.TemporaryDirectory(prefix="context-router-bench-") as tmp:
        results = []
        for n in options.sizes:
            results.append(measure_size(n, Path(tmp)))
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
                f"{r['router_batch_mean_ms']:.3f}",
                f"{r['router_lexical_search']['median_ms']:.3f}",
                f"{r['router_lexical_search_cpu']['median_ms']:.3f}",
                f"{r['plain_fts5']['median_ms']:.3f}",
                f"{r['tantivy']['median_ms']:.3f}",
                ratio(router["median_ms"] / r["plain_fts5"]["median_ms"]),
                ratio(router["median_ms"] / r["tantivy"]["median_ms"]),
                f"{r['router_inspect']['median_ms'] * 1000:.1f}",
                f"{base['median_ms']:.2f}",
            ]
        )
    table = markdown_table(
        [
            "tools",
            "hybrid search median ms",
            "p99 ms",
            "CPU median ms",
            "--batch mean ms",
            "words alone median ms",
            "its CPU median ms",
            "plain FTS5 median ms",
            "tantivy median ms",
            "hybrid / plain FTS5",
            "hybrid / tantivy",
            "inspect median µs",
            "rank-bm25 median ms",
        ],
        rows,
    )
    quality_table = markdown_table(
        ["tools", "planted queries", "recall@1", "recall@5", "nDCG@10", "MRR@10"],
        [
            [
                f"{r['tools']:,}",
                r["planted"]["queries"],
                f"{r['planted']['recall@1']:.3f}",
                f"{r['planted']['recall@5']:.3f}",
                f"{r['planted']['nDCG@10']:.3f}",
                f"{r['planted']['MRR@10']:.3f}",
            ]
            for r in results
        ],
    )
    shape_rows = [
        [f"{r['tools']:,}", shape, f"{t['median_ms']:.2f}", f"{t['max_ms']:.2f}", t["samples"]]
        for r in results
        for shape, t in (r.get("adversarial") or {}).items()
    ]
    shapes_table = markdown_table(["tools", "query shape", "median ms", "slowest ms", "queries"], shape_rows)
    checks = bar_checks(results)
    if options.write:
        chart(results, CHART)
    load = os.getloadavg()[0]
    markdown = (
        f"{table}\n\nQuality on the planted labelled queries (the same {synthetic.PLANTED_QUERIES} at every "
        f"size, one right tool each; a quarter are exact names):\n\n{quality_table}\n\n"
        + (f"Query shapes that break engines:\n\n{shapes_table}\n\n" if shape_rows else "")
        + "\n".join(f"- {line}" for line in checks)
        + "\n- the first search after a load reads the catalog's vectors (and groups them above "
        + f"{EXHAUSTIVE_MAX_TOOLS:,} tools): "
        + ", ".join(f"{r['semantic_load_s']:.2f} s at {r['tools']:,}" for r in results)
        + "\n- the first pass over the queries (each word's postings read from FTS5 the first time "
        + "a process searches it), mean / p99: "
        + ", ".join(
            f"{r['router_first_pass_mean_ms']:.2f} / {r['router_first_pass']['p99_ms']:.2f} ms at {r['tools']:,}"
            for r in results
        )
        + f"\n\nRegistry-shaped synthetic catalogs from `bench/synthetic.py` (near-duplicate servers, "
        f"shared per-service boosts and per-action triggers, schemas 300–1,500 bytes), "
        f"{QUERIES} agent-style queries × {ROUTER_PASSES} passes for the router, "
        f"{INSPECT_CALLS} inspect calls, rank-bm25 on a sample "
        f"({', '.join(f'{BASELINE_SAMPLE.get(n, 20)} at {n:,}' for n in options.sizes)}). "
        f"Machine: {os.cpu_count()} cores, load average {load:.1f} at the end of the run; the CPU "
        f"column is the search thread's own CPU time, which waiting for a busy core does not "
        f"inflate. Chart: `bench/latency.png`.\n\n"
        f"![latency against catalog size]({link_from_page(CHART)})"
    )
    return Section("Latency against catalog size", markdown, {"sizes": results, "bars": checks})
