"""The scan's plain-name path (vault/scan.py) decides every file as the full rules do.

A plain ``name.md`` is kept without asking each rule; these tests hold it to the same
answer as asking them all (``VaultFS.scan(fast=False)``) on a vault of hostile names,
and check on generated names that a name the path takes could be nothing but a note.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.vault.files import VaultFS
from memvault.vault.odd_names import refused_name
from memvault.vault.paths import is_note
from memvault.vault.scan import PLAIN_NOTE, Scan, hidden_name
from memvault.vault.sync_copies import CONFLICT_COPY

# every file a person, an editor, a sync tool or memvault leaves in a vault
HOSTILE = [
    "MEMORY.md",
    "plain.md",
    "Plain Name With Spaces.md",
    "under_score-and-dash.md",
    "UPPER.MD",
    "mixed.Md",
    "-leading-dash.md",
    "_leading_underscore.md",
    "0123.md",
    "a.b.md",
    "drawing.excalidraw.md",
    "board.canvas",
    "photo.png",
    "paper.pdf",
    "notes.md.bak",
    "noext",
    "md",
    ".md",
    ".hidden.md",
    "ana.sync-conflict-20261205-101010-ABCDEFG.md",
    "ana (conflicted copy 2026-12-05 101010).md",
    "ana (Ana's MacBook's conflicted copy 2026-12-05).md",
    "ana (Case Conflict).md",
    "ana (Selective Sync Conflict).md",
    "ana_conflict-20261205-101010.md",
    "ana_CONFLICT-20261205-101010.md",
    "ana_conflict-2026120-101010.md",  # one digit short: a note
    "ana 2.md",
    "ana-LAPTOP.md",
    "Conflict resolution.md",
    "x (conflict 2024-01-01).md",
    "note.md.orig",
    "note.md~",
    "note.memvault-tmp-abc123.md",
    "Caf\u00e9.md",
    "Cafe\u0301.md",
    "Kelvin.md",
    "\u212aelvin.md",  # KELVIN SIGN: its NFC form is the ASCII "Kelvin.md"
    "\u212aeep.md",  # alone: indexed under "Keep.md"
    "50%.md",
    "a%2fb.md",
    "back\\slash.md",
    "tab\tname.md",
    "new\nline.md",
    "draft.md",
    "secret.md",
    "x" * 252 + ".md",
    "x" * 251 + ".md",
    "\u65e5\u8a18.md",
    "emoji \U0001f600.md",
]
FOLDERS = ["", "people", "Caf\u00e9", "Cafe\u0301", "templates", "archive", "deep/er/still"]
DOT_FOLDERS = [".obsidian", ".trash", ".git", ".memvault-tmp-x"]
IGNORE = [
    "templates/**",
    "archive/*-????-??-??.md",
    "secret.md",  # no "/": a name anywhere
    "*.draft.md",
    "people/draft.md",
    "deep/er/",
]


def _hostile_vault(root: Path) -> None:
    for folder in FOLDERS + DOT_FOLDERS:
        here = root / folder
        here.mkdir(parents=True, exist_ok=True)
        for i, name in enumerate(HOSTILE):
            (here / name).write_bytes(f"# {i}\n".encode() * (i + 1))
        os.utime(here / "plain.md", ns=(0, 1 << 62))  # a far mtime, clamped alike
    (root / "archive" / "MEMORY-2026-01-01.md").write_text("old\n", encoding="utf-8")
    (root / "folder.md").mkdir()  # a plain note's name on a folder
    (root / "folder.md" / "inside.md").write_text("in\n", encoding="utf-8")
    (root / "linked.md").symlink_to(root / "plain.md")  # a plain name, a symlink in
    (root / "outside.md").symlink_to("/etc/hostname")  # out of the vault
    (root / "folderlink.md").symlink_to(root / "people")  # a symlinked folder
    (root / "dangling.md").symlink_to(root / "nothing-here.md")
    bad = os.fsencode(str(root / "people")) + b"/bad\xff.md"  # not UTF-8
    with open(bad, "wb") as f:
        f.write(b"x\n")


def _as_data(scan: Scan) -> tuple[object, ...]:
    """A scan as values, the name on disk of each file included (``Seen`` compares
    without it)."""
    return (
        {k: (s.size, s.mtime_ns, s.disk) for k, s in scan.notes.items()},
        {k: (s.size, s.mtime_ns, s.disk) for k, s in scan.attachments.items()},
        scan.skipped,
        scan.unlisted,
        scan.ignored,
    )


def test_the_plain_names_path_decides_a_hostile_vault_as_every_rule_does(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    _hostile_vault(root)
    fast = VaultFS(root, IGNORE).scan()
    full = VaultFS(root, IGNORE).scan(fast=False)
    assert _as_data(fast) == _as_data(full)
    # the vault asks both paths: plain names kept, the others decided by the rules
    assert "people/plain.md" in fast.notes and "people/secret.md" not in fast.notes
    assert fast.notes["plain.md"].mtime_ns == 1 << 62
    assert "Keep.md" in fast.notes and "Kelvin.md" in fast.notes
    assert fast.notes["Kelvin.md"].disk == "Kelvin.md"
    assert any("conflict copy of people/ana.md" in s.reason for s in fast.skipped)
    assert {"templates/", "deep/er/"} <= set(fast.ignored or {})
    for folder in (".obsidian", ".trash", ".git"):
        assert not any(p.startswith(folder) for p in fast.notes)


def test_a_scan_of_one_folder_decides_as_every_rule_does(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    _hostile_vault(root)
    for folder in ("people", "Cafe\u0301", "templates", "folder.md"):
        fast = VaultFS(root, IGNORE).scan(folder)
        assert _as_data(fast) == _as_data(VaultFS(root, IGNORE).scan(folder, fast=False))


_PIECES = [
    *"aZ09 _-.()~%\\\u00e9\u0301\u212a\u00c5",
    ".md",
    ".MD",
    "conflict",
    "conflicted copy",
    "Case Conflict",
    "sync-conflict-",
    "_conflict-",
    "_CONFLICT-",
    "20261205",
    "-101010",
    ".orig",
    ".memvault-tmp-",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12).map("".join))
def test_a_name_the_plain_path_takes_could_be_nothing_but_a_note(name: str) -> None:
    taken = PLAIN_NOTE.fullmatch(name) is not None and (
        "_" not in name or CONFLICT_COPY.search(name) is None
    )
    if taken:
        assert not name.startswith(".")
        assert not hidden_name(name)
        assert refused_name(name) is None
        assert is_note(name)
        assert unicodedata.normalize("NFC", name) == name
