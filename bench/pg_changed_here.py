"""What a reader daemon's check of the notes its clone changed costs a search or context
(``engine/changed_here.ChangedHere.say``), at ``--notes`` notes with 0 and ``--changes``
notes changed here (half new, half edited), on a real server (pgserver): wall and CPU
time, the first call (the edited notes hashed) and the next ones (hashes remembered by
file and stat), median of ``--runs``. Beside it, in the same run, the baseline it avoids:
``engine.unkept.say_unkept``'s look at the whole vault (a scan and the index's manifest), the
check that speaks while no writer runs. The index's ``notes`` rows are put as a writer's
sync leaves them (size, time, hash of each file; no chunks: neither reads a chunk), every
time as on a clone (git's, none as indexed).

    PYTHONPATH=CODE/daemon python bench/pg_changed_here.py [--notes 100000] [--runs 5]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pg_team import clone_args, team_clone


def _timed(fn, runs: int) -> tuple[float, float, object]:  # type: ignore[no-untyped-def]
    wall, cpu, out = [], [], None
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), out


def main() -> None:
    args = clone_args()
    from memvault.api import Vault
    from memvault.engine import unkept
    from memvault.engine.changed_here import ChangedHere
    from memvault.index.embedder_hash import HashEmbedder

    with team_clone("changedhere", args.notes) as team:
        root = team.root
        with Vault.open(root, mode="peek", embedder=HashEmbedder()) as vault:
            engine = vault.engine
            base = _timed(lambda: unkept.say_unkept(engine), args.runs)
            print(
                f"{args.notes} notes: baseline say_unkept {base[0]:.4f} s (CPU {base[1]:.4f} s)",
                flush=True,
            )
            changed = ChangedHere()
            none = _timed(lambda: changed.say(engine), args.runs)
            print(
                f"{args.notes} notes, 0 changed here: {none[0] * 1000:.3f} ms "
                f"(CPU {none[1] * 1000:.3f} ms), ratio to the baseline "
                f"{none[1] / base[1]:.6f} (CPU)",
                flush=True,
            )
            half = args.changes // 2
            paths = []
            for n in range(half):  # edited here: the index holds the older copy
                rel = f"notes/{n // 1000:03d}/n{n}.md"
                with (root / rel).open("a", encoding="utf-8") as fh:
                    fh.write("\nedited on the clone\n")
                paths.append(rel)
            for n in range(args.changes - half):  # new here: the index lacks them
                rel = f"people/new{n}.md"
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(f"# New {n}\n\nsaved on the clone\n", encoding="utf-8")
                paths.append(rel)
            changed.noted(paths)
            first = _timed(lambda: changed.say(engine), 1)
            steady = _timed(lambda: changed.say(engine), args.runs)
            said = str(steady[2])
            print(
                f"{args.notes} notes, {args.changes} changed here: first "
                f"{first[0] * 1000:.2f} ms (CPU {first[1] * 1000:.2f} ms), then "
                f"{steady[0] * 1000:.2f} ms (CPU {steady[1] * 1000:.2f} ms), ratio to "
                f"the baseline {steady[1] / base[1]:.4f} (CPU); said: {said[:160]!r}",
                flush=True,
            )


if __name__ == "__main__":
    main()
