"""Where the benchmark's inputs and outputs live."""

from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / "data"
QUERIES_DIR = BENCH_DIR / "queries"
# Public sets converted from repositories fetched on a developer's machine: their data stays
# out of commits (git-ignored); `python -m bench.public_sets` / `bench.fresh_sets` write them.
PUBLIC_DIR = BENCH_DIR / "public"
BFCL_CATALOG = DATA_DIR / "bfcl.catalog.jsonl"
BFCL_QUERIES = QUERIES_DIR / "bfcl.jsonl"
SEEDED_QUERIES = QUERIES_DIR / "seeded.jsonl"
METATOOL_CATALOG = PUBLIC_DIR / "metatool.catalog.jsonl"
METATOOL_QUERIES = PUBLIC_DIR / "metatool.queries.jsonl"
LIVEMCPBENCH_CATALOG = PUBLIC_DIR / "livemcpbench.catalog.jsonl"
LIVEMCPBENCH_QUERIES = PUBLIC_DIR / "livemcpbench.queries.jsonl"
# The generated page: a hand-written header, then the figures between the bench markers.
BENCHMARKS_PAGE = PROJECT_ROOT / "docs" / "benchmarks.md"
CHART = BENCH_DIR / "latency.png"
RESULTS = BENCH_DIR / "results.json"
TOOLBENCH_CATALOG = PUBLIC_DIR / "toolbench.catalog.jsonl"
TOOLBENCH_QUERIES = PUBLIC_DIR / "toolbench.queries.jsonl"
TOOLALPACA_CATALOG = PUBLIC_DIR / "toolalpaca.catalog.jsonl"
TOOLALPACA_QUERIES = PUBLIC_DIR / "toolalpaca.queries.jsonl"
GORILLA_CATALOG = PUBLIC_DIR / "gorilla.catalog.jsonl"
GORILLA_QUERIES = PUBLIC_DIR / "gorilla.queries.jsonl"
