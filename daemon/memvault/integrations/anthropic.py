"""Claude's memory tool, kept by a vault: ``VaultMemoryTool`` / ``AsyncVaultMemoryTool``.

    import anthropic
    from memvault.integrations.anthropic import VaultMemoryTool

    client = anthropic.Anthropic()
    with VaultMemoryTool("~/memory") as memory:
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-4-5", max_tokens=2048, tools=[memory],
            messages=[{"role": "user", "content": "Remember that Ana leads the data team."}],
        )
        for message in runner: ...

Subclasses of the SDK's ``BetaAbstractMemoryTool`` / ``BetaAsyncAbstractMemoryTool``
(``pip install "memvault[anthropic]"``; ``anthropic`` is imported here only).
``/memories`` is the vault's root. Each command is ``Vault.memory_tool``: it goes to
the running daemon when there is one, else to the vault opened in this process for
that command (its writer lock held while it runs), and the vault's guarantees come with it
(docs/AGENTS.md): compare-and-swap writes, MEMORY.md and the index current when
the command returns, links re-targeted on rename, ``view /memories`` bounded. A
refused command raises the SDK's ``ToolError``: the runner sends its text back to
the model with ``is_error``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from anthropic.lib.tools import (
    BetaAbstractMemoryTool,
    BetaAsyncAbstractMemoryTool,
    BetaFunctionToolResultType,
    ToolError,
)
from anthropic.types.beta import BetaCacheControlEphemeralParam
from anyio.to_thread import run_sync

from memvault.api import Vault
from memvault.core.closing import Closes
from memvault.errors import LockHeld, MemvaultError

_FIELDS = (
    "command",
    "path",
    "view_range",
    "file_text",
    "old_str",
    "new_str",
    "insert_line",
    "insert_text",
    "old_path",
    "new_path",
)


LINGER = 2.0  # seconds a vault opened here for a command stays open for the next one


class _Turn:
    """The turns of the tools on one folder in this process: one command at a time (this
    process holds the folder's writer lock while one runs), and the vault the last one
    opened, kept ``LINGER`` seconds for the next (``kept``: its door, it, and when it was
    opened), then let go. Two tools on one folder would otherwise find this process holding
    the lock."""

    def __init__(self, key: Path) -> None:
        self.key = key  # its folder, resolved
        self.users = 0  # threads in ``_turn`` for it (under ``_TURNS_LOCK``)
        self.lock = threading.Lock()
        self.kept: tuple[_VaultDoor, Vault, float] | None = None
        self.timer: threading.Timer | None = None
        self.armed = 0  # which arming of the timer is the live one

    def let_go(self, door: _VaultDoor | None = None) -> None:
        """Close the kept vault (``door``'s only, when given). Under ``lock``."""
        if self.kept is not None and door in (None, self.kept[0]):
            self.take()[0].close()

    def take(self) -> tuple[Vault, float]:
        """The kept vault and when it was opened, no longer kept (its timer stopped).
        Under ``lock``."""
        assert self.kept is not None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        (_, vault, opened), self.kept = self.kept, None
        return vault, opened

    def keep(self, door: _VaultDoor, vault: Vault, opened: float) -> None:
        """Keep ``vault`` for ``door``'s next command, ``LINGER`` seconds. Under ``lock``."""
        self.kept = (door, vault, opened)
        self.armed += 1
        self.timer = threading.Timer(LINGER, self._expire, (self.armed,))
        self.timer.daemon = True
        self.timer.start()

    def _expire(self, armed: int) -> None:
        with self.lock:
            if armed == self.armed:
                self.let_go()
        _forget(self)


_TURNS: dict[Path, _Turn] = {}
_TURNS_LOCK = threading.Lock()
_PARENTS: list[_Turn] = []  # a forked child's: its parent's turns, never touched


@contextmanager
def _turn(root: Path, wait: bool = True) -> Iterator[_Turn | None]:
    """The turn of the folder ``root``, its ``lock`` held (``wait=False``: None when
    another thread has it). The registry holds a turn only while a thread is in here for
    it or it keeps a vault (a process going through many folders does not keep one for
    each)."""
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
    keeps no vault (it is kept only under its lock, by such a thread)."""
    with _TURNS_LOCK:
        if not turn.users and turn.kept is None and _TURNS.get(turn.key) is turn:
            del _TURNS[turn.key]


def _forget_the_parents_turns() -> None:
    """In a forked child: the vaults kept are the parent's, whose writer lock is an open
    file the child shares (closing one here would let go of the parent's lock, and two
    processes would write), their timers did not come along, and a lock may have been
    held by another thread. The child starts with none; the parent's are kept, unclosed."""
    global _TURNS, _TURNS_LOCK
    _PARENTS.extend(_TURNS.values())
    _TURNS, _TURNS_LOCK = {}, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_the_parents_turns)


def _served(vault: Vault) -> bool:
    """Whether a vault kept through a daemon still has it (it may have stopped since:
    ``memvault down``); a vault held here always is."""
    client = vault.daemon
    if client is None:
        return True
    now = client.running(vault.root)  # daemon.json, its pid alive and holding the lock
    return now is not None and now.pid == client.pid


class _VaultDoor:
    """The vault the commands go to. A ``Vault`` given (or one asked for by
    ``tool.vault``) is used as it is, until ``close``. A folder is opened for the
    commands, as the MCP server opens it for each call: through the daemon when one
    serves it, else here, holding the writer lock while a command runs and
    ``LINGER`` seconds after (so the tool uses of one model turn, run back to back,
    open it once), then letting it go, and after the command at hand once it was opened
    ``LINGER`` ago: another agent's process (or a CLI write) gets its turn between this
    one's, even while this one never pauses, instead of waiting for this tool to close.
    The first command opened here syncs the structure lane once, so listings and
    MEMORY.md are true to the files. A ``view`` never waits for another process's lock,
    nor for another tool's turn here: it reads the index as it is (``"peek"``)."""

    def __init__(self, vault: str | Path | Vault, options: dict[str, Any]) -> None:
        self._held = vault if isinstance(vault, Vault) else None
        self._given = self._held is not None
        # absolute now: each open finds the folder named here, wherever the process moves
        self._path = None if isinstance(vault, Vault) else Path(vault).expanduser().absolute()
        self._options = options
        self._synced = False
        self._lock = threading.Lock()

    def vault(self) -> Vault:
        with self._lock:
            if self._held is None:
                assert self._path is not None
                with _turn(self._path) as turn:
                    assert turn is not None
                    turn.let_go()
                    self._held = self._open(writing=True)
            return self._held

    def _open(self, *, writing: bool) -> Vault:
        """The vault here with the writer lock (synced once), or through the daemon; a
        view while another process holds the lock: the index read as it is."""
        assert self._path is not None
        # a view does not wait for another writer's lock: it reads the index as it is
        options = self._options if writing else {"wait": 0.0, **self._options}
        try:  # a mode given to the tool is Vault.open's (as before 736110c)
            opened = Vault.open(self._path, **{"mode": "write", **options})
        except LockHeld:
            if writing:
                raise
            return Vault.open(self._path, **{**self._options, "mode": "peek"})
        if not self._synced and opened.daemon is None and not opened.engine.read_only:
            try:
                opened.sync(vectors=False)
            except BaseException:
                opened.close()  # its writer lock is let go (the next command tries again)
                raise
            self._synced = True  # here: a daemon's open is no sync of this process's
        return opened

    def run(self, command: dict[str, Any]) -> str:
        try:
            with self._lock:
                if self._held is not None:
                    return self._held.memory_tool(command)
                assert self._path is not None
                viewing = command.get("command") == "view"
                with _turn(self._path, wait=not viewing) as turn:
                    if turn is None:  # another tool here has its turn (its write may wait
                        # for another process's lock): a view reads the index as it is
                        options = {**self._options, "mode": "peek"}
                        with Vault.open(self._path, **options) as peek:
                            return peek.memory_tool(command)
                    if turn.kept is not None and turn.kept[0] is self and _served(turn.kept[1]):
                        vault, opened = turn.take()
                    else:
                        turn.let_go()  # another tool's, in this process; a stopped daemon's
                        opened = time.monotonic()
                        vault = self._open(writing=not viewing)
                    try:
                        return vault.memory_tool(command)
                    finally:
                        if vault.daemon is None and (
                            vault.engine.read_only  # a peek beside another process's writing
                            # held LINGER already: another process waiting for the lock
                            # (an agent's, a CLI write) gets it before this one's next
                            or time.monotonic() - opened >= LINGER
                        ):
                            vault.close()
                        else:
                            turn.keep(self, vault, opened)
        except (MemvaultError, ValueError) as exc:
            raise ToolError(str(exc)) from None

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


def _command(command: Any) -> dict[str, Any]:
    """The command as the API sent it (a field the model left out stays out)."""
    out = {}
    for name in _FIELDS:
        value = getattr(command, name, None)
        if value is not None:
            out[name] = value
    return out


NO_CLEAR = "memvault does not clear a vault: delete notes one by one (they go to .trash/)"


class _OnVault(Closes):
    """What both tools are: a vault (``_VaultDoor``) behind the SDK's memory tool."""

    def __init__(
        self,
        vault: str | Path | Vault,
        *,
        cache_control: BetaCacheControlEphemeralParam | None = None,
        **options: Any,
    ) -> None:
        # the SDK's tool class is next in the subclass's MRO, and takes cache_control
        super().__init__(cache_control=cache_control)  # type: ignore[call-arg]
        self._door = _VaultDoor(vault, options)

    @property
    def vault(self) -> Vault:
        """The ``Vault`` given, or one opened now for the caller (through the daemon, or
        here holding the writer lock): the commands then go to it until ``close``."""
        return self._door.vault()

    def close(self) -> None:
        """Close the vault ``tool.vault`` opened, if it did (its writer lock is let go)."""
        self._door.close()


class VaultMemoryTool(_OnVault, BetaAbstractMemoryTool):
    """Claude's memory tool (``memory_20250818``) on a memvault vault.

    ``vault``: the vault's folder (opened on first use: through the running daemon,
    else in this process) or an open ``Vault`` (left open: yours to close). ``options``
    go to ``Vault.open`` (``embedder=``, ``overrides=``...)."""

    def _run(self, command: Any) -> BetaFunctionToolResultType:
        return self._door.run(_command(command))

    # every command goes to the vault one way (``Vault.memory_tool`` tells them apart)
    view = create = str_replace = insert = delete = rename = _run

    def clear_all_memory(self) -> BetaFunctionToolResultType:
        raise ToolError(NO_CLEAR)


class AsyncVaultMemoryTool(_OnVault, BetaAsyncAbstractMemoryTool):
    """``VaultMemoryTool`` for the async client: each command runs in a worker thread."""

    async def _run(self, command: Any) -> BetaFunctionToolResultType:
        return await run_sync(self._door.run, _command(command))

    view = create = str_replace = insert = delete = rename = _run

    async def clear_all_memory(self) -> BetaFunctionToolResultType:
        raise ToolError(NO_CLEAR)

    async def aclose(self) -> None:
        await run_sync(self._door.close)


__all__ = ["AsyncVaultMemoryTool", "VaultMemoryTool"]
