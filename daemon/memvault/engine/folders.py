"""A search's folder filter, named as the vault names its folders (issue 24).

``--folder people`` on a vault whose people folder is ``People/`` (``init`` adopted the
vault's own capitalised folders and wrote them to config.toml) found nothing: the
filter was matched against the paths as typed. A folder filter names the folder the
vault uses for that role (``people``, ``projects``, ``decisions``, ``logs``: the
folder of the MEMORY.md section of that name, ``VaultConfig.folder``), or any folder,
and is matched as memvault matches paths and links, Obsidian's way: in any case (and
either Unicode form). The folder spelt exactly so is the one, when there is one; else
every folder spelt so in another case (two only on a disk that keeps case apart, ext4).

A filter that names no folder of the vault (a typo: ``--folder "user interfce"``), or a
folder memvault leaves out (``vault.ignore``, a dot-folder), is ``FolderNotFound``
rather than a silent "no matches". A folder there with no note indexed (an empty
``decisions/``) is a folder: it has no matches.
"""

from __future__ import annotations

import dataclasses
import os
import unicodedata
from collections.abc import Callable, Iterable

from memvault.config import VaultConfig
from memvault.core.ranking import Filters
from memvault.core.wikilinks import key
from memvault.errors import FolderNotFound
from memvault.vault.files import VaultFS
from memvault.vault.paths import is_dir_entry, spelt_in

LISTED = 12  # the vault's top folders a FolderNotFound names


class FolderNames:
    """Resolves the folder of a search's filters against one vault."""

    def __init__(
        self, config: VaultConfig, fs: VaultFS, paths: Callable[[], Iterable[str]]
    ) -> None:
        self.config = config
        self.fs = fs
        self._paths = paths  # the indexed notes' paths

    def resolve(self, filters: Filters) -> Filters:
        """``filters`` with its folder as the vault spells it (unchanged without one);
        ``FolderNotFound`` when it names no folder memvault indexes."""
        if not filters.folder:
            return filters
        return dataclasses.replace(filters, folders=self.folders(filters.folder))

    def folders(self, asked: str) -> tuple[str, ...]:
        """The vault's spellings of the folder ``asked`` names (``resolve``)."""
        head, _, rest = asked.strip("/").partition("/")
        wanted = unicodedata.normalize(
            "NFC", "/".join(p for p in (self.config.folder(head), rest) if p)
        )
        if any(p.startswith(wanted + "/") for p in self._paths()):  # stops at the first
            return (wanted,)
        paths = list(self._paths())
        depth, want = wanted.count("/") + 1, key(wanted) + "/"
        found = {"/".join(p.split("/")[:depth]) for p in paths if key(p).startswith(want)}
        if found:
            return tuple(sorted(found))
        there = self._on_disk(wanted)  # a folder without a note indexed in it
        if there is None:
            raise FolderNotFound(
                f"no folder {asked.strip('/')!r} in the vault{self._listed(paths)}"
            )
        if self.fs.is_ignored(there + "/"):
            why = "a dot-folder" if there.startswith(".") or "/." in there else "vault.ignore"
            raise FolderNotFound(
                f"{there}/ is left out of the index ({why}): nothing in it can match"
            )
        return (there,)

    def _on_disk(self, wanted: str) -> str | None:
        return on_disk(self.fs.root, wanted)

    @staticmethod
    def _listed(paths: list[str]) -> str:
        """The vault's top folders holding notes, for a message: ``(folders with notes: a, b)``."""
        tops = sorted({p.split("/", 1)[0] for p in paths if "/" in p}, key=str.casefold)
        if not tops:
            return " (no folder of it holds a note)"
        more = f", ... {len(tops) - LISTED} more" if len(tops) > LISTED else ""
        return f" (folders with notes: {', '.join(tops[:LISTED])}{more})"


def on_disk(root: str | os.PathLike[str], wanted: str) -> str | None:
    """A folder on disk spelt ``wanted`` in some case (``wanted`` itself when it is
    there; ``paths.spelt_in``), its path in NFC; None if none."""
    disk: list[str] = []  # the names as the disk has them (NFD on a Mac)
    for part in wanted.split("/"):
        found = spelt_in(os.path.join(root, *disk), part, dirs=True)
        if found is None:
            return None
        disk.append(found)
    return unicodedata.normalize("NFC", "/".join(disk))


def section_folders(config: VaultConfig) -> list[tuple[str, str, str]]:
    """(title, folder as config.toml spells it, the folder on disk: ``on_disk``) of each
    MEMORY.md section whose folder is there in some case."""
    out = []
    for rule in config.memory.sections:
        folder = unicodedata.normalize("NFC", rule.folder.strip("/"))
        there = on_disk(config.root, folder) if folder else None
        if there is not None:
            out.append((rule.title, rule.folder, there))
    return out


def section_said(title: str, folder: str) -> str:
    """How a problem of a MEMORY.md section's folder begins (the moved-away one a sync
    keeps, the other-case one status reads: status lets the second replace the first)."""
    return f"the section {title!r} lists the folder {folder}/, "


def sections_in_another_case(
    sections: list[tuple[str, str, str]],
) -> list[tuple[str, str, str]]:
    """Of ``sections`` (``section_folders``), each whose folder is not on disk as
    config.toml spells it while a folder differing from it only in case is: a clone of a
    vault whose folder another machine renamed (``people/`` to ``People/``), or a hand
    edit. Read from the files, for ``status`` on any copy (the daemon that saw the rename
    says where the notes went: memory_listing.sections_moved_away)."""
    return [s for s in sections if s[2] != unicodedata.normalize("NFC", s[1].strip("/"))]


def folders_beside_in_another_case(
    root: str | os.PathLike[str], sections: list[tuple[str, str, str]]
) -> list[tuple[str, str, str]]:
    """(section title, its folder as on disk, a folder beside it) for each folder on disk
    beside a MEMORY.md section's own (``sections``: ``section_folders``) whose name
    differs from it only in case (``people/`` beside ``People/``: made by hand, by an
    agent, or pulled from a clone that made it): its notes are in no section, and a
    clone on macOS or Windows cannot hold both folders."""
    out = []
    for title, _, there in sections:
        parent, _, name = there.rpartition("/")
        try:
            with os.scandir(os.path.join(root, parent)) as entries:
                names = sorted(e.name for e in entries if is_dir_entry(e))
        except OSError:
            continue
        for other in names:
            nfc = unicodedata.normalize("NFC", other)
            if nfc != name and key(nfc) == key(name):
                out.append((title, there, f"{parent}/{nfc}" if parent else nfc))
    return out


__all__ = [
    "FolderNames",
    "folders_beside_in_another_case",
    "on_disk",
    "section_folders",
    "section_said",
    "sections_in_another_case",
]
