"""The memory tool's listings (``view /memories``, ``view`` of a folder): the pure part.

``view /memories`` is the index, not the dump: MEMORY.md, then each folder with its
note count, then the notes at the top level; a folder's view, its subfolders and a
page of its notes newest first, each with its summary. Both stay bounded however
big the vault. A file named as a note but for its case (``Fact.MD``: Obsidian reads
only ``.md`` in lower case as a note, ``paths.not_a_note_for_obsidian``) is listed
too, as a file (its size and path, as the SDK's reference lists every file): an
agent that cannot see it cannot view or rename it, all the tool lets it do with it.
Every folder and file is reachable however many: a ``view_range`` numbers a directory's
notes first, then its folders, then its files not read as notes (so a page of notes keeps
its numbers), and each "… and N more" line names the command that lists them: the
folder's path exactly (``command_path``).
A view_range is stateless: a note written, moved or deleted between two pages shifts the
numbers, and the next page would repeat or skip one. So each command for a next page
carries, as its second number, a mark of the entries numbered before it (``Marks``: a
7-digit checksum of their paths, whatever their order); that page checks the mark
against the entries before it now and says at its top when they differ (a range the
agent wrote itself, ``[41, 80]``, is not checked: no mark). Detected, not prevented:
a stateless range can name no note to start from.
``engine.memory_views`` does the I/O.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from memvault.core.memory_names import closed, shows_unseen, spelt
from memvault.core.memory_tool import LINE_NUMBER_WIDTH, ROOT, Refusal, format_size, shown
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
_MORE = 100  # the words of a "… and N more" line, names aside


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


def _entry_line(e: Entry) -> str:
    about = " ".join(e.about.split())
    if len(about) > SUMMARY_CHARS:
        about = about[: SUMMARY_CHARS - 1].rstrip() + "…"
    return f"{format_size(e.size)}\t{_path(e.rel)}" + (f"\t{about}" if about else "")


def _path(rel: str, end: str = "") -> str:
    """A listing's path as the SDK's reference lists it (as it is: the name the tool takes
    back), and, when it holds characters a person cannot see, spelt out beside it, after
    what ends its bidi controls' reach (``closed``: the spelling read in its order)."""
    if not shows_unseen(rel):
        return shown(rel) + end
    note = f"(spelt {spelt(shown(rel))}{end}: give the path as listed)"
    return f"{shown(rel)}{end}\t{closed(rel)}{note}"


def _count_line(f: FolderCount) -> str:
    notes = "1 note" if f.notes == 1 else f"{f.notes} notes"
    if f.files:
        notes += ", 1 file not a note" if f.files == 1 else f", {f.files} files not notes"
    return f"{format_size(f.size)}\t{_path(f.rel, '/')}\t{notes}"


def _fitting(lines: Iterable[str], room: int) -> list[str]:
    """The first ``lines`` that fit in ``room`` characters (each with its line end)."""
    kept: list[str] = []
    for line in lines:
        if len(line) + 1 > room:
            break
        kept.append(line)
        room -= len(line) + 1
    return kept


def folder_lines(
    folders: Sequence[FolderCount],
    most: int,
    chars: int,
    here: str | None = None,
    path: str = ROOT,
    notes: int = 0,
    by_name: bool = False,
    *,
    marks: Marks,
) -> list[str]:
    """ "Folders:", the first ``most`` folders with their counts within ``chars``
    characters, then how many more with the command that pages them (``view {path}``
    with the ``view_range`` past the ``notes`` it pages first) and as many of their
    names as fit (``here``: the folder they are in, whose view this is: named relative
    to it). Every folder is so reachable however many (a vault of 40 top-level folders,
    a Johnny.Decimal ``10-19 Area/``, a folder per client). ``by_name``: ``folders`` are
    in another order than the pages' (the index's, biggest first, which a note written
    meanwhile changes), so the command pages every folder, by name, from the first."""
    if not folders:
        return []
    out = ["Folders:"]
    every = len(folders) if by_name else 0
    biggest = _more_folders(folders, path, here, notes + len(folders), marks, every)  # widest
    room = chars - len(out[0]) - 1 - len(biggest) - 1
    out += _fitting((_count_line(f) for f in folders[:most]), room)
    rest = folders[len(out) - 1 :]
    if rest:
        room += len(biggest) + 1 - sum(len(x) + 1 for x in out[1:])
        at = notes + (1 if by_name else len(out))
        line = _more_folders(rest, path, here, at, marks, every)
        names = [spelt(f.rel[len(here) + 1 :] if here else shown(f.rel)) + "/" for f in rest[:5]]
        said = _fitting(names, room - len(line) - 6)  # ": ", ", …", the ", " between
        if said:
            line += ": " + ", ".join(said) + (", …" if len(said) < len(rest) else "")
        out.append(line)
    return out


def _more_folders(
    rest: Sequence[FolderCount],
    path: str,
    here: str | None,
    at: int,
    marks: Marks,
    every: int = 0,
) -> str:
    """ "… and N more folders", with the command listing them from the ``at``-th entry
    (``every``: all of the ``every`` folders, by name)."""
    notes = sum(f.notes for f in rest)
    return (
        f"… and {len(rest)} more folders ({notes} notes{' here' if here is not None else ''}; "
        f"view {path} with view_range [{at}, {marks(at)}] lists "
        + (f"all {every}, by name)" if every else "them)")
    )


def render_folders(
    path: str,
    folders: Sequence[FolderCount],
    first: int,
    notes: int,
    what: str = "",
    files: int = 0,
    *,
    marks: Marks,
    head: str = "",
) -> str:
    """A page of a directory's folders (``view`` of it with a ``view_range`` past its
    ``notes``: they are numbered first, so a page of notes keeps its numbers), from the
    ``first``-th entry, within ``FOLDER_CHARS``, the first folder always (``what``: the
    directory in the page's own words; ``files``: its files not notes, numbered next). It
    says the notes numbered ahead (a note moved or deleted since the command was given
    shifts the numbers: the agent sees by how much)."""
    said = (
        "Folders {} of {} in {}, view_range [{}, {}]"
        + (f", numbered past its {_count(notes, 'note')}" if notes else "")
        + " (size, path, notes at or below it):"
    )
    page = (said, _count_line, folders, path, what or path, first, notes, files)
    return _numbered(*page, marks=marks, head=head)


def render_files(
    path: str,
    files: Sequence[Entry],
    first: int,
    notes: int,
    folders: int,
    what: str = "",
    *,
    marks: Marks,
    head: str = "",
) -> str:
    """A page of a directory's files not read as notes (``view`` of it with a ``view_range``
    past its ``notes`` and ``folders``: numbered last, so those keep their numbers, and
    said), from the ``first``-th entry, within ``FOLDER_CHARS``, the first file always."""
    ahead = [_count(n, w) for n, w in ((notes, "note"), (folders, "folder")) if n]
    said = (
        "Files not read as notes {} of {} in {}, view_range [{}, {}]"
        + (f", numbered past its {' and '.join(ahead)}" if ahead else "")
        + " (size, path; rename each to .md to keep it as memory, view reads one):"
    )
    page = (said, _file_line, files, path, what or path, first, notes + folders)
    return _numbered(*page, marks=marks, head=head)


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _numbered(
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
        raise _out_of_range(first, before + len(items) + after)
    end = before + len(items)
    big = FOLDER_PAGE + end
    words = said.format(f"{start}-{end}", len(items), what, first, end)
    more = (
        f"({len(items)} more: view {path} with view_range [{big}, {MARKS[-1]}] for the next ones)"
    )
    room = FOLDER_CHARS - len(words) - len(more) - 2 - (len(head) + 1 if head else 0)
    lines = _fitting((line(x) for x in items[start - 1 : start - 1 + FOLDER_PAGE]), room)
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


def _out_of_range(first: int, entries: int) -> Refusal:
    return Refusal(
        f"Invalid `view_range`: its first element `{first}` should be within the range "
        f"of entries listed (its notes, then its folders, then its files not notes): "
        f"{[1, max(entries, 1)]}"
    )


def _file_line(e: Entry) -> str:
    line = f"{format_size(e.size)}\t{_path(e.rel)}"
    if e.taken:  # the rename would be refused: the note there is not replaced
        stem = spelt(posixpath.basename(e.rel)[:-3])  # (prose: a name's unseen spelt)
        line += f"\t({stem}.md is another note: rename it another name, {stem} 2.md)"
    return line


def not_notes_lines(
    files: Sequence[Entry],
    shown_most: int,
    path: str = ROOT,
    here: str = "",
    at: int = 0,
    *,
    marks: Marks,
) -> list[str]:
    """The files not read as notes (``Fact.MD``), newest first, as the reference lists a
    file (its size, its path), with what to do: the first ``shown_most``, then how
    many more and where; within ``FILES_CHARS`` characters however long their paths
    (seven ``.MD`` files twelve folders deep made ``view /memories`` 13,900 characters)
    but for the command on ``path``. Those of the directory viewed (``here``) left out
    are paged by that command: numbered past its ``at`` notes and folders."""
    if not files:
        return []
    free = [e.rel for e in files if not e.taken and not shows_unseen(e.rel)]  # (its path
    # is to be typed back: one a person cannot read right is no example)
    example = f" (rename {shown(free[0])} to {shown(free[0][:-3] + '.md')})" if free else ""
    if len(example) > FILES_CHARS // 4:
        example = ""
    out = [
        f"Files not read as notes ({len(files)}, newest first): Obsidian reads only .md in "
        f"lower case as a note. Rename each to .md to keep it as memory{example}; view "
        "reads one, no other command writes into one:"
    ]
    own = sum(1 for e in files if posixpath.dirname(e.rel) == here)
    widest = _more_files(len(files), own, own, path, at + own, marks)
    room = FILES_CHARS - len(out[0]) - 1 - len(widest) - 1 - 30  # 30: "; N in M folders"
    listed = _fitting((_file_line(e) for e in files[:shown_most]), room)
    out += listed
    kept = len(listed)
    if kept < len(files):
        rest = files[kept:]
        own_rest = sum(1 for e in rest if posixpath.dirname(e.rel) == here)
        line = _more_files(len(rest), own_rest, own, path, at + own - own_rest + 1, marks)
        room += len(widest) - len(line) - sum(len(x) + 1 for x in listed)
        where = sorted({posixpath.dirname(e.rel) for e in rest} - {here})
        if where:  # (in the index: those in folders, each listed in its folder's view)
            others = f"; {len(rest) - own_rest} in " if own_rest else " in "
            line += others
            room -= len(others) + 3  # (", …")
            said: list[str] = []
            for w in where[:5]:
                name = spelt(shown(w)) + "/"
                if len(name) + 2 > room:
                    break
                said.append(name)
                room -= len(name) + 2
            line += (
                ", ".join(said) + (", …" if len(said) < len(where) else "")
                if said
                else f"{len(where)} folders"
            )
        out.append(line)
    return out


def _more_files(rest: int, own_rest: int, own: int, path: str, at: int, marks: Marks) -> str:
    """ "… and N more", with the command listing those of the directory viewed."""
    if not own_rest:
        return f"… and {rest} more"
    return (
        f"… and {rest} more: view {path} with view_range [{at}, {marks(at)}] "
        f"lists the {own_rest} {'here' if own_rest == own else 'left here'}"
    )


def render_index(
    memory_file: str,
    memory_text: str | None,
    folders: Sequence[FolderCount],
    top_notes: Sequence[Entry],
    not_notes: Sequence[Entry] = (),
    memory_lines: int | None = None,
) -> str:
    """``view /memories``: MEMORY.md (numbered, cut to what fits), each folder with its
    note count, the notes at the top level (newest first), the files of the vault not
    read as notes (``not_notes``, newest first); within ``INDEX_LINES`` lines and
    ``INDEX_CHARS`` characters however big the vault. ``memory_lines``: the lines of the
    whole MEMORY.md when ``memory_text`` is only its first part (past max_note_bytes)."""
    head = (
        f"Here is the index of {ROOT} (a memvault vault): {memory_file} first, then each folder "
        "with its note count. View a folder to list its notes, newest first; view a note to "
        "read it."
    )
    here = [e for e in not_notes if "/" not in e.rel]  # (numbered past the folders)
    marks = Marks.of(_numbering(top_notes, sorted(f.rel for f in folders), here))
    tail = folder_lines(
        folders, INDEX_FOLDERS, INDEX_FOLDERS_CHARS, notes=len(top_notes), by_name=True, marks=marks
    )
    if top_notes:
        tail.append(f"Notes at the top level ({len(top_notes)}, newest first):")
        room = INDEX_NOTES_CHARS - len(tail[-1]) - 1 - _MORE
        listed = _fitting((_entry_line(e) for e in top_notes[:INDEX_TOP_NOTES]), room)
        tail += listed
        if len(listed) < len(top_notes):
            n = len(listed)
            tail.append(
                f"… and {len(top_notes) - n} more: view {ROOT} with view_range "
                f"[{n + 1}, {marks(n + 1)}] for the next ones"
            )
    at = len(top_notes) + len(folders)
    tail += not_notes_lines(not_notes, INDEX_FILES, at=at, marks=marks)
    memory_path = shown(memory_file)
    out = [head]
    if memory_text is None:
        out.append(f"({memory_path} is not there yet: memvault writes it at its next sync)")
    else:
        lines = memory_text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = max(memory_lines or 0, len(lines))
        out.append(f"{memory_path}:")
        more = f"(… {total} more lines: view {memory_path})"
        room_lines = INDEX_LINES - len(out) - len(tail) - 1  # 1: the "more lines" line
        room_chars = INDEX_CHARS - sum(len(x) + 1 for x in out + tail) - len(more)
        kept = 0
        for i, line in enumerate(lines):
            text = f"{str(i + 1).rjust(LINE_NUMBER_WIDTH)}\t{line}"
            if kept >= room_lines or len(text) + 1 > room_chars:
                break
            out.append(text)
            room_chars -= len(text) + 1
            kept += 1
        if kept < total:
            out.append(f"(… {total - kept} more lines: view {memory_path})")
    return "\n".join(out + tail)


def render_top_notes(
    notes: Sequence[Entry],
    first: int,
    folders: Sequence[FolderCount] = (),
    files: Sequence[Entry] = (),
    mark: int | None = None,
) -> str:
    """``view /memories`` with a ``view_range``: a page of the notes at the top level,
    numbered first, then past them a page of the top-level ``folders``, then of the
    ``files`` at the top level not read as notes. The folders are numbered by name: the
    index lists the biggest first, an order a note written while an agent pages changes
    (a folder grown past the page it was on was never listed), their names do not.
    ``mark``: the second number of the ``view_range`` (``Marks``)."""
    folders = sorted(folders, key=lambda f: f.rel)
    before = len(notes) + len(folders)
    marks = Marks.of(_numbering(notes, [f.rel for f in folders], files))
    head = marks.shifted(ROOT, first, mark, FOLDER_PAGE)
    with _shift_said(head):
        if first > before and files:
            counts = (len(notes), len(folders))
            return render_files(ROOT, files, first, *counts, marks=marks, head=head)
        if first > len(notes) and folders:
            return render_folders(
                ROOT, folders, first, len(notes), files=len(files), marks=marks, head=head
            )
        what = "the notes at the top level of " + ROOT
        said = [head] if head else []
        return _page(ROOT, what, notes, first, said, entries=before + len(files), marks=marks)


@contextmanager
def _shift_said(head: str) -> Iterator[None]:
    """A command past the last entry refused, saying too that the numbers shifted when its
    mark says so (``head``): 45 notes, ten of the forty read deleted, ``[41, …]`` is past
    the 35 left, and the five not read yet are 31st-35th now (its range alone, ``[1, 35]``,
    read as "no more", left them unread)."""
    try:
        yield
    except Refusal as refused:
        if not head:
            raise
        raise Refusal(f"{refused}. {head}") from None


def _numbering(notes: Sequence[Entry], folders: Iterable[str], files: Sequence[Entry]) -> list[str]:
    """A directory's entries as a ``view_range`` numbers them: its notes, its folders,
    its files not notes."""
    return [*(e.rel for e in notes), *folders, *(e.rel for e in files)]


def render_folder(
    rel: str,
    notes: Sequence[Entry],
    subfolders: Sequence[FolderCount],
    first: int = 1,
    folder_note: str | None = None,
    not_notes: Sequence[Entry] = (),
    mark: int | None = None,
) -> str:
    """A folder's view: its subfolders with their counts, the files in it not read as
    notes (``not_notes``), then a page of its notes, newest first, each with its
    summary, ending with how to see the rest; within ``FOLDER_CHARS`` characters
    whatever its names. A folder's path past ``SAID_PATH`` is "this folder" in the
    page's own words (the agent has just named it); its commands name it exactly, or,
    a path too long to name in each and keep the page's first note, ``VIEWED``.
    ``mark``: the second number of the ``view_range`` (``Marks``)."""
    what = spelt(shown(rel)) if len(spelt(shown(rel))) <= SAID_PATH else "this folder"
    if folder_note:  # (a path to view: as it is, the name the tool takes, and spelt)
        given, spelling = shown(folder_note), spelt(shown(folder_note))
        said = given if given == spelling else f"{given} {closed(given)}(spelt {spelling})"
        base = spelt(posixpath.basename(folder_note))
        folder_note = said if len(said) <= SAID_PATH else f"its folder note {base}"
    own = [e for e in not_notes if posixpath.dirname(e.rel) == rel]
    marks = Marks.of(_numbering(notes, [f.rel for f in subfolders], own))
    page = (rel, what, notes, subfolders, first, folder_note, not_notes, marks, mark)
    with _shift_said(marks.shifted(shown(rel), first, mark, FOLDER_PAGE)):
        out = _folder_page(shown(rel), *page)
    return out if len(out) <= FOLDER_CHARS else _folder_page(VIEWED, *page)


def _folder_page(
    path: str,
    rel: str,
    what: str,
    notes: Sequence[Entry],
    subfolders: Sequence[FolderCount],
    first: int,
    folder_note: str | None,
    not_notes: Sequence[Entry],
    marks: Marks,
    mark: int | None,
) -> str:
    """``render_folder``'s page, its commands naming the folder ``path``."""
    before = len(notes) + len(subfolders)
    entries = before + len(not_notes)
    head = marks.shifted(path, first, mark, FOLDER_PAGE)
    if first > before and first > 1 and not_notes:  # (past its notes and folders: files)
        counts = (len(notes), len(subfolders))
        return render_files(path, not_notes, first, *counts, what, marks=marks, head=head)
    if first > len(notes) and first > 1 and subfolders:  # (past its notes: its folders)
        counts = (len(notes), len(not_notes))
        return render_folders(
            path, subfolders, first, counts[0], what, counts[1], marks=marks, head=head
        )
    if first != 1:
        said = [head] if head else []
        return _page(path, what, notes, first, said, folder_note, entries, marks=marks)
    # a page lists at least one note (the next page starts past it): its room is kept first
    need = _words(path, what, notes, folder_note) + (len(_entry_line(notes[0])) if notes else 0)
    files = not_notes_lines(not_notes, FOLDER_SUBFOLDERS, path, rel, before, marks=marks)
    # its subfolders next (shown on the first page only, where the notes are paged)
    room = FOLDER_CHARS - need - sum(len(x) + 1 for x in files)
    shown_folders = (subfolders, FOLDER_SUBFOLDERS, room, rel, path, len(notes))
    lines = folder_lines(*shown_folders, marks=marks) + files
    return _page(path, what, notes, first, lines, folder_note, entries, marks=marks)


def _page(
    path: str,
    what: str,
    notes: Sequence[Entry],
    first: int,
    head: Sequence[str] = (),
    folder_note: str | None = None,
    entries: int = 0,
    *,
    marks: Marks,
) -> str:
    """``head`` (a folder's subfolders and files not notes, or that the numbers
    shifted), then a page of ``notes``
    from ``first`` within what is left of ``FOLDER_CHARS``, the first always
    (``entries``: its notes and folders, which a ``view_range`` numbers)."""
    if first < 1 or (notes and first > len(notes)):
        raise _out_of_range(first, max(entries, len(notes)))
    out = list(head)
    if not notes:
        return "\n".join([*out, f"No notes in {what}."])
    room = FOLDER_CHARS - sum(len(x) + 1 for x in out) - _words(path, what, notes, folder_note)
    page = (_entry_line(e) for e in notes[first - 1 : first - 1 + FOLDER_PAGE])
    lines = _fitting(page, room)
    if not lines:  # the first note whatever its length: the page's room was kept for it
        lines = [_entry_line(notes[first - 1])]
    last = first - 1 + len(lines)
    out.append(
        f"Notes {first}-{last} of {len(notes)} in {what}, newest first (size, path, summary):"
    )
    out += lines
    if last < len(notes):
        more = (
            f"({len(notes) - last} more: view {path} with view_range "
            f"[{last + 1}, {marks(last + 1)}] for the next ones"
        )
        if folder_note:
            more += f"; {folder_note} lists every one"
        out.append(more + ")")
    return "\n".join(out)


def _words(path: str, what: str, notes: Sequence[Entry], folder_note: str | None) -> int:
    """The most characters a page's own lines take (its notes' line, its "more" line)."""
    big = len(str(len(notes)))  # (each number of the page is at most the count's width)
    said = f"Notes - of  in {what}, newest first (size, path, summary):"
    mark = len(str(MARKS[-1]))
    return len(said) + 3 * big + 1 + _MORE + 2 * big + mark + len(path) + len(folder_note or "")


__all__ = [
    "FILES_CHARS",
    "FOLDER_CHARS",
    "FOLDER_PAGE",
    "INDEX_CHARS",
    "INDEX_FILES",
    "INDEX_LINES",
    "INDEX_TOP_NOTES",
    "VIEWED",
    "Entry",
    "FolderCount",
    "folder_lines",
    "not_notes_lines",
    "render_files",
    "render_folder",
    "render_folders",
    "render_index",
    "render_top_notes",
]
