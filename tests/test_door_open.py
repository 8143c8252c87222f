"""The door's open for a read or query watches the vault from before the open's sync
(memvault/door.py, service/door_watch.py): that sync is the full one the watcher
vouches from, so the next call syncs only what changed since, not every note again.
Real watchdog observer, real files, real SQLite, a real second process holding the lock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import note, write
from memvault.door import VaultDoor
from memvault.index.embedder import HashEmbedder
from memvault.vault.template import init_vault
from test_door_watch import same_as_fresh, vault, watch_of

__all__ = ["vault"]  # the fixture, shared with test_door_watch


def test_the_first_call_after_an_open_syncs_only_what_changed_since_the_open(
    vault: Path, tmp_path: Path
) -> None:
    """Before: the call after each open synced every note again (~1 s at 100,000
    notes), and an agent back after 15 s paid it twice: the open's sync, then this."""
    d = VaultDoor(vault, {"embedder": HashEmbedder()})
    try:
        d.run(lambda v: v.search("alpha"), "query")  # opened: synced, watched from before
        watch = watch_of(vault)
        assert watch.synced == {"paths": 0, "everything": 1}  # the open's sync
        with (vault / "projects/alpha.md").open("a", encoding="utf-8") as f:
            f.write("\nThe zanzibar ledger moved to Alpha.\n")
        write(vault, "people/quillon.md", note("Quillon Marsh", body="Quillon keeps zanzibar."))
        got = same_as_fresh(d, vault, tmp_path, "zanzibar", how="paths")
        assert got["hits"] == ["people/quillon.md", "projects/alpha.md"]
        assert watch.synced == {"paths": 1, "everything": 1}
    finally:
        d.close()


def test_an_open_that_finds_the_lock_held_reads_as_before(vault: Path) -> None:
    """Another process holds the writer lock (a CLI write, a daemon starting): the
    watched open is not taken, and the read is the one a read's open gives: it waits
    for no writer but one that lets go, then reads the index as it is, watching nothing."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from pathlib import Path\n"
            "from memvault.vault.lock import WriterLock\n"
            "lock = WriterLock(Path(sys.argv[1]))\n"
            "lock.acquire()\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n",
            str(vault / ".memvault" / "lock"),
        ],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "daemon")},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        d = VaultDoor(vault, {"embedder": HashEmbedder()})
        try:
            hits = d.run(lambda v: [h.path for h in v.search("payments")], "query")
            assert "projects/alpha.md" in hits
            from memvault import door as door_module

            assert vault.resolve() not in door_module._TURNS  # nothing kept, nothing watched
        finally:
            d.close()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
        assert holder.stdout is not None
        holder.stdout.close()


def test_a_read_of_a_vault_never_indexed_makes_no_index(tmp_path: Path) -> None:
    """The watched open is a writer's: not taken where a read makes no index."""
    root = tmp_path / "fresh-vault"
    init_vault(root)
    write(root, "people/ana.md", note("Ana", body="Ana leads the data team."))
    d = VaultDoor(root, {"embedder": HashEmbedder()})
    try:
        assert "data team" in d.run(lambda v: v.get("people/ana.md").text, "read")
    finally:
        d.close()
    assert not (root / ".memvault" / "index.db").exists()


def test_cookies_left_by_dead_processes_are_swept_as_a_watcher_starts(vault: Path) -> None:
    """A server killed in its barrier leaves its cookie (``door-cookie-<pid>-<n>``) in
    ``.memvault/``; they were never removed, one more each such kill. A watcher starting
    removes those of processes no longer alive, and no living one's."""
    state = vault / ".memvault"
    with subprocess.Popen([sys.executable, "-c", "pass"]) as gone:
        gone.wait(10)
    with subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    ) as alive:
        try:
            names = [
                f"door-cookie-{gone.pid}-0",
                f"door-cookie-{gone.pid}-7",
                f"door-cookie-{alive.pid}-2",
                "door-cookie-notapid",
            ]
            for name in names:
                (state / name).write_bytes(b"")
            d = VaultDoor(vault, {"embedder": HashEmbedder()})
            try:
                d.run(lambda v: v.search("alpha"), "query")
                assert watch_of(vault).started
                left = sorted(p.name for p in state.iterdir() if p.name.startswith("door-cookie-"))
                assert left == sorted([f"door-cookie-{alive.pid}-2", "door-cookie-notapid"])
            finally:
                d.close()
        finally:
            assert alive.stdin is not None
            alive.stdin.close()
            alive.wait(10)


def test_memory_md_a_merge_held_is_brought_up_by_the_next_kept_call_once_git_is_done(
    vault: Path,
) -> None:
    """A note saved while git is mid merge: the kept call's sync indexes it and writes
    nothing of git's tree (MEMORY.md waits); the merge done, the next call brings MEMORY.md
    up, as the daemon's catch-up does (before: nothing changed since, so that call synced
    nothing and MEMORY.md went without the note until a full sync, 5 minutes of use or
    the vault let go), for a view as for a search."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=vault, check=True)
    subprocess.run([*git, "add", "-A"], cwd=vault, check=True)
    subprocess.run([*git, "commit", "-qm", "notes"], cwd=vault, check=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=vault, check=True, capture_output=True, text=True
    ).stdout
    d = VaultDoor(vault, {"embedder": HashEmbedder()})
    try:
        d.run(lambda v: v.search("alpha"), "query")  # opened: watched, synced, kept
        watch = watch_of(vault)
        memory = (vault / "MEMORY.md").read_bytes()
        (vault / ".git" / "MERGE_HEAD").write_text(head, encoding="utf-8")
        write(vault, "people/quillon.md", note("Quillon Marsh", body="Quillon keeps zanzibar."))
        hits = d.run(lambda v: [h.path for h in v.search("zanzibar")], "query")
        assert hits[0] == "people/quillon.md"
        assert (vault / "MEMORY.md").read_bytes() == memory  # git's tree: untouched
        (vault / ".git" / "MERGE_HEAD").unlink()
        listing = d.run(lambda v: v.memory_tool({"command": "view", "path": "/memories"}), "peek")
        assert "people/quillon" in (vault / "MEMORY.md").read_text(encoding="utf-8")
        assert "MEMORY.md" in listing
        assert watch.synced["everything"] == 1  # the open's only
    finally:
        d.close()
