"""Quality in one mixed catalog: every public set's tools loaded together, each set's queries
against all of them.

bench/quality.py gives each set a catalog of its own. Issue 21's held-out bar is set on a
*mix* (about 4,400 tools of several benchmarks in one catalog), where a query also meets
the other sets' tools: near misses from another vocabulary that a per-set catalog never
shows, and where the semantic part can pull in a wrong neighbour that words alone would not.
So this section loads the public sets' tools (not the seeded catalog's, whose queries are
written for it alone) into one catalog with the real `context-router catalog` path, and
reports per set and as the macro of each role: the router (hybrid), words alone, plain FTS5
and, with the extra installed, the transformer. A name two sets share is kept once, from the
set listed first (bench/quality.py SETS), and counted.

With `--dev` the mix holds the development sets' tools alone: the held-out sets' tools would
be distractors the tuning has seen.
"""

import json
import tempfile
from pathlib import Path

from bench.quality import (
    CONVERT_HINT,
    DEVELOPMENT,
    ENGINES,
    HELD_OUT,
    MULTI_STEP_K,
    MULTI_STEP_SET,
    SETS,
    catalog_tools,
    difference_notes,
    engine_rankers,
    extra_installed,
    macro,
    macro_text,
    scored_engines,
    set_present,
)
from bench.report import Options, Section, markdown_table
from router.catalog.evaluation import read_query_file

# the engines measured in the mix: rank-bm25 is left out (pure Python over every tool for every
# query: minutes in a 5,000-tool catalog, and it is far behind on every per-set figure)
MIXED_BASELINES = ("plain_fts5",)


def mixed_catalog(specs: list[tuple], path: Path) -> tuple[list[dict], list[str]]:
    """Write every set's tools into one catalog file (JSON lines); the tools written, and the
    names dropped because a set listed earlier has a tool of that name."""
    seen: set[str] = set()
    kept: list[dict] = []
    dropped = []
    for _name, _seed_dir, user_file, _queries, _role in specs:
        for tool in catalog_tools(None, user_file):
            if tool["name"] in seen:
                dropped.append(tool["name"])
                continue
            seen.add(tool["name"])
            kept.append(tool)
    path.write_text("\n".join(json.dumps(tool) for tool in kept) + "\n", encoding="utf-8")
    return kept, dropped


def measure_mixed(specs: list[tuple], scratch: Path, with_extra: bool) -> dict:
    """Each set's queries against the one catalog of all the sets' tools."""
    catalog_file = scratch / "mixed.catalog.jsonl"
    kept, dropped = mixed_catalog(specs, catalog_file)
    tools = len(kept)
    rankers, conns = engine_rankers(None, catalog_file, kept, scratch, with_extra, MIXED_BASELINES)
    sets = []
    for name, _seed_dir, _user_file, queries_file, role in specs:
        queries = read_query_file(queries_file, need_relevant=True)
        sets.append({"set": name, "role": role, "tools": tools} | scored_engines(rankers, queries))
    for conn in conns:
        conn.close()
    macros = {
        role: macro(sets, role) for role in (DEVELOPMENT, HELD_OUT) if any(r["role"] == role for r in sets)
    }
    return {"tools": tools, "dropped": dropped, "sets": sets, "macro": macros}


def below_plain(sets: list[dict]) -> list[str]:
    """The sets where the router's recall@5 or nDCG@10 in the mix is below plain FTS5's
    (issue 21: no source worse than plain FTS5)."""
    return [
        r["set"] for r in sets if any(r["router"][m] < r["plain_fts5"][m] for m in ("recall@5", "nDCG@10"))
    ]


def run(options: Options) -> Section:
    public = [spec for spec in SETS if spec[1] is None]
    wanted = [spec for spec in public if not (options.development_only and spec[-1] == HELD_OUT)]
    specs = [spec for spec in wanted if set_present(spec)]
    missing = [spec[0] for spec in wanted if not set_present(spec)]
    with tempfile.TemporaryDirectory(prefix="context-router-mixed-") as tmp:
        result = measure_mixed(specs, Path(tmp), extra_installed())
    rows = []
    for r in result["sets"]:
        for engine, label in ENGINES.items():
            if engine in r:
                m = r[engine]
                rows.append(
                    [
                        r["set"],
                        r["role"],
                        m["queries"],
                        label,
                        f"{m['recall@5']:.3f}",
                        f"{m['nDCG@10']:.3f}",
                        f"{m[f'recall@{MULTI_STEP_K}']:.3f}",
                    ]
                )
    notes = [
        f"one catalog of {result['tools']:,} tools from {len(specs)} sets; "
        f"{len(result['dropped'])} names two sets share kept once: {', '.join(result['dropped']) or 'none'}"
    ]
    if missing:
        notes.append(
            f"not converted on this machine, so not in the mix: {', '.join(missing)} ({CONVERT_HINT})"
        )
    for r in result["sets"]:
        notes += difference_notes(r, f"{r['set']}, mixed")
    for role, by_engine in result["macro"].items():
        notes.append(f"{role} macro in the mix: " + macro_text(by_engine))
    worse = below_plain(result["sets"])
    notes.append(
        "no set worse than plain FTS5 in the mix (router's recall@5 and nDCG@10 each at least plain FTS5's): "
        + (f"NOT MET on {', '.join(worse)}" if worse else "met")
    )
    if any(r["set"] == MULTI_STEP_SET for r in result["sets"]):
        notes.append(f"{MULTI_STEP_SET}'s recall@{MULTI_STEP_K} in the mix is the last column")
    table = markdown_table(
        ["query set", "role", "queries", "engine", "recall@5", "nDCG@10", f"recall@{MULTI_STEP_K}"], rows
    )
    return Section(
        "Retrieval quality in one mixed catalog",
        table + "\n\n" + "\n".join(f"- {n}" for n in notes),
        result | {"below_plain_fts5": worse},
    )
