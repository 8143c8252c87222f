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
from memvault.index.seam import is_postgres, open_postgres, refuse_a_second_index
from memvault.index.store import Store
from memvault.vault.lock import upgrade_guard

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
    # read only: an open without the writer's lock, as a reader's (Engine._open_store):
    # it writes nothing (MEMORY.md's keys another Python made are the writer's to compute)
    # and upgrades an older schema only holding that lock (vault/lock.upgrade_guard)
    guard = (lambda: upgrade_guard(config.state_dir)) if read_only else None
    return Store(config.state_dir / "index.db", config.state_dir / "cache.db", upgrade_lock=guard)


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
        if is_postgres(target):  # before anything is written there
            _not_anothers(target, set(src.manifest()))
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
    if is_postgres(source) and not is_postgres(target):
        _left(source)
    return MoveReport(copied, chunks, report.embedded_chunks)


def _left(source: VaultConfig) -> None:
    """The index in PostgreSQL, moved back to SQLite, says so (meta ``MOVED_AWAY``: who,
    when): a reader still set to it is told it is kept no more (pg_writer.moved_away).
    Not when another writer holds it (the team still writes it: it is not left)."""
    import json
    import logging
    import time

    from memvault.errors import LockHeld, MemvaultError
    from memvault.index.pg_conn import host_name
    from memvault.index.pg_store import MOVED_AWAY

    try:
        old = open_postgres(source, read_only=False)
        try:
            old.set_meta(MOVED_AWAY, json.dumps({"host": host_name(), "at": time.time()}))
        finally:
            old.close()
    except LockHeld as exc:
        logging.getLogger("memvault").warning("%s: it is still written there", exc)
    except MemvaultError as exc:  # the move is done: its mark alone is missing
        logging.getLogger("memvault").warning("the index left in PostgreSQL: %s", exc)


def _not_anothers(target: VaultConfig, mine: set[str]) -> None:
    """A field test: a second vault under the same folder name (another team's
    `notes/`) moved its index into the same database: its schema, ``memvault_<folder
    name>``, held the first vault's index, which the move replaced without a word.
    Refused when fewer than half of the notes indexed there are this vault's (a move
    back into this vault's own old index goes on)."""
    from memvault.errors import ConfigError, NotIndexed
    from memvault.index.pg_conn import IndexUnavailable, redact
    from memvault.index.seam import pg_schema_of

    try:
        dst = _open(target, read_only=True)
    except NotIndexed:  # no index there yet: this vault's may be under another schema
        refuse_a_second_index(target)
        return
    except IndexUnavailable:
        return  # unreachable, or no pgvector: the move says so
    try:
        there = set(dst.manifest())
    finally:
        dst.close()
    if len(there & mine) * 2 >= len(there):
        return
    schema = pg_schema_of(target)
    some = ", ".join(sorted(there - mine)[:3])
    raise ConfigError(
        f"schema {schema!r} at {redact(target.index.dsn)} holds another vault's index: "
        f"{len(there - mine)} of its {len(there)} files are not in this vault ({some}, ...); "
        'nothing was moved. Give this vault a schema of its own ([index] schema = "..." '
        "in .memvault/config.toml, or MEMVAULT_INDEX_SCHEMA), or, if that index is no "
        f'one\'s, drop it (DROP SCHEMA "{schema}" CASCADE) and move again'
    )


__all__ = ["MoveReport", "move_index", "with_store"]
