"""The page mcp_search_tools answers: the tools the caller can call here that fit the request
(router/catalog/fit_gate.py), best first, and, only where they match better than the best
callable one (or nothing callable fits), one compact entry per server whose tools cannot be
called here, saying its reason (the install line included) once. A page with no callable tool
says so in one line (`note`), so an agent never reads an empty list as "nothing was searched".

A model pays for every token of the page in its context, so the page as the facade sends it
(compact_json) is held to PAGE_TOKEN_BUDGET tokens (cl100k, router/tokens.py) for any query
and any catalog: when it would be longer, it is cut in a fixed order (fit_page) until it fits.
The first page of a process loads the tokenizer (a few hundred ms); loading it at start-up
instead slowed every router's handshake, where clients start several at once.
"""

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import apsw

from router.backends.servers import SearchSettings
from router.catalog.fit_gate import fitting
from router.catalog.search import SearchHit, check_limit, search
from router.tokens import count_tokens

# The README promises a page under 400 tokens; every page is cut to fit it.
PAGE_TOKEN_BUDGET = 400

# Uncallable servers a page names at most, and tool names per server: enough for a model to
# tell the user what to install, not a second page of tools it cannot call.
MAX_SERVER_ENTRIES = 3
MAX_TOOLS_PER_SERVER = 3

# What a summary is cut to when the page must shrink (the name still says most).
SHORT_SUMMARY_CHARS = 40
# What a server's reason is cut to as a last resort (a user's servers file may give any
# install line); the start says the kind of problem and the command to run.
SHORT_REASON_CHARS = 160

# The line a page without a callable tool carries: with the servers that would do the job
# listed under `unavailable`, or with nothing at all that fits.
NO_CALLABLE_FIT = "no callable tool fits this request; the servers under unavailable would"
NOTHING_FITS = "no tool in the catalog fits this request"


def compact_json(value: Any) -> str:
    """The bytes a meta-tool result reaches the model as: every byte is a token in its context."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def page_tokens(page: Mapping[str, Any]) -> int:
    return count_tokens(compact_json(page))


def note_not_searched(
    definition: dict[str, Any], search: SearchSettings, unavailable: Collection[str]
) -> dict[str, Any]:
    """An inspected tool that search leaves out (the user's [search] settings) says why."""
    why = search.why_not_searched(str(definition["server"]), unavailable)
    if why is not None:
        definition["notSearched"] = why
    return definition


def page_for_query(
    conn: apsw.Connection,
    query: str,
    *,
    limit: int,
    unavailable: Mapping[str, str],
    settings: SearchSettings,
    **search_options: Any,
) -> dict[str, Any]:
    """What mcp_search_tools answers for `query`, from the servers `settings` leave in
    (search_options: the caller's role and breaker window, as router.catalog.search.search
    takes them). Uncallable hits do not count toward `limit`: the page holds up to `limit`
    callable tools from the pool search scores (limit plus its margin), in one search
    whatever the install (searching deeper for more cost 3-4× on a large catalog of servers
    not installed, for tools ranked below a dozen uncallable ones despite their penalty)."""
    limit = check_limit(limit)
    return compose_page(
        page_hits(conn, query, limit=limit, unavailable=unavailable, settings=settings, **search_options),
        limit,
    )


def page_hits(
    conn: apsw.Connection,
    query: str,
    *,
    limit: int,
    unavailable: Mapping[str, str],
    settings: SearchSettings,
    **search_options: Any,
) -> list[SearchHit]:
    """The hits a page is made of: search's (up to `limit` callable ones, the uncallable ones
    ranked among them) that fit the request (router/catalog/fit_gate.py), in search's order."""
    hits = search(
        conn,
        query,
        limit=check_limit(limit),
        unavailable=unavailable,
        hidden_servers=settings.not_searched(unavailable),
        callable_limit=True,
        evidence=True,
        **search_options,
    )
    return fitting(query, hits)


def found_nothing(page: Mapping[str, Any]) -> bool:
    """No tool on the page, callable or not (an empty catalog's page, or a query matching nothing)."""
    return not page["tools"] and "unavailable" not in page


def compose_page(hits: Sequence[SearchHit], limit: int, budget: int = PAGE_TOKEN_BUDGET) -> dict[str, Any]:
    """The page for `hits` (search's order, best first): at most `limit` callable tools, and
    the uncallable servers whose tools match better (better_uncallable), within `budget`
    tokens."""
    tools = [
        {"name": hit.name, "profile": hit.profile, "summary": hit.summary} for hit in hits if hit.available
    ][:limit]
    entries: dict[str, dict[str, Any]] = {}
    for hit in better_uncallable(hits):
        server = hit.server or hit.name
        entry = entries.get(server)
        if entry is None:
            if len(entries) == MAX_SERVER_ENTRIES:
                continue
            entry = entries[server] = {
                "server": server,
                "profile": hit.profile,
                "tools": [],
                "reason": hit.unavailable_reason,
            }
        # one reason per server: a tool of it down for another reason (its own breaker, a
        # quarantine) is left to the server's next search
        if hit.unavailable_reason == entry["reason"] and len(entry["tools"]) < MAX_TOOLS_PER_SERVER:
            entry["tools"].append(hit.name)
    page: dict[str, Any] = {"tools": tools}
    if entries:
        page["unavailable"] = list(entries.values())
    if not tools:
        page["note"] = NO_CALLABLE_FIT if entries else NOTHING_FITS
    return fit_page(page, budget)


def better_uncallable(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """The uncallable hits that match better than every callable one: ranked above the first
    callable hit, or scoring more than the best callable hit before the penalty that ranks
    them lower (a loosely matching callable tool must not hide, say, git's reason that it
    cannot work here). All of them when none is callable."""
    best = max((hit.score for hit in hits if hit.available), default=None)
    ahead = next((i for i, hit in enumerate(hits) if hit.available), len(hits))
    return [
        hit
        for i, hit in enumerate(hits)
        if not hit.available and (i < ahead or best is None or hit.score > best)
    ]


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def fit_page(page: dict[str, Any], budget: int = PAGE_TOKEN_BUDGET) -> dict[str, Any]:
    """The page, cut until it is within `budget` tokens, least useful first: the summaries of
    the callable tools (lowest-ranked first), then those tools from the bottom (the best one
    stays), then the uncallable servers from the worst (the best one stays), then that
    server's reason, then whatever is left. Changes `page` in place and returns it."""
    tools: list[dict[str, Any]] = page["tools"]
    entries: list[dict[str, Any]] = page.get("unavailable", [])

    def fits() -> bool:
        return page_tokens(page) <= budget

    if fits():
        return page
    for tool in reversed(tools):
        tool["summary"] = _clip(tool["summary"], SHORT_SUMMARY_CHARS)
        if fits():
            return page
    while len(tools) > 1:
        tools.pop()
        if fits():
            return page
    while len(entries) > 1:
        entries.pop()
        if fits():
            return page
    for entry in entries:
        entry["reason"] = _clip(str(entry["reason"]), SHORT_REASON_CHARS)
        del entry["tools"][1:]
    while not fits() and (entries or tools):
        (entries or tools).pop()
    if not entries:
        page.pop("unavailable", None)
        if not tools and "note" in page:
            page["note"] = NOTHING_FITS
    return page
