"""Give the memory that bulk work freed back to the system.

CPython returns small objects to its own arenas and large ones to malloc; glibc's
malloc keeps what is freed in its arenas (one per thread that allocated: the
watcher's, the reconcile's, the vector lane's, uvicorn's) instead of returning it,
so a daemon's resident size after a full reconcile or a folder renamed across
thousands of notes stayed at its peak for good (bench/RESULTS.md, "Scale").
``trim`` runs a full garbage collection, then ``malloc_trim(0)``, which returns the
free pages of every arena. Elsewhere (macOS, musl) only the collection runs.

``configure`` (once, at the daemon's start) fixes glibc's mmap threshold at 512 KB:
by default it rises to the largest block freed so far (up to 32 MB), after which
onnxruntime's arena regions and big numpy buffers come from the arenas and stay
there when freed; above a fixed threshold each is its own mapping, unmapped on free.
With the real model a daemon held ~23 MB less after embedding (bench/RESULTS.md,
"Memory after bulk work").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
from collections.abc import Callable

log = logging.getLogger("memvault.service")


def _load() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


_MALLOC_TRIM = _load()
_M_MMAP_THRESHOLD = -3  # glibc malloc.h
MMAP_THRESHOLD = 512 * 1024


def configure() -> bool:
    """Fix glibc's mmap threshold (the module doc); True if malloc took it."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    try:
        return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except Exception:  # never fatal: memory is only kept longer
        log.debug("mallopt failed", exc_info=True)
        return False


def trim() -> bool:
    """Collect garbage and hand freed heap pages back; True if malloc let some go."""
    gc.collect()
    if _MALLOC_TRIM is None:
        return False
    try:
        return bool(_MALLOC_TRIM(0))
    except Exception:  # never fatal: memory is only kept longer
        log.debug("malloc_trim failed", exc_info=True)
        return False


__all__ = ["configure", "trim"]
