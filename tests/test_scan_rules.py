"""The scan's plain-name path (vault/scan.py) decides every file as the full rules do.

A plain ``name.md`` is kept without asking each rule; these tests hold it to the same
answer as asking them all (``VaultFS.scan(fast=False)``) on a vault of hostile names,
and check on generated names that a name the path takes could be nothing but a note.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import unicodedata
from collections import Counter
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


# a generated vault: names a person, a Mac, a sync tool or memvault gives, in folders
# spelt in both Unicode forms, hidden, ignored, not UTF-8, or named as a note
_NAMES = [
    "a.md",
    "A.md",
    "a.MD",
    "Kelvin.md",
    "\u212aelvin.md",
    "Caf\u00e9.md",
    "Cafe\u0301.md",
    "x_conflict-20261205-101010.md",
    "x_y.md",
    "a b.md",
    "a .md",
    "a.md ",
    "a.md.",
    ".a.md",
    "a.b.md",
    "a~",
    "a.memvault-tmp-1.md",
    "a (conflicted copy 2026-12-05).md",
    "50%.md",
    "back\\slash.md",
    "tab\tname.md",
    "bidi\u202ename.md",
    "x" * 251 + ".md",
    "img.png",
]
_FOLDERS = ["", "p", "Caf\u00e9", "Cafe\u0301", "\u212a", "K", ".trash", "tpl", "n.md", "p/q"]
_KINDS = [
    "file",
    "file",
    "file",
    "folder",
    "link_file",
    "link_folder",
    "link_out",
    "dangling",
    "loop",
]
_GLOBS = ["tpl/**", "a.md", "p/*.md", "*.png", "K/", "x_*.md"]


def _place(root: Path, rel: str, kind: str, mtime: int) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        path.write_bytes(b"# x\n" * (len(rel) % 7 + 1))
        os.utime(path, ns=(0, mtime))
    elif kind == "folder":
        (path / "in.md").parent.mkdir(parents=True, exist_ok=True)
        (path / "in.md").write_bytes(b"in\n")
    else:
        target = {
            "link_file": root / "MEMORY.md",
            "link_folder": root / "p",
            "link_out": Path("/etc/hostname"),
            "dangling": root / "nothing.md",
            "loop": path,
        }[kind]
        path.symlink_to(target)


_TWIN_FOLDER = {"Caf\u00e9": "Cafe\u0301", "Cafe\u0301": "Caf\u00e9", "K": "\u212a", "\u212a": "K"}
_ENTRY = st.tuples(
    st.sampled_from(_FOLDERS),
    st.sampled_from(_NAMES),
    st.sampled_from(_KINDS),
    st.sampled_from(
        [1_700_000_000 * 10**9, 13_000_000_000 * 10**9, -(10**9), 0]
    ),  # 2381: past int64 ns
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_ENTRY, min_size=1, max_size=14),
    st.lists(st.sampled_from(_GLOBS), max_size=3, unique=True),
    st.lists(st.integers(0, 13), max_size=3),
)
def test_generated_vaults_are_decided_by_the_plain_path_as_by_every_rule(
    entries: list[tuple[str, str, str, int]], globs: list[str], swaps: list[int]
) -> None:
    """Any vault of those names, kinds and ignore globs scans alike both ways, and so
    again after files became folders of the same name and folders files (a sync that
    brought one in place of the other between two scans)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
        (root / "p").mkdir()
        with open(os.fsencode(root / "p") + b"/bad\xff.md", "wb") as f:
            f.write(b"x\n")
        for folder, name, kind, mtime in entries:
            for there in (folder, _TWIN_FOLDER.get(folder)):  # its twin folder's too
                with contextlib.suppress(OSError):  # a name taken, a folder of it a file
                    if there is not None:
                        _place(root, f"{there}/{name}" if there else name, kind, mtime)
        fs = VaultFS(root, globs)
        assert _as_data(fs.scan()) == _as_data(VaultFS(root, globs).scan(fast=False))
        for i in swaps:  # a file replaced by a folder of its name, a folder by a file
            folder, name, _, mtime = entries[i % len(entries)]
            path = root / folder / name
            rel = f"{folder}/{name}" if folder else name
            if path.is_symlink() or path.is_file():
                path.unlink()
                _place(root, rel, "folder", mtime)
            elif path.is_dir():
                shutil.rmtree(path)
                _place(root, rel, "file", mtime)
        assert _as_data(fs.scan()) == _as_data(VaultFS(root, globs).scan(fast=False))
        for folder in ("p", "Cafe\u0301", "n.md"):
            assert _as_data(fs.scan(folder)) == _as_data(fs.scan(folder, fast=False))


def test_a_conflict_copy_that_is_a_symlink_in_a_loop_fails_no_scan(tmp_path: Path) -> None:
    """A sync tool's conflict copy of a note that was a symlink, left pointing at itself:
    the scan asked whether it was a file and the error (ELOOP) failed the scan, so every
    sync and every search of the vault said "Too many levels of symbolic links"."""
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / "people" / "ana.md").write_text("# Ana\n", encoding="utf-8")
    for name in ("ana.sync-conflict-20261205-101010-ABCDEFG.md", "ana_conflict-20261205-101010.md"):
        (root / "people" / name).symlink_to(name)
    fast = VaultFS(root).scan()
    assert _as_data(fast) == _as_data(VaultFS(root).scan(fast=False))
    assert list(fast.notes) == ["people/ana.md"]


_CAFE = ("Caf\u00e9", "Cafe\u0301")  # one folder's name, NFC and NFD
_SPOTS = ["", *_CAFE, "p", f"p/{_CAFE[1]}", f"{_CAFE[1]}/q", f"{_CAFE[0]}/q"]
_STEP = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(_SPOTS), st.sampled_from(_NAMES[:7])),
    st.tuples(st.just("delete"), st.sampled_from(_SPOTS), st.sampled_from(_NAMES[:7])),
    st.tuples(st.just("rename"), st.sampled_from(_SPOTS[1:]), st.sampled_from(_SPOTS[1:])),
    st.tuples(st.just("scan"), st.sampled_from(_SPOTS), st.booleans()),
)


@settings(max_examples=120, deadline=None)
@given(st.lists(_STEP, max_size=20))
def test_the_names_on_disk_kept_are_those_a_look_at_each_scanned_note_keeps(
    steps: list[tuple[str, str, object]],
) -> None:
    """``VaultFS`` keeps a key's name on disk from the keys a walk found spelt otherwise
    (``Walk.spelt_otherwise``), not by a look at every note: after any scans of the
    vault or a folder, fast or not, between notes written, deleted and folders renamed
    from NFD to NFC and back, what it keeps is what that look kept (each scanned key:
    its name on disk when spelt otherwise, else none; the keys not scanned as they were)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fs, kept = VaultFS(root), {}
        for what, spot, arg in steps:
            path = root / spot / str(arg)
            if what == "write":
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(b"# x\n")
            elif what == "delete":
                with contextlib.suppress(OSError):
                    path.unlink()
            elif what == "rename":
                src, dst = root / spot, root / str(arg)
                if src.is_dir() and not dst.exists() and src not in dst.parents:
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    src.rename(dst)
            else:
                scan = fs.scan(spot, fast=bool(arg))
                for key, seen in scan.notes.items():
                    if key != seen.disk:
                        kept[key] = seen.disk
                    else:
                        kept.pop(key, None)
                assert fs._disk == kept
                forms = Counter(  # files by key: a key of two files names either
                    unicodedata.normalize("NFC", os.path.relpath(os.path.join(d, n), root))
                    for d, _, names in os.walk(root)
                    for n in names
                )
                for key, seen in scan.notes.items():
                    if forms[key] == 1:  # read through the name the scan found
                        assert fs.path(key) == root / seen.disk
