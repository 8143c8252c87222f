"""A daemon-less CLI search (`memvault search`, a process) on a team clone while a
writer holds the team's lock, several code trees alternated on one vault (rev58team):
the vault and rows of bench/pg_unkept.py, in git with its upstream as pushed, clean and
then with 5 new notes; median of RUNS per tree.

    python bench/pg_clone_cli_search.py NOTES RUNS CODE1 CODE2 ...
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))  # (no PYTHONPATH)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pg_team import alternated, before_and_after, new_notes, team_clone

MEMVAULT = (sys.executable, "-m", "memvault")


def main() -> None:
    notes, runs, codes = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    with team_clone("clisearch", notes, git=True, writer=True) as team:

        def search(code: str) -> float:
            t0 = time.perf_counter()
            subprocess.run(
                [*MEMVAULT, "search", "river stone market", "--vault", str(team.root)],
                env={**os.environ, "PYTHONPATH": f"{code}/daemon"},
                capture_output=True,
                check=True,
            )
            return time.perf_counter() - t0

        change = lambda: new_notes(team.root, 5, "river new")  # noqa: E731
        for label in before_and_after("clean", "5 new notes", change):
            times = alternated(runs, {code: lambda c=code: search(c) for code in codes})
            for code in codes:
                print(
                    f"{notes} notes, {label}, {code}: median "
                    f"{statistics.median(times[code]) * 1000:.0f} ms, "
                    f"min {min(times[code]) * 1000:.0f} ms",
                    flush=True,
                )


if __name__ == "__main__":
    main()
