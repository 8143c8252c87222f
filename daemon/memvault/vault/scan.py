"""The walk of ``VaultFS.scan``: every file at or below a folder, each classified by the
rules of the vault — hidden (a dot-name, a sync tool's conflict copy, our temp files),
refused (``odd_names``), left out by ``vault.ignore``, a symlink, a folder, a note, an
attachment — into a ``Scan``.

The rules are asked of each name in full (``Walk.entry``) except for the name most
files have: ``PLAIN_NOTE``, an ASCII ``name.md`` with no dot, bracket or conflict mark in
it. For such a name every rule's answer is known without asking (not hidden, not
refused, its NFC form its own, a note), so a regular file of that name that no ignore
glob matches is stat'ed and kept at once. That path is the cost of a read with no
daemon (the structure sync before it stats every note): 100,000 notes, the rules asked
of every name took ~0.3 s over the ~0.25 s of the stats themselves (bench/RESULTS.md).
Any other name, or a plain name that is a folder, a symlink, ignored, a twin of a name
seen in another Unicode form, or whose stat fails, goes through the full rules, as
before: the decisions are the same (tests/test_scan_rules.py compares the two).
"""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter

from memvault.core.changes import Seen
from memvault.core.results import SkippedFile
from memvault.errors import VaultNotFound
from memvault.vault.name_forms import preferred, twin_reason
from memvault.vault.odd_names import refused_name
from memvault.vault.paths import (
    display_path,
    is_note,
    is_utf8,
    not_a_note_for_obsidian,
    note_beside,
)
from memvault.vault.swap import TEMP_MARK
from memvault.vault.sync_copies import CONFLICT_COPY, conflict_reason, is_conflict_copy

# A name no rule but "a note" applies to: ASCII (valid UTF-8, its own NFC form), no
# backslash or percent sign (refused_name), not starting with a dot, no dot or bracket
# before its ``.md`` (lower case, as is_note), 255 bytes at most. Of the marks of a
# conflict copy (sync_copies) and of our temp files, only ownCloud's ``_conflict-...``
# can be in such a name (each other one holds a dot or a bracket): one with a ``_`` is
# asked CONFLICT_COPY too (a search of every name cost as much as its stat).
# (Not re.IGNORECASE: it takes the Kelvin sign and the long s for ASCII letters.)
PLAIN_NOTE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _-]{0,251}\.md", re.ASCII)
_BY_NAME = attrgetter("name")
_INT64 = (-(1 << 63), (1 << 63) - 1)


def hidden_name(name: str) -> bool:
    """A conflict copy or one of our temp files (a dot-name is hidden too)."""
    return is_conflict_copy(name) or TEMP_MARK in name


def mtime(st: os.stat_result) -> int:
    """The modification time in ns, within SQLite's 64-bit integers: past 2262 (a
    timestamp a broken sync tool or a FAT disk wrote, a mistyped ``touch -d``) it
    failed every sync of the vault, the one note holding up all the others."""
    return min(max(st.st_mtime_ns, _INT64[0]), _INT64[1])


@dataclass(frozen=True, slots=True)
class Scan:
    notes: dict[str, Seen]
    attachments: dict[str, Seen]  # every other file (linked, not indexed): size+mtime
    skipped: tuple[SkippedFile, ...]
    unlisted: tuple[str, ...] = ()  # folders there but not listable: their files not gone
    ignored: dict[str, int] | None = None  # what vault.ignore leaves out -> its .md files


class Walk:
    """One scan's walk down from a folder: what it found so far."""

    def __init__(self, root: str, real_root: str, ignore: re.Pattern[str] | None) -> None:
        self.root = root
        self.real_root = real_root
        self.ignore = ignore
        self.notes: dict[str, Seen] = {}
        self.attachments: dict[str, Seen] = {}
        self.skipped: list[SkippedFile] = []
        self.unlisted: list[str] = []
        self.ignored: dict[str, int] = {}
        self.twins: list[tuple[str, str]] = []  # (key, a path of that key not indexed)
        self.spelt_otherwise: set[str] = set()  # keys whose note is spelt otherwise on disk
        self.stack: list[str] = []
        # (note_beside's: a folder of NOTE.MD files listed once, its names' forms once)
        self.listed: dict[str, set[str]] = {}
        self.forms: dict[str, dict[str, str]] = {}

    def run(self, folder: str, check_root: Callable[[], None], fast: bool = True) -> Scan:
        """Walk ``folder`` ('' = the whole vault); ``fast=False`` asks every rule of every
        name (what the plain names' path must agree with)."""
        self.stack.append(folder.strip("/"))
        check_root()
        while self.stack:
            folder = self.stack.pop()
            try:
                entries = list(os.scandir(os.path.join(self.root, folder) if folder else self.root))
            except OSError as exc:
                if not folder:  # the vault itself: an empty scan would mean "all deleted"
                    check_root()
                    raise VaultNotFound(
                        f"cannot list the vault folder {self.root}: {exc.strerror}; nothing was changed"
                    ) from None
                self.skipped.append(SkippedFile(folder, f"cannot list folder: {exc.strerror}"))
                if not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
                    self.unlisted.append(folder)  # there, but closed to us (its permissions)
                continue
            entries.sort(key=_BY_NAME)
            if fast:
                self._folder(folder, entries)
            else:
                for entry in entries:
                    self.entry(f"{folder}/{entry.name}" if folder else entry.name, entry)
        notes = self.notes
        skipped = self.skipped + [
            SkippedFile(rel, twin_reason(rel, notes[key].disk)) for key, rel in self.twins
        ]
        return Scan(notes, self.attachments, tuple(skipped), tuple(self.unlisted), self.ignored)

    def _folder(self, folder: str, entries: list[os.DirEntry[str]]) -> None:
        """The entries of one folder, by name: a plain note kept at once, the rest
        through ``entry``. (The folder's rules are the same for all its files: its
        prefix and the prefix's NFC form are made once.)"""
        prefix = f"{folder}/" if folder else ""
        key_prefix = unicodedata.normalize("NFC", prefix)  # "/" never composes: a join
        as_spelt = key_prefix == prefix  # (most folders: a key is its path, one string)
        plain, copy, notes, ignore = (
            PLAIN_NOTE.fullmatch,
            CONFLICT_COPY.search,
            self.notes,
            self.ignore,
        )
        low, high = _INT64
        for entry in entries:
            name = entry.name
            if plain(name) is not None and ("_" not in name or copy(name) is None):
                rel = prefix + name
                key = rel if as_spelt else key_prefix + name
                if key not in notes and (ignore is None or ignore.match(rel) is None):
                    try:
                        if entry.is_file(follow_symlinks=False):
                            st = entry.stat()
                            ns = st.st_mtime_ns
                            notes[key] = Seen(
                                st.st_size, ns if low <= ns <= high else mtime(st), rel
                            )
                            if not as_spelt:
                                self.spelt_otherwise.add(key)
                            continue
                    except OSError:
                        pass  # the full rules say what of it
            self.entry(prefix + name, entry)

    def entry(self, rel: str, entry: os.DirEntry[str]) -> None:
        """One file or folder, by every rule."""
        # its folders were looked at on the way down: the name is what is left
        if entry.name.startswith(".") or hidden_name(entry.name):
            copy = conflict_reason(rel) if is_utf8(rel) and is_note(rel) else None
            if copy and not self._ignored(rel) and is_file_entry(entry):
                self.skipped.append(SkippedFile(rel, copy))  # a person's words: listed
            return
        if (refused := refused_name(entry.name)) is not None:
            self.skipped.append(SkippedFile(display_path(rel), refused))
            return
        if self._ignored(rel):
            # not indexed, but Obsidian sees it: links to it must resolve
            top = ignored_top(self.ignore, rel)
            if top == rel and entry.is_dir(follow_symlinks=False):
                top += "/"
            self.ignored.setdefault(top, 0)
            if is_note(entry.name):
                self.ignored[top] += 1
            if entry.is_dir(follow_symlinks=False):
                self.stack.append(rel)
            elif entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    self.attachments[unicodedata.normalize("NFC", rel)] = Seen(
                        st.st_size, mtime(st), rel
                    )
            return
        try:
            if entry.is_symlink():
                real = os.path.realpath(entry.path)
                if os.path.commonpath([self.real_root, real]) != self.real_root:
                    self.skipped.append(SkippedFile(rel, "symlink leads outside the vault"))
                    return
                if os.path.isdir(real):
                    self.skipped.append(
                        SkippedFile(
                            rel, "symlinked folder (its notes are indexed where they really are)"
                        )
                    )
                    return
            if entry.is_dir():
                self.stack.append(rel)
                return
            if not entry.is_file():
                return
            st = entry.stat()
        except OSError as exc:
            self.skipped.append(SkippedFile(rel, f"cannot stat: {exc.strerror}"))
            return
        key = unicodedata.normalize("NFC", rel)
        if not is_note(rel):
            # a file, and links to it resolve; a NOTE.MD is said too: a person's words
            self.attachments[key] = Seen(st.st_size, mtime(st), rel)
            if rel[-3:].lower() == ".md":  # (a stat for a NOTE.MD alone: a NOTE.md?)
                beside = note_beside(entry.path, self.listed, self.forms)
                if (why := not_a_note_for_obsidian(rel, beside=beside)) is not None:
                    self.skipped.append(SkippedFile(rel, why))
            return
        notes = self.notes
        if key in notes:  # one name in two Unicode forms: one is indexed (name_forms)
            keep = preferred(key, rel, notes[key].disk)
            self.twins.append((key, notes[key].disk if keep else rel))
            if not keep:
                return
        notes[key] = Seen(st.st_size, mtime(st), rel)
        if key != rel:
            self.spelt_otherwise.add(key)

    def _ignored(self, rel: str) -> bool:
        return self.ignore is not None and self.ignore.match(rel) is not None


def is_file_entry(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is a file or a symlink to one; False when that cannot be known
    (a symlink in a loop, or into a folder closed to us): such an error failed the scan,
    every sync and every search of the vault with it."""
    try:
        return entry.is_file()
    except OSError:
        return False


def ignored_top(ignore: re.Pattern[str] | None, rel: str) -> str:
    """The outermost folder (``templates/``) or file ``vault.ignore`` leaves out that
    holds ``rel``: what ``status`` lists."""
    if ignore is None:
        return rel
    parts = rel.split("/")
    for n in range(1, len(parts)):
        folder = "/".join(parts[:n])
        if ignore.match(folder) is not None or ignore.match(folder + "/") is not None:
            return folder + "/"
    return rel
