"""Provider token shapes from detect-secrets' plugins, each found in time linear in the text.

A few of the plugins' patterns backtrack across a run of characters from every place in it
where a match could start: the npm, JWT and OpenAI shapes (quadratic in the run's length) and
the key assignments of the Cloudant, IBM and SoftLayer shapes (`key` followed by a run of
spaces: cubic, seconds for a thousand spaces). The router redacts whatever a backend writes on
its stderr, so no pattern may do that. Those patterns are replaced here by ones that find the
same secrets while looking at each character a bounded number of times; every other plugin
pattern is used as it is. tests/test_secret_shapes.py holds each replacement to its plugin's
pattern (still the plugin's, same matches on the same samples), and bench/redaction.py times
every pattern on long runs of each kind of character.

A replacement may start its match earlier than the secret (where the plugin's pattern would
have started inside a run): that part is its group `keep`, which stays in the text.
"""

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# The Cloudant, IBM and SoftLayer shapes' `name = value` separator: spaces, an operator or
# spaces alone, then spaces; the optional runs around the operator split one run of spaces
# every possible way before giving up.
SPACED_ASSIGN = r"(?: *)(?:=|:|:=|=>| +|::)(?: *)"
# the same strings, each space looked at once
LINEAR_ASSIGN = r"(?: *+(?::=|=>|::|=|:) *+| ++)"

# Every match of a pattern with that separator has one of these keywords right before it (with
# a closing quote or bracket between): where none is, the pattern cannot match, and trying it
# at every character of a long text is most of the redaction's time, so it is only tried around
# the places this finds. Each window reaches far enough on both sides for a whole match (the
# keyword's prefix, `ibm_cloud_iam_api_`, and a quoted 64-character value).
# (Its first letter as a class, so the search skips ahead by it: a whole case-insensitive
# alternation is tried at every character, six times slower. The Kelvin sign is a `k` to the
# plugins' case-insensitive patterns. It may find a little more than the keywords: no harm.)
KEYWORD_ASSIGNMENT = re.compile(r"[kKpPtT\u212a](?i:ey|wd?|ass(?:word)?|oken)[\"']?\]?" + LINEAR_ASSIGN)
WINDOW_BEFORE, WINDOW_AFTER = 48, 80

# The plugin's pattern → one that matches the same secrets in linear time. A match may start
# only where no earlier start in the same run of token characters could have (an earlier
# start that failed means every later one fails too: they share the run's end).
REWRITES: dict[str, str] = {
    # NpmDetector: from the first `//` on a line only
    r"\/\/.+\/:_authToken=\s*((npm_.+)|([A-Fa-f0-9-]{36})).*": (
        r"(?m)^(?P<keep>(?>[^\n]*?(?=//)))//[^\n]+/:_authToken=\s*(?:npm_[^\n]+|[A-Fa-f0-9-]{36})[^\n]*"
    ),
    # JwtTokenDetector: its lazy tail matches nothing, so it is left out
    r"eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*?": (
        r"(?<![A-Za-z0-9-_=])(?P<keep>(?:(?!eyJ)[A-Za-z0-9-_=])*+)eyJ[A-Za-z0-9-_=]++\.[A-Za-z0-9-_=]++\.?"
    ),
    # OpenAIDetector
    r"sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}": (
        r"(?<![A-Za-z0-9-_])(?P<keep>(?:(?!sk-)[A-Za-z0-9-_])*+)"
        r"sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
    ),
}

# detect-secrets plugins that find no secret (public IPs), only flag a line (the private-key
# header: router/redaction/redactor.py removes blocks whole) or need a file's context (keywords:
# router/redaction/redactor.py has its own)
NOT_SECRET_SHAPES = {"IPPublicDetector", "PrivateKeyDetector", "KeywordDetector"}


@dataclass(frozen=True)
class Shape:
    """One pattern of one plugin: what it removes, counted under the plugin's secret type."""

    kind: str
    pattern: re.Pattern
    # the plugin's own pattern, when this one replaces it
    replaces: re.Pattern | None = None
    # tried only around a KEYWORD_ASSIGNMENT (it cannot match elsewhere)
    gated: bool = False

    def remove(self, text: str, placeholder: str) -> tuple[str, int]:
        if "keep" not in self.pattern.groupindex:
            return self.pattern.subn(placeholder, text)
        return self.pattern.subn(lambda match: match.group("keep") + placeholder, text)


def remove_shapes(
    text: str, placeholder: str, worth_trying: Callable[[re.Pattern], bool]
) -> tuple[str, Counter[str]]:
    """`text` without every plugin shape, and how many of each kind were removed. A shape is
    tried only where `worth_trying` says its pattern may match (router/redaction/regex_literals.py);
    the keyword assignments only in the windows around their keywords, those next to each
    other in the plugins' order in one pass (the order is kept: where two shapes overlap,
    the first takes the text, as with the plugins' own patterns)."""
    removed: Counter[str] = Counter()
    gated: list[Shape] = []
    windows = _Windows()
    for shape in (*plugin_shapes(), None):
        if shape is not None and not worth_trying(shape.pattern):
            continue
        if shape is not None and shape.gated:
            gated.append(shape)
            continue
        if gated:
            text = _remove_in_windows(text, windows.of(text), gated, placeholder, removed)
            gated = []
        if shape is not None:
            text, n = shape.remove(text, placeholder)
            removed[shape.kind] += n
    return text, removed


class _Windows:
    """keyword_windows of the last text asked about: the same text is not searched again."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._windows: list[tuple[int, int]] = []

    def of(self, text: str) -> list[tuple[int, int]]:
        if text is not self._text and text != self._text:
            self._text, self._windows = text, keyword_windows(text)
        return self._windows


def _remove_in_windows(
    text: str, windows: list[tuple[int, int]], shapes: list[Shape], placeholder: str, removed: Counter[str]
) -> str:
    pieces, done = [], 0
    for start, end in windows:
        window = text[start:end]
        for shape in shapes:
            window, n = shape.remove(window, placeholder)
            removed[shape.kind] += n
        pieces += [text[done:start], window]
        done = end
    return "".join(pieces) + text[done:]


def keyword_windows(text: str) -> list[tuple[int, int]]:
    """The stretches of `text` around its keyword assignments, overlapping ones merged."""
    windows: list[tuple[int, int]] = []
    for match in KEYWORD_ASSIGNMENT.finditer(text):
        start, end = max(0, match.start() - WINDOW_BEFORE), match.end() + WINDOW_AFTER
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], end)
        else:
            windows.append((start, end))
    return windows


def linear(pattern: re.Pattern) -> re.Pattern:
    """The plugin pattern itself, or its linear replacement (same flags)."""
    source = pattern.pattern
    if source in REWRITES:
        return re.compile(REWRITES[source], pattern.flags)
    if SPACED_ASSIGN in source:
        return re.compile(source.replace(SPACED_ASSIGN, LINEAR_ASSIGN), pattern.flags)
    return pattern


# detect-secrets is imported on first use: the router's own start-up (serve) never needs it
@lru_cache(maxsize=1)
def plugin_shapes() -> tuple[Shape, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    plugins: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    shapes = []
    for plugin in plugins:
        if not issubclass(plugin, RegexBasedDetector) or plugin.__name__ in NOT_SECRET_SHAPES:
            continue
        for pattern in plugin().denylist:
            replacement = linear(pattern)
            shapes.append(
                Shape(
                    plugin.secret_type.lower(),
                    replacement,
                    pattern if replacement is not pattern else None,
                    gated=SPACED_ASSIGN in pattern.pattern,
                )
            )
    return tuple(shapes)
