"""A static embedding model (model2vec format): a vector per token, a text is their mean.

The files (router/semantic/model/, built by `make model`, see build_model.py):
- model.safetensors: `embeddings`, one row per token id (int8, float16 or float32; an int8
  model's single scale is dropped, as model2vec does: the mean is L2-normalised anyway),
  read with static-embed-runner's numpy-only reader;
- tokenizer.json: the tokenizer, run by static-embed-runner's pure-Python LiteTokenizer
  (numpy is the package's only dependency: no hub client, no native tokenizer), with the
  rewrite of lite_compat.py that makes its ids those of the `tokenizers` library;
- config.json: model2vec's settings; `max_length` (tokens) bounds a text.

A text's vector is the mean of its tokens' rows, L2-normalised; a text with no known token
gets the zero vector (cosine 0 with everything), never NaN. This is model2vec's own
`StaticModel.encode` without its hub client and torch: tests/test_static_model.py holds it
to vectors that model2vec computed.
"""

import json
import logging
import math
import struct
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from static_embed_runner.hf_tokenizer_lite import LiteTokenizer, UnsupportedTokenizerError
from static_embed_runner.safetensors_lite import load_safetensors

from router.hashing import b3_hex_of_chunks
from router.semantic.lite_compat import text_rewrite

log = logging.getLogger(__name__)

MODEL_DIR = Path(__file__).resolve().parent / "model"
# The files whose bytes make the model: its identity hashes exactly these, in this order.
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")
PROVENANCE_FILE = "PROVENANCE.json"
EMBEDDINGS_KEY = "embeddings"
# model2vec's default when a config names no max_length
DEFAULT_MAX_LENGTH = 512
FLOAT_DTYPES = (np.float16, np.float32, np.float64)
# LiteTokenizer remembers every word it has split (up to a million): bounded here so a
# long-running router that embedded a large catalog does not keep ~100 MB of words. A search's
# words still hit the cache (queries repeat words); past the bound it starts over.
WORD_CACHE_MAX = 50_000
WORD_CACHE_MAX_CHARS = 64  # longer words are rare, each its own entry: not kept
# what a malformed file makes the readers raise (they check nothing themselves)
_MALFORMED = (struct.error, json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError)


class ModelError(ValueError):
    """A model directory that cannot be used: says which file and why."""


class StaticModel:
    def __init__(
        self,
        name: str,
        embeddings: np.ndarray,
        tokenizer: LiteTokenizer,
        tokenizer_config: dict,
        config: dict,
        identity: str,
    ):
        self.name = name
        self.identity = identity
        self.dim = int(embeddings.shape[1])
        # float32 once at load: the mean of int8 rows must not overflow, and a query is a
        # handful of rows, so the 4× memory (≈30 MB at 29.5k × 256) buys nothing but safety
        self._vectors = embeddings.astype(np.float32)
        self._tokenizer = tokenizer
        self._rewrite: Callable[[str], str] = text_rewrite(tokenizer_config) or str
        # cut at max_length tokens before unknown tokens are dropped, as model2vec does
        self._max_length = int(config.get("max_length") or DEFAULT_MAX_LENGTH)
        self._unk_id = _unknown_id(tokenizer_config)
        # word → its ids, above LiteTokenizer (which checks every character of a text for an
        # added token before its own word cache): only where a text's ids are its words' ids
        # one after the other (see _words_are_independent); bounded like LiteTokenizer's
        self._words: dict[str, list[int]] | None = {} if _words_are_independent(tokenizer_config) else None

    @classmethod
    def load(cls, path: Path | str) -> "StaticModel":
        directory = Path(path)
        missing = [name for name in MODEL_FILES if not (directory / name).is_file()]
        if missing:
            raise ModelError(f"{directory}: not a model2vec model, missing {', '.join(missing)}")
        embeddings = _read_embeddings(directory / "model.safetensors")
        tokenizer_config = _read_json(directory / "tokenizer.json")
        config = _read_json(directory / "config.json")
        try:
            token_ids = _token_ids(tokenizer_config)
            tokenizer = LiteTokenizer(tokenizer_config)  # refuses what it cannot run, at load
        except UnsupportedTokenizerError as exc:
            raise ModelError(f"{directory / 'tokenizer.json'}: unsupported: {exc}") from exc
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelError(f"{directory / 'tokenizer.json'}: unreadable: {exc!r}") from exc
        if token_ids != set(range(embeddings.shape[0])):
            raise ModelError(
                f"{directory}: tokenizer has {len(token_ids)} tokens (ids up to {max(token_ids, default=-1)}), "
                f"embeddings {embeddings.shape[0]} rows"
            )
        name = model_name(directory)
        return cls(name, embeddings, tokenizer, tokenizer_config, config, model_identity(directory, name))

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids, unknown tokens dropped (they carry no meaning), truncated."""
        out = []
        for text in texts:
            ids = self._text_ids(self._rewrite(text))[: self._max_length]
            # `in` is a C scan: most texts have no unknown token to drop, so no list is rebuilt
            out.append([i for i in ids if i != self._unk_id] if self._unk_id in ids else ids)
        for words in (getattr(self._tokenizer, "_word_cache", None), self._words):
            if words is not None and len(words) > WORD_CACHE_MAX:
                words.clear()
        return out

    def _text_ids(self, text: str) -> list[int]:
        words = self._words
        if words is None:
            return self._tokenizer.encode(text)
        ids: list[int] = []
        for word in text.split():
            got = words.get(word)
            if got is None:
                got = self._tokenizer.encode(word)
                if len(word) <= WORD_CACHE_MAX_CHARS:
                    words[word] = got
            ids += got
        return ids

    def encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised, or zero for a text with no known token."""
        token_ids = self.token_ids(texts)
        if len(texts) == 1 and token_ids[0]:
            return self._one(token_ids[0])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, ids in enumerate(token_ids):
            if ids:
                # what .mean(axis=0) computes (the float32 sum, then / count), without its
                # checks and temporaries: a query is a dozen rows, so those were most of it
                total = out[row]
                np.add.reduce(self._vectors.take(ids, axis=0), axis=0, out=total)
                total /= len(ids)
        return unit_rows(out)

    def _one(self, ids: list[int]) -> np.ndarray:
        """encode's (1, dim) row for one text's ids: the same float32 operations in fewer numpy
        calls (a search encodes one query; inside a search each call costs microseconds)."""
        total = np.add.reduce(self._vectors.take(ids, axis=0), axis=0)
        total /= len(ids)
        # the float32 sum of squares as unit_rows takes it; math.sqrt of it rounded to float32
        # is np.sqrt's float32 result (a double holds a square root exactly enough)
        norm = math.sqrt(float(np.add.reduce(total * total)))
        if norm > 0:
            total /= norm
        return total.reshape(1, -1)


def unit_rows(rows: np.ndarray) -> np.ndarray:
    """`rows` (float32, n × dim) each scaled to length 1 in place; a zero row stays zero."""
    # what np.linalg.norm(rows, axis=1) computes for a real array, without its dispatch
    norms = np.sqrt(np.add.reduce(rows * rows, axis=1, keepdims=True))
    np.divide(rows, norms, out=rows, where=norms > 0)
    return rows


def _read_embeddings(path: Path) -> np.ndarray:
    try:
        tensors = load_safetensors(str(path))
    except _MALFORMED as exc:  # a header that is not JSON, a dtype or shape that does not fit
        raise ModelError(f"{path}: unreadable: {exc!r}") from exc
    embeddings = tensors.get(EMBEDDINGS_KEY)
    if embeddings is None or embeddings.ndim != 2:
        raise ModelError(f"{path}: no 2-d tensor '{EMBEDDINGS_KEY}'")
    if not (embeddings.dtype == np.int8 or embeddings.dtype in FLOAT_DTYPES):
        raise ModelError(f"{path}: unsupported dtype {embeddings.dtype}")
    if set(tensors) - {EMBEDDINGS_KEY}:
        # vocabulary-quantised models (token mapping, per-token weights) are not supported
        raise ModelError(f"{path}: unexpected tensors {sorted(set(tensors))}")
    return embeddings


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: not JSON: {exc}") from exc


def _token_ids(tokenizer_config: dict) -> set[int]:
    """Every id the tokenizer can produce: its model's vocabulary and its added tokens."""
    model = tokenizer_config["model"]
    vocab = model["vocab"]
    # WordPiece and BPE map piece → id; Unigram lists [piece, score] in id order
    ids = set(vocab.values()) if isinstance(vocab, dict) else set(range(len(vocab)))
    return ids | {token["id"] for token in tokenizer_config.get("added_tokens") or []}


def _words_are_independent(tokenizer_config: dict) -> bool:
    """Whether a text's ids are its whitespace-separated words' ids one after the other: with
    BertNormalizer (character by character; lite_compat's rewrite has already deleted the
    controls that Python splits at and the normalizer deletes) and BertPreTokenizer (which
    splits at whitespace first), when no added token holds whitespace (so none spans two words)."""
    normalizer = tokenizer_config.get("normalizer") or {}
    pre_tokenizer = tokenizer_config.get("pre_tokenizer") or {}
    added = [token.get("content", "") for token in tokenizer_config.get("added_tokens") or []]
    return (
        normalizer.get("type") == "BertNormalizer"
        and normalizer.get("clean_text", True)
        and text_rewrite(tokenizer_config) is not None
        and pre_tokenizer.get("type") == "BertPreTokenizer"
        and all(content and content.split() == [content] for content in added)
    )


def _unknown_id(tokenizer_config: dict) -> int | None:
    model = tokenizer_config["model"]
    if "unk_id" in model:  # Unigram
        return model["unk_id"]
    unk = model.get("unk_token")
    return model["vocab"].get(unk) if unk else None


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
