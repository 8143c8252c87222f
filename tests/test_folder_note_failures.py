"""A folder note the disk refuses (engine/folder_failures.py): its folder stays due.

Writing a folder note failed for a reason of the disk's, not a person's edit (the disk
full, EACCES or EPERM on the file or its folder, a folder where the note goes): its
folder left the due list, and the folder note stayed stale for good once the cause was
fixed, in the daemon and in a CLI write alike (review 55). Each failure is real I/O: a
file made immutable (``chattr +i``; ``chmod 444`` when not root), a directory in the
note's place, a full tmpfs in a user and mount namespace of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers import (
    DaemonProcess,
    eventually,
    memvault_env,
    new_vault,
    note,
    open_vault,
    run_memvault,
    run_namespaced,
    write,
)

FOLDER_NOTE = "people/people.md"


def _people(root: Path, count: int = 10) -> None:
    """Past the section's limit (8): people/ gets its folder note."""
    for i in range(count):
        write(root, f"people/p{i}.md", note(f"Person {i}", f"p{i}"))


@contextmanager
def frozen(path: Path) -> Iterator[None]:
    """``path`` cannot be replaced: ``chattr +i`` as root (EPERM), ``chmod 444`` else
    (memvault's own refusal of a file with no write permission, EACCES)."""
    root = os.geteuid() == 0
    if root:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    else:
        path.chmod(0o444)
    try:
        yield
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(0o644)


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_ino, st.st_mtime_ns


def _kept(root: Path, vault_status: dict[str, object]) -> list[str]:
    problems = vault_status["problems"]
    assert isinstance(problems, list)
    return [p["path"] for p in problems if p["kind"] == "memory"]


def test_a_folder_note_the_disk_refuses_stays_due_and_is_written_once_it_can(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    _people(root)
    listing = root / FOLDER_NOTE
    with open_vault(root) as vault:
        vault.sync()
        assert "[[people/p9]]" in listing.read_text("utf-8")
        with frozen(listing):
            write(root, "people/p10.md", note("Person 10", "p10"))
            report = vault.sync()
            assert [p.split(" ", 1)[0] for p in report.problems] == [FOLDER_NOTE]
            assert _kept(root, vault.status()) == [FOLDER_NOTE]
            assert "[[people/p10]]" not in listing.read_text("utf-8")
            memory = _stamp(root / "MEMORY.md")
        # the cause gone, and no note changed: the next sync writes it (it was stale
        # for good: its folder had left the due list)
        report = vault.sync()
        assert report.folder_notes_written == (FOLDER_NOTE,)
        assert "[[people/p10]]" in listing.read_text("utf-8")
        assert _kept(root, vault.status()) == []
        assert _stamp(root / "MEMORY.md") == memory  # nothing else written again
        written = _stamp(listing)
        assert vault.sync().folder_notes_written == ()
        assert _stamp(listing) == written


def test_a_folder_where_the_folder_note_goes_fails_no_sync(tmp_path: Path) -> None:
    """A directory named as the folder note: the create found "already exists", which
    failed the whole sync (every sync, the save's included, while it was there)."""
    root = tmp_path / "vault"
    _people(root)
    listing = root / FOLDER_NOTE
    with open_vault(root) as vault:
        vault.sync()
        listing.unlink()
        listing.mkdir()
        write(root, "people/p10.md", note("Person 10", "p10"))
        report = vault.sync()
        assert [p.split(" ", 1)[0] for p in report.problems] == [FOLDER_NOTE]
        assert "a folder or another file is where it goes" in report.problems[0]
        assert vault.search("Person 10")  # the note is indexed all the same
        listing.rmdir()
        vault.sync()
        assert "[[people/p10]]" in listing.read_text("utf-8")
        assert _kept(root, vault.status()) == []


def test_a_cli_write_leaves_a_refused_folder_note_due_for_the_next_command(
    tmp_path: Path,
) -> None:
    """No daemon: the next process took the folder notes as in line (meta
    ``folder_notes`` saved with the refused one as it was), so no command wrote it."""
    root = new_vault(tmp_path)
    _people(root)
    env = memvault_env(tmp_path)
    vault = ("--vault", str(root))
    assert run_memvault("sync", *vault, env=env).returncode == 0
    listing = root / FOLDER_NOTE
    with frozen(listing):
        added = run_memvault("add", "people", "Person 10", "--summary", "p10", *vault, env=env)
        assert added.returncode == 0, added.stderr
        assert "people/people.md left as it was" in added.stderr
        status = run_memvault("status", "--json", *vault, env=env)
        assert _kept(root, json.loads(status.stdout)) == [FOLDER_NOTE]
    assert "person-10" not in listing.read_text("utf-8")
    found = run_memvault("search", "Person", *vault, env=env)  # a read syncs first
    assert found.returncode == 0, found.stderr
    assert "[[people/person-10]]" in listing.read_text("utf-8")
    status = run_memvault("status", "--json", *vault, env=env)
    assert _kept(root, json.loads(status.stdout)) == []


def test_the_daemon_catches_up_a_refused_folder_note_once_it_can(tmp_path: Path) -> None:
    """Through a daemon: the write is the daemon's, its failure in ``status``; once
    the cause is gone the daemon's catch-up writes the folder note, no save needed."""
    root = new_vault(tmp_path)
    _people(root)
    env = memvault_env(tmp_path)
    vault = ("--vault", str(root))
    listing = root / FOLDER_NOTE
    proc = DaemonProcess(tmp_path, root)
    try:
        proc.ready(answering=True)
        eventually(lambda: listing.exists() and "[[people/p9]]" in listing.read_text("utf-8"))
        with frozen(listing):
            added = run_memvault("add", "people", "Person 10", "--summary", "p", *vault, env=env)
            assert added.returncode == 0, added.stderr

            def refused() -> bool:
                status = run_memvault("status", "--json", *vault, env=env)
                return _kept(root, json.loads(status.stdout)) == [FOLDER_NOTE]

            eventually(refused, what="the daemon's status to name the folder note")
            assert "person-10" not in listing.read_text("utf-8")
        eventually(
            lambda: "[[people/person-10]]" in listing.read_text("utf-8"),
            what="the daemon's catch-up to write the folder note",
        )
        status = run_memvault("status", "--json", *vault, env=env)
        assert _kept(root, json.loads(status.stdout)) == []
    finally:
        assert proc.stop() == 0, proc.stderr


FULL_FOLDER = r"""
import json, os, subprocess, sys
from pathlib import Path
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder

root = Path(sys.argv[1])
people = root / "people"
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(people)], check=True)
for i in range(10):
    (people / f"p{i}.md").write_text(f"# Person {i}\n\nAbout {i}.\n", "utf-8")
out = {}
with Vault.open(root, embedder=HashEmbedder()) as v:
    v.sync()
    (people / "p10.md").write_text("# Person 10\n\nAbout 10.\n", "utf-8")
    filler = people / ".filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)  # people/ full, to the last block
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == 28, exc
    os.close(fd)
    try:
        out["problems"] = list(v.sync().problems)
    except OSError as exc:
        out["raised"] = str(exc)
    out["status"] = [p["path"] for p in v.status()["problems"]]
    out["listed_full"] = "[[people/p10]]" in (people / "people.md").read_text("utf-8")
    filler.unlink()  # room again
    out["written"] = list(v.sync().folder_notes_written)
    out["listed"] = "[[people/p10]]" in (people / "people.md").read_text("utf-8")
    out["status_after"] = [p["path"] for p in v.status()["problems"]]
subprocess.run(["umount", str(people)], check=True)
print(json.dumps(out))
"""


def test_a_full_disk_fails_no_sync_and_its_folder_note_is_written_once_there_is_room(
    tmp_path: Path,
) -> None:
    """people/ on a 1 MB tmpfs of its own, filled to the last block once its notes are
    there: the folder note's write met ENOSPC, which failed the whole sync."""
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    (root / ".memvault").mkdir()
    namespace = ["unshare", "--user", "--map-root-user", "--mount"]
    out = run_namespaced(namespace, FULL_FOLDER, str(root), home=tmp_path / "home")
    assert "raised" not in out, out["raised"]
    assert [p.split(" ", 1)[0] for p in out["problems"]] == [FOLDER_NOTE]
    assert "No space left on device" in out["problems"][0]
    assert out["status"] == [FOLDER_NOTE]
    assert not out["listed_full"]
    assert out["written"] == [FOLDER_NOTE] and out["listed"]
    assert out["status_after"] == []


def test_a_refused_folder_note_beside_a_conflicted_memory_md_is_caught_up_by_the_daemon(
    tmp_path: Path,
) -> None:
    """MEMORY.md left untouched (markers that do not pair: a person's conflict), its
    folder notes brought up all the same: one refused there was marked in line with the
    index (meta ``memory_synced``, set before the folder notes' turn), so the daemon's
    catch-up never retried it, and it stayed stale once the cause was gone, until a
    save. Now the catch-up writes it, MEMORY.md still left as the person has it."""
    root = new_vault(tmp_path)
    _people(root)
    env = memvault_env(tmp_path)
    vault = ("--vault", str(root))
    listing, memory = root / FOLDER_NOTE, root / "MEMORY.md"
    proc = DaemonProcess(tmp_path, root)
    try:
        proc.ready(answering=True)
        eventually(lambda: listing.exists() and "[[people/p9]]" in listing.read_text("utf-8"))
        with memory.open("a", encoding="utf-8") as fh:
            fh.write("\n<!-- memvault:begin people -->\nA person's half-resolved conflict.\n")
        conflicted = memory.read_bytes()
        with frozen(listing):
            added = run_memvault("add", "people", "Person 10", "--summary", "p", *vault, env=env)
            assert added.returncode == 0, added.stderr

            def refused() -> bool:
                status = run_memvault("status", "--json", *vault, env=env)
                return FOLDER_NOTE in _kept(root, json.loads(status.stdout))

            eventually(refused, what="the daemon's status to name the folder note")
        eventually(
            lambda: "[[people/person-10]]" in listing.read_text("utf-8"),
            what="the daemon's catch-up to write the folder note",
        )
        assert memory.read_bytes() == conflicted  # the person's, left as it is
    finally:
        assert proc.stop() == 0, proc.stderr
