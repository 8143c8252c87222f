"""A team's clone on a disk that tells case apart (ext4), beside tests/test_pg_casefs.py:
two notes of one name but for case (``People/Ana.md``, ``people/ana.md``), each a note
of the index, are two notes: one not pulled here is not the other one read in its place.
A real server (pgserver), real git with a remote, the Python API."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import make_vault, note, open_vault, write
from memvault.engine.changed_here import ChangedHere
from memvault.errors import NoteNotFound
from pg_helpers import git_out

ANA = "People/Ana.md"  # a teammate's new note, indexed by the writer, not pulled here
CAT = "people/ana.md"  # the note here, another one: the office cat


@pytest.fixture
def behind(tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """build-01's clone indexed people/ana.md, then People/Ana.md; a clone of it on
    ext4 pulled before People/Ana.md was written."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    a = make_vault(tmp_path / "build-01", "team")
    write(a, CAT, note("Ana the cat", body="Ana the office cat sleeps on the radiator."))
    (a / ".gitignore").write_text(".memvault/*\n!.memvault/config.toml\n", encoding="utf-8")
    git_out(a, "init", "-q", "-b", "main")
    git_out(a, "add", "-A")
    git_out(a, "commit", "-qm", "the vault")
    b = tmp_path / "laptop" / "team"
    subprocess.run(["git", "clone", "-q", str(a), str(b)], check=True)
    write(a, ANA, note("Ana Quill", body="Ana tunes the quill harpsichord every spring."))
    git_out(a, "add", "-A")
    git_out(a, "commit", "-qm", "Ana Quill")
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "build-01")
    with open_vault(a) as writer:
        writer.sync()
        assert {ANA, CAT} <= set(writer.engine.store.manifest())
    assert (b / CAT).is_file() and not (b / ANA).exists()
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "laptop")
    return b


def test_a_note_not_pulled_is_not_its_twin_in_another_case(behind: Path) -> None:
    """`get People/Ana.md` gave people/ana.md's text (the cat, titled as the cat) and
    its hit was marked "differs", where the note is not pulled yet."""
    with open_vault(behind, mode="query") as reader:
        assert reader.engine.read_only
        hits = reader.search("quill harpsichord", k=3)
        assert (hits[0].path, hits[0].this_copy) == (ANA, "missing")
        with pytest.raises(NoteNotFound, match="pull, then get it again"):
            reader.get(ANA)
        got = reader.get(CAT)
        assert (got.path, got.title) == (CAT, "Ana the cat")


def test_a_reader_daemon_names_a_new_note_beside_its_twin_in_case_as_one_the_index_lacks(
    behind: Path,
) -> None:
    """On ext4 a note written beside one of another case alone is a new note: the
    reader daemon's note named it as the index's people/sarah-chen.md "changed here"
    (its text differs), or named nothing at all when it was a copy: the writer never
    indexes it (no one commits it)."""
    sarah = "people/sarah-chen.md"
    write(behind, "people/Sarah-Chen.md", "Another Sarah Chen, new here: she runs the kiln.\n")
    write(behind, "PEOPLE/sarah-chen.md", (behind / sarah).read_text(encoding="utf-8"))
    with open_vault(behind, mode="query") as reader:
        assert sarah in reader.engine.store.manifest()
        changed = ChangedHere()
        changed.noted(["people/Sarah-Chen.md", "PEOPLE/sarah-chen.md"])
        said = changed.say(reader.engine)
        assert said is not None
        assert "lacks 2 notes of this copy (PEOPLE/sarah-chen.md, people/Sarah-Chen.md)" in said
        assert "changed here" not in said, said


def test_a_note_here_in_another_case_that_is_not_text_is_said_so(behind: Path) -> None:
    """`get` of the index's name read the file here in another case alone, and one not
    UTF-8 (a Windows editor's Latin-1) raised Python's own ValueError, not the note
    memvault gives for any file not text."""
    (behind / CAT).rename(behind / "people" / "ANA.md")  # renamed in case here
    (behind / "people" / "ANA.md").write_bytes("Ana, la chatte de Zoé.\n".encode("latin-1"))
    with (
        open_vault(behind, mode="query") as reader,
        pytest.raises(NoteNotFound, match=r"people/ana\.md is not a text note"),
    ):
        reader.get(CAT)
