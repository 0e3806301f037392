"""Where the benchmark's inputs and outputs live."""

from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / "data"
QUERIES_DIR = BENCH_DIR / "queries"
BFCL_CATALOG = DATA_DIR / "bfcl.catalog.jsonl"
BFCL_QUERIES = QUERIES_DIR / "bfcl.jsonl"
SEEDED_QUERIES = QUERIES_DIR / "seeded.jsonl"
METATOOL_CATALOG = DATA_DIR / "metatool.catalog.jsonl"
METATOOL_QUERIES = QUERIES_DIR / "metatool.jsonl"
LIVEMCPBENCH_CATALOG = DATA_DIR / "livemcpbench.catalog.jsonl"
LIVEMCPBENCH_QUERIES = QUERIES_DIR / "livemcpbench.jsonl"
README = PROJECT_ROOT / "README.md"
CHART = BENCH_DIR / "latency.png"
RESULTS = BENCH_DIR / "results.json"
TOOLBENCH_CATALOG = DATA_DIR / "toolbench.catalog.jsonl"
TOOLBENCH_QUERIES = QUERIES_DIR / "toolbench.jsonl"
TOOLALPACA_CATALOG = DATA_DIR / "toolalpaca.catalog.jsonl"
TOOLALPACA_QUERIES = QUERIES_DIR / "toolalpaca.jsonl"
GORILLA_CATALOG = DATA_DIR / "gorilla.catalog.jsonl"
GORILLA_QUERIES = QUERIES_DIR / "gorilla.jsonl"
