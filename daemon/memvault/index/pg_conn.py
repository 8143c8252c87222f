"""The connection to the index's PostgreSQL: ``connect`` (autocommit, the vault's
schema and the catalog alone on the search path, a reader's session read-only in the
server), ``_PgSql`` (the store's ``?`` SQL spoken to psycopg, a deadline on every
statement, a cut or lost connection opened again before the next one) and ``redact``
(a DSN as any message or ``status`` may name it: never its password). ``pg_store.py``
builds the store on it.
"""

from __future__ import annotations

import logging
import math
import os
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit

from memvault.errors import IndexCorrupt, IndexUnavailable
from memvault.index import pg_schema

log = logging.getLogger("memvault")


# a key=value DSN's password (``password=`` and ``sslpassword=``), bare or quoted, with
# libpq's backslash escapes in either (``password=se\ cret`` is ``se cret``)
_SECRET = re.compile(r"(\w*password\s*=\s*)('(?:[^'\\]|\\.)*'|(?:[^\s\\]|\\.)+)")


# a URI's password: libpq reads its credentials from the scheme to the first '@' before
# any '/', the password after their first ':' ('#', '?' and ':' in it as they are); hidden
# up to the last '@' before a '/' (an '@' not written %40 leaves nothing of it shown);
# and a ``password=`` / ``sslpassword=`` of its query
_URI_SECRET = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^@/:]*:)([^/]+)@")
_QUERY_SECRET = re.compile(r"([?&][^=&]*password=)([^&]*)")


def redact(dsn: str) -> str:
    """The DSN without its password (``postgresql://user:***@host/db``; a ``key=value``
    one's ``password=`` and ``sslpassword=`` too), the rest as written (hosts and ports
    of a list, an IPv6 address in brackets). A field test: a password holding ``#`` or
    ``?`` (libpq takes them) was shown whole, and a list of hosts (``h1:5432,h2:5432``,
    libpq's failover) was a traceback."""
    if "://" not in dsn:
        return _SECRET.sub(r"\1***", dsn)
    shown = _URI_SECRET.sub(r"\1***@", dsn, count=1)
    head, mark, query = shown.partition("?")
    return head + mark + _QUERY_SECRET.sub(r"\1***", "?" + query)[1:] if mark else head


def host_name() -> str:
    """The name this machine goes by in the writer's row and its lock session:
    ``MEMVAULT_HOSTNAME`` (a container whose host name changes on each restart), else
    the host name. A daemon becomes a reader only beside a daemon of another host."""
    return os.environ.get("MEMVAULT_HOSTNAME", "").strip() or socket.gethostname()


# The server asks after each session's machine as the client asks after the server's:
# a writer's machine gone without a word (power, network) held its session, and the
# vault's writer lock with it, until the server's kernel keepalive (2 h and more on
# Linux); now ~9 s. TCP only (a unix socket's peer cannot vanish so).
SERVER_KEEPALIVES = (
    " -c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=2"
)


def _settings(dsn: str, timeout: float, statement_ms: int, read_only: bool) -> dict[str, Any]:
    """memvault's connection settings for ``dsn``: those the DSN sets itself are its own
    (a keyword given to psycopg overrode the DSN's: ``keepalives_idle=60`` became 5, and
    ``options=-c work_mem=64MB`` was dropped whole). The server's settings (``options``)
    are memvault's, then the DSN's (or PGOPTIONS'), which win over them, then a reader's
    read-only session, which nothing takes away."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        given = conninfo_to_dict(dsn)
    except psycopg.Error:  # psycopg.connect says what is wrong with it
        given = {}
    theirs = str(given.get("options") or os.environ.get("PGOPTIONS", "")).strip()
    options = (
        f"-c statement_timeout={statement_ms} -c lock_timeout={statement_ms}"
        + SERVER_KEEPALIVES
        + (f" {theirs}" if theirs else "")
        + (" -c default_transaction_read_only=on" if read_only else "")
    )
    ours: dict[str, Any] = {
        "connect_timeout": max(1, math.ceil(timeout)),
        "application_name": f"memvault {host_name()} {os.getpid()}",
        "keepalives": 1,
        "keepalives_idle": 5,
        "keepalives_interval": 2,
        "keepalives_count": 2,
        "tcp_user_timeout": int(timeout * 1000),
    }
    return {"options": options, **{k: v for k, v in ours.items() if k not in given}}


def connect(
    dsn: str, schema: str, *, timeout: float, statement_ms: int, read_only: bool = False
) -> Any:
    """An autocommit psycopg connection whose search_path is the vault's schema and the
    catalog alone (``pg_schema.search_path``: never ``public``, where a team's own tables
    are); a server that cannot be reached, or refuses us, is ``IndexUnavailable``. A
    reader's session is read-only in the server itself: a reader can never write the
    shared index, whatever path its code takes."""
    try:
        import psycopg
    except ImportError:
        raise IndexUnavailable(
            'index.store = "postgres" needs psycopg: pip install "memvault[postgres]"'
        ) from None
    try:
        conn = psycopg.connect(
            dsn, autocommit=True, **_settings(dsn, timeout, statement_ms, read_only)
        )
    except psycopg.Error as exc:
        raise IndexUnavailable(
            f"cannot reach the index at {redact(dsn)}: {_reason(exc, dsn)}"
        ) from None
    try:
        # a reader cannot create pgvector: without it no index is there yet (NotIndexed)
        pg_schema.ensure_vector_extension(conn, create=not read_only)
        conn.execute(f"SET search_path TO {pg_schema.search_path(schema)}")
    except psycopg.Error as exc:
        conn.close()
        raise IndexUnavailable(
            f"{redact(dsn)}: pgvector is not available: {_reason(exc, dsn)}; "
            + _vector_advice(str(exc), read_only)
        ) from None
    return conn


def _not_granted(exc: BaseException, dsn: str, conn: Any) -> IndexUnavailable:
    """A role the schema's owner did not grant it (a field test: a reader's role given
    to a colleague without `GRANT USAGE`: each search was a traceback,
    `InsufficientPrivilege`). The server answered: not said to be away."""
    try:
        role = f"role {conn.info.user!r}"
    except Exception:  # a connection closed meanwhile
        role = "role"
    said = IndexUnavailable(
        f"{redact(dsn)}: {_reason(exc, dsn)}: the {role} memvault connects as is not "
        "granted it. The index's owner grants it: a reader needs GRANT USAGE ON SCHEMA "
        "and GRANT SELECT ON ALL TABLES IN SCHEMA to that role; the writer owns the "
        "schema (CREATE on the database makes it)"
    )
    setattr(said, "answered", True)  # noqa: B010 (the server answered: not away)
    return said


def _vector_advice(why: str, read_only: bool) -> str:
    """What to do when the ``vector`` extension cannot be had (a field test saw only
    PostgreSQL's words: 'permission denied to create extension "vector"')."""
    if "control file" in why or "is not available" in why:
        return "install pgvector on the database server (its package, e.g. postgresql-16-pgvector)"
    if read_only:
        return "the index's writer creates it (memvault up there), or run CREATE EXTENSION vector"
    return (
        "memvault's role may not create it: a superuser runs CREATE EXTENSION vector in "
        "that database once"
    )


def stirred(conn: Any) -> bool:
    """Whether an idle session's socket has something to read, or is gone: the server
    ended it (``pg_terminate_backend``, a restart) or the network's keepalives did. An
    idle session is sent nothing else worth a look; no round trip is made."""
    if conn.closed:
        return True
    try:
        ready, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except (OSError, ValueError, Exception):
        return True
    return bool(ready)


def _reads(sql: str) -> bool:
    """A statement that only reads (asked again on a new connection when the old one
    was found lost: nothing of it can have been done twice)."""
    return sql.lstrip().upper().startswith("SELECT")


def _reason(exc: BaseException, dsn: str) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    for password in passwords(dsn):
        text = text.replace(password, "***")
    return text


def passwords(dsn: str) -> list[str]:
    """The secrets a DSN holds, as written and as libpq reads them (a URI's
    percent-decoded, a key=value one's unquoted), longest first: what no message shows."""
    found: set[str] = set()
    if "://" in dsn:
        with suppress(ValueError):
            found.add(urlsplit(dsn).password or "")
    found.update(m.group(2) for m in _SECRET.finditer(dsn))
    try:
        from psycopg.conninfo import conninfo_to_dict

        found.update(str(v) for k, v in conninfo_to_dict(dsn).items() if k.endswith("password"))
    except Exception:  # psycopg absent, or a DSN libpq cannot read: the text's own
        pass
    return sorted((p for p in found if p and p != "***"), key=len, reverse=True)


def has_password(dsn: str) -> bool:
    """Whether ``dsn`` holds a password (either form): not written to config.toml."""
    return bool(passwords(dsn)) or redact(dsn) != dsn


class CallLock:
    """The store's lock: reentrant, and first come, first served (a thread that comes
    later never goes before one that waits). It keeps when each thread's outermost call
    began waiting for it (``since``): a call that waited behind another that found the
    server away is answered by that failure instead of waiting out a deadline of its
    own (``_PgSql._answered``)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._queue: deque[object] = deque()
        self._local = threading.local()

    def __enter__(self) -> bool:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return True
            self._local.since = time.monotonic()
            ticket = object()
            self._queue.append(ticket)
            try:
                while self._owner is not None or self._queue[0] is not ticket:
                    self._cond.wait()
            except BaseException:
                self._queue.remove(ticket)
                self._cond.notify_all()
                raise
            self._queue.popleft()
            self._owner, self._depth = me, 1
        return True

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._cond.notify_all()

    def since(self) -> float | None:
        """When this thread's call began waiting for the lock (None: it holds none)."""
        return self._local.since if self._owner == threading.get_ident() else None


class _PgSql:
    """A psycopg connection that speaks the store's SQL (``?`` placeholders), with a
    deadline on every statement: a server that stops answering (a stalled network)
    is cut off after ``timeout`` seconds instead of hanging the caller."""

    def __init__(
        self,
        conn: Any,
        dsn: str,
        timeout: float,
        reopen: Callable[[], Any] | None = None,
        after_reopen: Callable[[], None] | None = None,
        reopen_read_only: Callable[[], Any] | None = None,
    ) -> None:
        self.conn = conn
        self.dsn = dsn
        self.timeout = timeout
        self.reopen = reopen  # a new connection, for one cut or lost (None: stays cut)
        self.after_reopen = after_reopen
        self.reopen_read_only = reopen_read_only  # for a writer that lost its lock
        self.before_write: Callable[[], None] | None = None  # a writer's lock looked at
        # a reader's look at its writer's schema version (pg_writer.follow_when_due)
        self.before_read: Callable[[], None] | None = None
        self._reopening = threading.Lock()
        self._sql: dict[str, str] = {}
        self._guard = threading.Lock()
        self._until: dict[int, float] = {}  # thread -> when its statement is late
        self._watchdog: threading.Thread | None = None
        self._stop = threading.Event()
        self._fired = threading.Event()  # the socket was cut: this connection is done
        self.away: tuple[float, str] | None = None  # the last call's IndexUnavailable: when, why
        # when the calling thread's store call began waiting for its turn (CallLock.since)
        self.asked: Callable[[], float | None] = lambda: None

    def _tr(self, sql: str) -> str:
        out = self._sql.get(sql)
        if out is None:
            out = self._sql[sql] = sql.replace("%", "%%").replace("?", "%s")
        return out

    def alive(self, first: bool = False) -> None:
        """A connection that was cut (a statement past its deadline) or lost (the server
        restarted, the network dropped it) is opened again before the next statement,
        so a long-running daemon recovers once the server is back; while it is not,
        each call is ``IndexUnavailable``. What was in flight failed with it: a
        transaction is never carried across. ``first``: a call's first look, which a
        failure found while it waited answers (``_answered``)."""
        came = time.monotonic()
        if first:
            self._answered()
        if self.reopen is None or not (self._fired.is_set() or self.conn.closed):
            return
        with self._reopening:  # one connect at a time: those waiting share its failure
            if first:
                self._answered(came)
            if not (self._fired.is_set() or self.conn.closed):
                return
            with suppress(Exception):
                self.conn.close()
            try:
                self.conn = self.reopen()
            except IndexUnavailable as exc:
                self.note_away(str(exc))
                raise
            self.away = None  # the server answers (what follows in this call asks it)
            self._fired.clear()
            log.warning("the index at %s: connection opened again", redact(self.dsn))
            if self.after_reopen is not None:
                self.after_reopen()

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self.raw(self._tr(sql), tuple(args) if args else None)

    def raw(self, sql: str, args: Sequence[Any] | None = None) -> Any:
        """SQL written for psycopg (``%s``), not translated. A query outside a
        transaction whose connection turns out lost (the server restarted, or its
        session was terminated, while this one sat idle) is asked once more on a new
        one: a reader's first search after a restart was HTTP 503 otherwise. Whether
        the server answered is kept (``away``, ``recently_away``)."""
        try:
            out = self._raw(sql, args)
        except IndexUnavailable as exc:
            if not getattr(exc, "answered", False):  # another call's: its time stays
                self.note_away(str(exc))
            raise
        self.away = None
        return out

    def note_away(self, why: str) -> None:
        """The server found away (by this connection, or the writer's lock session)."""
        self.away = (time.monotonic(), why)

    def cut(self) -> bool:
        """Whether a statement outlived its deadline here (the socket was cut)."""
        return self._fired.is_set()

    def _answered(self, since: float | None = None) -> None:
        """A call that waited for its turn (the store's lock, or this connection's
        reopening) while another found the server away fails at once with that reason:
        a field test's search in a stalled network waited behind the daemon's tick and
        its sync, each waiting out a deadline or a connect, then its own (3 x
        ``timeout``). A call that began after that failure asks again (the server may
        be back)."""
        asked = self.asked()
        since = asked if asked is not None else since
        away = self.away
        if since is not None and away is not None and away[0] >= since:
            exc = IndexUnavailable(away[1])
            setattr(exc, "answered", True)  # noqa: B010
            raise exc

    def recently_away(self) -> str | None:
        """Why the server did not answer, when the last call found it so within
        ``2 * timeout + 2`` seconds (a writer daemon's tick asks every 2 s): status
        says so at once instead of asking again behind the calls that wait out their
        deadline (a field test's status through the daemon in a stalled network gave up
        after 30 s). Past that, or after a call that went through, None: ask."""
        away = self.away
        if away is None or time.monotonic() - away[0] > 2 * self.timeout + 2:
            return None
        return away[1]

    def _raw(self, sql: str, args: Sequence[Any] | None = None) -> Any:
        self.alive(first=True)
        reads = _reads(sql)
        if not reads and self.before_write is not None and self._idle():
            self.before_write()
        if reads and self.before_read is not None:
            self.before_read()
        again = self.reopen is not None and reads and self._idle()
        try:
            with self.deadline():
                return self.conn.execute(sql, args)
        except IndexUnavailable:
            if not again or self._fired.is_set() or not self.conn.broken:
                raise
        self.alive()
        with self.deadline():
            return self.conn.execute(sql, args)

    def _idle(self) -> bool:
        from psycopg.pq import TransactionStatus

        return bool(self.conn.info.transaction_status == TransactionStatus.IDLE)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        if rows:
            self.alive(first=True)
            if self.before_write is not None and self._idle():
                self.before_write()
            with self.deadline(), self.conn.cursor() as cur:
                cur.executemany(self._tr(sql), rows)

    @contextmanager
    def committed(self) -> Iterator[Any]:
        """``conn.transaction()`` that is ``IndexUnavailable`` when it ended without
        COMMIT: psycopg ends a block on a connection gone bad (another thread's call on
        the shared connection failed) without one and without a word, and its writes
        are lost."""
        with self.conn.transaction() as tx:
            yield tx
        if tx.status != tx.Status.COMMITTED:
            said = f"{redact(self.dsn)}: the connection was lost before the commit"
            self.note_away(said)
            raise IndexUnavailable(said)

    @contextmanager
    def deadline(self, seconds: float | None = None) -> Iterator[None]:
        """Shut the socket down when a statement outlives ``timeout`` (the server's
        statement_timeout cannot help when the network between us is what stalls).
        One watchdog thread per connection looks at the statements in flight (a timer
        thread per statement cost more than the statement). ``seconds``: a longer
        deadline for one statement whose work grows with the index (``long``)."""
        import psycopg

        me = threading.get_ident()
        with self._guard:
            nested = me in self._until
            if not nested:
                self._until[me] = time.monotonic() + max(self.timeout, seconds or 0.0)
            if self._watchdog is None:
                self._watchdog = threading.Thread(
                    target=self._watch, name="memvault-pg-deadline", daemon=True
                )
                self._watchdog.start()
        try:
            yield
        except psycopg.Error as exc:
            if self._fired.is_set():
                said = f"the index at {redact(self.dsn)} did not answer within {self.timeout:g} s"
                self.note_away(said)
                raise IndexUnavailable(said) from None
            if isinstance(exc, psycopg.OperationalError):
                said = f"{redact(self.dsn)}: {_reason(exc, self.dsn)}"
                self.note_away(said)
                raise IndexUnavailable(said) from None
            if isinstance(exc, psycopg.errors.InsufficientPrivilege):  # a role not granted
                raise _not_granted(exc, self.dsn, self.conn) from None
            if isinstance(exc, psycopg.errors.UndefinedTable):  # a DROP by hand
                raise IndexCorrupt(
                    f"the index at {redact(self.dsn)} lost a table ({_reason(exc, self.dsn)}; "
                    "dropped by hand?): restart its writer (memvault daemon stop, then "
                    "start), which builds it again from the files"
                ) from None
            raise
        finally:
            if not nested:
                with self._guard:
                    self._until.pop(me, None)

    @contextmanager
    def long(self, seconds: float) -> Iterator[None]:
        """Statements whose work grows with the index (an HNSW build, a re-queue of
        every chunk): the server's statement_timeout is lifted for them and the
        client's deadline is ``seconds`` (never less than ``timeout``); a stalled
        network is still cut then."""
        self.alive()
        with self.deadline(seconds):
            self.conn.execute("SET statement_timeout = 0")
            try:
                yield
            finally:
                with suppress(Exception):
                    self.conn.execute("RESET statement_timeout")

    def _watch(self) -> None:
        while not self._stop.wait(0.1):
            with self._guard:
                late = any(t < time.monotonic() for t in self._until.values())
            if late and not self._fired.is_set():
                self._fired.set()
                with suppress(OSError, Exception):
                    sock = socket.socket(fileno=os.dup(self.conn.pgconn.socket))
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    finally:
                        sock.close()

    def close(self) -> None:
        self._stop.set()
        watchdog = self._watchdog
        if watchdog is not None and watchdog is not threading.current_thread():
            watchdog.join()
        with suppress(Exception):
            self.conn.close()
