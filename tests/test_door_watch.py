"""A vault kept open by the door between an adapter's calls holds a watcher
(service/door_watch.py): a call syncs only what changed since the last one, and answers
exactly as a vault opened fresh for it would. Real watchdog observer, real files, real
SQLite, git where a pull is the change."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import gc
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from watchdog.observers import inotify_c

from helpers import note, write
from memvault import door as door_module
from memvault.api import Vault
from memvault.door import VaultDoor
from memvault.index.embedder import HashEmbedder
from memvault.service import door_watch, observers
from memvault.service.door_watch import DoorWatch
from memvault.vault.template import init_vault


def structure(v: Vault) -> dict[str, Any]:
    """What the index holds of the notes (no vectors: a kept vault's are pending)."""
    store = v.engine.store
    notes = {n.path: (n.sha256, n.kind, n.title, n.summary, n.tags) for n in store.notes()}
    chunks = {
        p: [(c.ord, c.heading, c.line_start, c.line_end, c.text, c.sha) for c in store.chunks_of(p)]
        for p in notes
    }
    links = sorted((r.source, r.line, r.target) for r in store.links())
    return {"notes": notes, "chunks": chunks, "links": links}


def found(v: Vault, word: str) -> list[str]:
    """The notes a search finds holding ``word`` (with the hash embedder, the vector half
    of a hybrid search adds notes near by chance, and a kept vault's vectors may be
    pending)."""
    return sorted({h.path for h in v.search(word, k=50) if word.lower() in h.text.lower()})


def answer(v: Vault, query: str) -> dict[str, Any]:
    """A query's answer (keywords: the vectors of a kept vault may be pending) and what
    the index and MEMORY.md hold."""
    memory = (v.root / "MEMORY.md").read_text(encoding="utf-8")
    return {"hits": found(v, query), "memory": memory, **structure(v)}


def fresh(root: Path, tmp_path: Path, query: str) -> dict[str, Any]:
    """The answer of the vault opened fresh for the call: a copy of its notes as they
    are now, indexed from nothing."""
    copy = tmp_path / f"fresh-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault", ".git"))
    shutil.copytree(root / ".memvault", copy / ".memvault", ignore=_index_files)
    with Vault.open(copy, embedder=HashEmbedder()) as v:
        v.sync()
        got = answer(v, query)
    # the same vault, so the paths in MEMORY.md are the same; nothing else differs
    return got


def _index_files(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n not in ("config.toml",)]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    init_vault(root, example=True)
    write(root, "projects/alpha.md", note("Alpha", body="Alpha is the payments rewrite."))
    write(root, "projects/beta.md", note("Beta", body="Beta links [[alpha]] and ships."))
    with Vault.open(root, embedder=HashEmbedder()) as v:
        v.sync()
    return root


@pytest.fixture
def door(vault: Path) -> Iterator[VaultDoor]:
    d = VaultDoor(vault, {"embedder": HashEmbedder()})
    d.run(lambda v: v.search("alpha"), "query")  # opened: watched, then synced, kept
    d.run(lambda v: v.search("alpha"), "query")  # kept: only what changed since the open
    yield d
    d.close()


def watch_of(root: Path) -> DoorWatch:
    turn = door_module._TURNS[root.resolve()]
    assert turn.watch is not None, "the kept vault holds no watcher"
    return turn.watch[1]


def kept_answer(d: VaultDoor, query: str) -> dict[str, Any]:
    return d.run(lambda v: answer(v, query), "query")  # type: ignore[no-any-return]


def same_as_fresh(
    d: VaultDoor, root: Path, tmp_path: Path, query: str, how: str = "paths"
) -> dict[str, Any]:
    """The kept vault's answer to ``query`` (synced the ``how`` way) is a fresh one's."""
    watch = watch_of(root)
    before = dict(watch.synced)
    got = kept_answer(d, query)
    assert watch.synced[how] == before[how] + 1, watch.synced
    assert got == fresh(root, tmp_path, query)
    return got


def test_an_edit_in_place_is_synced_alone(door: VaultDoor, vault: Path, tmp_path: Path) -> None:
    with (vault / "projects/alpha.md").open("a", encoding="utf-8") as f:
        f.write("\nThe zanzibar ledger moved to Alpha.\n")  # `>>`
    got = same_as_fresh(door, vault, tmp_path, "zanzibar")
    assert got["hits"] == ["projects/alpha.md"]


def test_an_atomic_save_create_and_delete(door: VaultDoor, vault: Path, tmp_path: Path) -> None:
    tmp = vault / "projects/.beta.md.tmp"
    tmp.write_text(note("Beta", body="Beta now says quokka, links [[alpha]]."), encoding="utf-8")
    os.replace(tmp, vault / "projects/beta.md")  # an editor's atomic save
    assert same_as_fresh(door, vault, tmp_path, "quokka")["hits"] == ["projects/beta.md"]
    write(
        vault,
        "projects/gamma.md",
        note("Gamma", body="Gamma mentions quokka too.", type="project", status="active"),
    )
    got = same_as_fresh(door, vault, tmp_path, "quokka")
    assert got["hits"] == ["projects/beta.md", "projects/gamma.md"]
    assert "[[projects/gamma]]" in got["memory"]
    (vault / "projects/gamma.md").unlink()
    got = same_as_fresh(door, vault, tmp_path, "quokka")
    assert got["hits"] == ["projects/beta.md"]
    assert "[[projects/gamma]]" not in got["memory"]


def test_a_rename_is_followed_as_a_rename(door: VaultDoor, vault: Path, tmp_path: Path) -> None:
    os.rename(vault / "projects/alpha.md", vault / "projects/alpha-one.md")
    same_as_fresh(door, vault, tmp_path, "payments")
    # the link in beta followed the note (the rename passed as the daemon passes it)
    beta = (vault / "projects/beta.md").read_text(encoding="utf-8")
    assert "[[alpha-one]]" in beta
    same_as_fresh(door, vault, tmp_path, "payments")  # the relink's own events: a no-op


def test_a_folder_renamed_is_synced_whole_with_its_watches_renewed(
    door: VaultDoor, vault: Path, tmp_path: Path
) -> None:
    os.rename(vault / "projects", vault / "work")
    same_as_fresh(door, vault, tmp_path, "payments", how="everything")
    # renewed: a change inside the renamed folder is seen under its new name
    with (vault / "work/beta.md").open("a", encoding="utf-8") as f:
        f.write("\nwombat\n")
    got = same_as_fresh(door, vault, tmp_path, "wombat")
    assert got["hits"] == ["work/beta.md"]


def test_a_change_made_just_before_a_call_is_seen_the_barrier(
    door: VaultDoor, vault: Path, tmp_path: Path
) -> None:
    """No wait between the save and the call: the cookie makes the call wait for the
    save's event."""
    watch = watch_of(vault)
    for i in range(25):
        word = f"marker{i}x"
        with (vault / "projects/alpha.md").open("a", encoding="utf-8") as f:
            f.write(f"\n{word}\n")
        hits = door.run(lambda v, w=word: found(v, w), "query")
        assert hits == ["projects/alpha.md"], (i, hits)
        path = vault / f"projects/new{i}.md"
        path.write_text(note(f"New {i}", body=f"fresh{i}y"), encoding="utf-8")
        hits = door.run(lambda v, i=i: found(v, f"fresh{i}y"), "query")
        assert hits == [f"projects/new{i}.md"], (i, hits)
    assert watch.synced["everything"] == 1  # the fixture's open only
    same_as_fresh(door, vault, tmp_path, "marker3x")


def test_a_change_whose_event_is_still_on_its_way_is_waited_for(
    door: VaultDoor, vault: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """The barrier itself: the observer's thread slow to hand on a note's event (a
    busy machine, a burst of events before it), the call made at once after the save
    waits for it rather than syncing a queue that does not hold it yet."""
    real = observers._Handler.dispatch

    def slow(self: Any, event: Any) -> None:
        if os.fsdecode(event.src_path).endswith(".md"):
            threading.Event().wait(0.4)
        real(self, event)

    monkeypatch.setattr(observers._Handler, "dispatch", slow)
    watch = watch_of(vault)
    before = dict(watch.synced)
    with (vault / "projects/alpha.md").open("a", encoding="utf-8") as f:
        f.write("\nmanatee\n")
    assert door.run(lambda v: found(v, "manatee"), "query") == ["projects/alpha.md"]
    assert watch.synced == {"paths": before["paths"] + 1, "everything": 1}


def test_a_cookie_left_by_a_killed_process_of_the_same_pid(
    door: VaultDoor, vault: Path, tmp_path: Path
) -> None:
    """A process killed during its barrier leaves its cookie; one of the same pid later
    (a container's server has the same pid each run) comes to that name: its barrier
    still holds (the file reused, removed after)."""
    watch = watch_of(vault)
    state = vault / ".memvault"
    n = int(next(door_watch._COUNT))
    left = [state / f"{door_watch.COOKIE}{os.getpid()}-{n + i}" for i in range(1, 4)]
    for path in left:
        path.write_bytes(b"")
    for word in ("dhole", "tayra", "zorilla"):
        with (vault / "projects/alpha.md").open("a", encoding="utf-8") as f:
            f.write(f"\n{word}\n")
        assert same_as_fresh(door, vault, tmp_path, word)["hits"] == ["projects/alpha.md"]
    assert watch.started
    assert [p for p in left if p.exists()] == []


def test_memory_md_edited_by_hand_is_put_right(
    door: VaultDoor, vault: Path, tmp_path: Path
) -> None:
    memory = vault / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "\n- [[nowhere]] a hand's line\n")
    same_as_fresh(door, vault, tmp_path, "payments")


def test_an_overflow_syncs_everything(vault: Path, tmp_path: Path, monkeypatch: Any) -> None:
    """More changes than the queue keeps one by one, at the vault's top (no folder to
    fold them into): the watcher cannot name them, the call syncs everything."""
    monkeypatch.setattr(door_watch, "DEFAULT_LIMIT", 8)
    monkeypatch.setattr(DoorWatch.__init__, "__defaults__", (8,))
    d = VaultDoor(vault, {"embedder": HashEmbedder()})
    try:
        d.run(lambda v: v.search("alpha"), "query")
        d.run(lambda v: v.search("alpha"), "query")
        for i in range(20):
            write(vault, f"top{i}.md", note(f"Top {i}", body=f"numbat {i}"))
        got = same_as_fresh(d, vault, tmp_path, "numbat", how="everything")
        assert len(got["hits"]) == 20
        assert watch_of(vault).queue.overflows >= 1
        write(vault, "top0.md", note("Top 0", body="numbat echidna"))
        same_as_fresh(d, vault, tmp_path, "echidna")  # and the next call by its paths
    finally:
        d.close()


def test_a_watcher_that_cannot_start_leaves_each_call_a_full_sync(
    vault: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    tries = []

    def no_watches() -> Any:
        tries.append(1)
        raise OSError(28, "inotify watch limit reached")  # ENOSPC, as inotify says it

    monkeypatch.setattr(observers, "_native_observer", no_watches)
    d = VaultDoor(vault, {"embedder": HashEmbedder()})
    try:
        d.run(lambda v: v.search("alpha"), "query")
        assert not watch_of(vault).started
        for word in ("pangolin", "aardvark", "caracal"):
            with (vault / "projects/alpha.md").open("a", encoding="utf-8") as f:
                f.write(f"\n{word}\n")
            got = kept_answer(d, word)
            assert got == fresh(vault, tmp_path, word)
            assert got["hits"] == ["projects/alpha.md"]
        # tried once while the vault is kept, not at each call (each try walks every
        # folder, adding watches up to inotify's limit, to remove them all again)
        assert len(tries) == 1
    finally:
        d.close()


@pytest.mark.parametrize("when", ["at the open", "as a folder came"])
def test_a_watcher_failing_otherwise_never_fails_the_call(
    when: str, vault: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """Not only inotify's limits: a thread that cannot start (RuntimeError), at the
    watcher's start or as it watches afresh, leaves the call answered (everything
    synced), not failed."""
    real = observers._native_observer
    starts = [0]

    def fails_when() -> Any:
        starts[0] += 1
        if when == "at the open" or starts[0] > 1:
            raise RuntimeError("can't start new thread")
        return real()

    monkeypatch.setattr(observers, "_native_observer", fails_when)
    d = VaultDoor(vault, {"embedder": HashEmbedder()})
    try:
        d.run(lambda v: v.search("alpha"), "query")
        d.run(lambda v: v.search("alpha"), "query")
        (vault / "inbox").mkdir()
        write(vault, "inbox/idea.md", note("Idea", body="hyrax"))
        for word in ("hyrax", "hyrax"):
            got = kept_answer(d, word)
            assert got["hits"] == ["inbox/idea.md"]
            assert got == fresh(vault, tmp_path, word)
        assert not watch_of(vault).started
    finally:
        d.close()


def barriers(monkeypatch: Any) -> list[int]:
    """The barriers the kept vaults' watchers put through their events from now on."""
    tried: list[int] = []
    real = DoorWatch._barrier

    def counted(self: DoorWatch) -> bool:
        tried.append(1)
        return real(self)

    monkeypatch.setattr(DoorWatch, "_barrier", counted)
    return tried


def test_a_memvault_folder_linked_elsewhere_is_not_waited_for(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """``.memvault/`` a symlink out of the vault (the index kept off a synced folder):
    watchdog does not follow it, so a cookie there never comes back; a call must not
    wait for it (it waited BARRIER_SECONDS, each call)."""
    monkeypatch.setattr(door_watch, "BARRIER_SECONDS", 0.3)
    root = tmp_path / "vault"
    init_vault(root, example=True)
    write(root, "projects/alpha.md", note("Alpha", body="Alpha is the payments rewrite."))
    (root / ".memvault").rename(tmp_path / "state")
    (root / ".memvault").symlink_to(tmp_path / "state")
    with Vault.open(root, embedder=HashEmbedder()) as v:
        v.sync()
    tried = barriers(monkeypatch)
    d = VaultDoor(root, {"embedder": HashEmbedder()})
    try:
        d.run(lambda v: v.search("alpha"), "query")
        for word in ("serval", "margay"):
            with (root / "projects/alpha.md").open("a", encoding="utf-8") as f:
                f.write(f"\n{word}\n")
            got = kept_answer(d, word)
            assert got["hits"] == ["projects/alpha.md"]
            assert got == fresh(root, tmp_path, word)
        assert tried == []
    finally:
        d.close()


def test_a_barrier_that_does_not_come_back_is_not_waited_for_again(
    door: VaultDoor, vault: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """Whatever keeps a cookie's event from coming back would again: after one late
    barrier, the kept vault's calls sync everything without waiting for another."""
    monkeypatch.setattr(door_watch, "BARRIER_SECONDS", 0.3)
    watch = watch_of(vault)
    watch.observers.on_raw = lambda raw: False  # the cookies' events lost (as ignored)
    tried = barriers(monkeypatch)
    for word in ("jerboa", "tarsier", "fossa"):
        with (vault / "projects/alpha.md").open("a", encoding="utf-8") as f:
            f.write(f"\n{word}\n")
        got = kept_answer(door, word)
        assert got["hits"] == ["projects/alpha.md"]
        assert got == fresh(vault, tmp_path, word)
    assert len(tried) == 1
    assert watch.synced["everything"] == 4  # the fixture's open, and these
    assert not watch.observers.alive()  # its threads and descriptor let go


def test_a_folder_that_came_at_inotifys_limit_is_not_left_unwatched(
    door: VaultDoor, vault: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """inotify's watches all taken (by this vault or any other program) after the
    watcher started: a folder that comes cannot be watched (watchdog says so only in its
    log). A note saved in it later must still be found by a kept call."""

    def no_more_watches(fd: int, path: bytes, mask: int) -> int:
        ctypes.set_errno(errno.ENOSPC)  # as the kernel says it
        return -1

    monkeypatch.setattr(inotify_c, "inotify_add_watch", no_more_watches)
    (vault / "inbox").mkdir()
    write(vault, "inbox/idea.md", note("Idea", body="An idea, first words."))
    assert same_as_fresh(door, vault, tmp_path, "first", how="everything")["hits"] == [
        "inbox/idea.md"
    ]
    with (vault / "inbox/idea.md").open("a", encoding="utf-8") as f:
        f.write("\nsitatunga\n")
    got = kept_answer(door, "sitatunga")
    assert got["hits"] == ["inbox/idea.md"]
    assert got == fresh(vault, tmp_path, "sitatunga")


def test_an_event_lost_is_found_by_the_periodic_reconcile(
    door: VaultDoor, vault: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """Whatever loses an event (a write through mmap, a kernel or watchdog fault), a
    vault kept in constant use looks over every note again after the daemon's
    ``reconcile_seconds``, as the daemon does, not never."""
    real = observers._Handler.dispatch

    def lossy(self: Any, event: Any) -> None:
        if not os.fsdecode(event.src_path).endswith("alpha.md"):
            real(self, event)

    monkeypatch.setattr(observers._Handler, "dispatch", lossy)
    watch = watch_of(vault)
    with (vault / "projects/alpha.md").open("a", encoding="utf-8") as f:
        f.write("\nbilby\n")
    assert door.run(lambda v: found(v, "bilby"), "query") == []  # the event was lost
    watch.reconcile_seconds = 0.0  # (300 s of use, by default)
    got = same_as_fresh(door, vault, tmp_path, "bilby", how="everything")
    assert got["hits"] == ["projects/alpha.md"]


def test_a_dead_observer_is_not_trusted(door: VaultDoor, vault: Path, tmp_path: Path) -> None:
    watch = watch_of(vault)
    observer = watch.observers.observer
    assert observer is not None
    observer.stop()
    observer.join(5)
    with (vault / "projects/alpha.md").open("a", encoding="utf-8") as f:
        f.write("\nplatypus\n")
    got = same_as_fresh(door, vault, tmp_path, "platypus", how="everything")
    assert got["hits"] == ["projects/alpha.md"]
    assert watch.observers.alive()  # restarted for the calls after


def test_a_git_pull_of_many_files_between_calls(
    door: VaultDoor, vault: Path, tmp_path: Path
) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    door.close()  # the repository made and cloned while no vault is kept
    (vault / ".gitignore").write_text(".memvault/\n", encoding="utf-8")
    subprocess.run([*git, "init", "-q"], cwd=vault, check=True)
    subprocess.run([*git, "add", "-A"], cwd=vault, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=vault, check=True)
    other = tmp_path / "other"
    subprocess.run([*git, "clone", "-q", str(vault), str(other)], check=True)
    door.run(lambda v: v.search("alpha"), "query")
    door.run(lambda v: v.search("alpha"), "query")
    for i in range(150):
        word = "okapi" if i % 15 == 0 else "tapir"  # a word in few notes: all found
        write(other, f"projects/pulled{i}.md", note(f"Pulled {i}", body=f"{word} {i} [[alpha]]"))
    with (other / "projects/beta.md").open("a", encoding="utf-8") as f:
        f.write("\nokapi beta\n")
    (other / "projects/alpha.md").rename(other / "projects/alpha2.md")
    subprocess.run([*git, "add", "-A"], cwd=other, check=True)
    subprocess.run([*git, "commit", "-qm", "many"], cwd=other, check=True)
    subprocess.run(["git", "config", "receive.denyCurrentBranch", "ignore"], cwd=vault, check=True)
    subprocess.run([*git, "pull", "-q", str(other), "main"], cwd=vault, check=True)
    got = same_as_fresh(door, vault, tmp_path, "okapi")
    assert len(got["hits"]) == 11  # ten pulled, and beta
    assert "[[alpha2]]" in (vault / "projects/pulled7.md").read_text(encoding="utf-8")


def test_the_watcher_goes_with_the_vault_no_thread_nor_descriptor_left(
    vault: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(door_module, "LINGER", 0.5)

    def fds() -> list[str]:
        gc.collect()  # (an index's connections a search left to the collector)
        names = []
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):  # (listdir's own)
                names.append(os.readlink(f"/proc/self/fd/{fd}"))
        return sorted(names)

    threads, open_fds = threading.active_count(), fds()
    d = VaultDoor(vault, {"embedder": HashEmbedder()})
    d.run(lambda v: v.search("alpha"), "query")
    assert watch_of(vault).observers.alive()
    assert threading.active_count() > threads
    d.close()  # the door closed
    assert vault.resolve() not in door_module._TURNS
    assert (threading.active_count(), fds()) == (threads, open_fds)
    d.run(lambda v: v.search("alpha"), "query")
    assert watch_of(vault).observers.alive()
    deadline = 50
    while vault.resolve() in door_module._TURNS and deadline:  # LINGER lets it go
        threading.Event().wait(0.1)
        deadline -= 1
    assert vault.resolve() not in door_module._TURNS
    assert (threading.active_count(), fds()) == (threads, open_fds)
    d.close()


def test_a_kept_vaults_call_does_not_scan_every_note(
    door: VaultDoor, vault: Path, monkeypatch: Any
) -> None:
    """The cost the watcher takes away: with nothing changed (or one note), a kept
    vault's query walks no folder of the vault."""
    from memvault.vault import scan

    walks = []
    real = scan.Walk.run

    def counted(self: Any, *args: Any, **kw: Any) -> Any:
        walks.append(1)
        return real(self, *args, **kw)

    monkeypatch.setattr(scan.Walk, "run", counted)
    door.run(lambda v: v.search("alpha"), "query")
    with (vault / "projects/alpha.md").open("a", encoding="utf-8") as f:
        f.write("\nquoll\n")
    assert door.run(lambda v: found(v, "quoll"), "query") == ["projects/alpha.md"]
    assert walks == []


def test_a_note_named_by_events_and_gone_makes_the_next_call_sync_everything(
    door: VaultDoor, vault: Path, tmp_path: Path
) -> None:
    """The daemon's rule for a batch naming notes neither there nor indexed (a folder
    renamed and its old name reused before the observer caught up): reconcile all."""
    write(vault, "projects/brief.md", note("Brief", body="here and gone"))
    (vault / "projects/brief.md").unlink()
    same_as_fresh(door, vault, tmp_path, "payments")  # its paths: the note vanished
    same_as_fresh(door, vault, tmp_path, "payments", how="everything")


def is_inotify(fd: int) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
    except OSError:
        return False


def test_a_forked_child_holds_no_copy_of_the_parents_inotify_descriptor(
    door: VaultDoor, vault: Path
) -> None:
    reader = getattr(watch_of(vault).observers.observer, "_inotify_fd", None)
    fd = reader._inotify_fd  # type: ignore[union-attr]  # (watchdog's own)
    assert is_inotify(fd)  # the kept vault's watcher's
    read, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its copy closed at the fork
        os.write(write_end, b"1" if is_inotify(fd) else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(write_end)
    assert os.read(read, 16) == b"0"
    os.close(read)
    assert is_inotify(fd)  # the parent's watcher kept
    assert door.run(lambda v: found(v, "payments"), "query") == ["projects/alpha.md"]
    assert watch_of(vault).synced["paths"] >= 1


def test_a_case_only_rename_and_a_change_in_an_ignored_folder(
    door: VaultDoor, vault: Path, tmp_path: Path
) -> None:
    os.rename(vault / "projects/beta.md", vault / "projects/Beta.md")
    got = same_as_fresh(door, vault, tmp_path, "ships")
    assert "projects/Beta.md" in got["hits"] and "projects/beta.md" not in got["hits"]
    (vault / ".trash").mkdir()
    write(vault, ".trash/old.md", note("Old", body="kinkajou in the bin"))
    assert same_as_fresh(door, vault, tmp_path, "kinkajou")["hits"] == []
