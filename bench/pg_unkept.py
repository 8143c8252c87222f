"""What ``engine.unkept.say_unkept`` costs a search with no daemon over a team's index in
PostgreSQL that no writer holds, at ``--notes`` notes (a real server, pgserver): the
function alone (its scan of the vault and the index's manifest; wall and CPU time),
and the open of the vault in query mode around it, median of ``--runs``. The index's ``notes`` rows are
put as a writer's sync leaves them (size, time, hash of each file; no chunks: the
function reads no chunk), on "the writer's own copy" (times as indexed) and on "a clone"
(every file's time git's, none as indexed).

    PYTHONPATH=CODE/daemon python bench/pg_unkept.py [--notes 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

WORDS = ["river", "stone", "market", "lantern", "copper", "meadow", "harbor", "signal"]


def _vault(root: Path, count: int) -> list[tuple[str, int, int, str]]:
    from memvault.vault.template import init_vault

    init_vault(root)
    memory = root / "MEMORY.md"  # indexed as any note
    st, data = memory.stat(), memory.read_bytes()
    rows = [("MEMORY.md", st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest())]
    for n in range(count):
        rel = f"notes/{n // 1000:03d}/n{n}.md"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = f"# Note {n}\n\n" + " ".join(WORDS[(n + i) % 8] for i in range(60)) + "\n"
        data = text.encode()
        path.write_bytes(data)
        st = path.stat()
        rows.append((rel, st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest()))
    return rows


def _index(dsn: str, schema: str, rows: list[tuple[str, int, int, str]], shift: int) -> None:
    from memvault.index.pg_store import PgStore
    from memvault.index.store import NoteRow

    store = PgStore(dsn, schema, read_only=False, timeout=60, statement_ms=600_000)
    store.take_writer_lock()
    try:
        with store.transaction() as tx:
            tx.execute("DELETE FROM notes")
            for rel, size, mtime, sha in rows:
                store.put_note(
                    tx,
                    NoteRow(path=rel, size=size, mtime_ns=mtime + shift, sha256=sha, kind="note"),
                )
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    import logging

    logging.getLogger("memvault").setLevel(logging.ERROR)  # what it says: printed once
    from memvault.api import Vault
    from memvault.engine import unkept
    from memvault.index.embedder_hash import HashEmbedder
    from pg_helpers import fresh_schema, start_server, stop_server

    server = start_server()
    try:
        dsn = str(server.get_uri())
        schema = fresh_schema(server, "unkept")
        os.environ.update(
            MEMVAULT_INDEX_STORE="postgres",
            MEMVAULT_INDEX_DSN=dsn,
            MEMVAULT_INDEX_SCHEMA=schema,
            MEMVAULT_INDEX_MODEL="hash",
        )
        with tempfile.TemporaryDirectory(prefix="rev56b-unkept-") as tmp:
            root = Path(tmp) / "team"
            rows = _vault(root, args.notes)
            for copy, shift in (("writer's own copy", 0), ("a clone", -(10**9))):
                _index(dsn, schema, rows, shift)
                alone, cpu, opened, said = [], [], [], None
                for _ in range(args.runs):
                    started = time.perf_counter()
                    with Vault.open(root, mode="query", embedder=HashEmbedder()) as vault:
                        opened.append(time.perf_counter() - started)
                        t0, c0 = time.perf_counter(), time.process_time()
                        said = unkept.say_unkept(vault.engine)
                        alone.append(time.perf_counter() - t0)
                        cpu.append(time.process_time() - c0)
                print(
                    f"{args.notes} notes, {copy}: say_unkept {statistics.median(alone):.3f} s "
                    f"(CPU {statistics.median(cpu):.3f} s), the query open (with it) "
                    f"{statistics.median(opened):.3f} s, median of {args.runs}; said: {said!r}",
                    flush=True,
                )
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
