"""The transformer model of the extra `semantic-onnx`, and the setting that chooses a model."""

import json
import shutil

import numpy as np
import pytest

from router.catalog.load import load_catalog
from router.catalog.search import SEMANTIC_MIN_COSINE, SEMANTIC_WEIGHT, search
from router.catalog.tool_text import embedding_text, name_words
from router.paths import SEEDS_DIR
from router.semantic.choice import SETTING, configured_model
from router.semantic.onnx_model import DIM, OnnxModel, default_onnx_model
from router.semantic.static_model import ModelError, default_model
from tests.project import PROJECT_ROOT

REFERENCE = PROJECT_ROOT / "tests" / "golden" / "onnx-model-reference.json"
# int8 weights against MiniLM's float ones (make model's onnx-reference): cosine per text
MIN_COSINE_TO_FLOAT_MODEL = 0.99

pytest.importorskip("onnxruntime", reason="the semantic-onnx extra is not installed")


@pytest.fixture(scope="module")
def model() -> OnnxModel:
    return default_onnx_model()


def test_vectors_are_minilms_own_within_int8_rounding(model):
    reference = json.loads(REFERENCE.read_text())
    ours = model.encode(reference["texts"])
    float_model = np.array(reference["vectors"], dtype=np.float32)
    assert ours.shape == float_model.shape == (len(reference["texts"]), DIM)
    cosines = (ours * float_model).sum(axis=1)
    assert cosines.min() >= MIN_COSINE_TO_FLOAT_MODEL, cosines


def test_a_text_in_a_batch_gets_the_vector_it_gets_alone(model):
    texts = ["git log", "show me the last 5 commits on the main branch of my repository", "add two numbers"]
    batched = model.encode(texts)
    alone = np.stack([model.encode([t])[0] for t in texts])
    assert np.abs(batched - alone).max() < 1e-4
    assert np.linalg.norm(batched, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert model.encode([]).shape == (0, DIM)


def test_identity_is_stable_and_not_the_static_models(model):
    assert model.identity.startswith("onnx:minilm-l6-onnx-int8:b3:")
    assert model.identity == OnnxModel.load(model.onnx_file).identity
    assert model.identity != default_model().identity


def test_a_file_that_is_not_the_published_one_is_refused(model):
    with pytest.raises(ModelError, match="sha256 differs"):
        OnnxModel.load(model.onnx_file, sha256="0" * 64)


def test_the_setting_chooses_the_model_and_refuses_a_misspelt_one(model):
    assert configured_model({}) is default_model()
    assert configured_model({SETTING: "static"}) is default_model()
    assert configured_model({SETTING: " ONNX "}) is model
    assert configured_model({SETTING: "off"}) is None
    with pytest.raises(ModelError, match="expected one of static, onnx, off"):
        configured_model({SETTING: "onxx"})


def calculator_tool(name, description):
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": {}}}


# None shares a word with "add two numbers". MiniLM's cosines with it: get-sum 0.48,
# compute_total 0.34, multiply 0.33, convert_units 0.32, random_integer 0.20, count_words
# 0.12, the rest under 0.1: the two around the model's floor (0.15) tell it from any floor
# outside 0.12-0.19, the static model's included.
CALCULATOR = [
    calculator_tool("get-sum", "Sum of a and b."),
    calculator_tool("multiply", "Product of x and y."),
    calculator_tool("compute_total", "Totals the values of a list."),
    calculator_tool("convert_units", "Converts a quantity between units."),
    calculator_tool("random_integer", "A random integer in a range."),
    calculator_tool("count_words", "Counts the words in a text."),
    calculator_tool("weather_forecast", "Tomorrow's weather for a city."),
    calculator_tool("play_song", "Plays a song on the speaker."),
    calculator_tool("git_log", "Show the commit history."),
]


def test_search_ranks_with_the_onnx_models_own_weight_and_floor(model, conn, tmp_path, monkeypatch):
    monkeypatch.setenv(SETTING, "onnx")
    path = tmp_path / "calculator.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in CALCULATOR))
    load_catalog(conn, seed_dir=None, user_files=[path])
    query = "add two numbers"
    texts = [embedding_text(name_words(t["name"]), t["description"]) for t in CALCULATOR]
    cosine = dict(zip((t["name"] for t in CALCULATOR), model.encode(texts) @ model.encode([query])[0]))
    floor, weight = OnnxModel.semantic_min_cosine, OnnxModel.semantic_weight
    assert floor + 0.03 < cosine["random_integer"] < SEMANTIC_MIN_COSINE
    assert cosine["count_words"] < floor - 0.02
    assert weight != SEMANTIC_WEIGHT

    hits = search(conn, query, explain=True)

    assert {hit.name for hit in hits} == {name for name, c in cosine.items() if c >= floor}
    assert hits[0].name == "get-sum"
    for hit in hits:
        assert hit.explain is not None and hit.explain.bm25 == 0.0
        # int8 vectors and 2-decimal rounding: within 0.015 of the float cosine
        assert hit.explain.semantic == pytest.approx(weight * cosine[hit.name], abs=weight * 0.015)


def test_the_seeded_catalog_answers_users_own_words_with_the_transformer(conn, tmp_path, monkeypatch):
    # what the static model cannot yet (tests/test_search_semantic.py's strict xfail); the two
    # seeds hold the tools the words favour (git_show, godot_stop_project)
    for seed in ("git.json", "godot.json"):
        shutil.copy(SEEDS_DIR / seed, tmp_path / seed)
    monkeypatch.setenv(SETTING, "onnx")
    load_catalog(conn, seed_dir=tmp_path, user_files=[])
    assert search(conn, "show me the last 5 commits")[0].name == "git_log"
    assert search(conn, "run my godot game project")[0].name == "godot_run_project"
