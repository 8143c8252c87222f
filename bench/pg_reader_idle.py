"""What a reader daemon of a team's index in PostgreSQL costs idle: its CPU time (user
+ system, /proc) and the statements the server answered it (``pg_stat_database``'s
transactions, each of its reads one), over ``--seconds``, after ``--settle`` seconds up.
A real server (pgserver), the daemon a process (`memvault up`) on a clone of the
example vault, another machine's writer holding the lock (a session of this script).
One code a run (PYTHONPATH picks it): compare the code before and after.

    PYTHONPATH=CODE/daemon python bench/pg_reader_idle.py [--seconds 60] [--settle 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _xacts(conn: object, db: str) -> int:
    row = conn.execute(  # type: ignore[attr-defined]
        "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s", (db,)
    ).fetchone()
    return int(row[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--settle", type=float, default=10)
    args = parser.parse_args()
    import psycopg

    from helpers import DaemonProcess, make_vault, open_vault
    from memvault.index import pg_schema
    from pg_helpers import fresh_schema, start_server, stop_server

    server = start_server()
    try:
        dsn = str(server.get_uri())
        settings = {
            "MEMVAULT_INDEX_STORE": "postgres",
            "MEMVAULT_INDEX_DSN": dsn,
            "MEMVAULT_INDEX_SCHEMA": fresh_schema(server, "idle"),
        }
        os.environ.update(settings, MEMVAULT_INDEX_MODEL="hash")
        schema = settings["MEMVAULT_INDEX_SCHEMA"]
        with tempfile.TemporaryDirectory(prefix="rev56b-idle-") as tmp:
            base = Path(tmp)
            root = make_vault(base / "a", "team")
            with open_vault(root) as writer:
                writer.sync()
            copy = base / "b" / "team"
            shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
            (copy / ".memvault").mkdir()
            held = psycopg.connect(dsn, autocommit=True)  # another machine's writer daemon
            held.execute("SELECT set_config('application_name', 'memvault daemon a 4242', false)")
            held.execute("SELECT pg_advisory_lock(%s)", (pg_schema.lock_key(schema, "writer"),))
            held.execute(f'DELETE FROM "{schema}".writer')
            held.execute(
                f'INSERT INTO "{schema}".writer(host, pid, since) VALUES(%s, %s, %s)',
                ("a", 4242, time.time()),
            )
            watch = psycopg.connect(dsn, autocommit=True)
            db = watch.execute("SELECT current_database()").fetchone()[0]
            reader = DaemonProcess(base, copy, "up", str(copy), **settings, MEMVAULT_HOSTNAME="b")
            try:
                reader.ready(answering=True)
                time.sleep(args.settle)
                # this script's own statements (two reads) counted out
                cpu0, x0, t0 = _cpu(reader.proc.pid), _xacts(watch, db), time.monotonic()
                time.sleep(args.seconds)
                cpu1, x1, t1 = _cpu(reader.proc.pid), _xacts(watch, db), time.monotonic()
                assert reader.proc.poll() is None, reader.stderr[-2000:]
                print(
                    f"reader daemon idle {t1 - t0:.0f} s: CPU {cpu1 - cpu0:.2f} s "
                    f"({100 * (cpu1 - cpu0) / (t1 - t0):.2f} %), server transactions "
                    f"{x1 - x0 - 1} ({(x1 - x0 - 1) / (t1 - t0):.2f}/s)",
                    flush=True,
                )
            finally:
                reader.stop()
                held.close()
                watch.close()
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
