"""The store's vector queue: the chunks waiting for their vectors (the vector lane
takes them in steps), a new model's re-queue of every chunk, and giving index.db's
free pages back once the queue empties (``Store`` inherits these).

Kept apart from ``store.py`` (notes, chunks, FTS5, the embedding cache) so each file
stays one subject; the ``pending`` table and its count trigger are created with the
rest of the schema there.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from memvault.core.text import sha256_text
from memvault.errors import StorageError
from memvault.index.integrity import Guard
from memvault.index.rows import (
    CHUNK_COLS,
    NOTE_COLS,
    ChunkRow,
    NoteRow,
    PendingChunk,
    chunk_row,
    note_row,
)
from memvault.index.sql import parts, select_in
from memvault.index.sqlite_open import writable
from memvault.index.vector_cache import WAL_KEPT

log = logging.getLogger("memvault")
# free pages below this are not worth giving back (was 4 MB: a short-note index of
# 3,000 notes kept 1.2 MB free, a fifth of its 6 MB, for good); a save's few stay
_RECLAIM_BYTES = 256 << 10
_STEP_PAGES = 2048  # pages given back a transaction (8 MB): the store's lock let go between
# an index made before auto_vacuum: its conversion rewrites the whole file, so only past
# this share of free pages, or for a file this small (a rewrite well under a second)
_RECLAIM_SHARE = 0.2
_CONVERT_SMALL = 64 << 20


class PendingQueue:
    """Methods over the pending queue; ``Store`` supplies the connection and the lock."""

    index_path: Path
    _db: sqlite3.Connection
    _lock: AbstractContextManager[Any]  # the store's lock (integrity.Guard; PostgreSQL's calls)
    _PENDING_JOIN = "CROSS JOIN"  # SQLite's way to make pending drive the join (below)
    _writes: AbstractContextManager[Any]  # the write gate: this process's writes (Store)
    _guard: Guard  # the lock's damage notes (a conversion's, without the lock: ``apart``)
    _converting: sqlite3.Connection | None = None  # an older index's VACUUM, while it runs
    # whether an older index may be converted here: a vault opened by backends converts it
    # in a daemon (beside its searches) or a whole sync asked for, never before an answer
    convert_old = True

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def set_meta(self, key: str, value: str, conn: sqlite3.Connection | None = None) -> None:
        raise NotImplementedError

    def _own_write(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def add_pending(
        self, conn: sqlite3.Connection, items: Iterable[tuple[int, str, str]], since: float
    ) -> None:
        """New chunks ``(label, sha, embedded text)`` whose vectors are still to come."""
        # an upsert, not INSERT OR REPLACE: a replace deletes without firing the
        # delete trigger, and pending_count would drift
        conn.executemany(
            "INSERT INTO pending(label, sha, text, since) VALUES(?, ?, ?, ?) ON CONFLICT(label) "
            "DO UPDATE SET sha = excluded.sha, text = excluded.text, since = excluded.since",
            [(label, sha, text, since) for label, sha, text in items],
        )

    def pending(self, limit: int) -> list[PendingChunk]:
        """The oldest pending chunks, with their embedded text and their own text."""
        with self._lock:
            rows = self._db.execute(
                # CROSS JOIN: pending drives the loop (its rowid order is the ORDER BY).
                # A plain JOIN let the planner scan every chunk and sort: O(vault) a
                # step, 52 ms at 50k chunks, paid again every 32 chunks embedded
                f"SELECT p.label, p.sha, p.text, c.text FROM pending p {self._PENDING_JOIN} "
                "chunks c ON c.label = p.label ORDER BY p.label LIMIT ?",
                (limit,),
            ).fetchall()
        return [PendingChunk(*r) for r in rows]

    def finish_pending(
        self, labels: Sequence[int], shas: Mapping[int, str] | None = None, *, reclaim: bool = True
    ) -> list[int]:
        """Take these labels off the queue; return those that were still on it (a chunk
        deleted meanwhile is not). With ``shas`` (label -> the embedded text's sha the
        step embedded), a label queued again meanwhile with another text (a new model:
        ``requeue_all``) stays on the queue. The queue emptied, its pages go back
        (``reclaim``), unless the caller does that itself (outside a lock of its own)."""
        done: list[int] = []
        with self.transaction() as conn:
            for part in parts(list(labels)):
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    f"SELECT label, sha FROM pending WHERE label IN ({marks})", part
                ).fetchall()
                finished = [lb for lb, sha in rows if shas is None or shas.get(lb) == sha]
                done += finished
                for few in parts(finished):
                    conn.execute(
                        f"DELETE FROM pending WHERE label IN ({','.join('?' * len(few))})", few
                    )
        if reclaim and done and self.pending_state()[0] == 0:
            self.reclaim()
        return sorted(done)

    def reclaim(self) -> int:
        """Give the index's free pages back to the disk; returns how many. The pending
        queue keeps every new chunk's embedded text until its vector is made: after a
        first index with the real model its texts were a fifth of a short-note
        index.db (1.26 of 6.48 MB at 3,000 notes), a third at 10k notes of 100-600
        words. Done when the queue empties and after bulk work (a full sync, the
        daemon's quiet after a large batch), once free pages pass 256 KB: an index
        made with ``auto_vacuum = INCREMENTAL`` (every new one) gives them back by
        ``incremental_vacuum`` in steps of ``_STEP_PAGES``, each its own transaction,
        the lock let go between them (a search or a save waits one step at most;
        readers in other processes never wait: WAL). An index made before is
        converted once by a ``VACUUM`` (a rewrite of the whole file, ``_converted``)
        when its free pages pass a fifth of it or it is small (``_CONVERT_SMALL``),
        skipped while another process writes it (tried again the next time), and only
        where ``convert_old`` (a daemon, a whole sync: never before an answer). A
        kill between steps leaves the pages given back so far, a kill inside one none
        of them: each is a transaction."""
        with self._lock:
            free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            size = self._db.execute("PRAGMA page_size").fetchone()[0]
            if free * size < _RECLAIM_BYTES:
                return 0
            incremental = self._db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        if not incremental:
            if not self.convert_old or (
                free < _RECLAIM_SHARE * pages and pages * size > _CONVERT_SMALL
            ):
                return 0
            return self._converted(int(free), int(pages) * int(size), int(free) * int(size))
        given = 0
        while free:
            with self._writes, self._lock, self._own_write():  # its close still stamps the file
                try:
                    step = min(int(free), _STEP_PAGES)
                    self._db.execute(f"PRAGMA incremental_vacuum({step})").fetchall()
                    left = self._db.execute("PRAGMA freelist_count").fetchone()[0]
                except sqlite3.OperationalError as exc:  # busy, read-only: the next time
                    log.info("index.db free pages kept for now: %s", exc)
                    return given
            given, free = given + int(free) - int(left), (left if left < free else 0)
        return given

    def _converted(self, free: int, file_bytes: int, free_bytes: int) -> int:
        """An index made without ``auto_vacuum``: one ``VACUUM`` with the mode set
        gives its free pages back and makes it incremental from then on. It runs on a
        connection of its own, holding this store's write gate (``_writes``: this
        process's writes wait for it, as they would for SQLite's lock) but not the
        store's lock: a search meanwhile reads the index as it was (WAL: the rows are
        the same, a VACUUM changes none) and does not wait. Before, it held the lock:
        a search waited for all of it (519 MB: 3.3 s on an idle machine; 1.2 GB loaded
        47-61 s, past a daemon client's 30 s; bench/convert_wait.py). A file past
        ``_CONVERT_SMALL`` says so first (a command's stderr, the daemon's log); a file
        this user cannot write (mode 0444, another user's) is left alone, nothing said.
        Readers in other processes never wait either; another process's write makes it
        wait for the next time; ``close`` interrupts it (rolled back: the next time)."""
        if not writable(self.index_path):  # another user's: a connection of ours would
            return 0  # leave a -wal and -shm the owner cannot write (index/sqlite_open.py)
        with self._writes:
            try:  # looked at again under the gate: another thread's reclaim (the vector
                with self._lock:  # lane's, the quiet after bulk work) converted it meanwhile
                    if self._db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:
                        return 0
            except sqlite3.ProgrammingError:  # or the store closed while this one waited
                return 0
            if file_bytes > _CONVERT_SMALL:
                log.warning(
                    "index.db: rewriting an older memvault's index once (%d MB) to give its %d MB "
                    "of free pages back; writes wait until it is done, searches do not",
                    file_bytes >> 20,
                    free_bytes >> 20,
                )
            try:  # timeout 0: another process writing it is not waited for
                conn = sqlite3.connect(
                    self.index_path, isolation_level=None, timeout=0, check_same_thread=False
                )
            except sqlite3.Error as exc:
                log.info("index.db free pages kept for now: %s", exc)
                return 0
            self._converting = conn
            try:
                conn.execute(f"PRAGMA journal_size_limit = {WAL_KEPT}")
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
                with self._own_write(), self._guard.apart():  # (its close still stamps
                    conn.execute("VACUUM")  # the file; damage met is IndexCorrupt)
            except sqlite3.OperationalError as exc:  # busy, read-only, interrupted
                log.info("index.db free pages kept for now: %s", exc)
                return 0
            finally:
                self._converting = None
                conn.close()
            with self._lock:  # this connection reads the header again (SQLite's cached mode)
                self._db.execute("PRAGMA page_count").fetchone()
        return free

    def _conversion_stopped(self) -> AbstractContextManager[Any]:
        """The write gate, a conversion running in another thread interrupted first (a
        close: its VACUUM rolled back, done the next time)."""
        if (converting := self._converting) is not None:
            converting.interrupt()
        return self._writes

    def pending_state(self) -> tuple[int, float | None]:
        """How many chunks wait for their vector, and since when the oldest has: O(1)
        (the count kept by triggers, the oldest from the index on ``since``). A count
        that disagrees with the queue being empty or not (written by something that
        bypassed the triggers) is counted afresh."""
        with self._lock:
            row = self._db.execute("SELECT n FROM pending_count").fetchone()
            (since,) = self._db.execute("SELECT MIN(since) FROM pending").fetchone()
            count = None if row is None else int(row[0])
            if count is not None and count >= 0 and (count == 0) == (since is None):
                return count, since
        # (the write outside the lock: the write gate is taken before it, never after)
        try:
            with self.transaction() as conn:
                conn.execute("DELETE FROM pending_count")
                conn.execute("INSERT INTO pending_count(n) SELECT COUNT(*) FROM pending")
                (count,) = conn.execute("SELECT n FROM pending_count").fetchone()
                (since,) = conn.execute("SELECT MIN(since) FROM pending").fetchone()
        except (sqlite3.OperationalError, StorageError):  # read-only, full: counted, not kept
            with self._lock:
                (count,) = self._db.execute("SELECT COUNT(*) FROM pending").fetchone()
                (since,) = self._db.execute("SELECT MIN(since) FROM pending").fetchone()
        return int(count), since

    def pending_among(self, labels: Iterable[int]) -> set[int]:
        """Which of these labels still wait for their vector."""
        with self._lock:
            q = "SELECT label FROM pending WHERE label IN ({})"
            return {r[0] for r in select_in(self._db, q, labels)}

    def long_work(self) -> AbstractContextManager[object]:
        """Around statements whose work grows with the index (``requeue_all``: one
        transaction over every chunk): nothing here, SQLite's statements have no
        deadline; PostgreSQL's deadline grows with the chunks (pg_store)."""
        return nullcontext()

    def requeue_all(
        self,
        texts_for: Callable[[NoteRow, list[ChunkRow]], tuple[list[str], bool]],
        model: str,
        reason: str,
        since: float,
    ) -> tuple[int, int]:
        """A new embedding model, in one transaction: every chunk keeps its row and its
        keyword row (keyword search never stops), and is queued for the vector lane with
        the text the new model embeds (``texts_for``: one per chunk, and whether the new
        model's tokenizer cuts the note differently: then the note is made stale too, so
        the next sync cuts it again). The old model's vectors are forgotten (``dim`` and
        ``vectors_sha`` cleared, ``model_id`` set); ``reason`` is kept as meta
        ``model_changed``. Returns (chunks queued, notes to cut again)."""
        with self.long_work(), self.transaction() as conn:
            rows = {
                r[0]: note_row(r)
                for r in conn.execute(f"SELECT {NOTE_COLS} FROM notes WHERE kind = 'note'")
            }
            by_path: dict[str, list[ChunkRow]] = {}
            for r in conn.execute(f"SELECT {CHUNK_COLS} FROM chunks ORDER BY path, ord"):
                by_path.setdefault(r[1], []).append(chunk_row(r))
            queued: list[tuple[int, str, str]] = []
            recut: list[str] = []
            for path, chunks in by_path.items():
                row = rows.get(path)
                if row is None:  # a chunk of no note (never written so): cut again
                    texts, again = [c.text for c in chunks], True
                else:
                    texts, again = texts_for(row, chunks)
                if again:
                    recut.append(path)
                for c, text in zip(chunks, texts, strict=True):
                    queued.append((c.label, sha256_text(text), text))
            conn.executemany(
                "UPDATE chunks SET sha = ? WHERE label = ? AND sha != ?",
                [(sha, label, sha) for label, sha, _ in queued],
            )
            self.add_pending(conn, queued, since)
            for part in parts(recut):
                conn.execute(
                    "UPDATE notes SET sha256 = '', mtime_ns = -1 "
                    f"WHERE path IN ({','.join('?' * len(part))})",
                    part,
                )
            for key, value in (
                ("model_changed", reason),
                ("model_id", model),
                ("vectors_sha", ""),
                ("dim", ""),
            ):
                self.set_meta(key, value, conn)
        return len(queued), len(recut)
