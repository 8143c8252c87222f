"""One exception tree for memvault.

    MemvaultError                 base: every error memvault raises on purpose
    ├── ConfigError               .memvault/config.toml or a flag is invalid
    ├── VaultNotFound             no vault at or above the given folder
    │   ├── NotIndexed            the vault was never indexed (search, context need it)
    │   └── VaultInside           init/up in a folder of a vault (a refusal: exit 5)
    ├── UnsafePath                a path leaves the vault (.., absolute, NUL, symlink, drive)
    ├── NoteNotFound              a note or heading that does not exist (or a file there
    │   │                         that is not a text note: binary, not UTF-8; a folder)
    │   └── AmbiguousNote         a name (no path) several notes have: its .candidates (exit 2)
    ├── FolderNotFound            a search's folder filter names no folder of the vault
    │                             (or one memvault leaves out: vault.ignore, a dot-folder)
    ├── NoteExists                a write would overwrite an existing note
    ├── WriteConflict             compare-and-swap kept failing: the file keeps changing
    │   └── FileBusy              another program has the file open for writing (or just saved it)
    ├── MemoryFileError           MEMORY.md cannot be parsed (e.g. an unclosed section)
    ├── ModelError                the embedding model cannot be loaded
    │   └── ModelAway             its process failed for the moment (stopped, silent,
    │                             killed): started again later; a search answers by keywords
    ├── IndexCorrupt              the index files are damaged (rebuilt, never trusted)
    │   └── IndexTooNew           the team's index was written by a newer memvault (upgrade)
    ├── StorageError              the index files cannot be opened: the disk is full, read-only
    │   │                         or failing (nothing deleted; it works again once it can)
    │   └── IndexUnavailable      the index's PostgreSQL cannot be reached or refused us
    ├── LockHeld                  another process holds the vault's writer lock
    ├── MemoryToolError           a memory-tool command refused (its text is the tool's answer)
    ├── ServiceExists             `daemon install`: the service file is another vault's
    └── DaemonError               the daemon cannot be reached or answered an error

    BadRequest (a ValueError)     a request's value refused: an empty query, a budget
                                  under 1 token, a title with no usable characters

A request's bad value is a ``ValueError``, as Python's own: the adapters tell the caller
(CLI exit 2, HTTP 400, MCP ``BadArgument``). The library's own checks raise it as
``BadRequest``, so a ``ValueError`` of a defect (a vector of the wrong shape, a number
out of a function's domain) is told apart: a vault kept between an adapter's calls
(door.py) is kept after a refused request, let go after anything else.

CLI, HTTP and MCP adapters map these to exit codes, 4xx responses and tool
errors — the CLI's exit code and HTTP's status both from ``OUTCOMES``, one table;
anything else escaping is a bug.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class MemvaultError(Exception):
    """Base of every error memvault raises on purpose."""


class ConfigError(MemvaultError):
    """The configuration file or a flag holds an invalid value."""


class VaultNotFound(MemvaultError):
    """No vault was found at or above the given folder."""


class NotIndexed(VaultNotFound):
    """The vault has no index yet, and the command only reads: it writes nothing to
    build one (``memvault sync`` or ``memvault up`` does)."""


class VaultInside(VaultNotFound):
    """``init``/``up``/``create=True`` in a folder of a vault, on a file, or on the file
    system's root or the home folder itself: refused."""


class UnsafePath(MemvaultError):
    """A path that would leave the vault, or is not a valid note path."""


class NoteNotFound(MemvaultError):
    """The requested note (or heading, or line range) does not exist."""


class AmbiguousNote(NoteNotFound):
    """A name given without its folder (``get Same``) that several notes have; which one
    is meant is not guessed. ``candidates``: their paths (as ``links check`` names them).
    No one note is found (a NoteNotFound to Python), but the adapters say it as a bad
    argument: exit 2, HTTP 400, with the candidates."""

    def __init__(self, message: str, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.candidates = tuple(candidates)


class FolderNotFound(MemvaultError):
    """A search's folder filter names no folder of the vault (in any case), or a folder
    memvault leaves out of the index (``vault.ignore``, a dot-folder): nothing could
    match, and "no matches" would hide the typo."""


class NoteExists(MemvaultError):
    """Creating a note would overwrite an existing one.

    ``updatable``: asking again with ``update`` would change it (``memvault add``); each
    adapter says how in its own words (``--update``, ``update=true``, ``"update": true``).
    """

    def __init__(self, message: str, path: str | None = None, updatable: bool = False) -> None:
        super().__init__(message)
        self.path = path
        self.updatable = updatable


class WriteConflict(MemvaultError):
    """A compare-and-swap write kept losing the race against another writer."""


class FileBusy(WriteConflict):
    """Another program has the file open for writing, or saved it a moment ago; memvault
    does not replace it now (it would write over a save in progress)."""


class MemoryFileError(MemvaultError):
    """MEMORY.md cannot be parsed safely; it is left untouched."""


class ModelError(MemvaultError):
    """The configured embedding model cannot be loaded."""


class ModelAway(ModelError):
    """The model's process failed for the moment (stopped, silent past its time, killed,
    or resting after failing twice: index/child_watch.py); it is started again later,
    and a search meanwhile answers by keywords alone (its hits ``pending``)."""


class IndexCorrupt(MemvaultError):
    """The index files are damaged and must be rebuilt from the vault."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class IndexTooNew(IndexCorrupt):
    """The team's index (PostgreSQL) is of a schema version newer than this memvault's:
    its writer runs a newer memvault. Never rebuilt nor written here: upgrade memvault on
    this machine. ``version``: the index's; ``ours``: this memvault's."""

    def __init__(self, message: str, version: int = 0, ours: int = 0) -> None:
        super().__init__(message)
        self.version = version
        self.ours = ours


class StorageError(MemvaultError):
    """The index files cannot be opened or written for a reason that is not damage: the
    disk is full, read-only or failing. Nothing is deleted or rebuilt (a full disk is not
    a damaged index); memvault works again once the disk does."""


class IndexUnavailable(StorageError):
    """The index's database cannot be reached or refused us (exit 7, as storage is)."""


class LockHeld(MemvaultError):
    """Another process holds the vault's writer lock."""

    def __init__(
        self, message: str, pid: int | None = None, *, daemon_elsewhere: bool = False
    ) -> None:
        super().__init__(message)
        self.pid = pid
        self.daemon_elsewhere = daemon_elsewhere  # a daemon on another host holds it


class MemoryToolError(MemvaultError):
    """A command of Claude's memory tool was refused; the message is the tool's error
    text, worded as the SDK's reference implementation words it. Nothing was changed."""


class ServiceExists(MemvaultError):
    """``daemon install``: the service file there runs another vault (or differs)."""


class DaemonError(MemvaultError):
    """The daemon could not be reached, or it answered with an error."""

    def __init__(
        self, message: str, status: int | None = None, exit_code: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.exit_code = exit_code  # a daemon that exited at start: its own exit code


class BadRequest(ValueError):
    """A request's value refused by the library's checks (the module doc): the caller
    can correct it; nothing was read or changed."""


@contextmanager
def checking_request() -> Iterator[None]:
    """Around the checks of a request's values by pure functions (core raises
    ``ValueError``, knowing no request): what they refuse raised as ``BadRequest``."""
    try:
        yield
    except BadRequest:
        raise
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc


# What each error is to a person at a terminal and to an HTTP client: (CLI exit code,
# HTTP status). An error not named takes its nearest named ancestor's (``outcome``).
OUTCOMES: dict[type[MemvaultError], tuple[int, int]] = {
    MemvaultError: (1, 400),
    ConfigError: (3, 400),
    VaultNotFound: (3, 400),
    VaultInside: (5, 400),  # init in a vault is refused, not "no vault here"
    NoteNotFound: (4, 404),
    FolderNotFound: (4, 404),
    AmbiguousNote: (2, 400),  # the argument names several notes: a usage error
    UnsafePath: (5, 400),
    NoteExists: (5, 409),
    ServiceExists: (5, 409),
    WriteConflict: (1, 409),
    MemoryFileError: (1, 409),
    LockHeld: (6, 400),
    DaemonError: (6, 400),
    ModelError: (7, 503),
    IndexCorrupt: (7, 503),
    StorageError: (7, 503),  # exit 7, not 1: a service manager restarts on it
}


def details(exc: BaseException) -> dict[str, Any]:
    """What an error carries besides its message, for a program: the CLI's ``--json``
    and HTTP's error fields (an ambiguous name's ``candidates``)."""
    return {"candidates": list(exc.candidates)} if isinstance(exc, AmbiguousNote) else {}


def outcome(exc: BaseException) -> tuple[int, int] | None:
    """``exc``'s (exit code, HTTP status) from ``OUTCOMES``; None for a non-memvault error."""
    for kind in type(exc).__mro__:
        found = OUTCOMES.get(kind)
        if found is not None:
            return found
    return None
