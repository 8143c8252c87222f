"""A team's clone on a disk that folds case (docs/TEAM.md): the writer on Linux indexed
``People/Ana.md``; a colleague on a Mac renamed it ``people/ana.md`` in Obsidian, a
rename of case alone, which git there (``core.ignorecase``) does not see, commits and
pushes nothing of: the team's index keeps git's spelling, and the clone's file is the
same note. A real exFAT disk through FUSE (tests/casefs.py), a real server (pgserver),
real git with a remote, the Python API."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers import DaemonProcess, eventually, make_vault, note, open_vault, write
from memvault.api import Vault
from pg_helpers import committed, git_out

ANA = "People/Ana.md"  # as the writer's clone (ext4) and git spell it
HERE = "people/ana.md"  # as the Mac's Obsidian renamed it


@pytest.fixture
def clone(tmp_path: Path, place: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The writer's clone on ext4 indexed People/ (its daemon stopped since); a clone of
    it on the exFAT disk whose People/Ana.md was renamed people/ana.md there."""
    b = _clones(tmp_path, place, pg_dsn, monkeypatch)
    os.rename(b / "People", b / "people")  # Obsidian's rename: the folder, then the note
    os.rename(b / "people" / "Ana.md", b / HERE)
    assert "ana.md" in os.listdir(b / "people")
    assert git_out(b, "status", "--porcelain") == ""  # git sees nothing to carry
    return b


def _clones(tmp_path: Path, place: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """build-01's clone (ext4) and its index; the Mac's clone of it (exFAT)."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    a = make_vault(tmp_path / "build-01", "team")
    os.rename(a / "people", a / "People")
    write(a, ANA, note("Ana Quill", body="Ana tunes the quill harpsichord every spring."))
    remote = tmp_path / "remote.git"
    committed(a, remote)
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "build-01")
    with open_vault(a) as writer:
        writer.sync()
        assert ANA in writer.engine.store.manifest()
    b = place / "team"
    subprocess.run(["git", "clone", "-q", str(remote), str(b)], check=True)
    assert git_out(b, "config", "core.ignorecase").strip() == "true"
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "mac-02")
    return b


def test_a_clone_renamed_in_case_only_is_not_said_to_lack_the_note(clone: Path) -> None:
    """No writer runs: the search named people/ana.md as a note of this copy the index
    lacks, which `memvault up` on the writer's machine would never index (git brings it
    nothing), and status counted 2 notes differing from the index (the same one)."""
    with open_vault(clone, mode="query") as reader:
        assert reader.engine.read_only
        hits = reader.search("quill harpsichord", k=3)
        assert reader.stale is None, reader.stale
        assert (hits[0].path, hits[0].this_copy) == (ANA, "")
        assert reader.status()["index"]["pending_count"] == 0
        got = reader.get(ANA)  # the hit, read here: the index's title (it said "ana")
        assert (got.path, got.title) == (HERE, "Ana Quill")


def test_an_edit_of_a_note_renamed_in_case_only_is_named_as_git_spells_it(clone: Path) -> None:
    """Edited here: the note the index holds older, under the index's (git's) name, not a
    note it lacks."""
    text = (clone / HERE).read_text(encoding="utf-8")
    (clone / HERE).write_text(text + "\nShe moved to Lyon.\n", encoding="utf-8")
    assert git_out(clone, "status", "--porcelain").strip() == f"M {ANA}"
    with open_vault(clone, mode="query") as reader:
        reader.search("quill harpsichord", k=3)
        assert reader.stale is not None
        assert f"which lacks 1 note changed here ({ANA})" in reader.stale, reader.stale
        assert "of this copy" not in reader.stale
        assert reader.status()["index"]["pending_count"] == 1


def test_a_writer_on_a_mac_s_disk_leaves_linux_readers_their_notes(
    clone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Mac's clone writes the index (no writer ran): its sync follows the rename of
    case, so the index says people/ana.md where git and every Linux copy say
    People/Ana.md. A Linux reader's hits were "not in this copy of the vault ... git
    pull", its `get` of the hit said "no note ... pull, then get it again", and its
    search named People/Ana.md as a note the index lacks: git pull brings nothing."""
    with open_vault(clone) as writer:
        moved = writer.sync().moved
        assert (ANA, HERE) in moved
    git_out(clone, "commit", "-qam", "MEMORY.md as the writer here wrote it")
    git_out(clone, "push", "-q", "origin", "main")
    linux = tmp_path / "build-01" / "team"
    git_out(linux, "pull", "-q", str(tmp_path / "remote.git"), "main")
    assert (linux / ANA).is_file() and not (linux / HERE).exists()
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "build-01")
    with open_vault(linux, mode="query") as reader:
        hits = reader.search("quill harpsichord", k=3)
        assert (hits[0].path, hits[0].this_copy) == (HERE, "")
        assert reader.stale is None, reader.stale
        context = reader.context("quill harpsichord")
        assert "[[people/ana]]" in context.text
        assert "not in this copy" not in context.text
        got = reader.get(HERE)
        assert (got.path, got.title, "every spring" in got.text) == (ANA, "Ana Quill", True)
        assert reader.get("people/ana").path == ANA  # as MEMORY.md's link names it
        assert reader.status()["index"]["pending_count"] == 0
        # an edit here is the index's note changed here, under the index's name
        (linux / ANA).write_text(got.text + "\nShe moved to Lyon.\n", encoding="utf-8")
        assert reader.search("quill harpsichord", k=3)[0].this_copy == "differs"
    with open_vault(linux, mode="query") as reader:
        reader.search("quill harpsichord", k=3)
        assert reader.stale is not None
        assert f"which lacks 1 note changed here ({HERE})" in reader.stale, reader.stale


def test_a_reader_daemon_does_not_name_a_note_renamed_in_case_only_as_one_the_index_lacks(
    tmp_path: Path, place: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer's daemon runs on build-01; the Mac's reader daemon watches its clone
    (polling: FUSE gives no inotify; a Mac's watcher is native) as Obsidian renames two
    notes in case only and the person edits one. Its searches said the index lacks 2
    notes of this copy (the new names): git carries neither rename, so no writer would
    ever index them; the edit is the index's People/Ana.md changed here."""
    b = _clones(tmp_path, place, pg_dsn, monkeypatch)
    a = tmp_path / "build-01" / "team"
    settings = {k: os.environ[k] for k in ("MEMVAULT_INDEX_STORE", "MEMVAULT_INDEX_DSN")}
    settings["MEMVAULT_INDEX_SCHEMA"] = os.environ["MEMVAULT_INDEX_SCHEMA"]
    writer = DaemonProcess(tmp_path, a, "up", str(a), **settings, MEMVAULT_HOSTNAME="build-01")
    reader = None
    try:
        writer.ready(answering=True)
        reader = DaemonProcess(
            tmp_path,
            b,
            "up",
            str(b),
            **settings,
            MEMVAULT_HOSTNAME="mac-02",
            MEMVAULT_DAEMON_OBSERVER="polling",
        )
        reader.ready(answering=True)
        assert "read-only: this is a reader of the index" in reader.stderr
        os.rename(b / "People" / "sarah-chen.md", b / "People" / "Sarah-Chen.md")
        os.rename(b / ANA, b / "People" / "ana.md")
        with (b / "People" / "ana.md").open("a", encoding="utf-8") as fh:
            fh.write("\nShe moved to Lyon.\n")

        def said() -> str | None:
            with Vault.open(b, mode="query") as v:
                assert v.daemon is not None  # through the reader daemon
                v.search("quill harpsichord", k=3)
                return v.stale

        eventually(lambda: said() is not None, 30, "the reader daemon's note")
        stale = said()
        assert stale is not None
        assert f"which lacks 1 note changed here (it holds an older copy) ({ANA})" in stale, stale
        assert "of this copy" not in stale, stale
    finally:
        if reader is not None:
            reader.stop()
        writer.stop()
