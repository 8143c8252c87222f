"""The note a memory-tool ``create`` would make beside one of the same name spelt
otherwise: ``people/ana perez.md`` or ``people/Ana Pérez.md`` beside
``people/ana-pérez.md`` (case, accents, spaces, hyphens, NFC or NFD: one name to
``compose.name_key``, as ``memvault add`` matches a title). An agent that forgot the
note it made made a second one, and MEMORY.md then listed three lines a person could
not tell apart, the facts about one person split between them. Refused, naming the
note there, so the agent's next command writes into it; nothing is written.

A twin is a file the vault's scan takes for a note (``VaultFS.is_ignored``, ``refusal``):
a hidden file (``.ana.md``; ``._Ana Perez.md``, what macOS leaves on a shared disk), a
sync tool's conflict copy, a file ``vault.ignore`` leaves out (a template), a name not
UTF-8 or a symlink out of the vault is none. MEMORY.md lists no second note for it, and
the agent could not view or edit it as the refusal said (a hidden one), or would write
its facts where no search finds them (an ignored one)."""

from __future__ import annotations

import os
import posixpath
import unicodedata

from memvault.core import compose
from memvault.core.memory_tool import Refusal, shown
from memvault.vault.files import VaultFS
from memvault.vault.paths import disk_spelling, is_note, is_utf8
from memvault.vault.scan import is_file_entry

KEPT = 100_000  # names whose keys are kept: a folder of thousands is listed, not re-keyed


class NameTwins:
    """Finds a note's name twin in its folder (one listing, each name keyed once)."""

    def __init__(self) -> None:
        self._keys: dict[str, tuple[str, str]] = {}

    def _key(self, stem: str) -> tuple[str, str]:
        """The name's key as a slug cuts it (past 80 characters), and whole."""
        key = self._keys.get(stem)
        if key is None:
            if len(self._keys) >= KEPT:
                self._keys.clear()
            key = self._keys[stem] = (
                compose.name_key(stem, sharp_s=False),
                compose.name_key(stem, sharp_s=False, whole=True),
            )
        return key

    def refuse_create(self, fs: VaultFS, rel: str, path: str) -> None:
        """Refuse (``Refusal``) a note made at ``rel`` (``path`` as the agent gave it)
        beside its name twin."""
        if (twin := self.twin(fs, rel)) is not None:
            raise Refusal(twin_refusal(path, twin))

    def refuse_rename(self, fs: VaultFS, old: str, new: str, path: str) -> None:
        """Refuse a note renamed from ``old`` onto ``new`` (``path``), a name twin's
        name, as a create there is: a second note of one name (its own respelt is not)."""
        if self.same_name(old, new) and is_note(old):
            return  # its own name respelt: no second note comes of it
        if (twin := self.twin(fs, new, besides=old)) is not None:
            raise Refusal(twin_refusal(path, twin, destination=True))

    def same_name(self, rel: str, other: str) -> bool:
        """Whether ``rel`` and ``other`` are one name spelt two ways in one folder (a
        rename to another spelling of a note's own name: no second note comes of it)."""
        (folder, name), (there, named) = posixpath.split(rel), posixpath.split(other)
        return unicodedata.normalize("NFC", folder) == unicodedata.normalize(
            "NFC", there
        ) and _alike(self._key(_stem(name)), self._key(_stem(named)))

    def twin(self, fs: VaultFS, rel: str, besides: str | None = None) -> str | None:
        """The vault path of a note in ``rel``'s folder named as ``rel`` but spelt
        otherwise; None when there is none (or the name has no words to compare).
        ``besides``: a rename's source, no twin of itself; a file no note till then
        (``Fact.MD`` renamed ``Fact.md`` beside a ``fact.md``, on ext4) makes a second
        note of one name, as a create would: two notes MEMORY.md lists alike, and a
        clone on a Mac or Windows keeps one of the two."""
        folder, name = posixpath.split(rel)
        source = None
        if besides is not None and self.same_name(besides, rel):
            source = unicodedata.normalize("NFC", posixpath.basename(besides))
            source = source.lower() if fs.folds else source
        want = self._key(name[:-3])
        if not want[1]:
            return None
        # a Mac's NFD folder
        here = disk_spelling(str(fs.root), folder, fresh=fs.folds) if folder else ""
        try:
            entries = list(os.scandir(fs.root / here if here else fs.root))
        except OSError:
            return None  # no folder yet: no twin
        for entry in sorted(entries, key=lambda e: e.name):
            other = entry.name
            if other == name or not other.lower().endswith(".md") or not is_utf8(other):
                continue  # (a name not UTF-8 has no key: the scan lists it to be renamed)
            if not _alike(self._key(other[:-3]), want):
                continue
            if source is not None:
                spelt = unicodedata.normalize("NFC", other)
                if (spelt.lower() if fs.folds else spelt) == source:
                    continue  # the note renamed itself
            there = posixpath.join(folder, other)
            if is_file_entry(entry) and not fs.is_ignored(there) and fs.refusal(there) is None:
                return there
        return None


def _alike(key: tuple[str, str], other: tuple[str, str]) -> bool:
    """Whether two names' keys (``NameTwins._key``) are one name's: the same whole, or
    one a slug's cut of the other (``memvault migrate`` names a note by its title's first
    80 characters). Two long names alike in their first 80 and no more ("Planning
    session with the data and design teams, part 1" and "…, part 2") are two notes."""
    if key[1] == other[1]:
        return True
    return key[0] == other[0] and (key[0] == key[1] or other[0] == other[1])


def _stem(name: str) -> str:
    """A name without its ``.md`` in any case: a NOTE.MD renamed NOTE.md keeps its name."""
    return name[:-3] if name.lower().endswith(".md") else name


def twin_refusal(path: str, other: str, *, destination: bool = False) -> str:
    """Why ``create`` made nothing at ``path`` (``destination``: why ``rename`` moved
    nothing there): ``other`` is that name already."""
    said = f"The destination {path}" if destination else f"File {path}"
    return (
        f"{said} already exists as {shown(other)} (the same name spelt otherwise: "
        f"case, accents, spaces or punctuation; MEMORY.md would list two notes a person "
        f"cannot tell apart): view or edit {shown(other)}, or give a name with other words"
    )
