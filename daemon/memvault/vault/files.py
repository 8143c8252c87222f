"""The filesystem edge: scan, read, hash, safe paths, atomic compare-and-swap writes.

Every path that comes from outside (a CLI argument, an HTTP request, an MCP
tool call, a link) reaches the disk through ``safe_join``. Every write to a
file a person may be editing goes through ``update_text`` / ``write_cas``:
write a temp file in the same folder, fsync, check the file still has the
hash that was read, then swap it in — on Linux with ``renameat2
(RENAME_EXCHANGE)``, so a save that slipped in between check and swap is seen
and swapped straight back; elsewhere with ``os.replace`` right after the
check. Nothing is written when nothing changes.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import time
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from memvault.core.text import Decoded, NotText, decode, encode, sha256_bytes
from memvault.errors import NoteExists, NoteNotFound, UnsafePath, WriteConflict

CONFLICT_COPY = re.compile(
    r"\.sync-conflict-|\(conflicted copy|\(Conflict|\.orig$|~$", re.IGNORECASE
)
TEMP_MARK = ".memvault-tmp-"
_WINDOWS_ABS = re.compile(r"^(?:[A-Za-z]:|\\\\|//)")
_READ_BLOCK = 1 << 20


@dataclass(frozen=True, slots=True)
class FileStat:
    size: int
    mtime_ns: int
    disk: str  # the name on disk (may differ from the key in Unicode form)


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Scan:
    notes: dict[str, FileStat]
    attachments: dict[str, FileStat]  # every other file (linked, not indexed): size+mtime
    skipped: tuple[Skipped, ...]


@dataclass(frozen=True, slots=True)
class ReadResult:
    decoded: Decoded
    sha256: str  # of the whole file, even when only a prefix was decoded
    size: int
    mtime_ns: int
    truncated: bool


def normalize_rel(rel: str) -> str:
    """Validate a vault-relative path from outside and return its clean posix form.

    Refuses absolute paths, ``..``, NUL, backslashes, Windows drive and UNC
    forms, percent-encoded escapes and hidden (dot) folders such as
    ``.memvault`` or ``.git``.
    """
    if not isinstance(rel, str) or not rel.strip():
        raise UnsafePath("empty path")
    for form in {rel, urllib.parse.unquote(rel)}:
        if "\x00" in form:
            raise UnsafePath("path contains a NUL byte")
        if "\\" in form:
            raise UnsafePath(f"backslashes are not allowed in vault paths: {rel!r}")
        if form.startswith("/") or _WINDOWS_ABS.match(form):
            raise UnsafePath(f"absolute paths are not allowed: {rel!r}")
        parts = form.split("/")
        if any(p == ".." for p in parts):
            raise UnsafePath(f"'..' is not allowed in vault paths: {rel!r}")
        if any(p.startswith(".") and p != "." for p in parts):
            raise UnsafePath(f"hidden files and folders are not reachable: {rel!r}")
    if urllib.parse.unquote(rel) != rel and re.search(r"%(?:2e|2f|5c|00)", rel, re.IGNORECASE):
        raise UnsafePath(f"percent-encoded path separators are not allowed: {rel!r}")
    return unicodedata.normalize("NFC", _clean(rel))


def _clean(rel: str) -> str:
    clean = "/".join(p for p in rel.split("/") if p not in ("", "."))
    if not clean.strip():
        raise UnsafePath(f"not a file path: {rel!r}")
    return clean


def safe_join(root: Path, rel: str) -> Path:
    """``root / rel``, refusing anything that leaves the vault (symlinks included)."""
    normalize_rel(rel)  # validates
    clean = _clean(rel)  # joined as given: the name on disk may be NFD
    real_root = os.path.realpath(root)
    candidate = os.path.join(real_root, *clean.split("/"))
    real = os.path.realpath(candidate)
    if os.path.commonpath([real_root, real]) != real_root:
        raise UnsafePath(f"{rel!r} leads outside the vault")
    return Path(candidate)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """gitignore-like globs: ``**`` crosses folders, a pattern without ``/``
    matches a name anywhere, a trailing ``/`` means the folder and below."""
    pat = pattern.strip().lstrip("/")
    anywhere = "/" not in pat.rstrip("/")
    if pat.endswith("/"):
        pat += "**"
    out = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    prefix = "(?:.*/)?" if anywhere else ""
    return re.compile(f"^{prefix}{body}(?:/.*)?$", re.IGNORECASE)


class VaultFS:
    """File access for one vault root."""

    def __init__(
        self,
        root: Path,
        ignore: Iterable[str] = (),
        max_note_bytes: int = 2_000_000,
    ) -> None:
        self.root = Path(root)
        self._real_root = os.path.realpath(self.root)
        self._ignore = [glob_regex(p) for p in ignore if p.strip()]
        self.max_note_bytes = max_note_bytes
        self._disk: dict[str, str] = {}

    # -- what belongs to the vault ------------------------------------------------

    def is_ignored(self, rel: str) -> bool:
        """Whether a vault-relative path is outside what memvault indexes."""
        return self._hidden(rel) or self._ignored_by_config(rel)

    @staticmethod
    def _hidden(rel: str) -> bool:
        """Dot-files and dot-folders, conflict copies, our temp files: never seen."""
        parts = rel.split("/")
        return any(p.startswith(".") for p in parts) or bool(
            CONFLICT_COPY.search(parts[-1]) or TEMP_MARK in parts[-1]
        )

    def _ignored_by_config(self, rel: str) -> bool:
        return any(rx.match(rel) for rx in self._ignore)

    def scan(self, folder: str = "") -> Scan:
        """Every note (and other file) at or below ``folder`` ('' = the whole vault)."""
        notes: dict[str, FileStat] = {}
        attachments: dict[str, FileStat] = {}
        skipped: list[Skipped] = []
        stack = [folder.strip("/")]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(os.path.join(self.root, folder) if folder else self.root))
            except OSError as exc:
                skipped.append(Skipped(folder or ".", f"cannot list folder: {exc.strerror}"))
                continue
            for entry in sorted(entries, key=lambda e: e.name):
                rel = f"{folder}/{entry.name}" if folder else entry.name
                if entry.name.startswith(".") or self._hidden(rel):
                    continue
                if self._ignored_by_config(rel):
                    # not indexed, but Obsidian sees it: links to it must resolve
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(rel)
                    elif entry.is_file(follow_symlinks=False):
                        with contextlib.suppress(OSError):
                            st = entry.stat(follow_symlinks=False)
                            attachments[unicodedata.normalize("NFC", rel)] = FileStat(
                                st.st_size, st.st_mtime_ns, rel
                            )
                    continue
                try:
                    if entry.is_symlink():
                        real = os.path.realpath(entry.path)
                        if os.path.commonpath([self._real_root, real]) != self._real_root:
                            skipped.append(Skipped(rel, "symlink leads outside the vault"))
                            continue
                        if os.path.isdir(real):
                            skipped.append(
                                Skipped(
                                    rel,
                                    "symlinked folder (its notes are indexed where they really are)",
                                )
                            )
                            continue
                    if entry.is_dir():
                        stack.append(rel)
                        continue
                    if not entry.is_file():
                        continue
                    st = entry.stat()
                except OSError as exc:
                    skipped.append(Skipped(rel, f"cannot stat: {exc.strerror}"))
                    continue
                key = unicodedata.normalize("NFC", rel)
                if not rel.lower().endswith(".md"):
                    attachments[key] = FileStat(st.st_size, st.st_mtime_ns, rel)
                    continue
                if key in notes:
                    skipped.append(
                        Skipped(rel, f"same name as {notes[key].disk!r} in another Unicode form")
                    )
                    continue
                notes[key] = FileStat(st.st_size, st.st_mtime_ns, rel)
        self._disk.update({k: v.disk for k, v in notes.items() if k != v.disk})
        return Scan(notes, attachments, tuple(skipped))

    def stat(self, rel: str) -> FileStat | None:
        """Stat one note path; None if it is gone or not a regular file."""
        disk = self._disk.get(rel, rel)
        try:
            st = os.stat(os.path.join(self.root, disk))
        except OSError:
            return None
        if not os.path.isfile(os.path.join(self.root, disk)):
            return None
        return FileStat(st.st_size, st.st_mtime_ns, disk)

    def obsidian_app_json(self) -> str | None:
        """The text of ``.obsidian/app.json`` (Obsidian's settings: ``newLinkFormat``), or
        None when there is none or it cannot be read."""
        try:
            return (self.root / ".obsidian" / "app.json").read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            return None

    def path(self, rel: str) -> Path:
        """The on-disk path of a vault-relative path (validated)."""
        safe = safe_join(self.root, rel)
        disk = self._disk.get(normalize_rel(rel))
        return safe_join(self.root, disk) if disk else safe

    # -- reading -----------------------------------------------------------------

    def read(self, rel: str, cap: int | None = None) -> ReadResult:
        """Read a note: hash the whole file, decode at most ``cap`` bytes of it.

        Raises NoteNotFound, or NotText for binary / non-UTF-8 files.
        """
        cap = self.max_note_bytes if cap is None else cap
        path = self.path(rel)
        digest = hashlib.sha256()
        head = bytearray()
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                while block := fh.read(_READ_BLOCK):
                    digest.update(block)
                    if len(head) < cap:
                        head += block[: cap - len(head)]
        except FileNotFoundError:
            raise NoteNotFound(f"no note at {rel}") from None
        except IsADirectoryError:
            raise NoteNotFound(f"{rel} is a folder") from None
        truncated = st.st_size > len(head)
        data = bytes(head)
        if truncated:
            cut = data.rfind(b"\n")
            data = data[: cut + 1] if cut > 0 else data
            while data:
                try:
                    data.decode("utf-8")
                    break
                except UnicodeDecodeError as exc:
                    if exc.start < len(data) - 4:
                        break
                    data = data[: exc.start]
        return ReadResult(decode(data), digest.hexdigest(), st.st_size, st.st_mtime_ns, truncated)

    def hashes(self, rels: Iterable[str]) -> dict[str, str]:
        """sha256 of each readable file (whatever its size); the unreadable are left out."""
        out = {}
        for rel in rels:
            try:
                out[rel] = self.read(rel, cap=0).sha256
            except (NoteNotFound, OSError, NotText):
                continue
        return out

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
        """
        return self._swap(rel, data, expected_sha)[0]

    def _swap(
        self, rel: str, data: bytes, expected_sha: str | None, durable: bool = True
    ) -> tuple[bool, bytes | None]:
        """One compare-and-swap: (done, the version that is there instead).

        The slow part (writing and fsyncing the temp file) happens first; then
        the file is checked and swapped at once. On Linux the swap is
        ``renameat2(RENAME_EXCHANGE)``, so the version we displaced is checked
        *after* the swap too: if a save slipped in between check and swap, it
        is swapped straight back before anything else happens, and returned.
        Elsewhere the swap is ``os.replace`` right after the check.
        """
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".{path.name}{TEMP_MARK}{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                if durable:
                    fh.flush()
                    os.fsync(fh.fileno())
            if expected_sha is None:
                try:
                    os.link(tmp, path)  # fails if the name exists: never overwrites
                except FileExistsError:
                    return False, None
                if durable:
                    _fsync_dir(path.parent)
                return True, None
            try:
                os.chmod(tmp, os.stat(path).st_mode & 0o7777)
                current = path.read_bytes()
            except FileNotFoundError:
                return False, None
            if sha256_bytes(current) != expected_sha:
                return False, _read_settled(path)
            if not _exchange(tmp, path):
                os.replace(tmp, path)
                _fsync_dir(path.parent)
                return True, None
            displaced = tmp.read_bytes()
            if sha256_bytes(displaced) == expected_sha:
                _fsync_dir(path.parent)
                return True, None
            self._put_back(tmp, path, data)
            return False, _read_settled(path)
        except FileNotFoundError:
            return False, None
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    @staticmethod
    def _put_back(tmp: Path, path: Path, ours: bytes) -> None:
        """A save landed between our check and our swap: give it its place back.

        ``tmp`` holds that save, ``path`` ours. Swap again; if what comes back
        is not ours, a still newer save came in meanwhile: it goes back too
        (the older one is then superseded, as the person's own editor would have).
        """
        for _ in range(100):
            _exchange(tmp, path)
            if tmp.read_bytes() == ours:
                return
        raise WriteConflict(f"{path.name} keeps changing; memvault stopped touching it")

    def update_text(
        self, rel: str, change: Callable[[str], str], attempts: int = 50
    ) -> tuple[bool, str]:
        """Apply ``change`` to a note's text with compare-and-swap; never lose a save.

        The BOM is kept; ``change`` sees and returns text with the file's own
        line endings. When a person saves mid-way, ``change`` is redone on top
        of their version. Returns (written, sha256 of the file now).
        """
        try:
            base = _read_settled(self.path(rel))
        except FileNotFoundError:
            raise NoteNotFound(f"no note at {rel}") from None
        for _ in range(attempts):
            decoded = decode(base)
            data = encode(Decoded(change(decoded.text), decoded.bom))
            if data == base:
                return False, sha256_bytes(base)
            ok, other = self._swap(rel, data, sha256_bytes(base))
            if ok:
                return True, sha256_bytes(data)
            if other is None:
                raise NoteNotFound(f"{rel} was removed while memvault updated it")
            base = other
        raise WriteConflict(f"{rel} kept changing while memvault tried to update it; left as is")

    def create(self, rel: str, text: str, durable: bool = True) -> str:
        """Create a new note; never overwrites. Returns its sha256.

        ``durable=False`` skips the fsyncs, for bulk creation that is followed
        by one ``os.sync()`` (and is safe to redo if interrupted).
        """
        data = text.encode("utf-8")
        if not self._swap(rel, data, None, durable)[0]:
            raise NoteExists(f"{rel} already exists")
        return sha256_bytes(data)

    def remove_temp_files(self) -> list[str]:
        """Delete temp files left by a write that was killed midway."""
        removed = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d not in (".git", ".obsidian", ".trash")]
            for name in filenames:
                if TEMP_MARK in name and name.startswith("."):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(dirpath, name))
                        removed.append(os.path.relpath(os.path.join(dirpath, name), self.root))
        return removed


SETTLE_NS = 20_000_000  # a file modified this recently may be mid-save


def _read_settled(path: Path, tries: int = 100) -> bytes:
    """Read a file once it has stopped changing.

    An editor saving in place truncates then writes; reading in between would
    see half a file. Wait until the file is unchanged across the read and was
    last modified more than ``SETTLE_NS`` ago (at most ~1 s, then take it).
    """
    data = b""
    for _ in range(tries):
        before = os.stat(path)
        with open(path, "rb") as fh:
            data = fh.read()
        after = os.stat(path)
        same = (before.st_ino, before.st_size, before.st_mtime_ns) == (
            after.st_ino,
            after.st_size,
            after.st_mtime_ns,
        )
        if same and len(data) == after.st_size and time.time_ns() - after.st_mtime_ns > SETTLE_NS:
            return data
        time.sleep(0.01)
    return data


def _load_renameat2() -> Callable[..., int] | None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _load_renameat2() if os.name == "posix" else None
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2). False where unsupported."""
    global _RENAMEAT2
    if _RENAMEAT2 is None:
        return False
    import ctypes

    rc = _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        if err != errno.EXDEV:
            _RENAMEAT2 = None  # this filesystem or kernel cannot: use the fallback from now on
        return False
    if err == errno.ENOENT:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(b))
    raise OSError(err, os.strerror(err), str(b))


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:  # some filesystems refuse fsync on folders
        if exc.errno not in (errno.EINVAL, errno.EBADF, errno.EACCES):
            raise
    finally:
        os.close(fd)


__all__ = [
    "FileStat",
    "NotText",
    "ReadResult",
    "Scan",
    "Skipped",
    "VaultFS",
    "glob_regex",
    "normalize_rel",
    "safe_join",
]
