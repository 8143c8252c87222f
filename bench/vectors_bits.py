"""Is a full vectors.bin (hnswlib's file, as memvault wrote it before the graph form)
the cache's vectors normalized, to the bit (float16 rows; since cache.db version 3,
int8 rows rounded to float16 as the index takes them)? If so, the graph form (which
puts them back from cache.db at open) loses nothing.

    python bench/vectors_bits.py VAULT      # a vault indexed by memvault before the graph form
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import hnswlib
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))

from memvault.index.vector_cache import decode
from memvault.index.vectors_file import normalized


def main() -> None:
    state = Path(sys.argv[1]) / ".memvault"
    idx = sqlite3.connect(state / "index.db")
    rows = idx.execute("SELECT label, sha FROM chunks ORDER BY label").fetchall()
    dim = int(idx.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()[0])
    index = hnswlib.Index(space="cosine", dim=dim)
    index.load_index(str(state / "vectors.bin"))
    stored = np.asarray(index.get_items([label for label, _ in rows]), dtype=np.float32)
    cache = sqlite3.connect(state / "cache.db")
    # version 2 kept float16 rows; version 3 keeps int8 rows, which the index rounds to
    # float16 as it takes them (vectors._checked)
    int8 = cache.execute("PRAGMA user_version").fetchone()[0] >= 3
    vectors = {
        sha.hex(): (
            decode(blob).astype(np.float16).astype(np.float32)
            if int8
            else np.frombuffer(blob, "<f2").astype(np.float32)
        )
        for sha, blob in cache.execute("SELECT sha, vector FROM vectors")
    }
    again = normalized(np.stack([vectors[sha] for _, sha in rows]))
    same = (again == stored).all(axis=1)
    print(
        f"{int(same.sum())} of {len(rows)} rows bitwise equal; max |diff| {np.abs(again - stored).max()}"
    )


if __name__ == "__main__":
    main()
