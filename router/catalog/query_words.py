"""Query text → the words search looks for: split, stemmed and classified exactly as the
FTS5 index splits and stems tool text, so a word's document count is the index's own.

Each word is a *selector* (it may make a tool a candidate) unless it is an English stop word
from the `stop-words` library's list (the, can, me, find, please, ...): a stop word still
counts in a candidate's score, but a tool that shares only stop words with the query is never
a candidate, unless the query has nothing else. Words in at least half the catalog carry no
BM25 weight (FTS5 clamps their IDF to 1e-6) and are left out the same way, unless they are
all there is.
"""

from functools import lru_cache
from typing import NamedTuple

import apsw
from stop_words import get_stop_words

from router.db import PerConnection
from router.errors import QueryError

# What a query may be: the meta-tool's own limits (router/facade/definitions.py shows them).
MAX_QUERY_CHARS = 16_384
# A long query (a pasted paragraph) is read up to this many distinct words.
MAX_QUERY_WORDS = 128

# The FTS5 tokenizer of tools_fts (schema.sql), so query words are split and stemmed as the
# index was.
TOKENIZER = ("porter", ["unicode61", "remove_diacritics", "2"])


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """The `stop-words` library's English list (lower case), read once."""
    return frozenset(word.lower() for word in get_stop_words("en"))


class Word(NamedTuple):
    # a tuple, not a dataclass: a search makes one per query word and the match plan compares
    # and hashes them, all in C this way
    text: str  # as the query spells it (lower-cased): what the MATCH quotes
    stem: str  # as FTS5 indexes it: what the document count is looked up by
    stop: bool


def check_query(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise QueryError("query is empty: describe the task in a few words")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"query is {len(text)} characters; at most {MAX_QUERY_CHARS} are accepted")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise QueryError(
            f"query is not valid text: a lone surrogate (U+{ord(text[exc.start]):04X}) "
            f"at character {exc.start}"
        ) from None
    return text


def query_words(conn: apsw.Connection, text: str) -> list[Word]:
    """The query's distinct words in order (at most MAX_QUERY_WORDS), stemmed as indexed."""
    raw = check_query(text).encode("utf-8")
    tokenize = _tokenizer(conn)
    words: list[Word] = []
    seen: set[str] = set()
    stops = stop_words()
    for token in tokenize(raw, apsw.FTS5_TOKENIZE_QUERY, None, include_colocated=False):
        # with offsets, each token is (start byte, end byte, text)
        start, end, stem = (int(token[0]), int(token[1]), str(token[2]))  # type: ignore[misc]
        surface = raw[start:end].decode("utf-8", errors="replace").lower()
        if stem in seen:
            continue
        seen.add(stem)
        words.append(Word(surface, stem, surface in stops))
        if len(words) == MAX_QUERY_WORDS:
            break
    if not words:
        raise QueryError("query has no words to search for (only punctuation or symbols)")
    return words


_tokenizer = PerConnection(lambda conn: conn.fts5_tokenizer(*TOKENIZER))
