"""The vectors of a PostgreSQL index: pgvector, HNSW, the same seam as ``VectorIndex``.

Rows of ``vectors(label, embedding)`` in the vault's schema, written as the chunks
are (a chunk's delete takes its vector in the same transaction: ``PgStore``), so
there is no file to save and every reader sees the writer's vectors once committed.
The HNSW index is an expression index per dimension (``embedding::vector(dim)``,
cosine): a model of another dimension gets its own, and the old one is dropped.

Copies of one vector (equal texts embedded: a note of one repeated line, a template's
notes) are **twins**, as in hnswlib's index (vector_twins.py): the first row given a
vector is its node, in the HNSW index; a later row given the same vector names it
(``node``) and is left out of the index, which is partial (``WHERE node IS NULL``). A
search's hit on a node is a hit on each of its twins, at its similarity; a node
deleted hands its place to its oldest twin (``release``). pgvector keeps up to 10 rows
of one vector in one graph element; past that the copies crowd the graph as in
hnswlib: 3,000 copies among 3,000 others, recall@10 0.56-0.86 where it is 0.91
without them, and 0.90-0.92 with twins (bench/RESULTS.md, bench/pg_copies.py).

``query`` is cosine similarity, best first, as ``VectorIndex.query``. A filter that
is a set's membership test (what the reader passes) is pushed into the SQL (an exact
scan over the allowed labels, as hnswlib's exact fallback); any other predicate
filters a deepening HNSW search.

Bulk loads (a first index, ``index move``, a new model, any large batch): pgvector
inserts a row into an HNSW graph at ~25 ms each at ef_construction 200, where building
the graph over rows already loaded costs ~1 ms a row. So when the rows still to come
(the vector lane's queue, and this batch) reach ``BULK_ROWS`` and half the rows
stored, the HNSW index is dropped, rows go in by binary ``COPY``, and the index is
built again once the queue is empty (``CREATE INDEX CONCURRENTLY`` on a thread and a
connection of its own, its deadline grown with the rows: saves go on, searches
meanwhile are exact scans, the same hits or better). A writer
killed meanwhile builds it when it next opens with the queue drained, or when its
lane drains it: nothing depends on the index but speed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import struct
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from typing import Any

import numpy as np

from memvault.index import pg_schema
from memvault.index.pg_vector_names import PgvectorNames
from memvault.index.vector_twins import SAME
from memvault.index.vectors import OpenReport, VectorsWanted, _checked, query_vector

log = logging.getLogger("memvault")

_BATCH = 1000
EF_SEARCH_MAX = 1000  # pgvector's bound on hnsw.ef_search
BULK_ROWS = 2000  # rows still to come from which a load drops the HNSW index ...
# ... if they are this share of the rows stored, at least: a rebuild over the rows
# stored wins from a twentieth on, but readers search without the index meanwhile
# (exact scans: 100+ ms at 50,000 rows), so only a load of half the index is one
BULK_SHARE = 0.5
BUILD_ROWS_PER_S = 50  # a floor on an HNSW build's speed: its deadline (a stall is cut)
_COPY_HEAD = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
_COPY_TAIL = struct.pack(">h", -1)


# a node deleted (or written again) hands its place to its oldest twin, the others
# follow it (one statement: %(gone)s, the labels going)
_RELEASE = """WITH heirs AS (
    SELECT node AS old, min(label) AS heir FROM vectors
    WHERE node = ANY(%(gone)s) AND NOT (label = ANY(%(gone)s)) GROUP BY node)
UPDATE vectors v SET node = NULLIF(h.heir, v.label) FROM heirs h
WHERE v.node = h.old AND NOT (v.label = ANY(%(gone)s))"""


def release(run: Callable[..., Any], labels: Sequence[int]) -> int:
    """Delete the vectors of ``labels`` (``run``: a statement in the caller's
    transaction), a node's twins kept under their heir; the rows deleted."""
    gone = [int(x) for x in labels]
    run(_RELEASE, {"gone": gone})
    return int(run("DELETE FROM vectors WHERE label = ANY(%s)", (gone,)).rowcount or 0)


def digests(rows: np.ndarray) -> np.ndarray:
    """Each stored row's digest, as a signed 64-bit integer: the first 8 bytes of the
    BLAKE2b of its float32 words (stored, and compared across machines and versions,
    so not vector_twins' in-process digest). A match is checked (``SAME``)."""
    rows = np.ascontiguousarray(rows, dtype="<f4")
    return np.array(
        [int.from_bytes(hashlib.blake2b(r.tobytes(), digest_size=8).digest(), "little", signed=True)
         for r in rows],
        dtype=np.int64,
    )  # fmt: skip


def _literal(vector: np.ndarray) -> str:
    # repr of each float32 as a double: exact (the cosine is hnswlib's to the last place)
    return "[" + ",".join(map(str, vector.astype(np.float32).tolist())) + "]"


class PgVectors:
    """The vector index of a ``PgStore`` (``store``: typed loosely, so that this module
    and pg_store.py, which makes it, import in one direction only): pgvector HNSW."""

    def __init__(
        self,
        store: Any,
        dim: int,
        *,
        m: int = 16,
        ef_construction: int = 200,
        ef_search: int = 100,
    ) -> None:
        self.store = store
        self.dim = dim
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self._db = store._pg
        self._lock = store._lock
        self._building: threading.Thread | None = None  # the HNSW build under way
        # pgvector's type, operator and operator class by their schema, read again
        # once a name is not found (pg_vector_names.py)
        self.names = PgvectorNames(store)

    @property
    def _expr(self) -> str:
        return f"embedding::{self.names.vec}({int(self.dim)})"

    def open(self, want: VectorsWanted) -> OpenReport:
        """Reconcile the table with the store's embedded chunks (a writer only: a reader
        reads what the writer wrote). Nothing is saved to a file: no checksum to check."""
        if self.store.read_only:
            return OpenReport(loaded=True, rebuilt_reason=None, added=0, removed=0)
        with self._lock:
            name = self._name
            # another model's vectors first (a model change: requeue_all re-queued every
            # chunk): this dimension's index casts every row, and a row of another
            # dimension fails the cast
            for (other,) in self._db.raw(
                "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = 'vectors' "
                "AND (indexname LIKE 'vectors_hnsw_%%' OR indexname LIKE 'vectors_nodes_%%') "
                "AND indexname <> %s",  # hnsw_: of every row (schema 5), before twins
                (self.store.schema, name),
            ).fetchall():
                self._db.raw(f'DROP INDEX IF EXISTS "{other}"')
            wrong = {
                int(r[0])
                for r in self._db.raw(
                    f"SELECT label FROM vectors WHERE {self.names.dims}(embedding) <> %s",
                    (self.dim,),
                ).fetchall()
            }
            if wrong:
                self.delete(wrong)
            stored = {int(r[0]) for r in self._db.raw("SELECT label FROM vectors").fetchall()}
        self._settle(len(stored))  # built now, unless a bulk load is under way
        wanted = {int(x) for x in want.labels}
        extra = stored - wanted
        if extra:
            self.delete(extra)
        missing = sorted(wanted - (stored - extra))
        for start in range(0, len(missing), _BATCH):
            batch = missing[start : start + _BATCH]
            self.add(batch, want.vectors_for(batch))
        return OpenReport(
            loaded=True, rebuilt_reason=None, added=len(missing), removed=len(extra | wrong)
        )

    def add(self, labels: Sequence[int], vectors: np.ndarray) -> None:
        batch = [int(label) for label in labels]
        array = _checked(vectors, len(batch), self.dim)
        if not batch:
            return
        if len(set(batch)) != len(batch):
            raise ValueError("duplicate labels in one add")
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        array = array / norms  # stored normalised, as hnswlib keeps them for cosine
        with self._lock:
            stored = self._stored()
            ahead = self._ahead(stored)  # the lane's queue after this batch (bounded count)
            if self._bulk(len(batch) + ahead, stored) and self._indexed():
                self._db.raw(f"DROP INDEX IF EXISTS {self._name}")
                log.info(
                    "vectors: a bulk load of %d rows; the HNSW index is built after it",
                    len(batch) + ahead,
                )
            keys = digests(array)
            with self._db.deadline(), self._db.committed():
                # an upsert: the labels' old rows go, the new come by binary COPY
                release(self._db.conn.execute, batch)
                nodes = self._nodes(batch, array, keys)
                copy = "COPY vectors(label, embedding, node, digest) FROM STDIN (FORMAT BINARY)"
                with self._db.conn.cursor() as cur, cur.copy(copy) as cp:
                    cp.write(self._copy_rows(batch, array, nodes, keys))
        if not ahead:
            self._settle(None)

    def _nodes(self, labels: Sequence[int], array: np.ndarray, keys: np.ndarray) -> list[int]:
        """Each row's node: -1 for a node, else the label whose vector it is (a node
        stored, or an earlier row of this batch). A digest match counts only when the
        vectors are the same (``SAME``): a collision makes a node, never a wrong twin."""
        found: dict[int, list[int]] = {}
        for key, label in self._db.conn.execute(
            "SELECT digest, label FROM vectors WHERE node IS NULL AND digest = ANY(%s) "
            "ORDER BY label",
            (sorted({int(k) for k in keys}),),
        ).fetchall():
            found.setdefault(int(key), []).append(int(label))
        stored = (
            {  # the candidates' vectors, to check a match
                int(label): np.asarray(json.loads(text), dtype=np.float32)
                for label, text in self._db.conn.execute(
                    "SELECT label, embedding::text FROM vectors WHERE label = ANY(%s)",
                    ([x for xs in found.values() for x in xs],),
                ).fetchall()
            }
            if found
            else {}
        )
        at = {label: i for i, label in enumerate(labels)}  # this batch's rows
        out: list[int] = []
        for i, (label, key) in enumerate(zip(labels, keys, strict=True)):
            node = -1
            for other in found.get(int(key), ()):
                vec = stored[other] if other in stored else array[at[other]]
                if float(vec @ array[i]) > 1.0 - SAME:
                    node = other
                    break
            out.append(node)
            if node == -1:  # a later row of this batch may be its twin
                found.setdefault(int(key), []).append(int(label))
        return out

    def _copy_rows(
        self, labels: Sequence[int], array: np.ndarray, nodes: Sequence[int], keys: np.ndarray
    ) -> bytes:
        """Binary COPY rows (label int8, embedding as pgvector's binary: int16 dim,
        int16 0, float4 each, big-endian; node int8 or NULL; digest int8): exact, and
        no text to format or parse. Nodes and twins in two runs (NULL is a shorter
        field)."""
        head = [("fields", ">i2"), ("n1", ">i4"), ("label", ">i8"), ("n2", ">i4"),
                ("dim", ">i2"), ("unused", ">i2"), ("v", ">f4", (self.dim,))]  # fmt: skip
        out = [_COPY_HEAD]
        node_of = np.asarray(nodes, dtype=np.int64)
        for twins in (False, True):
            pick = np.flatnonzero((node_of >= 0) == twins)
            if not len(pick):
                continue
            middle = [("n3", ">i4"), ("node", ">i8")] if twins else [("n3", ">i4")]
            row = np.dtype([*head, *middle, ("n4", ">i4"), ("digest", ">i8")])
            rows = np.zeros(len(pick), dtype=row)
            rows["fields"], rows["n1"], rows["n2"], rows["dim"] = 4, 8, 4 + 4 * self.dim, self.dim
            rows["n3"], rows["n4"] = (8 if twins else -1), 8
            rows["label"] = np.asarray(labels, dtype=np.int64)[pick]
            rows["v"] = array[pick]
            if twins:
                rows["node"] = node_of[pick]
            rows["digest"] = keys[pick]
            out.append(rows.tobytes())
        return b"".join(out) + _COPY_TAIL

    # -- the HNSW index: built after a bulk load ----------------------------------------

    @property
    def _name(self) -> str:
        return f"vectors_nodes_{int(self.dim)}"

    def _indexed(self) -> bool:
        """Whether this dimension's HNSW index exists (and is valid)."""
        row = self._db.raw(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s "
            "AND c.relname = %s",
            (self.store.schema, self._name),
        ).fetchone()
        return bool(row and row[0])

    def _stored(self) -> int:
        """The rows stored, as the planner knows them (no scan)."""
        return pg_schema.rows(self._db.raw, self.store.schema, "vectors")

    def _ahead(self, stored: int) -> int:
        """Chunks on the lane's queue, counted up to what decides a bulk load (a full
        count of a long queue, every step, would cost more than the step)."""
        cap = max(BULK_ROWS, int(BULK_SHARE * stored) + 1)
        row = self._db.raw("SELECT count(*) FROM (SELECT 1 FROM pending LIMIT %s) q", (cap,))
        return int(row.fetchone()[0])

    @staticmethod
    def _bulk(ahead: int, stored: int) -> bool:
        """Whether ``ahead`` rows to write cost less as a rebuild than row by row."""
        return ahead >= BULK_ROWS and ahead >= BULK_SHARE * stored

    def _settle(self, stored: int | None) -> None:
        """Build the HNSW index if it is missing and no bulk load is under way (the
        lane's queue is short): on a thread and a connection of their own, by ``CREATE
        INDEX CONCURRENTLY`` (no lock that stops a write), so neither this process's
        saves (its engine lock is not held) nor its searches (exact scans meanwhile)
        wait for it; one build at a time. The store's close waits for it (or stops its
        retries)."""
        if self.store.read_only:
            return
        with self._lock:
            if self._building is not None and self._building.is_alive():
                return
            if self._indexed():
                return
            if stored is None:
                (stored,) = self._db.raw("SELECT count(*) FROM vectors").fetchone()
            if self._bulk(self._ahead(int(stored or 0)), int(stored or 0)):
                return  # the lane is loading in bulk: built when its queue drains
            self._building = threading.Thread(
                target=self._build, args=(int(stored or 0),), name="memvault-pg-hnsw"
            )
            self.store.builds[:] = [t for t in self.store.builds if t.is_alive()]
            self.store.builds.append(self._building)
            self._building.start()

    def _build(self, rows: int) -> None:
        """The HNSW index built, tried again (1 s, 2 s ... 30 s apart) after a failure
        (a lost server, a cut deadline) until built or the store closes: nothing
        depends on the index but speed, and no later call may come to build it."""
        pause = 1.0
        said = False
        while not self.store.closing.is_set():
            try:
                self.names.named(lambda: self._build_once(rows))
                return
            except Exception as exc:
                if not said:
                    said = True
                    log.warning(
                        "vectors: the HNSW index is not built yet (%s); searches scan until "
                        "it is, tried again meanwhile",
                        exc,
                    )
            if self.store.closing.wait(pause):
                return
            pause = min(30.0, pause * 2)

    def _build_once(self, rows: int) -> None:
        """The HNSW index built on a session of its own, the server's statement_timeout
        lifted and a deadline grown with the rows. An INVALID index left by a build cut
        short is dropped first (``IF NOT EXISTS`` would keep it)."""
        started = time.monotonic()
        db = self.store.side_session()
        try:
            with db.long(60 + rows / BUILD_ROWS_PER_S):
                # the graph built in memory (pgvector's fast path) while it fits
                mem = min(2048, max(64, rows * (4 * self.dim + 16 * self.m) * 2 // 2**20))
                db.raw(f"SET maintenance_work_mem = '{int(mem)}MB'")
                left = db.raw(
                    "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = "
                    "i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = %s AND c.relname = %s",
                    (self.store.schema, self._name),
                ).fetchone()
                if left is not None and not left[0]:
                    db.raw(f"DROP INDEX CONCURRENTLY IF EXISTS {self._name}")
                db.raw(
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {self._name} ON vectors "
                    f"USING hnsw (({self._expr}) {self.names.ops}) WITH (m = {int(self.m)}, "
                    f"ef_construction = {int(self.ef_construction)}) WHERE node IS NULL"
                )
        finally:
            with suppress(Exception):
                db.close()
        if rows:
            log.info(
                "vectors: HNSW index built over %d rows in %.1f s", rows, time.monotonic() - started
            )

    def delete(self, labels: Iterable[int]) -> int:
        batch = [int(x) for x in labels]
        if not batch:
            return 0
        with self._lock, self._db.deadline(), self._db.committed():
            return release(self._db.conn.execute, batch)

    def compact(self, vectors_for: Callable[[Sequence[int]], np.ndarray]) -> None:
        """Nothing to compact: PostgreSQL's vacuum reclaims deleted rows."""

    def deleted_ratio(self) -> float:
        return 0.0

    def query(
        self, vector: np.ndarray, k: int, allowed: Callable[[int], bool] | None = None
    ) -> list[tuple[int, float]]:
        q = query_vector(vector, self.dim)
        if k <= 0:
            return []
        lit = _literal(q)
        with self._lock:
            return self.names.named(lambda: self._nearest(lit, k, allowed))

    def _nearest(
        self, lit: str, k: int, allowed: Callable[[int], bool] | None
    ) -> list[tuple[int, float]]:
        subset = getattr(allowed, "__self__", None)
        if isinstance(subset, (set, frozenset)):  # a set's membership test: in the SQL
            rows = self._db.raw(
                f"SELECT label, 1 - ({self._expr} {self.names.near} %s::{self.names.vec}) FROM vectors "
                f"WHERE label = ANY(%s) ORDER BY {self._expr} {self.names.near} %s::{self.names.vec}, label LIMIT %s",
                (lit, sorted(subset), lit, k),
            ).fetchall()
            return [(int(a), float(b)) for a, b in rows]
        twins = getattr(self.store, "twins", True)  # a reader of a schema-5 writer: none
        want = k
        while True:
            with self._db.conn.transaction():
                # pgvector refuses an ef_search over 1,000 (a wider look: k past 250)
                ef = min(max(self.ef_search, want), EF_SEARCH_MAX)
                self._db.raw(f"SET LOCAL hnsw.ef_search = {ef}")
                # the nodes (the partial index's rows), each then its twins, at its
                # similarity: one statement, so one snapshot of the two
                rows = self._db.raw(self.search_sql, (lit, want)).fetchall() if twins else [
                    (a, b, None) for a, b in self._db.raw(
                        f"SELECT label, 1 - ({self._expr} {self.names.near} %s::{self.names.vec}) FROM vectors "
                        f"ORDER BY {self._expr} {self.names.near} %s::{self.names.vec} LIMIT %s",
                        (lit, lit, want),
                    ).fetchall()
                ]  # fmt: skip
            out: list[tuple[int, float]] = []
            nodes, last = 0, None
            for node, sim, twin in rows:  # a node's rows in a run, its twins by label
                if node != last:
                    nodes, last = nodes + 1, node
                    if allowed is None or allowed(int(node)):
                        out.append((int(node), float(sim)))
                if twin is not None and (allowed is None or allowed(int(twin))):
                    out.append((int(twin), float(sim)))
            if len(out) >= k or want >= EF_SEARCH_MAX:
                return out[:k]
            # fewer nodes than asked: all there are, or rows deleted or replaced (a
            # note edited) still in the graph until a vacuum, which pgvector's scan
            # looks at within its ef_search and drops after: then a wider look
            if nodes < want and not self._more_nodes(nodes, twins):
                return out[:k]
            want *= 4

    def _more_nodes(self, nodes: int, twins: bool) -> bool:
        """Whether more than ``nodes`` nodes are stored (the rows of the HNSW index; every
        row before twins, schema 5): asked only when a search came back short of them,
        reading ``nodes`` + 1 rows at most (a count of them all read the whole table, ~30
        ms at 100,000 chunks, at each short search of a vault with rows not vacuumed)."""
        where = " WHERE node IS NULL" if twins else ""
        sql = f"SELECT count(*) FROM (SELECT 1 FROM vectors{where} LIMIT %s) n"
        return int(self._db.raw(sql, (nodes + 1,)).fetchone()[0]) > nodes

    @property
    def search_sql(self) -> str:
        """A search's statement (the query's vector, the nodes wanted): the nearest
        nodes by the HNSW index, each with its twins (label, similarity, twin)."""
        return (
            f"WITH n AS (SELECT label, {self._expr} {self.names.near} %s::{self.names.vec} AS d FROM vectors "
            "WHERE node IS NULL ORDER BY d LIMIT %s) "
            "SELECT n.label, 1 - n.d, t.label FROM n LEFT JOIN vectors t "
            "ON t.node = n.label ORDER BY n.d, n.label, t.label"
        )

    def save(self) -> str | None:
        """Committed as written: nothing to save."""
        return None

    @property
    def dirty(self) -> bool:
        return False

    def labels(self) -> set[int]:
        with self._lock:
            return {int(r[0]) for r in self._db.raw("SELECT label FROM vectors").fetchall()}


__all__ = ["PgVectors"]
