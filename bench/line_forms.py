"""Recall with line vectors kept in a smaller form: what a lossy line codec would cost.

Line vectors (``index.line_vectors``) are most of a short-note ``.memvault/``: 3.3 a
chunk, 388 bytes each as int8. This bench runs bench/locomo_eval.py or
bench/note_recall.py with every line vector the search reads replaced by what a
smaller stored form gives back, the chunk vectors untouched:

- ``none``: as stored (int8), the baseline of the same run;
- ``pca192``: the graph's projection (index/projection.py), int8: 196 bytes a line;
- ``bin``: one bit a dimension and one scale (the mean magnitude): 52 bytes;
- ``bin4``: two bits a dimension (sign; above or below the median magnitude): 100 bytes;
- ``int4``: four bits a dimension, 16 levels between the vector's own min and max
  (two float32 and 192 bytes: 200 bytes);
- ``int6``: six bits a dimension, 64 levels between min and max: 296 bytes.

The smaller forms are made from the int8 row as stored (what an upgrade converting the
rows of cache.db would give), not from the model's float32 vector.

    python bench/line_forms.py --lines bin --script locomo --convs 0,1,2 --memo M
    python bench/line_forms.py --lines bin --script note --work W --grid G --only help

Every other argument goes to the script. No form is shipped (bench/RESULTS.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "daemon"))

from memvault.engine import embedding  # noqa: E402
from memvault.index.projection import projection_for  # noqa: E402

MODEL = "sentence-transformers/all-MiniLM-L6-v2@53aa51172d14"


def _take(flag: str) -> str:
    i = sys.argv.index(flag)
    value = sys.argv[i + 1]
    del sys.argv[i : i + 2]
    return value


def _int8(z: np.ndarray) -> np.ndarray:
    scale = float(np.abs(z).max()) / 127.0 or 1.0
    return np.round(z / scale) * scale


def _levels(x: np.ndarray, levels: int) -> np.ndarray:
    """``levels`` evenly spaced values from the vector's min to its max, each dimension
    rounded to the nearest."""
    lo, hi = float(x.min()), float(x.max())
    step = (hi - lo) / (levels - 1) or 1.0
    return (lo + np.round((x - lo) / step) * step).astype(np.float32)


def degrade(x: np.ndarray, form: str) -> np.ndarray:
    """What ``form`` gives back for the line vector ``x``."""
    x = np.asarray(x, dtype=np.float64)
    if form == "none":
        return x.astype(np.float32)
    if form.startswith("pca"):
        p = projection_for(MODEL, 384)
        assert p is not None
        w = p.components[: int(form[3:])]
        return (p.mean + w.T @ _int8(w @ (x - p.mean))).astype(np.float32)
    if form == "bin":
        return (np.sign(x) * np.abs(x).mean()).astype(np.float32)
    if form == "bin4":
        a = np.abs(x)
        med = np.median(a)
        lo, hi = a[a <= med].mean(), a[a > med].mean()
        return (np.sign(x) * np.where(a > med, hi, lo)).astype(np.float32)
    if form in ("int4", "int6"):
        return _levels(x, 2 ** int(form[3:]))
    raise SystemExit(f"unknown form {form!r}")


def main() -> int:
    form, script = _take("--lines"), _take("--script")
    original = embedding.Embedding.line_vectors

    def line_vectors(self: embedding.Embedding, shas: list[str]) -> dict[str, np.ndarray]:
        return {k: degrade(v, form) for k, v in original(self, shas).items()}

    embedding.Embedding.line_vectors = line_vectors  # type: ignore[method-assign]
    module = __import__("locomo_eval" if script == "locomo" else "note_recall")
    return int(module.main() or 0)


if __name__ == "__main__":
    sys.exit(main())
