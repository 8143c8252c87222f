"""Moving a vault's index between SQLite and PostgreSQL, reusing every stored vector.

``move_index(source, target)``: the embedding cache (every chunk's and line's vector,
by model and content hash) is copied from the source store into the target's, in
batches with progress; then the target is built by an ordinary sync, which finds
every text's vector in the cache by its hash, so the model never runs for a text the
source held. The source is left as it was (moving back is the same call the other
way); the caller switches ``[index] store`` once the target is whole.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from memvault.config import VaultConfig
from memvault.core.excerpts import unit_texts
from memvault.core.text import sha256_text
from memvault.engine.indexer import Progress
from memvault.index.embedder import Embedder
from memvault.index.seam import is_postgres, open_postgres
from memvault.index.store import Store

BATCH = 2000


@dataclass(frozen=True, slots=True)
class MoveReport:
    vectors_copied: int  # cached vectors carried over (chunks and lines)
    chunks: int  # chunks in the target after its sync
    embedded: int  # texts the model had to embed (0 when every vector was reused)


def _open(config: VaultConfig, *, read_only: bool) -> Store:
    if is_postgres(config):
        store: Store = open_postgres(config, read_only=read_only)
        return store
    return Store(config.state_dir / "index.db", config.state_dir / "cache.db")


def with_store(config: VaultConfig, store: str, dsn: str = "") -> VaultConfig:
    """``config`` with its index in ``store`` (``dsn`` for postgres)."""
    index = dataclasses.replace(config.index, store=store, dsn=dsn or config.index.dsn)
    return dataclasses.replace(config, index=index)


def move_index(
    source: VaultConfig,
    target: VaultConfig,
    embedder: Embedder | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> MoveReport:
    """Copy ``source``'s cached vectors into ``target``'s store, then sync ``target``."""
    from memvault.engine.engine import Engine

    src = _open(source, read_only=True)
    try:
        model = src.meta("model_id")
        shas: list[str] = list(dict.fromkeys(src.label_shas().values()))
        if source.index.line_vectors:
            shas += [sha256_text(t) for text in src.chunk_texts() for t in unit_texts(text)]
        shas = list(dict.fromkeys(shas))
        copied = 0
        if model:
            dst = _open(target, read_only=False)
            try:
                for start in range(0, len(shas), BATCH):
                    part = src.cached(model, shas[start : start + BATCH])
                    dst.put_embeddings(model, part)
                    copied += len(part)
                    if progress is not None:
                        progress(
                            Progress(min(start + BATCH, len(shas)), len(shas), copied, "vectors")
                        )
            finally:
                dst.close()
    finally:
        src.close()
    engine = Engine(target, embedder)
    try:
        report = engine.sync(None, progress, vectors=True)
        chunks = engine.store.counts()["chunks"]
    finally:
        engine.close()
    return MoveReport(copied, chunks, report.embedded_chunks)


__all__ = ["MoveReport", "move_index", "with_store"]
