"""The async memory tool used as the async client is: ``async with``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from helpers import open_vault, write
from memvault.index.embedder import HashEmbedder
from memvault.integrations.anthropic import AsyncVaultMemoryTool
from memvault.vault.template import init_vault


def test_the_async_tool_opens_in_an_async_with_and_lets_the_vault_go_at_its_end(
    tmp_path: Path,
) -> None:
    """Field test: `async with AsyncVaultMemoryTool("~/memory") as memory:`, as code on
    the async client is written, was a TypeError (no asynchronous context manager: only
    `with` and `aclose()`), so the vault it opened, and its writer lock, were let go only
    by a call an agent's developer had to know of."""
    root = tmp_path / "memory"
    init_vault(root)
    write(root, "people/ana.md", "# Ana\n\nAna leads the data team.\n")

    async def session() -> str:
        async with AsyncVaultMemoryTool(root, embedder=HashEmbedder()) as memory:
            made = await memory.call(
                {"command": "create", "path": "/memories/people/bo.md", "file_text": "# Bo\n"}
            )
            assert memory.vault.daemon is None  # opened here, holding the writer lock
        return str(made)

    assert asyncio.run(session()) == "File created successfully at: /memories/people/bo.md"
    with open_vault(root) as vault:  # the lock was let go at the block's end
        assert "[[people/bo]]" in (vault.root / "MEMORY.md").read_text(encoding="utf-8")
