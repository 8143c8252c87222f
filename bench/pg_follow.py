"""What a read-only ``Vault``'s look at its writer's schema version costs a search
(``pg_writer.follow_when_due``: at most one query every ``FOLLOW_SECONDS``), on a real
server (pgserver): ``--notes`` notes synced by a writer (hash embedder), then searched
``--searches`` times by a reader opened in this process, with the look as shipped (every
2 s), with a look before every statement a search reads by (``FOLLOW_SECONDS = 0``: the
cost the gate avoids), and
with none (the baseline: the code before), interleaved, median per search; and the look
alone.

    PYTHONPATH=CODE/daemon python bench/pg_follow.py [--notes 2000] [--searches 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

WORDS = ["river", "stone", "market", "lantern", "copper", "meadow", "harbor", "signal"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--searches", type=int, default=200)
    args = parser.parse_args()
    import logging

    logging.getLogger("memvault").setLevel(logging.ERROR)
    from memvault.api import Vault
    from memvault.index import pg_writer
    from memvault.index.embedder_hash import HashEmbedder
    from memvault.vault.template import init_vault
    from pg_helpers import fresh_schema, start_server, stop_server

    server = start_server()
    try:
        schema = fresh_schema(server, "follow")
        os.environ.update(
            MEMVAULT_INDEX_STORE="postgres",
            MEMVAULT_INDEX_DSN=str(server.get_uri()),
            MEMVAULT_INDEX_SCHEMA=schema,
            MEMVAULT_INDEX_MODEL="hash",
        )
        with tempfile.TemporaryDirectory(prefix="team57-follow-") as tmp:
            root = Path(tmp) / "team"
            init_vault(root)
            for n in range(args.notes):
                path = root / f"notes/{n // 500:03d}/n{n}.md"
                path.parent.mkdir(parents=True, exist_ok=True)
                words = " ".join(WORDS[(n * 7 + i) % 8] for i in range(40))
                path.write_text(f"# Note {n}\n\n{words} n{n}\n", encoding="utf-8")
            with Vault.open(root, embedder=HashEmbedder()) as writer:
                writer.sync()
            with Vault.open(root, mode="peek", embedder=HashEmbedder()) as reader:
                store = reader.engine.store
                shipped, each, none = [], [], []
                hook = store._pg.before_read
                for i in range(args.searches):
                    query = f"{WORDS[i % 8]} {WORDS[(i + 3) % 8]} n{i}"
                    for every, times in ((pg_writer.FOLLOW_SECONDS, shipped), (0.0, each)):
                        pg_writer.FOLLOW_SECONDS = every
                        t0 = time.perf_counter()
                        reader.search(query, k=10)
                        times.append(time.perf_counter() - t0)
                        pg_writer.FOLLOW_SECONDS = 2.0
                    store._pg.before_read, store._followed_at = None, float("inf")
                    t0 = time.perf_counter()
                    reader.search(query, k=10)
                    none.append(time.perf_counter() - t0)
                    store._pg.before_read, store._followed_at = hook, time.monotonic()
                look = []
                for _ in range(args.searches):
                    t0 = time.perf_counter()
                    store.follow_writer()
                    look.append(time.perf_counter() - t0)
            base = statistics.median(none)
            for name, times in (
                ("no look (before)", none),
                ("a look every 2 s (shipped)", shipped),
                ("a look before every read (FOLLOW_SECONDS 0)", each),
            ):
                med = statistics.median(times)
                print(
                    f"{args.notes} notes, {name}: {med * 1000:.3f} ms a search, "
                    f"ratio {med / base:.3f}",
                    flush=True,
                )
            print(f"the look alone: {statistics.median(look) * 1000:.3f} ms", flush=True)
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
