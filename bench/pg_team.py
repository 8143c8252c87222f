"""What the team clone benches share (pg_clone_git_look.py, pg_changed_here.py,
pg_clone_cli_search.py): a real PostgreSQL (pgserver) with a fresh schema named in this
process's environment (the hash model); a vault of bench/pg_unkept.py's notes with its
rows in the team's index as a writer's sync leaves them, every time as on a clone (git's:
none as indexed); optionally in git with its upstream as pushed, and a writer holding the
team's lock elsewhere. And the loop they report with: each measure in turn, ``runs``
times, before and after a change made here.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
for _path in (HERE / "tests", HERE / "bench"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from pg_helpers import committed, fresh_schema, git_out, start_server, stop_server  # noqa: E402
from pg_unkept import _index, _vault  # noqa: E402  (the same vault and rows)


def clone_args() -> argparse.Namespace:
    """``--notes`` (100,000), ``--changes`` (50), ``--runs`` (5); memvault's log quiet."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    logging.getLogger("memvault").setLevel(logging.ERROR)
    return parser.parse_args()


@dataclass(frozen=True)
class Team:
    root: Path  # the clone's vault
    dsn: str
    schema: str

    @property
    def env(self) -> dict[str, str]:
        """The team's index settings, as this process has them (for a subprocess's)."""
        return {
            "MEMVAULT_INDEX_STORE": "postgres",
            "MEMVAULT_INDEX_DSN": self.dsn,
            "MEMVAULT_INDEX_SCHEMA": self.schema,
            "MEMVAULT_INDEX_MODEL": "hash",
        }


@contextmanager
def team_clone(name: str, notes: int, *, git: bool = False, writer: bool = False) -> Iterator[Team]:
    """A clone of ``notes`` notes over a fresh schema ``name`` of a server started for it
    (stopped after); ``git``: committed, its upstream as pushed; ``writer``: a writer
    holds the team's lock elsewhere meanwhile."""
    server = start_server()
    try:
        schema = fresh_schema(server, name)
        with tempfile.TemporaryDirectory(prefix=f"{name}-", dir="/tmp") as tmp:
            team = Team(Path(tmp) / "team", str(server.get_uri()), schema)
            os.environ.update(team.env)
            rows = _vault(team.root, notes)
            if git:
                as_pushed(team.root)
            _index(team.dsn, schema, rows, -(10**9))  # times as on a clone: none as indexed
            held = None
            if writer:
                from memvault.index.pg_store import PgStore

                held = PgStore(team.dsn, schema, timeout=60)
                held.take_writer_lock()  # a writer runs elsewhere
            try:
                yield team
            finally:
                if held is not None:
                    held.close()
    finally:
        stop_server(server)


def as_pushed(root: Path) -> None:
    """``root`` committed (``pg_helpers.committed``), its upstream the commit itself: all
    pushed, git's index's stat cache fresh, as after a checkout."""
    committed(root)
    git_out(root, "remote", "add", "origin", "/nonexistent")
    git_out(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    git_out(root, "branch", "-q", "--set-upstream-to=origin/main")
    git_out(root, "status", "-s")


def new_notes(root: Path, count: int, body: str) -> None:
    """``count`` new notes saved here, ``notes/new/x<n>.md``."""
    for n in range(count):
        new = root / f"notes/new/x{n}.md"
        new.parent.mkdir(exist_ok=True)
        new.write_text(f"# X {n}\n\n{body}\n")


def before_and_after(before: str, after: str, change: Callable[[], None]) -> Iterator[str]:
    """``before``, then ``after`` once ``change()`` made it so: what a bench reports on."""
    yield before
    change()
    yield after


def alternated(runs: int, measures: Mapping[str, Callable[[], Any]]) -> dict[str, list[Any]]:
    """Each of ``measures`` ``runs`` times, in turn: a load on the shared machine falls on
    all of them alike."""
    out: dict[str, list[Any]] = {name: [] for name in measures}
    for _ in range(runs):
        for name, measure in measures.items():
            out[name].append(measure())
    return out
