"""The ONNX Runtime backend: an int8 graph of the model, with no torch on the embedding path.

``index.backend = "onnx"`` (the default) embeds with onnxruntime and the
``tokenizers`` library; ``"torch"`` keeps ``SentenceTransformerEmbedder``.

- ``OnnxEmbedder``: the same pipeline as sentence-transformers (word pieces
  truncated at the model's window of 256, mean pooling over the attention
  mask inside the graph, L2 normalisation here), each text run through the
  session alone (below).
- ``make_onnx_embedder``: the built model from the user cache (``onnx_cache``),
  built on first use from the weights the torch backend would load. When the
  ONNX backend cannot be used here — onnxruntime missing or failing to load, a
  cache folder that cannot be written, a model that is not a mean-pooled BERT,
  a failed build — it says why and how to fix it, and falls back to the
  PyTorch backend (a different model identity: vectors never mix).
- ``onnx_model_id_for``: the identity the engine should expect, without loading.

Model identity: ``<weights identity>+onnx-<precision>-v1`` (``index.onnx_precision``:
int8 or fp32). int8 vectors differ from fp32 ones (cosine ~0.99), so the
backend and the precision are part of the identity: switching re-embeds the
vault, and the cache keys never mix them.

A text at a time: the int8 graph quantizes its activations with one scale per run
(``DynamicQuantizeLinear``, ``QAttention``), so a text batched with others got a
vector set by the largest activation among them (cosine 0.974-0.999 to itself alone,
bench/RESULTS.md, drift59): a note saved alone and the same note in a first index
differed. Each text is one session run, unpadded, so its vector is the same alone, in
any batch, in any order, here or in the model's process. ``index.batch_size`` is how
many texts go to the session (one message to the model's process) at a time, padded
to travel; it no longer changes a vector. Its cost is a session run's overhead
(~0.7 ms): short texts embed ~1.8x slower than batched, chunk-sized ones about as fast
(bench/RESULTS.md, drift59 and batch59; a cold index's CPU: 1.01x).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memvault.config import DEFAULT_MODEL, IndexSettings
from memvault.index.embedder_torch import SentenceTransformerEmbedder, load_torch_embedder
from memvault.index.model_files import (
    BUNDLED_IDS,
    BUNDLED_SHA256,
    BUNDLED_WEIGHTS,
    model_identity,
    resolve_model_path,
    verify_weights,
)
from memvault.index.onnx_cache import (
    ModelSpec,
    cache_dir,
    ensure_built,
    likely_usable,
    look,
    recipe,
)
from memvault.index.onnx_run import ChildRun, open_run
from memvault.index.onnx_session import OnnxUnavailable, import_onnxruntime
from memvault.index.tokenizer import Tokenizer

log = logging.getLogger("memvault")

FALLBACK = (
    "using the PyTorch backend (sentence-transformers) instead; its vectors are another model's, "
    "so the index is re-embedded with it"
)


class OnnxEmbedder:
    """A mean-pooled BERT model as an ONNX graph on onnxruntime's CPU provider.

    ``threads`` sets onnxruntime's intra-op threads (None or 0: one per
    physical core). ``embed`` holds a lock: one run at a time, so a query and
    a sync never oversubscribe the cores. Each text is a run of its own (the
    module doc), ``batch_size`` texts handed to the session at a time.
    """

    backend = "onnx"

    def __init__(
        self,
        model_file: Path,
        folder: Path,
        model_id: str,
        *,
        batch_size: int = 32,
        threads: int | None = None,
        apart: bool = False,
    ) -> None:
        if batch_size < 1 or (threads is not None and threads < 0):
            raise ValueError("batch_size must be positive and threads >= 0")
        self.model_file = model_file
        self.model_id = model_id
        self.batch_size = batch_size
        self._run = open_run(model_file, threads or 0, apart=apart)
        self.dim = self._run.dim
        # the process's one tokenizer of the model (the engine counts with it too): the
        # ids it runs on are truncated at the window as sentence-transformers truncates
        self._counter = Tokenizer.from_folder(folder)
        self.max_tokens = self._counter.max_tokens
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (n, dim), L2-normalized rows in input order; (0, dim) for no texts."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if len(texts) == 0:
            return out
        with self._lock:
            pieces = self.token_ids(texts)
            for start in range(0, len(pieces), self.batch_size):
                rows = pieces[start : start + self.batch_size]
                width = max(len(p) for p in rows)
                ids = np.zeros((len(rows), width), dtype=np.int64)
                mask = np.zeros((len(rows), width), dtype=np.int64)
                for i, p in enumerate(rows):  # padded to travel; each row runs cut to its mask
                    ids[i, : len(p)] = p
                    mask[i, : len(p)] = 1
                last = start + len(rows) == len(pieces)
                out[start : start + len(rows)] = self._run.run(ids, mask, last=last)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)  # torch.nn.functional.normalize's eps
        return out

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids the model runs on: special tokens added, truncated at the window."""
        # sentence-transformers strips each text before tokenizing
        return self._counter.model_ids([t.strip() for t in texts])

    def count_tokens(self, text: str) -> int:
        """Word pieces without special tokens (the tokenizer the model runs)."""
        return self._counter.count(text)

    def close(self) -> None:
        """Let the model go now: a child running it ends (the next ``embed`` starts one)."""
        with self._lock:
            self._run.close()

    def process_info(self) -> dict[str, object] | None:
        """The model's process's restarts (``child_watch.Restarts.info``); None when
        the model runs in this process."""
        return self._run.restarts.info() if isinstance(self._run, ChildRun) else None

    def kill(self) -> None:
        """Kill the model's process now, whatever call is in flight (the daemon's exit)."""
        if isinstance(self._run, ChildRun):
            self._run.kill()


# --- which model, which identity --------------------------------------------------------------


def base_identity(model: str, path: Path) -> str:
    """The weights' identity (the torch backend's model id), hashing only when it must."""
    if model in BUNDLED_IDS:
        return f"{DEFAULT_MODEL}@{BUNDLED_SHA256[:12]}"  # verified before any build from them
    return model_identity(model, path)


def onnx_identity(base: str, precision: str = "int8") -> str:
    return f"{base}+{recipe(precision)}"


def support_problem(folder: Path) -> str | None:
    """Why the model in ``folder`` cannot run on this backend, or None.

    The export reproduces a BERT encoder with sentence-transformers' mean
    pooling and normalisation; anything else stays on the torch backend.
    """

    def read(name: str) -> object:
        try:
            return json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    config = read("config.json")
    modules = read("modules.json")
    pooling = read("1_Pooling/config.json")
    kind = config.get("model_type") if isinstance(config, dict) else None
    types = (
        [m.get("type", "") for m in modules if isinstance(m, dict)]
        if isinstance(modules, list)
        else []
    )
    mean_only = (
        isinstance(pooling, dict)
        and pooling.get("pooling_mode_mean_tokens") is True
        and not any(
            v is True
            for k, v in pooling.items()
            if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"
        )
    )
    if kind != "bert" or not mean_only or not any(t.endswith("Normalize") for t in types):
        return (
            f"the ONNX backend runs BERT models with mean pooling and normalised vectors "
            f"(like the default {DEFAULT_MODEL}); the model in {folder} is not one "
            '(set index.backend = "torch" for it)'
        )
    if not (folder / "tokenizer.json").is_file():
        return f"the ONNX backend needs {folder / 'tokenizer.json'}"
    return None


def load_onnx_embedder(settings: IndexSettings, *, apart: bool = False) -> OnnxEmbedder:
    """The ONNX embedder of ``settings``, building the model if needed; OnnxUnavailable if
    not. ``apart``: the session runs in a child process (``onnx_run.ChildRun``), which
    imports onnxruntime instead of this process and says why it cannot."""
    path = resolve_model_path(settings.model, verify=False)
    problem = support_problem(path)
    if problem:
        raise OnnxUnavailable(problem)
    if not apart:
        import_onnxruntime()
    base = base_identity(settings.model, path)
    spec = ModelSpec(path, base, settings.onnx_precision)
    folder = cache_dir(settings.model_cache)
    cached = look(folder, spec)
    if cached.model is None:
        if settings.model in BUNDLED_IDS:
            verify_weights(path / BUNDLED_WEIGHTS, BUNDLED_SHA256)  # ModelError: no fallback helps
        cached = ensure_built(spec, folder)
    assert cached.model is not None
    return OnnxEmbedder(
        cached.model,
        path,
        onnx_identity(base, settings.onnx_precision),
        batch_size=settings.batch_size,
        threads=settings.threads or None,
        apart=apart,
    )


def make_onnx_embedder(
    settings: IndexSettings, *, apart: bool = False
) -> OnnxEmbedder | SentenceTransformerEmbedder:
    """The ONNX embedder, or — saying why and how to fix it — the PyTorch one (in this
    process: ``apart`` is for the ONNX session only)."""
    try:
        return load_onnx_embedder(settings, apart=apart)
    except OnnxUnavailable as exc:
        log.warning("the ONNX backend cannot be used: %s. Now %s.", exc, FALLBACK)
    return load_torch_embedder(settings)


def onnx_model_id_for(settings: IndexSettings) -> str:
    """The identity ``make_onnx_embedder`` will most likely report, without loading anything.

    Cheap checks only (no import, no hashing of the built model): onnxruntime
    installed, a supported model, the model built or its cache folder
    writable. A failure only loading finds (a failed build, a damaged file
    that cannot be rebuilt) changes the identity then; the engine checks it
    again once the embedder is made.
    """
    path = resolve_model_path(settings.model, verify=False)
    base = base_identity(settings.model, path)
    if (
        support_problem(path) is None
        and importlib.util.find_spec("onnxruntime") is not None
        and likely_usable(
            cache_dir(settings.model_cache), ModelSpec(path, base, settings.onnx_precision)
        )
    ):
        return onnx_identity(base, settings.onnx_precision)
    return base


__all__ = [
    "OnnxEmbedder",
    "OnnxUnavailable",
    "base_identity",
    "load_onnx_embedder",
    "make_onnx_embedder",
    "onnx_model_id_for",
    "support_problem",
]
