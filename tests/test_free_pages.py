"""index.db gives its free pages back to the disk (issue 27: bytes ``.memvault/`` holds
for nothing): a new index is made incremental, the pages go back when the vector
queue empties and after bulk work, in steps; a kill meanwhile leaves a valid index
whose answers are the same (``PendingQueue.reclaim``)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import new_vault, open_vault, run_namespaced, sqlite_pages, write
from memvault.index import integrity
from memvault.index.store import Store


def test_a_new_index_is_made_incremental_so_no_vacuum_rewrites_it(tmp_path: Path) -> None:
    """``auto_vacuum`` set after the switch to WAL was silently ignored (the switch
    writes the header): every new index was made without it, and its first reclaim
    rewrote the whole file (a VACUUM of 780 MB at 100,000 notes)."""
    index = tmp_path / "index.db"
    Store(index, tmp_path / "cache.db").close()
    with sqlite3.connect(index) as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_the_wal_of_a_large_transaction_is_cut_back_at_the_next_write(tmp_path: Path) -> None:
    """A WAL stays as large as the largest transaction written through it while the
    connection is open (a daemon's: until it stops): a VACUUM of a 100,000-note index
    left 845 MB beside it. The next write after a checkpoint cuts it to 16 MB."""
    index = tmp_path / "index.db"
    wal = Path(f"{index}-wal")
    store = Store(index, tmp_path / "cache.db")
    try:
        with store.transaction() as conn:  # a new model's re-queue: one transaction
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 8000) for n in range(1, 5001)), 1.0)
        assert wal.stat().st_size > 32 << 20
        store.set_meta("after", "a small write")
        assert wal.stat().st_size <= 16 << 20, wal.stat().st_size
    finally:
        store.close()


@pytest.mark.parametrize("made_before", [False, True])
def test_an_index_that_gave_its_pages_back_is_trusted_by_the_next_open(
    tmp_path: Path, made_before: bool
) -> None:
    """The pages given back are this process's own writes: its close stamps the file,
    so the next command with no daemon opens it without reading it whole (quick_check)."""
    index = tmp_path / "index.db"
    if made_before:  # as an older memvault made it: no auto_vacuum, converted by VACUUM
        _made_before(index, kept=12_000)  # past 1,000 pages: the VACUUM's commit checkpoints
    store = Store(index, tmp_path / "cache.db")
    try:
        labels = list(range(1, 1001))
        with store.transaction() as conn:
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in labels), 1.0)
        store.finish_pending(labels)
        assert sqlite_pages(index)[1] * 4096 < 256 << 10  # given back
    finally:
        store.close()
    assert integrity.unchanged(index)
    trusted = Store(index, tmp_path / "cache.db", trusting=True)
    assert not trusted.checked
    trusted.close()


def _made_before(index: Path, kept: int) -> None:
    """index.db as an older memvault made it (no ``auto_vacuum``), ``kept`` rows of
    ~500 bytes in meta."""
    Store(index, index.with_name("cache.db")).close()
    conn = sqlite3.connect(index, isolation_level=None)
    try:
        with conn:
            conn.execute("BEGIN")
            conn.executemany(
                "INSERT INTO meta(key, value) VALUES(?, ?)",
                [(f"kept {n}", f"value {n} " * 50) for n in range(kept)],
            )
        conn.execute("PRAGMA auto_vacuum = NONE")
        conn.execute("VACUUM")
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    finally:
        conn.close()


def _short_notes(root: Path, folder: str, count: int) -> None:
    for n in range(count):
        words = " ".join(f"w{(n * 7 + i) % 997}" for i in range(60))
        write(root, f"{folder}/note {n}.md", f"# Note {n}\n\n{words}\n")


def test_a_short_note_index_gives_back_the_queue_it_held_under_a_fifth_of_the_file(
    tmp_path: Path,
) -> None:
    """A first index of short notes left its queue's texts free for good: 1.26 MB, a
    fifth of a 6.48 MB index.db at 3,000 notes, was just under the share reclaim asked
    for. Now past 256 KB they go back, whatever their share of the file."""
    index = tmp_path / "index.db"
    store = Store(index, tmp_path / "cache.db")
    try:
        filler = "y" * 2000  # rows the queue is a small share of
        with store.transaction() as conn:
            conn.executemany(
                "INSERT INTO meta(key, value) VALUES(?, ?)",
                [(f"filler {n}", filler) for n in range(2000)],
            )
        labels = list(range(1, 201))
        with store.transaction() as conn:
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in labels), 1.0)
        full, _ = sqlite_pages(index)
        store.finish_pending(labels)
        pages, free = sqlite_pages(index)
        assert store.pending_state()[0] == 0
        assert pages <= full - 140 and free < 64, (full, pages, free)  # ~150 pages back
    finally:
        store.close()


def test_a_full_sync_after_a_folder_is_deleted_gives_its_pages_back(tmp_path: Path) -> None:
    """Deleting notes queues nothing, so the queue never emptied after it: the pages of a
    deleted folder's rows stayed free. A full sync ends by giving them back."""
    root = new_vault(tmp_path)
    _short_notes(root, "keep", 50)
    _short_notes(root, "gone", 400)
    index = root / ".memvault" / "index.db"
    with open_vault(root) as v:
        v.sync()
        before, _ = sqlite_pages(index)
        for path in (root / "gone").iterdir():
            path.unlink()
        (root / "gone").rmdir()
        v.sync()
        pages, free = sqlite_pages(index)
        assert free * 4096 < 256 << 10, free
        assert pages < before * 0.6, (before, pages)
        found = {h.path for h in v.search("w3 w10", k=100)}
        assert found and all(p.startswith("keep/") for p in found), found


def test_the_daemon_gives_a_deleted_folders_pages_back_after_its_bulk_work(
    tmp_path: Path,
) -> None:
    """A daemon syncs a deleted folder as a batch of its paths (no full sync): its pages
    go back once the vault is quiet after the bulk work (``Engine.compact_caches``)."""
    root = new_vault(tmp_path)
    _short_notes(root, "keep", 50)
    _short_notes(root, "gone", 400)
    index = root / ".memvault" / "index.db"
    with open_vault(root) as v:
        v.sync()
        for path in (root / "gone").iterdir():
            path.unlink()
        (root / "gone").rmdir()
        v.sync(["gone"], vectors=False)
        before, free = sqlite_pages(index)
        assert free * 4096 >= 256 << 10  # the batch's own sync keeps them, for now
        v.engine.compact_caches()
        pages, free = sqlite_pages(index)
        assert free * 4096 < 256 << 10 and pages < before, (before, pages, free)


@pytest.mark.parametrize("by", ["the vector lane", "a full sync"])
def test_the_pages_go_back_outside_the_engines_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by: str
) -> None:
    """The lane took the queue's last chunks off under the engine's lock, and the
    reclaim ran inside that (a full sync's too): a save waited for all of it (25 s at
    100,000 notes), not one step. Now it runs once the lock is let go."""
    root = new_vault(tmp_path)
    _short_notes(root, "notes", 30)
    with open_vault(root) as v:
        v.sync(vectors=False)
        assert v.engine.pending_vectors()[0] > 0
        if by == "a full sync":
            v.engine.embed_pending()
        store, lock = v.engine.store, v.engine._lock
        reclaim, free_then = store.reclaim, []

        def watched() -> int:  # the real reclaim, and whether a save could go on meanwhile
            other = threading.Thread(target=_take, args=(lock,))
            other.start()
            other.join(timeout=2)  # a save's turn: taken at once, or not while we wait
            free_then.append(not other.is_alive())
            return reclaim()

        monkeypatch.setattr(store, "reclaim", watched)
        v.sync() if by == "a full sync" else v.engine.embed_pending()
        assert v.engine.pending_vectors()[0] == 0
        assert free_then and all(free_then), free_then


def _take(lock: Any) -> None:
    with lock:
        pass


_CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from memvault.index.store import Store
    store = Store(Path(sys.argv[1]), Path(sys.argv[2]))
    with store.transaction() as conn:
        conn.execute("DELETE FROM pending")  # the queue's texts, now free pages
    print("reclaiming", flush=True)
    store.reclaim()
    print("done", flush=True)
    store.close()
    """
)


def _killed_while_reclaiming(index: Path, cache: Path, delay: float, kept: list[Any]) -> Store:
    """Run ``_CHILD`` (empty the queue, reclaim) in a real process, kill -9 it ``delay``
    seconds into its reclaim, and open the index again: whole (integrity_check), its
    meta rows as ``kept``, the queue empty. The caller closes the store returned."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    with subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(index), str(cache)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "reclaiming"
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
    store = Store(index, cache)  # checked on open (quick_check)
    try:
        assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert store._db.execute("SELECT key, value FROM meta ORDER BY key").fetchall() == kept
        assert store.pending_state()[0] == 0
    except BaseException:
        store.close()
        raise
    return store


@pytest.mark.parametrize("delay", [0.0, 0.3, 1.0])
def test_a_kill_during_the_reclaim_leaves_a_valid_index_with_the_same_rows(
    tmp_path: Path, delay: float
) -> None:
    """kill -9 of a process giving free pages back, at a few moments: the next open
    finds the file whole (integrity_check) and every row as it was. Each step is a
    transaction: a kill keeps the steps done, loses none (a reclaim of these 47 MB
    takes ~2 s, so the kills land before, inside and between its steps)."""
    index, cache = tmp_path / "index.db", tmp_path / "cache.db"
    store = Store(index, cache)
    try:
        with store.transaction() as conn:
            conn.executemany(
                "INSERT INTO meta(key, value) VALUES(?, ?)",
                [(f"kept {n}", f"value {n} " * 50) for n in range(3000)],
            )
            store.add_pending(
                conn, ((n, f"{n:064x}", f"text {n} " * 800) for n in range(1, 6001)), 1.0
            )
        kept = store._db.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
    finally:
        store.close()
    full, _ = sqlite_pages(index)
    store = _killed_while_reclaiming(index, cache, delay, kept)
    try:
        store.reclaim()  # what the kill left is given back by the next one
    finally:
        store.close()
    pages, free = sqlite_pages(index)
    assert free * 4096 < 256 << 10 and pages < full / 2, (full, pages, free)


@pytest.mark.parametrize("delay", [0.0, 0.2, 0.6])
def test_a_kill_during_an_older_indexs_conversion_leaves_it_valid_with_the_same_rows(
    tmp_path: Path, delay: float
) -> None:
    """kill -9 of a process converting an older index (no ``auto_vacuum``) by its one
    ``VACUUM``: the rewrite is one transaction, so the next open finds the old file or
    the new one, whole, with every row; the next reclaim converts what a kill left."""
    index, cache = tmp_path / "index.db", tmp_path / "cache.db"
    _made_before(index, kept=60_000)  # ~35 MB kept: the rewrite takes a while
    store = Store(index, cache)
    try:
        with store.transaction() as conn:
            store.add_pending(
                conn, ((n, f"{n:064x}", f"text {n} " * 800) for n in range(1, 3001)), 1.0
            )
        kept = store._db.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
    finally:
        store.close()
    store = _killed_while_reclaiming(index, cache, delay, kept)
    try:
        store.reclaim()
        assert store._db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    finally:
        store.close()
    assert sqlite_pages(index)[1] * 4096 < 256 << 10


def test_an_older_large_index_says_it_is_rewritten_before_searches_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Converting an older index is one VACUUM under the store's lock: a search waits for
    all of it (519 MB: 3.3 s idle; 1.2 GB: ~50 s loaded, past a daemon client's 30 s),
    silently before. Past ``_CONVERT_SMALL`` it is said first (stderr, the daemon's log);
    a small one's rewrite, well under a second, is not."""
    from memvault.index import pending_queue

    monkeypatch.setattr(pending_queue, "_CONVERT_SMALL", 2 << 20)  # else 64 MB to write
    index = tmp_path / "index.db"
    _made_before(index, kept=6000)  # ~3.5 MB
    store = Store(index, tmp_path / "cache.db")
    try:
        labels = list(range(1, 601))
        with store.transaction() as conn:
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in labels), 1.0)
        with caplog.at_level("WARNING", logger="memvault"):
            store.finish_pending(labels)
        assert store._db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    finally:
        store.close()
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(said) == 1 and "rewriting" in said[0], said
    assert "(5 MB)" in said[0] and "its 2 MB of free pages" in said[0], said


_READ_ONLY = textwrap.dedent(
    """
    import json, logging, sys
    from pathlib import Path
    from memvault.index import pending_queue
    from memvault.index.store import Store
    pending_queue._CONVERT_SMALL = 2 << 20  # else 64 MB to write
    said = []
    logging.getLogger("memvault").addHandler(logging.Handler())
    logging.getLogger("memvault").handlers[-1].emit = lambda r: said.append(r.getMessage())
    index = Path(sys.argv[1])
    store = Store(index, index.with_name("cache.db"), trusting=True)
    given = store.reclaim()
    store.close()
    print(json.dumps({"given": given, "said": said}))
    """
)


def test_an_older_index_that_cannot_be_written_is_left_as_it_is_and_says_nothing(
    tmp_path: Path,
) -> None:
    """index.db of mode 0444 (its owner's, read by another user): a full sync that
    changed nothing writes nothing, and the reclaim after it cannot convert the file.
    Nothing is written and no warning of a rewrite that will not happen is given at
    every command (the VACUUM fails; ``log.info`` only)."""
    index = tmp_path / "state" / "index.db"
    index.parent.mkdir()
    _made_before(index, kept=6000)
    store = Store(index, index.with_name("cache.db"))
    try:
        labels = list(range(1, 601))
        with store.transaction() as conn:
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in labels), 1.0)
            conn.execute("DELETE FROM pending")
    finally:
        store.close()
    before = index.read_bytes()
    index.chmod(0o444)
    for path in (tmp_path, index.parent):  # the user may make -shm beside it, not write it
        path.chmod(0o777)
    as_a_user = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
    out = run_namespaced(as_a_user, _READ_ONLY, str(index))
    assert out == {"given": 0, "said": []}, out
    assert index.read_bytes() == before


class _Paused(sqlite3.Connection):
    """A real SQLite connection whose first ``VACUUM`` of index.db stops midway (SQLite's
    own progress handler) until ``release`` is set; ``inside`` says it stopped."""

    inside = threading.Event()
    release = threading.Event()

    def __init__(self, database: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(database, *args, **kwargs)
        self._index = str(database).endswith("index.db")

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        if sql == "VACUUM" and self._index and not _Paused.inside.is_set():
            self.set_progress_handler(self._hold, 1000)
        return super().execute(sql, *args)

    def _hold(self) -> int:
        if not _Paused.inside.is_set():
            _Paused.inside.set()
            _Paused.release.wait(30)
        return 0


def _within(seconds: float, call: Any) -> list[Any]:
    """``call()`` in a thread: what it returned within ``seconds`` ([]: still waiting)."""
    got: list[Any] = []
    thread = threading.Thread(target=lambda: got.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    return got


def test_a_search_does_not_wait_for_an_older_indexs_conversion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conversion of an older index (its one VACUUM: ~50 s for 1.2 GB on a loaded
    machine) held the store's lock: a search in the same process (a daemon's, after its
    start-up reconcile) waited for all of it, past the daemon client's 30 s. Now it runs
    on a connection of its own: a read meanwhile answers from the index as it was (the
    same rows), while a write of this process waits for it and then lands."""
    index = tmp_path / "index.db"
    _made_before(index, kept=6000)
    real = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: real(*a, **k, factory=_Paused))
    _Paused.inside.clear()
    _Paused.release.clear()
    store = Store(index, tmp_path / "cache.db")
    try:
        with store.transaction() as conn:
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in range(1, 601)), 1.0)
            conn.execute("DELETE FROM pending")
        converting = threading.Thread(target=store.reclaim, daemon=True)
        converting.start()
        assert _Paused.inside.wait(10), "the VACUUM never ran"
        try:
            read = _within(5, lambda: store.meta("kept 7"))
            assert read == ["value 7 " * 50], "a read waited for the conversion"
            written = _within(0.5, lambda: store.set_meta("during", "a save's row"))
            assert written == []  # a write waits for it (SQLite's lock is the VACUUM's)
        finally:
            _Paused.release.set()
        converting.join(30)
        assert not converting.is_alive()
        assert store._db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        deadline = time.monotonic() + 10
        while store.meta("during") is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.meta("during") == "a save's row"
        assert store.meta("kept 5999") == "value 5999 " * 50
        assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        _Paused.release.set()
        store.close()
    assert sqlite_pages(index)[1] * 4096 < 256 << 10


def test_a_command_with_no_daemon_answers_without_converting_an_older_index(
    tmp_path: Path,
) -> None:
    """A search with no daemon syncs first, and the sync's reclaim converted an older
    index there and then: the answer waited for a rewrite of the whole file (a minute
    at 1.2 GB loaded). A read's open leaves it to a daemon or a whole sync asked for
    (``memvault sync``), which converts it."""
    root = new_vault(tmp_path)
    _short_notes(root, "notes", 40)
    index = root / ".memvault" / "index.db"
    with open_vault(root) as v:
        v.sync()
    conn = sqlite3.connect(index, isolation_level=None)
    try:  # as an older memvault left it: no auto_vacuum, a third of it free
        conn.execute("PRAGMA auto_vacuum = NONE")
        conn.execute("VACUUM")
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES(?, ?)",
            [(f"x {n}", "x" * 3000) for n in range(800)],
        )
        conn.execute("COMMIT")
        conn.execute("DELETE FROM meta WHERE key LIKE 'x %'")
    finally:
        conn.close()
    pages, free = sqlite_pages(index)
    assert free > 0.2 * pages
    with open_vault(root, mode="query") as v:
        assert v.search("w3 w10", k=5)
    with sqlite3.connect(index) as check:
        assert check.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    assert sqlite_pages(index)[1] >= free
    with open_vault(root) as v:
        v.sync()
    with sqlite3.connect(index) as check:
        assert check.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    assert sqlite_pages(index)[1] * 4096 < 256 << 10


def test_damage_an_older_indexs_conversion_meets_is_said_as_damage(tmp_path: Path) -> None:
    """The conversion's VACUUM reads every page: damage an open trusting the file's
    stamp never read is met there. Held under the store's lock it was ``IndexCorrupt``
    (the next open checks and rebuilds) and the file's stamp forgotten; on a connection
    of its own it must be the same, not a bare ``sqlite3.DatabaseError`` with the stamp
    still vouching for the file."""
    from memvault.errors import IndexCorrupt

    index = tmp_path / "index.db"
    _made_before(index, kept=6000)
    with sqlite3.connect(index) as conn:
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'meta'").fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    store = Store(index, tmp_path / "cache.db")
    try:
        with store.transaction() as conn:
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in range(1, 601)), 1.0)
            conn.execute("DELETE FROM pending")
        with store._lock:
            store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        with open(index, "r+b") as raw:  # meta's root page: no b-tree page type
            raw.seek((root - 1) * size)
            raw.write(b"\x00" * 8)
        with pytest.raises(IndexCorrupt):
            store.reclaim()
        assert store._guard.damaged
    finally:
        store.close()
    assert not integrity.unchanged(index)  # no stamp vouches for it: the next open checks


def test_searches_and_writes_from_many_threads_beside_a_real_conversion(tmp_path: Path) -> None:
    """Threads reading and writing the store while an older index's real VACUUM runs
    (slowed by SQLite's progress handler, not paused): no read waits for it, no write is
    lost or fails (they wait for it: SQLite's lock is the VACUUM's), nothing deadlocks,
    and the file is whole and incremental after."""
    index = tmp_path / "index.db"
    _made_before(index, kept=6000)
    store = Store(index, tmp_path / "cache.db")
    slow = threading.Event()
    real = sqlite3.connect

    def slowed(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real(*args, **kwargs)
        if str(args[0]).endswith("index.db"):  # the conversion's own connection
            conn.set_progress_handler(lambda: bool(slow.set()) or time.sleep(0.01), 2000)
        return conn

    errors: list[BaseException] = []
    reads: list[float] = []
    done = threading.Event()

    def reader(n: int) -> None:
        while not done.is_set():
            started = time.monotonic()
            try:
                assert store.meta(f"kept {n * 97}") == f"value {n * 97} " * 50
                store.pending_state()
            except BaseException as exc:
                errors.append(exc)
                return
            reads.append(time.monotonic() - started)

    def writer(n: int) -> None:
        try:
            for i in range(20):
                store.set_meta(f"w {n} {i}", "a save")
                with store.transaction() as conn:
                    store.add_pending(conn, [(10_000 * (n + 1) + i, f"{i:064x}", "t")], 1.0)
        except BaseException as exc:
            errors.append(exc)

    try:
        with store.transaction() as conn:
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in range(1, 601)), 1.0)
            conn.execute("DELETE FROM pending")
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(sqlite3, "connect", slowed)
            converting = threading.Thread(target=store.reclaim, daemon=True)
            converting.start()
            assert slow.wait(10), "the VACUUM never ran"
        threads = [threading.Thread(target=reader, args=(n,), daemon=True) for n in range(3)]
        threads += [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(3)]
        for thread in threads:
            thread.start()
        converting.join(120)
        assert not converting.is_alive(), "the conversion never ended (a deadlock?)"
        for thread in threads[3:]:
            thread.join(60)
            assert not thread.is_alive(), "a write never landed (a deadlock?)"
        done.set()
        for thread in threads[:3]:
            thread.join(10)
        assert not errors, errors
        assert reads
        assert store._db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        for n in range(3):
            for i in range(20):
                assert store.meta(f"w {n} {i}") == "a save"
        assert store.pending_state()[0] == 60
        assert store.meta("kept 5999") == "value 5999 " * 50
        assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        done.set()
        store.close()


def test_a_close_while_an_older_index_converts_rolls_it_back_whole(tmp_path: Path) -> None:
    """The daemon stopping mid-conversion: its close interrupts the VACUUM (rolled back,
    converted the next time), waits for nothing more, and the file keeps every row."""
    index = tmp_path / "index.db"
    _made_before(index, kept=6000)
    real = sqlite3.connect
    _Paused.inside.clear()
    _Paused.release.clear()
    store = Store(index, tmp_path / "cache.db")
    converting = threading.Thread(target=store.reclaim, daemon=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sqlite3, "connect", lambda *a, **k: real(*a, **k, factory=_Paused))
        with store.transaction() as conn:
            store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in range(1, 601)), 1.0)
            conn.execute("DELETE FROM pending")
        converting.start()
        assert _Paused.inside.wait(10), "the VACUUM never ran"
    closing = threading.Thread(target=store.close, daemon=True)
    closing.start()
    time.sleep(0.2)
    _Paused.release.set()  # the handler returns: the interrupt is seen at its next call
    closing.join(30)
    converting.join(30)
    assert not closing.is_alive() and not converting.is_alive()
    with sqlite3.connect(index) as check:
        assert check.execute("PRAGMA auto_vacuum").fetchone()[0] == 0  # the next time
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert (
            check.execute("SELECT COUNT(*) FROM meta WHERE key LIKE 'kept %'").fetchone()[0] == 6000
        )
    check.close()
    store = Store(index, tmp_path / "cache.db")
    try:
        assert store.reclaim() > 0
        assert store._db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    finally:
        store.close()


def test_two_reclaims_at_once_convert_an_older_index_once(tmp_path: Path) -> None:
    """The daemon's vector lane (its queue emptied) and its quiet after bulk work both
    reclaim: the second, having found the file not converted yet, waited for the first's
    VACUUM and then ran a second one, the whole file rewritten again while every write
    waited (a minute more at 1.2 GB). Under the write gate it looks again."""
    index = tmp_path / "index.db"
    _made_before(index, kept=6000)
    real = sqlite3.connect
    vacuums: list[str] = []

    class Counted(_Paused):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
            if sql == "VACUUM":
                vacuums.append(sql)
            return super().execute(sql, *args)

    _Paused.inside.clear()
    _Paused.release.clear()
    store = Store(index, tmp_path / "cache.db")
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(sqlite3, "connect", lambda *a, **k: real(*a, **k, factory=Counted))
            with store.transaction() as conn:
                store.add_pending(conn, ((n, f"{n:064x}", "x" * 3000) for n in range(1, 601)), 1.0)
                conn.execute("DELETE FROM pending")
            first = threading.Thread(target=store.reclaim, daemon=True)
            first.start()
            assert _Paused.inside.wait(10), "the VACUUM never ran"
            second = threading.Thread(target=store.reclaim, daemon=True)
            second.start()
            second.join(0.5)  # it found the file as it was and waits for the gate
            _Paused.release.set()
            first.join(30)
            second.join(30)
        assert not first.is_alive() and not second.is_alive()
        assert vacuums == ["VACUUM"]
        assert store._db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    finally:
        _Paused.release.set()
        store.close()
