"""The graph's projection: fewer dimensions for hnswlib, the full vectors kept in the cache.

hnswlib keeps every vector it indexes in float32: 1,536 of the 1,676 bytes a chunk costs
at 384 dimensions (bench/RESULTS.md). A fixed linear projection (the principal
components of the model's vectors, fitted once per model on a corpus that is none of
the dev sets: `bench/fit_projection.py`, Python's own docstrings) gives the graph 192
dimensions; each search takes more candidates from it and ranks them again by their full
vectors from cache.db (index/vectors_projected.py), so the ranking is the full vectors'.

A projection belongs to a model (its id, less the backend suffix: the int8 ONNX model and
PyTorch give the same space) and a dimension; a model without one (the hash embedder, a
model a person configured) keeps the full graph. Its ``ident`` (a digest of its numbers)
is saved with the graph, so a graph built under another projection is rebuilt.
"""

from __future__ import annotations

import functools
import hashlib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BUNDLED = Path(__file__).with_name("graph_projection.npz")
TINY = 1e-6  # a projected vector shorter than this gets a direction of its own (see apply)


@dataclass(frozen=True, eq=False)
class Projection:
    """``x -> (x - mean) @ components.T``: ``dim`` dimensions to ``out`` (float32)."""

    model: str  # the model id it was fitted for, less any "+backend" suffix
    mean: np.ndarray  # (dim,)
    components: np.ndarray  # (out, dim), orthonormal rows

    @property
    def dim(self) -> int:
        return int(self.components.shape[1])

    @property
    def out(self) -> int:
        return int(self.components.shape[0])

    @functools.cached_property
    def ident(self) -> str:
        h = hashlib.sha256(self.mean.astype("<f4").tobytes())
        h.update(self.components.astype("<f4").tobytes())
        return f"pca{self.out}-{h.hexdigest()[:12]}"

    @functools.cached_property
    def _mean64(self) -> np.ndarray:
        return self.mean.astype(np.float64)

    @functools.cached_property
    def _components64(self) -> np.ndarray:
        return self.components.astype(np.float64)

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """The rows projected, C-contiguous float32. A row the projection takes to (almost)
        nothing (the mean itself) would be a zero vector, which hnswlib's cosine cannot
        take: it gets a tiny first coordinate instead (found only by its full vector)."""
        rows = np.asarray(vectors, dtype=np.float64).reshape(-1, self.dim)
        # in float64: a row projects to the same float32 bits in any batch (a twin is
        # found by its bits: index/vector_twins.py), whatever BLAS's blocking
        out = ((rows - self._mean64) @ self._components64.T).astype(np.float32)
        short = np.linalg.norm(out, axis=1) < TINY
        if short.any():
            out[short, 0] = TINY * 2
        return np.ascontiguousarray(out, dtype=np.float32)


def base_model(model_id: str) -> str:
    """A model id without its backend suffix ("...@rev+onnx-int8-v1" -> "...@rev")."""
    return model_id.split("+", 1)[0]


@functools.lru_cache(maxsize=4)
def _load(path: Path) -> Projection | None:
    """The file's projection; None when it is missing or not one (damaged in an
    install: the full graph then, as for a model without one)."""
    try:
        # the file opened here: numpy's own open leaks it when the zip is damaged
        with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as data:
            found = Projection(
                model=str(data["model"]),
                mean=np.asarray(data["mean"], dtype=np.float32),
                components=np.asarray(data["components"], dtype=np.float32),
            )
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile):
        return None
    c, m = found.components, found.mean
    if (
        c.ndim != 2
        or m.shape != (c.shape[1],)
        or not (np.isfinite(c).all() and np.isfinite(m).all())
    ):
        return None
    return found


def projection_for(model_id: str, dim: int, path: Path = BUNDLED) -> Projection | None:
    """The projection fitted for ``model_id`` at ``dim`` dimensions, or None."""
    found = _load(path)
    if found is None or found.model != base_model(model_id) or found.dim != dim:
        return None
    return found


def fit(vectors: np.ndarray, out: int, model_id: str) -> Projection:
    """The first ``out`` principal components of the rows (unit vectors)."""
    rows = np.asarray(vectors, dtype=np.float64)
    mean = rows.mean(axis=0)
    _, _, vt = np.linalg.svd(rows - mean, full_matrices=False)
    return Projection(base_model(model_id), mean.astype(np.float32), vt[:out].astype(np.float32))


def save(projection: Projection, path: Path) -> None:
    np.savez(
        path,
        model=np.array(projection.model),
        mean=projection.mean.astype(np.float32),
        components=projection.components.astype(np.float32),
    )
