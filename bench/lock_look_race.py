"""How often a read's look at the writer lock takes a holder that lets go when asked for
one that keeps it (``WriterLock.holds_and_keeps``), while such a holder takes and lets go
of the lock in a loop (an MCP server's calls, memvault/door.py, at their fastest).

Every True is wrong here: the one holder said lock.lets-go each time it took the lock. A
read giving up on it answers from the index as it was (rev54c review of flake54). Also
counted, for comparison: the same look with the lock file read on both sides of
lock.lets-go (the pid, lock.lets-go, the pid again: a holder named twice and never said).

    PYTHONPATH=daemon python bench/lock_look_race.py [--seconds 9]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memvault.vault.lock import LETS_GO_FILE, WriterLock, _pid_in

HOLDER = """
import sys, time
from pathlib import Path
from memvault.vault.lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    lock.acquire(1.0, lets_go=True)
    lock.release()
"""


def named_twice(lock: WriterLock) -> bool:
    first = lock.holder_pid()
    said = _pid_in(lock.path.with_name(LETS_GO_FILE))
    return first is not None and lock.holder_pid() == first and said != first


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=9.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lock-look-") as tmp:
        path = Path(tmp) / ".memvault" / "lock"
        path.parent.mkdir()
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(args.seconds + 1)])
        lock = WriterLock(path)
        looks = wrong = wrong_twice = 0
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            looks += 1
            wrong += lock.holds_and_keeps()
            wrong_twice += named_twice(lock)
        holder.wait()
    print(f"looks {looks}: holds_and_keeps wrongly True {wrong}; named twice {wrong_twice}")


if __name__ == "__main__":
    main()
