"""One atomic compare-and-swap of a file a person may be editing, never over a save in
progress.

``Swapper.swap(path, data, expected_sha)``:

1. write ``data`` to a temp file beside ``path`` and fsync it (the slow part, first);
2. refuse (``FileBusy``) while another process holds ``path`` open for writing
   (``open_files.open_for_writing``: a read lease, else /proc) or while it was
   changed within the quiet period by someone other than memvault: a save may
   be in progress, in pieces;
3. check ``path`` still has ``expected_sha`` and swap at once: on Linux with
   ``renameat2(RENAME_EXCHANGE)``, which leaves the version we displaced at the
   temp name, so it can be looked at *after* the swap: if a writer opened it
   between our check and our swap (it would go on writing into a file that is
   no longer there), or a save landed in between, the person's version is
   swapped straight back; elsewhere with ``os.replace`` right after the check;
4. fsync the folder.

An editor saving in place truncates, then writes; ``read_settled`` reads a file
only once it has stopped changing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import os
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memvault.config import QUIET_MS
from memvault.core.text import sha256_bytes
from memvault.errors import FileBusy, WriteConflict
from memvault.vault import libc
from memvault.vault.open_files import open_for_writing

TEMP_MARK = ".memvault-tmp-"
_NAME_MAX = 255  # bytes in one file name (ext4, APFS, NTFS in UTF-16 units: fewer bytes)
SETTLE_NS = 20_000_000  # a file modified this recently may be mid-save
SKEW_NS = 1_000_000_000  # a modification time further ahead than this is no recent save
# how many of our own writes are remembered (to tell them from a person's): a rename's
# relink writes ~10,000 notes at 50k, and its events are looked at seconds later
_OURS_KEPT = 16384


@dataclass(frozen=True, slots=True)
class Written:
    """What memvault last wrote at a path: the file's identity right after the swap
    (inode, size, mtime, ctime: a save since, in place or by rename, a chmod, a
    ``touch`` changes one of them), the sha256 of the bytes written and of the version
    they replaced (None: created). ``ctime_ns`` is None while the swap is under way
    (the file written, its inode about to be put at the path, or just put there)."""

    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int | None
    digest: bytes  # sha256 of what was written
    before: str | None

    @property
    def sha256(self) -> str:
        return self.digest.hex()

    def matches(self, st: os.stat_result) -> bool:
        """``st`` is this file, unchanged since the swap."""
        return self.ctime_ns is not None and _identity(st) == (
            self.ino,
            self.size,
            self.mtime_ns,
            self.ctime_ns,
        )

    def made(self, st: os.stat_result) -> bool:
        """``st`` is the file memvault wrote (its inode, with the size and mtime it was
        written with), the swap done or under way."""
        return (st.st_ino, st.st_size, st.st_mtime_ns) == (self.ino, self.size, self.mtime_ns)


class Swapper:
    """Compare-and-swap writes; remembers its own last writes (``ours``) so that they do
    not count as "changed moments ago" by someone else, and so that the index and the
    watcher can tell the file memvault wrote from a person's save after it."""

    def __init__(self, quiet_ms: int = QUIET_MS) -> None:
        self.quiet_ms = quiet_ms
        self._ours: dict[str, Written] = {}  # path -> our last write there, oldest first
        self._ours_lock = threading.Lock()  # writers; ``ours`` reads without it

    def busy(self, path: Path) -> str | None:
        """Why ``path`` must not be replaced now, or None."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        if open_for_writing(path):
            return "it is open for writing in another program"
        age = time.time_ns() - st.st_mtime_ns
        if 0 <= age < self.quiet_ms * 1_000_000:
            ours = self._ours.get(str(path))
            if ours is None or not ours.matches(st):
                return "it was saved moments ago; a save may be in progress"
        return None

    def ours(self, path: str) -> Written | None:
        """Our last write at ``path`` (as ``str(Path)`` of the path written), when the
        file there is still exactly it: same inode, size, mtime and ctime as right
        after the swap. None when a save (anyone's) came after, or it is not ours.
        Safe from any thread (the watcher's asks it of the events it sees)."""
        found = self._written_there(path)
        return found[0] if found and found[0].matches(found[1]) else None

    def swapped_in(self, path: str) -> bool:
        """Whether the file at ``path`` is the very file our last swap there put (or is
        putting) in place, its size and mtime as written: what the watcher asks of a
        move between a note and our temp file (an event it may see before the swap is
        done). A person's version swapped back (``put_back``) or saved by rename is
        another inode; a save in place is an event of its own."""
        found = self._written_there(path)
        return found is not None and found[0].made(found[1])

    def _written_there(self, path: str) -> tuple[Written, os.stat_result] | None:
        """Our last write remembered at ``path`` and the file there now, or None (not
        ours, or no file)."""
        ours = self._ours.get(path)
        if ours is None:
            return None
        try:
            return ours, os.stat(path)
        except OSError:
            return None

    def swap(
        self, path: Path, data: bytes, expected_sha: str | None, durable: bool = True
    ) -> tuple[bool, bytes | None]:
        """(done, the version that is there instead). ``expected_sha=None`` creates
        (never overwrites). Raises ``FileBusy`` when the file must not be replaced now."""
        if expected_sha is not None:
            try:
                if sha256_bytes(path.read_bytes()) != expected_sha:
                    return False, read_settled(path)
            except FileNotFoundError:
                return False, None
            self.refuse_if_busy(path)
        tmp, made = self._write_temp(path, data, durable)
        return self._swap_in(path, tmp, made, data, expected_sha, durable)

    def swap_many(
        self,
        items: Sequence[tuple[Path, bytes, str]],
        displaced: list[Path] | None = None,
        still: Callable[[Path], bool] | None = None,
    ) -> list[tuple[bool, bytes | None] | OSError | WriteConflict]:
        """``swap`` each (path, data, expected_sha), every file as atomic and
        compare-and-swap as one ``swap``, but durable as a batch: the temp files are
        written, then flushed to disk together (one ``syncfs``), then swapped in one by
        one, then each folder is fsynced once. Two flushes for the batch, not two a file
        (a relink of 6,000 notes spent ~45 s in fsync). A file that is busy gets its
        ``FileBusy`` in its place, one that keeps changing its ``WriteConflict``, one
        that cannot be written its ``OSError`` (the person's version left in each: the
        caller may try it alone); the rest of the batch goes on. ``displaced``: the
        versions a swap displaced (each now at its temp name, checked and no longer
        anyone's) are put there for the caller to delete, not deleted here (on a disk
        mounted with ``discard`` each unlink waits ~1 ms for the device: the caller
        deletes them while it goes on with its work, ``unlink_all``). ``still``: asked of
        each path after the flush; False leaves it alone, a ``FileNotFoundError`` in its
        place (renamed in case meanwhile, on a disk that folds case: batch_update)."""
        out: list[tuple[bool, bytes | None] | OSError | WriteConflict | None] = [None] * len(items)
        temps: dict[int, tuple[Path, os.stat_result]] = {}
        try:
            for i, (path, data, _) in enumerate(items):
                try:
                    self.refuse_if_busy(path)
                    temps[i] = self._write_temp(path, data, durable=False)
                except (WriteConflict, OSError) as exc:  # FileBusy is a WriteConflict
                    out[i] = exc
            if temps:
                flush_files([tmp for tmp, _ in temps.values()])
            folders: set[Path] = set()
            for i, (tmp, made) in temps.items():
                path, data, sha = items[i]
                if still is not None and not still(path):
                    out[i] = FileNotFoundError(errno.ENOENT, "renamed meanwhile", str(path))
                    continue
                try:
                    out[i] = self._swap_in(
                        path, tmp, made, data, sha, durable=False, keep=displaced
                    )
                except (WriteConflict, OSError) as exc:  # FileBusy is a WriteConflict
                    out[i] = exc
                if out[i] == (True, None):
                    folders.add(path.parent)
            for folder in sorted(folders):
                fsync_dir(folder)
        finally:
            kept = set(displaced or ())
            for tmp, _ in temps.values():
                if tmp not in kept:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp)
        return [r if r is not None else (False, None) for r in out]

    def _write_temp(self, path: Path, data: bytes, durable: bool) -> tuple[Path, os.stat_result]:
        """``data`` in a new temp file beside ``path`` (fsynced when ``durable``), and
        the temp file's stat once written (its inode, size, mtime, mode)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / temp_name(path.name)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError as exc:
            raise _naming(exc, path, tmp) from None
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                if durable:
                    os.fsync(fh.fileno())
                made = os.fstat(fh.fileno())
        except OSError as exc:  # the disk full...
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise _naming(exc, path, tmp) from None
        return tmp, made

    def _swap_in(
        self,
        path: Path,
        tmp: Path,
        made: os.stat_result,
        data: bytes,
        expected_sha: str | None,
        durable: bool,
        keep: list[Path] | None = None,
    ) -> tuple[bool, bytes | None]:
        """Put the written temp file ``tmp`` (holding ``data``; ``made``: its stat once
        written) at ``path`` if it still has ``expected_sha`` (None: create, never
        overwrite); ``tmp`` is gone after (or, with ``keep``, a displaced version at
        ``tmp`` is put there to delete). The folder is fsynced when ``durable`` (a batch
        fsyncs it once, after)."""
        displaced = done = False
        try:
            if expected_sha is None:
                self._expect(path, made, data, None)
                try:
                    place_new(tmp, path)  # fails if the name exists: never overwrites
                except FileExistsError:
                    return False, None
                with contextlib.suppress(OSError):  # (else the finally's, below)
                    os.unlink(tmp)  # before ``_remember``: the unlink changes the ctime
                if durable:
                    fsync_dir(path.parent)
                done = self._remember(path)
                return True, None
            try:
                mode = os.stat(path).st_mode & 0o7777
                if not mode & 0o222:  # chmod a-w: the person's "leave it as it is", root too
                    raise PermissionError(
                        errno.EACCES, "read-only: it has no write permission", str(path)
                    )
                if made.st_mode & 0o7777 != mode:  # (a chmod is one more event to watch)
                    os.chmod(tmp, mode)
                self.refuse_if_busy(path)  # again, now that the slow part is done
                current = path.read_bytes()
            except FileNotFoundError:
                return False, None
            if sha256_bytes(current) != expected_sha:
                return False, read_settled(path)
            self._expect(path, made, data, expected_sha)
            if not exchange(tmp, path):
                os.replace(tmp, path)
                if durable:
                    fsync_dir(path.parent)
                done = self._remember(path)
                return True, None
            # ``tmp`` now holds the version we displaced: did anyone keep writing to it?
            if open_for_writing(tmp):
                put_back(tmp, path, data)
                raise FileBusy(f"{path.name}: it was opened for writing as memvault saved it")
            if sha256_bytes(tmp.read_bytes()) != expected_sha:
                put_back(tmp, path, data)
                return False, read_settled(path)
            if durable:
                fsync_dir(path.parent)
            done = self._remember(path)
            displaced = keep is not None
            return True, None
        except FileNotFoundError:
            return False, None
        except OSError as exc:  # the disk full, a folder made read-only...
            raise _naming(exc, path, tmp) from None
        finally:
            if not done:
                self._forget(path)
            if displaced and keep is not None:
                keep.append(tmp)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)

    def refuse_if_busy(self, path: Path) -> None:
        reason = self.busy(path)
        if reason is not None:
            raise FileBusy(f"{path.name}: {reason}")

    def _expect(self, path: Path, made: os.stat_result, data: bytes, before: str | None) -> None:
        """Our write at ``path`` is about to be put in place: the file written (``made``:
        its stat once written) holding ``data``, over the version whose sha256 is
        ``before``. Remembered as under way (no ctime yet) from now on."""
        w = Written(made.st_ino, made.st_size, made.st_mtime_ns, None, _digest(data), before)
        key = str(path)
        with self._ours_lock:
            self._ours.pop(key, None)  # (to the end: the newest)
            while len(self._ours) >= _OURS_KEPT:
                self._ours.pop(next(iter(self._ours)))  # the oldest first
            self._ours[key] = w

    def _remember(self, path: Path) -> bool:
        """Our swap at ``path`` is done: its identity now (the ctime the swap gave it) is
        remembered, when the file there is still the one we wrote; if not, a save came
        in between (in place, into the file we had just put there): not ours. Whether
        it was remembered."""
        key = str(path)
        with self._ours_lock:
            found = self._written_there(key)
            if found is None or not found[0].made(found[1]):
                return False
            self._ours[key] = dataclasses.replace(found[0], ctime_ns=found[1].st_ctime_ns)
            return True

    def _forget(self, path: Path) -> None:
        """What we remembered at ``path`` no longer says what is there (the swap failed,
        or was overtaken)."""
        with self._ours_lock:
            self._ours.pop(str(path), None)


class Unlinker:
    """Deletes files in a thread of its own, one batch at a time, while its owner goes
    on (``unlink_all``); ``join`` waits until every batch given is deleted."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None

    def unlink_all(self, paths: list[Path]) -> None:
        self.join()  # one batch at a time: the device does one thing anyway
        if paths:
            self._thread = threading.Thread(target=_unlink_each, args=(paths,), daemon=False)
            self._thread.start()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def _unlink_each(paths: list[Path]) -> None:
    for p in paths:
        with contextlib.suppress(OSError):  # gone already; at worst a temp file stays
            os.unlink(p)  # (deleted at the next start: VaultFS.remove_temp_files)


def _naming(exc: OSError, path: Path, tmp: Path) -> OSError:
    """``exc`` naming the file a person knows: a failed write to our temp file (the disk
    full: ``fh.write`` names no file at all) is a failed write to ``path``."""
    if exc.filename not in (None, str(tmp)):
        return exc
    return OSError(exc.errno, exc.strerror, str(path))  # (of the errno's subclass)


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def temp_name(name: str) -> str:
    """The name of a write's temp file beside the note ``name``: hidden, marked, and
    never longer than a name may be (255 bytes), however long the note's own name."""
    room = _NAME_MAX - 1 - len(TEMP_MARK) - 8
    head = name.encode("utf-8", "surrogateescape")[:room].decode("utf-8", "ignore")
    return f".{head}{TEMP_MARK}{secrets.token_hex(4)}"


def place_new(tmp: Path, path: Path) -> None:
    """Give the written temp file ``tmp`` the name ``path`` too, never over a file there
    (FileExistsError): a hard link (``tmp`` is left to unlink); on a disk without hard
    links (exFAT, FAT32: ``link`` is EPERM), the name is claimed by an exclusive create
    and ``tmp`` renamed onto that empty claim at once (``tmp`` is then gone)."""
    try:
        os.link(tmp, path)
        return
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    os.replace(tmp, path)


def put_back(tmp: Path, path: Path, ours: bytes) -> None:
    """A person's version was displaced by our swap: give it its place back.

    ``tmp`` holds that version, ``path`` ours. Swap again; if what comes back
    is not ours, a still newer save came in meanwhile: it goes back too
    (the older one is then superseded, as the person's own editor would have).
    """
    for _ in range(100):
        exchange(tmp, path)
        if tmp.read_bytes() == ours:
            return
    raise WriteConflict(f"{path.name} keeps changing; memvault stopped touching it")


def read_settled(path: Path, tries: int = 100) -> bytes:
    """Read a file once it has stopped changing.

    An editor saving in place truncates then writes; reading in between would
    see half a file. Wait until the file is unchanged across the read and was
    last modified more than ``SETTLE_NS`` ago (at most ~1 s, then take it). A
    modification time well in the future (the clock stepped back, a file synced from
    a machine whose clock runs ahead) tells nothing about a save in progress (``busy``
    does not count it either): unchanged across the read is enough. Waiting for it
    cost a second per file: a relink of 300 such notes, five minutes. (Within
    ``SKEW_NS`` ahead, a network filesystem's clock may just run fast: waited for.)
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
        age = time.time_ns() - after.st_mtime_ns
        if same and len(data) == after.st_size and (age > SETTLE_NS or age < -SKEW_NS):
            return data
        time.sleep(0.01)
    return data


_RENAMEAT2 = libc.function("renameat2", "int", "char_p", "int", "char_p", "uint")
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2). False where unsupported."""
    global _RENAMEAT2
    if _RENAMEAT2 is None:
        return False
    rc = _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = libc.last_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        if err == errno.ENOSYS:
            _RENAMEAT2 = None  # this kernel cannot: use the fallback from now on
        # (a file system that cannot, exFAT: EINVAL for its files only, never a process's
        # every vault: a vault on ext4 beside it kept losing the exchange's protection)
        return False
    if err == errno.ENOENT:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(b))
    raise OSError(err, os.strerror(err), str(b))


_SYNCFS = libc.function("syncfs", "int")


def flush_files(paths: Sequence[Path]) -> None:
    """Every one of ``paths`` written through to disk: one ``syncfs`` of their
    filesystem (one journal commit) where Linux has it, else an fsync of each."""
    if _SYNCFS is not None:
        by_dev: dict[int, Path] = {}
        for p in paths:
            with contextlib.suppress(OSError):
                by_dev.setdefault(os.stat(p).st_dev, p)
        local = _local_devices()
        if all(_device(dev) in local and _syncfs(p) for dev, p in by_dev.items()):
            return
    for p in paths:
        with contextlib.suppress(FileNotFoundError):
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


# syncfs writes a filesystem through only where the kernel's own filesystem does it:
# a FUSE one (sshfs, gocryptfs, rclone, Cryptomator) may return 0 having flushed
# nothing, and a network one answers for the server. Elsewhere each file is fsynced.
# overlay (a container's root) syncs its upper filesystem (the kernel's ovl_sync_fs).
_LOCAL_FS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "tmpfs", "overlay"})


def _device(dev: int) -> str:
    return f"{os.major(dev)}:{os.minor(dev)}"


def syncfs_trusted(path: Path) -> bool:
    """Whether a batch of files under ``path`` is made durable by one ``syncfs``
    (a local filesystem of a known kind, on Linux) rather than an fsync a file."""
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return False
    return _SYNCFS is not None and _device(dev) in _local_devices()


def _local_devices() -> frozenset[str]:
    """The ``major:minor`` of every mounted filesystem of a kind in ``_LOCAL_FS``
    (``/proc/self/mountinfo``; none where it cannot be read)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return frozenset()
    out: set[str] = set()
    for line in lines:
        fields = line.split()
        if "-" in fields:
            kind = fields[fields.index("-") + 1] if fields.index("-") + 1 < len(fields) else ""
            if kind in _LOCAL_FS:
                out.add(fields[2])
    return frozenset(out)


def _syncfs(path: Path) -> bool:
    assert _SYNCFS is not None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return _SYNCFS(fd) == 0
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
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
    "SETTLE_NS",
    "TEMP_MARK",
    "Swapper",
    "Written",
    "exchange",
    "flush_files",
    "place_new",
    "put_back",
    "read_settled",
]
