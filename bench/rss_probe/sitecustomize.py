"""What a daemon's memory holds, asked from outside: bench/rss_bench.py --probe DIR puts
this folder on the daemon's PYTHONPATH with RSS_PROBE_DIR=DIR; a thread of the daemon
then waits for DIR/<pid>.req and appends a report to DIR/<pid>.jsonl: /proc status,
RSS by mapping (smaps), malloc (mallinfo2), pymalloc, SQLite's own memory and each
connection's cache_size, deep sizes of the engine's caches, hnswlib's counts, the
tokenizers loaded. Bench-only: the daemon's code is not changed by it."""

from __future__ import annotations

import collections
import contextlib
import ctypes
import gc
import json
import os
import sys
import tempfile
import threading
import time
import traceback
from typing import Any

DIR = os.environ.get("RSS_PROBE_DIR")
MB = 2**20


def _smaps() -> dict[str, Any]:
    """RSS by mapping: anonymous vs file-backed, the 25 largest by name."""
    by: dict[str, int] = {}
    anon = file = 0
    cur = "[anon]"
    with open(f"/proc/{os.getpid()}/smaps") as fh:
        for line in fh:
            parts = line.split()
            if parts and "-" in parts[0] and not parts[0].endswith(":"):
                cur = parts[5] if len(parts) > 5 else "[anon]"
            elif parts and parts[0] == "Rss:":
                kb = int(parts[1])
                key = cur if cur.startswith("[") else os.path.basename(cur)
                by[key] = by.get(key, 0) + kb
                if cur.startswith("/"):
                    file += kb
                else:
                    anon += kb
    top = sorted(by.items(), key=lambda kv: -kv[1])[:25]
    return {
        "anon": round(anon / 1024, 1),
        "file": round(file / 1024, 1),
        "by": {k: round(v / 1024, 1) for k, v in top},
    }


def _deep(obj: object, seen: set[int]) -> int:
    """Bytes of ``obj`` and what it holds (objects in ``seen`` not again; no modules,
    classes or functions; a numpy array's own buffer, a view's not)."""
    import numpy as np

    skip = ("module", "function", "method", "builtin_function_or_method")
    stack, total = [obj], 0
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, type) or type(o).__name__ in skip:
            continue
        if isinstance(o, np.ndarray):
            total += (o.nbytes + sys.getsizeof(o)) if o.base is None else sys.getsizeof(o)
            continue
        total += sys.getsizeof(o)
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        elif not isinstance(o, (str, bytes, bytearray, int, float, bool, type(None))):
            if hasattr(o, "__dict__"):
                stack.append(o.__dict__)
            for klass in type(o).__mro__:
                for slot in klass.__dict__.get("__slots__", ()) or ():
                    if isinstance(slot, str):
                        with contextlib.suppress(AttributeError):
                            stack.append(getattr(o, slot))
    return total


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (n, ctypes.c_size_t)
        for n in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _pymalloc() -> list[str]:
    with tempfile.TemporaryFile(mode="w+") as tf:  # _debugmallocstats writes to fd 2
        old = os.dup(2)
        os.dup2(tf.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(old, 2)
            os.close(old)
        tf.seek(0)
        text = tf.read()
    keep = ("# arenas allocated current", "# bytes in allocated blocks", "Total")
    return [" ".join(line.split()) for line in text.splitlines() if line.startswith(keep)]


def _sqlite(r: dict[str, Any]) -> None:
    import sqlite3

    with open(f"/proc/{os.getpid()}/maps") as fh:
        libs = [p for p in fh.read().split() if "libsqlite3" in p or "_sqlite3" in p]
    for path in dict.fromkeys(libs):
        try:
            lib = ctypes.CDLL(path)
            lib.sqlite3_memory_used.restype = ctypes.c_int64
            r["sqlite_mem_used_mb"] = round(lib.sqlite3_memory_used() / MB, 2)
            break
        except (OSError, AttributeError):
            continue
    conns = [o for o in gc.get_objects() if isinstance(o, sqlite3.Connection)]
    sizes: list[Any] = []
    for c in conns:
        try:
            sizes.append(c.execute("PRAGMA cache_size").fetchone()[0])
        except Exception as exc:  # closed, or another thread's
            sizes.append(str(exc)[:40])
    r["sqlite_connections"] = len(conns)
    r["sqlite_cache_size"] = sizes


def _owners() -> dict[str, Any]:
    from memvault.engine.engine import Engine

    engines = [o for o in gc.get_objects() if type(o) is Engine]
    own: dict[str, Any] = {}
    if not engines:
        return own
    e, seen = engines[0], set()

    def put(name: str, obj: object) -> None:
        try:
            own[name] = round(_deep(obj, seen) / MB, 2)
        except Exception as exc:  # a structure changing under the probe
            own[name] = str(exc)

    put("catalogue._rows", getattr(e.catalogue, "_rows", None))
    put("catalogue._links", getattr(e.catalogue, "_links", None))
    put("linker._listing", getattr(e.linker, "_listing", None))
    put("linker, the rest", {k: v for k, v in vars(e.linker).items() if k != "_listing"})
    emb = e.embedding
    put("embedding._lines_kept", getattr(getattr(emb, "_lines", None), "_kept", None))
    vi = getattr(emb, "_vectors", None)
    vi = getattr(vi, "inner", vi)  # the projected graph (ProjectedVectors) holds one
    idx = getattr(vi, "_index", None)
    if idx is not None:
        n, dim, m = idx.get_current_count(), idx.dim, idx.M
        own["hnswlib"] = {
            "count": n,
            "capacity": idx.get_max_elements(),
            "dim": dim,
            "M": m,
            "vectors_and_level0_mb": round(n * (dim * 4 + 2 * m * 4 + 4 + 8) / MB, 1),
        }
        put("vector labels", {k: v for k, v in vars(vi).items() if k != "_index"})
    put("store", e.store)
    return own


def _report() -> dict[str, Any]:
    gc.collect()
    r: dict[str, Any] = {"t": time.time()}
    keys = ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "Threads")
    with open(f"/proc/{os.getpid()}/status") as fh:
        for line in fh:
            if line.startswith(keys):
                k, v = line.split(":", 1)
                r[k] = v.strip()
    r["smaps"] = _smaps()
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _Mallinfo2
    m = libc.mallinfo2()
    r["malloc_mb"] = {
        "heap_arenas": round(m.arena / MB, 1),
        "mmapped": round(m.hblkhd / MB, 1),
        "in_use": round(m.uordblks / MB, 1),
        "free": round(m.fordblks / MB, 1),
    }
    r["gc_objects"] = len(gc.get_objects())
    r["pymalloc"] = _pymalloc()
    _sqlite(r)
    r["owners_mb"] = _owners()
    try:
        import tokenizers

        r["tokenizers_loaded"] = sum(1 for o in gc.get_objects() if type(o) is tokenizers.Tokenizer)
    except ImportError:
        r["tokenizers_loaded"] = 0
    r["top_types"] = collections.Counter(type(o).__name__ for o in gc.get_objects()).most_common(12)
    r["modules"] = len(sys.modules)
    return r


def _loop(folder: str) -> None:
    pid = os.getpid()
    req = f"{folder}/{pid}.req"
    while True:
        time.sleep(0.5)
        if not os.path.exists(req):
            continue
        with open(req) as fh:
            tag = fh.read().strip()
        os.unlink(req)
        try:
            r = _report()
            r["tag"] = tag
        except Exception:  # the report says why, the daemon goes on
            r = {"tag": tag, "error": traceback.format_exc()}
        with open(f"{folder}/{pid}.jsonl", "a") as fh:
            fh.write(json.dumps(r) + "\n")


if DIR:
    threading.Thread(target=_loop, args=(DIR,), daemon=True, name="rss-probe").start()
