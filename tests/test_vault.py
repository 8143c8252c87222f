"""vault.py: safe paths, scanning, capped reads, compare-and-swap writes, the lock."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from attacks import ATTACKS
from memvault.core.text import NotText
from memvault.errors import LockHeld, NoteExists, UnsafePath
from memvault.vault.files import VaultFS, glob_regex, normalize_rel, safe_join
from memvault.vault.lock import WriterLock, find_vault


@pytest.fixture
def vault_with_secrets(tmp_path: Path) -> Path:
    """A vault, a secret beside it, a sibling 'vault-evil', symlinks leading out."""
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / "people" / "ana.md").write_text("# Ana\n", encoding="utf-8")
    (tmp_path / "secret.md").write_text("SECRET", encoding="utf-8")
    (tmp_path / "vault-evil").mkdir()
    (tmp_path / "vault-evil" / "secret.md").write_text("SECRET", encoding="utf-8")
    (root / "escape").symlink_to(tmp_path / "vault-evil")
    (root / "escape-file.md").symlink_to(tmp_path / "secret.md")
    return root


@pytest.mark.parametrize("attack", ATTACKS)
def test_every_traversal_attack_is_refused(vault_with_secrets: Path, attack: str) -> None:
    with pytest.raises(UnsafePath):
        safe_join(vault_with_secrets, attack)


@pytest.mark.parametrize(
    ("rel", "clean"),
    [
        ("people/ana.md", "people/ana.md"),
        ("./people//ana.md", "people/ana.md"),
        ("people/Ana Lo\u0301pez.md", "people/Ana López.md"),
        ("a b/c%20d.md", "a b/c%20d.md"),
    ],
)
def test_normal_paths_are_cleaned(rel: str, clean: str) -> None:
    assert normalize_rel(rel) == clean


def test_scan_ignores_what_design_says(tmp_path: Path) -> None:
    files = {
        "MEMORY.md": "# M",
        "people/ana.md": "a",
        ".obsidian/x.md": "x",
        ".git/y.md": "y",
        ".trash/z.md": "z",
        ".memvault/c.md": "c",
        "people/.hidden.md": "h",
        "people/ana.sync-conflict-20240101-1234.md": "c",
        "people/ana (conflicted copy).md": "c",
        "people/ana.md.orig": "o",
        "templates/person.md": "t",
        "assets/img.png": "png",
        "people/.ana.md.memvault-tmp-abcd": "tmp",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    scan = VaultFS(tmp_path, ignore=["templates/**"]).scan()
    assert sorted(scan.notes) == ["MEMORY.md", "people/ana.md"]
    # ignored by config: not indexed, but links to it resolve (Obsidian sees it)
    assert set(scan.attachments) == {"assets/img.png", "templates/person.md"}
    # with the size and mtime a rename keeps (attachment moves are found by them)
    img = (tmp_path / "assets/img.png").stat()
    assert (
        scan.attachments["assets/img.png"].size,
        scan.attachments["assets/img.png"].mtime_ns,
    ) == (
        img.st_size,
        img.st_mtime_ns,
    )


def test_scan_skips_symlinks_leading_out_with_a_reason(vault_with_secrets: Path) -> None:
    scan = VaultFS(vault_with_secrets).scan()
    assert "escape-file.md" not in scan.notes
    reasons = {s.path: s.reason for s in scan.skipped}
    assert "outside the vault" in reasons["escape-file.md"]
    assert "outside the vault" in reasons["escape"]


def test_symlink_inside_the_vault_to_a_note_is_indexed(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x", encoding="utf-8")
    (tmp_path / "b.md").symlink_to(tmp_path / "a.md")
    assert sorted(VaultFS(tmp_path).scan().notes) == ["a.md", "b.md"]


def test_nfc_and_nfd_names_are_one_note(tmp_path: Path) -> None:
    nfc = unicodedata.normalize("NFC", "José.md")
    nfd = unicodedata.normalize("NFD", "José.md")
    (tmp_path / nfd).write_text("one", encoding="utf-8")
    fs = VaultFS(tmp_path)
    scan = fs.scan()
    assert list(scan.notes) == [nfc]
    assert fs.read(nfc).decoded.text == "one"  # read through the on-disk (NFD) name
    (tmp_path / nfc).write_text("two", encoding="utf-8")
    scan = VaultFS(tmp_path).scan()
    assert list(scan.notes) == [nfc]
    assert len(scan.skipped) == 1 and "Unicode" in scan.skipped[0].reason


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"\x00\x01binary", "binary"), ("caf\u00e9".encode("latin-1"), "not UTF-8")],
)
def test_binary_and_non_utf8_notes_are_refused_with_a_reason(
    tmp_path: Path, data: bytes, message: str
) -> None:
    (tmp_path / "x.md").write_bytes(data)
    with pytest.raises(NotText, match=message):
        VaultFS(tmp_path).read("x.md")


def test_a_huge_note_is_read_capped_and_hashed_whole(tmp_path: Path) -> None:
    line = ("é" * 99 + "\n").encode("utf-8")
    data = line * 60_000  # ~12 MB
    (tmp_path / "big.md").write_bytes(data)
    result = VaultFS(tmp_path, max_note_bytes=1_000_000).read("big.md")
    assert result.truncated and result.size == len(data)
    assert len(result.decoded.text.encode("utf-8")) <= 1_000_000
    assert result.decoded.text.endswith("\n")
    import hashlib

    assert result.sha256 == hashlib.sha256(data).hexdigest()


def test_bom_and_crlf_survive_an_update(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_bytes(b"\xef\xbb\xbfline one\r\nline two\r\n")
    fs = VaultFS(tmp_path)
    written, _ = fs.update_text("n.md", lambda t: t.replace("two", "2"))
    assert written
    assert (tmp_path / "n.md").read_bytes() == b"\xef\xbb\xbfline one\r\nline 2\r\n"


def test_no_write_when_nothing_changes(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("same", encoding="utf-8")
    os.utime(tmp_path / "n.md", ns=(1, 1))
    written, _ = VaultFS(tmp_path).update_text("n.md", lambda t: t)
    assert not written and (tmp_path / "n.md").stat().st_mtime_ns == 1


def test_cas_refuses_when_the_file_changed_underneath(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("v1", encoding="utf-8")
    fs = VaultFS(tmp_path)
    assert not fs.write_cas("n.md", b"mine", expected_sha="0" * 64)
    assert (tmp_path / "n.md").read_text() == "v1"
    assert not [p for p in tmp_path.iterdir() if "tmp" in p.name]


def test_update_retries_until_it_sees_a_stable_file(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("v1", encoding="utf-8")
    fs = VaultFS(tmp_path)
    calls = []

    def change(text: str) -> str:
        calls.append(text)
        if len(calls) == 1:  # a person saves while we compute
            (tmp_path / "n.md").write_text("v2 by a person", encoding="utf-8")
        return text + " +memvault"

    fs.update_text("n.md", change)
    assert (tmp_path / "n.md").read_text() == "v2 by a person +memvault"
    assert calls == ["v1", "v2 by a person"]


def test_create_never_overwrites(tmp_path: Path) -> None:
    fs = VaultFS(tmp_path)
    fs.create("a/new.md", "one")
    with pytest.raises(NoteExists):
        fs.create("a/new.md", "two")
    assert (tmp_path / "a" / "new.md").read_text() == "one"


def test_leftover_temp_files_are_removed(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    leftover = tmp_path / "d" / ".n.md.memvault-tmp-1234"
    leftover.write_text("half", encoding="utf-8")
    keep = tmp_path / "d" / ".keep-me"
    keep.write_text("x", encoding="utf-8")
    assert VaultFS(tmp_path).remove_temp_files() == ["d/.n.md.memvault-tmp-1234"]
    assert not leftover.exists() and keep.exists()


def test_the_writer_lock_is_exclusive_and_names_the_holder(tmp_path: Path) -> None:
    a, b = WriterLock(tmp_path / "lock"), WriterLock(tmp_path / "lock")
    a.acquire()
    with pytest.raises(LockHeld) as exc:
        b.acquire()
    assert exc.value.pid == os.getpid() and str(os.getpid()) in str(exc.value)
    a.release()
    b.acquire()
    b.release()


def test_find_vault_walks_up(tmp_path: Path) -> None:
    (tmp_path / ".memvault").mkdir()
    (tmp_path / "people" / "deep").mkdir(parents=True)
    assert find_vault(tmp_path / "people" / "deep") == tmp_path.resolve()


def test_a_memory_md_alone_does_not_make_a_vault(tmp_path: Path) -> None:
    # an agent's own MEMORY.md (or CLAUDE.md's neighbour) must not be taken over
    (tmp_path / "MEMORY.md").write_text("# M", encoding="utf-8")
    (tmp_path / "deep").mkdir()
    assert find_vault(tmp_path / "deep") is None


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("templates/**", "templates/a.md", True),
        ("templates/**", "x/templates/a.md", False),
        ("*.draft.md", "a/b/c.draft.md", True),
        ("drafts/", "drafts/x/y.md", True),
        ("**/private/*", "a/private/x.md", True),
        ("a?.md", "ab.md", True),
    ],
)
def test_ignore_globs(pattern: str, path: str, hit: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is hit


def test_a_huge_note_of_one_line_is_cut_inside_it_not_before_it(tmp_path: Path) -> None:
    """A 3 MB note of a title and one line: cut after the last whole line, it kept only
    its title (the sync said "nothing to embed")."""
    data = ("# Big\n" + "中文 word " * 300_000 + "\n").encode("utf-8")
    (tmp_path / "big.md").write_bytes(data)
    result = VaultFS(tmp_path, max_note_bytes=1_000_000).read("big.md")
    assert result.truncated and result.size == len(data)
    text = result.decoded.text
    assert 900_000 < len(text.encode("utf-8")) <= 1_000_000  # a character's edge
    assert text.startswith("# Big\n中文 word 中文") and "\ufffd" not in text


def test_a_folder_spelt_in_nfd_is_read_through_its_name_until_renamed(tmp_path: Path) -> None:
    """The plain names' fast path of the scan, in a folder whose name is not NFC: each
    note's key is the NFC form, read through the disk's name; renamed to NFC, the
    next scan forgets the old spelling (an old one kept opened a path now gone)."""
    nfc, nfd = (unicodedata.normalize(form, "Café") for form in ("NFC", "NFD"))
    (tmp_path / nfd).mkdir()
    (tmp_path / nfd / "menu.md").write_text("one", encoding="utf-8")
    (tmp_path / "plain.md").write_text("two", encoding="utf-8")
    fs = VaultFS(tmp_path)
    scan = fs.scan()
    assert sorted(scan.notes) == [f"{nfc}/menu.md", "plain.md"]
    assert scan.notes[f"{nfc}/menu.md"].disk == f"{nfd}/menu.md"
    assert fs.read(f"{nfc}/menu.md").decoded.text == "one"
    (tmp_path / nfd).rename(tmp_path / nfc)
    assert fs.scan().notes[f"{nfc}/menu.md"].disk == f"{nfc}/menu.md"
    assert fs.read(f"{nfc}/menu.md").decoded.text == "one"
    assert fs.path(f"{nfc}/menu.md") == tmp_path / nfc / "menu.md"
