"""Whether a request asks to read or look (and only that), from how it starts.

The page must never offer a tool that changes things as a loose match for a request that only
asks to see something ("see which lines changed" is not a request to edit a file), so the
fit gate (router/catalog/fit_gate.py) needs to know when a request only reads. A request says
it in its first verb, after the politeness around it ("could you please show me ..."), or by
being a question ("what is left to commit", "is my repo clean"); a later clause that starts
with a verb of change ("find the old logs and delete them") makes it more than a read.
Anything else is not known to read, and the rule does not apply: it only ever removes a tool
that changes things, so a request wrongly taken for a read loses a loose match, never a strong one.
People type fast: an opening one slip away from a reading one ("wich branch am I on", "shwo me
the log") reads like it, unless it is a word in its own right ("book a flight" is no "look").
"""

import re

from router.catalog.english_words import may_be_a_word
from router.catalog.opposite_actions import REMOVING_VERBS
from router.catalog.query_words import stop_words

# Words before the verb that say nothing about what is asked: politeness, the asker, modals.
_LEAD_IN = frozenset(
    """please pls kindly can could would will you u i we i'd i'm id im want wanna need needs like
    to help me us let let's lets just quickly now then first also go ahead and ok okay hey hi so
    try tell""".split()
)
# "tell me" leads a question ("tell me what changed"): skipped with the lead-in above.
# Verbs and openings of a request to read or look.
_READ_OPENINGS = frozenset(
    """show list read view see display print find search look check inspect describe compare diff
    count cat ls get fetch retrieve lookup browse peek explore examine review summarize summarise
    explain query grep locate identify google dump grab decompile disassemble which what what's
    whats where where's who who's whom whose when when's why how's is are am was were does do did
    has have had any""".split()
)
# Reading openings that say how to look, which few tools are asked for with: "find every yaml
# file" is asked as the file search is ("find all the .tsx files"), where "show" or "what" is
# how every reading tool is asked for.
_SEEKING = frozenset("find search locate grep google decompile disassemble".split())
# "how" reads when it asks for a quantity or a state ("how many", "how big"); "how do I
# delete ..." is decided by the verb after it.
_HOW_READS = frozenset("many much big large long old often far recent".split())
# Verbs that open a clause of change (the ones that do away with a thing among them): one after
# the first clause makes the request more than a read.
_CHANGE_VERBS = REMOVING_VERBS | frozenset(
    """create make add write edit delete remove rename move commit stage unstage push install
    uninstall run start launch stop kill set update change replace save remember store record
    switch checkout reset revert apply tap click type press swipe build render export import
    download upload send post format fix insert append copy restart close mkdir rm mv cp undo
    discard clear drop merge rebase tag modify overwrite generate open schedule book order email
    message notify remind alert link unlink ping share publish deploy buy pay subscribe invite""".split()
)
# A slip (one letter wrong, missing, extra, or two swapped) is read as the opening it nearly is
# only in words this long: shorter ones are one slip away from too many others.
MIN_SLIP_LENGTH = 4
# Phrases whose first word reads ("get") or says less than the phrase: read as the verb they mean.
_PHRASAL_VERBS = (
    (re.compile(r"\bget(?:ting)? rid of\b", re.IGNORECASE), "remove"),
    # "jot down on the payments-api entry: ..." keeps a note, it writes no file
    (re.compile(r"\b(?:jot|write|note|take) down\b", re.IGNORECASE), "note"),
    # "set a reminder for 4pm": a reminder nothing here keeps, not a setting or a file
    (
        re.compile(r"\b(?:set|create|add|make|schedule)(?: up)? (?:me )?an? reminders?\b", re.IGNORECASE),
        "remind",
    ),
)
# "that note about marco is stale, drop it": the verb of a last clause that only points back
_CLOSING_IMPERATIVE = re.compile(
    r"[,;]\s*(?:pls\s+|please\s+|just\s+)?([a-z]+)\s+(?:it|them|that|this|those)\b[\w\s]{0,20}[.!]?\s*$"
)
# an aside in brackets at the very end ("..., drop it (keep bob tho)") is no part of the close;
# it starts at its bracket (not at the spaces before it, which would read a long run of spaces
# once per space) and takes what follows it whole
_CLOSING_ASIDE = re.compile(r"\([^()\n]{0,80}\)[\s.!]*+$")
# (no spaces around it in the pattern: a clause is read by its words, and a leading \s* would
# start at every space of a long run of them)
_CLAUSE_BREAK = re.compile(r"[,;:]|\band then\b|\bthen\b|\band\b|\bafter that\b")
_WORD = re.compile(r"[a-z][a-z'’]*")


def _plain(text: str) -> str:
    """The text with each phrasal verb replaced by the verb it means."""
    for phrase, verb in _PHRASAL_VERBS:
        text = phrase.sub(verb, text)
    return text


def _words(text: str) -> list[str]:
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


def _first_verb(words: list[str]) -> tuple[str | None, int]:
    """The first word after the lead-in and its position (None when there is none)."""
    for at, word in enumerate(words):
        if word not in _LEAD_IN:
            return word, at
    return None, len(words)


def action_word(text: str) -> str | None:
    """The verb of doing the text leads with after the politeness around it (lower case): None
    when it leads with a reading opening or a question ("show", "what", "is"), a function word,
    or has no word."""
    return next(iter(action_words(text)), None)


def action_words(text: str) -> tuple[str, ...]:
    """The verb of doing the text leads with (action_word), and after a program's name also the
    name ("git rebase" → rebase, git): an example or trigger that says "git add" is asked for
    with either."""
    words = _words(_plain(text))
    first, at = _first_verb(words)
    # a reading opening is shared by every tool that reads ("show", "list", "what"); a function
    # word ("if it's 3pm ...", "in settings.py replace ...") names no action
    if first in _READ_OPENINGS:
        return (first,) if first in _SEEKING else ()
    if first in _CHANGE_VERBS:
        return (first,)
    # what a request that opens with its object asks is said at its close
    closing = _CLOSING_IMPERATIVE.search(_CLOSING_ASIDE.sub("", text.lower()))
    if closing is not None and closing.group(1) in _CHANGE_VERBS:
        return (closing.group(1),)
    if first is None or first in stop_words():
        return ()
    # "git rebase -i the last 3 commits", "npm install": a program's name, then the verb it runs
    after = words[at + 1] if at + 1 < len(words) else None
    return (after, first) if after in _CHANGE_VERBS else (first,)


def asks_for_a_change(text: str) -> bool:
    """Whether the text leads with a verb of change ("delete a branch", "push my commits")."""
    word = action_word(text)
    return word is not None and is_change_verb(word)


def is_change_verb(word: str) -> bool:
    """Whether the word (lower case) is a verb that asks for a change ("push", "merge")."""
    return word in _CHANGE_VERBS


def one_slip_apart(typed: str, word: str) -> bool:
    """Whether `typed` is `word` with one letter wrong, missing or extra, or two neighbours
    swapped (a Damerau-Levenshtein distance of 1)."""
    if typed == word or abs(len(typed) - len(word)) > 1:
        return False
    if len(typed) == len(word):
        differ = [i for i, (a, b) in enumerate(zip(typed, word)) if a != b]
        return len(differ) == 1 or (
            len(differ) == 2
            and differ[1] == differ[0] + 1
            and typed[differ[0]] == word[differ[1]]
            and typed[differ[1]] == word[differ[0]]
        )
    shorter, longer = sorted((typed, word), key=len)
    return any(longer[:i] + longer[i + 1 :] == shorter for i in range(len(longer)))


def _reads(word: str) -> bool:
    """A reading opening, or a slip of one (a word that is no word of its own, nor a verb of change)."""
    if word in _READ_OPENINGS:
        return True
    if len(word) < MIN_SLIP_LENGTH or word in _CHANGE_VERBS or word in _LEAD_IN or may_be_a_word(word):
        return False
    return any(
        len(opening) >= MIN_SLIP_LENGTH and one_slip_apart(word, opening) for opening in _READ_OPENINGS
    )


def asks_only_to_read(query: str) -> bool:
    """Whether the request asks to read or look, and nothing else (see the module's doc)."""
    clauses = [c for c in _CLAUSE_BREAK.split(_plain(query).lower()) if c.strip()]
    if not clauses:
        return False
    words = _words(clauses[0])
    first, at = _first_verb(words)
    if first is None:
        return False
    if first == "how":
        if at + 1 >= len(words) or words[at + 1] not in _HOW_READS:
            return False
    elif not _reads(first):
        return False
    for clause in clauses[1:]:
        verb, _ = _first_verb(_words(clause))
        if verb in _CHANGE_VERBS:
            return False
    return True
