"""The index on PostgreSQL: ``PgStore``, the same seam as ``Store`` (index/seam.py).

One schema per vault (``pg_schema``). The store's SQL is written once: ``PgStore``
inherits ``Store``'s and ``LinkTables``' methods, and its connection (``_PgSql``)
speaks their SQL to PostgreSQL (``?`` placeholders become psycopg's ``%s``);
only what differs between the engines is written again here: the keyword table
(a weighted ``tsvector`` column with a GIN index instead of FTS5), the row upserts
SQLite spells ``INSERT OR REPLACE``, the order of MEMORY.md's owned lines (no
rowid), the queue's length (counted: PostgreSQL counts an index quickly) and the
embedding cache (a table of the schema: every machine shares it by content hash).

Keywords are ranked as FTS5 ranks them (pg_keywords.py): the chunks' FTS5 tokens in
a weighted ``tsvector`` (GIN) find the candidates, and BM25 is computed above the
database from the terms' document counts and the candidates' term frequencies.

A password in the DSN is never logged or shown: ``redact(dsn)`` is what any message
or ``status`` names.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any

import numpy as np

from memvault.config import IndexSettings
from memvault.index import pg_keywords, pg_schema, pg_writer
from memvault.index.note_order import keys_ours, rekey
from memvault.index.pg_conn import (
    CallLock,
    IndexUnavailable,
    _PgSql,
    connect,
    host_name,
    redact,
    stirred,
)
from memvault.index.pg_writer import (
    _acquire,
    _holder_kind,
    _take_again,
    follow_when_due,
    keyed_as,
    known,
    location,
    look_now,
    moved_away,
    refusal,
    spelt_otherwise,
)
from memvault.index.rows import NewChunk, NoteRow
from memvault.index.sql import parts
from memvault.index.store import Store
from memvault.index.vector_cache import decode_half, decode_keyed, encoded, is_half

log = logging.getLogger("memvault")

INT8_SCHEMA = 5  # the schema version from which the cache's rows are int8 (pg_schema)
MIGRATE_ROWS_PER_S = 20_000  # a floor on a migration's speed over the vectors: its deadline
REQUEUE_PER_S = 100  # a floor on requeue_all's speed (chunks a second): its deadline
FILES_AT = "vault_commit"  # meta: the writer's git commit, host, time (engine/clone_guard)
# meta: the index moved back to SQLite (`index move --to sqlite`: host, time), which no one
# keeps now; a reader still set to it is told so; the next writer's open takes it out
MOVED_AWAY = pg_writer.MOVED_AWAY


class PgCache:
    """The embedding cache in the vault's schema: vectors by (model, sha256), kept as
    cache.db keeps them (``vector_cache.encode``: int8 with a scale) since schema 5,
    float16 before. Each read takes the schema's version in the same statement (one
    snapshot): a reader of an older writer's schema reads its float16 rows, and reads
    int8 from the moment that writer's migration commits."""

    def __init__(self, db: _PgSql, lock: Any) -> None:
        self._db = db
        # the store's: one connection, one lock. With one of its own, a cache statement
        # ran inside another thread's transaction (its rows gone with that one's
        # rollback), or opened the connection again under it (what that transaction
        # did next then committed a statement at a time on the new connection)
        self._lock = lock

    def get(self, model: str, shas: Iterable[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        keys = [bytes.fromhex(s) for s in dict.fromkeys(shas) if _is_sha(s)]
        with self._lock:
            for part in parts(keys):
                rows = self._db.raw(
                    "SELECT sha, vector, (SELECT value FROM meta WHERE key = 'schema_version') "
                    "FROM embeddings WHERE model = %s AND sha = ANY(%s)",
                    (model, part),
                ).fetchall()
                if rows and int(rows[0][2] or 0) < INT8_SCHEMA:  # an older writer's float16
                    out.update(
                        (bytes(k).hex(), decode_half(bytes(v))) for k, v, _ in rows if is_half(v)
                    )
                else:
                    out.update(decode_keyed((k, v) for k, v, _ in rows))
        return out

    def put(self, model: str, items: Mapping[str, np.ndarray]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT INTO embeddings(model, sha, vector) VALUES(?, ?, ?) "
                "ON CONFLICT(model, sha) DO UPDATE SET vector = excluded.vector",
                list(
                    zip(itertools.repeat(model), map(bytes.fromhex, items), encoded(items.values()))
                ),
            )

    def prune(self, model: str, live: set[str]) -> int:
        with self._lock:
            rows = self._db.raw("SELECT model, sha FROM embeddings").fetchall()
            dead = [(m, bytes(s)) for m, s in rows if m != model or bytes(s).hex() not in live]
            self._db.executemany("DELETE FROM embeddings WHERE model = ? AND sha = ?", dead)
        return len(dead)

    def count(self, model: str) -> int:
        with self._lock:
            row = self._db.raw("SELECT COUNT(*) FROM embeddings WHERE model = %s", (model,))
            return int(row.fetchone()[0])

    def close(self) -> None:
        pass


def _is_sha(value: Any) -> bool:
    return (
        isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    )


class PgStore(Store):
    """The index of one vault in its PostgreSQL schema. Thread-safe: one lock around
    each call, as ``Store``. ``read_only``: a reader (no migration, no writer lock)."""

    _OWNED_ORDER = "id"  # no rowid: memory_owned's serial id keeps the lines' order
    _PENDING_JOIN = "JOIN"  # PostgreSQL has no CROSS JOIN ... ON (its planner needs no hint)
    # a bulk load drops the HNSW index and builds it after (pg_vectors): a lane inserting
    # beside it would undo that; and a server lost mid-sync must fail the sync itself
    vectors_beside = False
    # a writer's files, what they are at (their git commit: engine/clone_guard), kept in
    # meta FILES_AT at its open, with each sync that changed something and at its close:
    # a writer whose clone lacks that commit is refused before it rolls the index back
    files_at: Callable[[], str | None] | None = None
    mark_files_if_moved: Callable[[], None] | None = None  # a tick's: engine/clone_guard

    def __init__(
        self,
        dsn: str,
        schema: str,
        *,
        read_only: bool = False,
        timeout: float = 10.0,
        statement_ms: int = 30_000,
    ) -> None:
        self.index_path = Path(redact(dsn))  # where the index lives, for messages
        self.cache_path = self.index_path
        self.dsn = dsn
        self.schema = schema
        self.read_only = read_only
        # one call at a time; when each thread's call began waiting for its turn is kept,
        # so a call that waited behind one finding the server away fails with it (_PgSql)
        self._lock = self._calls = CallLock()
        self._writes = nullcontext()  # Store's write gate: no VACUUM here (reclaim: nothing)
        self._writer: Any = None  # the session holding the writer's advisory lock
        self._daemon = False  # that session says it is a daemon's (taken again so)
        self._wants_lock = False  # a writer: the lock is taken again whenever it is lost
        self._retaking = False  # inside _writer_again (a reopen there must not nest it)
        self.builds: list[threading.Thread] = []  # HNSW builds (PgVectors): close waits
        self.closing = threading.Event()  # set by close: a build stops trying again
        self._totals = True  # chunk_totals kept (schema 2), else counted
        # vectors' twins (schema 6), CJK characters a token each (7), Cyrillic stems (14)
        self.twins = self.cjk = self.stems = True  # a reader of an older writer's: not all
        # a reader's last look at its writer's version, what it said, and (this thread's)
        # a look under way (follow_when_due)
        self._followed_at, self._following, self._newer = time.monotonic(), threading.local(), None
        conn = connect(dsn, schema, timeout=timeout, statement_ms=statement_ms, read_only=read_only)
        self._pg = _PgSql(
            conn,
            dsn,
            timeout,
            reopen=lambda: connect(
                dsn, schema, timeout=timeout, statement_ms=statement_ms, read_only=read_only
            ),
            reopen_read_only=lambda: connect(
                dsn, schema, timeout=timeout, statement_ms=statement_ms, read_only=True
            ),
            after_reopen=self._writer_again,
        )
        self._db = self._pg  # type: ignore[assignment]  # Store's SQL, spoken to PostgreSQL
        self._pg.before_read = lambda: follow_when_due(self)
        self._pg.asked = self._calls.since
        try:
            with self._pg.deadline():
                self.vector_schema = pg_schema.vector_schema(conn)  # pg_vectors names it
                if read_only:
                    version = pg_schema._version(conn, schema)
                    if version is None:
                        from memvault.errors import NotIndexed

                        raise NotIndexed(
                            f"no index in schema {schema!r} at {redact(dsn)} yet: the vault's "
                            "writer builds it (`memvault index move --to postgres` there, "
                            "from its index in SQLite; or `memvault up` with these settings)"
                        )
                    keyed_as(self, version)  # a newer one's refused; an older one's asked
                    moved_away(conn, dsn, schema)  # `index move --to sqlite` left it
                # a writer migrates only once it holds the writer's lock
                # (take_writer_lock): another machine's writer may be on older code
        except BaseException:
            self._pg.close()
            raise
        self._cache = PgCache(self._pg, self._lock)  # type: ignore[assignment]

    # -- the writer's lock -------------------------------------------------------------

    def take_writer_lock(self, wait: float = 0.0, *, daemon: bool = False) -> None:
        """Hold the vault's writer advisory lock on a session of its own, or
        ``LockHeld`` naming the holder (host, pid) wherever it runs. As the file lock
        (vault/lock.py): ``wait`` > 0 (a short-lived writer: a CLI write without a
        daemon), while another short-lived writer holds it, try again for up to ``wait``
        seconds, saying so once; a daemon holding it is refused at once (it writes for
        as long as it runs). ``daemon``: this one is (its session's application_name
        says so, for the others to see)."""
        conn = connect(self.dsn, self.schema, timeout=self._pg.timeout, statement_ms=30_000)
        key = pg_schema.lock_key(self.schema, "writer")
        if daemon:
            conn.execute(
                "SELECT set_config('application_name', %s, false)",
                (f"memvault daemon {host_name()} {os.getpid()}",),
            )
        _acquire(conn, key, wait, f"the index in schema {self.schema!r} at {redact(self.dsn)}")
        try:  # the lock is held: only now bring the schema to this code's version
            # (its deadline grown with the vectors: version 6 indexes every row)
            with self._pg.long(
                self._pg.timeout
                + pg_schema.rows(self._pg.raw, self.schema, "vectors") / MIGRATE_ROWS_PER_S
            ):
                pg_schema.migrate(self._pg.conn, self.schema)
                _own_keys(self._pg.conn)
        except BaseException:
            conn.close()
            raise
        keyed_as(self, None)
        self._writer = _PgSql(conn, self.dsn, self._pg.timeout)
        with self._writer.committed():
            conn.execute("DELETE FROM meta WHERE key = %s", (MOVED_AWAY,))  # kept again
            conn.execute("DELETE FROM writer")
            conn.execute(
                "INSERT INTO writer(host, pid, since) VALUES(%s, %s, %s)",
                (host_name(), os.getpid(), time.time()),
            )
        self._daemon = daemon
        self._wants_lock = True
        self._pg.before_write = self.hold_writer_lock

    def hold_writer_lock(self) -> None:
        """Before a writer's write (and on a daemon's tick): its lock session ended on
        its own (``pg_terminate_backend`` of it, a pooler, the network) while the
        connection it writes on lived: the server let the lock go, and another
        machine's daemon may take it and write beside this one. Take it again first,
        or ``LockHeld``: this process writes nothing more. A look at the session's
        socket, no round trip, unless something came on it."""
        if not self._wants_lock or self.read_only:
            return
        with self._lock:
            held = self._writer
            try:
                if held is not None and stirred(held.conn):
                    try:
                        held.raw("SELECT 1")
                    except IndexUnavailable:
                        log.warning(
                            "the writer's lock at %s was lost: taking it again", redact(self.dsn)
                        )
                        if held.cut():  # the server does not answer: one deadline a look,
                            _take_again(self, now=False)  # the lock taken at the next
                            raise
                        held = None
                if held is None:  # lost now, or at a look before while the server was away
                    self._writer_again()
            except IndexUnavailable as exc:  # the calls that waited behind this one
                self._pg.note_away(str(exc))  # fail with it (a field test's search: 3 x)
                raise

    def _writer_again(self) -> None:
        _take_again(self)

    def side_session(self) -> _PgSql:
        """A connection of its own to the vault's schema (a writer's long statement, such
        as an HNSW build, off the connection this process searches on)."""
        conn = connect(self.dsn, self.schema, timeout=self._pg.timeout, statement_ms=30_000)
        return _PgSql(conn, self.dsn, self._pg.timeout)

    # where this index lives, who writes it (role none: no one), never the password
    location = location
    # what a write on a reader is told: the writer holding the lock (docs/TEAM.md)
    refusal = refusal
    follow_writer = look_now  # a reader's: asks as its writer keys now (follow_when_due)
    known = known  # ``manifest`` of some paths alone, one query (engine/changed_here)
    spelt_otherwise = spelt_otherwise  # of some paths in another case (changed_here)

    def writer(self) -> tuple[str, int, float] | None:
        """The writer (host, pid, since) while it holds the lock (a killed one's row
        outlives it: it counts only with the advisory lock held)."""
        key = pg_schema.lock_key(self.schema, "writer") & 0xFFFFFFFFFFFFFFFF
        with self._lock:
            row = self._pg.raw(
                "SELECT host, pid, since FROM writer WHERE EXISTS (SELECT 1 FROM pg_locks "
                "WHERE locktype = 'advisory' AND granted AND classid::bigint = %s "
                "AND objid::bigint = %s AND objsubid = 1)",
                (key >> 32, key & 0xFFFFFFFF),
            ).fetchone()
        return (str(row[0]), int(row[1]), float(row[2])) if row else None

    def _own_write(self) -> AbstractContextManager[None]:
        return nullcontext()  # no file to stamp (index/integrity.py)

    def set_meta(self, key: str, value: str, conn: Any = None) -> None:
        super().set_meta(key, value, conn)
        if key == "last_sync_at":  # a sync changed the index: what its files are at
            self.mark_files()

    def mark_files(self) -> None:
        """Keep what the writer's files are at (``files_at``) in meta ``FILES_AT``."""
        at = self.files_at() if self.files_at is not None and not self.read_only else None
        if at is not None:
            super().set_meta(FILES_AT, at)

    def close(self) -> None:
        self.closing.set()
        for build in self.builds:  # an HNSW build under way: finished (its own session)
            build.join()
        self.builds.clear()
        with self._lock:
            self._wants_lock = False
            if self._writer is not None:
                with suppress(Exception):  # the files as the writer leaves them
                    self.mark_files()
                with suppress(Exception):
                    self._writer.raw("DELETE FROM writer WHERE pid = %s", (os.getpid(),))
                with suppress(Exception):  # let go now: a closed session's lock goes only
                    # once its backend has exited, and a writer opened at once (index
                    # move's sync after its copy) found it held, "another process"
                    self._writer.raw(
                        "SELECT pg_advisory_unlock(%s)",
                        (pg_schema.lock_key(self.schema, "writer"),),
                    )
                with suppress(Exception):
                    self._writer.close()
                self._writer = None
            self._pg.close()

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One transaction (each statement, BEGIN and COMMIT under the deadline; a long
        transaction of many statements is not cut)."""
        with self._lock:
            self._pg.alive(first=True)
            self.hold_writer_lock()
            tx = self._pg.committed()  # a COMMIT that did not happen is an error
            with self._pg.deadline():
                tx.__enter__()
            try:
                yield self._pg
            except BaseException as exc:
                with self._pg.deadline():
                    tx.__exit__(type(exc), exc, exc.__traceback__)
                raise
            with self._pg.deadline():
                tx.__exit__(None, None, None)

    # -- what PostgreSQL spells differently ------------------------------------------

    def put_note(self, conn: Any, row: NoteRow) -> None:
        conn.execute("DELETE FROM notes WHERE path = ?", (row.path,))
        super().put_note(_NoReplace(conn), row)  # type: ignore[arg-type]

    def insert_chunks(self, conn: Any, path: str, chunks: Sequence[NewChunk]) -> list[int]:
        rows = []
        columns = [(c.text, c.title, " ".join(c.heading), c.about) for c in chunks]
        for c, (_, _, heading, _), (keywords, ntok) in zip(
            chunks, columns, pg_keywords.tsvectors_of(columns), strict=True
        ):
            rows.append(
                (
                    path, c.ord, json.dumps(list(c.heading), ensure_ascii=False), c.line_start,
                    c.line_end, c.text, c.sha, c.tokens, c.title, heading, c.about, keywords, ntok,
                )
            )  # fmt: skip
        if not rows:
            return []
        labels = []
        with conn.deadline(), conn.conn.cursor() as cur:  # one round trip (a pipeline)
            cur.executemany(
                "INSERT INTO chunks(path, ord, heading, line_start, line_end, text, sha, tokens, "
                "title, headings, about, keywords, ntok) VALUES(%s, %s, %s, %s, %s, %s, %s, %s, "
                "%s, %s, %s, %s::tsvector, %s) RETURNING label",
                rows,
                returning=True,
            )
            while True:
                labels.append(int(cur.fetchone()[0]))
                if not cur.nextset():
                    break
        return labels

    def move_chunk(self, conn: Any, label: int, c: NewChunk) -> None:
        """As ``Store.move_chunk``: the keyword row is rewritten only when it differs."""
        heading = " ".join(c.heading)
        row = conn.raw(
            "SELECT text, title, headings, about FROM chunks WHERE label = %s", (label,)
        ).fetchone()
        conn.raw(
            "UPDATE chunks SET ord = %s, heading = %s, line_start = %s, line_end = %s, "
            "tokens = %s WHERE label = %s",
            (c.ord, json.dumps(list(c.heading), ensure_ascii=False), c.line_start, c.line_end,
             c.tokens, label),
        )  # fmt: skip
        if row is not None and tuple(row) != (c.text, c.title, heading, c.about):
            keywords, ntok = pg_keywords.tsvector_of(c.text, c.title, heading, c.about)
            conn.raw(
                "UPDATE chunks SET text = %s, title = %s, headings = %s, about = %s, "
                "keywords = %s::tsvector, ntok = %s WHERE label = %s",
                (c.text, c.title, heading, c.about, keywords, ntok, label),
            )

    def delete_chunks(self, conn: Any, labels: Sequence[int]) -> None:
        # the chunk's vector goes in the same transaction: a reader never finds a
        # vector whose chunk is gone
        from memvault.index.pg_vectors import release

        # all at once: a part's heir could be a twin a later part deletes (a note of
        # 20,000 copies, each part handing the copies on again)
        release(conn.raw, labels)  # a node's twins stay, under their heir
        for part in parts(list(labels)):
            conn.raw("DELETE FROM pending WHERE label = ANY(%s)", (part,))
            conn.raw("DELETE FROM chunks WHERE label = ANY(%s)", (part,))

    @contextmanager
    def long_work(self) -> Iterator[None]:
        """``requeue_all`` (one transaction over every chunk) with its deadline grown
        with the chunks: under ``pg_timeout`` alone a large index was cut midway (rolled
        back, so the model change was tried again, and cut again, at every open)."""
        with self._lock, self._pg.long(self._pg.timeout + self.chunk_count() / REQUEUE_PER_S):
            yield

    def reclaim(self) -> int:
        """Free pages are PostgreSQL's own autovacuum's work, never memvault's."""
        return 0

    def pending_state(self) -> tuple[int, float | None]:
        with self._lock:
            count, since = self._pg.execute("SELECT COUNT(*), MIN(since) FROM pending").fetchone()
        return int(count), (None if since is None else float(since))

    def journal_relink(self, conn: Any, moves: Mapping[str, str]) -> None:
        conn.executemany(  # an older move's file moved again: where it is now (Store's)
            "UPDATE relink_pending SET new = ? WHERE new = ?",
            [(new, old) for old, new in moves.items()],
        )
        conn.executemany(
            "INSERT INTO relink_pending(old, new) VALUES(?, ?) ON CONFLICT(old) "
            "DO UPDATE SET new = excluded.new",
            list(moves.items()),
        )

    # -- keywords ----------------------------------------------------------------------

    def chunk_count(self) -> int:
        """The chunks' number as ``chunk_totals`` keeps it (schema 2, triggers): one row.
        ``count(*)`` read every chunk (24-91 ms at 500,000), and each search asked for it
        twice: its keyword side and the rare word's rule (core/rare_words.rare_terms)."""
        follow_when_due(self)  # (a reader: asked as its writer keeps the index now)
        if not self._totals:  # an older writer's index
            return super().chunk_count()
        with self._lock:
            row = self._pg.raw("SELECT n FROM chunk_totals").fetchone()
        return int(row[0]) if row is not None else super().chunk_count()

    def term_docs(self, term: str) -> int:
        follow_when_due(self)  # before the flags below ask as its writer keys
        query = pg_keywords.term_query(term, cjk=self.cjk, stems=self.stems)
        if query is None:
            return 0
        with self._lock:
            row = self._pg.raw(
                "SELECT count(*) FROM chunks WHERE keywords @@ %s::tsquery", (query,)
            ).fetchone()
        return int(row[0])

    def keywords(
        self, terms: Sequence[str], limit: int, docs_of: Callable[[str], int] | None = None
    ) -> list[tuple[int, float]]:
        """(label, bm25 score: higher is better), as FTS5 ranks ``"a" OR "b"``: the GIN
        index finds the chunks, BM25 is computed here (``pg_keywords.ranked_by``).
        ``docs_of``: the chunks holding a term, as the search counted them (``term_docs``,
        once a search: counting them again was a round trip a term)."""
        follow_when_due(self)
        phrases, named = pg_keywords.phrases(terms, cjk=self.cjk, stems=self.stems)
        if not phrases or limit <= 0:
            return []
        counted = [docs_of(t) for t in named] if docs_of is not None else None
        with self._lock:
            return pg_keywords.ranked_by(self._pg.raw, phrases, counted, self._totals)[:limit]

    def fts(self, match: str, limit: int) -> list[tuple[int, float]]:
        raise NotImplementedError("PgStore ranks keywords by terms: keywords(terms, limit)")

    # -- vectors -------------------------------------------------------------------------

    def vector_index(self, path: Path, dim: int, settings: IndexSettings, model: str = "") -> Any:
        """pgvector's HNSW index over the full vectors (the hnswlib graph's projection,
        ``graph_projection``, is not used here)."""
        from memvault.index.pg_vectors import PgVectors

        return PgVectors(
            self,
            dim,
            m=settings.hnsw_m,
            ef_construction=settings.ef_construction,
            ef_search=settings.ef_search,
        )


def _own_keys(conn: Any) -> None:
    """MEMORY.md's keys another Python (or key algorithm) made, computed again once this
    process holds the writer's lock: only the holder writes keys (``note_order.rekey``).
    Else one read of meta."""
    if not keys_ours(conn, "%s"):
        with conn.transaction():
            rekey(conn, "%s")


class _NoReplace:
    """``Store.put_note``'s SQL with SQLite's ``INSERT OR REPLACE`` as a plain insert
    (the row was deleted first, in the same transaction)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql.replace("INSERT OR REPLACE", "INSERT"), args)

    def executemany(self, sql: str, rows: Sequence[Any]) -> Any:  # (its link keys)
        return self._conn.executemany(sql, rows)


__all__ = [
    "FILES_AT",
    "IndexUnavailable",
    "PgCache",
    "PgStore",
    "_holder_kind",
    "connect",
    "redact",
]
