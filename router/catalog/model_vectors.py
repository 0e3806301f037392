"""What the catalog needs of a semantic model, and the form its vectors are stored in.

Vectors are stored as int8 with one scale per vector: a quarter of float32, and a cosine
within about 0.01 of the float one. Tool vectors (router/catalog/embeddings.py), example
vectors (router/catalog/example_vectors.py) and their grouping (router/catalog/vector_groups.py)
all go through quantize and dequantized here.
"""

from collections.abc import Sequence
from typing import Protocol

import numpy as np

# The int8 range a component is scaled into (symmetric: -127..127).
INT8_MAX = 127


class EmbeddingModel(Protocol):
    """What the catalog needs of a model (router/semantic): a stable identity of its files,
    its dimension, and L2-normalised float32 vectors, one row per text."""

    identity: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray: ...


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float32 (n, dim) → int8 (n, dim) and each row's scale (vector ≈ int8 × scale)."""
    peak = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, np.float32)
    scales = (peak / INT8_MAX).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0)[:, None]
    return np.rint(vectors / safe).clip(-INT8_MAX, INT8_MAX).astype(np.int8), scales


def dequantized(scales: Sequence[float], vectors: Sequence[bytes]) -> np.ndarray:
    """float32 (n, dim) from stored int8 vectors and their scales."""
    packed = np.frombuffer(b"".join(vectors), np.int8).reshape(len(vectors), -1)
    return packed.astype(np.float32) * np.array(scales, np.float32)[:, None]
