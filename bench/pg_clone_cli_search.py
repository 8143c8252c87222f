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
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(HERE / "bench"), str(HERE / "tests"), str(HERE / "daemon")]

from pg_unkept import _index, _vault  # noqa: E402

MEMVAULT = (sys.executable, "-m", "memvault")


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=a@x", "-c", "user.name=a", *args],
        check=True,
        capture_output=True,
    )


def main() -> None:
    notes, runs, codes = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    from memvault.index.pg_store import PgStore
    from pg_helpers import fresh_schema, start_server, stop_server

    server = start_server()
    try:
        dsn = str(server.get_uri())
        team = {
            "MEMVAULT_INDEX_STORE": "postgres",
            "MEMVAULT_INDEX_DSN": dsn,
            "MEMVAULT_INDEX_SCHEMA": fresh_schema(server, "clisearch"),
            "MEMVAULT_INDEX_MODEL": "hash",
        }
        os.environ.update(team)
        with tempfile.TemporaryDirectory(prefix="clisearch-", dir="/tmp") as tmp:
            root = Path(tmp) / "team"
            rows = _vault(root, notes)
            (root / ".gitignore").write_text(".memvault/*\n!.memvault/config.toml\n")
            for args in (
                ("init", "-q", "-b", "main"),
                ("add", "-A"),
                ("commit", "-qm", "the vault"),
                ("remote", "add", "origin", "/nonexistent"),
                ("update-ref", "refs/remotes/origin/main", "HEAD"),
                ("branch", "-q", "--set-upstream-to=origin/main"),
                ("status", "-s"),
            ):
                _git(root, *args)
            _index(dsn, team["MEMVAULT_INDEX_SCHEMA"], rows, -(10**9))
            writer = PgStore(dsn, team["MEMVAULT_INDEX_SCHEMA"], timeout=60)
            writer.take_writer_lock()  # a writer runs elsewhere
            for label in ("clean", "5 new notes"):
                if label != "clean":
                    for n in range(5):
                        new = root / f"notes/new/x{n}.md"
                        new.parent.mkdir(exist_ok=True)
                        new.write_text(f"# X {n}\n\nriver new\n")
                times: dict[str, list[float]] = {code: [] for code in codes}
                for _ in range(runs):  # alternated
                    for code in codes:
                        t0 = time.perf_counter()
                        subprocess.run(
                            [*MEMVAULT, "search", "river stone market", "--vault", str(root)],
                            env={**os.environ, "PYTHONPATH": f"{code}/daemon"},
                            capture_output=True,
                            check=True,
                        )
                        times[code].append(time.perf_counter() - t0)
                for code in codes:
                    print(
                        f"{notes} notes, {label}, {code}: median "
                        f"{statistics.median(times[code]) * 1000:.0f} ms, "
                        f"min {min(times[code]) * 1000:.0f} ms",
                        flush=True,
                    )
            writer.close()
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
