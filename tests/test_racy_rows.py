"""A second save in the same clock tick is never missed (git's "racy clean" problem,
engine/racy_rows.py). A note saved, synced, then saved again at the same size within
the file system's tick (exFAT and HFS+ keep whole seconds, FAT two, ext4 a jiffy) keeps
the (size, mtime) its row recorded; taken for unchanged, the second save was missed by
every later sync, ``status``, ``links check``, the daemon and the door until the note
changed again. Here the coarse clock is what ``os.utime`` gives back: the exact mtime
the row recorded. Real files, real SQLite, a real daemon process, the real door."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers import (
    DaemonProcess,
    eventually,
    memvault_env,
    note,
    open_vault,
    rebuilt_snapshot,
    run_memvault,
    snapshot,
    write,
)
from memvault.core.changes import Seen
from memvault.door import VaultDoor
from memvault.index.embedder import HashEmbedder
from memvault.vault.template import init_vault

NOTE = "notes/racy.md"


def first(word: str) -> str:
    return note("Racy", "A note saved twice in one tick", f"The word is {word}.")


def saved(root: Path, text: str) -> Path:
    """The note's first save, its mtime a minute ahead (a file server's clock ahead of
    this machine's): the sync after it looks within the file system's tick of it, as a
    coarse clock's does, however long a loaded machine takes to get there."""
    path = write(root, NOTE, text)
    ahead = time.time_ns() + 60 * 10**9
    os.utime(path, ns=(ahead, ahead))
    return path


def save_in_the_same_tick(path: Path, text: str) -> None:
    """``text`` saved over ``path`` (the same size), its mtime as it was: what a file
    system keeping coarse times gives a save within the tick of the one before."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def found(v: Any, word: str) -> bool:
    return any(word in h.text for h in v.search(word, k=20))


def test_the_pure_rule_keeps_a_row_racy_until_a_look_finds_it_old() -> None:
    from memvault.engine import racy_rows

    looked = 10 * racy_rows.WINDOW_NS
    young, old = looked - racy_rows.WINDOW_NS + 1, looked - racy_rows.WINDOW_NS - 1
    assert racy_rows.is_racy(young, looked) and racy_rows.is_racy(looked + 5, looked)
    assert not racy_rows.is_racy(old, looked)
    after = racy_rows.settled(
        {"a.md", "b.md", "gone.md"},
        looked,
        {"a.md": Seen(1, young), "b.md": Seen(1, old)},
        {"gone.md": None, "new.md": young, "old.md": old},
    )
    assert after == {"a.md", "new.md"}


def racy_vault(tmp_path: Path, before: str = "alpha1", after: str = "bravo2") -> Path:
    """A vault whose note was saved, synced, and saved again in the same tick."""
    root = tmp_path / "vault"
    init_vault(root)
    path = saved(root, first(before))
    with open_vault(root) as v:
        v.sync()
        assert found(v, before)
    save_in_the_same_tick(path, first(after))
    return root


def test_status_in_a_new_process_counts_a_second_save_in_the_same_tick(tmp_path: Path) -> None:
    root = racy_vault(tmp_path)
    status = run_memvault("status", "--json", "--vault", str(root), env=memvault_env(tmp_path))
    assert status.stdout, status.stderr
    index = json.loads(status.stdout)["index"]
    assert index["pending"] == [NOTE] and not index["matches_disk"], index


def test_a_sync_in_a_new_process_indexes_a_second_save_in_the_same_tick(tmp_path: Path) -> None:
    root = racy_vault(tmp_path)
    synced = run_memvault("sync", "--vault", str(root), env=memvault_env(tmp_path))
    assert synced.returncode == 0, synced.stderr
    with open_vault(root) as v:
        assert found(v, "bravo2") and not found(v, "alpha1")
        v.sync()  # and every sync after keeps it
        assert found(v, "bravo2")
        # the row's mtime is the file's (MEMORY.md's orders and "updated" read it), and the
        # index and MEMORY.md are what a fresh index of the same files gives
        row = v.engine.store.note(NOTE)
        assert row is not None and row.mtime_ns == (root / NOTE).stat().st_mtime_ns
        assert snapshot(v) == rebuilt_snapshot(root, tmp_path)
    (copy,) = tmp_path.glob("rebuild-*")
    assert (root / "MEMORY.md").read_bytes() == (copy / "MEMORY.md").read_bytes()


def test_links_check_in_a_new_process_reads_a_racy_note_again(tmp_path: Path) -> None:
    root = racy_vault(tmp_path, "[[Racy]]", "[[Nowh]]")
    checked = run_memvault(
        "links", "check", "--json", "--vault", str(root), env=memvault_env(tmp_path)
    )
    assert checked.stdout, checked.stderr
    problems = json.loads(checked.stdout)["problems"]
    assert [p["target"] for p in problems if p["source"] == NOTE] == ["Nowh"], problems


def test_a_racy_row_is_trusted_once_old_and_an_idle_sync_writes_nothing(tmp_path: Path) -> None:
    from memvault.engine import racy_rows

    root = racy_vault(tmp_path)
    path = root / NOTE
    with open_vault(root) as v:
        assert NOTE in racy_rows.recorded(v.engine.store)  # its row not trusted yet
        v.sync()
        assert found(v, "bravo2")
        old = time.time_ns() - 60 * 10**9  # a minute old: trusted at the next look
        os.utime(path, ns=(old, old))
        v.sync()
        assert NOTE not in racy_rows.recorded(v.engine.store)
        files = [root / ".memvault" / n for n in ("index.db", "index.db-wal")]
        before = [(f.stat().st_mtime_ns, f.stat().st_size) for f in files]
        v.sync()  # a row still racy (MEMORY.md, just written) is hashed again, not written
        assert [(f.stat().st_mtime_ns, f.stat().st_size) for f in files] == before


def test_the_door_kept_vault_sees_a_second_save_in_the_same_tick(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    with open_vault(root) as v:
        v.sync()
    door = VaultDoor(root, {"embedder": HashEmbedder()})
    try:
        door.run(lambda v: None, "read")
        path = saved(root, first("alpha1"))
        assert door.run(lambda v: found(v, "alpha1"), "read")
        save_in_the_same_tick(path, first("bravo2"))
        assert door.run(lambda v: found(v, "bravo2"), "read")
        assert door.run(lambda v: found(v, "bravo2"), "read")  # and at every call after
    finally:
        door.close()


def test_the_daemon_indexes_a_second_save_in_the_same_tick(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    daemon = DaemonProcess(tmp_path, root)
    try:
        info = daemon.ready(answering=True)
        path = saved(root, first("alpha1"))
        url, headers = (
            f"http://127.0.0.1:{info['port']}",
            {"Authorization": f"Bearer {info['token']}"},
        )

        def has(word: str) -> bool:
            got = httpx.post(
                f"{url}/search", json={"query": word, "k": 20}, headers=headers, trust_env=False
            )
            got.raise_for_status()
            return any(word in h["text"] for h in got.json()["hits"])

        eventually(lambda: has("alpha1"), 60, "the first save indexed")
        save_in_the_same_tick(path, first("bravo2"))
        eventually(lambda: has("bravo2"), 30, "the second save indexed")
    finally:
        daemon.stop()


def test_a_teams_writer_on_postgresql_indexes_a_second_save_in_the_same_tick(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The racy rows kept in the team's index (a real pgserver PostgreSQL): the writer's
    status names the note, its next sync (a new process's Vault) indexes it."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = racy_vault(tmp_path)
    with open_vault(root) as v:
        assert v.status()["index"]["pending"] == [NOTE]
        v.sync()
        assert found(v, "bravo2") and not found(v, "alpha1")
        assert v.status()["index"]["pending"] == []


def test_a_save_let_in_while_a_long_sync_steps_aside_stays_racy(tmp_path: Path) -> None:
    """A reconcile steps aside between its batches (Applier.long_syncs); an agent's save
    let in meanwhile syncs its note and keeps its row racy. The reconcile's own keeping
    of the racy rows at its end (from the list it read at its start) must not drop it:
    else a second save of that note in the same tick is missed for good."""
    from memvault.engine import racy_rows

    root = tmp_path / "vault"
    init_vault(root)
    old = time.time_ns() - 3600 * 10**9
    for i in range(450):  # past one batch: a long sync, stepping aside
        p = write(root, f"notes/old/n{i}.md", note(f"Old {i}", "old", f"old note {i}"))
        os.utime(p, ns=(old, old))
    let_in: list[str] = []
    with open_vault(root) as v:
        engine = v.engine

        def between(_: Any) -> None:  # a batch done, the lock let go
            if not let_in and engine._lock._owner is None:
                let_in.append(NOTE)
                saved(root, first("alpha1"))
                engine.sync(paths=[NOTE], vectors=False)
                assert NOTE in racy_rows.recorded(engine.store)

        v.sync(progress=between)
        assert let_in, "the long sync never stepped aside"
        assert NOTE in racy_rows.recorded(engine.store)
        save_in_the_same_tick(root / NOTE, first("bravo2"))
        v.sync()
        assert found(v, "bravo2") and not found(v, "alpha1")


def test_status_asked_again_in_one_process_counts_a_second_save_in_the_same_tick(
    tmp_path: Path,
) -> None:
    """A daemon's /status is asked again and again in one process, which remembers the
    hashes it read by file and stat (status.differing): a racy note's hash read before
    its second save in the same tick must not be taken for the file's after it."""
    root = tmp_path / "vault"
    init_vault(root)
    path = saved(root, first("alpha1"))
    with open_vault(root) as v:
        v.sync()
        assert v.status()["index"]["pending"] == []  # its hash read, the same as the row's
        save_in_the_same_tick(path, first("bravo2"))
        assert v.status()["index"]["pending"] == [NOTE]


class _AwayAfterStart(HashEmbedder):
    """The model's process away once the vault is indexed (``ModelAway``: stopped,
    silent, killed and resting, index/child_watch.py)."""

    away = False

    def embed(self, texts: Any) -> Any:
        from memvault.errors import ModelAway

        if self.away:
            raise ModelAway("the model's process is away (test)")
        return super().embed(texts)


def test_a_sync_whose_vector_step_fails_keeps_the_racy_rows_its_structure_wrote(
    tmp_path: Path,
) -> None:
    """``memvault sync`` through a daemon whose model's process is away: the structure
    lane's rows were written, then the vector step raised; the racy list was settled
    only after it, so the note's row was trusted and a second save in its tick missed."""
    from memvault.engine import racy_rows
    from memvault.errors import ModelError

    root = tmp_path / "vault"
    init_vault(root)
    embedder = _AwayAfterStart()
    with open_vault(root, embedder=embedder) as v:
        v.sync()
        embedder.away = True
        path = saved(root, first("alpha1"))
        with pytest.raises(ModelError):
            v.sync()  # vectors too, as `memvault sync` asks
        assert NOTE in racy_rows.recorded(v.engine.store)
        save_in_the_same_tick(path, first("bravo2"))
        v.sync(vectors=False)
        assert found(v, "bravo2")  # (by keywords: the model's process still away)
