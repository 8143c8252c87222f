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
    "Context": "memvault.core.results",
    "Hit": "memvault.core.results",
    "LinkProblem": "memvault.core.results",
    "Source": "memvault.core.results",
    "SyncReport": "memvault.core.results",
    "NoteText": "memvault.core.results",
    "WriteResult": "memvault.core.results",
    **{
        name: "memvault.errors"
        for name in (
            "ConfigError",
            "DaemonError",
            "FileBusy",
            "IndexCorrupt",
            "LockHeld",
            "MemoryFileError",
            "MemvaultError",
            "ModelError",
            "NoteExists",
            "NoteNotFound",
            "StorageError",
            "UnsafePath",
            "VaultNotFound",
            "WriteConflict",
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
    from memvault.api import Vault as Vault
    from memvault.core.results import (
        Context as Context,
    )
    from memvault.core.results import (
        Hit as Hit,
    )
    from memvault.core.results import (
        LinkProblem as LinkProblem,
    )
    from memvault.core.results import (
        NoteText as NoteText,
    )
    from memvault.core.results import (
        Source as Source,
    )
    from memvault.core.results import (
        SyncReport as SyncReport,
    )
    from memvault.core.results import (
        WriteResult as WriteResult,
    )
    from memvault.errors import (
        ConfigError as ConfigError,
    )
    from memvault.errors import (
        DaemonError as DaemonError,
    )
    from memvault.errors import (
        FileBusy as FileBusy,
    )
    from memvault.errors import (
        IndexCorrupt as IndexCorrupt,
    )
    from memvault.errors import (
        LockHeld as LockHeld,
    )
    from memvault.errors import (
        MemoryFileError as MemoryFileError,
    )
    from memvault.errors import (
        MemvaultError as MemvaultError,
    )
    from memvault.errors import (
        ModelError as ModelError,
    )
    from memvault.errors import (
        NoteExists as NoteExists,
    )
    from memvault.errors import (
        NoteNotFound as NoteNotFound,
    )
    from memvault.errors import (
        StorageError as StorageError,
    )
    from memvault.errors import (
        UnsafePath as UnsafePath,
    )
    from memvault.errors import (
        VaultNotFound as VaultNotFound,
    )
    from memvault.errors import (
        WriteConflict as WriteConflict,
    )
