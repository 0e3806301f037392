"""`context-router search` and `inspect`: the meta-tools at a terminal.

`search --batch QUERIES.jsonl` ranks a whole file of queries (one JSON line out per line in),
so users can measure the router on their own catalog with any tool they like.
"""

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from router.backends.availability import Availability
from router.backends.servers import load_servers
from router.catalog.evaluation import QueryLineError, query_line
from router.catalog.fit_gate import fitting, named, not_its_servers_job
from router.catalog.search import (
    DEFAULT_LIMIT,
    UNAVAILABLE_PENALTY,
    SearchHit,
    check_limit,
    check_profile,
    search,
)
from router.catalog.tool_schema import inspect_tool
from router.commands import add_db_option, add_servers_option
from router.db import catalog_size, connect
from router.errors import QueryError, RouterError
from router.facade.search_page import (
    compact_json,
    compose_page,
    found_nothing,
    note_not_searched,
    page_for_query,
    page_hits,
    page_tokens,
)
from router.paths import resolve_db_path, servers_files


def register(subparsers: argparse._SubParsersAction) -> None:
    search_parser = subparsers.add_parser(
        "search",
        help="search the catalog",
        description="Rank catalog tools for a query, or for every line of --batch FILE.",
    )
    add_db_option(search_parser)
    search_parser.add_argument("query", nargs="?", help="free text, as a model would ask")
    search_parser.add_argument("--profile", help="only this profile")
    search_parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="hits, 1-50")
    search_parser.add_argument("--json", action="store_true", help="JSON output")
    add_servers_option(search_parser)
    search_parser.add_argument(
        "--explain", action="store_true", help="show each hit's score parts (trigger, bm25, boost, semantic)"
    )
    search_parser.add_argument(
        "--page",
        action="store_true",
        help="print the page mcp_search_tools gives an agent (compact JSON; its token count on stderr)",
    )
    search_parser.add_argument(
        "--all",
        action="store_true",
        help="every ranked hit, also those the page leaves out as not fitting the request",
    )
    search_parser.add_argument(
        "--batch",
        metavar="QUERIES.jsonl",
        type=Path,
        help='rank every line {"id", "query"}; writes lines {"id", "ranked": [names]}',
    )
    search_parser.set_defaults(handler=run_search)

    inspect_parser = subparsers.add_parser("inspect", help="show one tool's full definition")
    add_db_option(inspect_parser)
    add_servers_option(inspect_parser)
    inspect_parser.add_argument("tool", help="catalog tool name")
    inspect_parser.set_defaults(handler=run_inspect)


def run_search(args: argparse.Namespace) -> int:
    if (args.query is None) == (args.batch is None):
        raise QueryError("give either a query or --batch QUERIES.jsonl (not both)")
    conn = connect(resolve_db_path(args.db), create=False)
    check_profile(conn, args.profile)  # once, not on every line of a batch
    if args.batch is not None:
        return run_batch(conn, args)
    servers = load_servers(servers_files(args.servers))
    # what a router on these servers files marks: what cannot be called here, and why
    unavailable = Availability().unavailable(conn, servers, Path.cwd().resolve())
    if args.page:  # the page searches itself: one search, not the list's and then the page's
        page = page_for_query(
            conn,
            args.query,
            limit=args.limit,
            unavailable=unavailable,
            settings=servers.search,
            profile=args.profile,
            breaker_open_s=servers.defaults.breaker_open_s,
        )
        if found_nothing(page) and _refused_empty(conn, args.db):
            return 1
        print(compact_json(page))
        sys.stdout.flush()
        print(f"({page_tokens(page)} tokens, cl100k)", file=sys.stderr)
        return 0
    if args.all:
        hits = search(
            conn,
            args.query,
            profile=args.profile,
            limit=args.limit,
            explain=args.explain,
            breaker_open_s=servers.defaults.breaker_open_s,
            unavailable=unavailable,
            hidden_servers=servers.search.not_searched(unavailable),
            evidence=True,
        )
        shown, note = hits, None
        fit = {hit.name for hit in fitting(args.query, hits)}
    else:  # what the agent's page holds, from the same hits, with their scores
        fitting_hits = page_hits(
            conn,
            args.query,
            limit=args.limit,
            unavailable=unavailable,
            settings=servers.search,
            profile=args.profile,
            explain=args.explain,
            breaker_open_s=servers.defaults.breaker_open_s,
        )
        shown, note = _on_the_page(fitting_hits, args.limit)
        fit = {hit.name for hit in shown}
    if not shown and _refused_empty(conn, args.db):
        return 1
    if args.json:
        print(json.dumps([hit.to_dict() for hit in shown], ensure_ascii=False, indent=2))
        return 0
    for rank, hit in enumerate(shown, start=1):
        left_out = "" if hit.name in fit else f"  (not on the page: {_why_left_off(hit)})"
        print(f"{rank:2d}. {hit.name}  [{hit.profile}]  {_shown_score(hit)}{left_out}\n    {hit.summary}")
        if hit.explain is not None:
            e = hit.explain
            named = "  (the query names this tool: ranked first)" if e.exact_name else ""
            penalty = "" if hit.available else f" - unavailable {UNAVAILABLE_PENALTY:.2f}"
            example = "  (semantic: one of its examples)" if e.via_example else ""
            # shown only when the tool is asked for with the request's verb
            action = f" + action {e.action:.2f}" if e.action else ""
            print(
                f"    = trigger {e.trigger:.2f} + bm25 {e.bm25:.2f} + boost {e.boost:.2f}"
                f" + semantic {e.semantic:.2f}{action}{penalty}{named}{example}"
            )
    if note is not None:
        print(note)
    elif not shown:
        print("no matching tools")
    return 0


def _why_left_off(hit: SearchHit) -> str:
    """Why the gate kept a ranked hit off the page: rule 8's reason names its figures (a
    not-for request is a seed's choice an operator may want to revisit), else the general one."""
    e = hit.evidence
    if e is not None and not_its_servers_job(e) and not named(e):
        return (
            f"its server leaves this job to others (not-for {e.not_for_cosine:.2f}"
            f" against its tools' {e.server_cosine:.2f})"
        )
    return "does not fit the request"


def _on_the_page(hits: list[SearchHit], limit: int) -> tuple[list[SearchHit], str | None]:
    """The hits the page (compose_page) shows, callable ones first, then the uncallable ones it
    names; and its note, when it has one."""
    page = compose_page(hits, limit)
    by_name = {hit.name: hit for hit in hits}
    names = [tool["name"] for tool in page["tools"]]
    names += [name for entry in page.get("unavailable", []) for name in entry["tools"]]
    return [by_name[name] for name in names], page.get("note")


def _refused_empty(conn, db: str | None) -> bool:
    """Whether the catalog is empty, said on stderr with how to build it (nothing found in an
    empty catalog is not an answer)."""
    if catalog_size(conn) != 0:
        return False
    print(
        f"the catalog in {resolve_db_path(db)} is empty: build it with context-router init "
        "(or make catalog in a checkout)",
        file=sys.stderr,
    )
    return True


def _shown_score(hit: SearchHit) -> str:
    """The score the order follows: an unavailable tool's with its penalty taken off, shown."""
    if hit.available:
        return f"{hit.score:.2f}"
    ranked = hit.score - UNAVAILABLE_PENALTY
    return (
        f"{ranked:.2f} (= {hit.score:.2f} - {UNAVAILABLE_PENALTY:.2f} unavailable: {hit.unavailable_reason})"
    )


# How much of a bad input line an error line echoes back.
ECHO_MAX_CHARS = 80


def _clip(text: str) -> str:
    return text if len(text) <= ECHO_MAX_CHARS else text[: ECHO_MAX_CHARS - 1] + "…"


def batch_lines(conn, path: Path, *, profile: str | None, limit: int) -> Iterator[dict]:
    """One output object per non-blank input line: {"id", "ranked"} or {"id", "line", "error"}.

    Lines are split on "\n" only: U+2028, U+2029 and U+0085 are valid inside a JSON string
    (str.splitlines would cut the line there). A line that cannot be ranked for any reason
    gets an error saying why, and the batch goes on.
    """
    data = path.read_bytes()  # OSError (missing, a directory, unreadable) is the caller's
    seen: set[str] = set()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        query_id: str | None = None
        try:
            text = raw.decode("utf-8").removesuffix("\r")
            try:
                item = json.loads(text)
            except json.JSONDecodeError as exc:
                raise QueryError(f"invalid JSON ({exc.msg}): {_clip(text)!r}") from None
            if not isinstance(item, dict):
                raise QueryError(f'expected an object {{"id", "query"}}: {_clip(text)!r}')
            line = query_line(item, seen, need_relevant=False)
            query_id = line.id
            hits = search(conn, line.query, profile=profile, limit=limit, unavailable={})
            yield {"id": query_id, "ranked": [hit.name for hit in hits]}
        except QueryLineError as exc:
            yield {"id": exc.query_id, "line": number, "error": _clip_message(str(exc))}
        except UnicodeDecodeError as exc:
            yield {"id": None, "line": number, "error": f"not UTF-8 text (byte {exc.start})"}
        except RouterError as exc:
            yield {"id": query_id, "line": number, "error": _clip_message(str(exc))}
        except Exception as exc:  # a bug must not end the batch or print a traceback
            yield {"id": query_id, "line": number, "error": f"internal error: {type(exc).__name__}"}


def _clip_message(message: str) -> str:
    return message if len(message) <= 4 * ECHO_MAX_CHARS else message[: 4 * ECHO_MAX_CHARS - 1] + "…"


def run_batch(conn, args: argparse.Namespace) -> int:
    """Exit 0 whatever the lines hold; only an unreadable file is an error (exit 2)."""
    path = Path(args.batch)
    try:
        lines = batch_lines(conn, path, profile=args.profile, limit=check_limit(args.limit))
        out = sys.stdout
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise QueryError(f"{path}: cannot read the queries file: {exc.strerror or exc}") from None
    except OSError as exc:
        raise QueryError(f"{path}: cannot read the queries file: {exc}") from None
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    conn = connect(resolve_db_path(args.db), create=False)
    definition = inspect_tool(conn, args.tool, finder="`context-router search QUERY`")
    servers = load_servers(servers_files(args.servers))
    unavailable = Availability().unavailable(conn, servers, Path.cwd().resolve())
    definition = note_not_searched(definition, servers.search, unavailable)
    print(json.dumps(definition, ensure_ascii=False, indent=2))
    return 0
