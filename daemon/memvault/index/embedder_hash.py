"""The hash embedder: deterministic, fast, no model — for tests, and as a documented
stand-in (``index.model = "hash"`` or ``"hash-<dim>"``)."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

_WORD = re.compile(r"\w+")
_PIECE = re.compile(r"\w+|[^\w\s]")


@lru_cache(maxsize=1 << 16)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    # blake2b, not hash(): vectors must not change with PYTHONHASHSEED.
    h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return h % dim, 1.0 if (h >> 40) & 1 else -1.0


class HashEmbedder:
    """Deterministic, fast, no model: for unit tests and as a documented stand-in.

    Features: lower-cased words (weight 1) and their character trigrams
    (weight 0.5), hashed into ``dim`` signed buckets; rows L2-normalized.
    Texts sharing words or word fragments get similar vectors. A text with no
    word at all gets one fixed vector, so every row stays a unit vector.
    ``count_tokens`` counts words and punctuation marks.
    """

    def __init__(self, dim: int = 64, max_tokens: int = 254) -> None:
        if dim < 2 or max_tokens < 1:
            raise ValueError("dim must be >= 2 and max_tokens >= 1")
        self.dim = dim
        self.max_tokens = max_tokens
        self.model_id = f"hash-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._vector(text)
        return out

    def count_tokens(self, text: str) -> int:
        return len(_PIECE.findall(text))

    def _vector(self, text: str) -> np.ndarray:
        # a word's features summed once (cached), then each distinct word added
        # times its count: the same vector as feature by feature (sums of +-1 and
        # +-0.5 are exact in any order), a tenth of the time
        v = np.zeros(self.dim, dtype=np.float64)
        for word, count in Counter(_WORD.findall(text.lower())).items():
            v += count * _word_vector(word, self.dim)
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            v[_bucket("", self.dim)[0]] = 1.0
            norm = 1.0
        return (v / norm).astype(np.float32)


@lru_cache(maxsize=4096)
def _word_vector(word: str, dim: int) -> np.ndarray:
    """A word's features: the word (weight 1), its character trigrams (0.5 each)."""
    v = np.zeros(dim, dtype=np.float64)
    i, sign = _bucket("w:" + word, dim)
    v[i] += sign
    padded = f"<{word}>"
    for j in range(len(padded) - 2):
        i, sign = _bucket("t:" + padded[j : j + 3], dim)
        v[i] += 0.5 * sign
    v.setflags(write=False)
    return v


_HASH_MODEL = re.compile(r"hash(?:-(\d+))?")


def hash_model(model: str) -> HashEmbedder | None:
    """The hash embedder ``model`` names (``hash``, ``hash-<dim>``), or None."""
    m = _HASH_MODEL.fullmatch(model)
    return HashEmbedder(int(m.group(1) or 64)) if m else None
