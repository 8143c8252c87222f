"""SQLite state: what is indexed (notes, chunks, links, FTS5) and the embedding cache.

Two files under ``.memvault/``:

- ``index.db`` (WAL; its tables and their migrations: ``schema.py``): notes,
  chunks, links, an FTS5 table over chunk text, title, headings and the note's
  description (first chunks only), the lines the daemon wrote into MEMORY.md, and meta
  (schema version, model identity, the vectors file's hash, the last report).
- the attachments (every file that is not a note: linked, not indexed) with their
  size and mtime, so a renamed attachment is recognised (``changes.stat_moves``);
- the relink journal: moves whose links are being re-targeted, written in the
  same transaction that renames the rows and cleared once every link follows,
  so a relink that a kill interrupts is finished by the next sync;
- ``cache.db`` (WAL): embeddings keyed by (model id, sha256 of the embedded
  text), int8 with a scale each (``vector_cache``). Kept apart so a damaged index is rebuilt
  without re-running the model.

The link state (links, attachments, the relink journal, MEMORY.md's owned lines)
is queried in ``link_tables.py``, the vector lane's queue in ``pending_queue.py``;
their tables are created here with the rest.

Chunk labels come from ``AUTOINCREMENT``: SQLite never hands out a label
twice, which is exactly what hnswlib needs (a re-used label corrupts it).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from memvault.config import IndexSettings
from memvault.core.changes import Manifest
from memvault.core.memory_order import keys_made
from memvault.core.ranking import fts_query
from memvault.errors import IndexCorrupt
from memvault.index import integrity, sqlite_open
from memvault.index.link_tables import LinkTables
from memvault.index.note_lists import NoteLists
from memvault.index.note_order import KEYS_MADE, rekey
from memvault.index.pending_queue import PendingQueue
from memvault.index.projection import projection_for
from memvault.index.rows import (
    CHUNK_COLS,
    NOTE_COLS,
    NOTE_COLS_NO_OUTLINE,
    ChunkRow,
    LinkRow,
    NewChunk,
    NoteRow,
    chunk_row,
    note_row,
)
from memvault.index.schema import SCHEMA_VERSION, create, keywords, register, upgrade
from memvault.index.sql import close_optimized, parts, rollback, select_in
from memvault.index.vector_cache import WAL_KEPT, VectorCache, opening_error
from memvault.index.vectors import VectorIndex
from memvault.index.vectors_projected import ProjectedVectors


def _set_up(conn: sqlite3.Connection, path: Path) -> None:
    if not path.exists() or not path.stat().st_size:  # new: before WAL fixes it for good
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # reclaim: no VACUUM needed
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA journal_size_limit = {WAL_KEPT}")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=OFF")
    register(conn)  # the keyword table's view and triggers call it (schema 8)


class Store(PendingQueue, LinkTables, NoteLists):
    """Both databases of one vault. Thread-safe: one lock around each call.

    Size: past ~400 lines as one subject, the SQL of the index: notes, chunks, their
    FTS5 rows and the pending queue are written together in one transaction (a
    delete takes a chunk's keyword row and its queue entry with it), and every SQL
    statement lives under index/ (tests/test_architecture.py). What stands alone is
    apart already: the link tables (link_tables.py), the cache's SQL (vector_cache.py).
    """

    read_only = False  # this process's own index (a PostgreSQL reader's is another's)
    vectors_beside = True  # a full sync may embed on a thread beside it (engine/beside.py)
    _chunks_counted: tuple[int, int] | None = None  # (data_version, chunks): chunk_count

    def __init__(
        self,
        index_path: Path,
        cache_path: Path,
        *,
        upgrade_lock: Callable[[], AbstractContextManager[object]] | None = None,
        trusting: bool = False,
    ) -> None:
        """``upgrade_lock``: held around an upgrade of an older index's schema, for an
        open that does not hold the vault's writer lock (a reader): a writer of the older
        code, its connection open, would write old SQL into the new shape (schema 6's
        keyword table is corrupted by it). ``trusting``: a file unchanged since a
        memvault closed it is not checked again (``index/integrity.py``); the
        databases' own quick_check (``checked``) else."""
        self.index_path, self.cache_path = index_path, cache_path
        self._upgrade_lock = upgrade_lock
        # damage met under it: IndexCorrupt, and no stamp vouches for the file any more
        self._lock = self._guard = integrity.Guard(threading.RLock(), index_path)
        self._writes = threading.RLock()  # taken before the lock (PendingQueue._converted)
        self.checked = not (trusting and integrity.unchanged(index_path))
        try:  # (a file this user cannot write: opened leaving nothing, sqlite_open.py)
            self._db = sqlite_open.connect(index_path, self._guard)
            try:
                _set_up(self._db, index_path)
                self._opened = integrity.identity(index_path)  # the file the stamp vouches for
                if self.checked:
                    integrity.check(self._db)
                create(self._db)
                self._migrate()
            except BaseException:  # damage, a reader refused the upgrade (LockHeld), a kill
                self._db.close()  # (not left to the collector: Python 3.13 warns of that)
                raise
        except sqlite3.DatabaseError as exc:
            raise opening_error(index_path, exc) from None
        try:
            self._cache = VectorCache(cache_path, trusting=trusting)
        except BaseException:
            self._db.close()
            raise
        self._guard.opened()

    def replaced(self) -> bool:
        """Whether index.db was deleted or replaced since this store opened it: its
        writes then go to a file no one opens again (a person's ``rm`` under a running
        daemon); a restart rebuilds it from the notes and the cache."""
        opened = getattr(self, "_opened", None)  # PostgreSQL's: no file
        return opened is not None and integrity.identity(self.index_path) != opened

    @classmethod
    def in_memory(cls) -> Store:
        """An empty store that touches no file (a never-indexed vault opened to read)."""
        return cls(Path(":memory:"), Path(":memory:"))

    def _migrate(self) -> None:
        with self._lock:  # one read of meta: the schema's version, what the keys are made under
            got = dict(
                self._db.execute(
                    "SELECT key, value FROM meta WHERE key IN ('schema_version', ?)", (KEYS_MADE,)
                ).fetchall()
            )
        version = got.get("schema_version")
        if version is not None and int(version) > SCHEMA_VERSION:
            raise IndexCorrupt(
                f"index schema {version} is newer than this memvault ({SCHEMA_VERSION}); upgrade memvault"
            )
        if version is None or int(version) < SCHEMA_VERSION:
            guard = self._upgrade_lock() if self._upgrade_lock is not None else nullcontext()
            with guard, self.transaction() as conn:
                # read again under the write lock: another process may have just migrated
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'")
                current = row.fetchone()
                if current is None or int(current[0]) < SCHEMA_VERSION:
                    upgrade(conn, None if current is None else int(current[0]))
                    self.set_meta("schema_version", str(SCHEMA_VERSION), conn)
        if got.get(KEYS_MADE) != keys_made() and self._upgrade_lock is None:
            # the writer (the lock's holder: the only one writing keys): MEMORY.md's keys
            # made by another Python (its Unicode tables) or algorithm, computed again as
            # the upgrade does; a reader leaves them (it writes no MEMORY.md)
            with self.transaction() as conn:
                rekey(conn, "?")  # (read again under the write lock: an upgrade made them)

    def keys_ours(self) -> bool:
        """MEMORY.md's kept keys made as this process makes them: else it sorts every row."""
        return self.meta(KEYS_MADE) == keys_made()

    def close(self) -> None:
        with self._conversion_stopped(), self._guard.closing():
            mine = self._guard.only_mine()  # (before the close's own checkpoint)
            self._guard.closed(self._opened, mine, close_optimized(self._db))
            self._cache.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._writes, self._lock, self._guard.writing():
            self._chunks_counted = None  # its writes do not change our data_version
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                rollback(self._db)  # (SQLite's own at a full disk: the error kept)
                raise
            self._db.execute("COMMIT")

    # -- meta ----------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str, conn: sqlite3.Connection | None = None) -> None:
        with self._writes, self._lock, self._own_write():  # (without ``conn``: its own)
            (conn or self._db).execute(
                "INSERT INTO meta(key, value) VALUES(?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def _own_write(self) -> AbstractContextManager[None]:
        """A write of this process's own to index.db, so that its close still stamps the
        file (``integrity.Guard.writing``); PostgreSQL has no file to stamp."""
        return self._guard.writing()

    # -- notes ---------------------------------------------------------------------

    def manifest(self) -> Manifest:
        """Every note row's (size, mtime_ns, sha256) by path (``Known`` made when asked)."""
        with self._lock:
            return Manifest(self._db.execute("SELECT path, size, mtime_ns, sha256 FROM notes"))

    def note(self, path: str) -> NoteRow | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {NOTE_COLS} FROM notes WHERE path = ?", (path,)
            ).fetchone()
        return note_row(row) if row else None

    def notes(
        self,
        kind: str | None = None,
        *,
        after: str | None = None,
        limit: int | None = None,
        outline: bool = True,
    ) -> list[NoteRow]:
        """Rows by path; ``after``/``limit``: one page of them (paths past ``after``);
        ``outline=False``: without headings and warnings (neither read nor decoded)."""
        query = f"SELECT {NOTE_COLS if outline else NOTE_COLS_NO_OUTLINE} FROM notes"
        where: list[str] = []
        args: list[Any] = []
        if kind:
            where.append("kind = ?")
            args.append(kind)
        if after is not None:
            where.append("path > ?")
            args.append(after)
        if where:
            query += " WHERE " + " AND ".join(where)
        query += " ORDER BY path" + (f" LIMIT {int(limit)}" if limit else "")
        with self._lock:
            rows = self._db.execute(query, args).fetchall()
        return [note_row(r) for r in rows]

    def paths_and_aliases(self) -> tuple[list[str], dict[str, tuple[str, ...]]]:
        """Every known file path, and the aliases of the notes that have some (lean query)."""
        with self._lock:
            rows = self._db.execute("SELECT path, aliases FROM notes").fetchall()
        paths = [p for p, _ in rows]
        aliases = {p: tuple(json.loads(a)) for p, a in rows if a != "[]"}
        return paths, aliases

    def set_note_file(
        self,
        conn: sqlite3.Connection,
        path: str,
        size: int,
        mtime_ns: int,
        sha256: str,
        category: str,
    ) -> None:
        """A note row's file columns (and its category: its folder), the rest as it is:
        a note carried over (engine.carry_over), whose fields did not change. (One
        statement both backends run: PostgreSQL's connection takes ``?`` marks.)"""
        conn.execute(
            "UPDATE notes SET size = ?, mtime_ns = ?, sha256 = ?, category = ? WHERE path = ?",
            (size, mtime_ns, sha256, category, path),
        )

    def touch_note(self, path: str, size: int, mtime_ns: int) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE notes SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path)
            )

    def delete_note(self, conn: sqlite3.Connection, path: str) -> list[int]:
        """Remove a note and everything derived from it; return its chunk labels."""
        labels = [r[0] for r in conn.execute("SELECT label FROM chunks WHERE path = ?", (path,))]
        self.delete_chunks(conn, labels)
        conn.execute("DELETE FROM links WHERE source = ?", (path,))
        self.drop_note_row(conn, path)
        return labels

    def rename_note(self, conn: sqlite3.Connection, old: str, new: str) -> None:
        self.move_row(conn, old, new)
        conn.execute("UPDATE chunks SET path = ? WHERE path = ?", (new, old))
        conn.execute("UPDATE links SET source = ? WHERE source = ?", (new, old))

    # -- chunks --------------------------------------------------------------------

    def chunks_of(self, path: str) -> list[ChunkRow]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {CHUNK_COLS} FROM chunks WHERE path = ? ORDER BY ord", (path,)
            ).fetchall()
        return [chunk_row(r) for r in rows]

    def chunk_rows(self, labels: Sequence[int]) -> dict[int, ChunkRow]:
        out: dict[int, ChunkRow] = {}
        with self._lock:
            for part in parts(list(labels)):
                q = f"SELECT {CHUNK_COLS} FROM chunks WHERE label IN ({','.join('?' * len(part))})"
                for r in self._db.execute(q, part):
                    out[r[0]] = chunk_row(r)
        return out

    def labels_of(self, paths: Iterable[str]) -> set[int]:
        with self._lock:
            q = "SELECT label FROM chunks WHERE path IN ({})"
            return {r[0] for r in select_in(self._db, q, paths)}

    def note_tokens(self, paths: Iterable[str]) -> dict[str, int]:
        """Total chunk tokens per note (how big a note is, in model word pieces)."""
        out: dict[str, int] = {}
        with self._lock:
            for part in parts(list(dict.fromkeys(paths))):
                q = (
                    f"SELECT path, SUM(tokens) FROM chunks WHERE path IN ({','.join('?' * len(part))}) "
                    "GROUP BY path"
                )
                out.update(self._db.execute(q, part).fetchall())
        return out

    def labels(self) -> set[int]:
        with self._lock:
            return {r[0] for r in self._db.execute("SELECT label FROM chunks")}

    def label_shas(self) -> dict[int, str]:
        with self._lock:
            return dict(self._db.execute("SELECT label, sha FROM chunks").fetchall())

    def insert_chunks(
        self, conn: sqlite3.Connection, path: str, chunks: Sequence[NewChunk]
    ) -> list[int]:
        labels = []
        for c in chunks:
            cur = conn.execute(
                "INSERT INTO chunks(path, ord, heading, line_start, line_end, text, sha, tokens, "
                "title, about) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    path,
                    c.ord,
                    json.dumps(list(c.heading), ensure_ascii=False),
                    c.line_start,
                    c.line_end,
                    c.text,
                    c.sha,
                    c.tokens,
                    c.title,
                    c.about,
                ),
            )
            label = int(cur.lastrowid or 0)
            conn.execute(  # its keyword row (a change or delete: schema.FTS_EXTERNAL's triggers)
                "INSERT INTO chunks_fts(rowid, text, title, headings, about) VALUES(?, ?, ?, ?, ?)",
                (label, *map(keywords, (c.text, c.title, " ".join(c.heading), c.about))),
            )
            labels.append(label)
        return labels

    def move_chunk(self, conn: sqlite3.Connection, label: int, c: NewChunk) -> None:
        """Keep a chunk (and its vector) whose embedded text did not change.

        Its keyword row follows its title, heading path and description all the same:
        when ``index.embed_context`` leaves the title out of the embedded text, a
        retitled note keeps its vectors, yet must be found by the new title and not by
        the old one (and a first chunk too full to embed any of its note's description
        must still be found by a new one).
        The keyword row is rewritten (by a trigger) only when one of its columns differs
        (most edits move chunks unchanged).
        """
        conn.execute(
            "UPDATE chunks SET ord = ?, heading = ?, line_start = ?, line_end = ?, text = ?, "
            "tokens = ?, title = ?, about = ? WHERE label = ?",
            (
                c.ord,
                json.dumps(list(c.heading), ensure_ascii=False),
                c.line_start,
                c.line_end,
                c.text,
                c.tokens,  # of its text as written (a re-targeted link changes it)
                c.title,
                c.about,
                label,
            ),
        )

    def chunk_labels_by_sha(self, conn: sqlite3.Connection, path: str) -> dict[str, list[int]]:
        """A note's chunk labels by the sha256 of their embedded text (in label order)."""
        out: dict[str, list[int]] = {}
        for label, sha in conn.execute(
            "SELECT label, sha FROM chunks WHERE path = ? ORDER BY label", (path,)
        ):
            out.setdefault(sha, []).append(label)
        return out

    def delete_chunks(self, conn: sqlite3.Connection, labels: Sequence[int]) -> None:
        for part in parts(list(labels)):
            marks = ",".join("?" * len(part))
            conn.execute(f"DELETE FROM pending WHERE label IN ({marks})", part)
            # the keyword rows go with them (a trigger gives FTS5 the old values)
            conn.execute(f"DELETE FROM chunks WHERE label IN ({marks})", part)

    def embedded_labels(self) -> set[int]:
        """Labels of the chunks whose vectors belong in the index (all but the pending)."""
        with self._lock:
            return {
                r[0]
                for r in self._db.execute(
                    "SELECT label FROM chunks WHERE label NOT IN (SELECT label FROM pending)"
                )
            }

    def embedded_label_array(self, first: bool = False) -> np.ndarray:
        """``embedded_labels`` sorted, as int64 (no set built); ``first``: the first only.
        All as one text off the chunks' (path, ord) index, sorted here: in label order
        SQLite walks every chunk's text (500,000: 0.28 s of CPU against 0.09)."""
        q = "SELECT label FROM chunks WHERE label NOT IN (SELECT label FROM pending)"
        with self._lock:
            if first:
                rows = self._db.execute(q + " ORDER BY label LIMIT 1")
                return np.fromiter((r[0] for r in rows), dtype=np.int64)
            (text,) = self._db.execute(
                "SELECT group_concat(label, ' ') FROM chunks "
                "WHERE label NOT IN (SELECT label FROM pending)"
            ).fetchone()
        labels = np.fromstring(text or "", dtype=np.int64, sep=" ")
        labels.sort()  # (in place: no second copy of 500,000 labels)
        return labels

    def counts(self) -> dict[str, int]:
        with self._lock:
            notes = dict(
                self._db.execute("SELECT kind, COUNT(*) FROM notes GROUP BY kind").fetchall()
            )
            chunks = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return {
            "notes": notes.get("note", 0),
            "index_notes": notes.get("index", 0),
            "skipped": notes.get("skipped", 0),
            "chunks": chunks,
        }

    def problem_rows(self) -> list[tuple[str, str, str | None, tuple[str, ...]]]:
        """(path, kind, skip reason, warnings) of the files skipped or indexed with warnings
        (the WHERE is the partial index ``notes_problems``'s: a read of those rows only)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path, kind, skip_reason, warnings FROM notes "
                "WHERE kind = 'skipped' OR warnings != '[]' ORDER BY path"
            ).fetchall()
        return [(p, k, r, tuple(json.loads(w))) for p, k, r, w in rows]

    def has_notes_under(self, folder: str) -> bool:
        """Whether a note lies under ``folder`` (spelt as given), at any depth. Sought by
        its top folder (``category``, indexed): each update asks it of a section listing
        none (a filter matching no note), and a scan of every note grew with the vault
        (twice as long once ``note_order``'s indexes came: SQLite scanned one of them,
        reading each row from the table; bench/daemon_save_path.py)."""
        prefix = folder.rstrip("/") + "/"
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM notes WHERE kind = 'note' AND category = ? "
                "AND substr(path, 1, ?) = ? LIMIT 1",
                (prefix.split("/", 1)[0], len(prefix), prefix),
            ).fetchone()
        return row is not None

    def folder_counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT category, COUNT(*) FROM notes WHERE kind = 'note' GROUP BY category"
            ).fetchall()
        return {c or "(root)": n for c, n in rows}

    # -- full-text search ------------------------------------------------------------

    def chunk_count(self) -> int:
        """How many chunks (every search asks, for its terms' weights): counted once, then
        kept until this connection writes (``transaction``) or another one commits
        (SQLite's ``data_version``): a count of 400,000 rows was a fifth of a search at
        100,000 notes, and of each look of a save's poll until it is searchable."""
        with self._lock:
            sqlite = isinstance(self._db, sqlite3.Connection)  # (PgStore's is not)
            version = self._db.execute("PRAGMA data_version").fetchone()[0] if sqlite else None
            kept = self._chunks_counted
            if version is not None and kept is not None and kept[0] == version:
                return kept[1]
            count = int(self._db.execute("SELECT count(*) FROM chunks").fetchone()[0])
            self._chunks_counted = None if version is None else (version, count)
            return count

    def term_docs(self, term: str) -> int:
        """Chunks holding ``term``: a doclist count, nothing is scored."""
        with self._lock:
            row = self._db.execute(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (fts_query([term]),)
            ).fetchone()
        return int(row[0])

    def fts(self, match: str, limit: int) -> list[tuple[int, float]]:
        """(label, bm25 score: higher is better) for an FTS5 MATCH expression."""
        if not match:
            return []
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid, bm25(chunks_fts, 1.0, 2.0, 1.5, 1.0) AS s FROM chunks_fts "
                "WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?",
                (match, limit),
            ).fetchall()
        return [(int(label), -float(score)) for label, score in rows]

    def keywords(
        self, terms: Sequence[str], limit: int, docs_of: Callable[[str], int] | None = None
    ) -> list[tuple[int, float]]:
        """(label, bm25 score: higher is better) of chunks holding any of ``terms`` (the
        seam's keyword candidates; index/seam.py). ``docs_of``: the search's counts of
        the chunks holding a term (FTS5 has its own; PgStore's BM25 uses them)."""
        return self.fts(fts_query(terms), limit) if terms else []

    def vector_index(
        self, path: Path, dim: int, settings: IndexSettings, model: str = ""
    ) -> VectorIndex | ProjectedVectors:
        """The vector index that goes with this store: hnswlib in ``path``, built with
        ``settings``' graph parameters; for a model with a projection (and
        ``graph_projection``), its graph on fewer dimensions, each search ranked again by
        the full vectors in the cache (index/vectors_projected.py)."""
        graph = {
            "m": settings.hnsw_m,
            "ef_construction": settings.ef_construction,
            "ef_search": settings.ef_search,
        }
        projection = projection_for(model, dim) if settings.graph_projection else None
        if projection is None:
            return VectorIndex(path, dim, **graph)
        return ProjectedVectors(
            VectorIndex(path, projection.out, **graph),
            projection,
            lambda labels: self.vectors_for(model, labels, dim),
        )

    # -- embedding cache -------------------------------------------------------------

    def cached(self, model: str, shas: Iterable[str]) -> dict[str, np.ndarray]:
        return self._cache.get(model, shas)

    def put_embeddings(self, model: str, items: Mapping[str, np.ndarray]) -> None:
        self._cache.put(model, items)

    def vectors_for(
        self, model: str, labels: Sequence[int], dim: int
    ) -> tuple[list[int], np.ndarray]:
        """Cached vectors of chunks; returns (labels found, matrix). Missing ones are left
        out, and so is a vector not of ``dim`` dimensions (a row memvault did not write)."""
        shas = self.chunk_shas(labels)
        cache = self.cached(model, shas.values())
        found = [
            label
            for label in labels
            if shas.get(label) in cache and cache[shas[label]].shape == (dim,)
        ]
        if not found:
            return found, np.zeros((0, dim), dtype=np.float32)
        return found, np.stack([cache[shas[label]] for label in found]).astype(np.float32)

    def chunk_shas(self, labels: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        with self._lock:
            for part in parts(list(labels)):
                q = f"SELECT label, sha FROM chunks WHERE label IN ({','.join('?' * len(part))})"
                out.update(self._db.execute(q, part).fetchall())
        return out

    def chunk_texts(self) -> Iterator[str]:
        """The text of every chunk (for what is derived from it, like line vectors)."""
        with self._lock:
            rows = self._db.execute("SELECT text FROM chunks").fetchall()
        for (text,) in rows:
            yield text

    def prune_cache(self, model: str, keep: Iterable[str] = ()) -> int:
        """Drop cached vectors no chunk uses any more (and other models' vectors);
        ``keep``: other live shas (the lines embedded on their own)."""
        return self._cache.prune(model, set(self.label_shas().values()) | set(keep))

    def cache_count(self, model: str) -> int:
        return self._cache.count(model)


__all__ = ["SCHEMA_VERSION", "ChunkRow", "LinkRow", "NewChunk", "NoteRow", "Store"]
