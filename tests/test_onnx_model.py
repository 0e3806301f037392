"""The transformer model of the extra `semantic-onnx`, and the setting that chooses a model."""

import json

import numpy as np
import pytest

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
