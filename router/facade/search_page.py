"""The page mcp_search_tools answers: the tools the caller can call here that fit the request
(router/catalog/fit_gate.py), best first, and, only where they match better than the best
callable one (or nothing callable fits), one compact entry per server whose tools cannot be
called here, saying its reason (the install line included) once. A page with no callable tool
says so in one line (`note`), so an agent never reads an empty list as "nothing was searched".

Each callable tool carries its call signature (router/catalog/signatures.py), so a model can
call a simple tool without mcp_inspect_schema.

A model pays for every token of the page in its context, so the page as the facade sends it
(compact_json) is held to PAGE_TOKEN_BUDGET tokens (cl100k, router/tokens.py) for any query
and any catalog: when it would be longer, it is cut in a fixed order (fit_page) until it fits.
`serve` loads the tokenizer (a few hundred ms) in the background once it serves
(router/facade/warmup.py): loading it before the handshake slowed every router's, where
clients start several at once.
"""

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import apsw

from router.backends.servers import SearchSettings
from router.catalog.fit_gate import fitting
from router.catalog.search import SearchHit, check_limit, search
from router.catalog.signatures import Signature, tool_signatures
from router.tokens import count_tokens

# A page an agent reads on every search stays small whatever the catalog; every page is cut to fit.
PAGE_TOKEN_BUDGET = 400

# Uncallable servers a page names at most, and tool names per server: enough for a model to
# tell the user what to install, not a second page of tools it cannot call.
MAX_SERVER_ENTRIES = 3
MAX_TOOLS_PER_SERVER = 3

# A callable tool's call signature on the page: its name and arguments with their types.
SIGNATURE = "signature"

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
    hits = page_hits(conn, query, limit=limit, unavailable=unavailable, settings=settings, **search_options)
    signatures = tool_signatures(conn, [hit.name for hit in hits if hit.available])
    return compose_page(hits, limit, signatures=signatures)


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


def compose_page(
    hits: Sequence[SearchHit],
    limit: int,
    budget: int = PAGE_TOKEN_BUDGET,
    signatures: Mapping[str, Signature] | None = None,
) -> dict[str, Any]:
    """The page for `hits` (search's order, best first): at most `limit` callable tools, each
    with its signature when `signatures` has it, and the uncallable servers whose tools match
    better (better_uncallable), within `budget` tokens."""
    signatures = signatures or {}
    tools = [
        {"name": hit.name, "profile": hit.profile, "summary": hit.summary} | _signed(hit.name, signatures)
        for hit in hits
        if hit.available
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
    return fit_page(page, budget, signatures)


def _signed(name: str, signatures: Mapping[str, Signature]) -> dict[str, str]:
    found = signatures.get(name)
    return {} if found is None else {SIGNATURE: found.full}


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


# A cut of one field of a page's tool: its new value, or None to remove it.
_Cut = Callable[[dict[str, Any]], str | None]


def fit_page(
    page: dict[str, Any], budget: int = PAGE_TOKEN_BUDGET, signatures: Mapping[str, Signature] | None = None
) -> dict[str, Any]:
    """The page, cut until it is within `budget` tokens, least useful first. For the tools
    below the best one, each step from the lowest-ranked up: their signatures' optional
    arguments (the short forms in `signatures`), their summaries, their signatures; then
    the best tool's optional arguments and summary; then the tools from the bottom (the best
    one stays), the uncallable servers from the worst (the best one stays), that server's
    reason, the best tool's signature, and whatever is left. Changes `page` in place and
    returns it."""
    tools: list[dict[str, Any]] = page["tools"]
    entries: list[dict[str, Any]] = page.get("unavailable", [])
    shorter = {name: found.short for name, found in (signatures or {}).items()}

    def fits() -> bool:
        return page_tokens(page) <= budget

    def short_signature(tool: dict[str, Any]) -> str | None:
        return shorter.get(tool["name"], tool[SIGNATURE])

    def clipped_summary(tool: dict[str, Any]) -> str | None:
        return _clip(tool["summary"], SHORT_SUMMARY_CHARS)

    def no_signature(_tool: dict[str, Any]) -> str | None:
        return None

    meter = _Meter(page, budget)
    if meter.fits():
        return page
    lower, best = tools[1:], tools[:1]
    cuts: list[tuple[list[dict[str, Any]], str, _Cut]] = [
        (lower, SIGNATURE, short_signature),
        (lower, "summary", clipped_summary),
        (lower, SIGNATURE, no_signature),
        (best, SIGNATURE, short_signature),
        (best, "summary", clipped_summary),
    ]
    if any(meter.cut_from_the_bottom(some, key, cut) for some, key, cut in cuts):
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
    if not fits():
        _Meter(page, budget).cut_from_the_bottom(tools, SIGNATURE, no_signature)
    while not fits() and (entries or tools):
        (entries or tools).pop()
    if not entries:
        page.pop("unavailable", None)
        if not tools and "note" in page:
            page["note"] = NOTHING_FITS
    return page


class _Meter:
    """The page's tokens while fields of its tools are cut: each cut's saving is counted on
    the field alone (counting the whole page after every cut cost a few ms a search), and
    the page is counted whole whenever that says it fits."""

    def __init__(self, page: dict[str, Any], budget: int) -> None:
        self._page, self._budget = page, budget
        self._tokens = page_tokens(page)

    def fits(self) -> bool:
        return self._tokens <= self._budget

    def cut_from_the_bottom(self, tools: list[dict[str, Any]], key: str, cut: _Cut) -> bool:
        """Each tool's `key` set to cut(tool) (None: removed), lowest-ranked first, until the
        page fits; whether it did."""
        for tool in reversed(tools):
            if key not in tool:
                continue
            before = _field_tokens(key, tool[key])
            value = cut(tool)
            if value is None:
                del tool[key]
            else:
                tool[key] = value
            self._tokens += (0 if value is None else _field_tokens(key, value)) - before
            if self.fits():
                self._tokens = page_tokens(self._page)
                if self.fits():
                    return True
        return False


def _field_tokens(key: str, value: str) -> int:
    """The tokens of `,"key":"value"` as compact_json writes it in an object."""
    return count_tokens("," + compact_json({key: value})[1:-1])
