"""What a sync finds on disk: every file, or the paths a watcher's batch named.

The first step of ``Engine.sync``: stat what is there (a folder named by an event is
scanned, with what the index had under it), refuse what may not be read (reported,
and whatever was indexed under that name leaves), and keep as recorded the files
under a folder memvault may not list. Notes are compared with the index by the
caller (core.changes.diff); attachments (every other file: linked, not indexed)
here, by ``Attachments.observe``. ``moved_and_edited`` reads what
``core.changes.edited_moves`` compares; ``compared`` is ``core.changes.diff`` without
the moves it found by bytes that tell no note from another.
"""

from __future__ import annotations

import dataclasses
import posixpath
import unicodedata
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from memvault.core.changes import ChangeSet, Known, Seen, diff, edited_moves, unlisted_kept
from memvault.core.chunks import chunk_note
from memvault.core.notes import parse_note
from memvault.core.results import SkippedFile
from memvault.core.text import NotText
from memvault.engine.attachments import AttachmentChanges, Attachments
from memvault.errors import MemvaultError
from memvault.index.store import Store
from memvault.vault.files import VaultFS, display_path, is_utf8
from memvault.vault.paths import is_note, listed_spelling, not_a_note_for_obsidian, note_beside


class Observed(NamedTuple):
    seen: dict[str, Seen]  # notes on disk, in scope
    scope: set[str] | None  # the notes a partial sync looks at (None: every note)
    skipped: list[SkippedFile]
    attachments: AttachmentChanges


def observe(
    fs: VaultFS,
    store: Store,
    attachments: Attachments,
    paths: Iterable[str] | None,
    memory: str = "",
) -> Observed:
    """What is on disk: everything (``paths`` None), or the named paths (and the files
    inside any of them that is a folder). ``memory``: MEMORY.md's path, which on a disk
    that folds case is the file of that name in any case (``Memory.md``, renamed so by
    a person): the index, never a note beside it; memvault's next write of it names it
    back, as config.toml says."""
    if paths is None:
        scan = fs.scan()
        seen, found = dict(scan.notes), dict(scan.attachments)
        _keep_unlisted(store, scan.unlisted, seen, found)
        _memory_named(fs, seen, memory)
        return Observed(seen, None, list(scan.skipped), attachments.observe(found, None))
    scope: set[str] = set()
    seen = {}
    att_scope: set[str] = set()
    att_seen: dict[str, Seen] = {}
    skipped: list[SkippedFile] = []
    known: set[str] | None = None
    listed: dict[str, set[str]] = {}  # a disk that folds case: each folder listed once
    forms: dict[str, dict[str, str]] = {}  # (and its names by their forms, once)

    def spelt(path: str, within: set[str]) -> tuple[str, Seen | None]:
        """``path`` (in ``within``) and its stat, or, there only in another case, the
        disk's spelling (``_spelt_there``) put in ``within`` in its place, unless
        ``path`` is indexed (then it is gone: a rename in case)."""
        nonlocal known
        st = fs.stat(path, as_spelt=True, listed=listed)
        if st is not None or (there := _spelt_there(fs, path, listed, forms)) is None:
            return path, st
        if known is None:
            known = set(store.manifest()) | set(store.attachment_paths())
        if path not in known:  # the same file: no note vanished (that asks a rescan)
            within.discard(path)
        within.add(there)
        return there, fs.stat(there)

    for raw in paths:
        path = raw.strip("/")
        if not path or fs.is_ignored(path):
            continue
        refusal = fs.refusal(path)
        if refusal is not None:
            # skipped and reported; the rest of the batch goes on. Whatever was
            # indexed under this name (a note since replaced by a symlink) leaves.
            skipped.append(SkippedFile(display_path(path), refusal))
            if is_utf8(path):
                if known is None:
                    known = set(store.manifest()) | set(store.attachment_paths())
                gone = {p for p in known if p == path or p.startswith(path + "/")}
                scope |= {p for p in gone if is_note(p)}
                att_scope |= {p for p in gone if not is_note(p)}
            continue
        if not is_note(path):
            # a folder (moved or deleted as a whole), or an attachment
            if known is None:
                known = set(store.manifest()) | set(store.attachment_paths())
            inside = [p for p in known if p.startswith(path + "/")]
            is_dir = fs.is_folder(path)
            if inside or is_dir:
                scope |= {p for p in inside if is_note(p)}
                att_scope |= {p for p in inside if not is_note(p)}
                if is_dir:
                    scan = fs.scan(path)
                    skipped += scan.skipped
                    scope |= scan.notes.keys()
                    seen |= scan.notes
                    att_scope |= scan.attachments.keys()
                    att_seen |= scan.attachments
                    _keep_unlisted(store, scan.unlisted, seen, att_seen)
                continue
            att_scope.add(path)
            path, st = spelt(path, att_scope)
            if st is not None:
                att_seen[path] = st
                beside = path[-3:].lower() == ".md" and note_beside(
                    str(fs.root / path), listed, forms
                )
                if (why := not_a_note_for_obsidian(path, beside=beside)) is not None:
                    skipped.append(SkippedFile(path, why))  # as the scan says it
            continue
        scope.add(path)
        path, st = spelt(path, scope)
        if st is not None:
            seen[path] = st
    if _memory_named(fs, seen, memory):
        scope.add(memory)
    return Observed(seen, scope, skipped, attachments.observe(att_seen, att_scope))


def _spelt_there(
    fs: VaultFS, path: str, listed: dict[str, set[str]], forms: dict[str, dict[str, str]]
) -> str | None:
    """A path the watcher named, not there as spelt, that is there in another case on
    a disk that folds case, as the disk spells it (in NFC): a program that opened
    ``people/ALICE.md`` wrote into the person's ``people/alice.md``, and the watcher
    names the path as the program spelt it. None when it is in no case, or is of
    another kind (``x.MD`` for ``x.md``)."""
    if not fs.folds:
        return None
    there = listed_spelling(str(fs.root), path, listed, forms)
    if there is None or is_note(there) != is_note(path) or fs.is_ignored(there):
        return None
    return unicodedata.normalize("NFC", there)


def _memory_named(fs: VaultFS, seen: dict[str, Seen], memory: str) -> bool:
    """MEMORY.md seen under another case of its name (a disk that folds case) keyed by
    its own: whether it was."""
    if not fs.folds or not memory or memory in seen:
        return False
    other = next((p for p in seen if p.casefold() == memory.casefold()), None)
    if other is None:
        return False
    seen[memory] = seen.pop(other)
    return True


def _keep_unlisted(
    store: Store, folders: tuple[str, ...], notes: dict[str, Seen], attachments: dict[str, Seen]
) -> None:
    """Files under a folder memvault may not list stay as recorded (``unlisted_kept``)."""
    if folders:
        notes.update(unlisted_kept(folders, store.manifest(), notes))
        attachments.update(unlisted_kept(folders, store.attachment_manifest(), attachments))


def compared(
    known: Mapping[str, Known],
    seen: dict[str, Seen],
    hashes: dict[str, str],
    scope: set[str] | None,
    store: Store,
) -> ChangeSet:
    """``diff``'s change set without the moves it paired by content alone where the note
    had nothing of its own to say (no chunk: an empty file, a template's headings and
    hints) and its name changed: the same bytes at a new name are then no sign of the
    same note. A sync tool delivers another machine's deleted empty log and its new one
    from the same template in one burst; paired, a person's links to the deleted day
    were re-targeted to the new one. They are a delete and a create. A note of the same
    name in another folder (its folder renamed) is still a move, and so is a rename the
    file system reported (``reported_moves``, after this)."""
    changes = diff(known, seen, hashes, scope)
    blank = [
        (old, new)
        for old, new in changes.moved
        if posixpath.basename(old) != posixpath.basename(new) and not store.chunks_of(old)
    ]
    if not blank:
        return changes
    return dataclasses.replace(
        changes,
        moved=tuple(m for m in changes.moved if m not in blank),
        created=tuple(sorted(changes.created + tuple(new for _, new in blank))),
        deleted=tuple(sorted(changes.deleted + tuple(old for old, _ in blank))),
    )


def moved_and_edited(changes: ChangeSet, fs: VaultFS, store: Store, memory: str) -> ChangeSet:
    """``edited_moves`` of ``changes``, comparing like with like: a gone note's chunks'
    text as the index holds it (read before its rows go), a new note's chunks' text
    cut from disk (no frontmatter, no template hints, no empty section: a note made
    from a template compared whole against its chunks never paired). MEMORY.md is
    never one of a pair (``memory``: its path)."""
    if not changes.deleted or not changes.created:
        return changes

    def old_text(path: str) -> str | None:
        chunks = store.chunks_of(path) if path != memory else []
        return "\n".join(c.text for c in chunks) if chunks else None

    def new_text(path: str) -> str | None:
        if path == memory:
            return None
        try:
            note = parse_note(path, fs.read(path).decoded.text)
        except (OSError, MemvaultError, NotText):  # gone again, or not text: no pair
            return None
        words = _UNCUT  # cut by sections only: the words are compared, not the pieces
        chunks = chunk_note(note, lambda t: len(t.split()), target_tokens=words, max_tokens=words)
        return "\n".join(c.text for c in chunks) or None

    return edited_moves(changes, old_text, new_text)


_UNCUT = 10**9
