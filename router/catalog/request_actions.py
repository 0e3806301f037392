"""The action a request asks for, read from its leading verb, against how the catalog's tools
are asked for.

A request names what it wants done in its first word after the politeness ("remember that the
user prefers tabs", "forget everything about the staging server", "push my commits"), and the
rest is often a payload no tool's text can share (the fact to remember, the thing to forget):
with a static model such a payload outweighs the verb in the request's vector. A tool's
examples and trigger phrases are written the way people ask for it, so the words they lead
with are the actions it is asked for. Two signs come from comparing the two, by the words'
stems (the index's own tokenizer):

- a tool *is asked for with* the request's action when one of its examples or triggers leads
  with the same verb: search ranks it higher (router/catalog/search.py, ACTION_WEIGHT) and the
  fit gate (router/catalog/fit_gate.py) takes a change it asks for on a looser cosine;
- a request *asks for an action no tool names* when it leads with a verb of change
  (router/catalog/request_intent.py) that no tool's text holds at all: "push" in a catalog
  without a push, where every git tool is a loose match.

The verbs that do away with a thing (opposite_actions.REMOVING_VERBS) are one action here:
"drop the legacy-cron entity" asks what "remove the Atlas project from memory" does, and
"nuke" is named wherever "delete" is.
"""

import json
import re
from collections.abc import Iterable

import apsw

from router.catalog.match_plan import term_stats
from router.catalog.opposite_actions import REMOVING_VERBS
from router.catalog.query_words import query_words
from router.catalog.request_intent import action_word, action_words, is_change_verb
from router.db import PerConnection

# The lines people ask for each tool with: its examples and its trigger phrases.
ASKED_LINES_SQL = """
SELECT t.id, t.examples, t.triggers FROM json_each(:ids) c JOIN tools t ON t.id = c.value
"""
# the word every verb of doing away with a thing is read as
REMOVING = "delete"


def one_action(word: str) -> str:
    """The verb as the action it names: any verb of doing away with a thing is REMOVING."""
    return REMOVING if word in REMOVING_VERBS else word


class AskedWith:
    """Per connection: which tools are asked for with which verb (the verb each of their
    examples and triggers leads with), read as searches meet the tools, until the catalog
    changes."""

    def __init__(self, conn: apsw.Connection):
        self._conn = conn
        self._version: int | None = None
        self._seen: set[int] = set()  # the tools whose lines were read
        self._asked: dict[str, set[int]] = {}  # verb stem → the tools seen that are asked with it
        self._stem_of: dict[str, str] = {}

    def stem(self, word: str) -> str:
        found = self._stem_of.get(word)
        if found is None:
            found = self._stem_of[word] = query_words(self._conn, word)[0].stem
        return found

    def asked_for(self, version: int, stem: str, tool_ids: Iterable[int]) -> set[int]:
        """The tools among `tool_ids` one of whose examples or triggers leads with `stem`."""
        if version != self._version:
            self._version, self._seen, self._asked = version, set(), {}
        wanted = set(tool_ids)
        missing = wanted - self._seen
        if missing:
            rows = self._conn.execute(ASKED_LINES_SQL, {"ids": json.dumps(sorted(missing))})
            for tool_id, examples, triggers in rows:
                for line in f"{examples}\n{triggers}".split("\n"):
                    for word in action_words(line):
                        self._asked.setdefault(self.stem(one_action(word)), set()).add(int(tool_id))
            self._seen |= missing
        return wanted & self._asked.get(stem, set())


asked_with = PerConnection(AskedWith)


def in_plain_words(text: str) -> str:
    """The text with the verb it leads with said as the action it names ("nuke the old branch"
    → "delete the old branch"): a static model knows the plain word's neighbours, not the
    slang's, so a server's not-for request "delete a branch" is found for it."""
    word = action_word(text)
    if word is None or one_action(word) == word:
        return text
    return re.sub(rf"\b{re.escape(word)}\b", one_action(word), text, count=1, flags=re.IGNORECASE)


def action_stem(conn: apsw.Connection, query: str) -> str | None:
    """The stem of the verb the request leads with (None: it leads with none, a question say)."""
    word = action_word(query)
    return None if word is None else asked_with(conn).stem(one_action(word))


def asks_unnamed_change(conn: apsw.Connection, query: str) -> bool:
    """Whether the request leads with a verb of change no tool's text holds; term_stats must be
    fresh (search refreshes it once per query)."""
    word = action_word(query)
    if word is None or not is_change_verb(word):
        return False
    verbs = REMOVING_VERBS if word in REMOVING_VERBS else (word,)
    stems = [asked_with(conn).stem(verb) for verb in verbs]
    return not any(term_stats(conn).docs(stems).values())
