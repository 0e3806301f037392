"""Whether a request asks to change a file or folder it names, and whether a tool takes one.

"delete tmp/debug.log" leads with a verb any kind of thing can take; its object, a path, says
what kind of thing it is. A memory's `delete_entities` is asked for with "delete" too (its
examples lead with it), so the verb alone lets it onto the page, where it would delete
something else entirely. A tool can only act on a file if one of its arguments takes one, so
for such a request the fit gate (router/catalog/fit_gate.py) keeps a tool that changes things
and takes no path only on a strong sign; and where the verb does away with the file, a tool
that only reads is no first step either. A verb that belongs to one kind of thing ("remember
that the docs live in docs/api.md") decides on its own and is not one of these.
"""

import re

from router.catalog.opposite_actions import REMOVING_VERBS
from router.catalog.request_payload import LINK, PATH

# Verbs of change that take any kind of object: the object says what is to change. Those that
# do away with it (REMOVING_VERBS) also ask for more than reading it.
_OBJECT_VERBS = REMOVING_VERBS | frozenset("rename copy move".split())
# Words of a tool's argument text (tools.arg_text: a line per argument, its name and
# description) that say it takes a file or a folder, or a name that says so on its own.
_PATH_ARGUMENT = re.compile(r"\b(?:path|paths|file|files|filename|directory|dir|folder)\b")
_PATH_NAME = re.compile(r"^(?:source|destination|src|dest)$")
# An argument for the repository a tool works in ("repo path") says where it works, not what
# file it acts on: git's reset cannot do anything to tmp/cache.json.
_WHERE_IT_WORKS = re.compile(r"\b(?:repo|repository)\b")
# Words that name a file or folder as such ("remove the build folder").
_FILE_WORDS = re.compile(r"\b(?:files?|folders?|director(?:y|ies)|dirs?)\b", re.IGNORECASE)


def changes_a_named_path(query: str, verb: str | None) -> bool:
    """Whether the request, leading with `verb` (request_intent.action_word), asks with a verb
    of change that takes any object and names a file or folder, by its path (a link is not
    one) or as a file or folder."""
    if verb not in _OBJECT_VERBS:
        return False
    return names_a_path(query) or _FILE_WORDS.search(query) is not None


def names_a_path(query: str) -> bool:
    """Whether the request names a file or folder by its path (a link is not one)."""
    return PATH.search(LINK.sub(" ", query)) is not None


def removes_a_named_path(query: str, verb: str | None) -> bool:
    """Whether the request, leading with `verb`, asks to do away with a file or folder it names."""
    return verb in REMOVING_VERBS and changes_a_named_path(query, verb)


def takes_a_path(argument_text: str) -> bool:
    """Whether a tool's argument text says one of its arguments is a file, folder or path it
    acts on (not the repository it works in)."""
    return any(
        (_PATH_ARGUMENT.search(line) or _PATH_NAME.match(line.strip())) and not _WHERE_IT_WORKS.search(line)
        for line in argument_text.lower().splitlines()
    )
