"""How like the question a context's candidate lines are: each line's vector, and its
window's (the line and its neighbours), against the query's, in one matrix product
(engine/reader ranks lines with them: core/excerpts ``unit_scores``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def line_similarities(
    cached: dict[str, np.ndarray],
    keys: Sequence[Sequence[str]],
    members: Sequence[Sequence[int]],
    qv: np.ndarray,
) -> tuple[list[float | None], list[float | None] | None]:
    """Each piece's similarity to the query (the best of its lines' vectors, ``keys``
    into ``cached``) and its window's (``members``: ``windows``); None where a piece
    has no vector yet. One matrix product for all the lines."""
    import numpy as np

    sims: list[float | None] = [None] * len(keys)
    if not cached:
        return sims, None
    row = {sha: i for i, sha in enumerate(cached)}
    matrix = np.stack(list(cached.values())).astype(np.float32)
    line_sims = matrix @ qv.astype(np.float32)
    rows: list[int | None] = [None] * len(keys)  # each piece's line vector
    for i, ks in enumerate(keys):
        found = [row[k] for k in ks if k in row]
        if found:
            best = max(found, key=lambda r: line_sims[r])
            sims[i] = float(line_sims[best])
            rows[i] = best
    return sims, _window_similarities(members, rows, matrix, qv)


def _window_similarities(
    members: Sequence[Sequence[int]],
    rows: Sequence[int | None],
    matrix: np.ndarray,
    qv: np.ndarray,
) -> list[float | None]:
    """Each line's window (``members``: its own index first) compared with the query:
    the cosine of the sum of the window's line vectors (``rows``: each line's row of
    ``matrix``); None without the line's own."""
    import numpy as np

    n, blank = len(rows), len(matrix)  # a row of zeros after the last: "no line there"
    padded = np.vstack([matrix, np.zeros((1, matrix.shape[1]), dtype=matrix.dtype)])
    width = max((len(window) for window in members), default=1)
    row_of = [blank if r is None else r for r in rows]
    index = np.array(
        [[row_of[j] for j in w] + [blank] * (width - len(w)) for w in members], dtype=np.intp
    ).reshape(n, width)
    total = padded[index].sum(axis=1)
    norms = np.linalg.norm(total, axis=1)
    sims = (total @ qv.astype(np.float32)) / np.where(norms > 0, norms, 1.0)
    return [None if rows[i] is None or not norms[i] > 0 else float(sims[i]) for i in range(n)]
