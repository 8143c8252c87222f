"""The lines of the memory tool's listings (``core.memory_views`` puts them together):
the bounds every listing keeps whatever the vault's size and names, a note's line (its
size, its path as the SDK's reference lists it, its summary), a folder's count, and a
page of a directory's folders or files numbered past the entries ahead of them, with
the command (and its mark, ``core.page_marks``) for the next page."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.memory_names import closed, shows_unseen, spelt
from memvault.core.memory_tool import Refusal, format_size, shown
from memvault.core.page_marks import MARKS, Marks

# ``view /memories`` stays within these whatever the vault's size: ~1,500-2,000 tokens
INDEX_LINES = 60
INDEX_CHARS = 5_000
INDEX_FOLDERS = 12  # folders listed in the index (the rest counted)
INDEX_TOP_NOTES = 8  # notes at the vault's top level listed there (newest first)
INDEX_FILES = 5  # files not read as notes listed there (the rest counted)
FOLDER_PAGE = 40  # notes per page of a folder's view (newest first)
FOLDER_SUBFOLDERS = 10
FOLDER_CHARS = 6_000
SUMMARY_CHARS = 100
FILES_CHARS = 1_000  # the files not read as notes, in the index or a folder's view
# names are up to 255 bytes (ext4, Obsidian): twelve folders and eight notes so named
# made the index 5,747 characters. Each part has its share; the lines past it are
# counted, as past its count (a folder's name with as many as fit, a note paged).
INDEX_FOLDERS_CHARS = 2_000  # (a folder not named cannot be reached: the most room)
INDEX_NOTES_CHARS = 1_200  # (the notes not listed are paged, as MEMORY.md's lines are)
SAID_PATH = 300  # a folder's path past this is "this folder" in its page's own words
# a command names a folder's path exactly; a page that cannot so name it in each of its
# commands and keep its first note within FOLDER_CHARS (a path of thousands of characters:
# it is in each note's path too) says ``VIEWED`` instead: the path the agent gave to view
# it, which views it again
VIEWED = "the path you viewed"
MORE = 100  # the words of a "… and N more" line, names aside


@dataclass(frozen=True, slots=True)
class Entry:
    """A note in a listing."""

    rel: str
    size: int
    mtime_ns: int
    about: str = ""  # its summary, else its title
    taken: bool = False  # a file not a note whose .md name a note has (Plan.MD, Plan.md)


@dataclass(frozen=True, slots=True)
class FolderCount:
    rel: str
    notes: int  # notes at or below it
    size: int  # their bytes (and the files')
    files: int = 0  # files at or below it not read as notes (``Fact.MD``)


def entry_line(e: Entry) -> str:
    about = " ".join(e.about.split())
    if len(about) > SUMMARY_CHARS:
        about = about[: SUMMARY_CHARS - 1].rstrip() + "…"
    return f"{format_size(e.size)}\t{listed_path(e.rel)}" + (f"\t{about}" if about else "")


def listed_path(rel: str, end: str = "") -> str:
    """A listing's path as the SDK's reference lists it (as it is: the name the tool takes
    back), and, when it holds characters a person cannot see, spelt out beside it, after
    what ends its bidi controls' reach (``closed``: the spelling read in its order)."""
    if not shows_unseen(rel):
        return shown(rel) + end
    note = f"(spelt {spelt(shown(rel))}{end}: give the path as listed)"
    return f"{shown(rel)}{end}\t{closed(rel)}{note}"


def count_line(f: FolderCount) -> str:
    notes = "1 note" if f.notes == 1 else f"{f.notes} notes"
    if f.files:
        notes += ", 1 file not a note" if f.files == 1 else f", {f.files} files not notes"
    return f"{format_size(f.size)}\t{listed_path(f.rel, '/')}\t{notes}"


def fitting(lines: Iterable[str], room: int) -> list[str]:
    """The first ``lines`` that fit in ``room`` characters (each with its line end)."""
    kept: list[str] = []
    for line in lines:
        if len(line) + 1 > room:
            break
        kept.append(line)
        room -= len(line) + 1
    return kept


def counted(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def numbered(
    said: str,
    line: Callable[[Any], str],
    items: Sequence[Any],
    path: str,
    what: str,
    first: int,
    before: int,
    after: int = 0,
    *,
    marks: Marks,
    head: str = "",
) -> str:
    """A page of a directory's ``items`` (its folders or its files), numbered past the
    ``before`` entries ahead of them (``after``: those past them): ``head`` (that the
    numbers shifted), ``said`` (its range, count, ``what``, the view_range), the items
    from the ``first``-th that fit, the next page's command on ``path``."""
    start = first - before  # from 1, among the items
    if not 1 <= start <= len(items):
        raise out_of_range(first, before + len(items) + after)
    end = before + len(items)
    big = FOLDER_PAGE + end
    words = said.format(f"{start}-{end}", len(items), what, first, end)
    more = (
        f"({len(items)} more: view {path} with view_range [{big}, {MARKS[-1]}] for the next ones)"
    )
    room = FOLDER_CHARS - len(words) - len(more) - 2 - (len(head) + 1 if head else 0)
    lines = fitting((line(x) for x in items[start - 1 : start - 1 + FOLDER_PAGE]), room)
    if not lines:  # the first whatever its length: the page's room is kept for it
        lines = [line(items[start - 1])]
    last = start - 1 + len(lines)
    out = [said.format(f"{start}-{last}", len(items), what, first, before + last), *lines]
    if head:
        out.insert(0, head)
    if last < len(items):
        at = before + last + 1
        out.append(
            f"({len(items) - last} more: view {path} with view_range "
            f"[{at}, {marks(at)}] for the next ones)"
        )
    return "\n".join(out)


def out_of_range(first: int, entries: int) -> Refusal:
    return Refusal(
        f"Invalid `view_range`: its first element `{first}` should be within the range "
        f"of entries listed (its notes, then its folders, then its files not notes): "
        f"{[1, max(entries, 1)]}"
    )


def file_line(e: Entry) -> str:
    line = f"{format_size(e.size)}\t{listed_path(e.rel)}"
    if e.taken:  # the rename would be refused: the note there is not replaced
        stem = spelt(posixpath.basename(e.rel)[:-3])  # (prose: a name's unseen spelt)
        line += f"\t({stem}.md is another note: rename it another name, {stem} 2.md)"
    return line


def others_line(others: int) -> str:
    """A folder's first page saying the ``others`` files at or below it that are no notes
    and not listed (images, PDFs: the attachments its notes link; what ``vault.ignore``
    leaves out; a sync tool's conflict copy of a note): what a ``delete`` of the folder
    moves with its notes. The SDK's reference
    lists every file; a page of notes alone said "No notes in /memories/Attachments." of
    a folder of 113 images, read as empty, and its ``delete`` took them all to .trash/."""
    files = "1 file" if others == 1 else f"{others} files"
    are = "is not a note" if others == 1 else "are not notes"
    return (
        f"Not listed: {files} in it or below it that {are} (attachments notes link, "
        "images, PDFs; files memvault does not index: vault.ignore's, sync conflict copies); "
        "this tool lists notes only, and deleting the folder moves them to .trash/ with it."
    )


__all__ = [
    "FILES_CHARS",
    "FOLDER_CHARS",
    "FOLDER_PAGE",
    "FOLDER_SUBFOLDERS",
    "INDEX_CHARS",
    "INDEX_FILES",
    "INDEX_FOLDERS",
    "INDEX_FOLDERS_CHARS",
    "INDEX_LINES",
    "INDEX_NOTES_CHARS",
    "INDEX_TOP_NOTES",
    "MORE",
    "SAID_PATH",
    "SUMMARY_CHARS",
    "VIEWED",
    "Entry",
    "FolderCount",
    "count_line",
    "counted",
    "entry_line",
    "file_line",
    "fitting",
    "listed_path",
    "numbered",
    "others_line",
    "out_of_range",
]
