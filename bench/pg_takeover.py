"""How long the writer's lock of a team's index outlives a writer machine gone without a
word (power cut, cable pulled), until another machine's writer takes it (docs/TEAM.md,
"Faults"). A real server on 127.0.0.1 (pgserver, restarted on TCP); the writer's
sessions close without a FIN (TCP_REPAIR: root on Linux), so the server hears of it only
from a keepalive probe, which the gone machine's kernel answers with a reset.

    python bench/pg_takeover.py [--rounds 3] [--off]

``--off``: without memvault's per-session keepalives (the code before), the server's
kernel default (2 h on Linux): the run gives up at ``--limit`` seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--off", action="store_true")
    parser.add_argument("--limit", type=float, default=40.0)
    args = parser.parse_args()
    import memvault.index.pg_conn as pg_conn
    from memvault.errors import LockHeld
    from memvault.index.pg_store import PgStore
    from pg_helpers import start_tcp_server, stop_server, vanish

    if args.off:
        pg_conn.SERVER_KEEPALIVES = ""
    server, port = start_tcp_server()
    dsn = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    took: list[float] = []
    try:
        for _ in range(args.rounds):
            os.environ["MEMVAULT_HOSTNAME"] = "build-01"
            writer = PgStore(dsn, "takeover")
            writer.take_writer_lock()
            time.sleep(1)  # an idle writer, as a daemon between saves
            vanish(writer._writer.conn)
            vanish(writer._pg.conn)
            started = time.monotonic()
            os.environ["MEMVAULT_HOSTNAME"] = "laptop-02"
            while True:
                other = PgStore(dsn, "takeover")
                try:
                    other.take_writer_lock()
                    took.append(time.monotonic() - started)
                    break
                except LockHeld:
                    if time.monotonic() - started > args.limit:
                        took.append(float("inf"))
                        break
                    time.sleep(0.2)
                finally:
                    other.close()
            writer.close()
    finally:
        stop_server(server)
    shown = ", ".join(f"{t:.2f}" for t in took)
    print(f"keepalives {'off' if args.off else 'on'}: taken over after {shown} s "
          f"(median {statistics.median(took):.2f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
