"""The writer lock taken on a full disk: its holder named all the same.

A holder that takes the lock with no room to write its pid left the lock file empty, a
holder no read could name: each read beside it waited ``LETS_GO`` (2 s) as for one that
lets go when asked, then read the index as it was. It is named by the file's time now
(``lock.named_pid``), which takes no block. A real full disk: a tmpfs in a user and mount
namespace of its own (no root needed outside it).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from helpers import run_on_tmpfs
from memvault.vault.lock import named_pid

NOW_NS = time.time_ns()


@pytest.mark.parametrize(
    ("text", "mtime_ns", "pid"),
    [
        (b"4242\n", NOW_NS, 4242),  # written
        (b"4242\n", -7 * 10**9, 4242),  # written: the text wins
        (b"", -4242 * 10**9, 4242),  # no room to write it: the time names it
        (b"", NOW_NS, None),  # no holder, or one letting go (it empties the file first)
        (b"", 0, None),
        (b"", -4242 * 10**9 + 1, None),  # not a time a holder sets
        (b"", 4242 * 10**9, None),  # a clock at 1970 (a board without one): no name
        (b"x\n", -4242 * 10**9, None),
    ],
)
def test_the_lock_file_names_its_holder_by_text_or_by_its_time(
    text: bytes, mtime_ns: int, pid: int | None
) -> None:
    assert named_pid(text, mtime_ns) == pid


FULL_DISK_HOLDER = r"""
import errno, json, os, subprocess, sys
from pathlib import Path
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
from memvault.vault.lock import WriterLock, lock_holder
from memvault.vault.template import init_vault

disk = Path(sys.argv[1])
root = disk / "vault"
init_vault(root)
(root / "people" / "ana.md").write_text("# Ana\n\nRuns ops.\n", "utf-8")
with Vault.open(root, embedder=HashEmbedder()) as v:
    v.sync()
filler = disk / "filler"
fd = os.open(filler, os.O_WRONLY | os.O_CREAT)  # the disk full, to the last block
try:
    while True:
        os.write(fd, b"\0" * 4096)
except OSError as exc:
    assert exc.errno == errno.ENOSPC, exc
os.close(fd)
holder = subprocess.Popen(  # a holder that does not let go when asked (a sync, a CLI write)
    [sys.executable, "-c", sys.argv[2], str(root / ".memvault" / "lock")],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
)
assert holder.stdout.readline().strip() == "held"
filler.unlink()  # room again; the holder took the lock without it
lock = WriterLock(root / ".memvault" / "lock")
out = {
    "holder": holder.pid,
    "kernel": lock_holder(root),
    "text": lock.path.read_text("ascii"),
    "named": lock.holder_pid(),
    "keeps": lock.holds_and_keeps(),
}
said = []
with Vault.open(root, mode="read", embedder=HashEmbedder(), on_wait=said.append) as v:
    out["read_only"] = v.engine.read_only
    out["hits"] = [h.path for h in v.search("ops")]
out["said"] = said
holder.stdin.close()
holder.wait()
print(json.dumps(out))
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


def test_a_read_beside_a_holder_that_had_no_room_for_its_pid_does_not_wait(
    tmp_path: Path,
) -> None:
    out = run_on_tmpfs(tmp_path, "4m", FULL_DISK_HOLDER, HOLD)
    assert out["kernel"] == out["holder"]  # it holds the lock ...
    assert out["text"] == ""  # ... with no room for its pid
    assert out["named"] == out["holder"] and out["keeps"]
    # the read gave up on it at once, as on any holder that does not let go when asked:
    # it never waited (it says so once when it does), and read the index as it is
    assert out["said"] == [], out["said"]
    assert out["read_only"] and out["hits"] == ["people/ana.md"]
