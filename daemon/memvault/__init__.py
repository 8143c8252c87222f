"""memvault: an agent's long-term memory as a markdown vault Obsidian opens.

    from memvault import Vault
    with Vault.open("~/memory") as vault:
        vault.sync()
        ctx = vault.context("What did we decide about the database schema?", budget=2000)
        print(ctx.text)

Names are loaded on first use (PEP 562), so ``import memvault`` and
``memvault --help`` stay fast and never import numpy, hnswlib or torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_WHERE = {
    "Vault": "memvault.api",
    "Context": "memvault.core.report",
    "Hit": "memvault.core.report",
    "LinkProblem": "memvault.core.report",
    "Source": "memvault.core.report",
    "SyncReport": "memvault.core.report",
    "NoteText": "memvault.core.report",
    "WriteResult": "memvault.core.report",
    **{
        name: "memvault.errors"
        for name in (
            "ConfigError", "DaemonError", "IndexCorrupt", "LockHeld", "MemoryFileError",
            "MemvaultError", "ModelError", "NoteExists", "NoteNotFound", "UnsafePath",
            "VaultNotFound", "WriteConflict",
        )
    },
}

__all__ = sorted([*_WHERE, "__version__"])


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'memvault' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from memvault.api import Vault
    from memvault.core.report import Context, Hit, LinkProblem, Source, SyncReport
    from memvault.core.report import NoteText
    from memvault.core.report import WriteResult
    from memvault.errors import (
        ConfigError,
        DaemonError,
        IndexCorrupt,
        LockHeld,
        MemoryFileError,
        MemvaultError,
        ModelError,
        NoteExists,
        NoteNotFound,
        UnsafePath,
        VaultNotFound,
        WriteConflict,
    )
