"""Claude's memory tool commands, run by the vault's one writer.

``MemoryCommands.run(command)`` takes a command as the Messages API sends it
(``{"command": "view", "path": "/memories"}``) and returns the tool's text, or
raises ``MemoryToolError`` whose message is the tool's error text. The engine runs
it under its lock (``Engine.memory_tool``): a command and the sync that follows it
are one turn, so a watcher's batch never sees half a rename. ``/memories`` is the
vault's root. Every write is the vault's own: a compare-and-swap that redoes an
edit on top of a person's save (``VaultFS.update_text``), then a sync of the paths
it touched, so MEMORY.md, the links (a rename re-targets them) and the index are
current when it returns. What it refuses, and why, is in ``core.memory_tool``
(texts) and here (paths): hidden folders (``.memvault/``, ``.obsidian/``), files
that are not notes (a ``Fact.MD``, listed as a file, is viewed and renamed to .md,
never written), paths that leave the vault, MEMORY.md's removal, and edits
inside the sections memvault writes. ``delete`` moves to ``.trash/`` (Obsidian's
trash folder): a note an agent deletes can be brought back.
"""

from __future__ import annotations

import errno
import os
import posixpath
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.core import memory_tool as T
from memvault.core.memory_md import folder_note_path
from memvault.core.note_size import grown_said, is_long
from memvault.core.page_marks import MARKS
from memvault.core.results import SyncReport
from memvault.core.text import NotText, line_count
from memvault.core.wikilinks import find_links
from memvault.engine import memory_names as N
from memvault.engine.memory_views import MemoryViews
from memvault.engine.name_twins import NameTwins
from memvault.engine.stored_links import answering
from memvault.errors import (
    FileBusy,
    MemoryToolError,
    NoteExists,
    NoteNotFound,
    UnsafePath,
    WriteConflict,
)
from memvault.vault.files import normalize_rel
from memvault.vault.paths import is_note, not_a_note_for_obsidian

if TYPE_CHECKING:
    from memvault.config import VaultConfig
    from memvault.engine.catalogue import Catalogue
    from memvault.vault.files import VaultFS

COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
TRASH = ".trash"  # Obsidian's own trash folder ("Move to Obsidian trash")


_AS_NOTES = "memory as markdown notes (name it with .md)"


class MemoryCommands:
    """The six commands over one vault (call ``run`` with the engine's lock held)."""

    def __init__(
        self,
        config: VaultConfig,
        fs: VaultFS,
        catalogue: Catalogue,
        sync: Callable[[list[str]], SyncReport],
    ) -> None:
        self.config = config
        self.fs = fs
        self.catalogue = catalogue
        self._sync = sync
        self.memory_file = config.memory.file
        self.twins = NameTwins()
        self.views = MemoryViews(config, fs, catalogue)

    def run(self, command: Mapping[str, Any]) -> str:
        if not isinstance(command, Mapping):
            raise MemoryToolError("The command must be an object with a `command` field")
        name = command.get("command")
        if name not in COMMANDS:
            raise MemoryToolError(f"Unknown command: {name}")
        try:
            return str(getattr(self, f"_{name}")(command))
        except T.Refusal as exc:
            raise MemoryToolError(str(exc)) from None
        except FileBusy as exc:
            raise MemoryToolError(f"Nothing was changed: {exc}; try again in a moment") from None
        except (WriteConflict, PermissionError) as exc:  # (a note made read-only: chmod a-w)
            raise MemoryToolError(_nothing_changed(command, exc)) from None

    # -- arguments and paths --------------------------------------------------------------

    @staticmethod
    def _arg(command: Mapping[str, Any], name: str) -> str:
        value = command.get(name)
        if not isinstance(value, str):
            raise T.Refusal(f"Missing or invalid `{name}` parameter: it must be a string")
        return value

    def _rel(self, path: str) -> str:
        """The vault-relative path of a ``/memories`` path ('' for the root), its ``.``
        and ``..`` resolved as the reference resolves them; refused when it leaves the
        vault or is not memory."""
        rel = T.memory_rel(path)
        for folder in T.stepped_out_of(path):
            disk = os.path.join(self.fs.root, *folder.split("/"))
            if os.path.realpath(disk) != os.path.join(os.path.realpath(self.fs.root), folder):
                raise T.Refusal(
                    f"Invalid path {path}: its `..` steps back out of {T.shown(folder)}, which "
                    "is (or is inside) a symlink, so where it leads is not plain; give the "
                    "path without `..`"
                )
        if not rel:
            return ""
        decoded = urllib.parse.unquote(rel)
        if decoded != rel:
            parts = decoded.split("/")
            plain = posixpath.normpath(f"{T.ROOT}/{decoded}")
            if plain != T.ROOT and not plain.startswith(T.ROOT + "/"):
                raise T.Refusal(f"Path {path} would escape /memories directory")
            if "." in parts or ".." in parts:
                raise T.Refusal(
                    f"Invalid path {path}: `%2e` spells a dot; memvault takes `.` and `..` "
                    "only as written, never percent-encoded: write the path plainly"
                )
        for form in (rel, decoded):
            if any(p.startswith(".") for p in form.split("/")):
                raise T.Refusal(
                    f"{path} is not memory: hidden files and folders (.memvault/, .obsidian/, "
                    ".git/, .trash/) belong to memvault, Obsidian and git"
                )
        try:
            clean = self.fs.spelt(normalize_rel(rel))  # (a Mac's disk: People/ for people/)
            self.fs.path(clean)  # symlinks leading out
        except UnsafePath as exc:
            if "outside the vault" in str(exc):
                raise T.Refusal(
                    f"Path {path} would escape /memories directory via symlink"
                ) from None
            raise T.Refusal(f"Invalid path {path}: {exc}") from None
        refusal = self.fs.refusal(clean)
        if refusal is not None:
            raise T.Refusal(f"Path {path} is not a note of this vault: {refusal}")
        return clean

    def _note_rel(
        self, path: str, *, writing: bool = False, as_file: bool = False, rel: str | None = None
    ) -> str:
        """``path``'s note (``rel``: its vault path, when worked out already), refused
        when it is no note or (``writing``) one memvault does not keep. ``as_file``: a
        NOTE.MD too, which is no note in Obsidian either, yet is viewed (the listings
        show it: an agent reads what it sees listed, as the SDK's reference reads any
        file) and renamed (to .md, which its refusal of every write says to do)."""
        rel = self._rel(path) if rel is None else rel
        if not rel:
            raise T.Refusal(f"The path {path} is a directory, not a file.")
        if not is_note(rel) and not (as_file and not_a_note_for_obsidian(rel)):
            why = not_a_note_for_obsidian(rel) or f"not a note: memvault keeps {_AS_NOTES}"
            if os.path.lexists(self.fs.root / f"{rel}.md"):  # (its .md left out)
                why += f"; {T.shown(rel + '.md')} is there"
            raise T.Refusal(f"{path} is {why}")
        if writing and self.fs.is_ignored(rel):
            raise T.Refusal(
                f"{path} is outside what memvault keeps as memory (its settings ignore it: "
                "vault.ignore, conflict copies); choose another path"
            )
        return rel

    def _disk(self, rel: str) -> Path:
        return self.fs.path(rel) if rel else self.fs.root

    def _text(self, command: Mapping[str, Any], name: str) -> str:
        value = self._arg(command, name)
        T.check_text(name, value)
        return value

    def _after(self, paths: Iterable[str]) -> None:
        """MEMORY.md, links and the index brought up to date before the answer."""
        self._sync(list(paths))

    # -- view -------------------------------------------------------------------------------

    def _view(self, command: Mapping[str, Any]) -> str:
        path = self._arg(command, "path")
        view_range = command.get("view_range")
        if view_range is not None and not isinstance(view_range, (list, tuple)):
            raise T.Refusal(
                f"Invalid `view_range`: {view_range!r}. It should be a list: [start_line, "
                "end_line] (end_line -1: to the end of the file)."
            )
        rel = self._rel(path)
        disk = self._disk(rel)
        if disk.is_dir():
            first, mark = _first(view_range), _mark(view_range)
            return self.views.index(first, mark) if not rel else self.views.folder(rel, first, mark)
        if not disk.exists():
            raise N.missing(self.fs, path, rel, N.PLEASE)
        rel = self._note_rel(path, as_file=True)  # (a Fact.MD read as it is, never written)
        with _refused(path, f"The path {path} does not exist. Please provide a valid path."):
            read = self.fs.read(rel)
            if read.truncated and read.size <= _VIEW_WHOLE_BYTES:  # past max_note_bytes:
                read = self.fs.read(rel, cap=read.size)  # its lines past the cut viewed too
        text = T.numbered(read.decoded.text, path, view_range)
        if read.truncated:
            text += (
                f"\n(… cut at {self.fs.max_note_bytes} bytes of {read.size}: vault.max_note_bytes)"
            )
        return text

    # -- create, str_replace, insert ----------------------------------------------------------

    def _create(self, command: Mapping[str, Any]) -> str:
        path = self._arg(command, "path")
        text = self._text(command, "file_text")
        N.refuse_unportable(self.fs, T.memory_rel(path), path, "Nothing was written")
        if self._disk(self._rel(path)).is_dir():  # (the reference's words: its O_EXCL fails)
            raise T.Refusal(f"File {path} already exists")
        rel = self._note_rel(path, writing=True)
        _fits(text, path, self.fs.max_note_bytes)
        if self._disk(rel).exists():
            raise T.Refusal(f"File {path} already exists")
        N.refuse_other_case(self.fs, rel, path)
        N.refuse_look_alike(self.fs, rel, path)
        self.twins.refuse_create(self.fs, rel, path)
        try:
            self.fs.create(rel, text)
        except NoteExists:
            raise T.Refusal(f"File {path} already exists") from None
        except (NotADirectoryError, FileExistsError):
            raise T.Refusal(f"Cannot create {path}: a part of its path is a file") from None
        self._after([rel])
        return f"File created successfully at: {path}{_grown(path, text, self.fs.max_note_bytes)}"

    def _edit(self, path: str, change: Callable[[str], str]) -> str:
        """The note at ``path`` changed by ``change`` (CAS); the answer's note on its size."""
        if self._disk(self._rel(path)).is_dir():  # (the reference's words)
            raise T.Refusal(f"The path {path} is not a file.")
        rel = self._note_rel(path, writing=True)
        disk = self._disk(rel)
        if not disk.exists():
            raise N.missing(self.fs, path, rel, N.PLEASE)
        if not disk.is_file():
            raise T.Refusal(f"The path {path} is not a file.")

        news: list[str] = []

        def checked(text: str) -> str:
            new = change(text)
            _fits(new, path, self.fs.max_note_bytes, was=text)
            news[:] = [new]
            return new

        gone = f"The file {path} no longer exists (may have been deleted or renamed concurrently)."
        with _refused(path, gone):
            written, _ = self.fs.update_text(rel, checked)
        if written:
            self._after([rel])
        return "".join(_grown(path, new, self.fs.max_note_bytes) for new in news)

    def _str_replace(self, command: Mapping[str, Any]) -> str:
        path = self._arg(command, "path")
        old = self._arg(command, "old_str")
        new = self._text(command, "new_str")
        done: list[tuple[str, int]] = []

        def change(text: str) -> str:
            was = T.as_written(text, old)  # a CRLF note's lines as its view showed them
            result, line = T.replace_once(
                text, was, new if was == old else T.line_ends(text, new), path
            )
            first, last = T.match_lines(text, was)
            self._refuse_managed(text, path, first, last, inserting=False)
            self._refuse_unpaired(text, result, path, inserting=False)
            done[:] = [(result, line)]
            return result

        grown = self._edit(path, change)
        return T.snippet(*done[-1]) + grown

    def _insert(self, command: Mapping[str, Any]) -> str:
        path = self._arg(command, "path")
        text_in = self._text(command, "insert_text")
        line = command.get("insert_line")
        if not isinstance(line, int) or isinstance(line, bool):
            raise T.Refusal(f"Invalid `insert_line` parameter: {line}. It must be a whole number.")

        def change(text: str) -> str:
            result = T.insert_at(text, line, T.line_ends(text, text_in))
            self._refuse_managed(text, path, line, line, inserting=True)
            self._refuse_unpaired(text, result, path, inserting=True)
            return result

        grown = self._edit(path, change)
        return f"The file {path} has been edited.{grown}"

    def _refuse_unpaired(self, text: str, result: str, path: str, *, inserting: bool) -> None:
        """MEMORY.md's and a folder note's markers stay paired (memvault keeps those)."""
        rel = T.memory_rel(path)
        if rel == self.memory_file or rel == folder_note_path(posixpath.dirname(rel)):
            T.unpaired(text, result, path, inserting)

    def _refuse_managed(
        self, text: str, path: str, first: int, last: int, *, inserting: bool
    ) -> None:
        spans = T.sections(text)
        section = T.inside(spans, first) if inserting else T.touched(spans, first, last)
        if section is None:
            return
        rel = T.memory_rel(path)
        lines = text.split("\n")
        lo, hi = (
            (section.begin, section.end)
            if inserting
            else (max(first, section.begin), min(last, section.end))
        )
        resolve = self.catalogue.resolver(rel)
        notes = []
        for link in find_links("\n".join(lines[lo - 1 : hi])):
            target = resolve(link.target)
            if target and target not in notes:
                notes.append(target)
        rule = next((r for r in self.config.memory.sections if r.name == section.name), None)
        folder = rule.folder if rule is not None else posixpath.dirname(rel) or None
        raise T.Refusal(T.managed_refusal(path, section, notes, folder, inserting))

    # -- delete, rename -------------------------------------------------------------------------

    def _delete(self, command: Mapping[str, Any]) -> str:
        path = self._arg(command, "path")
        rel = self._rel(path)
        if not rel:
            raise T.Refusal("Cannot delete the /memories directory itself")
        if rel == self.memory_file:
            raise T.Refusal(
                f"Cannot delete {path}: it is the vault's index, kept by memvault. Edit the "
                "lines outside its managed sections instead, or delete the notes it lists"
            )
        disk = self._disk(rel)
        if not disk.exists() and not disk.is_symlink():
            raise N.missing(self.fs, path, rel, "The path {path} does not exist")
        is_dir = disk.is_dir()
        if not is_dir:
            rel = self._note_rel(path)
        gone = self.catalogue.files_under(rel) if is_dir else [rel]  # attachments too
        linking = self.catalogue.linking(gone, also=(self.memory_file,))
        trash = self._trash_path(rel)
        trash.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(disk, trash)
        except FileNotFoundError:
            raise T.Refusal(f"The path {path} does not exist") from None
        self._after([rel])
        if self.memory_file in linking:  # its own lines for what went are gone now; the
            # agent's (an auto-memory index line, outside the markers) are kept and dangle
            linking = self._still_in_memory(linking)
        restore = trash.relative_to(self.fs.root).as_posix()
        asked = [(t, source) for source, links in linking.items() for t, _ in links]
        resolve = answering(self.catalogue.link_lookup(), asked).resolve if linking else None
        return f"Successfully deleted {path}" + T.dangling(linking, resolve, restore)

    def _still_in_memory(
        self, linking: Mapping[str, list[tuple[str, str]]]
    ) -> dict[str, list[tuple[str, str]]]:
        """``linking`` with MEMORY.md's links cut to those still written in it once its
        sections were updated (memvault's own line for a deleted note went)."""
        try:
            text = self.fs.read(self.memory_file).decoded.text
        except (OSError, NotText, NoteNotFound):  # gone or not text: nothing to name there
            text = ""
        written: set[tuple[str, str]] = {(lk.target, lk.kind) for lk in find_links(text)}
        out = {s: list(links) for s, links in linking.items() if s != self.memory_file}
        if kept := [pair for pair in linking[self.memory_file] if pair in written]:
            out[self.memory_file] = kept
        return out

    def _trash_path(self, rel: str) -> Path:
        base = self.fs.root / TRASH / rel
        stem, ext = (
            (base.name[:-3], ".md") if base.name.lower().endswith(".md") else (base.name, "")
        )
        n = 1
        found = base
        while found.exists() or found.is_symlink():
            n += 1
            found = base.with_name(f"{stem} {n}{ext}")
        return found

    def _rename(self, command: Mapping[str, Any]) -> str:
        old_path = self._arg(command, "old_path")
        new_path = self._arg(command, "new_path")
        old = self._rel(old_path)
        if not old:
            raise T.Refusal("Cannot rename the /memories directory itself")
        start = "Nothing was changed"
        N.refuse_unportable(self.fs, T.memory_rel(new_path), new_path, start, source=old)
        new = self._rel(new_path)
        if not new:
            raise T.Refusal(f"The destination {new_path} already exists")
        new, case_only = self.fs.renamed_as(old, new, T.memory_rel(new_path))  # (folded case)
        if self.memory_file in (old, new):
            raise T.Refusal(
                f"Cannot rename {shown_of(self.memory_file)}: it is the vault's index, kept by "
                "memvault under that name"
            )
        src, dst = self._disk(old), self._disk(new)
        if (dst.exists() or dst.is_symlink()) and not case_only:  # (first, as the reference)
            raise T.Refusal(f"The destination {new_path} already exists")
        if not src.exists():
            raise N.missing(self.fs, old_path, old, "The path {path} does not exist")
        N.refuse_other_case(self.fs, new, new_path, source=old)
        is_dir = src.is_dir()
        N.refuse_look_alike(self.fs, new, new_path, folder=is_dir, source=old)
        if not is_dir:
            self._note_rel(old_path, as_file=True)
            self._note_rel(new_path, writing=True, rel=new)  # (its own name as asked)
            self.twins.refuse_rename(self.fs, old, new, new_path)
        elif new.startswith(old + "/"):
            raise T.Refusal(f"Cannot move {old_path} into itself ({new_path})")
        elif self.fs.is_ignored(new) or new.lower().endswith(".md"):
            raise T.Refusal(
                f"{new_path} is not a folder memvault keeps as memory; choose another name"
            )
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
        except (NotADirectoryError, FileExistsError):
            raise T.Refusal(
                f"Cannot rename {old_path} to {new_path}: a part of its path is a file"
            ) from None
        _move(src, dst, is_dir, new_path, case_only)
        report = self._sync([old, new])
        answer = f"Successfully renamed {old_path} to {new_path}"
        relinked = [p for p in report.relinked if p != new and not p.startswith(new + "/")]
        if relinked:
            answer += f"\nLinks to it were updated in {len(relinked)} notes: " + ", ".join(
                shown_of(p) for p in relinked[:10]
            )
        if report.memory_written:  # its line for the note, a link a person wrote in it
            answer += (
                f"\n{shown_of(self.memory_file)} was updated too: view it again before editing it"
            )
        return answer


def _first(view_range: Any) -> int | None:
    """A folder's page: view_range [first, mark] names the first entry listed (from 1);
    any other length is no range, as a file's view reads it."""
    if view_range is None or len(view_range) != 2:
        return None
    if not all(T.whole(i) for i in view_range):
        raise T.Refusal(
            f"Invalid `view_range`: {list(view_range)}. On a folder it should be two whole "
            "numbers: the first entry listed, then the second number its page's command "
            "gives (its mark)."
        )
    return max(1, int(view_range[0]))


def _mark(view_range: Any) -> int | None:
    """A folder's page: view_range [first, mark], the mark its command carries of the
    entries numbered before it (``core.page_marks``); None when the second number is
    none (a range the agent wrote: ``[41, 80]``)."""
    if view_range is None or len(view_range) != 2:
        return None
    return int(view_range[1]) if int(view_range[1]) in MARKS else None


def shown_of(rel: str) -> str:
    return T.shown(rel)


def _move(src: Path, dst: Path, is_dir: bool, new_path: str, case_only: bool = False) -> None:
    """Move without ever replacing what is at ``dst``: a file by a hard link (which
    fails if the name exists) then unlink; a folder by rename (which fails onto a
    folder that is not empty); in case only by rename (a look at ``dst`` finds ``src``)."""
    if case_only:
        return os.rename(src, dst)
    if not is_dir:
        try:
            os.link(src, dst, follow_symlinks=False)
        except FileExistsError:
            raise T.Refusal(f"The destination {new_path} already exists") from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EMLINK):
                raise
            if dst.exists():  # no hard links here (a FAT disk): check, then rename
                raise T.Refusal(f"The destination {new_path} already exists") from None
            os.rename(src, dst)
            return
        os.unlink(src)
        return
    try:
        os.rename(src, dst)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise T.Refusal(f"The destination {new_path} already exists") from None
        raise


@contextmanager
def _refused(path: str, gone: str) -> Iterator[None]:
    """A note's read or write failing as the tool's refusal: ``gone`` when the file is
    not there (any more), or that it is not text."""
    try:
        yield
    except NoteNotFound:
        raise T.Refusal(gone) from None
    except NotText as exc:
        raise T.Refusal(f"{path} is not text ({exc})") from None


def _nothing_changed(command: Mapping[str, Any], exc: Exception) -> str:
    """The tool's answer to a write that did not happen: a conflict said as it is; one the
    system refused (a note made read-only, a folder closed to us) naming the note by its
    /memories path (the error's own is the disk's, which the model cannot use)."""
    if not isinstance(exc, PermissionError):
        return f"Nothing was changed: {exc}"
    path = command.get("path") or command.get("old_path")
    return f"{path if isinstance(path, str) else 'the file'}: {exc.strerror}. Nothing was changed."


__all__ = ["COMMANDS", "TRASH", "MemoryCommands"]


# a note past vault.max_note_bytes is read whole for a view up to this size (a log of
# months, 23 MB in a field test: its newest lines are the ones asked for); past it, the
# view is of its first max_note_bytes and says so
_VIEW_WHOLE_BYTES = 64 << 20


def _grown(path: str, text: str, cap: int) -> str:
    """What an answer adds when the note written is long (core/note_size), else ""."""
    size = len(text.encode("utf-8"))
    return grown_said(path, size, line_count(text), cap) if is_long(size, cap) else ""


def _fits(text: str, path: str, cap: int, was: str | None = None) -> None:
    """A note's new text refused past vault.max_note_bytes (``cap``), unless it is an
    edit leaving a note already past it smaller (``was``: its text before): an agent's
    MEMORY.md grown past the cap, which it may neither delete nor split, is cut down."""
    size = len(text.encode("utf-8"))
    if size > cap and (was is None or size >= len(was.encode("utf-8"))):
        raise T.Refusal(
            f"Nothing was written: {path} would be {size} bytes, more than this vault's "
            f"notes may be ({cap} bytes, vault.max_note_bytes); split it into several notes"
        )
