"""The vault a ``VaultMemoryTool`` given a folder opens for its commands and keeps a
moment (``_Turn``): which folder it is, and who else gets the writer lock meanwhile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import eventually, make_vault
from memvault.index.embedder import HashEmbedder
from memvault.integrations import anthropic as integration
from memvault.integrations.anthropic import VaultMemoryTool
from memvault.vault.lock import lock_holder


def _create(tool: VaultMemoryTool, rel: str) -> str:
    text = f"# {rel}\n\nA note.\n"
    return str(tool.call({"command": "create", "path": f"/memories/{rel}", "file_text": text}))


def test_a_folder_given_relative_stays_the_folder_it_named_when_the_process_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integration, "LINGER", 0.05)
    here, there = tmp_path / "here", tmp_path / "there"
    make_vault(here), make_vault(there)
    monkeypatch.chdir(here)
    with VaultMemoryTool("vault", embedder=HashEmbedder()) as tool:
        _create(tool, "first.md")
        eventually(lambda: lock_holder(here / "vault") is None, 10, "the vault let go")
        monkeypatch.chdir(there)  # before: the next command opened there/vault
        _create(tool, "second.md")
    assert (here / "vault" / "second.md").exists()
    assert not (there / "vault" / "second.md").exists()
    assert os.getcwd() == str(there)
