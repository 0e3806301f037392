"""The static model's training corpus (router/semantic/corpus_sources.py, build_model.py):
no evaluation text in it, texts of the corpus's shape, and a features cache per corpus."""

import lzma

import pytest

from router.semantic import build_model, corpus_sources
from router.semantic.corpus_sources import kept


def corpus_texts(path) -> list[str]:
    return lzma.decompress(path.read_bytes()).decode().splitlines()


@pytest.mark.parametrize("path", build_model.CORPUS_FILES, ids=lambda p: p.name)
def test_no_corpus_text_is_an_evaluation_text_and_each_is_there_once(path):
    """bench/public's sets count when present (they are fetched, not committed)."""
    texts = corpus_texts(path)
    evaluation = corpus_sources.evaluation_texts()
    assert texts and evaluation
    keys = [" ".join(t.split()).lower() for t in texts]
    assert not set(keys) & evaluation
    assert len(set(keys)) == len(keys)


def test_the_added_corpus_files_hold_texts_of_the_corpus_shape():
    low, high = corpus_sources.TEXT_CHARS
    for path in (build_model.TOOL_TEXTS, build_model.REQUESTS):
        for text in corpus_texts(path):
            assert low <= len(text) <= high and text.isascii() and text == " ".join(text.split())


def test_kept_folds_whitespace_drops_repeats_evaluation_texts_and_off_shape_texts():
    seen = {"list the files in a folder"}
    texts = [
        "List the  files in a folder",  # an evaluation text, other case and spacing
        "book a table for two tonight",
        "Book a table for two tonight",  # a repeat
        "too short",
        "café near the station, please",  # not ASCII
        "get   the weather\nfor Paris",
    ]
    assert kept(texts, seen) == ["book a table for two tonight", "get the weather for Paris"]


def test_an_operation_becomes_a_tool_text_its_id_in_words_then_its_first_sentence():
    operation = {"operationId": "listReposForUser", "description": "Lists <b>public</b> repos. Paged."}
    assert list(corpus_sources._operation_text(operation)) == ["list repos for user: Lists public repos."]
    assert list(corpus_sources._operation_text({"summary": "Get a [board](http://x)."})) == ["Get a board."]
    assert list(corpus_sources._operation_text({"operationId": "", "summary": "Get a list."})) == [
        "Get a list."
    ]
    assert list(corpus_sources._operation_text({"operationId": "ping"})) == []


def test_the_features_cache_is_kept_per_corpus(tmp_path, monkeypatch):
    """Shards are named by position: another corpus's shard-000 must never be read as this one's."""
    first = build_model.features_root(tmp_path)
    changed = tmp_path / "model-requests.txt.xz"
    changed.write_bytes(lzma.compress(b"one more request to make\n"))
    monkeypatch.setattr(build_model, "CORPUS_FILES", (build_model.CORPUS, build_model.TOOL_TEXTS, changed))
    assert build_model.features_root(tmp_path) != first
    assert build_model.features_root(tmp_path).parent == first.parent == tmp_path
