"""The lines after a MEMORY.md section's entries (pure): the overflow line that counts the
rest of the section's notes (``- [[people/people|3 more]]``), and, in the vault root's
section, the top-level folders no section lists (``- 28 notes in Plugins/``, eight of
them, then ``- N more folders``: ``memory_order.other_folder``). Each is memvault's line,
known by its form when MEMORY.md is read again (``is_tail_line``)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection

from memvault.core.memory_order import FOLDER_LINES, Listing, SectionRule
from memvault.core.text import trim_proof


def folder_note_path(folder: str) -> str:
    """The generated folder note (Folder Notes convention): decisions/decisions.md
    (``""`` for the vault root, which has none)."""
    folder = folder.strip("/")
    return f"{folder}/{posixpath.basename(folder)}.md" if folder else ""


def overflow_line(folder: str, count: int, linked: bool = True) -> str:
    """``- [[people/people|3 more]]``; ``- 3 more in people/`` when there is no folder
    note memvault may keep; ``- 3 more at the vault root`` for the root's section."""
    if not folder.strip("/"):
        return f"- {count} more at the vault root"
    if not linked:
        return f"- {count} more in {folder}/"
    note = folder_note_path(folder)  # (`` Drafts/``: ``[[/ Drafts/ Drafts.md|…]]``)
    return f"- [[{trim_proof(note[:-3], note)}|{count} more]]"


def folder_line(folder: str, count: int) -> str:
    """``- 29 notes in Plugins/``: a top-level folder no section lists, in the root's
    section (``memory_order.other_folder``)."""
    return f"- {count} note{'' if count == 1 else 's'} in {folder}/"


def tail_lines(rule: SectionRule, listing: Listing, more: int, linked: bool) -> list[str]:
    """The section's lines after its entries: the overflow line; for the root's, the
    other folders (``FOLDER_LINES`` of them, then how many more)."""
    tail = [overflow_line(rule.folder, more, linked)] if more > 0 else []
    tail += [folder_line(f, n) for f, n in listing.folders[:FOLDER_LINES]]
    rest = _more_folders(listing)
    return [*tail, rest] if rest else tail


def _more_folders(listing: Listing) -> str | None:
    """``- 8 more folders``: the root's folders past the ``FOLDER_LINES`` it names."""
    more = len(listing.folders) - FOLDER_LINES
    return f"- {more} more folders" if more > 0 else None


_FOLDER_LINE = re.compile(r"- \d+ notes? in (.+)/")
_MORE_FOLDERS = re.compile(r"- \d+ more folders")


def is_tail_line(
    line: str,
    folder: str,
    listing: Listing | None = None,
    owned: Collection[str] = (),
) -> bool:
    """Whether ``line`` of ``folder``'s section is memvault's line after its entries.
    An overflow line is known by its form. A folder line only when it names a folder the
    root's ``listing`` counts now (its count may have changed), or is a line memvault
    wrote (``owned``); "N more folders" only as memvault writes it now, or wrote it: a
    person's ``- 40 notes in my Evernote export, see Archive/`` is theirs."""
    if "more" not in line and " in " not in line:
        return False
    if not folder.strip("/"):
        if re.fullmatch(r"- \d+ more at the vault root", line):
            return True
        named = _FOLDER_LINE.fullmatch(line)
        if named is not None:
            return line in owned or (
                listing is not None and any(f == named.group(1) for f, _ in listing.folders)
            )
        if _MORE_FOLDERS.fullmatch(line) is None:
            return False
        return line in owned or (listing is not None and line == _more_folders(listing))
    note = folder_note_path(folder)
    # as written now (`` Drafts/``'s ``[[/ Drafts/ Drafts.md|…]]``: ``trim_proof``) or
    # before (``[[ Drafts/ Drafts|…]]``); "N more <label>" is how earlier versions wrote
    # it: each still the daemon's line, else kept as a person's and another added below
    link = "|".join(re.escape(form) for form in {trim_proof(note[:-3], note), note[:-3]})
    linked = rf"- \[\[(?:{link})\|\d+ more(?: [^\]]*)?\]\]"
    return re.fullmatch(rf"{linked}|- \d+ more in {re.escape(folder)}/", line) is not None


__all__ = ["folder_line", "folder_note_path", "is_tail_line", "overflow_line", "tail_lines"]
