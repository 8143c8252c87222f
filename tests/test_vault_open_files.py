"""vault/open_files.py and vault/swap.py: memvault never replaces a file another program
still has open for writing, or saved a moment ago, and puts a person's version back
when a writer slipped in between its check and its swap.

Writers are real: a shell holding the file open (``exec 3>``), or a descriptor this
process opens at the exact moment under test.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memvault.errors import FileBusy
from memvault.vault import open_files, swap
from memvault.vault.files import VaultFS


@contextmanager
def shell_holding(path: Path, mode: str) -> Iterator[subprocess.Popen[bytes]]:
    """A shell that opens ``path`` (``>>`` append, ``<>`` read-write, ``<`` read) and
    keeps it open until told to finish (a line on its stdin)."""
    ready = path.parent / f".ready-{os.getpid()}-{threading.get_ident()}"
    script = f'exec 3{mode}"{path}"; : > "{ready}"; read _; exec 3>&-'
    proc = subprocess.Popen(["sh", "-c", script], stdin=subprocess.PIPE)
    try:
        for _ in range(1000):
            if ready.exists():
                break
            threading.Event().wait(0.005)
        assert ready.exists(), "the shell never opened the file"
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)
        ready.unlink(missing_ok=True)


@pytest.mark.parametrize(("mode", "writing"), [(">>", True), ("<>", True), ("<", False)])
def test_a_writer_is_seen_by_the_lease_and_by_proc(
    tmp_path: Path, mode: str, writing: bool
) -> None:
    f = tmp_path / "MEMORY.md"
    f.write_text("# Memory Index\n", encoding="utf-8")
    assert open_files.open_for_writing(f) is False
    assert open_files._scan_proc(f) is False
    with shell_holding(f, mode):
        assert open_files.open_for_writing(f) is writing
        assert open_files._scan_proc(f) is writing
    assert open_files.open_for_writing(f) is False
    assert open_files.open_for_writing(tmp_path / "missing.md") is False


def test_an_update_waits_for_a_writer_to_close_and_builds_on_its_words(tmp_path: Path) -> None:
    f = tmp_path / "MEMORY.md"
    f.write_text("# Memory Index\n", encoding="utf-8")
    fs = VaultFS(tmp_path, quiet_ms=0, busy_wait=30)
    with shell_holding(f, ">>") as shell:
        done: list[tuple[bool, str]] = []
        t = threading.Thread(target=lambda: done.append(fs.update_text("MEMORY.md", str.upper)))
        t.start()
        threading.Event().wait(0.3)
        assert not done  # still waiting: the shell holds the file open
        with open(f, "a", encoding="utf-8") as fh:  # the writer's last words
            fh.write("the tail\n")
        assert shell.stdin is not None
        shell.stdin.write(b"\n")
        shell.stdin.flush()
        t.join(30)
    assert done and done[0][0]
    assert f.read_text(encoding="utf-8") == "# MEMORY INDEX\nTHE TAIL\n"


def test_a_file_held_open_too_long_is_left_alone_with_file_busy(tmp_path: Path) -> None:
    f = tmp_path / "MEMORY.md"
    f.write_text("# Memory Index\n", encoding="utf-8")
    fs = VaultFS(tmp_path, quiet_ms=0, busy_wait=0.2)
    with shell_holding(f, ">>"), pytest.raises(FileBusy, match="open for writing"):
        fs.update_text("MEMORY.md", str.upper)
    assert f.read_text(encoding="utf-8") == "# Memory Index\n"
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]  # no temp file left


def test_a_file_saved_moments_ago_by_someone_else_is_left_alone(tmp_path: Path) -> None:
    f = tmp_path / "n.md"
    f.write_text("v1\n", encoding="utf-8")
    fs = VaultFS(tmp_path, quiet_ms=3_600_000, busy_wait=0.1)
    with pytest.raises(FileBusy, match="saved moments ago"):
        fs.update_text("n.md", str.upper)
    assert f.read_text(encoding="utf-8") == "v1\n"
    os.utime(f, ns=(1, 1))  # long ago
    assert fs.update_text("n.md", str.upper)[0]
    # memvault's own write is not "someone else's" save: the next update goes ahead
    assert fs.update_text("n.md", lambda t: t + "more\n")[0]
    assert f.read_text(encoding="utf-8") == "V1\nmore\n"


def test_a_writer_opening_between_check_and_swap_gets_its_file_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The event order is injected: a writer opens MEMORY.md right after memvault's
    checks and before its swap (the exchange itself is real), then writes its tail."""
    f = tmp_path / "MEMORY.md"
    f.write_text("# Memory Index\n", encoding="utf-8")
    real_exchange = swap.exchange
    held: list[int] = []

    def writer_slips_in(a: Path, b: Path) -> bool:
        if not held and b == f:
            held.append(os.open(f, os.O_WRONLY | os.O_APPEND))
        return real_exchange(a, b)

    monkeypatch.setattr(swap, "exchange", writer_slips_in)
    fs = VaultFS(tmp_path, quiet_ms=0, busy_wait=30)
    done: list[tuple[bool, str]] = []
    t = threading.Thread(target=lambda: done.append(fs.update_text("MEMORY.md", str.upper)))
    t.start()
    for _ in range(1000):
        if held:
            break
        threading.Event().wait(0.005)
    threading.Event().wait(0.1)
    os.write(held[0], b"the tail\n")  # into the file it opened: it must still be MEMORY.md
    os.close(held[0])
    t.join(30)
    assert done and done[0][0]
    assert f.read_text(encoding="utf-8") == "# MEMORY INDEX\nTHE TAIL\n"


def test_notes_dated_in_the_future_are_relinked_without_waiting_for_them_to_settle(
    tmp_path: Path,
) -> None:
    """The clock stepped back (or the notes came from a machine whose clock runs
    ahead): every note's mtime is a day ahead. The compare-and-swap read waited for
    each to be "more than 20 ms old" -- a second a note, then took it anyway: renaming
    a folder linked from 40 such notes took 40 s. (A generous bound: it terminates.)"""
    import os
    import time

    from helpers import open_vault, write

    root = tmp_path / "vault"
    ahead = time.time() + 86_400
    for i in range(40):
        write(root, f"projects/alpha/n{i}.md", f"# Alpha {i}\n")
        linker = write(root, f"people/p{i}.md", f"# P{i}\n\nSee [[projects/alpha/n{i}]].\n")
        os.utime(linker, (ahead, ahead))
    with open_vault(root) as v:
        v.sync()
        (root / "projects" / "alpha").rename(root / "projects" / "beta")
        started = time.monotonic()
        report = v.sync()
        took = time.monotonic() - started
    assert len(report.relinked) == 40
    texts = [(root / f"people/p{i}.md").read_text(encoding="utf-8") for i in range(40)]
    assert all("alpha" not in t and f"[[n{i}]]" in t for i, t in enumerate(texts))
    assert took < 20, f"the relink took {took:.1f} s"
