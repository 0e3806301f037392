"""Whether a word is a known English word: the whole words of the shipped static model's
vocabulary (router/semantic/model/tokenizer.json, a BERT WordPiece vocabulary of about 28,000
tokens), read once on first use.

Request intent (router/catalog/request_intent.py) reads a misspelt opening ("wich branch am I
on") as the word it nearly is, but only when the word is not a word in its own right: "book a
flight" is not a typo of "look".
"""

import json
from functools import cache
from pathlib import Path

# the static model's directory (router/semantic/static_model.py MODEL_DIR), named here so that
# importing request intent does not import the model's numpy
VOCABULARY_FILE = Path(__file__).resolve().parent.parent / "semantic" / "model" / "tokenizer.json"
# WordPiece marks the pieces that continue a word; they are not words
CONTINUATION_PREFIX = "##"


@cache
def english_words() -> frozenset[str]:
    """The vocabulary's whole alphabetic words (empty when the file cannot be read)."""
    try:
        vocabulary = json.loads(VOCABULARY_FILE.read_text(encoding="utf-8"))["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        return frozenset()
    return frozenset(
        token for token in vocabulary if not token.startswith(CONTINUATION_PREFIX) and token.isalpha()
    )


def may_be_a_word(word: str) -> bool:
    """Whether `word` is an English word, or may be: without the vocabulary nothing is taken
    for a typo."""
    words = english_words()
    return not words or word in words
