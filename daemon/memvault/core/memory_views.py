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
``engine.memory_views`` does the I/O; ``core.memory_lines`` holds the lines they are made
of (the bounds, a note's line, a numbered page of folders or files).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from memvault.core.memory_lines import (
    FILES_CHARS,
    FOLDER_CHARS,
    FOLDER_PAGE,
    FOLDER_SUBFOLDERS,
    INDEX_CHARS,
    INDEX_FILES,
    INDEX_FOLDERS,
    INDEX_FOLDERS_CHARS,
    INDEX_LINES,
    INDEX_NOTES_CHARS,
    INDEX_TOP_NOTES,
    MORE,
    SAID_PATH,
    VIEWED,
    Entry,
    FolderCount,
    count_line,
    counted,
    entry_line,
    file_line,
    fitting,
    numbered,
    others_line,
    out_of_range,
)
from memvault.core.memory_names import closed, shows_unseen, spelt
from memvault.core.memory_tool import LINE_NUMBER_WIDTH, ROOT, Refusal, shown
from memvault.core.page_marks import MARKS, Marks


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
    out += fitting((count_line(f) for f in folders[:most]), room)
    rest = folders[len(out) - 1 :]
    if rest:
        room += len(biggest) + 1 - sum(len(x) + 1 for x in out[1:])
        at = notes + (1 if by_name else len(out))
        line = _more_folders(rest, path, here, at, marks, every)
        names = [spelt(f.rel[len(here) + 1 :] if here else shown(f.rel)) + "/" for f in rest[:5]]
        said = fitting(names, room - len(line) - 6)  # ": ", ", …", the ", " between
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
        + (f", numbered past its {counted(notes, 'note')}" if notes else "")
        + " (size, path, notes at or below it):"
    )
    page = (said, count_line, folders, path, what or path, first, notes, files)
    return numbered(*page, marks=marks, head=head)


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
    ahead = [counted(n, w) for n, w in ((notes, "note"), (folders, "folder")) if n]
    said = (
        "Files not read as notes {} of {} in {}, view_range [{}, {}]"
        + (f", numbered past its {' and '.join(ahead)}" if ahead else "")
        + " (size, path; rename each to .md to keep it as memory, view reads one):"
    )
    page = (said, file_line, files, path, what or path, first, notes + folders)
    return numbered(*page, marks=marks, head=head)


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
    listed = fitting((file_line(e) for e in files[:shown_most]), room)
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
        room = INDEX_NOTES_CHARS - len(tail[-1]) - 1 - MORE
        listed = fitting((entry_line(e) for e in top_notes[:INDEX_TOP_NOTES]), room)
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
    others: int = 0,
) -> str:
    """A folder's view: its subfolders with their counts, the files in it not read as
    notes (``not_notes``), how many other files it holds (``others``: attachments, on
    the first page, ``others_line``), then a page of its notes, newest first, each with
    its summary, ending with how to see the rest; within ``FOLDER_CHARS`` characters
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
    page = (rel, what, notes, subfolders, first, folder_note, not_notes, marks, mark, others)
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
    others: int,
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
    need = _words(path, what, notes, folder_note) + (len(entry_line(notes[0])) if notes else 0)
    files = not_notes_lines(not_notes, FOLDER_SUBFOLDERS, path, rel, before, marks=marks)
    files += [others_line(others)] if others else []
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
        raise out_of_range(first, max(entries, len(notes)))
    out = list(head)
    if not notes:
        return "\n".join([*out, f"No notes in {what}."])
    room = FOLDER_CHARS - sum(len(x) + 1 for x in out) - _words(path, what, notes, folder_note)
    page = (entry_line(e) for e in notes[first - 1 : first - 1 + FOLDER_PAGE])
    lines = fitting(page, room)
    if not lines:  # the first note whatever its length: the page's room was kept for it
        lines = [entry_line(notes[first - 1])]
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
    return len(said) + 3 * big + 1 + MORE + 2 * big + mark + len(path) + len(folder_note or "")


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
