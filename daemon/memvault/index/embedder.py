"""Turn chunk texts into vectors: the ``Embedder`` protocol, and the small registry that
picks the one a vault's settings name.

Embedding, by job:

- ``model_files.py``: which folder a configured model is, its weights' sha256, its identity;
- ``tokenizer.py``: the model's word pieces without torch (chunking, budgets);
- ``embedder_torch.py``: the PyTorch backend (sentence-transformers);
- ``embedder_onnx.py``: the ONNX Runtime backend (the default), falling back to torch;
  ``onnx_cache.py`` builds and keeps its model (``onnx_export.py`` in a child process);
- ``embedder_hash.py``: the hash embedder (tests; ``index.model = "hash"``).

A backend registers under its ``index.backend`` name how to load it and the identity it
will report, known without loading it (``register_backend``); ``make_embedder`` and
``model_id_for`` ask the registry. The backends are imported only when asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from memvault.config import IndexSettings
from memvault.errors import ModelError
from memvault.index.embedder_hash import HashEmbedder, hash_model
from memvault.index.embedder_torch import SentenceTransformerEmbedder
from memvault.index.tokenizer import Tokenizer


@runtime_checkable
class Embedder(Protocol):
    """What the engine needs from an embedding model."""

    model_id: str  # identity stored in the index: a change means a full re-embed
    dim: int
    max_tokens: int  # the window minus the special tokens ([CLS], [SEP])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array (len(texts), dim) of L2-normalized rows."""
        ...

    def count_tokens(self, text: str) -> int:
        """Word pieces in ``text``, special tokens not counted."""
        ...


@dataclass(frozen=True, slots=True)
class EmbedderBackend:
    """One way to run a model: how to load it, and its identity without loading it;
    ``load_apart``, if the backend can, loads it to run in a process of its own."""

    load: Callable[[IndexSettings], Embedder]
    model_id: Callable[[IndexSettings], str]
    load_apart: Callable[[IndexSettings], Embedder] | None = None


_BACKENDS: dict[str, EmbedderBackend] = {}


def register_backend(name: str, backend: EmbedderBackend) -> None:
    """Make ``index.backend = name`` run on ``backend``."""
    _BACKENDS[name] = backend


def backend_named(name: str) -> EmbedderBackend:
    try:
        return _BACKENDS[name]
    except KeyError:
        known = ", ".join(sorted(_BACKENDS))
        raise ModelError(f"index.backend {name!r} is not one of {known}") from None


def make_embedder(settings: IndexSettings, *, apart: bool = False) -> Embedder:
    """The embedder ``settings`` configure: ``hash`` / ``hash-<dim>`` or a real model on
    ``index.backend`` ("onnx", falling back to torch with a warning when it cannot run
    here, or "torch"). ``apart`` (a daemon's): the model runs in a child process where
    the backend can (onnx), so letting it go gives all of its memory back."""
    hashed = hash_model(settings.model)
    if hashed is not None:
        return hashed
    backend = backend_named(settings.backend)
    load = (backend.load_apart if apart else None) or backend.load
    return load(settings)


def model_id_for(settings: IndexSettings) -> str:
    """The identity ``make_embedder(settings)`` would report, without loading the model.

    Hashing the weights (once per process) costs a fraction of a second;
    loading torch and the model costs seconds. A sync that finds nothing to
    embed only needs the identity, to notice a change of model.
    """
    hashed = hash_model(settings.model)
    return hashed.model_id if hashed else backend_named(settings.backend).model_id(settings)


def window_for(settings: IndexSettings) -> int:
    """The configured model's window in word pieces (special tokens not counted), without
    loading it: chunking needs it, and chunking must not wait for the model."""
    hashed = hash_model(settings.model)
    return hashed.max_tokens if hashed else Tokenizer.for_model(settings.model).max_tokens


def token_counter_for(settings: IndexSettings) -> Callable[[str], int]:
    """Count tokens the way the configured model does, without loading it."""
    hashed = hash_model(settings.model)
    return hashed.count_tokens if hashed else Tokenizer.for_model(settings.model).count


def _load_torch(settings: IndexSettings) -> Embedder:
    from memvault.index.embedder_torch import load_torch_embedder

    return load_torch_embedder(settings)


def _torch_model_id(settings: IndexSettings) -> str:
    from memvault.index.embedder_torch import torch_model_id_for

    return torch_model_id_for(settings)


def _load_onnx(settings: IndexSettings) -> Embedder:
    from memvault.index.embedder_onnx import make_onnx_embedder

    return make_onnx_embedder(settings)


def _load_onnx_apart(settings: IndexSettings) -> Embedder:
    from memvault.index.embedder_onnx import make_onnx_embedder

    return make_onnx_embedder(settings, apart=True)


def _onnx_model_id(settings: IndexSettings) -> str:
    from memvault.index.embedder_onnx import onnx_model_id_for

    return onnx_model_id_for(settings)


register_backend("torch", EmbedderBackend(_load_torch, _torch_model_id))
register_backend("onnx", EmbedderBackend(_load_onnx, _onnx_model_id, _load_onnx_apart))

__all__ = [
    "Embedder",
    "EmbedderBackend",
    "HashEmbedder",
    "SentenceTransformerEmbedder",
    "make_embedder",
    "model_id_for",
    "register_backend",
    "token_counter_for",
    "window_for",
]
