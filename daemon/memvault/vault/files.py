"""The filesystem edge: scan, read, hash, and compare-and-swap writes for one vault.

Paths from outside are validated in ``paths`` (``safe_join``); every write to a
file a person may be editing goes through ``update_text`` / ``write_cas``,
which ``swap.Swapper`` makes atomic and compare-and-swap, and which never
replace a file another program still has open for writing (``writers``) or
saved within the quiet period. Nothing is written when nothing changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import re
import stat
import time
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memvault.config import QUIET_MS
from memvault.core import wikilinks
from memvault.core.changes import Seen
from memvault.core.text import Decoded, NotText, decode, encode, sha256_bytes
from memvault.errors import (
    FileBusy,
    NoteExists,
    NoteNotFound,
    VaultNotFound,
    WriteConflict,
)
from memvault.vault.batch_update import update_texts
from memvault.vault.odd_names import refused_name
from memvault.vault.open_files import NotAFile, open_to_read
from memvault.vault.paths import (
    case_spelling,
    disk_spelling,
    disk_spellings,
    display_path,
    folder_names,
    folds_case,
    glob_regex,
    is_utf8,
    named_in,
    normalize_rel,
    safe_join,
    spelt_as_on_disk,
)
from memvault.vault.scan import Scan, Walk, hidden_name, mtime
from memvault.vault.swap import TEMP_MARK, Swapper, Written, read_settled

_READ_BLOCK = 1 << 20
BUSY_WAIT_SECONDS = 1.0  # how long an update waits for a file open for writing elsewhere
BUSY_POLL = 0.05
CLAIM_SECONDS = 3  # a new note's claim follows its temp file at once (exFAT: mtime in 1 s)


@dataclass(frozen=True, slots=True)
class ReadResult:
    decoded: Decoded
    sha256: str  # of the whole file, even when only a prefix was decoded
    size: int
    mtime_ns: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class LineWindow:
    """Some lines of a note (``VaultFS.read_lines``) and how many the whole file has."""

    lines: tuple[str, ...]
    total_lines: int
    cut: bool  # the window stopped at its byte cap, before its last line
    partial: bool = False  # its one line alone is longer than the cap: cut inside it


class VaultFS:
    """File access for one vault root.

    Size: past 400 lines as one subject, every read and write of a person's files:
    each goes through the same path checks (``path``: the vault's edge, symlinks,
    the names on disk) and the same compare-and-swap (``update_text`` and its
    batched form ``update_texts``, one loop of redo-on-their-version), so they stay
    one class.
    """

    def __init__(
        self,
        root: Path,
        ignore: Iterable[str] = (),
        max_note_bytes: int = 2_000_000,
        quiet_ms: int = QUIET_MS,
        busy_wait: float = BUSY_WAIT_SECONDS,
    ) -> None:
        self.root = Path(root)
        self._real_root = os.path.realpath(self.root)
        # an ignore matches case as the disk does; a name is there only as it spells it
        self.folds = folds = folds_case(self.root)
        globs = [glob_regex(p, folds) for p in ignore if p.strip()]
        # one pattern for them all: the scan asks it of every file in the vault
        self._ignore = (
            re.compile("|".join(f"(?:{rx.pattern})" for rx in globs), globs[0].flags)
            if globs
            else None
        )
        self.max_note_bytes = max_note_bytes
        self.busy_wait = busy_wait
        self._swapper = Swapper(quiet_ms)  # files saved within this are left alone
        self._disk: dict[str, str] = {}
        # the files memvault names (MEMORY.md): on a disk that folds case, an update names
        # them back as config.toml spells them (``_named_so``); a person's notes keep theirs
        self.own_names: frozenset[str] = frozenset()
        try:  # the folder opened, to tell if it goes
            self._identity: tuple[int, int] | None = _folder_identity(self.root)
        except OSError:
            self._identity = None

    def check_root(self) -> None:
        """Raise ``VaultNotFound`` when the vault folder is no longer the one opened:
        moved, renamed or deleted (or another folder put at its path) while memvault
        had it open. Read as a vault with no notes, it would drop every note from the
        index and MEMORY.md, and a write would make a new folder at the old path."""
        try:
            now = _folder_identity(self.root)
        except OSError:  # cannot tell now (a network mount's hiccup): the sync says more
            return
        if now is None or (self._identity is not None and now != self._identity):
            raise VaultNotFound(
                f"the vault folder {self.root} is gone (moved, renamed or deleted while "
                "memvault had it open); nothing was changed"
            )

    # -- what belongs to the vault ------------------------------------------------

    def is_ignored(self, rel: str) -> bool:
        """Whether a vault-relative path is outside what memvault indexes."""
        return self._hidden(rel) or self._ignored_by_config(rel)

    @staticmethod
    def _hidden(rel: str) -> bool:
        """Dot-files and dot-folders, conflict copies, our temp files: never seen."""
        parts = rel.split("/")
        return any(p.startswith(".") for p in parts) or hidden_name(parts[-1])

    def _ignored_by_config(self, rel: str) -> bool:
        return self._ignore is not None and self._ignore.match(rel) is not None

    def scan(self, folder: str = "", *, fast: bool = True) -> Scan:
        """Every note (and other file) at or below ``folder`` ('' = the whole vault),
        classified by ``vault.scan``'s rules (``fast=False``: each rule asked of every
        name, the plain ``name.md`` too: the same answer, slower)."""
        walk = Walk(str(self.root), self._real_root, self._ignore)
        # a folder a Mac named (NFD) is asked for in NFC (the watcher's word for it); on
        # ext4 both spellings may be folders: each is walked, its twins sorted as the
        # vault's scan sorts them (name_forms)
        first, *more = disk_spellings(str(self.root), folder)
        walk.stack.extend(more)
        scan = walk.run(first, self.check_root, fast=fast)
        # the name on disk of each key, as found now: a name spelt otherwise is one the
        # full rules took (Walk.entry), or one of a folder not in NFC; a key kept from
        # before and now found as it is spelt is let go (a look at each note's key cost a
        # search with no daemon 0.04 s at 100,000 notes)
        notes = scan.notes
        for key in [k for k in self._disk if k in notes and notes[k].disk == k]:
            del self._disk[key]
        for key in walk.spelt_otherwise:  # (a twin spelt as its key took its place: above)
            if (disk := notes[key].disk) != key:
                self._disk[key] = disk
        return scan

    def refusal(self, rel: str) -> str | None:
        """Why ``rel`` (a path an event named) is not a note of the vault, by the rules
        ``scan`` follows; None when it may be one (or is simply not there)."""
        if (refused := refused_name(rel, self._real_root)) is not None:
            return refused
        disk = self._on_disk(rel)
        expected = os.path.join(self._real_root, *disk.split("/"))
        try:
            real = os.path.realpath(os.path.join(self.root, disk))
        except OSError as exc:  # a symlink loop, a name too long
            return f"cannot resolve: {exc.strerror}"
        if real == expected:
            return None
        if os.path.commonpath([self._real_root, real]) != self._real_root:
            return "symlink leads outside the vault"
        parent = os.path.dirname(expected)
        if os.path.realpath(parent) != parent:
            return "inside a symlinked folder (its notes are indexed where they really are)"
        if os.path.isdir(real):
            return "symlinked folder (its notes are indexed where they really are)"
        return None  # a symlink to a file inside the vault: indexed, as scan does

    def stat(
        self, rel: str, *, as_spelt: bool = False, listed: dict[str, set[str]] | None = None
    ) -> Seen | None:
        """Stat one note path; None if it is gone or not a regular file, or, with
        ``as_spelt`` on a disk that folds case, there only in another case (``Ana.md``
        renamed ``ana.md``: the old name opens the renamed file, yet is gone: what a
        sync of the paths a watcher named asks; ``listed``: the folders it listed)."""
        disk = self._on_disk(rel)
        try:
            st = os.stat(os.path.join(self.root, disk))
        except OSError:
            return None
        if not os.path.isfile(os.path.join(self.root, disk)):
            return None
        if as_spelt and self.folds and not spelt_as_on_disk(str(self.root), disk, listed):
            return None
        return Seen(st.st_size, mtime(st), disk)

    def is_folder(self, rel: str) -> bool:
        """A folder is at ``rel``, spelt so (on a disk that folds case, ``people/`` is
        not there once renamed ``People/``, though it opens that folder) or in another
        Unicode form only (a Mac's NFD name, which the watcher names in NFC: its notes
        were taken for deleted)."""
        disk = disk_spelling(str(self.root), rel)
        return os.path.isdir(os.path.join(self.root, disk)) and (
            not self.folds or spelt_as_on_disk(str(self.root), disk)
        )

    def obsidian_app_json(self) -> str | None:
        """The text of ``.obsidian/app.json`` (Obsidian's settings: ``newLinkFormat``), or
        None when there is none or it cannot be read."""
        try:
            return (self.root / ".obsidian" / "app.json").read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            return None

    def path(self, rel: str) -> Path:
        """The on-disk path of a vault-relative path (validated)."""
        safe = safe_join(self.root, rel, self._real_root)
        given = os.path.relpath(safe, self._real_root).replace(os.sep, "/")
        disk = self._on_disk(given)
        return safe if disk == given else safe_join(self.root, disk, self._real_root)

    def spelt(self, rel: str) -> str:
        """``rel`` (in NFC) with each folder and the file it names spelt as the disk
        spells them, on a disk that folds case: there ``people/ana.md`` is the person's
        ``People/Ana.md``, and an index row must say so (ext4: ``rel`` as given)."""
        if not self.folds:
            return rel
        spelt = case_spelling(str(self.root), rel, folds=True)
        return rel if spelt is None else unicodedata.normalize("NFC", spelt)

    def renamed_as(self, old: str, new: str, asked: str) -> tuple[str, bool]:
        """A rename's destination ``new`` (``spelt``) with its own name as ``asked``, on
        a disk that folds case; and whether it is ``old`` renamed in case only (there
        the name in another case is that very file)."""
        if not self.folds:
            return new, False
        new = posixpath.join(posixpath.dirname(new), posixpath.basename(normalize_rel(asked)))
        return new, new != old and wikilinks.key(new) == wikilinks.key(old)

    def _on_disk(self, rel: str) -> str:
        """The name on disk of ``rel``: as spelt when a file has that name (never another
        file's words: NFC and NFD twins are two files), else the other Unicode form of
        it the last scan found (a note saved on a Mac, its name in NFD)."""
        disk = self._disk.get(unicodedata.normalize("NFC", rel))
        if disk is None:  # not found in another form (new, gone, or never scanned)
            return disk_spelling(str(self.root), rel, fresh=self.folds)
        if disk == rel:
            return rel
        given, found = os.path.join(self.root, rel), os.path.join(self.root, disk)
        try:
            if os.path.lexists(given) and not os.path.samefile(given, found):
                return rel
        except OSError:  # the scanned spelling is gone: the one given is the file
            return rel
        return disk

    # -- reading -----------------------------------------------------------------

    def read(self, rel: str, cap: int | None = None) -> ReadResult:
        """Read a note: hash the whole file, decode at most ``cap`` bytes of it (cut after
        its last whole line, or inside a line, at a character's edge, when that line is
        over half of ``cap``).

        Raises NoteNotFound, or NotText for binary / non-UTF-8 files.
        """
        cap = self.max_note_bytes if cap is None else cap
        path = self.path(rel)
        digest = hashlib.sha256()
        head = bytearray()
        try:
            with open_to_read(path) as fh:
                st = os.fstat(fh.fileno())
                while block := fh.read(_READ_BLOCK):
                    digest.update(block)
                    if len(head) < cap:
                        head += block[: cap - len(head)]
        except FileNotFoundError:
            raise NoteNotFound(f"no note at {rel}") from None
        except IsADirectoryError:
            raise NoteNotFound(f"{rel} is a folder") from None
        except NotAFile:
            raise NoteNotFound(f"{rel} is not a file (a pipe, a socket or a device)") from None
        truncated = st.st_size > len(head)
        data = bytes(head)
        if truncated:  # after the last whole line, unless that drops most of what was read
            cut = data.rfind(b"\n")  # (a huge note of one line kept only its title line)
            data = data[: cut + 1] if cut >= len(data) // 2 else data
            while data:
                try:
                    data.decode("utf-8")
                    break
                except UnicodeDecodeError as exc:
                    if exc.start < len(data) - 4:
                        break
                    data = data[: exc.start]
        return ReadResult(decode(data), digest.hexdigest(), st.st_size, mtime(st), truncated)

    def read_lines(self, rel: str, first: int, last: int | None, cap: int) -> LineWindow:
        """Lines ``first``..``last`` (1-based; None: to the end) of a note, at most ``cap``
        bytes of them, and how many lines the whole file has: ``get`` of a note past
        ``vault.max_note_bytes``, read on past the cut. A line longer than what is left
        of ``cap`` is cut inside (at a character's boundary) and ends the window."""
        path = self.path(rel)
        taken: list[bytes] = []
        size, cut, line_no, last_byte = 0, False, 1, b""  # line_no: the line read next
        try:
            with open_to_read(path) as fh:
                while True:
                    keep = not cut and first <= line_no and (last is None or line_no <= last)
                    room = cap - size
                    piece = fh.readline(room + 1 if keep else _READ_BLOCK)
                    if not piece:
                        break
                    last_byte = piece[-1:]
                    if keep:
                        if len(piece) > room:  # the cap: cut after the last whole line,
                            cut = True  # or inside the first when it alone is longer
                            piece = piece[:room] if not taken else b""
                        taken.append(piece)
                        size += len(piece)
                    if last_byte == b"\n":
                        line_no += 1
        except FileNotFoundError:
            raise NoteNotFound(f"no note at {rel}") from None
        except (IsADirectoryError, NotAFile):
            raise NoteNotFound(f"{rel} is not a file") from None
        total = line_no - 1 + (last_byte not in (b"", b"\n"))
        partial = cut and len(taken) == 1
        data = b"".join(taken)
        text = data.decode("utf-8", errors="ignore") if partial else decode(data).text
        lines = text.split("\n")
        if lines[-1] == "" and not partial:
            lines.pop()
        return LineWindow(tuple(line.removesuffix("\r") for line in lines), total, cut, partial)

    def hashes(self, rels: Iterable[str]) -> dict[str, str]:
        """sha256 of each readable file (whatever its size); the unreadable are left out."""
        out = {}
        for rel in rels:
            try:
                out[rel] = self.read(rel, cap=0).sha256
            except (NoteNotFound, OSError, NotText):
                continue
        return out

    def written(self, rel: str) -> Written | None:
        """memvault's own last write of ``rel`` while the file is still exactly it
        (``Swapper.ours``: one ``stat``), so what it holds is known unread; else None."""
        return self._swapper.ours(self._written_path(rel))

    def swapped(self, rel: str) -> bool:
        """Whether ``rel`` is the very file memvault's last swap there put (or is putting)
        in place (``Swapper.swapped_in``): what the watcher asks of a swap's events."""
        return self._swapper.swapped_in(self._written_path(rel))

    def _written_path(self, rel: str) -> str:
        """The key ``Swapper`` remembers a write of ``rel`` under (``path``'s form)."""
        return os.path.join(self._real_root, *self._on_disk(rel).split("/"))

    def read_bytes(self, rel: str) -> bytes:
        try:
            return self.path(rel).read_bytes()
        except FileNotFoundError:
            raise NoteNotFound(f"no note at {rel}") from None

    # -- writing -----------------------------------------------------------------

    def write_cas(self, rel: str, data: bytes, expected_sha: str | None) -> bool:
        """Atomically put ``data`` at ``rel`` if the file still has ``expected_sha``.

        ``expected_sha=None`` means the file must not exist yet (create).
        Returns False when someone else's version is there; it stays there.
        Raises ``FileBusy`` while another program has the file open for writing.
        """
        self.check_root()
        path = self._target(rel, expected_sha)
        deadline = time.monotonic() + self.busy_wait
        while True:
            try:
                return self._swapper.swap(path, data, expected_sha)[0]
            except FileBusy as exc:
                if time.monotonic() >= deadline:
                    raise FileBusy(f"{rel} left as it is: {_reason(exc)}") from None
                time.sleep(BUSY_POLL)

    def _target(
        self, rel: str, expected_sha: str | None, listed: dict[str, set[str]] | None = None
    ) -> Path:
        path = self.path(rel)
        if expected_sha is not None and self.folds and rel not in self.own_names:
            self._named_so(rel, path, {} if listed is None else listed)
        if expected_sha is not None and path.is_symlink():
            # a symlinked note (MEMORY.md -> docs/index.md): the write goes to the file it
            # names (inside the vault: ``path`` checked that), and the link stays a link
            path = Path(os.path.realpath(path))
        return path

    def update_text(
        self,
        rel: str,
        change: Callable[[str], str],
        attempts: int = 50,
        *,
        busy_until: float | None = None,
    ) -> tuple[bool, str]:
        """Apply ``change`` to a note's text with compare-and-swap; never lose a save.

        The BOM is kept; ``change`` sees and returns text with the file's own
        line endings. When a person saves mid-way, ``change`` is redone on top
        of their version. While the file is open for writing elsewhere (or was
        saved within the quiet period) it waits up to ``busy_wait`` seconds (or until
        ``busy_until``, a ``time.monotonic()`` deadline), then raises ``FileBusy`` and
        leaves the file as it is -- also when ``change`` would change nothing in what was
        read: a file being written may hold anything yet (an editor that truncates,
        then writes: read empty, it had no link to re-target; a field test).
        Returns (written, sha256 of the file now).
        """
        self.check_root()
        path = self._target(rel, "")
        try:
            base = read_settled(path)
        except FileNotFoundError:
            raise NoteNotFound(f"no note at {rel}") from None
        conflicts = 0
        computed: tuple[bytes, bytes] | None = None  # (base, data): not recomputed while waiting
        while True:
            if computed is None or computed[0] != base:
                decoded = decode(base)
                computed = base, encode(Decoded(change(decoded.text), decoded.bom))
            data = computed[1]
            try:
                if data == base:
                    self._swapper.refuse_if_busy(path)  # unchanged as read, and not mid-save
                    return False, sha256_bytes(base)
                ok, other = self._swapper.swap(path, data, sha256_bytes(base))
            except FileBusy as exc:
                now = time.monotonic()
                busy_until = busy_until if busy_until is not None else now + self.busy_wait
                if now >= busy_until:
                    raise FileBusy(f"{rel} left as it is: {_reason(exc)}") from None
                time.sleep(BUSY_POLL)
                other = read_settled(path) if path.exists() else None
            else:
                if ok:
                    return True, sha256_bytes(data)
                conflicts += 1
            if other is None:
                raise NoteNotFound(f"{rel} was removed while memvault updated it")
            if conflicts >= attempts:
                raise WriteConflict(
                    f"{rel} kept changing while memvault tried to update it; left as is"
                )
            base = other

    def update_texts(
        self,
        changes: Mapping[str, Callable[[str], str]],
        batch: int = 256,
        wait: float | None = None,
    ) -> dict[str, bool | Exception]:
        """``update_text`` for many notes (a relink), durable a batch at a time, busy
        notes waiting together (vault/batch_update.py)."""
        return update_texts(self, changes, batch, wait)

    @property
    def swapper(self) -> Swapper:
        """The compare-and-swap writer (vault/swap.py) this vault's writes go through."""
        return self._swapper

    def target(self, rel: str, listed: dict[str, set[str]] | None = None) -> Path:
        """Where an update of ``rel`` writes: the file a symlinked note names.
        ``listed``: the folders a batch of updates listed (``_named_so``)."""
        return self._target(rel, "", listed)

    @staticmethod
    def _named_so(rel: str, path: Path, listed: dict[str, set[str]]) -> None:
        """On a disk that folds case, ``NoteNotFound`` when the file is there only in
        another case (a person renamed ``Ana.md`` ``ana.md``): a swap onto the old
        name would name it back, as on ext4 the old name is gone. ``listed``: the
        folders listed already (one listing a folder for a batch, not one a note)."""
        folder, name = os.path.split(path)
        names = folder_names(listed, folder)  # None: the read that follows says what is wrong
        if names is not None and not named_in(names, name):
            raise NoteNotFound(f"no note at {rel} (it is there in another case only)")

    def create(self, rel: str, text: str, durable: bool = True) -> str:
        """Create a new note; never overwrites. Returns its sha256.

        ``durable=False`` skips the fsyncs, for bulk creation that is followed
        by one ``os.sync()`` (and is safe to redo if interrupted).
        """
        data = text.encode("utf-8")
        self.check_root()
        if not self._swapper.swap(self.path(rel), data, None, durable)[0]:
            raise NoteExists(f"{rel} already exists")
        return sha256_bytes(data)

    def remove_temp_files(self) -> list[str]:
        """Delete temp files left by a write that was killed midway; a new note's
        temp file whose name was claimed already (``swap.place_new`` on a disk without
        hard links: killed between the claim and the rename) is renamed onto its claim,
        never left an empty note that a retry is told "already exists" of."""
        removed = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d not in (".git", ".obsidian", ".trash")]
            for name in filenames:
                if TEMP_MARK in name and name.startswith("."):
                    with contextlib.suppress(OSError):
                        if _claimed(dirpath, name):
                            continue
                        os.unlink(os.path.join(dirpath, name))
                        removed.append(os.path.relpath(os.path.join(dirpath, name), self.root))
        return removed


def _claimed(folder: str, temp: str) -> bool:
    """Whether the temp file ``temp`` was a new note's, its name claimed empty after it
    was written (within ``CLAIM_SECONDS``, a disk's mtime being coarse): then it is
    renamed onto that claim. A note a person wrote, or emptied long before or after,
    is left as it is."""
    note = os.path.join(folder, temp[1 : temp.rindex(TEMP_MARK)])
    tmp = os.path.join(folder, temp)
    try:
        claim, made = os.stat(note, follow_symlinks=False), os.stat(tmp)
    except OSError:
        return False
    late = claim.st_mtime_ns - made.st_mtime_ns
    if not stat.S_ISREG(claim.st_mode) or claim.st_size or not made.st_size:
        return False
    if not 0 <= late <= CLAIM_SECONDS * 1_000_000_000:
        return False
    os.replace(tmp, note)
    return True


def _folder_identity(folder: Path) -> tuple[int, int] | None:
    """(device, inode) of a folder, None when it is not there (or not a folder); an
    error that does not say so (EIO, ESTALE...) is raised."""
    try:
        st = os.stat(folder)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _reason(exc: FileBusy) -> str:
    return str(exc).split(": ", 1)[-1]


__all__ = [
    "TEMP_MARK",
    "NotText",
    "ReadResult",
    "Scan",
    "VaultFS",
    "display_path",
    "glob_regex",
    "is_utf8",
    "normalize_rel",
    "safe_join",
]
