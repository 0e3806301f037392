"""A build step of `make model`: drop the token vectors an English tool catalog cannot use.

MiniLM's WordPiece vocabulary carries thousands of tokens of other scripts (CJK, Cyrillic,
Arabic, Devanagari...) and accented letters that its own normalizer strips before lookup, so
they are never produced. Their rows are most of what the shipped model can lose without a
change to an English text's vector. The trim keeps a token when its text (without WordPiece's
"##" continuation prefix) is made of ASCII, Latin letters the normalizer leaves as they are
(ß, ø, æ), punctuation and symbols, and every special token; it drops the rest from BOTH the vector matrix and
tokenizer.json, renumbering the ids in their old order so row i is still token i. A word
that needs a dropped token becomes [UNK] as a whole (WordPiece's rule), which the model
skips, as it skips any unknown word.

Runs in .venv-model (tokenizers comes with model2vec there), never at run time.
"""

import json
import unicodedata

import numpy as np

CONTINUATION = "##"


def _latin(character: str) -> bool:
    """ASCII, a Latin letter, or punctuation or a symbol of any block (°, €, —: one glued to a
    word would make the whole word unknown): only letters, marks and digits of other scripts go."""
    if character.isascii() or unicodedata.category(character)[0] in "PS":
        return True
    return unicodedata.name(character, "").startswith("LATIN ")


def usable(token: str, normalize=None) -> bool:
    """Whether an English text can produce `token`: its text (without the "##" prefix) is of
    Latin characters, and the normalizer (`normalize`, a function on strings) leaves it as is."""
    text = token.removeprefix(CONTINUATION) or token
    reachable = normalize is None or normalize(text) == text
    return reachable and all(_latin(c) for c in text)


def kept_ids(tokenizer) -> list[int]:
    """The ids of the tokens the trim keeps (every special token, and the usable), ascending."""
    spec = json.loads(tokenizer.to_str())
    special = {added["content"] for added in spec["added_tokens"]}
    normalize = tokenizer.normalizer.normalize_str if tokenizer.normalizer is not None else None
    vocab = spec["model"]["vocab"]
    return sorted(i for token, i in vocab.items() if token in special or usable(token, normalize))


def trimmed_tokenizer(tokenizer, ids: list[int]):
    """tokenizer with only the tokens `ids`, renumbered 0..len(ids)-1 in their order."""
    from tokenizers import Tokenizer

    spec = json.loads(tokenizer.to_str())
    renumber = {old: new for new, old in enumerate(ids)}
    vocab = spec["model"]["vocab"]
    spec["model"]["vocab"] = {token: renumber[old] for token, old in vocab.items() if old in renumber}
    for added in spec["added_tokens"]:
        added["id"] = renumber[added["id"]]
    if spec.get("padding"):
        spec["padding"]["pad_id"] = renumber[spec["padding"]["pad_id"]]
    return Tokenizer.from_str(json.dumps(spec, ensure_ascii=False))


def trimmed(model):
    """A model2vec StaticModel without the rows of tokens an English text never uses."""
    from model2vec import StaticModel

    ids = kept_ids(model.tokenizer)
    return StaticModel(
        vectors=np.ascontiguousarray(model.embedding[ids]),
        tokenizer=trimmed_tokenizer(model.tokenizer, ids),
        config=model.config,
        normalize=model.normalize,
    )
