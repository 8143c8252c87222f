"""onnxruntime itself: the session and its options, in this process (``LocalRun``) or
as the model's process (``serve``: ``onnx_run.ChildRun``'s child runs ``main``).

It imports nothing of memvault but ``errors`` (and the standard library's few, numpy,
onnxruntime), so the model's process holds only what running the model needs: the child
that imported ``onnx_run`` (and through it ``onnx_cache``, ``config``, ``model_files``:
hashlib's OpenSSL, tomllib, subprocess, logging) held 4-5 MiB more for as long as it ran
(bench/RESULTS.md, "The model's process and the daemon, byte by byte").

The protocol (``onnx_run``'s module doc): the start line (model path, threads) as JSON,
the answer (the width, or why it cannot load) on a line of its own; then per batch a
``REQUEST`` header and the word pieces and mask (int64, rows x width), a ``REPLY``
header and the pooled float32 rows, or ``FAILED`` and an error message. The model runs
each row alone, cut to its mask (``LocalRun.run``): the batch is only how rows travel.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
from contextlib import suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from memvault.errors import ModelError

if TYPE_CHECKING:
    import onnxruntime

REQUEST = struct.Struct("<IIB")  # rows, width, last batch of an embed call
REPLY = struct.Struct("<II")  # rows, dim; rows == FAILED: an error message of dim bytes
FAILED = 0xFFFFFFFF


class OnnxUnavailable(ModelError):
    """The ONNX backend cannot be used here; the message names the cause and the fix."""


def no_telemetry() -> None:
    """Turn onnxruntime's telemetry off; call before anything imports onnxruntime.

    The Linux wheel's 1DS telemetry writes ``$XDG_CACHE_HOME/Microsoft/DeveloperTools/
    .onnxruntime/{deviceid,onnxruntime.db}`` (a device id, queued "ProcessInfo" events:
    the executable, the OS, the CPU) as soon as the module loads, before any session:
    ``onnxruntime.disable_telemetry_events()`` comes too late to stop those files. Its
    own switch read at load, ``ORT_DISABLE_TELEMETRY=1``, does (onnxruntime 1.32, checked
    with HOME and XDG_CACHE_HOME in a temporary folder). Set for this process and the
    build's child; a module a host program loaded before us is told to send no events."""
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    loaded = sys.modules.get("onnxruntime")
    disable = getattr(loaded, "disable_telemetry_events", None)
    if disable is not None:
        with suppress(Exception):
            disable()


class LocalRun:
    """The model's session in this process."""

    def __init__(self, model_file: Path, threads: int) -> None:
        self.session = _session(model_file, threads)
        self._shrink = _shrink_options()
        self._inputs = {i.name for i in self.session.get_inputs()}
        self._output = self.session.get_outputs()[0].name
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def run(self, ids: np.ndarray, mask: np.ndarray, last: bool) -> np.ndarray:
        """Pooled float32 rows of one batch, each row a session run of its own, cut to its
        mask (its word pieces come first): the int8 graph quantizes a run's activations
        with one scale, so a row run beside others, or padded, would get a vector set by
        them. ``last``: the end of an embed call, after which onnxruntime gives back what
        its arena grew by (``_shrink_options``)."""
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        for row, n in enumerate(mask.sum(axis=1)):
            one = np.ascontiguousarray(ids[row : row + 1, :n])
            feed = {"input_ids": one, "attention_mask": np.ones_like(one)}
            feed["token_type_ids"] = np.zeros_like(one)
            (pooled,) = self.session.run(
                [self._output],
                {k: v for k, v in feed.items() if k in self._inputs},
                self._shrink if last and row == len(ids) - 1 else None,
            )
            out[row] = pooled[0]
        return out

    def close(self) -> None:
        """Nothing to end: the session goes with this object."""


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
    out.write(b"\n" + json.dumps(answer).encode() + b"\n")  # a line of its own
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
