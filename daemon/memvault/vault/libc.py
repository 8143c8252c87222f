"""The C library's functions Python's ``os`` lacks (renameat2, syncfs, access with its
errno), called through ctypes with errno kept (``last_errno``); loaded once, when the
module that calls one is imported."""

from __future__ import annotations

import os
from collections.abc import Callable


def function(name: str, *argtypes: str) -> Callable[..., int] | None:
    """libc's ``name``, taking ``argtypes`` (ctypes' names without ``c_``: ``"int"``,
    ``"char_p"``, ``"uint"``) and returning an int; None where there is none (not POSIX,
    or a C library without it)."""
    if os.name != "posix":
        return None
    try:
        import ctypes

        fn = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    fn.argtypes = [getattr(ctypes, f"c_{t}") for t in argtypes]
    fn.restype = ctypes.c_int
    return fn


def last_errno() -> int:
    """The errno of this thread's last call of a ``function``."""
    import ctypes

    return ctypes.get_errno()


__all__ = ["function", "last_errno"]
