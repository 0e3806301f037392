"""The page an agent acts on: is its first tool the right one, and is it empty when nothing
callable does the job?

Requests (bench/queries/page_dev.jsonl, page_heldout.jsonl, page_final.jsonl, page_blind.jsonl
and page_blind2.jsonl to page_blind7.jsonl for development: all but the first were written
blind and held out until reported or seen, and have been tuned on since; page_blind8.jsonl held
out: written blind, reported once, never tuned on; `--dev` leaves it unread) are everyday requests, each line
{"id", "query", "relevant": [tools, best first; [] when nothing in the catalog does it],
"avoid": [tools that are a harmful first pick]}. Each is searched on the seeded catalog with
the default install's availability (the core servers callable, every other one not) through
the code mcp_search_tools answers with (router/facade/search_page.py page_for_query), and
its page is judged by the kind of request:

- a callable tool does it: right first (the page's first tool is relevant), right in the top
  3, and a wrong empty when the page has no tool;
- only an uncallable server does it: right first / top 3 when the page has no callable tool
  and a relevant tool is the first (of the first three) the page names under `unavailable`;
  and whether that server is the first named;
- nothing in the catalog does it: right when the page has no callable tool.

Pages with a callable tool when no callable tool does the job (the bar: none), pages whose
first tool is one to avoid, and tokens per page (the bar: at most 400) are counted too. The
same requests are run without the tools' examples (the seeds with `examples` left out) and
without the fit gate (the page as it was: every hit search ranked), to show what each adds.

On every development set of bench/quality.py (every tool callable) the gate's wrong empties
(a page with no tool while the set says a tool does the job) are counted beside the page's
right-first and top-3 rates with and without the gate.

Run alone: `python -m bench.page_quality [--dev]`.
"""

import json
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bench.paths import QUERIES_DIR
from bench.quality import DEVELOPMENT, SETS, set_present
from bench.report import Options, Section, markdown_table
from router.backends.availability import CATALOG_SERVERS_SQL, unavailable_servers
from router.backends.servers import SearchSettings, load_servers
from router.catalog import fit_gate
from router.catalog.evaluation import read_query_file
from router.catalog.load import load_catalog
from router.catalog.request_intent import asks_only_to_read
from router.catalog.search import DEFAULT_LIMIT, search
from router.db import connect
from router.facade.search_page import PAGE_TOKEN_BUDGET, compose_page, page_for_query, page_tokens
from router.paths import SEEDS_DIR, SHIPPED_SERVERS_FILE

PAGE_DEV = QUERIES_DIR / "page_dev.jsonl"
PAGE_HELDOUT = QUERIES_DIR / "page_heldout.jsonl"
PAGE_FINAL = QUERIES_DIR / "page_final.jsonl"
PAGE_BLIND = QUERIES_DIR / "page_blind.jsonl"
PAGE_BLIND2 = QUERIES_DIR / "page_blind2.jsonl"
PAGE_BLIND3 = QUERIES_DIR / "page_blind3.jsonl"
PAGE_BLIND4 = QUERIES_DIR / "page_blind4.jsonl"
PAGE_BLIND5 = QUERIES_DIR / "page_blind5.jsonl"
PAGE_BLIND6 = QUERIES_DIR / "page_blind6.jsonl"
PAGE_BLIND7 = QUERIES_DIR / "page_blind7.jsonl"
# Tuned on: page_heldout, page_final and the page_blind sets count here since each was reported
# once (PAGE_SETS.md).
DEVELOPMENT_PAGE_SETS = {
    "page_dev": PAGE_DEV,
    "page_heldout": PAGE_HELDOUT,
    "page_final": PAGE_FINAL,
    "page_blind": PAGE_BLIND,
    "page_blind2": PAGE_BLIND2,
    "page_blind3": PAGE_BLIND3,
    "page_blind4": PAGE_BLIND4,
    "page_blind5": PAGE_BLIND5,
    "page_blind6": PAGE_BLIND6,
    "page_blind7": PAGE_BLIND7,
}
# written blind to the examples, the other sets and the rules tuned on them (PAGE_BLIND8.md)
PAGE_BLIND8 = QUERIES_DIR / "page_blind8.jsonl"
HELD_OUT_PAGE_SETS = {"page_blind8": PAGE_BLIND8}
# The servers a default install can call (issue 36: time, git, fetch, filesystem, memory).
CORE_SERVERS = frozenset({"time", "git", "fetch", "filesystem", "memory"})
GENERIC_REASON = "not installed in the default install"
# The variant where every seeded server is installed and callable.
EVERY_SERVER = "every server installed"
# What ToolRow.changes_things says of each tool: mutating, by its server's word or a review.
CHANGES_THINGS_SQL = "SELECT name, mutating = 1 AND read_only_source <> 'default-mutating' FROM tools"
# The bars on the page sets.
RIGHT_FIRST_BAR = 0.85
TOP3_BAR = 0.95
CALLABLE, UNCALLABLE, NOTHING = (
    "a callable tool does it",
    "only an uncallable server does it",
    "nothing does it",
)


@dataclass(frozen=True)
class PageRequest:
    id: str
    query: str
    relevant: tuple[str, ...]
    avoid: tuple[str, ...]


def read_page_set(path: Path, tools: set[str]) -> list[PageRequest]:
    """The set's lines, checked: every named tool must be a catalog tool (a misspelt name would
    silently count as a miss)."""
    requests = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        item = json.loads(line)
        request = PageRequest(
            str(item["id"]), str(item["query"]), tuple(item["relevant"]), tuple(item.get("avoid", ()))
        )
        unknown = sorted(set(request.relevant + request.avoid) - tools)
        if unknown:
            raise SystemExit(f"{path}: line {number}: not catalog tools: {', '.join(unknown)}")
        requests.append(request)
    return requests


def default_install(conn) -> dict[str, str]:
    """The default install's uncallable servers and why: every server outside CORE_SERVERS, with
    the reason this machine gives for it (its install line) when it gives one."""
    servers = [str(name) for (name,) in conn.execute(CATALOG_SERVERS_SQL)]
    found = unavailable_servers(load_servers(SHIPPED_SERVERS_FILE), servers)
    return {name: found.get(name, GENERIC_REASON) for name in servers if name not in CORE_SERVERS}


@dataclass
class Tally:
    """One request set's pages, judged."""

    kinds: dict[str, int] = field(default_factory=dict)
    right_first: dict[str, int] = field(default_factory=dict)
    top3: dict[str, int] = field(default_factory=dict)
    filler: list[str] = field(default_factory=list)  # a callable tool, none does the job
    avoided_first: list[str] = field(default_factory=list)
    wrong_empty: list[str] = field(default_factory=list)
    server_first: int = 0
    tokens: list[int] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    def add(self, kind: str, right: bool, in_top3: bool) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.right_first[kind] = self.right_first.get(kind, 0) + right
        self.top3[kind] = self.top3.get(kind, 0) + in_top3

    def share(self, counts: dict[str, int]) -> float:
        return sum(counts.values()) / max(1, sum(self.kinds.values()))

    def row(self) -> dict[str, Any]:
        return {
            "requests": sum(self.kinds.values()),
            "kinds": self.kinds,
            "right_first": round(self.share(self.right_first), 4),
            "top3": round(self.share(self.top3), 4),
            "right_first_by_kind": {k: f"{self.right_first[k]}/{n}" for k, n in self.kinds.items()},
            "top3_by_kind": {k: f"{self.top3[k]}/{n}" for k, n in self.kinds.items()},
            "callable_tool_when_none_does_it": self.filler,
            "avoid_first": self.avoided_first,
            "wrong_empty": self.wrong_empty,
            "right_server_first_when_uncallable": f"{self.server_first}/{self.kinds.get(UNCALLABLE, 0)}",
            "median_tokens": statistics.median(self.tokens) if self.tokens else 0,
            "max_tokens": max(self.tokens, default=0),
            "misses": self.misses,
        }


def judge(
    requests: list[PageRequest], page_of: Callable[[str], dict], server_of: dict[str, str], unavailable
) -> dict:
    tally = Tally()
    for request in requests:
        page = page_of(request.query)
        tally.tokens.append(page_tokens(page))
        tools = [tool["name"] for tool in page["tools"]]
        named = [name for entry in page.get("unavailable", []) for name in entry["tools"]]
        relevant = set(request.relevant)
        callable_relevant = [name for name in request.relevant if server_of[name] not in unavailable]
        if callable_relevant:
            kind = CALLABLE
            right, top3 = bool(tools) and tools[0] in relevant, bool(relevant & set(tools[:3]))
            if not tools:
                tally.wrong_empty.append(request.id)
        elif request.relevant:
            kind = UNCALLABLE
            right = not tools and bool(named) and named[0] in relevant
            top3 = not tools and bool(relevant & set(named[:3]))
            servers = [entry["server"] for entry in page.get("unavailable", [])]
            tally.server_first += bool(servers) and servers[0] == server_of[request.relevant[0]]
        else:
            kind, right, top3 = NOTHING, not tools, not tools
        if tools and kind != CALLABLE:
            tally.filler.append(request.id)
        if tools and tools[0] in request.avoid:
            tally.avoided_first.append(request.id)
        if not right:
            shown = tools[:3] or [f"({name})" for name in named[:3]] or ["(empty)"]
            tally.misses.append(f"{request.id} {request.query!r}: {', '.join(shown)}")
        tally.add(kind, right, top3)
    return tally.row()


def read_rule(requests: list[PageRequest], page_of: Callable[[str], dict], changes: dict[str, bool]) -> dict:
    """How the "only asks to read" rule (router/catalog/request_intent.py) classifies requests
    whose right tool is known: taken for reads, and of those how many whose right tool changes
    things (a wrong read, which would keep that tool off a loose match); and the read requests'
    pages that show a tool that changes things (only a strong match may)."""
    read = [r for r in requests if r.relevant and asks_only_to_read(r.query)]
    return {
        "requests with a right tool": sum(1 for r in requests if r.relevant),
        "taken for reads": len(read),
        "right tool reads": sum(1 for r in requests if r.relevant and not changes[r.relevant[0]]),
        "taken for reads, right tool changes things": [r.id for r in read if changes[r.relevant[0]]],
        "read pages showing a tool that changes things": [
            r.id for r in read if any(changes[tool["name"]] for tool in page_of(r.query)["tools"])
        ],
    }


def seeds_without_examples(scratch: Path) -> Path:
    """A copy of the seeds with every tool's `examples` left out."""
    out = scratch / "seeds-without-examples"
    out.mkdir()
    for path in sorted(SEEDS_DIR.glob("*.json")):
        seed = json.loads(path.read_text(encoding="utf-8"))
        for tool in seed["tools"]:
            tool.pop("examples", None)
        (out / path.name).write_text(json.dumps(seed), encoding="utf-8")
    return out


def _gated_page(conn, unavailable: dict[str, str], query: str) -> dict:
    """The page mcp_search_tools answers."""
    return page_for_query(
        conn, query, limit=DEFAULT_LIMIT, unavailable=unavailable, settings=SearchSettings()
    )


def ungated_page(conn, query: str, *, unavailable: dict[str, str]) -> dict:
    """The page before the fit gate: every hit search ranked (the page's other rules kept)."""
    hits = search(conn, query, limit=DEFAULT_LIMIT, unavailable=unavailable, callable_limit=True)
    page = compose_page(hits, DEFAULT_LIMIT)
    page.pop("note", None)
    return page


def measure_pages(scratch: Path, sets: dict[str, Path]) -> dict:
    results: dict[str, dict] = {}
    for variant, seed_dir in (
        ("with examples", SEEDS_DIR),
        ("without examples", seeds_without_examples(scratch)),
    ):
        conn = connect(scratch / f"{variant}.db")
        load_catalog(conn, seed_dir=seed_dir, user_files=[])
        server_of = {str(n): str(s) for n, s in conn.execute("SELECT name, server FROM tools")}
        unavailable = default_install(conn)
        gated = partial(_gated_page, conn, unavailable)
        ungated = partial(ungated_page, conn, unavailable=unavailable)
        every_server = partial(_gated_page, conn, {})
        changes = {str(n): bool(c) for n, c in conn.execute(CHANGES_THINGS_SQL)}
        for name, path in sets.items():
            requests = read_page_set(path, set(server_of))
            results[f"{name}, {variant}"] = judge(requests, gated, server_of, unavailable)
            if variant == "with examples":
                results[f"{name}, {variant}"]["read_rule"] = read_rule(requests, gated, changes)
            if variant == "with examples":
                results[f"{name}, {variant}, no gate"] = judge(requests, ungated, server_of, unavailable)
                # a user who installed every server: the uncallable-only requests' tools are
                # callable, and the gate must not send them away (nothing does the rest)
                results[f"{name}, {variant}, {EVERY_SERVER}"] = judge(requests, every_server, server_of, {})
        conn.close()
    return results


def gate_on_development_sets(scratch: Path) -> dict:
    """Every tool callable: how often the gate empties a page a relevant tool was on, and the
    page's right-first / top-3 rates with and without it."""
    out: dict[str, dict[str, int]] = {}
    for name, seed_dir, user_file, queries_file, role in SETS:
        if role != DEVELOPMENT or not set_present((name, seed_dir, user_file, queries_file, role)):
            continue
        conn = connect(scratch / f"dev-{len(out)}.db")
        load_catalog(conn, seed_dir=seed_dir, user_files=[user_file] if user_file else [])
        counts = {
            "queries": 0,
            "wrong_empty": 0,
            "first": 0,
            "top3": 0,
            "first_ungated": 0,
            "top3_ungated": 0,
        }
        for line in read_query_file(queries_file, need_relevant=True):
            hits = search(
                conn, line.query, limit=DEFAULT_LIMIT, unavailable={}, callable_limit=True, evidence=True
            )
            ranked = [hit.name for hit in hits]
            kept = [hit.name for hit in fit_gate.fitting(line.query, hits)]
            relevant = set(line.relevant)
            counts["queries"] += 1
            counts["wrong_empty"] += not kept
            counts["first"] += bool(kept) and kept[0] in relevant
            counts["top3"] += bool(relevant & set(kept[:3]))
            counts["first_ungated"] += bool(ranked) and ranked[0] in relevant
            counts["top3_ungated"] += bool(relevant & set(ranked[:3]))
        conn.close()
        out[name] = counts
    return out


def bar_lines(pages: dict, sets: dict[str, Path]) -> list[str]:
    lines = []
    for name in sets:
        r = pages[f"{name}, with examples"]
        lines.append(
            f"{name}: right tool first {r['right_first']:.1%} (bar {RIGHT_FIRST_BAR:.0%}): "
            + ("MET" if r["right_first"] >= RIGHT_FIRST_BAR else "NOT MET")
            + f"; in the top 3 {r['top3']:.1%} (bar {TOP3_BAR:.0%}): "
            + ("MET" if r["top3"] >= TOP3_BAR else "NOT MET")
            + f"; pages with a callable tool when none does the job: {len(r['callable_tool_when_none_does_it'])} (bar 0): "
            + ("MET" if not r["callable_tool_when_none_does_it"] else "NOT MET")
            + f"; max tokens {r['max_tokens']} (bar {PAGE_TOKEN_BUDGET}): "
            + ("MET" if r["max_tokens"] <= PAGE_TOKEN_BUDGET else "NOT MET")
        )
    return lines


def pooled(pages: dict, names: list[str], variant: str = "with examples") -> dict[str, Any]:
    """The development page sets' figures together (with examples, gated, unless `variant`)."""
    rows = [pages[f"{name}, {variant}"] for name in names]
    requests = sum(r["requests"] for r in rows)
    return {
        "requests": requests,
        "right_first": sum(r["right_first"] * r["requests"] for r in rows) / max(1, requests),
        "top3": sum(r["top3"] * r["requests"] for r in rows) / max(1, requests),
        "filler": sum(len(r["callable_tool_when_none_does_it"]) for r in rows),
        "avoid_first": sum(len(r["avoid_first"]) for r in rows),
        "wrong_empty": sum(len(r["wrong_empty"]) for r in rows),
    }


def run(options: Options) -> Section:
    sets = dict(DEVELOPMENT_PAGE_SETS)
    if not options.development_only:
        sets.update(HELD_OUT_PAGE_SETS)
    sets = {name: path for name, path in sets.items() if path.is_file()}
    with tempfile.TemporaryDirectory(prefix="page-quality-") as tmp:
        scratch = Path(tmp)
        pages = measure_pages(scratch, sets)
        development = gate_on_development_sets(scratch)
    rows = [
        [
            label,
            r["requests"],
            f"{r['right_first']:.1%}",
            f"{r['top3']:.1%}",
            len(r["callable_tool_when_none_does_it"]),
            len(r["avoid_first"]),
            len(r["wrong_empty"]),
            r["right_server_first_when_uncallable"],
            f"{r['median_tokens']} / {r['max_tokens']}",
        ]
        for label, r in pages.items()
    ]
    header = [
        "set, variant",
        "requests",
        "right tool first",
        "right tool in the top 3",
        "callable tool, none does the job",
        "first tool to avoid",
        "wrong empties",
        "right server first (uncallable only)",
        "tokens median / max",
    ]
    dev_rows = [
        [
            name,
            c["queries"],
            f"{c['wrong_empty']} ({c['wrong_empty'] / c['queries']:.1%})",
            f"{c['first'] / c['queries']:.3f} / {c['first_ungated'] / c['queries']:.3f}",
            f"{c['top3'] / c['queries']:.3f} / {c['top3_ungated'] / c['queries']:.3f}",
        ]
        for name, c in development.items()
    ]
    dev_header = [
        "development set (every tool callable)",
        "queries",
        "wrong empties",
        "first: gated / ungated",
        "top 3: gated / ungated",
    ]
    development_names = [name for name in DEVELOPMENT_PAGE_SETS if name in sets]
    together = pooled(pages, development_names)
    installed = pooled(pages, development_names, f"with examples, {EVERY_SERVER}")
    misses = [
        f"{name}: {miss}"
        for name in development_names  # the held-out set's requests stay unread
        for miss in pages[f"{name}, with examples"]["misses"]
    ]
    rule_lines = [
        f"{label}: the read rule took {r['read_rule']['taken for reads']} of "
        f"{r['read_rule']['requests with a right tool']} requests for reads "
        f"({r['read_rule']['right tool reads']} have a right tool that only reads); of them with a right "
        f"tool that changes things: {r['read_rule']['taken for reads, right tool changes things'] or 'none'}; "
        "read pages showing a tool that changes things: "
        f"{r['read_rule']['read pages showing a tool that changes things'] or 'none'}"
        for label, r in pages.items()
        if "read_rule" in r
    ]
    markdown = (
        "The page mcp_search_tools answers on the seeded catalog, default install (callable: "
        + ", ".join(sorted(CORE_SERVERS))
        + "), judged per request (bench/page_quality.py).\n\n"
        + markdown_table(header, rows)
        + "\n\n"
        + "\n".join(f"- {line}" for line in bar_lines(pages, sets) + rule_lines)
        + f"\n\nThe development page sets together ({' + '.join(development_names)}, "
        + f"{together['requests']} requests): right tool first {together['right_first']:.1%}, in the top 3 "
        + f"{together['top3']:.1%}, {together['filler']} pages with a callable tool when none does the job, "
        + f"{together['avoid_first']} first tools to avoid, {together['wrong_empty']} wrong empties."
        + f" With every server installed: right tool first {installed['right_first']:.1%}, in the top 3 "
        + f"{installed['top3']:.1%}, {installed['filler']} pages with a tool when none does the job, "
        + f"{installed['wrong_empty']} wrong empties."
        + "\n\nThe fit gate on the development sets, every tool callable:\n\n"
        + markdown_table(dev_header, dev_rows)
        + (
            "\n\nMisses on the development page sets (with examples, gated):\n\n"
            + "\n".join(f"- {m}" for m in misses)
            if misses
            else ""
        )
    )
    return Section(
        "The agent's page: right tool first, no filler",
        markdown,
        {
            "pages": pages,
            "development": development,
            "development_page_sets_together": together,
            "development_page_sets_together_every_server_installed": installed,
        },
    )


def main(argv: list[str]) -> int:
    section = run(Options(sizes=(), write=False, development_only="--dev" in argv))
    print(f"## {section.title}\n\n{section.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
