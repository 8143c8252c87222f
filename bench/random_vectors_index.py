"""First index of a vault as the real model's: its identity and tokenizer, random vectors.

    python bench/random_vectors_index.py VAULT     # VAULT made by `memvault init`

The chunks, lines, keyword rows, cache.db rows and hnswlib graph are the ones the
default int8 model's first index makes (the same tokenizer cuts the same chunks, the
vectors are stored under its identity, 384 dimensions), but each vector is a random
unit vector seeded by the sha256 of its text: at 10,000 scale_bench notes the model
would embed 311,437 texts (chunks and their lines), hours on two shared cores. A daemon
on the vault then runs the real model for what is saved and asked, so its memory is the
real-model daemon's (hnswlib's bytes do not depend on the values); search results for
the bulk are not meaningful (bench/RESULTS.md, "The real-model daemon at 10,000 notes").
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Sequence

import numpy as np

from memvault.api import Vault
from memvault.config import IndexSettings
from memvault.index.embedder import model_id_for
from memvault.index.tokenizer import Tokenizer


class RandomVectors:
    """The configured model's identity and word pieces; random unit vectors."""

    dim = 384

    def __init__(self, settings: IndexSettings) -> None:
        self.model_id = model_id_for(settings)
        self._tokenizer = Tokenizer.for_model(settings.model)
        self.max_tokens = self._tokenizer.max_tokens
        self.texts = 0

    def count_tokens(self, text: str) -> int:
        return self._tokenizer.count(text)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        self.texts += len(texts)
        return out


def main() -> None:
    root = sys.argv[1]
    started = time.perf_counter()
    with Vault.open(root, through_daemon=False) as v:
        embedder = RandomVectors(v.engine.config.index)
    with Vault.open(root, through_daemon=False, embedder=embedder) as v:
        report = v.sync()
    wall = time.perf_counter() - started
    print(json.dumps({"model": embedder.model_id, "wall_s": round(wall), "texts": embedder.texts}))
    print(report.summary())


if __name__ == "__main__":
    main()
