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
the running daemon when there is one, else to the vault opened in this process and
kept between commands (memvault/door.py), and the vault's guarantees come
with it (docs/AGENTS.md): compare-and-swap writes, MEMORY.md and the index current when
the command returns, links re-targeted on rename, ``view /memories`` bounded. A
refused command raises the SDK's ``ToolError``: the runner sends its text back to
the model with ``is_error``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

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
from memvault.door import VaultDoor
from memvault.errors import MemvaultError

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
    """What both tools are: a vault (``VaultDoor``) behind the SDK's memory tool."""

    def __init__(
        self,
        vault: str | Path | Vault,
        *,
        cache_control: BetaCacheControlEphemeralParam | None = None,
        **options: Any,
    ) -> None:
        # the SDK's tool class is next in the subclass's MRO, and takes cache_control
        super().__init__(cache_control=cache_control)  # type: ignore[call-arg]
        if not isinstance(vault, Vault) and not options.get("create"):
            # now, to the developer: a command's ToolError goes to the model, and the
            # tool runner never shows it (the agent would just have no memory)
            Vault.check_folder(vault)
        self._door = VaultDoor(vault, options)

    def _through_door(self, command: Any) -> str:
        args = _command(command)
        try:
            return self._door.run(  # a view reads without waiting (the door's "peek")
                lambda vault: vault.memory_tool(args),
                "peek" if args.get("command") == "view" else "write",
            )
        except (MemvaultError, ValueError) as exc:
            raise ToolError(str(exc)) from None

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

    ``vault``: the vault's folder (opened for the commands: through the running daemon,
    else in this process, kept between them: memvault/door.py; a folder that
    is no vault raises ``VaultNotFound`` here, unless ``create=True`` makes it one) or an
    open ``Vault`` (left open: yours to close). ``options`` go to ``Vault.open``
    (``embedder=``, ``overrides=``, ``create=``...)."""

    def _run(self, command: Any) -> BetaFunctionToolResultType:
        return self._through_door(command)

    # every command goes to the vault one way (``Vault.memory_tool`` tells them apart)
    view = create = str_replace = insert = delete = rename = _run

    def clear_all_memory(self) -> BetaFunctionToolResultType:
        raise ToolError(NO_CLEAR)


class AsyncVaultMemoryTool(_OnVault, BetaAsyncAbstractMemoryTool):
    """``VaultMemoryTool`` for the async client: each command runs in a worker thread;
    ``async with`` (or ``with``) closes what it opened."""

    async def _run(self, command: Any) -> BetaFunctionToolResultType:
        return await run_sync(self._through_door, command)

    view = create = str_replace = insert = delete = rename = _run

    async def clear_all_memory(self) -> BetaFunctionToolResultType:
        raise ToolError(NO_CLEAR)

    async def aclose(self) -> None:
        await run_sync(self._door.close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        """``async with AsyncVaultMemoryTool(path) as memory:`` (the async client's way):
        the vault it opened is let go at the block's end, in a worker thread."""
        await self.aclose()


__all__ = ["AsyncVaultMemoryTool", "VaultMemoryTool"]
