"""What the indexer and the reader share: the parts of one vault they work over."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memvault.config import VaultConfig
    from memvault.engine.catalogue import Catalogue
    from memvault.engine.embedding import Embedding
    from memvault.index.store import Store
    from memvault.vault.files import VaultFS


@dataclass(eq=False)  # a collaborator, not a value: equal only to itself, hashable
class Lane:
    """A collaborator over one vault's files, index rows, catalogue and embedding."""

    config: VaultConfig
    fs: VaultFS
    store: Store
    catalogue: Catalogue
    embedding: Embedding
