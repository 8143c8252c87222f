"""What naming a clone's own unsynced notes costs a search with no daemon while a writer
runs elsewhere (docs/TEAM.md): git's look (``gitstate.not_pushed``: ``git diff`` from
the merge base with the upstream, ``git ls-files --others``) and the check of those paths
against the team's index (``ChangedHere.say``), against the search itself: the query
open of the vault (``Vault.open(mode="query")``) and one search, in the same run, at
``--notes`` notes, 0 and ``--changes`` notes changed here (half edited, half new); median
of ``--runs``, the looks alternated with the searches. A real server (pgserver); the
index's ``notes`` rows as a writer's sync leaves them, and ``--chunks`` notes' chunks
(a sync of those, hash embedder) so the search finds something; a writer holds the lock.

    PYTHONPATH=CODE/daemon python bench/pg_clone_git_look.py [--notes 100000] [--runs 5]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pg_team import alternated, before_and_after, clone_args, team_clone


def main() -> None:
    args = clone_args()
    from memvault.api import Vault
    from memvault.engine.changed_here import ChangedHere
    from memvault.index.embedder_hash import HashEmbedder
    from memvault.vault.gitstate import not_pushed

    with team_clone("gitlook", args.notes, git=True, writer=True) as team:
        root = team.root

        def search() -> float:
            t0 = time.perf_counter()
            with Vault.open(root, mode="query", embedder=HashEmbedder()) as vault:
                vault.search("river stone market", k=10)
            return time.perf_counter() - t0

        def look() -> tuple[float, float, str | None]:
            t0 = time.perf_counter()
            paths = not_pushed(root) or []
            git = time.perf_counter() - t0
            with Vault.open(root, mode="peek", embedder=HashEmbedder()) as vault:
                changed = ChangedHere()
                changed.noted(p for p in paths if not vault.is_ignored(p))
                t1 = time.perf_counter()
                said = changed.say(vault.engine)
                return git, time.perf_counter() - t1, said

        def change() -> None:
            step = args.notes // max(1, args.changes // 2)
            for n in range(args.changes // 2):  # edited, and new
                i = n * step
                p = root / f"notes/{i // 1000:03d}/n{i}.md"
                p.write_text(p.read_text() + "\nedited here\n")
                (root / f"notes/new/x{n}.md").parent.mkdir(exist_ok=True)
                (root / f"notes/new/x{n}.md").write_text(f"# X {n}\n\nnew here\n")

        changed = f"{args.changes} changed here"
        for label in before_and_after("0 changed here", changed, change):
            times = alternated(args.runs, {"search": search, "look": look})
            looks = times["look"]
            s = statistics.median(times["search"])
            g = statistics.median(x[0] for x in looks)
            c = statistics.median(x[1] for x in looks)
            said = looks[-1][2]
            print(
                f"{args.notes} notes, {label}: the query open + search {s * 1000:.0f} ms; "
                f"git's look {g * 1000:.1f} ms ({g / s:.3f} of it), the check "
                f"{c * 1000:.1f} ms; median of {args.runs}; said: {(said or '')[:120]!r}",
                flush=True,
            )


if __name__ == "__main__":
    main()
