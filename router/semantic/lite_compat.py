"""Where static-embed-runner's LiteTokenizer reads a BERT tokenizer.json differently from the
`tokenizers` library (what model2vec, and so the reference vectors, use), and the rewrite of a
text that makes the two give the same token ids.

A sweep of every code point against `tokenizers` 0.23 (tests/test_lite_tokenizer.py) found
four differences in LiteTokenizer's BertNormalizer, each fixed here before the text reaches it:
- control characters that Python's str.split() takes for whitespace (\\x0b, \\x0c, \\x1c-\\x1f,
  \\x85): LiteTokenizer's per-word fast path splits a word there; the library deletes them
  first, joining the word. Deleted here, as the library does (every Cc but \\t \\n \\r).
- private-use characters (category Co): the library deletes them (its `is_control` covers
  Cc, Cf and Co); LiteTokenizer keeps them, so they become [UNK]. Deleted here.
- CJK compatibility ideographs (U+F900-FAFF, U+2F800-2FA1F): the library isolates them as
  CJK and then decomposes them (NFD, part of stripping accents) into the unified ideograph
  the vocabulary has; LiteTokenizer isolates them but never decomposes. Replaced here by
  their decomposition, isolated by spaces.
- U+2B820-2B91F (CJK extension E's start): the library's CJK ranges begin at U+2B920, so it
  keeps these inside their word (which then matches no piece); LiteTokenizer isolates them.
  Replaced here by a placeholder LiteTokenizer also keeps inside the word and no piece has.

What remains are code points whose Unicode category changed after the Unicode version the
library's tables were built from (e.g. marks and punctuation of scripts added since): Python
knows them, the library does not. None occurs in any catalog or query set measured.
"""

import re
import unicodedata
from collections.abc import Callable
from functools import cache

# Python keeps it inside a word (category Cn: not a control, space, punctuation nor CJK) and
# no vocabulary piece holds it, so the word it is in matches no piece, as in the library.
UNKNOWN_LETTER = "\uffff"
_COMPAT_IDEOGRAPHS = ((0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_CJK_THE_LIBRARY_MISSES = (0x2B820, 0x2B91F)
# Cc but tab, newline and carriage return (the library maps those to a space), then Co
_DELETED = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"{chr(low)}-{chr(high)}" for low, high in ranges)


@cache
def _decomposed(char: str) -> str:
    return f" {unicodedata.normalize('NFD', char)} "


def text_rewrite(tokenizer_config: dict) -> Callable[[str], str] | None:
    """The rewrite for this tokenizer.json (None when its normalizer is not BertNormalizer,
    the one whose differences are known)."""
    normalizer = tokenizer_config.get("normalizer") or {}
    if normalizer.get("type") != "BertNormalizer":
        return None
    lowercase = normalizer.get("lowercase", True)
    strips_accents = lowercase if normalizer.get("strip_accents") is None else normalizer["strip_accents"]
    cjk = normalizer.get("handle_chinese_chars", True)
    replacements: dict[str, Callable[[str], str]] = {}
    classes = []
    if normalizer.get("clean_text", True):
        classes.append(f"(?P<deleted>[{_DELETED}])")
        replacements["deleted"] = lambda _char: ""
    if cjk:
        classes.append(f"(?P<missed>[{_char_class((_CJK_THE_LIBRARY_MISSES,))}])")
        replacements["missed"] = lambda _char: UNKNOWN_LETTER
    if cjk and strips_accents:
        classes.append(f"(?P<compat>[{_char_class(_COMPAT_IDEOGRAPHS)}])")
        replacements["compat"] = _decomposed
    if not classes:
        return None
    pattern = re.compile("|".join(classes))

    def replace(match: re.Match[str]) -> str:
        return replacements[match.lastgroup or ""](match.group())

    def rewrite(text: str) -> str:
        # most texts hold none of these: printable ASCII holds none by construction (every class
        # above is a control or non-ASCII), and the two str checks are C loops that cost a tenth
        # of the pattern's search; anything else one search, no copy
        if text.isascii() and text.isprintable():
            return text
        return pattern.sub(replace, text) if pattern.search(text) else text

    return rewrite
