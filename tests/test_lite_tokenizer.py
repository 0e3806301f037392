"""The static model's pure-Python tokenizer (static-embed-runner's LiteTokenizer plus the
rewrite of router/semantic/lite_compat.py) gives the token ids of the `tokenizers` library,
which model2vec used for the reference vectors: on the texts where LiteTokenizer alone
differs, on every code point of the ranges concerned, and on the committed catalogs and
queries. `tokenizers` is the reference here only (the test extra); the router never imports it."""

import json

import pytest
from tokenizers import Tokenizer

from router.catalog.tool_text import embedding_text, name_words
from router.semantic.lite_compat import text_rewrite
from router.semantic.static_model import MODEL_DIR, default_model
from tests.project import PROJECT_ROOT

# One text per difference lite_compat.py fixes, and their neighbours that must stay as they are.
EDGE_TEXTS = [
    "form\x0cfeed and vertical\x0btab and next\x85line inside words",
    "unit\x1fseparator, record\x1e, group\x1d, file\x1c",
    "tab\tnew\nline\rreturn stay spaces",
    "nul\x00byte and delete\x7fchar and c1\x9bcontrol",
    "powerline \ue0b0 glyph and icon\uf07bfolder (private use)",
    "plane fifteen \U000f0001x and sixteen\U00100001y",
    "Korean hanja 車\uf902 and \uf90a金 compatibility ideographs, \U0002f800 too",
    "CJK extension E a\U0002b820b and \U0002b91f alone, extension F \U0002b920c",
    "café résumé naïve — ÜBER straße 东京 日本語 ÅÄÖ",
    "[UNK] and [PAD] literally, and a[PAD]b",
    "zero\u200bwidth space, soft\u00adhyphen, BOM\ufeff, nbsp\u00a0here",
    "😀 emoji 👍🏽 and ☃ snowman",
    "",
    "   ",
]
# (first, last) code point of each range a rewrite applies to, and the controls around them
SWEPT_RANGES = [(0x00, 0xA0), (0xE000, 0xF8FF), (0xF900, 0xFAFF), (0x2B800, 0x2B93F), (0x2F800, 0x2FA1F)]


@pytest.fixture(scope="module")
def model():
    return default_model()


@pytest.fixture(scope="module")
def reference():
    tokenizer = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    tokenizer.no_padding()
    unk = tokenizer.token_to_id("[UNK]")

    def ids(texts: list[str]) -> list[list[int]]:
        # what StaticModel.token_ids promises: truncated (tokenizer.json's 512), unknown dropped
        return [
            [i for i in e.ids if i != unk] for e in tokenizer.encode_batch(texts, add_special_tokens=False)
        ]

    return ids


def differing(model, reference, texts: list[str]) -> list[str]:
    return [
        text for text, ours, theirs in zip(texts, model.token_ids(texts), reference(texts)) if ours != theirs
    ]


def test_the_texts_where_lite_tokenizer_alone_differs_get_the_reference_ids(model, reference):
    assert differing(model, reference, EDGE_TEXTS) == []


def test_without_the_rewrite_those_texts_would_differ(model, reference):
    """The rewrite is what makes them agree (so the test above tests it). Not for the
    compatibility ideographs (EDGE_TEXTS[6]): the shipped model's trimmed vocabulary holds no
    CJK ideograph, so they end as [UNK] with or without their decomposition (the sweep below
    still holds the rewrite to the reference on every one of them)."""
    texts = EDGE_TEXTS[:2] + EDGE_TEXTS[4:6] + EDGE_TEXTS[7:8]
    unk = model._unk_id
    plain = [[i for i in model._tokenizer.encode(text) if i != unk] for text in texts]
    assert all(ours != theirs for ours, theirs in zip(plain, reference(texts)))


@pytest.mark.parametrize(("first", "last"), SWEPT_RANGES)
def test_every_code_point_of_the_rewritten_ranges_gets_the_reference_ids(model, reference, first, last):
    texts = [
        f"{template.format(chr(c))}" for c in range(first, last + 1) for template in ("a{}b", "x {} y", "{}")
    ]
    assert differing(model, reference, texts) == []


def test_the_rewrite_leaves_ordinary_text_alone():
    rewrite = text_rewrite(json.loads((MODEL_DIR / "tokenizer.json").read_text()))
    assert rewrite is not None
    text = "café résumé — list the files 东京 in a folder\twith tabs\n"
    assert rewrite(text) is text


def test_the_committed_catalogs_and_queries_get_the_reference_ids(model, reference):
    tools = [
        t
        for path in sorted((PROJECT_ROOT / "seeds").glob("*.json"))
        for t in json.loads(path.read_text())["tools"]
    ]
    bfcl = PROJECT_ROOT / "bench" / "data" / "bfcl.catalog.jsonl"
    tools += [json.loads(line) for line in bfcl.read_text().splitlines()]
    texts = [embedding_text(name_words(t["name"]), t.get("description", "")) for t in tools]
    for queries in ("seeded", "everyday", "bfcl"):
        path = PROJECT_ROOT / "bench" / "queries" / f"{queries}.jsonl"
        texts += [json.loads(line)["query"] for line in path.read_text().splitlines()]
    assert len(texts) > 4_000
    assert differing(model, reference, texts) == []
