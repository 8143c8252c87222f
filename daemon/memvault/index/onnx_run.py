"""Running the int8 graph: in this process, or in a process of its own.

- ``LocalRun``: the onnxruntime session here. A short-lived call (the CLI, a script)
  runs the model this way: a child would add its start (~0.15 s) for nothing.
- ``ChildRun``: the session in a child process, for the daemon. Letting an idle model
  go ends that process, and all that onnxruntime held goes with it: its library's
  pages and what its session leaves allocated once freed, ~35 MiB that a daemon kept
  in-process after letting the model go (bench/RESULTS.md, "The model in a process of
  its own"). A child that dies (killed, out of memory) is started again for the batch
  once; twice in a row is an error. Its start fails as ``LocalRun``'s would, with
  ``OnnxUnavailable`` and the same message (the caller falls back to PyTorch).

Both take the same batches (``run``: word pieces and mask, int64, rows x width) and
give the pooled rows, so a vector is the same whichever ran it. The child
(``python -m memvault.index.onnx_run``) reads the model's path and threads as one
JSON line on its stdin and answers its vectors' width (or why it cannot load); then,
per batch, a header (rows, width, last of its call) and the two int64 arrays in,
(rows, dim) and float32 rows out, or an error frame. It ends when its stdin closes:
the parent let it go, or died.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from memvault.errors import ModelError
from memvault.index.onnx_cache import OnnxUnavailable, no_telemetry

if TYPE_CHECKING:
    import onnxruntime

log = logging.getLogger("memvault")

REQUEST = struct.Struct("<IIB")  # rows, width, last batch of an embed call
REPLY = struct.Struct("<II")  # rows, dim; rows == FAILED: an error message of dim bytes
FAILED = 0xFFFFFFFF
START_TIMEOUT = 120.0  # seconds for the child to load the model (a busy machine: seconds)
# glibc's mmap threshold fixed as the daemon fixes its own (service/heap.py): the arena
# regions onnxruntime frees go back to the system, not into malloc's arenas
CHILD_ENV = {"MALLOC_MMAP_THRESHOLD_": str(512 * 1024)}


class LocalRun:
    """The model's session in this process."""

    def __init__(self, model_file: Path, threads: int) -> None:
        self.session = _session(model_file, threads)
        self._shrink = _shrink_options()
        self._inputs = {i.name for i in self.session.get_inputs()}
        self._output = self.session.get_outputs()[0].name
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def run(self, ids: np.ndarray, mask: np.ndarray, last: bool) -> np.ndarray:
        """Pooled float32 rows of one batch; ``last``: the end of an embed call, after
        which onnxruntime gives back what its arena grew by (``_shrink_options``)."""
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (pooled,) = self.session.run(
            [self._output],
            {k: v for k, v in feed.items() if k in self._inputs},
            self._shrink if last else None,
        )
        return np.asarray(pooled, dtype=np.float32)

    def close(self) -> None:
        """Nothing to end: the session goes with this object."""


class ChildRun:
    """The model's session in a child process (the module doc); thread-safe."""

    def __init__(self, model_file: Path, threads: int) -> None:
        self._start_line = json.dumps({"model": str(model_file.resolve()), "threads": threads})
        self._lock = threading.Lock()
        self._held: list[subprocess.Popen[bytes]] = []  # the running child, if any
        self._ends = weakref.finalize(self, _end_all, self._held)
        with self._lock:
            self.dim = self._child()[1]

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
            for attempt in (1, 2):
                proc, _ = self._child()
                try:
                    return _ask(proc, request)
                except _Ended as ended:
                    _end(self._held.pop())
                    if attempt == 2:
                        raise ModelError(
                            f"the embedding model's process ended twice in a row ({ended}); "
                            "is the machine out of memory?"
                        ) from None
                    log.warning(
                        "the embedding model's process ended (%s); starting it again", ended
                    )
        raise AssertionError("unreachable")

    def close(self) -> None:
        """End the child; the next ``run`` starts another."""
        with self._lock:
            _end_all(self._held)

    def _child(self) -> tuple[subprocess.Popen[bytes], int]:
        """The running child, started if none runs; its vectors' width."""
        if self._held:
            return self._held[0], self.dim
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        env = {
            **os.environ,
            **CHILD_ENV,
            "ORT_DISABLE_TELEMETRY": "1",
            "PYTHONPATH": package_root + (os.pathsep + path if path else ""),
        }
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "memvault.index.onnx_run"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        try:
            dim = _hello(proc, self._start_line)
        except BaseException:
            _end(proc)
            raise
        self._held.append(proc)
        return proc, dim


def open_run(model_file: Path, threads: int, *, apart: bool) -> LocalRun | ChildRun:
    """The model's session: apart if asked and a process can be started here, else in
    this process (said: the model then works, only its memory stays when let go)."""
    if apart:
        try:
            return ChildRun(model_file, threads)
        except OSError as exc:  # no process can be started: no interpreter, a limit
            log.warning(
                "the embedding model runs inside this process: a process of its own "
                "cannot be started (%s)",
                exc,
            )
            import_onnxruntime()
    return LocalRun(model_file, threads)


class _Ended(Exception):
    """The child is gone (its pipe closed): why, as far as can be told."""


def _hello(proc: subprocess.Popen[bytes], start_line: str) -> int:
    """Send the start line, read the answer: the width, or OnnxUnavailable(why). Lines
    before it are passed over (whatever wrote to stdout as Python started: a site's
    customisation, say); read from the descriptor itself, so nothing after is buffered."""
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(start_line.encode() + b"\n")
        proc.stdin.flush()
    except OSError:
        pass  # it died at once: its exit status says how, below
    fd, seen = proc.stdout.fileno(), b""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        while b"\n" not in seen:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise OnnxUnavailable(
                    f"the model's process did not start within {START_TIMEOUT:.0f} s"
                )
            chunk = os.read(fd, 65536)
            if not chunk:
                raise OnnxUnavailable(f"the model's process could not start ({_how(proc)})")
            seen += chunk
        line, seen = seen.split(b"\n", 1)
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if isinstance(answer, dict) and isinstance(answer.get("dim"), int):
            return int(answer["dim"])
        if isinstance(answer, dict) and isinstance(answer.get("error"), str):
            raise OnnxUnavailable(answer["error"])
        log.debug("the model's process wrote %r", line[:200])


def _ask(proc: subprocess.Popen[bytes], request: bytes) -> np.ndarray:
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(request)
        proc.stdin.flush()
    except OSError:
        raise _Ended(_how(proc)) from None
    head = proc.stdout.read(REPLY.size)
    if len(head) < REPLY.size:
        raise _Ended(_how(proc))
    rows, dim = REPLY.unpack(head)
    if rows == FAILED:
        raise ModelError(proc.stdout.read(dim).decode("utf-8", "replace"))
    body = proc.stdout.read(rows * dim * 4)
    if len(body) < rows * dim * 4:
        raise _Ended(_how(proc))
    return np.frombuffer(body, dtype=np.float32).reshape(rows, dim).copy()


def _how(proc: subprocess.Popen[bytes]) -> str:
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return "its pipe closed"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Close its stdin (it ends when it reads that), wait a little, then kill."""
    for pipe in (proc.stdin, proc.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _end_all(held: list[subprocess.Popen[bytes]]) -> None:
    while held:
        _end(held.pop())


# --- onnxruntime itself (imported only where a session runs) ----------------------------------


def import_onnxruntime() -> None:
    """Import onnxruntime, telemetry off; OnnxUnavailable saying how to fix a failure."""
    no_telemetry()  # before the import: the module writes its telemetry files as it loads
    try:
        import onnxruntime  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "onnxruntime":
            raise OnnxUnavailable(
                "onnxruntime is not installed (pip install onnxruntime)"
            ) from None
        raise OnnxUnavailable(_cannot_load(exc)) from None
    except Exception as exc:  # a broken install, a missing system library, an old CPU
        raise OnnxUnavailable(_cannot_load(exc)) from None


def _cannot_load(exc: BaseException) -> str:
    return (
        f"onnxruntime cannot be loaded on this machine ({type(exc).__name__}: {exc}); "
        'reinstall it (pip install --force-reinstall onnxruntime) or set index.backend = "torch"'
    )


def _shrink_options() -> onnxruntime.RunOptions:
    """Options for an embed call's last run: onnxruntime then gives back what its CPU arena
    grew by during the call (else it keeps its largest call's memory for the session's
    life: ~25 MB more a daemon held for good after a catch-up, bench/RESULTS.md)."""
    import onnxruntime

    options = onnxruntime.RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return options


def _session(model_file: Path, threads: int) -> onnxruntime.InferenceSession:
    no_telemetry()
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only: onnxruntime's warnings would garble the CLI
    # Idle pool threads sleep instead of spinning: on two cores shared with other work
    # (load ~4) spinning halved throughput (22-26 vs 46-47 texts/s) and tripled query
    # latency (6.5-6.9 vs 2.6-2.8 ms), interleaved in one process (bench/RESULTS.md).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return onnxruntime.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # any failure to load is the same to the user
        raise OnnxUnavailable(
            f"onnxruntime cannot load {model_file} ({exc}); delete it to have it rebuilt, "
            "or update onnxruntime"
        ) from None


# --- the child -------------------------------------------------------------------------


def serve(inp: IO[bytes], out: IO[bytes]) -> int:
    """The child's loop (the module doc); 0 when its stdin closes."""
    line = inp.readline()
    if not line:
        return 0
    try:
        args = json.loads(line)
        import_onnxruntime()
        local = LocalRun(Path(args["model"]), int(args["threads"]))
    except OnnxUnavailable as exc:
        return _say(out, {"error": str(exc)})
    except Exception as exc:  # a bad start line: the parent's bug, said as such
        return _say(out, {"error": f"the model's process could not start: {exc!r}"})
    _say(out, {"dim": local.dim})
    while True:
        head = inp.read(REQUEST.size)
        if len(head) < REQUEST.size:
            return 0
        rows, width, last = REQUEST.unpack(head)
        size = rows * width * 8
        ids, mask = inp.read(size), inp.read(size)
        if len(mask) < size:
            return 0
        try:
            pooled = local.run(
                np.frombuffer(ids, dtype=np.int64).reshape(rows, width),
                np.frombuffer(mask, dtype=np.int64).reshape(rows, width),
                bool(last),
            )
        except Exception as exc:  # onnxruntime's error on this batch: the caller's to raise
            message = f"onnxruntime failed on a batch: {exc}".encode()
            out.write(REPLY.pack(FAILED, len(message)) + message)
        else:
            out.write(REPLY.pack(*pooled.shape) + np.ascontiguousarray(pooled).tobytes())
        out.flush()


def _say(out: IO[bytes], answer: dict[str, object]) -> int:
    out.write(json.dumps(answer).encode() + b"\n")
    out.flush()
    return 0


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it ends us
    # the replies get a descriptor of their own; whatever else writes to stdout, Python
    # or a native library, goes to stderr instead of into the channel
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        return serve(sys.stdin.buffer, out)
    except BrokenPipeError:  # the parent went away mid-reply
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
