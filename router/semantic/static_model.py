"""A static embedding model (model2vec format): a vector per token, a text is their mean.

The files (router/semantic/model/, built by `make model`, see build_model.py):
- model.safetensors: `embeddings`, one row per token id (int8, float16 or float32; an int8
  model's single scale is dropped, as model2vec does: the mean is L2-normalised anyway);
- tokenizer.json: the tokenizer, read by the maintained `tokenizers` library (never a hub);
- config.json: model2vec's settings; `max_length` (tokens) bounds a text.

A text's vector is the mean of its tokens' rows, L2-normalised; a text with no known token
gets the zero vector (cosine 0 with everything), never NaN. This is model2vec's own
`StaticModel.encode` without its hub client and torch: tests/test_static_model.py holds it
to vectors that model2vec computed.
"""

import json
import logging
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from router.hashing import b3_hex_of_chunks

log = logging.getLogger(__name__)

MODEL_DIR = Path(__file__).resolve().parent / "model"
# The files whose bytes make the model: its identity hashes exactly these, in this order.
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")
PROVENANCE_FILE = "PROVENANCE.json"
EMBEDDINGS_KEY = "embeddings"
# model2vec's default when a config names no max_length
DEFAULT_MAX_LENGTH = 512
FLOAT_DTYPES = (np.float16, np.float32, np.float64)


class ModelError(ValueError):
    """A model directory that cannot be used: says which file and why."""


class StaticModel:
    def __init__(self, name: str, embeddings: np.ndarray, tokenizer: Tokenizer, config: dict, identity: str):
        self.name = name
        self.identity = identity
        self.dim = int(embeddings.shape[1])
        # float32 once at load: the mean of int8 rows must not overflow, and a query is a
        # handful of rows, so the 4× memory (≈30 MB at 29.5k × 256) buys nothing but safety
        self._vectors = embeddings.astype(np.float32)
        self._tokenizer = tokenizer
        self._tokenizer.no_padding()
        # cut at max_length tokens before unknown tokens are dropped, as model2vec does
        self._tokenizer.enable_truncation(config.get("max_length") or DEFAULT_MAX_LENGTH)
        self._unk_id = _unknown_id(tokenizer)

    @classmethod
    def load(cls, path: Path | str) -> "StaticModel":
        directory = Path(path)
        missing = [name for name in MODEL_FILES if not (directory / name).is_file()]
        if missing:
            raise ModelError(f"{directory}: not a model2vec model, missing {', '.join(missing)}")
        try:
            tensors = load_file(str(directory / "model.safetensors"))
        except Exception as exc:  # safetensors raises its own error types for corrupt files
            raise ModelError(f"{directory / 'model.safetensors'}: unreadable: {exc}") from exc
        embeddings = tensors.get(EMBEDDINGS_KEY)
        if embeddings is None or embeddings.ndim != 2:
            raise ModelError(f"{directory / 'model.safetensors'}: no 2-d tensor '{EMBEDDINGS_KEY}'")
        if not (embeddings.dtype == np.int8 or embeddings.dtype in FLOAT_DTYPES):
            raise ModelError(f"{directory / 'model.safetensors'}: unsupported dtype {embeddings.dtype}")
        if set(tensors) - {EMBEDDINGS_KEY}:
            # vocabulary-quantised models (token mapping, per-token weights) are not supported
            raise ModelError(f"{directory / 'model.safetensors'}: unexpected tensors {sorted(set(tensors))}")
        try:
            tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        except Exception as exc:  # tokenizers raises a bare Exception for a bad file
            raise ModelError(f"{directory / 'tokenizer.json'}: unreadable: {exc}") from exc
        try:
            config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ModelError(f"{directory / 'config.json'}: not JSON: {exc}") from exc
        if tokenizer.get_vocab_size() != embeddings.shape[0]:
            raise ModelError(
                f"{directory}: tokenizer has {tokenizer.get_vocab_size()} tokens, "
                f"embeddings {embeddings.shape[0]} rows"
            )
        name = model_name(directory)
        return cls(name, embeddings, tokenizer, config, model_identity(directory, name))

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids, unknown tokens dropped (they carry no meaning), truncated."""
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [[i for i in e.ids if i != self._unk_id] for e in encodings]

    def encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised, or zero for a text with no known token."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, ids in enumerate(self.token_ids(texts)):
            if ids:
                out[row] = self._vectors[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def _unknown_id(tokenizer: Tokenizer) -> int | None:
    # the tokenizer model's own attribute (WordPiece and BPE carry one), not a
    # round trip of the whole tokenizer through JSON (27 ms of every CLI search's start)
    unk = getattr(tokenizer.model, "unk_token", None)
    return tokenizer.token_to_id(unk) if unk else None


def model_name(directory: Path) -> str:
    """The name PROVENANCE.json gives the model (what the build made, e.g.
    'minilm-l6-distill-256-int8'), else the directory's name."""
    provenance = directory / PROVENANCE_FILE
    if provenance.is_file():
        try:
            name = json.loads(provenance.read_text(encoding="utf-8")).get("name")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ModelError(f"{provenance}: not JSON: {exc}") from exc
        if isinstance(name, str) and name:
            return name
    return directory.name


def model_identity(directory: Path, name: str) -> str:
    """static:<name>:b3:<hex> of the model files' bytes: two models are the same exactly when
    their files are (vectors stored under one identity are that model's vectors)."""

    def chunks() -> Iterator[bytes]:
        for file_name in MODEL_FILES:
            data = (directory / file_name).read_bytes()
            # length-prefixed, so moving bytes from one file to the next changes the hash
            yield len(data).to_bytes(8, "big")
            yield data

    return f"static:{name}:{b3_hex_of_chunks(chunks())}"


def load_if_present(directory: Path) -> StaticModel | None:
    """The model in directory; None (and a log line saying why) when it holds none of the
    model's files, e.g. a source tree where `make model` has not run. A model with some files
    missing or broken raises ModelError: damage must not silently turn semantic search off."""
    if not any((directory / name).is_file() for name in MODEL_FILES):
        log.warning("semantic search off: no model in %s (no %s)", directory, ", ".join(MODEL_FILES))
        return None
    return StaticModel.load(directory)


@cache
def default_model() -> StaticModel | None:
    """The shipped model (router/semantic/model/), loaded once per process."""
    return load_if_present(MODEL_DIR)
