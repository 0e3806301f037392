"""Quality: the router against plain BM25 (rank-bm25 over name + description), same run.

Two query sets: the public BFCL set (bench/bfcl.py) over its own catalog, and the queries
written for the seeded catalog (bench/queries/seeded.jsonl) over seeds/. Each catalog is
loaded with the real `context-router catalog` path into a fresh SQLite file.
"""

import tempfile
from pathlib import Path

from bench.baseline import Bm25Baseline
from bench.paths import BFCL_CATALOG, BFCL_QUERIES, SEEDED_QUERIES
from bench.report import Options, Section, markdown_table
from router.catalog.evaluation import quality, read_query_file, router_ranker, run_ranker
from router.catalog.load import load_catalog
from router.db import connect
from router.paths import SEEDS_DIR

# What the issue asks of the router over the baseline on the public set.
REQUIRED_GAIN = 0.10


def measure(name: str, queries_file: Path, *, seed_dir, user_files, scratch: Path) -> dict:
    conn = connect(scratch / f"{name}.db")
    load_catalog(conn, seed_dir=seed_dir, user_files=user_files)
    tools = conn.execute("SELECT name, description FROM tools ORDER BY name").fetchall()
    queries = read_query_file(queries_file, need_relevant=True)
    rankings, times = run_ranker(router_ranker(conn), queries)
    router = quality(rankings, queries, times)
    rankings, times = run_ranker(Bm25Baseline(tools).rank, queries)
    baseline = quality(rankings, queries, times)
    conn.close()
    return {"set": name, "tools": len(tools), "router": router.as_row(), "rank_bm25": baseline.as_row()}


def run(options: Options) -> Section:
    with tempfile.TemporaryDirectory(prefix="context-router-quality-") as tmp:
        scratch = Path(tmp)
        results = [
            measure(
                "BFCL v4 (public)", BFCL_QUERIES, seed_dir=None, user_files=[BFCL_CATALOG], scratch=scratch
            ),
            measure(
                "seeded catalog (ours)", SEEDED_QUERIES, seed_dir=SEEDS_DIR, user_files=[], scratch=scratch
            ),
        ]
    rows, notes = [], []
    for r in results:
        for engine in ("router", "rank_bm25"):
            m = r[engine]
            rows.append(
                [
                    r["set"],
                    f"{r['tools']:,}",
                    m["queries"],
                    "router" if engine == "router" else "rank-bm25 (name + description)",
                    f"{m['recall@1']:.3f}",
                    f"{m['recall@5']:.3f}",
                    f"{m['nDCG@10']:.3f}",
                    f"{m['MRR@10']:.3f}",
                    f"{m['median_ms']:.2f}",
                ]
            )
        gain5 = r["router"]["recall@5"] - r["rank_bm25"]["recall@5"]
        gain_ndcg = r["router"]["nDCG@10"] - r["rank_bm25"]["nDCG@10"]
        notes.append(f"{r['set']}: router − baseline = {gain5:+.3f} recall@5, {gain_ndcg:+.3f} nDCG@10")
    table = markdown_table(
        ["query set", "tools", "queries", "engine", "recall@1", "recall@5", "nDCG@10", "MRR@10", "median ms"],
        rows,
    )
    markdown = table + "\n\n" + "\n".join(f"- {n}" for n in notes)
    return Section("Retrieval quality: router vs plain BM25", markdown, {"sets": results})
