"""A process killed (kill -9, the OOM killer) while it opens the vector index: the full
hnswlib file ``VectorIndex._load`` puts together in the temp folder (every live vector:
~0.8 GB at 100,000 notes; on a tmpfs /tmp, RAM) must not stay there for good. Found by
the review of 0fcb838..49c9285: the file is deleted only in a ``finally``, which a kill
never runs, and nothing deletes it after.

Real hnswlib, real files, a real SIGKILL of a real process."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

from memvault.index.vectors import VectorIndex, VectorsWanted

DIM = 384
N = 40_000  # the assembled file: ~60 MB, long enough to write for a kill to land in it

OPEN = textwrap.dedent(
    """
    import sys
    import numpy as np
    from memvault.index.vectors import VectorIndex, VectorsWanted
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal(({n}, {dim})).astype(np.float16).astype(np.float32)
    index = VectorIndex(sys.argv[1], {dim}, m=8, ef_construction=40)
    index.open(VectorsWanted(sys.argv[2], range({n}), lambda labels: vectors[list(labels)]))
    print("opened", flush=True)
    """
).format(n=N, dim=DIM)


def _assembled(tmpdir: Path) -> list[Path]:
    return sorted(tmpdir.glob("memvault-vectors-*"))


def test_a_kill_while_the_index_opens_leaves_no_full_file_once_it_opens_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state" / "vectors.bin"
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((N, DIM)).astype(np.float16).astype(np.float32)
    index = VectorIndex(path, DIM, m=8, ef_construction=40)
    index.open(VectorsWanted(None, range(N), lambda labels: vectors[list(labels)]))
    sha = index.save()
    assert sha == hashlib.sha256(path.read_bytes()).hexdigest()

    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir), PYTHONPATH=os.pathsep.join(sys.path))
    script = tmp_path / "open.py"
    script.write_text(OPEN, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(script), str(path), sha], env=env, stdout=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while not _assembled(tmpdir):  # the open is putting the full file together
            assert proc.poll() is None, "the open ended before its temp file was seen"
            assert time.monotonic() < deadline, "no temp file seen"
            time.sleep(0.001)
        proc.kill()  # SIGKILL: no finally runs
    finally:
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    assert _assembled(tmpdir), "killed after the file was made: it is there"

    # the next open (the daemon restarted, the next CLI search) leaves none behind
    again = subprocess.run(
        [sys.executable, str(script), str(path), sha], env=env, capture_output=True, timeout=300
    )
    assert again.returncode == 0 and b"opened" in again.stdout, again.stderr[-2000:]
    left = _assembled(tmpdir)
    assert not left, f"{len(left)} full vector files of killed opens left in the temp folder"
