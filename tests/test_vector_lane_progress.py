"""The vector lane's progress counts the whole catch-up, not each step from zero.

The daemon's lane runs ``Engine.embed_pending(steps=1)`` again and again; each step
reported '32/N chunks given vectors', so the daemon's log and ``/status`` showed a
first index of 40,000 chunks stuck at 32 (found by the review of 0fcb838..49c9285).
A real vault (hash embedder), the real lane thread."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from helpers import open_vault, write
from memvault.engine.embedding import PENDING_BATCH
from memvault.service.vector_lane import VectorLane


def test_the_lanes_progress_grows_step_by_step_to_what_was_pending(tmp_path: Path) -> None:
    root = tmp_path / "v"
    for i in range(60):
        write(
            root, f"notes/n{i:02}.md", f"# Note {i}\n\nFirst part {i}.\n\n## More\n\nSecond {i}.\n"
        )
    seen: list[Any] = []
    idle = threading.Event()
    with open_vault(root) as v:
        v.sync(vectors=False)
        pending, _ = v.pending_vectors()
        assert pending > 2 * PENDING_BATCH  # several steps
        lane = VectorLane(v, on_progress=seen.append, on_idle=idle.set)
        lane.start()
        lane.wake()
        assert idle.wait(60)
        assert lane.stop(30)
        assert v.pending_vectors()[0] == 0
    steps = [p for p in seen if p.stage == "vectors"]
    assert len(steps) >= 3
    done = [p.done for p in steps]
    assert done == sorted(done) and len(set(done)) == len(done), done  # it grows
    assert steps[-1].done == steps[-1].total == pending
    assert steps[-1].embedded == pending  # the hash embedder embeds every new chunk
