"""Fit the graph's projection for the default model (index/projection.py).

The corpus is none of the dev sets: the paragraphs of the docstrings of Python's own
standard library (this interpreter's), deduplicated and shuffled with a fixed seed.
They are embedded with the default model (int8 ONNX) and the first ``--out`` principal
components of their vectors are written to daemon/memvault/index/graph_projection.npz.

    python bench/fit_projection.py --out 192 --texts 30000

Prints how much of the variance the components keep. Takes a few minutes (the model).
"""

from __future__ import annotations

import argparse
import ast
import random
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from memvault.config import IndexSettings  # noqa: E402
from memvault.index import projection  # noqa: E402
from memvault.index.embedder import make_embedder  # noqa: E402


def stdlib_paragraphs() -> list[str]:
    lib = Path(sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    for path in sorted(lib.rglob("*.py")):
        if "site-packages" in path.parts or "test" in path.parts or "tests" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    out += [" ".join(p.split()) for p in doc.split("\n\n")]
    keep = (p for p in out if 60 <= len(p) <= 1500 and sum(c.isalpha() for c in p) > 0.6 * len(p))
    return list(dict.fromkeys(keep))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=int, default=192, help="dimensions of the graph")
    ap.add_argument("--texts", type=int, default=30000, help="paragraphs embedded, at most")
    ap.add_argument("--to", type=Path, default=projection.BUNDLED)
    args = ap.parse_args()
    paragraphs = stdlib_paragraphs()
    random.Random(192).shuffle(paragraphs)
    paragraphs = paragraphs[: args.texts]
    print(f"{len(paragraphs)} paragraphs of the standard library's docstrings", flush=True)
    embedder = make_embedder(IndexSettings())
    started = time.perf_counter()
    vectors = np.vstack(
        [embedder.embed(paragraphs[i : i + 256]) for i in range(0, len(paragraphs), 256)]
    ).astype(np.float32)
    print(f"embedded in {time.perf_counter() - started:.0f} s ({embedder.model_id})", flush=True)
    fitted = projection.fit(vectors, args.out, embedder.model_id)
    centred = vectors - vectors.mean(axis=0)
    kept = float(((centred @ fitted.components.T) ** 2).sum() / (centred**2).sum())
    projection.save(fitted, args.to)
    print(f"{fitted.ident}: {args.out} of {fitted.dim} dimensions keep {kept:.3f} of the variance")
    print(f"written to {args.to}")


if __name__ == "__main__":
    main()
