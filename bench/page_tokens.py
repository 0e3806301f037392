"""What the agent's search page costs, and whether it leads with a tool the agent can call.

Every query of the everyday set (bench/queries/everyday.jsonl: git, files, time, memory,
fetch, decompiling, android, godot, blender, web search, desktop) and of the seeded set is
searched as mcp_search_tools answers it (router/facade/search_page.py page_for_query, the
default limit of 10) on the seeded catalog, on two installs:

- default: the shipped servers file as this machine has it (after `make install`: the core
  profile's servers callable, the others not installed);
- full: every server treated as callable.

Per set and install: median and max page tokens (cl100k, the compact JSON the facade sends);
the pages whose first hit cannot be called while a relevant tool of the query can (the page
lists callable tools first, so: pages with only `unavailable` entries; the bar: none); the
stricter count of pages naming an uncallable server at all (it ranked above every callable
tool) while a relevant tool can be called; and pages with no hit at all (a ranking miss, not
the page's doing). Beside them, the page the router gave before (ten hits, the uncallable ones
among them with their reasons) on the same queries.

Run alone: `python -m bench.page_tokens`.
"""

import statistics
import sys
import tempfile
from pathlib import Path

from bench.paths import QUERIES_DIR, SEEDED_QUERIES
from bench.report import Options, Section, markdown_table
from router.backends.availability import CATALOG_SERVERS_SQL, unavailable_servers
from router.backends.servers import SearchSettings, load_servers
from router.catalog.evaluation import read_query_file
from router.catalog.load import load_catalog
from router.catalog.search import DEFAULT_LIMIT, MAX_LIMIT, search
from router.db import connect
from router.facade.search_page import PAGE_TOKEN_BUDGET, page_for_query, page_tokens
from router.paths import SEEDS_DIR, SHIPPED_SERVERS_FILE

EVERYDAY_QUERIES = QUERIES_DIR / "everyday.jsonl"
SETS = {"everyday": EVERYDAY_QUERIES, "seeded": SEEDED_QUERIES}


def old_page_tokens(conn, query: str, unavailable: dict[str, str]) -> int:
    """The page before search_page: the ten best hits, the uncallable ones with their reasons."""
    tools = []
    for hit in search(conn, query, limit=DEFAULT_LIMIT, unavailable=unavailable):
        entry = {"name": hit.name, "profile": hit.profile, "summary": hit.summary}
        if not hit.available:
            entry |= {"available": False, "unavailable_reason": hit.unavailable_reason}
        tools.append(entry)
    return page_tokens({"tools": tools})


MISLED = "first_hit_uncallable_while_a_callable_tool_does_it"
OUTRANKED = "uncallable_server_named_while_a_callable_tool_does_it"
BURIED = "first_hit_uncallable_while_a_relevant_callable_tool_is_in_the_50_best"


def measure_set(conn, queries_file: Path, unavailable: dict[str, str], server_of: dict[str, str]) -> dict:
    tokens, old_tokens, callable_counts = [], [], []
    with_entry, no_hit = 0, []
    misled: list[str] = []
    outranked: list[str] = []
    buried: list[str] = []
    for line in read_query_file(queries_file, need_relevant=True):
        page = page_for_query(
            conn, line.query, limit=DEFAULT_LIMIT, unavailable=unavailable, settings=SearchSettings()
        )
        tokens.append(page_tokens(page))
        old_tokens.append(old_page_tokens(conn, line.query, unavailable))
        callable_counts.append(len(page["tools"]))
        with_entry += "unavailable" in page
        can_do_it = any(server_of[name] not in unavailable for name in line.relevant)
        if not page["tools"] and "unavailable" not in page:
            no_hit.append(line.id)
        elif can_do_it and "unavailable" in page:
            (outranked if page["tools"] else misled).append(line.id)
            if not page["tools"] and _relevant_callable_in_depth(conn, line, unavailable, server_of):
                buried.append(line.id)
    return {
        "queries": len(tokens),
        "median_tokens": statistics.median(tokens),
        "max_tokens": max(tokens),
        "old_median_tokens": statistics.median(old_tokens),
        "old_max_tokens": max(old_tokens),
        "pages_with_unavailable_entry": with_entry,
        "mean_callable_tools": statistics.fmean(callable_counts),
        MISLED: misled,
        OUTRANKED: misled + outranked,
        "no_hit": no_hit,
        BURIED: buried,
    }


def _relevant_callable_in_depth(conn, line, unavailable: dict[str, str], server_of: dict[str, str]) -> bool:
    """Whether a relevant callable tool is among the MAX_LIMIT best hits at all (a page
    that shows none then left out one the agent could use, ranked below the scored pool)."""
    hits = search(conn, line.query, limit=MAX_LIMIT, unavailable=unavailable)
    return any(
        hit.available and hit.name in line.relevant and server_of[hit.name] not in unavailable for hit in hits
    )


def measure(scratch: Path) -> dict:
    conn = connect(scratch / "seeded.db")
    load_catalog(conn, seed_dir=SEEDS_DIR, user_files=[])
    server_of = {str(name): str(server) for name, server in conn.execute("SELECT name, server FROM tools")}
    catalog_servers = [str(name) for (name,) in conn.execute(CATALOG_SERVERS_SQL)]
    default = unavailable_servers(load_servers(SHIPPED_SERVERS_FILE), catalog_servers)
    installs = {"default": default, "full": {}}
    results = {
        "callable_on_default": sorted(set(catalog_servers) - set(default)),
        "installs": {
            install: {name: measure_set(conn, path, unavailable, server_of) for name, path in SETS.items()}
            for install, unavailable in installs.items()
        },
    }
    conn.close()
    return results


def bar_lines(results: dict) -> list[str]:
    """The issue's bars are on the everyday requests; the seeded set's figures are beside them."""
    cells = [(install, name, r) for install, sets in results["installs"].items() for name, r in sets.items()]
    worst = max(r["max_tokens"] for _, _, r in cells)
    everyday = [q for install, name, r in cells if name == "everyday" for q in r[MISLED]]
    seeded = [f"{install} {q}" for install, name, r in cells if name == "seeded" for q in r[MISLED]]
    buried = [f"{install} {name} {q}" for install, name, r in cells for q in r[BURIED]]
    return [
        f"every page ≤ {PAGE_TOKEN_BUDGET} tokens (both sets, both installs): max {worst}: "
        + ("MET" if worst <= PAGE_TOKEN_BUDGET else "NOT MET"),
        f"everyday pages whose first hit cannot be called while a callable tool does the job: {len(everyday)}: "
        + ("MET" if not everyday else f"NOT MET {everyday}"),
        f"seeded set, the same: {len(seeded)} {seeded}; of them with a relevant callable tool among the "
        f"{MAX_LIMIT} best hits (below the scored pool): {buried}",
    ]


def run(options: Options) -> Section:
    with tempfile.TemporaryDirectory(prefix="page-bench-") as scratch:
        results = measure(Path(scratch))
    rows = [
        [
            f"{name} ({r['queries']} queries), {install} install",
            r["median_tokens"],
            r["max_tokens"],
            f"{r['old_median_tokens']} / {r['old_max_tokens']}",
            r["pages_with_unavailable_entry"],
            f"{r['mean_callable_tools']:.1f}",
            len(r[MISLED]),
            len(r[OUTRANKED]),
            len(r["no_hit"]),
        ]
        for install, sets in results["installs"].items()
        for name, r in sets.items()
    ]
    header = [
        "set, install",
        "median tokens",
        "max tokens",
        "before: median / max",
        "pages with an unavailable entry",
        "callable tools per page",
        "first hit uncallable, a callable tool does it",
        "an uncallable server named, a callable tool does it",
        "no hit",
    ]
    bars = bar_lines(results)
    markdown = (
        f"The page mcp_search_tools answers (limit {DEFAULT_LIMIT}), cl100k tokens of the compact JSON the "
        f"facade sends, on the seeded catalog. Default install: callable here "
        f"{', '.join(results['callable_on_default'])}; full install: every server callable. "
        "Before: the ten best hits, uncallable ones among them with their reasons.\n\n"
        + markdown_table(header, rows)
        + "\n\n"
        + "\n".join(f"- {line}" for line in bars)
    )
    return Section("Search page tokens", markdown, {"results": results, "bars": bars})


def main() -> int:
    section = run(Options(sizes=(), write=False))
    print(f"## {section.title}\n\n{section.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
