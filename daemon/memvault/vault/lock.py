"""Who may write to a vault: the single-writer lock, and finding a vault's folder.

One writer per vault (DESIGN.md, "Processes"): the process holding an
exclusive ``flock`` on ``.memvault/lock`` — the daemon, or a CLI/MCP process
when no daemon runs. ``lock_holder`` asks the kernel who that is. Processes waiting
for it take it in the order they came (``lock_queue.py``).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path, PurePath, PureWindowsPath

from memvault.config import STATE_DIR
from memvault.vault.lock_queue import LockQueue

LOCK_FILE = "lock"
# How long a writer opened without a daemon (a CLI command, an MCP call, Vault.open)
# waits for another short-lived writer — a parallel `memvault log`, a `sync` — to let
# go of the lock, before it is refused (``LockHeld``). Four parallel `memvault log`
# used to see two of them exit 6 at once. ``MEMVAULT_LOCK_WAIT`` (seconds) changes it.
LOCK_WAIT = 60.0
_POLL = 0.05
# Touched by a process that finds the lock held: a holder keeping the vault between
# calls only for speed (memvault/door.py: the MCP server, Claude's memory tool) lets go
# when it is touched after it kept it (``wanted_since``); the others never look at it.
WANTED_FILE = "lock.wanted"
# The pid of a holder that said, taking the lock, that it lets go when asked (``lets_go``):
# a read finding the lock held waits for such a holder only (backends.LETS_GO), not for
# a sync, a CLI write or an application's open Vault, which never let go when asked.
LETS_GO_FILE = "lock.lets-go"
# The pid of a daemon stopping (``say_stopping``): daemon.json is removed first thing in a
# stop, so that no call goes to it, while it finishes its batch and saves, the lock held.
# ``daemon status`` says it stops (``stopping_daemon``); a process waiting for the lock
# says whom it waits for, and a daemon starting waits for it as for a holder that lets go.
# Removed as it lets go; a killed one's names a pid that no longer holds the lock; the
# next holder removes it as it takes the lock.
STOPPING_FILE = "lock.stopping"

log = logging.getLogger("memvault")


def lock_wait(env: Mapping[str, str] | None = None) -> float:
    """``MEMVAULT_LOCK_WAIT`` when it is a number of seconds (0: never wait), else ``LOCK_WAIT``."""
    text = (os.environ if env is None else env).get("MEMVAULT_LOCK_WAIT", "").strip()
    try:
        value = float(text) if text else LOCK_WAIT
    except ValueError:
        return LOCK_WAIT
    return value if value >= 0 and value == value else LOCK_WAIT


def is_vault(root: Path) -> bool:
    """Whether ``root`` is a vault: a folder holding ``.memvault/``, which only
    ``init``, ``up`` and ``migrate`` create (a clone of a vault's git repository
    brings it along with its config). A ``MEMORY.md`` alone does not make one: any
    agent's memory file would be taken over."""
    return (Path(root) / STATE_DIR).is_dir()


def find_vault(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that is a vault (``is_vault``)."""
    here = Path(start).expanduser().resolve()
    for folder in (here, *here.parents):
        if is_vault(folder):
            return folder
    return None


def misplaced(path: Path) -> str | None:
    """Why ``path`` cannot be a vault because of where it is, naming the vault meant: a
    file (``--vault ~/memory/MEMORY.md``), or a folder below a vault's root. A vault
    there would list the inner MEMORY.md and templates as notes of the outer one, and
    Obsidian does not support a vault inside a vault. None when neither holds."""
    path = Path(path).expanduser()
    try:
        here = path.resolve()
        is_file = here.exists() and not here.is_dir()
    except (OSError, RuntimeError):  # a name too long, a symlink loop: the caller says it
        return None
    outer = find_vault(here.parent) if here.parent != here and not is_vault(here) else None
    if is_file:
        if outer is not None:
            return f"{path} is a file: the vault is the folder holding it, {outer}"
        return f"{path} is a file, not a folder: a vault is a folder"
    if outer is not None:
        return (
            f"{path} is inside the vault {outer}: use that vault (a vault inside a vault "
            "would list its MEMORY.md and templates as notes of the outer one, and "
            "Obsidian does not support it)"
        )
    return None


def too_wide(path: Path) -> str | None:
    """Why ``path`` is too wide to be made a vault: the file system's root (a drive's,
    ``C:\\``), the home folder itself (``memvault init ~/``, a slip for ``~/memory``), or a
    folder of such (``/home``, ``/mnt/c``: ``wide_place``) — every note under it would be
    indexed, and MEMORY.md, templates/ and the note folders laid among the person's
    files. None for a folder that is a vault already (made so before: it keeps
    working) and for any other folder, one inside those included (``/home/ana/notes``)."""
    try:
        here = Path(path).expanduser().resolve()
    except (OSError, RuntimeError):  # a name too long, a symlink loop: the caller says it
        return None
    if is_vault(here):
        return None
    try:
        home: Path | None = Path.home().resolve()
    except (OSError, RuntimeError):  # no home folder to be found
        home = None
    why = _WIDE.get(wide_place(here, home) or "")
    return f"{path} {why}; make a folder for it: memvault init ~/memory" if why else None


_WIDE = {
    "root": "is the root of the file system: a vault there would index every note on the disk",
    "home": (
        "is your home folder: a vault there would index every note under it and lay "
        "MEMORY.md, templates/ and the note folders among your files"
    ),
    "homes": "holds the users' home folders: a vault there would index every note in them",
    "mounts": "is where disks are mounted: a vault there would index every note on them",
    "drive": "is a whole Windows drive (WSL): a vault there would index every note on it",
    "windows home": (
        "is a Windows home folder (WSL): a vault there would index every note under it and "
        "lay MEMORY.md, templates/ and the note folders among its files"
    ),
}


def wide_place(here: PurePath, home: PurePath | None = None) -> str | None:
    """What wide place the resolved folder ``here`` is, by its name alone (pure; by
    ``here``'s own rules, a ``PureWindowsPath``'s too): ``root`` (``/``, ``C:\\``),
    ``home`` (``home`` itself), ``homes`` (``/home``, macOS's ``/Users``, Windows'
    ``C:\\Users``, WSL's ``/mnt/c/Users``, ``/var/home`` and ``/usr/home`` where
    ``/home`` leads on Fedora Silverblue and FreeBSD), ``mounts`` (``/mnt``,
    ``/var/mnt``, ``/media``, ``/Volumes``, ``/run/media`` and a user's folder in the
    last two), ``drive`` (WSL's
    ``/mnt/c``), ``windows home`` (WSL's ``/mnt/c/Users/ana``); else None. Names are
    compared in any case (macOS's disk and Windows' ignore it)."""
    if here == type(here)(here.anchor):
        return "root"
    if home is not None and here == home:
        return "home"
    names = [name.casefold() for name in here.parts[1:]]
    if isinstance(here, PureWindowsPath):
        return "homes" if names == ["users"] else None
    # (a resolved path: Fedora's atomic desktops link /home and /mnt into /var, FreeBSD
    # /home into /usr; named by the link's target, /home was made a vault there)
    if names in (["home"], ["users"], ["var", "home"], ["usr", "home"]):
        return "homes"
    if names in (["mnt"], ["media"], ["volumes"], ["run", "media"], ["var", "mnt"]):
        return "mounts"
    if (len(names) == 2 and names[0] == "media") or (
        len(names) == 3 and names[:2] == ["run", "media"]
    ):
        return "mounts"  # /media/ana: a user's disks (Ubuntu, Fedora)
    if len(names) >= 2 and names[0] == "mnt" and len(names[1]) == 1 and names[1].isalpha():
        rest = names[2:]  # /mnt/c: WSL's view of the Windows drive C:
        if not rest:
            return "drive"
        if rest == ["users"]:
            return "homes"
        if len(rest) == 2 and rest[0] == "users":
            return "windows home"
    return None


class WriterLock:
    """The single-writer lock: an exclusive ``flock`` on ``.memvault/lock``.

    The kernel drops it when the process dies (even on ``kill -9``), so a stale
    lock never blocks a restart. The holder's pid is written into the file so
    the refusal can name it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._lets_go = False  # said so in LETS_GO_FILE while held

    def acquire(
        self,
        wait: float = 0.0,
        *,
        give_up: Callable[[], bool] | None = None,
        on_wait: Callable[[str], None] | None = None,
        lets_go: bool = False,
    ) -> None:
        """Take the lock, or ``LockHeld``. ``wait`` > 0: while another process holds it,
        try again for up to ``wait`` seconds, saying so once (``on_wait``, else a
        warning on the ``memvault`` log: stderr in the CLI) — unless ``give_up()`` says
        there is no point (the holder is a daemon, which serves writes itself; for a
        read, a holder that does not let go when asked: ``holds_and_keeps``). ``lets_go``:
        this holder lets go when another process asks (``LETS_GO_FILE``). This
        process holding it already is refused at once (it would wait for itself). A
        waiter takes its turn after those that came before it, and an opener that does
        not wait finds the lock held while anyone waits (``LockQueue``)."""
        import fcntl

        from memvault.errors import LockHeld
        from memvault.vault.state_dir import ensure_state_dir

        ensure_state_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o644)
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO, a device: no one's lock
            os.close(fd)
            raise OSError(errno.EINVAL, "not a regular file", str(self.path))
        deadline = time.monotonic() + wait
        said = taken = False
        pid: int | None = None
        line = LockQueue(self.path.parent)  # first come, first served (lock_queue.py)
        try:
            while True:
                if line.my_turn():
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        taken = True
                        break
                    except OSError:
                        pass
                pid = self.holder_pid()
                if pid != os.getpid():
                    with contextlib.suppress(OSError):  # a read-only .memvault/: no one told
                        self.path.with_name(WANTED_FILE).touch()
                if (
                    time.monotonic() >= deadline
                    or pid == os.getpid()
                    or (give_up is not None and give_up())
                ):
                    break
                if not said:
                    said = True
                    who = f"process {pid}" if pid else "another process"
                    doing = "is writing to this vault"
                    if pid is not None and self.holder_stopping():
                        who, doing = f"the memvault daemon (pid {pid})", "is stopping"
                    message = (
                        f"waiting for {who}, which {doing}, to finish "
                        f"(up to {wait:g} s; MEMVAULT_LOCK_WAIT changes it)"
                    )
                    (on_wait or log.warning)(message)
                line.join()
                time.sleep(_POLL)
                line.beat()
        finally:
            line.leave()
        if not taken:
            os.close(fd)
            if (
                pid == os.getpid()
            ):  # a Vault opened before and not closed (a notebook cell run twice)
                raise LockHeld(
                    f"this process (pid {pid}) is already writing to this vault: a Vault "
                    f"opened and not closed yet (lock {self.path}); use that Vault, or "
                    "close() it first",
                    pid,
                ) from None
            who = f"process {pid}" if pid else "another process"
            took = time.monotonic() - deadline + wait  # less when it gave up sooner
            waited = f" (waited {wait if took >= wait else round(took, 1):g} s)" if said else ""
            raise LockHeld(
                f"{who} is already writing to this vault{waited} (lock {self.path}); "
                "stop it or use it (the CLI talks to a running daemon)",
                pid,
            ) from None
        self._fd = fd
        # said before the pid names this holder (``holds_and_keeps``): a read looking
        # between the two would take it for one that does not let go (nor a killed
        # predecessor's pid left in the file named meanwhile)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        if lets_go:  # unsaid (a read-only .memvault/): a read does not wait for it
            with contextlib.suppress(OSError):
                self.path.with_name(LETS_GO_FILE).write_text(f"{os.getpid()}\n", "ascii")
                self._lets_go = True
        # the pid is only there to name the holder: a full disk must not refuse the lock
        try:
            os.write(fd, f"{os.getpid()}\n".encode())
            os.fsync(fd)
        except OSError:  # no room for it: named by the file's time, which takes none
            with contextlib.suppress(OSError):
                os.utime(fd, ns=(-os.getpid() * 10**9,) * 2)
        with contextlib.suppress(OSError):  # a stopping holder's word: it has let go
            self.path.with_name(STOPPING_FILE).unlink(missing_ok=True)

    def holder_lets_go(self) -> bool:
        """Whether the process holding the lock said it lets go when asked (``lets_go``);
        the file another holder left (killed) names another pid."""
        said = _pid_in(self.path.with_name(LETS_GO_FILE))  # (first: said before named)
        pid = self.holder_pid()
        return pid is not None and said == pid

    def holds_and_keeps(self) -> bool:
        """Whether a holder that does not let go when asked is named in the lock file: a
        read gives up on it at once. Not a holder that said it lets go (``lets_go``),
        nor none named: the lock let go since this process tried it (a holder letting go
        empties the lock file first, then unsays ``LETS_GO_FILE``, then lets go; one
        taking it says ``LETS_GO_FILE`` before naming itself). A holder with no room to
        write its pid (a full disk) is named by the lock file's time (``named_pid``). A
        read that took the empty lock file for a holder that keeps gave up with the lock
        free, and answered without the notes saved since its holder's last sync. The
        holder is named on both sides of its word: one taking the lock between a look at
        ``LETS_GO_FILE`` (not said yet) and one at the lock file (named since) was taken
        for one that keeps (a few looks in 100,000 beside a holder taking and letting go
        in a loop: bench/lock_look_race.py)."""
        pid = self.holder_pid()
        if pid is None:
            return False
        said = _pid_in(self.path.with_name(LETS_GO_FILE))
        return said != pid and self.holder_pid() == pid

    def holder_stopping(self) -> bool:
        """Whether the process holding the lock is a daemon that said it stops
        (``say_stopping``), as the lock file names the holder."""
        pid = self.holder_pid()
        return pid is not None and _pid_in(self.path.with_name(STOPPING_FILE)) == pid

    def wanted_since(self, since_ns: int) -> bool:
        """Whether another process waits for the lock (in line: lock_queue.py), or found
        it held after ``since_ns`` (``time_ns``; a process that does not wait)."""
        if LockQueue(self.path.parent).waiting():
            return True
        try:
            return self.path.with_name(WANTED_FILE).stat().st_mtime_ns > since_ns
        except OSError:
            return False

    def holder_pid(self) -> int | None:
        """The pid the lock file names (``named_pid``): its holder's, a predecessor's
        killed before it let go, or None (no holder named: none, or one letting go)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            st = os.fstat(fd)  # (the time of the file read, not of one put there since)
            if not stat.S_ISREG(st.st_mode):
                return None
            return named_pid(os.read(fd, 64), st.st_mtime_ns)
        except OSError:
            return None
        finally:
            os.close(fd)

    def release(self) -> None:
        if self._fd is None:
            return
        import fcntl

        # the pid first (``holds_and_keeps``): a read looking while this one lets go sees
        # no holder named, and tries again, never a holder that no longer says it lets go
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        if self._lets_go:  # while still held: never the next holder's word
            self._lets_go = False
            with contextlib.suppress(OSError):
                self.path.with_name(LETS_GO_FILE).unlink()
        stopping = self.path.with_name(STOPPING_FILE)
        if _pid_in(stopping) == os.getpid():  # (the same: while still held)
            with contextlib.suppress(OSError):
                stopping.unlink()
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def intact(self) -> bool:
        """Whether the lock file held is still the one at ``path``. When ``.memvault/``
        is deleted (or the file replaced), the lock goes with it: the next process takes
        a new one at the same path, and two writers would run at once."""
        if self._fd is None:
            return False
        try:
            held, there = os.fstat(self._fd), os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError:  # cannot tell now (a network mount's hiccup)
            return True
        return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


def say_stopping(state_dir: Path) -> None:
    """Said by the daemon holding the lock as it stops (``STOPPING_FILE``); unsaid when
    ``.memvault/`` cannot be written (then it is not told apart from a writer)."""
    with contextlib.suppress(OSError):
        (Path(state_dir) / STOPPING_FILE).write_text(f"{os.getpid()}\n", encoding="ascii")


def stopping_daemon(root: Path) -> int | None:
    """The pid of the daemon that holds the vault's writer lock while it stops (it said
    so: ``say_stopping``), by the kernel's word (``lock_holder``); else None."""
    said = _pid_in(Path(root) / STATE_DIR / STOPPING_FILE)
    return said if said is not None and lock_holder(root) == said else None


def named_pid(text: bytes, mtime_ns: int) -> int | None:
    """The pid a lock file holding ``text``, last modified at ``mtime_ns``, names: the
    number it holds; empty, the number its time was set to before 1970 (``-pid`` s), by
    a holder with no room to write its pid (a full disk: a time takes no block; any
    write, the next holder's emptying included, puts the time back to now); else None.
    Unnamed, a holder was waited for as for one that lets go: every read beside it
    waited ``LETS_GO`` (2 s)."""
    body = text.strip()
    if body:
        return int(body) if body.isdigit() else None
    seconds, rest = divmod(mtime_ns, 10**9)
    return -seconds if seconds < 0 and rest == 0 else None


def _pid_in(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
        return int(text) if text.isdigit() else None
    except (OSError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs (it may belong to another user; a zombie child of ours is
    reaped and counts as gone)."""
    with contextlib.suppress(ChildProcessError, OSError, OverflowError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, OverflowError):
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def lock_holder(root: Path) -> int | None:
    """The pid holding the vault's writer lock, or None when nobody holds it.

    Linux: from /proc/locks (the kernel's word, immune to a stale pid in the
    lock file after kill -9 and to pid reuse). Elsewhere: the pid the lock file
    names, if that process is alive.
    """
    lock = Path(root) / STATE_DIR / LOCK_FILE
    try:
        st = os.stat(lock)
        if not stat.S_ISREG(st.st_mode):  # a FIFO's read would block forever (a field test)
            return None
        named = named_pid(lock.read_bytes(), st.st_mtime_ns)
    except OSError:
        return None
    try:
        table = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return named if named is not None and pid_alive(named) else None
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():  # "1: FLOCK  ADVISORY  WRITE 4242 fe:00:2147128 0 EOF"
        parts = line.split()
        if parts[1:4] == ["FLOCK", "ADVISORY", "WRITE"] and parts[5:6] == [key]:
            return int(parts[4]) if parts[4].isdigit() else None
    return None


@contextlib.contextmanager
def upgrade_guard(state_dir: Path) -> Iterator[None]:
    """Held by a reader (an open without the writer lock) while it upgrades an older
    index: it takes the writer lock for the upgrade, or refuses. The holder may be a
    memvault of the older version (a daemon started before the upgrade) whose writes,
    its old SQL on the new shape, would corrupt the index (schema 6's keyword table)."""
    from memvault.errors import LockHeld

    lock = WriterLock(state_dir / "lock")
    try:
        lock.acquire(0.0)
    except LockHeld as exc:
        who = f"process {exc.pid}" if exc.pid else "another process"
        raise LockHeld(
            "this vault's index was made by an older memvault and must be upgraded by "
            f"a writer; {who} is writing to it now (likely a memvault daemon started "
            "before the upgrade: restart it, e.g. `memvault daemon stop` then `memvault "
            "up`, and it upgrades the index); nothing was changed",
            exc.pid,
        ) from None
    except OSError:  # no lock file can be made (a read-only disk): no writer either
        yield
        return
    try:
        yield
    finally:
        lock.release()


__all__ = [
    "LOCK_FILE",
    "LOCK_WAIT",
    "STOPPING_FILE",
    "WANTED_FILE",
    "WriterLock",
    "find_vault",
    "is_vault",
    "lock_holder",
    "lock_wait",
    "named_pid",
    "pid_alive",
    "say_stopping",
    "stopping_daemon",
    "too_wide",
    "upgrade_guard",
    "wide_place",
]
