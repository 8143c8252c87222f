"""The hash embedder: deterministic, fast, no model — for tests, and as a documented
stand-in (``index.model = "hash"`` or ``"hash-<dim>"``)."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import accumulate, chain

import numpy as np

_TABLE_ROWS = 8192  # word vectors kept between batches
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
        self._row_of: dict[str, int] = {}  # word -> its row of _table
        self._table = np.empty((0, dim))  # a word's features summed, a row a word
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # the batch's words as rows of one table, each text as the run of its words'
        # rows: one sum per text in numpy, not one per word in Python. Every feature
        # is +-1 or +-0.5, so the float64 sums are exact in any order: the same
        # vectors as word by word (test_embedder)
        per_text = [_WORD.findall(text.lower()) for text in texts]
        words, table = self._rows(chain.from_iterable(per_text))
        ends = list(accumulate(map(len, per_text)))
        if not words:
            out[:, _bucket("", self.dim)[0]] = 1.0
            return out
        starts = np.array([0, *ends[:-1]])
        worded = starts < np.array(ends)
        sums = np.add.reduceat(table[words], starts[worded], axis=0)
        norms = np.linalg.norm(sums, axis=1)
        blank = ~worded
        blank[worded] = norms == 0.0  # features that cancel out: as if no word
        out[worded] = sums / np.where(norms == 0.0, 1.0, norms)[:, None]
        out[blank] = 0.0
        out[blank, _bucket("", self.dim)[0]] = 1.0
        return out

    def _rows(self, words: Iterable[str]) -> tuple[list[int], np.ndarray]:
        """Each word's row in the table of word vectors, and the table; words it lacks
        are added. Past ``_TABLE_ROWS`` rows a new table starts (bounded: 4 MB at 64
        dimensions). Rows are only appended to a table, so a caller's table stays true
        while another thread adds to it (a query beside the vector lane)."""
        words = list(words)
        with self._lock:
            unique = dict.fromkeys(words)
            new = [w for w in unique if w not in self._row_of]
            if len(self._row_of) + len(new) > len(self._table):
                self._row_of, new = {}, list(unique)
                self._table = np.empty((max(_TABLE_ROWS, len(new)), self.dim))
            first = len(self._row_of)
            for row, word in enumerate(new, first):
                self._table[row] = _word_vector(word, self.dim)
                self._row_of[word] = row
            return list(map(self._row_of.__getitem__, words)), self._table

    def count_tokens(self, text: str) -> int:
        return len(_PIECE.findall(text))


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
