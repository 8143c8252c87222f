"""A peek on a vault the door keeps (Claude's memory tool's ``view``, MCP's
``memory_status``) answers as one opened fresh: the paths its watcher saw change are
synced first, as before a read (service/door_watch.py), and never everything (a peek
stays quick). Real watchdog observer, real files, real SQLite, the SDK's memory tool."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import note, write
from memvault.api import Vault
from memvault.door import VaultDoor
from memvault.index.embedder import HashEmbedder
from memvault.integrations.anthropic import VaultMemoryTool
from memvault.service import observers
from test_door_watch import door, fresh, structure, vault, watch_of

__all__ = ["door", "vault"]  # the fixtures, shared with test_door_watch


def peeked(v: Vault) -> dict[str, Any]:
    """What a peek reads: the index and MEMORY.md."""
    return {"memory": (v.root / "MEMORY.md").read_text(encoding="utf-8"), **structure(v)}


def fresh_peek(root: Path, tmp_path: Path) -> dict[str, Any]:
    got = fresh(root, tmp_path, "orchids")
    del got["hits"]
    return got


def test_a_peek_on_the_kept_vault_syncs_the_paths_its_watcher_saw_change(
    door: VaultDoor, vault: Path, tmp_path: Path
) -> None:
    write(vault, "people/quillon.md", note("Quillon Marsh", body="Quillon tends the orchids."))
    (vault / "projects" / "beta.md").unlink()
    watch = watch_of(vault)
    before = dict(watch.synced)
    got = door.run(peeked, "peek")
    assert watch.synced == {"paths": before["paths"] + 1, "everything": before["everything"]}
    assert got == fresh_peek(vault, tmp_path)
    assert "people/quillon" in got["memory"] and "projects/beta" not in got["memory"]


def test_a_peek_with_no_watcher_reads_the_index_as_it_is(vault: Path, monkeypatch: Any) -> None:
    """No watcher (inotify's limits): a peek does not sync everything at each view (a
    read's cost); it reads the index as it is, as a peek opened for the call would."""

    def no_watches() -> Any:
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(observers, "_native_observer", no_watches)
    d = VaultDoor(vault, {"embedder": HashEmbedder()})
    try:
        d.run(lambda v: None, "write")
        write(vault, "people/quillon.md", note("Quillon Marsh", body="Quillon tends orchids."))
        assert "people/quillon.md" not in d.run(peeked, "peek")["notes"]
        assert watch_of(vault).synced == {"paths": 0, "everything": 1}  # the open's only
        assert "people/quillon.md" in d.run(structure, "read")["notes"]
    finally:
        d.close()


@pytest.fixture
def tool(vault: Path) -> Iterator[VaultMemoryTool]:
    t = VaultMemoryTool(vault, embedder=HashEmbedder())
    t.call({"command": "view", "path": "/memories"})  # opened: watched, then synced, kept
    t.call({"command": "view", "path": "/memories"})  # kept: what changed since the open
    yield t
    t.close()


def test_the_memory_tools_view_lists_a_note_saved_in_obsidian_as_a_fresh_vault_does(
    tool: VaultMemoryTool, vault: Path, tmp_path: Path
) -> None:
    """Claude views a folder (the memory tool's first command of a task) after a person
    saved a note in it: listed with its summary, and MEMORY.md lists it, as a vault
    opened fresh for the view shows (before: no summary, MEMORY.md as it was)."""
    write(vault, "people/quillon.md", note("Quillon Marsh", body="Quillon tends the orchids."))
    listing = tool.call({"command": "view", "path": "/memories/people"})
    index = tool.call({"command": "view", "path": "/memories/MEMORY.md"})
    copy = tmp_path / f"fresh-{len(list(tmp_path.iterdir()))}"  # the name fresh gives it
    fresh(vault, tmp_path, "orchids")  # a copy of the files as they are now, indexed
    other = VaultMemoryTool(copy, embedder=HashEmbedder())
    try:
        assert listing == other.call({"command": "view", "path": "/memories/people"})
        assert index == other.call({"command": "view", "path": "/memories/MEMORY.md"})
    finally:
        other.close()
    assert "Quillon tends the orchids." in listing and "people/quillon" in index


def test_a_view_that_opens_the_vault_again_lists_a_note_saved_meanwhile(
    vault: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """The agent's next turn comes after the vault was let go (15 s without a call):
    the view that opens it again lists the note a person saved meanwhile, with its
    summary, and MEMORY.md lists it, as a fresh vault does (before: the door synced only
    at its first open, and this view read the index as it was)."""
    from memvault import door as door_module

    monkeypatch.setattr(door_module, "LINGER", 0.3)
    t = VaultMemoryTool(vault, embedder=HashEmbedder())
    try:
        t.call({"command": "view", "path": "/memories"})
        deadline = 50
        while vault.resolve() in door_module._TURNS and deadline:  # LINGER lets it go
            threading.Event().wait(0.1)
            deadline -= 1
        assert vault.resolve() not in door_module._TURNS
        write(vault, "people/quillon.md", note("Quillon Marsh", body="Quillon tends the orchids."))
        listing = t.call({"command": "view", "path": "/memories/people"})
        index = t.call({"command": "view", "path": "/memories/MEMORY.md"})
    finally:
        t.close()
    assert "Quillon tends the orchids." in listing and "people/quillon" in index


@pytest.mark.parametrize("first", ["peek", "write"])
def test_the_view_after_a_view_or_write_opened_the_vault_syncs_only_what_changed(
    vault: Path, tmp_path: Path, first: str
) -> None:
    """The memory tool's first command (a view, or a write) opens the vault, its
    watcher started before the open's sync: the view after it syncs only the note
    saved since, not every note (before: a full sync, ~1.7 s at 100,000 notes, on the
    second call of each session)."""
    d = VaultDoor(vault, {"embedder": HashEmbedder()})
    try:
        d.run(lambda v: None, first)  # type: ignore[arg-type]
        watch = watch_of(vault)
        assert watch.synced == {"paths": 0, "everything": 1}  # the open's sync
        write(vault, "people/quillon.md", note("Quillon Marsh", body="Quillon tends the orchids."))
        assert d.run(peeked, "peek") == fresh_peek(vault, tmp_path)
        assert watch.synced == {"paths": 1, "everything": 1}
    finally:
        d.close()
