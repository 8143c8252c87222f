"""Issue 27: a folder rename costs what it changes.

The renamed notes keep their chunks and vectors (their rows are renamed, nothing is
embedded again for them); the notes linking them are rewritten in batches that are
durable together (a flush of the batch, not two fsyncs a note), each file still
written atomically and compare-and-swap: a person's save in the middle is kept.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import open_vault, write
from memvault.vault import swap
from memvault.vault.files import VaultFS

LINKERS = 60
MOVED = 20


def make(root: Path) -> None:
    write(root, ".obsidian/app.json", '{"newLinkFormat": "absolute"}\n')
    for i in range(MOVED):
        write(
            root,
            f"projects/alpha/a{i:02}.md",
            f"# Alpha {i}\n\nThe alpha work, part {i}: kiln drying schedules.\n\n"
            f"- a second point about alpha {i}\n",
        )
    for i in range(LINKERS):
        path = write(
            root,
            f"people/p{i:02}.md",
            f"# Person {i}\n\nWorks on [[projects/alpha/a{i % MOVED:02}]] with care.\n\n"
            f"Unrelated paragraph {i} about lathes.\n",
        )
        hour_ago = time.time_ns() - 3600 * 10**9  # written a while ago, not a save in progress
        os.utime(path, ns=(hour_ago, hour_ago))


def links_into(root: Path, folder: str) -> int:
    return sum(
        p.read_text(encoding="utf-8").count(f"[[{folder}/") for p in (root / "people").iterdir()
    )


def test_folder_rename_keeps_vectors_and_rewrites_every_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "v"
    make(root)
    with open_vault(root) as v:
        v.sync()
        store = v.engine.store
        before = {
            c.label: c.sha
            for p in range(MOVED)
            for c in store.chunks_of(f"projects/alpha/a{p:02}.md")
        }
        assert before
        fsyncs: list[int] = []
        real_fsync = os.fsync
        monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real_fsync(fd))[1])
        batched: list[object] = []  # what each swap of the batch gave: a miss is named
        real_many = swap.Swapper.swap_many

        def swap_many(self: swap.Swapper, *a: object, **k: object) -> list[object]:
            out = real_many(self, *a, **k)  # type: ignore[arg-type]
            batched.extend(out)
            return out  # type: ignore[return-value]

        monkeypatch.setattr(swap.Swapper, "swap_many", swap_many)
        os.rename(root / "projects/alpha", root / "projects/beta")
        report = v.sync(["projects/alpha", "projects/beta"], vectors=False)
        monkeypatch.undo()
        assert len(report.moved) == MOVED
        assert len(report.relinked) == LINKERS
        assert links_into(root, "projects/alpha") == 0
        assert links_into(root, "projects/beta") == LINKERS
        # the renamed notes kept their chunks (labels, texts) and nothing of theirs waits
        # for a vector: only the linking notes' changed chunks are queued
        after = {
            c.label: c.sha
            for p in range(MOVED)
            for c in store.chunks_of(f"projects/beta/a{p:02}.md")
        }
        assert after == before
        assert not store.pending_among(after)
        assert store.pending_state()[0] <= LINKERS  # one changed chunk a linking note
        # 60 rewrites, durable as one batch: far fewer than the two fsyncs a note of before
        # (where syncfs is trusted; elsewhere one fsync a file, not two)
        assert len(batched) == LINKERS
        assert [r for r in batched if r != (True, None)] == []
        if swap.syncfs_trusted(root):
            assert len(fsyncs) < LINKERS // 2, len(fsyncs)
        else:
            assert len(fsyncs) <= LINKERS + 1, len(fsyncs)
        assert v.links_check() == []


def test_a_save_in_the_middle_of_a_batch_is_kept(tmp_path: Path) -> None:
    """The batch read a note, then its person saved it before the swap: the swap sees
    another version, leaves it, and the change is redone on top of the person's."""
    root = tmp_path / "v"
    for i in range(5):
        write(root, f"n{i}.md", f"# N{i}\n\nsee [[old]]\n")
    fs = VaultFS(root)
    calls: dict[str, int] = {}

    def change_for(rel: str) -> Callable[[str], str]:
        def change(text: str) -> str:
            calls[rel] = calls.get(rel, 0) + 1
            if rel == "n2.md" and calls[rel] == 1:  # the person saves meanwhile
                (root / rel).write_text(text + "\nMy own words.\n", encoding="utf-8")
            return text.replace("[[old]]", "[[new]]")

        return change

    out = fs.update_texts({f"n{i}.md": change_for(f"n{i}.md") for i in range(5)})
    assert out == {f"n{i}.md": True for i in range(5)}
    kept = (root / "n2.md").read_text(encoding="utf-8")
    assert "My own words." in kept and "[[new]]" in kept and "[[old]]" not in kept
    assert calls["n2.md"] == 2  # redone on the person's version
    for i in (0, 1, 3, 4):
        assert (root / f"n{i}.md").read_text(encoding="utf-8") == f"# N{i}\n\nsee [[new]]\n"
    assert not [p for p in os.listdir(root) if swap.TEMP_MARK in p]


def test_a_save_between_the_batch_flush_and_its_swap_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's save lands after the batch wrote and flushed its temp files, just
    before the swaps (no quiet period to send the note down the lone path first): the
    batch's own compare-and-swap must see the other version and leave it."""
    root = tmp_path / "v"
    for i in range(4):
        write(root, f"n{i}.md", f"# N{i}\n\nsee [[old]]\n")
    fs = VaultFS(root, quiet_ms=0)
    real_flush = swap.flush_files

    def flush_then_the_person_saves(paths: list[Path]) -> None:
        real_flush(paths)
        (root / "n1.md").write_text("# N1\n\nsee [[old]]\nMy own words.\n", encoding="utf-8")

    monkeypatch.setattr(swap, "flush_files", flush_then_the_person_saves)
    out = fs.update_texts({f"n{i}.md": lambda t: t.replace("[[old]]", "[[new]]") for i in range(4)})
    assert out == {f"n{i}.md": True for i in range(4)}
    kept = (root / "n1.md").read_text(encoding="utf-8")
    assert "My own words." in kept and "[[new]]" in kept and "[[old]]" not in kept
    for i in (0, 2, 3):
        assert (root / f"n{i}.md").read_text(encoding="utf-8") == f"# N{i}\n\nsee [[new]]\n"
    assert not [p for p in os.listdir(root) if swap.TEMP_MARK in p]


def test_a_busy_note_is_left_out_of_the_batch_and_tried_alone(tmp_path: Path) -> None:
    root = tmp_path / "v"
    write(root, "a.md", "see [[old]]\n")
    write(root, "b.md", "see [[old]]\n")
    for rel in ("a.md", "b.md"):  # saved a while ago, not moments ago
        os.utime(root / rel, ns=(1_700_000_000 * 10**9, 1_700_000_000 * 10**9))
    fs = VaultFS(root, busy_wait=0.2)
    with open(root / "b.md", "a", encoding="utf-8"):  # a program holds it open to write
        out = fs.update_texts({r: lambda t: t.replace("old", "new") for r in ("a.md", "b.md")})
    assert out["a.md"] is True
    assert isinstance(out["b.md"], Exception) and "open for writing" in str(out["b.md"])
    assert (root / "b.md").read_text(encoding="utf-8") == "see [[old]]\n"
    assert (root / "a.md").read_text(encoding="utf-8") == "see [[new]]\n"


def test_a_note_that_keeps_changing_does_not_stop_the_rest_of_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # put_back's WriteConflict ("keeps changing") escaped swap_many, which caught only
    # FileBusy (its subclass): the batch stopped there, its other notes unwritten
    from memvault.core.text import sha256_bytes
    from memvault.errors import WriteConflict

    paths = [write(tmp_path, f"n{i}.md", f"# N{i}\n") for i in range(3)]
    swapper = swap.Swapper(quiet_ms=0)
    real = swap.Swapper._swap_in

    def flaky(self: swap.Swapper, path: Path, *args: object, **kw: object) -> object:
        if path == paths[0]:
            raise WriteConflict(f"{path.name} keeps changing; memvault stopped touching it")
        return real(self, path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(swap.Swapper, "_swap_in", flaky)
    done = swapper.swap_many([(p, b"# new\n", sha256_bytes(p.read_bytes())) for p in paths])
    assert isinstance(done[0], WriteConflict) and paths[0].read_text() == "# N0\n"
    assert done[1:] == [(True, None), (True, None)]
    assert [p.read_text() for p in paths[1:]] == ["# new\n", "# new\n"]


def test_a_filesystem_not_known_to_write_through_gets_an_fsync_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # syncfs returns 0 on FUSE filesystems that flushed nothing (sshfs, gocryptfs...):
    # only a mounted filesystem of a known local kind is flushed by one syncfs
    paths = [write(tmp_path, f"t{i}.md", "x") for i in range(3)]
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    monkeypatch.setattr(swap, "_local_devices", lambda: frozenset())
    swap.flush_files(paths)
    assert len(synced) == 3


def test_a_batch_that_fails_after_its_swaps_leaves_no_old_version_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's swaps put each displaced version at its temp name for the unlinker: a
    flush of the folder that fails after them (an I/O error) must not leave those old
    versions in the vault, where a sync tool would copy them (review of stop 32)."""
    root = tmp_path / "v"
    (root / "logs").mkdir(parents=True)
    for i in range(3):
        (root / "logs" / f"n{i}.md").write_text(f"old {i}\n", encoding="utf-8")
    fs = VaultFS(root, quiet_ms=0)

    def failing_flush(folder: Path) -> None:
        raise OSError(5, "Input/output error", str(folder))

    monkeypatch.setattr(swap, "fsync_dir", failing_flush)
    with pytest.raises(OSError):
        fs.update_texts({f"logs/n{i}.md": (lambda t: t.replace("old", "new")) for i in range(3)})
    assert sorted(os.listdir(root / "logs")) == ["n0.md", "n1.md", "n2.md"]
