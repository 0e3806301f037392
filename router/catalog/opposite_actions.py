"""Whether a tool's name says the opposite of what a request asks for.

"remove the build folder" shares its object with `create_directory`, and "delete the
feature/login branch" with `git_create_branch`: with a static model the object outweighs the
verb, so the tool that does the reverse can rank first where no tool does the asked thing
(issue 36: picking the opposite action is worse than finding nothing). A tool's name leads
with what it does far more often than its description does, so the request's leading verb
(router/catalog/request_intent.py) is set against the words of the tool's name: a name that
holds the opposite action and not the asked one is the reverse of the request, as is a name
that makes something for a request that says it already exists; the fit gate
(router/catalog/fit_gate.py) keeps such a tool only on a strong sign.
"""

import re
from collections.abc import Iterable

# The verbs people use to do away with a thing, and to make one (router/catalog/request_objects.py
# reads the first too).
REMOVING_VERBS = frozenset("delete remove rm erase drop discard nuke wipe trash purge destroy".split())
MAKING_VERBS = frozenset("create make new mkdir generate".split())

# Pairs of opposite actions, each side the verbs people use for it. Only verbs whose reverse
# is unambiguous: "reset", "move" or "set" have none.
_OPPOSITES = (
    (REMOVING_VERBS, MAKING_VERBS | frozenset("add write insert".split())),
    ("stop kill close quit exit terminate shutdown halt".split(), "start run launch open play boot".split()),
    ("unstage".split(), "stage add".split()),
    ("forget".split(), "remember store record".split()),
    ("uninstall".split(), "install".split()),
    ("unlink disconnect detach".split(), "link connect attach relate".split()),
)
# each verb → (its own side, the opposite side)
OPPOSITE_ACTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
for _one, _other in _OPPOSITES:
    for _side, _reverse in ((frozenset(_one), frozenset(_other)), (frozenset(_other), frozenset(_one))):
        for _verb in _side:
            OPPOSITE_ACTIONS[_verb] = (_side, _reverse)


# A request about a thing that is already there ("switch to the release branch, it already
# exists") asks for anything but making it.
_EXISTING = re.compile(
    r"(?<!not )(?<!n't )\b(?:existing|already (?:exists?|there|made|created))\b", re.IGNORECASE
)


def says_it_exists(query: str) -> bool:
    """Whether the request says its object is already there."""
    return _EXISTING.search(query) is not None


def names_the_opposite(request_verb: str | None, name_words: Iterable[str], exists: bool = False) -> bool:
    """Whether the tool's name words hold the reverse of the request's verb and not the verb's
    own side ("remove" against `create directory`, not against `remove directory` nor
    `list directory`), or make a thing the request says exists (`exists`)."""
    words = set(name_words)
    if exists and words & MAKING_VERBS and request_verb not in MAKING_VERBS:
        return True
    sides = OPPOSITE_ACTIONS.get(request_verb or "")
    if sides is None:
        return False
    own, reverse = sides
    return bool(words & reverse) and not words & own
