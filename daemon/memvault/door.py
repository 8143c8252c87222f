"""The vault an adapter's calls go to (``VaultDoor``): given, or a folder opened for them
and kept between them. Claude's memory tool (integrations/anthropic.py) and the MCP
server without a daemon (interfaces/mcp_server.py) both go through it.

A folder is opened for a call as ``Vault.open(path, mode=...)`` opens it: through the
running daemon when there is one, else here, holding the vault's writer lock while a
call runs, and kept open after it for the next, until ``LINGER`` seconds pass without
one (``LINGER_TEAM`` over a team's index in PostgreSQL, whose writer's lock another
machine cannot ask for) or another process finds the lock held (it touches ``lock.wanted``) or waits in
line for it (``Vault.lock_wanted``), then let go within ``LOOK``, or as its call ends;
those waiting take the lock in the order they came (vault/lock_queue.py), so three or
more agents take turns. So an agent's calls (the tool uses of one model turn, and its
next turn, a model's answer later) open the vault once, and another agent's process, a
CLI write or a daemon starting gets its turn between this one's calls, instead of
waiting for the adapter to close. Each call on a vault opened here goes through
``Vault.open``'s choice again once the vault is let go: a daemon started meanwhile
serves the next.

A kept vault answers as one opened for the call would (``Vault.freshen``): a ``"read"``
or ``"query"`` syncs the structure lane first, so a note a person saved since is found
(keywords at once; by meaning after a query embeds it, up to ``backends.QUERY_CATCH_UP``
pending chunks). While a vault is kept, a watcher is held on it (service/door_watch.py:
the daemon's native observer): a call syncs only the paths it saw change since the last
call (the renames as the daemon passes them), after a barrier through the event stream
that makes every change before the call count; everything (each note stat'ed, ~1 s of
CPU at 100,000 notes) only when the watcher cannot vouch: the first kept call (but
not after an open that synced here: the watcher started before the open's sync, which
it vouches from; a read or query's ``_open_watched``, a peek or write's ``_open``),
every daemon.reconcile_seconds, no native events (inotify's limits, a network mount), an
overflow, a folder arrived, its observer died, its barrier late. It is stopped as the
vault is let go (its threads and inotify descriptor with it; a forked child neither uses
nor stops the parent's). A kept vault whose folder was moved, renamed or deleted, or
whose ``.memvault/`` went (``Vault.ground_lost``), or its ``index.db`` (deleted or
replaced: ``Store.replaced``), or whose ``config.toml`` changed
(``Vault.settings_changed``: a person's edit, a ``git pull``), is let go and the call
opens the folder again, synced first (``VaultNotFound`` or ``ConfigError``, said, when
it is no vault or its settings do not load now); one whose call failed other than by
refusing the request (``REFUSALS``) is let go too.

The first write opened here syncs the structure lane once, and a ``"peek"`` at each
open here, so listings and MEMORY.md are true to the files (a read or query syncs at
each open: a view in the agent's next turn, after the vault was let go, lists a note
saved meanwhile). A peek on the
vault kept is freshened as a read while a watcher is held on it (the paths it saw
change; everything when it cannot vouch), so the memory tool's ``view`` lists a note
saved in Obsidian as a fresh vault would; with no watcher it reads the index as it is
(not a full sync at each view). A ``"peek"``
(the memory tool's ``view``, MCP's ``memory_status``) never waits for another process's
lock, nor for another tool's turn in this process: it reads the index as it is (one
this user cannot write too: its writer's open is refused, ``StorageError``).

The tools on one folder in one process share its turn (``_Turn``): one call at a time,
and one vault kept (another tool's open would find this process holding the lock). The
registry of turns holds a folder's only while it is in use or keeps a vault; a forked
child starts with none (the lock file is shared with the parent).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.api import Vault
from memvault.backends import Mode, never_indexed
from memvault.config import VaultConfig
from memvault.errors import (
    BadRequest,
    FolderNotFound,
    LockHeld,
    MemoryToolError,
    MemvaultError,
    NoteExists,
    NoteNotFound,
    StorageError,
    UnsafePath,
    WriteConflict,
)

LINGER = 15.0  # seconds a vault opened here stays open without a call
# ... a team's index in PostgreSQL: its writer's lock there is held as long, and another
# machine's process waiting for it (a daemon starting, a CLI write) cannot ask for it as
# one of this machine asks for the lock file: it waited the 15 s (a review, rev56b)
LINGER_TEAM = 2.0
LOOK = 0.2  # how often a kept vault looks whether another process wants the lock
YIELD = 0.3  # let go for another process: this long before this one opens it again
# A call failing so refused the request, not the vault: the vault is kept for the next
# (any other error, a disk or an index failing, a ValueError of a defect rather than a
# request's value refused, lets it go: the next call opens afresh)
REFUSALS = (
    BadRequest,
    UnsafePath,
    NoteNotFound,
    StorageError,
    FolderNotFound,
    NoteExists,
    WriteConflict,
    MemoryToolError,
)


log = logging.getLogger("memvault")

if TYPE_CHECKING:
    from memvault.service.door_watch import DoorWatch


def _team_index(root: Path, options: dict[str, Any]) -> bool:
    """Whether the vault's index is the team's, in PostgreSQL (its settings as now, with
    the ``env`` and ``overrides`` among the open's ``options``; ones that do not load:
    False, and the open says why)."""
    try:
        config = VaultConfig.load(root, options.get("env"), options.get("overrides"))
        return config.index.store == "postgres"
    except MemvaultError:
        return False


class _Turn:
    """The turn of one folder in this process: ``lock`` (one command at a time) and the
    vault kept for the next (``kept``: its door, it and when it was opened, ``time_ns``)."""

    def __init__(self, key: Path) -> None:
        self.key = key  # its folder, resolved
        self.users = 0  # threads in ``_turn`` for it (under ``_TURNS_LOCK``)
        self.lock = threading.Lock()
        self.kept: tuple[VaultDoor, Vault, int] | None = None
        # the watcher held on the kept vault (service/door_watch.py), while it is kept
        self.watch: tuple[Vault, DoorWatch] | None = None
        self.timer: threading.Timer | None = None
        self.armed = 0  # which arming of the timer is the live one
        self._until = 0.0  # monotonic: let go then

    def let_go(self, door: VaultDoor | None = None) -> None:
        """Close the kept vault (``door``'s only, when given). Under ``lock``."""
        if self.kept is not None and door in (None, self.kept[0]):
            self.close(self.take()[0])

    def close(self, vault: Vault) -> None:
        """Close ``vault``, taken from this turn (or never kept), and stop its watcher.
        Under ``lock``."""
        if self.watch is not None and self.watch[0] is vault:
            self.watch[1].stop()
            self.watch = None
        vault.close()

    def freshen(self, vault: Vault, mode: Mode) -> None:
        """``vault.freshen(mode)``: only the paths its watcher saw change, when the
        watcher vouches for them (service/door_watch.py), else everything. A peek too
        (the memory tool's view: a note saved in Obsidian listed as a fresh vault lists
        it) while a watcher is held (without one: the index as it is, not a full sync
        at each view)."""
        watch = self.watch[1] if self.watch is not None and self.watch[0] is vault else None
        if mode == "peek" and watch is not None and watch.started:
            mode = "read"  # (the vault kept has the lock: a peek waits for no one here)
        if watch is None or mode not in ("read", "query"):
            vault.freshen(mode)
            return
        changes = watch.changes()
        if changes is None:
            watch.full_sync_begins()
            vault.freshen(mode)
        else:
            watch.synced_paths(vault.freshen(mode, *changes))

    def take(self) -> tuple[Vault, int]:
        """The kept vault and when it was opened, no longer kept. Under ``lock``."""
        assert self.kept is not None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        (_, vault, opened), self.kept = self.kept, None
        return vault, opened

    def keep(self, door: VaultDoor, vault: Vault, opened: int) -> None:
        """Keep ``vault`` for ``door``'s next command. Under ``lock``."""
        self.kept = (door, vault, opened)
        team = vault.engine.config.index.store == "postgres"
        if self.watch is None or self.watch[0] is not vault:
            self._watch(vault)
        self._until = time.monotonic() + (LINGER_TEAM if team else LINGER)
        self.armed += 1
        self._arm(self.armed)

    def watched(self, vault: Vault, mode: Mode | None) -> None:
        """``vault``, just opened here for keeping, watched from now, then freshened for a
        ``mode`` call (None: not): everything, the full sync its watcher vouches from (the
        next call syncs only what changed since, not every note again). Failing, it is
        closed (its writer lock let go: the next call tries again) and its watcher stopped."""
        self._watch(vault)
        if mode is None:
            return
        try:
            self.freshen(vault, mode)
        except BaseException:
            self.close(vault)
            raise

    def _watch(self, vault: Vault) -> None:
        """Hold a watcher on ``vault`` while it is kept; one that could not start is held
        too, not started (each call syncs all), so that it is not tried again at each
        call (a walk of every folder up to inotify's limit) until the vault is opened
        again."""
        from memvault.service.door_watch import DoorWatch

        if self.watch is not None:
            self.watch[1].stop()
            self.watch = None
        watch = DoorWatch(vault)
        watch.start()
        self.watch = (vault, watch)

    def _arm(self, armed: int) -> None:
        self.timer = threading.Timer(LOOK, self._look, (armed,))
        self.timer.daemon = True
        self.timer.start()

    def _look(self, armed: int) -> None:
        with self.lock:
            if armed != self.armed or self.kept is None:
                return
            _, vault, opened = self.kept
            if time.monotonic() < self._until and not vault.lock_wanted(opened):
                self._arm(armed)
                return
            self.let_go()
        _forget(self)


_TURNS: dict[Path, _Turn] = {}
_TURNS_LOCK = threading.Lock()
_PARENTS: list[_Turn] = []  # a forked child's: its parent's turns, never touched


@contextmanager
def _turn(root: Path, wait: bool = True) -> Iterator[_Turn | None]:
    """The turn of the folder ``root``, its ``lock`` held (``wait=False``: None when
    another thread has it)."""
    key = root.resolve()
    with _TURNS_LOCK:
        turn = _TURNS.get(key)
        if turn is None:
            turn = _TURNS[key] = _Turn(key)
        turn.users += 1
    try:
        if not turn.lock.acquire(wait):
            yield None
        else:
            try:
                yield turn
            finally:
                turn.lock.release()
    finally:
        with _TURNS_LOCK:
            turn.users -= 1
        _forget(turn)


def _forget(turn: _Turn) -> None:
    """Take ``turn`` out of the registry when no thread is in ``_turn`` for it and it
    keeps no vault (a vault is kept only under its lock, by such a thread)."""
    with _TURNS_LOCK:
        if not turn.users and turn.kept is None and _TURNS.get(turn.key) is turn:
            del _TURNS[turn.key]


def _forget_the_parents_turns() -> None:
    """In a forked child: the vaults kept are the parent's, whose writer lock is an open
    file the child shares (closing one here would let go of the parent's lock, and two
    processes would write), their timers did not come along, and a lock may have been
    held by another thread. The child starts with none; the parent's are kept, unclosed."""
    global _TURNS, _TURNS_LOCK
    for turn in _TURNS.values():
        if turn.watch is not None:
            turn.watch[1].forget_in_child()  # its inotify descriptors' copies
    _PARENTS.extend(_TURNS.values())
    _TURNS, _TURNS_LOCK = {}, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_the_parents_turns)


@atexit.register
def _let_all_go() -> None:
    """The vaults kept at exit closed as ``close`` would (the timers' threads do not
    keep the process alive)."""
    with _TURNS_LOCK:
        turns = list(_TURNS.values())
    for turn in turns:
        with turn.lock:
            turn.let_go()


class VaultDoor:
    """Where an adapter's calls go (the module doc): ``run(op, mode)``. A ``Vault``
    given (or one asked for by ``vault()``) is used as it is, until ``close``;
    ``options`` go to ``Vault.open`` (a ``mode`` among them: every open's)."""

    def __init__(self, vault: str | Path | Vault, options: dict[str, Any]) -> None:
        self._held = vault if isinstance(vault, Vault) else None
        self._given = self._held is not None
        # absolute now: each open finds the folder named here, wherever the process moves
        self._path = None if isinstance(vault, Vault) else Path(vault).expanduser().absolute()
        self._options = options
        self._synced = False
        self._lock = threading.Lock()

    def vault(self) -> Vault:
        """The vault given, or one opened now and held until ``close``."""
        with self._lock:
            if self._held is None:
                assert self._path is not None
                with _turn(self._path) as turn:
                    assert turn is not None
                    turn.let_go()
                    self._held = self._open("write", lets_go=False)  # held until close
            return self._held

    def _open(self, mode: Mode, lets_go: bool = True, turn: _Turn | None = None) -> Vault:
        """The vault for a ``mode`` call: here with the writer lock (synced), or through
        the daemon; a read, query or peek while another process holds the lock: the
        index read as it is. ``lets_go``: kept only until another process asks for the
        lock (a read elsewhere waits for it, ``Vault.open``'s ``lets_go``). ``turn``: the
        vault is for keeping there, watched from before the sync a peek or write opened
        here runs (a peek's at each open, as a read's: a view after the vault was let go
        lists what was saved meanwhile), so the call after it syncs only what changed."""
        assert self._path is not None
        # waiting for another agent's turn is how the door works, not news for the
        # application's stderr (the lock's warning without it)
        options: dict[str, Any] = {"on_wait": log.debug, **self._options, "lets_go": lets_go}
        if mode == "peek":  # it does not wait for another writer's lock
            options = {"wait": 0.0, **options}
        # a peek takes the lock when it is free, kept for the calls after it; not over
        # the team's index in PostgreSQL (a reader machine's status would make the
        # lock and try a writer's open there at each call, refused by the writer's)
        taking = mode == "peek" and not _team_index(self._path, options)
        opening = options.pop("mode", "write" if taking else mode)
        try:
            opened = Vault.open(self._path, mode=opening, **options)
        except (LockHeld, StorageError):  # (an index this user cannot write: a peek reads it)
            if mode != "peek":
                raise
            return Vault.open(self._path, **{**self._options, "mode": "peek"})
        if opened.writes_here:
            ours = opening not in ("read", "query")  # (a read's open synced already)
            syncs = ours and (not self._synced or (mode == "peek" and turn is not None))
            if ours and turn is not None:
                turn.watched(opened, "read" if syncs else None)
            elif syncs:
                try:
                    opened.sync(vectors=False)
                except BaseException:
                    opened.close()  # its writer lock is let go (the next call tries again)
                    raise
            self._synced = True  # here: a daemon's open is no sync of this process's
        return opened

    def _open_watched(self, turn: _Turn, mode: Mode) -> Vault | None:
        """A read or query's vault opened here, the lock free at once, watched from
        before its sync: that sync is the full one the watcher vouches from, so the
        next call syncs only what changed since (not every note again). None, and the
        read's own open is the one (``_open``: it waits for a holder that lets go, or
        reads the index as it is), for anything else: another holder, a daemon, a team's
        index, an index this process cannot write."""
        assert self._path is not None
        if mode not in ("read", "query") or "mode" in self._options:
            return None
        options: dict[str, Any] = {"on_wait": log.debug, **self._options}
        try:
            config = VaultConfig.load(self._path, options.get("env"), options.get("overrides"))
        except MemvaultError:  # (the read's own open says why)
            return None
        # a team's index (its writer's lock is PostgreSQL's), or none made: a read makes none
        if never_indexed(config):
            return None
        try:  # (a write's open does not sync: the watcher first)
            opened = Vault.open(
                self._path, mode="write", **{**options, "wait": 0.0, "lets_go": True}
            )
        except MemvaultError:  # (the read's own open says it again, if it is its error)
            return None
        if not opened.writes_here:  # through a daemon
            opened.close()
            return None
        turn.watched(opened, mode)
        self._synced = True
        return opened

    def _kept(self, turn: _Turn, mode: Mode) -> tuple[Vault, int] | None:
        """This door's vault kept in ``turn`` and when it was opened, ready for a
        ``mode`` call; None when there is none, or it was let go (another process asked
        for it, its ground went)."""
        if turn.kept is None or turn.kept[0] is not self:
            return None
        vault, opened = turn.take()
        if vault.lock_wanted(opened):  # another process asked meanwhile
            turn.close(vault)
            time.sleep(YIELD)  # its next try (every 50 ms) takes the lock
            return None
        # the folder or its lock went, config.toml changed, or index.db was deleted or
        # replaced (its writes would go to a file no one opens): open it again (as each
        # call's own open would: its settings read, or refused with the reason; the
        # index built again from the notes)
        if (
            vault.ground_lost() is not None
            or vault.settings_changed()
            or vault.engine.store.replaced()
        ):
            turn.close(vault)
            self._synced = False  # what the notes are, read again into the new one
            return None
        try:
            turn.freshen(vault, mode)
        except BaseException:
            turn.close(vault)
            raise
        return vault, opened

    def run(self, op: Any, mode: Mode) -> Any:
        """``op(vault)`` on the vault, for a call of ``mode`` (``Vault.open``'s)."""
        viewing = mode == "peek"
        with self._lock:
            if self._held is not None:
                return op(self._held)
            assert self._path is not None
            with _turn(self._path, wait=not viewing) as turn:
                if turn is None:  # another tool here has its turn (its write may wait
                    # for another process's lock): a peek reads the index as it is
                    with Vault.open(self._path, **{**self._options, "mode": "peek"}) as peek:
                        return op(peek)
                kept = self._kept(turn, mode)
                if kept is not None:
                    vault, opened = kept
                else:
                    turn.let_go()  # another tool's, in this process
                    vault = self._open_watched(turn, mode) or self._open(mode, turn=turn)
                    # once it has the lock: this process's own touches of lock.wanted
                    # while it waited are no one else's (those waiting touch it again)
                    opened = time.time_ns()
                keep = False
                try:
                    result = op(vault)
                    keep = True
                    return result
                except REFUSALS:
                    keep = True
                    raise
                finally:
                    # kept: a vault opened here with the lock (through a daemon, opening
                    # costs nothing; a peek is beside another process's writing), unless
                    # another process waits for it already: its turn now, not at a LOOK
                    if keep and vault.writes_here and not vault.lock_wanted(opened):
                        turn.keep(self, vault, opened)
                    else:
                        turn.close(vault)

    def close(self) -> None:
        with self._lock:
            if self._held is not None and not self._given:
                self._held.close()
            if not self._given:
                self._held = None
            if self._path is not None:
                with _turn(self._path) as turn:
                    assert turn is not None
                    turn.let_go(self)


__all__ = ["LINGER", "LOOK", "REFUSALS", "VaultDoor"]
