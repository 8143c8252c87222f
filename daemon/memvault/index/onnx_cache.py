"""The built ONNX model on disk: where it lives, how it is verified, how it is built once.

Layout of the cache folder (``index.model_cache``, else ``$XDG_CACHE_HOME/memvault/onnx``,
else ``~/.cache/memvault/onnx``; ``~/Library/Caches/memvault/onnx`` on macOS)::

    all-MiniLM-L6-v2-53aa51172d14-onnx-int8-v1.onnx    the model (25 MB; -onnx-fp32-v1: 90 MB,
                                                        with index.onnx_precision = "fp32")
    all-MiniLM-L6-v2-53aa51172d14-onnx-int8-v1.json    its sha256, recipe, versions, self-check
    all-MiniLM-L6-v2-53aa51172d14-onnx-int8-v1.lock    held while one process builds
    ....failed.log      the output of a build that failed (not one that was killed): while
                        it is there no build is tried again; delete it to retry

A model is used only when its sha256 is the one its manifest records. Building
is crash-safe: under an exclusive ``flock`` a child process
(``python -m memvault.index.onnx_export``) writes into ``<stem>.build-<pid>/``; the
parent hashes the result, then renames the model and then the manifest into
place. A kill -9 at any point leaves a temporary folder (removed by the next
build) and no manifest, so nothing half-built is ever used. The child shares
the lock's file description, so an orphaned child keeps the lock until it
ends, and on Linux it is killed with its parent (``PR_SET_PDEATHSIG``).

Nothing here imports torch or onnxruntime.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from memvault.config import ONNX_PRECISIONS as PRECISIONS
from memvault.index.model_files import file_sha256
from memvault.index.onnx_session import OnnxUnavailable

log = logging.getLogger("memvault")

# export opset 17 + BERT fusion + (per-channel int8 but layer 0's FFN output | nothing):
# see onnx_export. Bump the version when a step changes: it is part of the model identity.
RECIPE_VERSION = "v1"
RECIPE = f"onnx-int8-{RECIPE_VERSION}"  # the default precision's


def recipe(precision: str) -> str:
    """The recipe name for ``precision`` (``onnx-int8-v1`` or ``onnx-fp32-v1``)."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown ONNX precision {precision!r}")
    return f"onnx-{precision}-{RECIPE_VERSION}"


BUILD_TIMEOUT = 900.0  # seconds; a build takes ~20-60 s on two busy cores
LOCK_TIMEOUT = 1200.0  # waiting for another process's build


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """What to build: the model folder, its identity, and the file stem in the cache."""

    source: Path
    base_id: str  # model_identity() of the weights, e.g. "sentence-transformers/...@53aa51172d14"
    precision: str = "int8"

    @property
    def recipe(self) -> str:
        return recipe(self.precision)

    @property
    def stem(self) -> str:
        name, _, digest = self.base_id.rpartition("@")
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", name.rsplit("/", 1)[-1]).strip("-") or "model"
        return f"{name}-{digest}-{self.recipe}"


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user cache folder for built models (read when called, never at import)."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        base = Path(xdg)
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif os.name == "nt" and env.get("LOCALAPPDATA"):
        base = Path(env["LOCALAPPDATA"])
    else:
        base = Path.home() / ".cache"
    return base / "memvault" / "onnx"


def cache_dir(configured: str, env: Mapping[str, str] | None = None) -> Path:
    """``index.model_cache`` when set, else the default user cache folder."""
    return Path(configured).expanduser() if configured else default_cache_dir(env)


# --- reading -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cached:
    """What the cache holds for one model: a usable file, or why not."""

    model: Path | None  # verified against its manifest; None when absent or damaged
    manifest: dict[str, object]
    damaged: str | None = None  # why a file that is there cannot be used


def look(folder: Path, spec: ModelSpec) -> Cached:
    """The cached model for ``spec``, its sha256 checked against the manifest."""
    model, manifest_file = folder / f"{spec.stem}.onnx", folder / f"{spec.stem}.json"
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict):
            raise ValueError("not an object")
    except FileNotFoundError:
        return Cached(None, {}, None)  # never finished building (or never started)
    except (OSError, ValueError) as exc:
        return Cached(None, {}, f"its manifest {manifest_file} is unreadable ({exc})")
    if not model.is_file():
        return Cached(None, manifest, f"{model} is missing")
    expected = manifest.get("sha256")
    actual = file_sha256(model)
    if actual != expected or manifest.get("recipe") != spec.recipe:
        return Cached(
            None, manifest, f"{model} failed its sha256 check ({actual} is not {expected})"
        )
    return Cached(model, manifest)


def likely_usable(folder: Path, spec: ModelSpec) -> bool:
    """Cheap guess (no hashing) whether ``ensure_built`` will succeed: built, or buildable.

    Used for the identity the engine expects before the model loads; when the
    guess is wrong the engine re-checks the identity once the embedder is made.
    """
    try:
        manifest = json.loads((folder / f"{spec.stem}.json").read_text(encoding="utf-8"))
        if (folder / f"{spec.stem}.onnx").stat().st_size == manifest.get("bytes"):
            return True
    except (OSError, ValueError, AttributeError):
        pass
    if failed_log(folder, spec).exists():
        return False
    existing = folder
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    return os.access(existing, os.W_OK | os.X_OK)


# --- building ------------------------------------------------------------------------------


def ensure_built(spec: ModelSpec, folder: Path, *, timeout: float = BUILD_TIMEOUT) -> Cached:
    """A verified model for ``spec`` in ``folder``, built now if needed (OnnxUnavailable if not)."""
    cached = look(folder, spec)
    if cached.model is not None:
        return cached
    if cached.damaged:
        log.warning("the cached ONNX model is not usable: %s; it is rebuilt", cached.damaged)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(folder, exc) from None
    with _build_lock(folder / f"{spec.stem}.lock") as lock_fd:
        cached = look(folder, spec)  # another process may have built it while we waited
        if cached.model is not None:
            return cached
        failed = failed_log(folder, spec)
        if failed.exists():
            raise OnnxUnavailable(
                f"the last build of the ONNX model failed (its output is in {failed}); "
                'delete that file to try again, or set index.backend = "torch"'
            )
        return _build(spec, folder, timeout, lock_fd)


def failed_log(folder: Path, spec: ModelSpec) -> Path:
    """Where a failed build leaves its output; while it exists, no build is tried."""
    return folder / f"{spec.stem}.failed.log"


def _build(spec: ModelSpec, folder: Path, timeout: float, lock_fd: int) -> Cached:
    for stale in folder.glob(f"{glob_escape(spec.stem)}.build-*"):
        shutil.rmtree(stale, ignore_errors=True)  # left by a build that was killed
    work = folder / f"{spec.stem}.build-{os.getpid()}"
    try:
        work.mkdir()
        log_file = (work / "build.log").open("wb")
    except OSError as exc:
        raise _unwritable(folder, exc) from None
    out, report_file = work / "model.onnx", work / "report.json"
    log.warning(
        "building the %s ONNX embedding model once into %s (about a minute; torch runs "
        "in a child process)",
        spec.precision,
        folder,
    )
    started = time.perf_counter()
    try:
        with log_file:
            returncode = _run_child(spec, out, report_file, log_file, timeout, lock_fd)
        if returncode != 0:
            raise _build_failed(spec, folder, work, returncode)
        report = json.loads(report_file.read_text(encoding="utf-8"))
        manifest = {
            "recipe": spec.recipe,
            "model_id": spec.base_id,
            "source": str(spec.source),
            "sha256": file_sha256(out),
            "bytes": out.stat().st_size,
            "built_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            **report,
        }
        staged = work / "manifest.json"
        _write_durably(staged, json.dumps(manifest, indent=1).encode())
        _fsync_file(out)
        # model first, manifest last: a manifest always names a complete model
        os.replace(out, folder / f"{spec.stem}.onnx")
        os.replace(staged, folder / f"{spec.stem}.json")
        _fsync_dir(folder)
    except OSError as exc:
        raise _unwritable(folder, exc) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cached = look(folder, spec)
    if cached.model is None:  # renamed, yet not readable back: say so, never use it
        raise OnnxUnavailable(
            f"the ONNX model just built in {folder} cannot be read back: {cached.damaged}"
        )
    log.warning(
        "built %s in %.0f s (cosine to PyTorch on probe texts: min %s)",
        cached.model.name,
        time.perf_counter() - started,
        cached.manifest.get("min_cosine"),
    )
    fusion = cached.manifest.get("fusion")
    if not isinstance(fusion, dict) or "Attention" not in fusion:
        # measured: onnxruntime 1.20-1.30 leave transformers 5's attention unfused
        log.warning(
            "onnxruntime did not fuse the attention layers: the model is right but slower; "
            "onnxruntime >= 1.31 fuses them (after updating, delete %s to rebuild)",
            cached.model,
        )
    return cached


def _run_child(
    spec: ModelSpec, out: Path, report: Path, log_file: BinaryIO, timeout: float, lock_fd: int
) -> int:
    package_root = str(Path(__file__).resolve().parents[2])  # the folder holding memvault/
    env = dict(os.environ)
    # the child imports this very memvault, however the parent found it
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    cmd = [sys.executable, "-m", "memvault.index.onnx_export"]
    cmd += [str(spec.source), str(out), str(report), spec.precision]
    child = subprocess.Popen(
        cmd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log_file,
        stderr=log_file,
        pass_fds=(lock_fd,),  # the child shares the build lock (see the module docstring)
    )
    try:
        return child.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        return -9
    except BaseException:  # KeyboardInterrupt, SystemExit: the build must not outlive us
        child.kill()
        child.wait()
        raise


def _build_failed(spec: ModelSpec, folder: Path, work: Path, returncode: int) -> OnnxUnavailable:
    """The error for a build that did not finish; a build that failed (not killed) is kept."""
    try:
        text = (work / "build.log").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    last = lines[-1].strip() if lines else "no output"
    if returncode < 0:  # killed (a signal, the timeout): nothing wrong with the recipe
        return OnnxUnavailable(
            f"building the ONNX model was interrupted (signal {-returncode}); it is built "
            "again the next time the model loads"
        )
    kept = failed_log(folder, spec)
    with suppress(OSError):
        kept.write_text(text, encoding="utf-8")
    return OnnxUnavailable(
        f"building the ONNX model failed (exit status {returncode}: {last}); its output is in "
        f"{kept}: delete that file to try again (for example after updating torch or "
        'onnxruntime), or set index.backend = "torch"'
    )


def _unwritable(folder: Path, exc: OSError) -> OnnxUnavailable:
    return OnnxUnavailable(
        f"the model cache folder {folder} is not writable ({exc.strerror or exc}): make it "
        "writable, or point index.model_cache (or MEMVAULT_INDEX_MODEL_CACHE) at a writable folder"
    )


@contextmanager
def _build_lock(path: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[int]:
    """An exclusive ``flock`` on ``path``, waited for; its fd is passed to the build child."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _unwritable(path.parent, exc) from None
    try:
        deadline = time.monotonic() + timeout
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not waited:
                    log.warning("waiting for another process building the ONNX model (%s)", path)
                    waited = True
                if time.monotonic() > deadline:
                    raise OnnxUnavailable(
                        f"another process has been building the ONNX model for over {timeout:.0f} s "
                        f"(lock {path}); if none is running, delete the lock file"
                    ) from None
                time.sleep(0.2)
        yield fd
    finally:
        os.close(fd)  # releases the flock (once a child that shares it has ended too)


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _write_durably(path: Path, data: bytes) -> None:
    with path.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = [
    "PRECISIONS",
    "RECIPE",
    "Cached",
    "ModelSpec",
    "OnnxUnavailable",
    "cache_dir",
    "default_cache_dir",
    "ensure_built",
    "failed_log",
    "likely_usable",
    "look",
    "recipe",
]
