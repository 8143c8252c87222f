"""The writer's advisory lock on PostgreSQL (``PgStore.take_writer_lock``): taken, waited
for (a short-lived writer) or refused naming its holder (a daemon), and taken again
after a lost session (``_take_again``); what a reader asks of its writer's schema
(``keyed_as``), followed while it runs (``follow_writer``). Split from pg_store.py (its
size)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from memvault.core.changes import Manifest
from memvault.errors import IndexTooNew, LockHeld
from memvault.index import pg_schema
from memvault.index.pg_conn import host_name, redact

log = logging.getLogger("memvault")


def keyed_as(store: Any, version: int | None) -> None:
    """What a ``PgStore`` asks of an index its writer keeps at schema ``version`` (None:
    this code's, a writer's own): a reader of an older writer's asks as that one keyed
    (no totals before 2, no twins' node column before 6, a CJK run one token before 7,
    no stems nor Han folding before 14); a newer one's is ``IndexTooNew``, refused."""
    if version is not None and version > pg_schema.PG_SCHEMA_VERSION:
        raise pg_schema.too_new(store.schema, version)
    store._totals = version is None or version >= 2
    store.twins = version is None or version >= 6
    store.cjk, store.stems = (version is None or version >= v for v in (7, 14))


def follow_writer(store: Any) -> IndexTooNew | None:
    """A reader's: the schema's version read again, and asked as it is now (``keyed_as``).
    The reader daemon looks every 2 s (service/daemon.py): it read the version once, at
    its start, and a writer upgraded since (another machine's memvault, newer) had keyed
    its rows anew while this one still asked as before: a note in traditional Chinese
    characters, keyed as simplified by schema 14, was no longer found by its words, nor
    a Russian word's other forms, until the reader was restarted (a field test, stop
    56). A version newer than this code's: what an open is refused with, returned (the
    daemon stops on it; a table dropped by hand raises, and is waited out)."""
    if not store.read_only:
        return None
    with store._lock:
        row = store._pg.raw("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    try:
        keyed_as(store, int(row[0]) if row and row[0] else None)
    except IndexTooNew as newer:
        return newer
    return None


# A reader with no daemon (a ``Vault`` opened in a process, the HTTP app beside no
# daemon) reads its writer's schema version again at most this often, before a read
FOLLOW_SECONDS = 2.0


def follow_when_due(store: Any) -> None:
    """Before each read of a read-only store (``_PgSql.before_read``): its writer's
    schema version read again once ``FOLLOW_SECONDS`` passed since the last look
    (``follow_writer``), and ``IndexTooNew`` (``upgrade memvault on this machine``)
    while it is newer than this code's, for every read. An in-process reader read it
    once, at its open: a long-lived Python process holding a ``Vault`` after another
    machine upgraded the writer asked as the old version keyed (a word in traditional
    characters found no more), or answered from tables a newer memvault shapes, without
    a word. One query every 2 s at most, none at all between (bench/pg_follow.py)."""
    if not store.read_only or getattr(store._following, "on", False):  # the look's own
        return
    if time.monotonic() - store._followed_at >= FOLLOW_SECONDS:
        look_now(store)
    newer = store._newer
    if newer is not None:  # (a new one each time: threads raise it at once)
        raise IndexTooNew(str(newer), newer.version, newer.ours)


def look_now(store: Any) -> str | None:
    """``follow_writer`` now (a reader daemon's tick, or ``follow_when_due``), what it
    said kept for the reads until the next look. A server away: the read fails anyway."""
    store._followed_at = time.monotonic()
    # its own query is a read too; this thread's alone: another thread's read meanwhile
    # (the HTTP app's requests) is refused while the last look said newer
    store._following.on = True
    try:
        store._newer = follow_writer(store)
    finally:
        store._following.on = False
    return None if store._newer is None else str(store._newer)


def known(store: Any, paths: Sequence[str]) -> Manifest:
    """``manifest`` of ``paths`` alone, in one query: a reader daemon's look at the notes
    its clone changed (engine/changed_here)."""
    with store._lock:
        return Manifest(
            store._pg.raw(
                "SELECT path, size, mtime_ns, sha256 FROM notes WHERE path = ANY(%s)",
                (list(paths),),
            )
        )


def spelt_otherwise(store: Any, paths: Sequence[str]) -> list[str]:
    """The index's paths that are one of ``paths`` in lower case (PostgreSQL's ``lower``,
    ASCII's alone under the C locale), one query: a note here in another case alone, found
    without the catalogue (a search with no daemon loaded all of it: 2.8 s at 10,000 notes
    for 25 new notes; engine/changed_here)."""
    with store._lock:
        rows = store._pg.raw(
            "SELECT path FROM notes WHERE lower(path) = ANY(%s)", ([p.lower() for p in paths],)
        )
        return [str(r[0]) for r in rows]


def _take_again(store: Any, *, now: bool = True) -> None:
    """After a lost connection a writer's lock session is gone too (the server let
    the lock go): take it again, or ``LockHeld`` if another writer took it meanwhile
    (this process then writes nothing more). The server still away: tried again
    before the next write."""
    if store._retaking:  # its own connection opened again while it takes the lock
        return
    old, store._writer = store._writer, None
    if old is None and not store._wants_lock:
        return
    if old is not None:
        with suppress(Exception):
            old.close()
    if not now:  # its session closed: taken again at the next look (a stalled network)
        return
    store._retaking = True
    try:
        store.take_writer_lock(daemon=store._daemon)  # still a daemon's, for the others
    except LockHeld:  # from now on the server itself refuses this process's writes
        store._wants_lock = False
        store.read_only = True
        reader = store._pg.reopen_read_only
        if reader is not None:
            store._pg.reopen = reader
            with suppress(Exception):
                store._pg.conn.close()
            store._pg.conn = reader()
        raise
    finally:
        store._retaking = False


def _acquire(conn: Any, key: int, wait: float, index: str) -> None:
    """The writer's advisory lock on ``conn``, or ``LockHeld`` naming the holder (``conn``
    closed then): a short-lived writer is waited for up to ``wait`` seconds, saying so
    once; a daemon is refused at once (``PgStore.take_writer_lock``)."""
    deadline = time.monotonic() + wait
    settle = time.monotonic() + 3.0  # a daemon that has the lock and not yet its row
    said = False
    while True:
        (got,) = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        if got:
            return
        row = _writer_row(conn)
        holder = _holder_kind(conn, key)
        if holder == "daemon" and row is None and time.monotonic() < settle:
            time.sleep(0.05)  # two machines' daemons started at once: which host won?
            continue
        who = f"{row[0]} pid {row[1]}" if row else "another process"
        if holder == "daemon" or time.monotonic() >= deadline:
            # a daemon of another machine (the writer's row names it): a daemon
            # starting here may serve as a reader (backends.open_backend)
            elsewhere = holder == "daemon" and row is not None and row[0] != host_name()
            conn.close()
            raise LockHeld(
                f"{index} has a writer already: {who}"
                f"{' (a daemon)' if holder == 'daemon' else ''} "
                "(one writer per vault; open it as a reader)",
                daemon_elsewhere=elsewhere,
            )
        if not said:
            said = True
            log.warning(
                "waiting for %s, which is writing this vault's index in PostgreSQL, to "
                "finish (up to %g s; MEMVAULT_LOCK_WAIT changes it)",
                who,
                wait,
            )
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))


def _writer_row(conn: Any) -> Any:
    """The writer's (host, pid, since), or None (none yet; or no schema yet: the
    holder has the lock and is creating it)."""
    try:
        return conn.execute("SELECT host, pid, since FROM writer").fetchone()
    except Exception:  # psycopg's UndefinedTable on a schema not created yet
        return None


def _holder_kind(conn: Any, key: int) -> str:
    """'daemon' when the session holding the writer's lock is a daemon's, else ''."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    row = conn.execute(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = %s "
        "AND l.objid::bigint = %s AND l.objsubid = 1",
        (unsigned >> 32, unsigned & 0xFFFFFFFF),
    ).fetchone()
    return "daemon" if row and str(row[0]).startswith("memvault daemon ") else ""


def location(store: Any) -> dict[str, Any]:
    """Where ``store`` (a ``PgStore``) lives, who writes it (role none: no one), never the
    password; ``moved_away``: moved back to SQLite (who, when), kept by no one since."""
    held = store.writer()
    return {
        "store": "postgres",
        "dsn": redact(store.dsn),
        "schema": store.schema,
        "role": "writer" if not store.read_only else "reader" if held else "none",
        "writer": None if held is None else {"host": held[0], "pid": held[1], "since": held[2]},
        "moved_away": _moved(store.meta(MOVED_AWAY)),
    }


MOVED_AWAY = "moved_away"  # meta (pg_store.MOVED_AWAY)


def _moved(value: str | None) -> dict[str, Any] | None:
    try:
        moved = json.loads(value or "null")
        return {"host": str(moved["host"]), "at": float(moved["at"])}
    except (ValueError, TypeError, KeyError):
        return None


def moved_away(conn: Any, dsn: str, schema: str) -> None:
    """A reader's open of an index its writer moved back to SQLite (`memvault index move
    --to sqlite`): said, once an open, as a warning. A field test: a reader set to the
    index by ``MEMVAULT_INDEX_STORE`` (which config.toml's change cannot reach) searched
    the abandoned index for good, its notes never again in step, and nothing said so."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = %s", (MOVED_AWAY,)).fetchone()
    except Exception:  # an index of before: no such row, or no meta (said elsewhere)
        return
    moved = _moved(row[0] if row else None)
    if moved is None:
        return
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(moved["at"]))
    log.warning(
        "the index in schema %r at %s was moved back to SQLite by %s (%s): no one keeps it "
        "now, and what it answers is as of then. git pull (.memvault/config.toml says "
        'store = "sqlite") and unset MEMVAULT_INDEX_STORE here; `memvault up` here makes '
        "this copy's index",
        schema,
        redact(dsn),
        moved["host"],
        when,
    )


def refusal(store: Any, *, daemon: bool = False) -> LockHeld:
    """What a write on a reader is told: the writer that holds the lock. With none, how
    to make one: ``memvault up``, or, through a reader daemon (``daemon``: it stays a
    reader, and ``memvault up`` beside it says a daemon runs already), its restart."""
    held = store.writer()
    who = (
        f"its writer is {held[0]} pid {held[1]}; write there"
        if held
        else "it has no writer now: this reader daemon stays a reader; restart it "
        "(`memvault daemon stop`, then `memvault up`) to make this machine the writer"
        if daemon
        else "it has no writer now; run `memvault up` (a writer) to write"
    )
    return LockHeld(
        f"this is a reader of the index in schema {store.schema!r} at {redact(store.dsn)}: "
        f"{who} (the notes travel to it by git or the shared folder)",
        None if held is None else held[1],
    )


__all__ = [
    "_acquire",
    "_holder_kind",
    "_take_again",
    "follow_when_due",
    "follow_writer",
    "keyed_as",
    "known",
    "location",
    "look_now",
    "moved_away",
    "refusal",
    "spelt_otherwise",
]
