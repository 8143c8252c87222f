"""CLI writes with a daemon up (issue 11.10, issue 13): one `memvault log`, and a burst.

    python bench/first_day.py                       # this checkout
    python bench/first_day.py --code /tmp/old/daemon --runs 15 --burst 200 --parallel 50

Everything runs as subprocesses of the code under ``--code`` (a ``daemon/`` folder),
so two versions are measured the same way. A `memvault daemon run` serves a vault
made with the example notes (hash embedder by default: the CLI and daemon overhead,
not the model's time). Reported:

- ``log``: wall time of one `memvault log` process, median and p90 of ``--runs``
  (sequential; the daemon idle between them);
- ``burst``: ``--burst`` `memvault log` processes, ``--parallel`` at a time: how many
  exited 0, how many entries landed in the day's log (each must land once), and the
  wall time of the whole burst.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", type=Path, default=ROOT / "daemon", help="the daemon/ folder to run")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--burst", type=int, default=200)
    ap.add_argument("--parallel", type=int, default=50)
    ap.add_argument("--model", default="hash", help="index.model for the daemon (hash: no model)")
    args = ap.parse_args()

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(PYTHONPATH=str(args.code.resolve()), MEMVAULT_INDEX_MODEL=args.model)

    def memvault(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memvault", *argv],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    with tempfile.TemporaryDirectory(prefix="memvault-first-day-") as tmp:
        root = Path(tmp) / "vault"
        made = memvault("init", str(root), "--example")
        if made.returncode != 0:  # code without `init --example` lays the examples anyway
            made = memvault("init", str(root))
        assert made.returncode == 0, made.stderr
        daemon = subprocess.Popen(
            [sys.executable, "-m", "memvault", "daemon", "run", "--vault", str(root)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 120
            while not (root / ".memvault" / "daemon.json").exists():
                assert time.monotonic() < deadline and daemon.poll() is None, "no daemon"
                time.sleep(0.1)
            time.sleep(2.0)  # the start-up reconcile and warm-up

            times = []
            for i in range(args.runs):
                started = time.perf_counter()
                r = memvault("log", f"sequential entry {i}", "--vault", str(root))
                times.append(time.perf_counter() - started)
                assert r.returncode == 0, r.stderr
            times.sort()

            def one(i: int) -> int:
                r = memvault("log", f"burst entry {i:04} done", "--vault", str(root))
                return r.returncode

            started = time.perf_counter()
            with ThreadPoolExecutor(args.parallel) as pool:
                codes = list(pool.map(one, range(args.burst)))
            burst_seconds = time.perf_counter() - started
            text = "".join(p.read_text(encoding="utf-8") for p in (root / "logs").glob("*.md"))
            landed = [text.count(f"burst entry {i:04} done") for i in range(args.burst)]
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(30)

    print(
        json.dumps(
            {
                "code": str(args.code),
                "log_seconds": {
                    "median": round(statistics.median(times), 3),
                    "p90": round(times[int(0.9 * (len(times) - 1))], 3),
                    "runs": args.runs,
                },
                "burst": {
                    "processes": args.burst,
                    "parallel": args.parallel,
                    "exit_0": codes.count(0),
                    "exit_codes": {str(c): codes.count(c) for c in sorted(set(codes))},
                    "landed_once": landed.count(1),
                    "landed_twice_or_more": sum(1 for n in landed if n > 1),
                    "seconds": round(burst_seconds, 1),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
