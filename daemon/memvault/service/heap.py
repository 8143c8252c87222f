"""Give the memory that bulk work freed back to the system.

CPython returns small objects to its own arenas and large ones to malloc; glibc's
malloc keeps what is freed in its arenas (one per thread that allocated: the
watcher's, the reconcile's, the vector lane's, uvicorn's) instead of returning it,
so a daemon's resident size after a full reconcile or a folder renamed across
thousands of notes stayed at its peak for good (bench/RESULTS.md, "Scale").
``trim`` runs a full garbage collection, then ``malloc_trim(0)``, which returns the
free pages of every arena. Elsewhere (macOS, musl) only the collection runs.
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


__all__ = ["trim"]
