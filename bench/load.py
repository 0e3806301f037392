"""Loading a generated catalog into a router database for the benchmark.

The catalog goes through the router's own build and write path (catalog.build_catalog_input
and replace_catalog: the same rows, FTS5 index, phrase index and final optimize as
`context-router catalog`). Only per-line validation is skipped for the generated tools: it
costs milliseconds a tool, which at 100,000 tools would take the whole time budget. A
sample of every catalog does go through the validating reader, so a generator bug that made
invalid tools would stop the benchmark.
"""

import random
from pathlib import Path

import apsw

from bench import synthetic
from router.catalog.load import build_catalog_input, replace_catalog
from router.catalog.models import ToolAnnotations, UserCatalogLine
from router.catalog.sources import read_user_catalog

VALIDATED_SAMPLE = 200


def _line(tool: dict) -> UserCatalogLine:
    fields = dict(tool, annotations=ToolAnnotations(**tool.get("annotations", {})))
    return UserCatalogLine.model_construct(**fields)


def load_synthetic(conn: apsw.Connection, tools: list[dict], scratch: Path) -> None:
    sample = random.Random(len(tools)).sample(tools, min(VALIDATED_SAMPLE, len(tools)))
    sample_file = scratch / "validated-sample.jsonl"
    sample_file.write_text("".join(synthetic.write_jsonl(sample)))
    read_user_catalog(sample_file)  # raises SeedError naming the line if the generator erred
    origin = str(scratch / f"synthetic-{len(tools)}.jsonl")
    replace_catalog(conn, build_catalog_input([], [([_line(t) for t in tools], origin)]))
