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

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from pg_unkept import _index, _vault  # the same vault and rows


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=a@x", "-c", "user.name=a", *args],
        check=True,
        capture_output=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    import logging

    logging.getLogger("memvault").setLevel(logging.ERROR)
    from memvault.api import Vault
    from memvault.engine.changed_here import ChangedHere
    from memvault.index.embedder_hash import HashEmbedder
    from memvault.index.pg_store import PgStore
    from memvault.vault.gitstate import not_pushed
    from pg_helpers import fresh_schema, start_server, stop_server

    server = start_server()
    try:
        dsn = str(server.get_uri())
        schema = fresh_schema(server, "gitlook")
        os.environ.update(
            MEMVAULT_INDEX_STORE="postgres",
            MEMVAULT_INDEX_DSN=dsn,
            MEMVAULT_INDEX_SCHEMA=schema,
            MEMVAULT_INDEX_MODEL="hash",
        )
        with tempfile.TemporaryDirectory(prefix="team58-gitlook-", dir="/tmp") as tmp:
            root = Path(tmp) / "team"
            rows = _vault(root, args.notes)
            (root / ".gitignore").write_text(".memvault/*\n!.memvault/config.toml\n")
            _git(root, "init", "-q", "-b", "main")
            _git(root, "add", "-A")
            _git(root, "commit", "-qm", "the vault")
            _git(root, "remote", "add", "origin", "/nonexistent")  # pushed: its upstream
            _git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
            _git(root, "branch", "-q", "--set-upstream-to=origin/main")
            _git(root, "status", "-s")  # the index's stat cache fresh, as after a checkout
            _index(dsn, schema, rows, -(10**9))  # times as on a clone: none as indexed
            writer = PgStore(dsn, schema, timeout=60)
            writer.take_writer_lock()  # a writer runs elsewhere

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

            for label in ("0 changed here", f"{args.changes} changed here"):
                if label != "0 changed here":
                    step = args.notes // max(1, args.changes // 2)
                    for n in range(args.changes // 2):  # edited, and new
                        i = n * step
                        p = root / f"notes/{i // 1000:03d}/n{i}.md"
                        p.write_text(p.read_text() + "\nedited here\n")
                        (root / f"notes/new/x{n}.md").parent.mkdir(exist_ok=True)
                        (root / f"notes/new/x{n}.md").write_text(f"# X {n}\n\nnew here\n")
                searches, gits, says, said = [], [], [], None
                for _ in range(args.runs):  # alternated
                    searches.append(search())
                    git, say, said = look()
                    gits.append(git)
                    says.append(say)
                s, g, c = (statistics.median(x) for x in (searches, gits, says))
                print(
                    f"{args.notes} notes, {label}: the query open + search {s * 1000:.0f} ms; "
                    f"git's look {g * 1000:.1f} ms ({g / s:.3f} of it), the check "
                    f"{c * 1000:.1f} ms; median of {args.runs}; said: {(said or '')[:120]!r}",
                    flush=True,
                )
            writer.close()
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
