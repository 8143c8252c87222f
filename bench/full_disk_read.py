"""A read beside a holder of the writer lock that took it on a full disk, with no room to
write its pid (the lock file left empty), for the code of each ``--code`` checkout.

Each round and code, in a user and mount namespace of its own: a 4 MB tmpfs, a vault of
a few notes synced, the disk filled, a holder that does not let go when asked (a sync, a
CLI write) takes the lock with that code's ``WriterLock``, the room given back; then
one process opens the vault (``mode="read"``) and searches once, ``--reads`` times
after a first (memvault's lazy imports) left out; the median of those times, open to
answer, is reported.

    python bench/full_disk_read.py --code before=/tmp/base --code after=. [--rounds 3]

Before (an unnamed holder): each read waited ``LETS_GO`` (2 s) as for one that lets go.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROUND = r"""
import errno, json, os, subprocess, sys
from pathlib import Path
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
from memvault.vault.template import init_vault

disk, reads = Path(sys.argv[1]), int(sys.argv[2])
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], check=True)
root = disk / "vault"
init_vault(root)
for i in range(20):
    (root / "people" / f"p{i}.md").write_text(f"# P{i}\n\nRuns ops {i}.\n", "utf-8")
with Vault.open(root, embedder=HashEmbedder()) as v:
    v.sync()
filler = disk / "filler"
fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, b"\0" * 4096)
except OSError as exc:
    assert exc.errno == errno.ENOSPC, exc
os.close(fd)
holder = subprocess.Popen([sys.executable, "-c", sys.argv[3], str(root / ".memvault" / "lock")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
assert holder.stdout.readline().strip() == "held"
filler.unlink()
assert (root / ".memvault" / "lock").read_bytes() == b""
done = subprocess.run([sys.executable, "-c", sys.argv[4], str(root), str(reads)],
                      capture_output=True, text=True)
assert done.returncode == 0, done.stderr
times = json.loads(done.stdout)
holder.stdin.close()
holder.wait()
print(json.dumps(times))
"""

HOLD = """
import sys
from pathlib import Path
from memvault.vault.lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
lock.acquire()
print("held", flush=True)
sys.stdin.read()
lock.release()
"""

READ = """
import json, sys, time
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
times = []
for _ in range(int(sys.argv[2]) + 1):  # the first: memvault's lazy imports, left out
    started = time.perf_counter()
    with Vault.open(sys.argv[1], mode="read", embedder=HashEmbedder()) as v:
        assert v.search("ops")
    times.append(time.perf_counter() - started)
print(json.dumps(times[1:]))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--code", action="append", required=True, help="NAME=CHECKOUT")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reads", type=int, default=5)
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/full-disk-read"))
    a = ap.parse_args()
    codes = dict(c.split("=", 1) for c in a.code)
    times: dict[str, list[float]] = {name: [] for name in codes}
    for round_ in range(a.rounds):
        for name, checkout in codes.items():
            disk = a.scratch / f"{name}-{round_}"
            disk.mkdir(parents=True, exist_ok=True)
            env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
            env["PYTHONPATH"] = str(Path(checkout).resolve() / "daemon")
            done = subprocess.run(
                ["unshare", "--user", "--map-root-user", "--mount", sys.executable, "-c",
                 ROUND, str(disk), str(a.reads), HOLD, READ],
                env=env, capture_output=True, text=True,
            )  # fmt: skip
            if done.returncode:
                sys.exit(f"{name}: {done.stderr}")
            row = json.loads(done.stdout.strip().splitlines()[-1])
            times[name] += row
            print(
                f"round {round_ + 1}, {name}: " + ", ".join(f"{t * 1000:.0f}" for t in row) + " ms"
            )
    first = next(iter(codes))
    base = statistics.median(times[first])
    for name, row in times.items():
        median = statistics.median(row)
        print(
            f"{name}: median {median * 1000:.0f} ms of {len(row)} reads ({median / base:.2f}x {first})"
        )


if __name__ == "__main__":
    main()
