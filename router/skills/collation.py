"""JavaScript `String.prototype.localeCompare` order, in Python.

The `skills` CLI sorts a skill's files with `a.localeCompare(b)` before hashing them, so
the order is ICU collation, not code-point order ('_x' < '-y' < '10' < '9' < 'a' < 'A' <
'ä' < 'B'). Node resolves the default locale from the environment; for the locales people
run it under (unset, C, POSIX, en-*, de-*, ...) that is the CLDR root collation, which is
what this module uses, through ICU itself (PyICU) rather than an imitation of it.
Under a locale that tailors collation (e.g. sv-SE puts 'ä' after 'z') the CLI's own hash
of such names differs; the lock files do not record the locale, so root is the only
portable choice.
"""

from functools import cache
from typing import Any

from router.extras import require


@cache
def _root_collator() -> Any:
    icu = require("icu", extra="skills", feature="hashing skill folders as the skills CLI does (ICU order)")
    # Default attributes are those of Intl.Collator() without options: tertiary strength,
    # non-ignorable punctuation, no numeric ordering.
    return icu.Collator.createInstance(icu.Locale.getRoot())


def locale_compare_key(text: str) -> tuple[bytes, str]:
    """Sort key that orders strings as JavaScript's localeCompare does under root.

    Strings ICU ranks equal (e.g. canonically equivalent spellings) fall back to code-point
    order so the result never depends on the order files were listed in.
    """
    return (_root_collator().getSortKey(text), text)


def locale_sorted(items, key=lambda item: item):
    return sorted(items, key=lambda item: locale_compare_key(key(item)))
