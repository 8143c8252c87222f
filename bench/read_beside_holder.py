"""What a read (`memvault search`, and `Vault.open(mode="read")` in a process) costs
beside another process on the vault: an idle daemon (the read goes through it), and a
writer that does not let go when asked (a `memvault sync`: the read gives up on it at
once and reads the index as it is), for two codes, their processes alternating.

flake54 changed how a read judges the holder (``WriterLock.holds_and_keeps``: lock.lets-go
read before the lock file; an empty lock file waited on, not given up on): a read must
still answer at once beside a daemon and beside a writer that does not let go.

    python bench/read_beside_holder.py --base OLD/daemon --code daemon [--rounds 7]

Prints, per case and code, the median wall time of a CLI search (process start
included) and of one in-process open for a read (20 opens a process, after one to warm).
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

OPENS = """
import sys, time
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
Vault.open(sys.argv[1], mode="read", embedder=HashEmbedder()).close()
took = []
for _ in range(20):
    t = time.perf_counter()
    Vault.open(sys.argv[1], mode="read", embedder=HashEmbedder()).close()
    took.append(time.perf_counter() - t)
took.sort()
print(took[len(took) // 2])
"""

HOLD = """
import sys
from pathlib import Path
from memvault.vault.lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
lock.acquire()
print("held", flush=True)
sys.stdin.readline()
lock.release()
"""


def env_for(code: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(PYTHONPATH=str(code), MEMVAULT_INDEX_MODEL="hash")
    return env


def cli_search(code: Path, root: Path) -> float:
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memvault", "search", "--vault", str(root), "--json", "Sarah"],
        env=env_for(code),
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - t
    assert done.returncode == 0 and "sarah" in done.stdout.lower(), done.stderr
    return took


def opens(code: Path, root: Path) -> float:
    out = subprocess.run(
        [sys.executable, "-c", OPENS, str(root)],
        env=env_for(code),
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip())


def measure(codes: dict[str, Path], root: Path, rounds: int, in_process: bool) -> None:
    cli: dict[str, list[float]] = {name: [] for name in codes}
    inproc: dict[str, list[float]] = {name: [] for name in codes}
    for n in range(rounds):
        order = list(codes.items())
        for name, code in order if n % 2 else order[::-1]:  # alternating, first by turns
            cli[name].append(cli_search(code, root))
            if in_process:
                inproc[name].append(opens(code, root))
    for name in codes:
        line = f"  {name}: CLI search p50 {statistics.median(cli[name]) * 1000:.0f} ms"
        if in_process:
            line += f", open for a read p50 {statistics.median(inproc[name]) * 1000:.2f} ms"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=Path, required=True, help="the older code's daemon/ dir")
    ap.add_argument("--code", type=Path, required=True, help="this code's daemon/ dir")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    codes = {"base": args.base.resolve(), "code": args.code.resolve()}
    with tempfile.TemporaryDirectory(prefix="read-beside-") as tmp:
        root = Path(tmp) / "vault"
        env = env_for(codes["code"])
        subprocess.run(
            [sys.executable, "-m", "memvault", "init", str(root), "--example"],
            env=env,
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [sys.executable, "-m", "memvault", "sync", "--vault", str(root)],
            env=env,
            check=True,
            capture_output=True,
        )
        daemon = subprocess.Popen(
            [sys.executable, "-m", "memvault", "daemon", "run", "--vault", str(root)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            started = time.monotonic()
            while not (root / ".memvault" / "daemon.json").exists():
                assert daemon.poll() is None and time.monotonic() - started < 120
                time.sleep(0.1)
            time.sleep(2)  # its first sync done, idle
            print("beside an idle daemon (the read goes through it):")
            measure(codes, root, args.rounds, in_process=False)
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(root / ".memvault" / "lock")],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None and holder.stdin is not None
        try:
            assert holder.stdout.readline().strip() == "held"
            print("beside a writer that does not let go (the index read as it is):")
            measure(codes, root, args.rounds, in_process=True)
        finally:
            holder.stdin.write("go\n")
            holder.stdin.close()
            holder.wait(timeout=60)


if __name__ == "__main__":
    main()
