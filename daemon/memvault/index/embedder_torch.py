"""The PyTorch backend: a sentence-transformers model (``index.backend = "torch"``, and
what the ONNX backend falls back to). torch and sentence_transformers are imported
when one is constructed, never when this module is imported, so ``memvault --help``
and ``memvault status`` stay fast."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from memvault.config import DEFAULT_MODEL, IndexSettings
from memvault.errors import ModelError
from memvault.index.model_files import model_identity, resolve_model_path, window_of
from memvault.index.tokenizer import Tokenizer


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded when constructed.

    ``threads=None`` keeps torch's default intra-op thread count (one per
    core); an int calls ``torch.set_num_threads`` (process-wide). Measured on
    a 2-core machine busy with other processes (load ~5): one query took
    25 ms p50 with 1 thread and 123-155 ms with 2 (OpenMP threads fighting
    for cores), and batches ran 8-9 texts/s with 1 thread vs 6-8 with 2. A
    daemon sharing a laptop with an editor may want 1.

    ``embed`` holds a lock: one encode at a time, so a query and a sync do not
    oversubscribe the cores. Inputs are not sorted by length here: ``encode``
    already sorts them to batch similar lengths together (pre-sorting measured
    no faster) and returns rows in input order.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        device: str = "cpu",
        batch_size: int = 32,
        *,
        threads: int | None = None,
    ) -> None:
        if batch_size < 1 or (threads is not None and threads < 1):
            raise ValueError("batch_size and threads must be positive")
        self.path = resolve_model_path(model)
        self.batch_size = batch_size
        self._model = _load_sentence_transformer(model, self.path, device)
        if threads is not None:
            import torch

            torch.set_num_threads(threads)
        # sentence-transformers 6 renamed get_sentence_embedding_dimension (a FutureWarning).
        dim_of = getattr(self._model, "get_embedding_dimension", None)
        if dim_of is None:
            dim_of = self._model.get_sentence_embedding_dimension
        self.dim = int(dim_of())
        window = int(self._model.max_seq_length or window_of(self.path))
        # Count with the fast Rust tokenizer when the folder has one; it is the
        # same tokenizer the model runs (a `model` test checks they agree).
        self._tokenizer: Tokenizer | None = None
        if (self.path / "tokenizer.json").is_file():
            self._tokenizer = Tokenizer.from_folder(self.path)
            special = self._tokenizer.special_tokens
        else:
            special = self._model.tokenizer.num_special_tokens_to_add(False)
        self.max_tokens = window - special
        self.model_id = model_identity(model, self.path)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (n, dim), L2-normalized rows; (0, dim) for no texts."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            if len(texts) >= _TRIM_AFTER:
                _release_freed_memory()
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        """Word pieces without special tokens (the same tokenizer the model uses)."""
        if self._tokenizer is not None:
            return self._tokenizer.count(text)
        return len(self._model.tokenizer(text, add_special_tokens=False)["input_ids"])


_TRIM_AFTER = 16  # texts in one embed() call after which freed memory is handed back


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl)
        return None


def _release_freed_memory() -> None:
    """Give the heap torch freed back to the system (glibc ``malloc_trim``).

    Tensors of every batch shape leave the per-thread arenas fragmented, so a
    process that embeds for months creeps upward: 10 batches of long texts end
    at 750 MB resident without a trim and 516 MB with one (bench/RESULTS.md).
    A trim costs well under a millisecond.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _load_sentence_transformer(model: str, path: Path, device: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ModelError(f"sentence-transformers cannot be imported: {exc}") from None
    try:
        import tqdm
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights" bars would garble the CLI
        # encode() creates a (disabled) tqdm bar per call, and tqdm starts a
        # monitor thread for it that never ends; memvault shows no tqdm bars.
        tqdm.tqdm.monitor_interval = 0
    except ImportError:
        pass
    try:
        return SentenceTransformer(str(path), device=device, local_files_only=True)
    except Exception as exc:  # any failure to load is the same error to the user
        raise ModelError(f"cannot load the embedding model {model!r} from {path}: {exc}") from None


def load_torch_embedder(settings: IndexSettings) -> SentenceTransformerEmbedder:
    """The PyTorch embedder ``settings`` configure."""
    return SentenceTransformerEmbedder(
        settings.model, settings.device, settings.batch_size, threads=settings.threads or None
    )


def torch_model_id_for(settings: IndexSettings) -> str:
    """The identity ``load_torch_embedder(settings)`` reports, without loading the model."""
    return model_identity(settings.model, resolve_model_path(settings.model))
