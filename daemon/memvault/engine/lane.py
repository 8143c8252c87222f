"""What the indexer and the reader share: the parts of one vault they work over."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memvault.config import VaultConfig
    from memvault.engine.catalogue import Catalogue
    from memvault.engine.embedding import Embedding
    from memvault.index.store import Store
    from memvault.vault.files import VaultFS


class Lane:
    """A collaborator over one vault's files, index rows, catalogue and embedding."""

    def __init__(
        self,
        config: VaultConfig,
        fs: VaultFS,
        store: Store,
        catalogue: Catalogue,
        embedding: Embedding,
    ) -> None:
        self.config = config
        self.fs = fs
        self.store = store
        self.catalogue = catalogue
        self.embedding = embedding
