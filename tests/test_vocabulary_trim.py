"""The shipped model's vocabulary trim (router/semantic/vocabulary_trim.py, a `make model`
step): no token an English text cannot produce, every token kept in tokenizer.json and the
vector rows alike, and an English text still tokenizes into the words it is made of."""

import json
import unicodedata

import pytest

from router.semantic.static_model import MODEL_DIR, StaticModel
from router.semantic.vocabulary_trim import usable

SPEC = json.loads((MODEL_DIR / "tokenizer.json").read_text())
VOCAB = SPEC["model"]["vocab"]
SPECIAL = {added["content"] for added in SPEC["added_tokens"]}


def bert_normalize(text: str) -> str:
    """What the shipped tokenizer's BertNormalizer does to a token's text: lower case, accents
    (combining marks after NFD) stripped."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn")


@pytest.mark.parametrize(
    ("token", "kept"),
    [
        ("commit", True),
        ("##ing", True),
        ("##ß", True),  # a Latin letter the normalizer keeps
        ("°", True),  # a symbol: glued to a word ("25°c") it must not make the word unknown
        ("—", True),
        ("文", False),
        ("##ки", False),
        ("é", False),  # the normalizer strips the accent first: never looked up
        ("##", True),  # the prefix alone is a token's whole text
    ],
)
def test_a_token_is_usable_when_an_english_text_can_produce_it(token, kept):
    assert usable(token, bert_normalize) is kept


def test_the_shipped_vocabulary_holds_only_usable_tokens_and_its_special_ones():
    assert {"[PAD]", "[UNK]"} <= SPECIAL <= set(VOCAB)
    unusable = [t for t in VOCAB if t not in SPECIAL and not usable(t, bert_normalize)]
    assert unusable == []
    # renumbered without gaps, so row i of the vectors is token i
    assert sorted(VOCAB.values()) == list(range(len(VOCAB)))
    assert all(VOCAB[added["content"]] == added["id"] for added in SPEC["added_tokens"])


def test_the_trimmed_model_still_reads_english_and_skips_other_scripts():
    model = StaticModel.load(MODEL_DIR)
    assert model.encode(["list the files in a folder"])[0].any()
    # a word of another script is unknown as a whole, like any unknown word: zero vector
    assert not model.encode(["读取文件"])[0].any()
    english, mixed = model.encode(["read a file", "read a file 读取文件"])
    assert float(english @ mixed) == pytest.approx(1.0, abs=1e-5)
