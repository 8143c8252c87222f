"""A write of the index on a full disk: a clear error, nothing lost.

The first search after `pip install -U` catches the index up (the upgrade made notes
stale) with no daemon; on a full disk its commit failed with Python's traceback and
SQLite's bare "database or disk is full" (exit 1), where an open on a full disk said
``StorageError`` (exit 7, "nothing was deleted"). A write under the store's lock that
meets SQLITE_FULL is ``StorageError`` now (``integrity.Guard``): SQLite rolled it back,
the notes are the person's files, untouched, and the next run with room indexes them.
A real full disk: a tmpfs in a user and mount namespace of its own (no root needed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_on_tmpfs

FULL_DISK_SEARCH = r"""
import errno, json, os, sqlite3, subprocess, sys
from pathlib import Path
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
from memvault.vault.template import init_vault

disk = Path(sys.argv[1])
root = disk / "vault"
init_vault(root)
(root / "people" / "ana.md").write_text("# Ana\n\nRuns ops.\n", "utf-8")
with Vault.open(root, embedder=HashEmbedder()) as v:
    v.sync()
count, size = int(sys.argv[2]), int(sys.argv[3])
words = " ".join(f"word{i} harbour{i % 97} lantern{i % 13}" for i in range(size))
notes = {}
for n in range(count):  # written by a person (or a git pull) while no memvault ran
    path = root / "projects" / f"p{n}.md"
    notes[path] = f"# Project {n}\n\nquokka{n} {words}\n"
    path.write_text(notes[path], "utf-8")
filler = disk / "filler"
fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
os.posix_fallocate(fd, 0, free - 256 * 1024)  # room to open the index, not to write it
os.close(fd)
env = dict(os.environ, MEMVAULT_INDEX_MODEL="hash")
argv = [sys.executable, "-m", "memvault", "search", "quokka7", "--vault", str(root)]
full = subprocess.run(argv, env=env, capture_output=True, text=True)
kept = all(p.read_text("utf-8") == text for p, text in notes.items())
db = sqlite3.connect(root / ".memvault" / "index.db")
check = db.execute("PRAGMA integrity_check").fetchone()[0]
db.close()
filler.unlink()
again = subprocess.run(argv, env=env, capture_output=True, text=True)
print(json.dumps({
    "code": full.returncode, "stderr": full.stderr, "kept": kept, "check": check,
    "again": again.returncode, "hits": again.stdout + again.stderr,
}))
"""


@pytest.mark.parametrize(
    ("count", "size"),
    [
        (400, 120),  # short notes: the commit meets the full disk
        # long ones (10 MB in one transaction, past SQLite's page cache): a statement
        # writing to the WAL before the commit meets it, and SQLite rolls the whole
        # transaction back itself; the store's ROLLBACK after it ("cannot rollback - no
        # transaction is active") hid the full disk: a traceback, exit 1
        (20, 20000),
    ],
)
def test_a_search_catching_up_on_a_full_disk_says_so_and_loses_nothing(
    tmp_path: Path, count: int, size: int
) -> None:
    out = run_on_tmpfs(tmp_path, "64m", FULL_DISK_SEARCH, str(count), str(size))
    assert out["code"] == 7, out["stderr"]  # StorageError's exit, as an open on a full disk
    assert "Traceback" not in out["stderr"], out["stderr"]
    assert "the disk is full" in out["stderr"] and "nothing was deleted" in out["stderr"]
    assert out["kept"]  # the person's notes as they were
    assert out["check"] == "ok"  # the index as it was: nothing written half
    # with room again: indexed, found
    assert out["again"] == 0 and "projects/p7" in out["hits"], out["hits"]
