"""The engine: one orchestrator (``Engine``) over collaborators that each own their
state — the catalogue, the embedding, the indexer, the linker, the reader and the
writer. See ``engine.engine`` for how they meet."""

from memvault.engine.engine import Engine
from memvault.engine.indexer import Progress

__all__ = ["Engine", "Progress"]
