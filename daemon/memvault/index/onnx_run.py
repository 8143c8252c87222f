"""Running the int8 graph: in this process, or in a process of its own.

- ``LocalRun``: the onnxruntime session here. A short-lived call (the CLI, a script)
  runs the model this way: a child would add its start (~0.15 s) for nothing.
- ``ChildRun``: the session in a child process, for the daemon. Letting an idle model
  go ends that process, and all that onnxruntime held goes with it: its library's
  pages and what its session leaves allocated once freed, ~30 MiB that a daemon kept
  in-process after letting the model go (bench/RESULTS.md, "The model in a process of
  its own"). A child that dies (killed, out of memory), is silent past its time on a
  batch (``child_watch``: scaled by the word pieces sent, writing the request too;
  one still working past it, its CPU time growing, waited for up to 8 times it), is
  stopped (SIGSTOP, a debugger) for STOPPED_MOST seconds, or answers out of step, is
  killed and started again for the batch, once, said on the log and counted for
  /status (``restarts``); twice is a ``ModelAway``, after which no child is started for
  a rest that doubles while it keeps failing (5 s to 300 s). A start that fails for the
  moment (the child killed or silent as it starts) is tried once more, then a
  ModelError: never the fallback to PyTorch, which would re-embed the vault. A child that says it cannot
  load the model fails as ``LocalRun`` would (``OnnxUnavailable``, the same message:
  the caller falls back to PyTorch); one that cannot run here at all (no process can
  be started, Python fails in it before it answers) leaves the model to this process
  (``open_run``, said in the log).

Both take the same batches (``run``: word pieces and mask, int64, rows x width) and
give the pooled rows, each row run alone (``LocalRun.run``), so a vector is the same
whichever ran it and whatever rows came with it. (The wire format is the one batched
runs had: a daemon of an older memvault whose files an upgrade replaced starts a child
of the new code, and the two still agree.) The child (``_BOOT``:
this very memvault, imported by its folder, nothing put before the standard library;
it runs ``onnx_session.main`` and imports only that module, not this one or
``onnx_cache``: what it holds is what running the model needs)
reads the model's path and threads as one JSON line on its stdin and answers its
vectors' width (or why it cannot load) on a line of its own; then, per batch, a
header (rows, width, last of its call) and the two int64 arrays in, (rows, dim) and
float32 rows out, or an error frame. Its replies have a descriptor of their own:
anything else written to its stdout goes to stderr. It ends when its stdin closes:
the parent let it go, or died.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import numpy as np

from memvault.errors import ModelAway, ModelError
from memvault.index.child_watch import Deadline, Restarts, reply_seconds, stopped
from memvault.index.onnx_session import (
    FAILED,
    REPLY,
    REQUEST,
    LocalRun,
    OnnxUnavailable,
    import_onnxruntime,
)

log = logging.getLogger("memvault")

START_TIMEOUT = 120.0  # seconds for the child to load the model (a busy machine: seconds)
# glibc's mmap threshold fixed as the daemon fixes its own (service/heap.py): the arena
# regions onnxruntime frees go back to the system, not into malloc's arenas
CHILD_ENV = {"MALLOC_MMAP_THRESHOLD_": str(512 * 1024)}


class ChildRun:
    """The model's session in a child process (the module doc); thread-safe."""

    def __init__(self, model_file: Path, threads: int) -> None:
        self._start_line = json.dumps({"model": str(model_file.resolve()), "threads": threads})
        self._lock = threading.Lock()
        self._held: list[subprocess.Popen[bytes]] = []  # the running child, if any
        self._ends = weakref.finalize(self, _end_all, self._held)
        self.dim = 0  # the first child's answer
        self.restarts = Restarts()  # its restarts, for /status; the rest after failures
        # every child started, the one answering its start line too (``kill``)
        self._spawned: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()
        with self._lock:
            try:
                self._child()
            except _Ended as ended:
                if ended.lasting:  # no process of its own here: the caller runs it inside
                    raise NoProcess(str(ended)) from None
                raise ModelError(f"the embedding model's process did not start ({ended})") from None

    @property
    def pid(self) -> int | None:
        """The child's process id; None while none runs."""
        return self._held[0].pid if self._held else None

    def run(self, ids: np.ndarray, mask: np.ndarray, last: bool) -> np.ndarray:
        rows, width = ids.shape
        request = (
            REQUEST.pack(rows, width, last)
            + np.ascontiguousarray(ids, dtype=np.int64).tobytes()
            + np.ascontiguousarray(mask, dtype=np.int64).tobytes()
        )
        with self._lock:
            if rest := self.restarts.resting():
                raise ModelAway(
                    "the embedding model's process failed twice in a row; "
                    f"it is started again in {rest:.0f} s"
                )
            for attempt in (1, 2):
                try:
                    out = _ask(self._child(), request, rows, width, self.dim)
                except _Ended as ended:
                    _end_all(self._held)
                    if ended.lasting:
                        raise ModelError(
                            f"the embedding model's process ended ({ended}) for good"
                        ) from None
                    if attempt == 2:
                        rest = self.restarts.failed()
                        log.warning(
                            "the embedding model's process ended again (%s); none is "
                            "started for %.0f s",
                            ended,
                            rest,
                        )
                        oom = " (is the machine out of memory?)" if "SIGKILL" in str(ended) else ""
                        raise ModelAway(
                            f"the embedding model's process ended ({ended}), and again once "
                            f"started again; it is started again in {rest:.0f} s{oom}"
                        ) from None
                    self.restarts.restarted(str(ended))
                    log.warning(
                        "the embedding model's process ended (%s); starting it again", ended
                    )
                else:
                    self.restarts.answered()
                    return out
        raise AssertionError("unreachable")

    def kill(self) -> None:
        """Kill the child now, without waiting for a call in flight (its lock), one
        starting too: the daemon's exit when a batch could not finish (a stopped child
        would outlive it)."""
        for proc in list(self._spawned):
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    proc.kill()

    def close(self) -> None:
        """End the child; the next ``run`` starts another."""
        with self._lock:
            _end_all(self._held)

    def _child(self) -> subprocess.Popen[bytes]:
        """The running child, started (and its answer read) if none runs; _Ended if it
        cannot be (tried twice when it died or was silent as it started)."""
        if self._held:
            return self._held[0]
        for attempt in (1, 2):
            proc = _spawn()
            self._spawned.add(proc)
            try:
                dim = _hello(proc, self._start_line)
                if self.dim and dim != self.dim:  # one started again answers as the first
                    raise _Ended(f"it answered a width of {dim}, not {self.dim}", lasting=True)
                self.dim = dim
                self._held.append(proc)
                return proc
            except _Ended as ended:
                _end(proc)
                if ended.lasting or attempt == 2:
                    raise
                log.warning("the embedding model's process did not start (%s); again", ended)
            except BaseException:
                _end(proc)
                raise
        raise AssertionError("unreachable")


class NoProcess(Exception):
    """A process of its own cannot run the model here (why): it runs in this one."""


class _Ended(Exception):
    """The child is gone, or silent past its time: why. ``lasting``: starting it again
    would end the same way (it cannot be started, or exits with an error of its own)."""

    def __init__(self, why: str, *, lasting: bool = False) -> None:
        super().__init__(why)
        self.lasting = lasting


def _spawn() -> subprocess.Popen[bytes]:
    """A child running ``onnx_session.main``, memvault imported from where this process has it (and
    nothing else put before the standard library), unbuffered pipes; _Ended(lasting)
    when no process can be started."""
    env = {**os.environ, **CHILD_ENV, "ORT_DISABLE_TELEMETRY": "1"}
    try:
        proc = subprocess.Popen(
            [sys.executable, "-P", "-c", _BOOT, str(Path(__file__).resolve().parents[1])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            bufsize=0,
        )
    except (OSError, ValueError, TypeError) as exc:  # no interpreter, a limit reached
        raise _Ended(f"it cannot be started: {exc}", lasting=True) from None
    assert proc.stdin is not None
    os.set_blocking(proc.stdin.fileno(), False)  # our end: _send waits in select
    return proc


# The child's first lines: this memvault, by its folder (argv[1]), whatever sys.path holds.
_BOOT = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location(
    "memvault", sys.argv[1] + "/__init__.py", submodule_search_locations=[sys.argv[1]])
sys.modules["memvault"] = module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
from memvault.index.onnx_session import main
raise SystemExit(main())
"""


def open_run(model_file: Path, threads: int, *, apart: bool) -> LocalRun | ChildRun:
    """The model's session: apart if asked and a process of its own can run it here,
    else in this process (said: the model works, only its memory stays when let go)."""
    if apart:
        try:
            return ChildRun(model_file, threads)
        except NoProcess as exc:
            log.warning(
                "the embedding model runs inside this process: a process of its own "
                "cannot run it here (%s)",
                exc,
            )
            import_onnxruntime()
    return LocalRun(model_file, threads)


def _hello(proc: subprocess.Popen[bytes], start_line: str) -> int:
    """Send the start line, read the answer: the width; OnnxUnavailable(why) when the
    child says it cannot load the model; _Ended when it ends or is silent first. Lines
    before its answer are passed over (whatever wrote to stdout as Python started: a
    site's customisation, say); the child starts its answer on a line of its own."""
    deadline = Deadline(proc.pid, START_TIMEOUT, "loading the model")
    _send(proc, start_line.encode() + b"\n", deadline)
    seen = b""
    while True:
        while b"\n" not in seen:
            seen += _read(proc, 65536, deadline, some=True)
        line, seen = seen.split(b"\n", 1)
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if isinstance(answer, dict) and isinstance(answer.get("dim"), int):
            return int(answer["dim"])
        if isinstance(answer, dict) and isinstance(answer.get("error"), str):
            raise OnnxUnavailable(answer["error"])
        if line.strip():
            log.debug("the model's process wrote %r", line[:200])


def _ask(
    proc: subprocess.Popen[bytes], request: bytes, rows: int, width: int, dim: int
) -> np.ndarray:
    """One batch's rows; ModelError when onnxruntime refused it, _Ended when the child
    ended, was stopped or silent past its time (``child_watch.Deadline``: the request's
    write too) or answered out of step."""
    what = f"{rows} x {width} word pieces"
    deadline = Deadline(proc.pid, reply_seconds(rows, width), what)
    _send(proc, request, deadline)
    got, size = REPLY.unpack(_read(proc, REPLY.size, deadline))
    if got == FAILED and size < 65536:
        raise ModelError(_read(proc, size, deadline).decode("utf-8", "replace"))
    if (got, size) != (rows, dim):
        raise _Ended(f"it answered {got} x {size} for {rows} x {dim}")
    body = _read(proc, rows * dim * 4, deadline)
    return np.frombuffer(body, dtype=np.float32).reshape(rows, dim).copy()


def _send(proc: subprocess.Popen[bytes], data: bytes, deadline: Deadline) -> None:
    """Write ``data`` to the child as its pipe takes it (its end is non-blocking:
    ``_spawn``), never past ``deadline``: a request larger than the pipe blocked for
    good in a write to a stopped child. _Ended (the child killed) when it passes."""
    assert proc.stdin is not None
    view = memoryview(data)
    try:
        fd = proc.stdin.fileno()
        while view:
            if select.select([], [fd], [], deadline.next_wait())[1]:
                with contextlib.suppress(BlockingIOError):
                    view = view[os.write(fd, view) :]
            elif why := deadline.passed():
                proc.kill()
                raise _Ended(why)
    except (OSError, ValueError):  # its end closed (it died), or ours (closed meanwhile)
        raise _ended(proc) from None


def _read(
    proc: subprocess.Popen[bytes], size: int, deadline: Deadline, *, some: bool = False
) -> bytes:
    """``size`` bytes from the child (``some``: whatever has come, at most ``size``);
    _Ended at its end, or when ``deadline`` passes first (it is killed then)."""
    assert proc.stdout is not None
    out = bytearray()
    while len(out) < size:
        try:
            fd = proc.stdout.fileno()
            ready = select.select([fd], [], [], deadline.next_wait())[0]
            chunk = os.read(fd, size - len(out)) if ready else None
        except (OSError, ValueError):  # closed meanwhile (the child let go)
            raise _Ended("its pipe closed") from None
        if chunk is None:
            if why := deadline.passed():
                proc.kill()
                raise _Ended(why)
            continue
        if not chunk:
            raise _ended(proc)
        out += chunk
        if some:
            break
    return bytes(out)


def _ended(proc: subprocess.Popen[bytes]) -> _Ended:
    """Why the child's pipe closed: its exit; an exit status of its own is lasting."""
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return _Ended("its pipe closed")
    if code < 0:
        try:
            return _Ended(f"killed by {signal.Signals(-code).name}")
        except ValueError:
            return _Ended(f"killed by signal {-code}")
    return _Ended(f"exit status {code}", lasting=code != 0)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Close its stdin (it ends when it reads that), kill it if it has not ended within
    a few seconds (stopped, or busy), then close its stdout: a thread reading there has
    had its end of the pipe by then."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    if stopped(proc.pid):  # it would read the end only once continued
        proc.kill()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        with contextlib.suppress(OSError):
            proc.stdout.close()


def _end_all(held: list[subprocess.Popen[bytes]]) -> None:
    while held:
        _end(held.pop())
