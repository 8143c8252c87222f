"""The index backend seam: what the engine asks of an index, whichever engine holds it.

Two implementations satisfy it:

- ``store.Store`` + ``vectors.VectorIndex``: SQLite (FTS5 BM25) and hnswlib under
  ``.memvault/`` (the default, ``[index] store = "sqlite"``);
- ``pg_store.PgStore`` + ``pg_vectors.PgVectors``: one PostgreSQL schema per vault,
  ``tsvector``/GIN keywords ranked BM25-like from the terms' document frequencies,
  pgvector HNSW (``[index] store = "postgres"``, ``dsn = "postgresql://..."``).

What stays above the seam, in memvault's own code for both: query terms, fusion,
evidence, line ranking, context assembly and budgets (engine/reader.py,
engine/evidence.py, core/ranking.py). So a question gets the same hits from either
backend, up to ties.

A transaction is an opaque handle (``Tx``): the engine only passes it back to the
store's own methods (all SQL lives under index/), never executes on it.
The store's side of the seam is ``Store``'s public methods, each written once:
``PgStore`` is a ``Store`` (its SQL spoken to PostgreSQL), overriding only what the
engines do differently; ``VectorSearch`` names the vector side, which the two
implement apart.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from memvault.config import VaultConfig
from memvault.core.wikilinks import key
from memvault.index.vectors import OpenReport, VectorsWanted

Tx = Any  # a transaction handle: only ever handed back to the store that gave it


class VectorSearch(Protocol):
    """Vectors by chunk label: hnswlib (``VectorIndex``) or pgvector (``PgVectors``)."""

    def open(self, want: VectorsWanted) -> OpenReport: ...
    def add(self, labels: Sequence[int], vectors: np.ndarray) -> None: ...
    def delete(self, labels: Iterable[int]) -> int: ...
    def query(
        self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None
    ) -> list[tuple[int, float]]: ...
    def save(self) -> str | None: ...
    def compact(self, vectors_for: Callable[[Sequence[int]], np.ndarray]) -> None: ...
    def deleted_ratio(self) -> float: ...
    def labels(self) -> set[int]: ...
    @property
    def dirty(self) -> bool: ...


def is_postgres(config: VaultConfig) -> bool:
    return config.index.store == "postgres"


def pg_schema_of(config: VaultConfig) -> str:
    from memvault.index.pg_schema import schema_name

    return schema_name(config.root, config.index.schema)


def recently_away(store: Any) -> str | None:
    """Why the index's PostgreSQL did not answer a moment ago (``_PgSql.recently_away``);
    None for SQLite, or when it answered, or when that was long enough ago to ask again."""
    from memvault.index.pg_conn import _PgSql

    db = getattr(store, "_db", None)
    return db.recently_away() if isinstance(db, _PgSql) else None


def open_postgres(
    config: VaultConfig, *, read_only: bool, wait: float = 0.0, daemon: bool = False
) -> Any:
    """The vault's PostgreSQL index (``PgStore``), migrated once it holds the writer's lock
    (never by a reader: another machine's writer may run older code); a
    writer waits up to ``wait`` seconds for a short-lived writer's lock (a daemon's is
    refused at once), ``daemon``: this writer is one (``PgStore.take_writer_lock``)."""
    from memvault.errors import ConfigError
    from memvault.index.pg_store import PgStore

    if not config.index.dsn:
        raise ConfigError('index.store = "postgres" needs index.dsn ("postgresql://...")')
    store = PgStore(
        config.index.dsn,
        pg_schema_of(config),
        read_only=read_only,
        timeout=config.index.pg_timeout,
        statement_ms=int(config.index.pg_timeout * 1000),
    )
    if not read_only:
        try:  # one writer per vault, on any machine: the schema's advisory lock
            store.take_writer_lock(wait, daemon=daemon)
            _this_vaults(store, config)
        except BaseException:
            store.close()
            raise
    return store


SAMPLED = 400  # indexed notes looked for in the folder, by a writer's open


def refuse_a_second_index(config: VaultConfig) -> None:
    """A new index in a schema derived from the folder's name (no ``[index] schema``
    set) while another schema of the database holds this folder's notes: a clone
    behind the writer's settings (``pg_siblings``). ``ConfigError`` naming that schema;
    a schema set by a person is theirs to choose."""
    from memvault.errors import ConfigError
    from memvault.index.pg_conn import connect, redact
    from memvault.index.pg_siblings import elsewhere

    if config.index.schema:
        return
    schema = pg_schema_of(config)
    timeout = config.index.pg_timeout
    conn = connect(
        config.index.dsn, schema, timeout=timeout, statement_ms=int(timeout * 1000), read_only=True
    )
    try:
        found = elsewhere(conn, schema, config.root)
    finally:
        conn.close()
    if found is None:
        return
    other, same, looked, writer = found
    said = (
        f"schema {other!r} at {redact(config.index.dsn)} holds this vault's index already "
        f"({same} of the {looked} notes looked for are in this folder, byte for byte"
        + (f"; its writer, {writer}, runs" if writer else "")
        + f"), and this copy builds a second one in {schema!r} (its name derived from the "
        "folder's). A clone behind the writer's settings: git pull (the writer's "
        f'.memvault/config.toml names its schema), or set [index] schema = "{other}" (or '
        "MEMVAULT_INDEX_SCHEMA). A second index on purpose: give it a schema by name"
    )
    if writer is None:  # nobody writes that one now: perhaps another vault of the same notes
        import logging

        logging.getLogger("memvault").warning("%s", said)
        return
    raise ConfigError(
        said.replace("builds a second", "would build a second") + "; nothing was written"
    )


def _this_vaults(store: Any, config: VaultConfig) -> None:
    """A field test: another team's vault under the same folder name, set to the same
    database, derives the same schema (``memvault_<folder name>``); its writer's first
    sync deleted the first vault's notes from the shared index and put its own in.
    Refused (nothing written) when most of the notes indexed there are not in this
    folder: another vault's index, or a copy far behind its writer's (which would roll
    the index back). A note found elsewhere in the folder (its name, its bytes) counts
    as there: a folder renamed while no writer ran (a pull), which the sync follows."""
    from memvault.errors import ConfigError
    from memvault.index.pg_conn import redact

    sampled = {r.path: r.sha256 for r in store.notes("note", limit=SAMPLED, outline=False)}
    rows = list(sampled)
    if not rows:  # a new index: this vault's may be in another schema already
        refuse_a_second_index(config)
    gone = [p for p in rows if not (config.root / p).exists()]
    if len(rows) >= 2 and len(gone) * 2 > len(rows):  # the same notes elsewhere here:
        found = _same_notes(config.root, {p: sampled[p] for p in gone})  # folders renamed
        gone = [p for p in gone if p not in found]  # while no writer ran
    if len(rows) < 2 or len(gone) * 2 <= len(rows):
        return
    raise ConfigError(
        f"schema {store.schema!r} at {redact(store.dsn)} holds an index of notes this folder "
        f"lacks ({len(gone)} of the {len(rows)} looked for, e.g. {', '.join(gone[:3])}); "
        "nothing was written. Another vault's index: give this vault a schema of its own "
        '([index] schema = "..." in .memvault/config.toml, or MEMVAULT_INDEX_SCHEMA). This '
        "copy far behind its writer's: git pull first. Those notes deleted on purpose: drop "
        f'the schema (DROP SCHEMA "{store.schema}" CASCADE) and sync again'
    )


def _same_notes(root: Path, gone: dict[str, str]) -> set[str]:
    """Of ``gone`` (an indexed path -> its content's sha256), those whose note is under
    ``root`` at another path: a file of the same name (as links compare names) and the
    same bytes. Another vault's notes share names (``README.md``, a day's log), not
    bytes."""
    wanted: dict[str, list[str]] = {}
    for path in gone:
        wanted.setdefault(key(path.rsplit("/", 1)[-1]), []).append(path)
    found: set[str] = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            for path in wanted.get(key(name), ()):
                try:
                    digest = hashlib.sha256(Path(folder, name).read_bytes()).hexdigest()
                except OSError:
                    continue
                if digest == gone[path]:
                    found.add(path)
    return found


_WARNED: set[str] = set()  # config files already warned of, in this process


def warn_password_in_file(config: VaultConfig) -> bool:
    """Say (once a process) that config.toml's ``[index] dsn`` holds a password: git
    carries config.toml to every clone (.memvault/.gitignore keeps it), and a push puts
    the password wherever the vault goes. True when it does."""
    import logging
    import tomllib

    from memvault.config import CONFIG_FILE
    from memvault.index.pg_conn import redact

    path = config.state_dir / CONFIG_FILE
    try:
        dsn = str(tomllib.loads(path.read_text(encoding="utf-8")).get("index", {}).get("dsn", ""))
    except (OSError, ValueError, AttributeError):
        return False
    if not dsn or redact(dsn) == dsn:
        return False
    if str(path) not in _WARNED:
        _WARNED.add(str(path))
        logging.getLogger("memvault").warning(
            "%s holds the index's password ([index] dsn = %s), and git carries that file to "
            "every clone of the vault: put the password in ~/.pgpass (or the whole DSN in "
            "MEMVAULT_INDEX_DSN) and take it out of the file (and out of git's history if "
            "it was committed)",
            path,
            redact(dsn),
        )
    return True


__all__ = [
    "Tx",
    "VectorSearch",
    "is_postgres",
    "open_postgres",
    "pg_schema_of",
    "warn_password_in_file",
]
