"""Without a daemon, CLI writers wait for each other.

Four parallel `memvault log` (an agent's parallel tool calls) saw two exit 6 at once,
"already writing to this vault": the entries were lost. A writer opened without a
daemon now waits, bounded and saying so, for another short-lived writer to let go.
Real processes, the real flock, the hash embedder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import new_vault, open_vault
from memvault.api import Vault
from memvault.backends import LETS_GO
from memvault.errors import LockHeld
from memvault.index.embedder import HashEmbedder
from memvault.vault.lock import STOPPING_FILE, lock_holder

DAEMON_DIR = Path(__file__).resolve().parents[1] / "daemon"


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    base.update(PYTHONPATH=str(DAEMON_DIR), MEMVAULT_INDEX_MODEL="hash", **extra)
    return base


def cli(*args: str, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memvault", *args],
        env=env(**extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


HOLD = """
import select, sys
from pathlib import Path

import pytest
from memvault.vault.lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
lock.acquire()
print("held", flush=True)
select.select([sys.stdin], [], [], float(sys.argv[2]))  # a line on stdin: let go now
lock.release()
"""


def hold_lock(root: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process holding the vault's writer lock (not a daemon) until told to let
    go (a line on its stdin) or for ``seconds``."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root / ".memvault" / "lock"), str(seconds)],
        env=env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def let_go_once_waiting(holder: subprocess.Popen[str], proc: subprocess.Popen[str]) -> str:
    """Read ``proc``'s stderr until it says it waits, then have ``holder`` let go;
    return all ``proc`` said on stderr (it has exited)."""
    assert proc.stderr is not None and holder.stdin is not None
    said = ""
    while "waiting for" not in said and (line := proc.stderr.readline()):
        said += line
    holder.stdin.write("go\n")
    holder.stdin.flush()
    said += proc.stderr.read()
    proc.stderr.close()
    proc.wait(timeout=120)
    return said


def entries(root: Path) -> list[str]:
    (log,) = (root / "logs").glob("*.md")
    return [ln.split(" ", 2)[2] for ln in log.read_text("utf-8").splitlines() if ln[:2] == "- "]


def test_four_parallel_logs_without_a_daemon_all_land(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    procs = [cli("log", f"entry {i}", "--vault", str(root)) for i in range(4)]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    assert [code for code, _, _ in results] == [0, 0, 0, 0], results
    assert sorted(entries(root)) == [f"entry {i}" for i in range(4)]


def test_a_write_waits_for_another_writer_and_says_so(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    holder = hold_lock(root, 60.0)
    try:
        proc = cli("log", "after the sync", "--vault", str(root))
        err = let_go_once_waiting(holder, proc)
        assert proc.stdout is not None
        proc.stdout.close()
    finally:
        holder.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert f"waiting for process {holder.pid}, which is writing to this vault" in err
    assert entries(root) == ["after the sync"]


def test_a_sync_waits_for_a_search_that_is_syncing_first(tmp_path: Path) -> None:
    # a `search` without a daemon takes the lock to sync first; a `sync` started beside
    # it failed with exit 6. The search's hold, made long enough to see, by a holder.
    root = new_vault(tmp_path)
    (root / "people" / "ana.md").write_text("# Ana\n\nRuns ops.\n", "utf-8")
    holder = hold_lock(root, 60.0)
    try:
        proc = cli("sync", "--vault", str(root))
        err = let_go_once_waiting(holder, proc)
        assert proc.stdout is not None
        proc.stdout.close()
    finally:
        holder.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "waiting for process" in err
    with open_vault(root, read_only=True) as v:
        assert v.status()["notes"] == 1


def test_the_wait_is_bounded_and_the_refusal_says_how_long(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    holder = hold_lock(root, 30.0)
    try:
        proc = cli("log", "refused", "--vault", str(root), MEMVAULT_LOCK_WAIT="0.5")
        _, err = proc.communicate(timeout=60)
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    assert proc.returncode == 6, err
    assert "waited 0.5 s" in err and f"process {holder.pid}" in err
    assert not list((root / "logs").glob("*.md"))


def test_a_read_beside_a_writer_does_not_wait(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    (root / "people" / "ana.md").write_text("# Ana\n\nRuns ops.\n", "utf-8")
    with open_vault(root) as v:
        v.sync()
    holder = hold_lock(root, 60.0)
    try:
        proc = cli("search", "ops", "--vault", str(root))
        out, err = proc.communicate(timeout=30)  # far less than a wait of 60 s
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "waiting" not in err and "[[people/ana" in out


@pytest.mark.parametrize("mode", ["read", "query"])
def test_a_read_beside_a_writer_that_does_not_let_go_reads_the_index_at_once(
    tmp_path: Path, mode: str
) -> None:
    # A read waits up to LETS_GO (2 s) only for a holder that lets go when asked (a vault
    # kept between an adapter's calls: memvault/door.py). It waited its 2 s for any
    # holder: a `memvault sync`, a CLI write, an application's open Vault; each search
    # beside one cost 2 s more, said nowhere (a debug line).
    root = new_vault(tmp_path)
    (root / "people" / "ana.md").write_text("# Ana\n\nRuns ops.\n", "utf-8")
    with open_vault(root) as v:
        v.sync()
    holder = hold_lock(root, 60.0)
    try:
        started = time.monotonic()
        with Vault.open(root, mode=mode, embedder=HashEmbedder()) as v:  # type: ignore[arg-type]
            opened = time.monotonic() - started
            assert v.engine.read_only  # the index as it is
            assert [h.path for h in v.search("ops")] == ["people/ana.md"]
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    assert opened < LETS_GO / 2, opened


def test_the_env_handed_to_vault_open_sets_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # open_backend read MEMVAULT_LOCK_WAIT from os.environ, ignoring the env mapping
    # Vault.open takes (as the config does): here the process says wait 30 s, the caller
    # 0.3 s. The holder lets go after 5 s: waiting the process's 30 s, the open succeeded.

    root = new_vault(tmp_path)
    monkeypatch.setenv("MEMVAULT_LOCK_WAIT", "30")
    holder = hold_lock(root, 5.0)
    try:
        with pytest.raises(LockHeld, match=r"waited 0\.3 s"):
            Vault.open(root, embedder=HashEmbedder(), env={"MEMVAULT_LOCK_WAIT": "0.3"})
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    with Vault.open(root, embedder=HashEmbedder(), env={"MEMVAULT_LOCK_WAIT": "0.3"}) as v:
        assert v.status()["notes"] == 0  # the lock let go: the same call opens


HOLD_KEPT = HOLD.replace("lock.acquire()", "lock.acquire(lets_go=True)")


# A holder keeping the vault between calls (memvault/door.py) as it lets go: the lock
# file emptied, the lock not let go yet (release() does that first; before, last). Held
# so, it lets go as a kept vault does, when another process asks (lock.wanted, the line).
HOLD_LETTING_GO = """
import sys, time
from pathlib import Path

from memvault.vault.lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
lock.acquire(lets_go=True)
since = time.time_ns()
lock.path.write_bytes(b"")  # (O_TRUNC: what release() does as it begins)
print("held", flush=True)
end = time.monotonic() + float(sys.argv[2])
while not lock.wanted_since(since) and time.monotonic() < end:
    time.sleep(0.02)
lock.release()
"""


@pytest.mark.parametrize("mode", ["read", "query"])
def test_a_read_finding_the_lock_file_emptied_waits_for_the_holder_letting_go(
    tmp_path: Path, mode: str
) -> None:
    # A flake of test_mcp_door (the CLI search beside an MCP server keeping the vault):
    # the read tried the lock, the server let go, and the read then looked at the lock
    # file, empty, took "no pid named" for a holder that does not let go, gave up with
    # the lock free, and answered from the index as it was, without the note saved since
    # the server's last call, saying nothing (reproduced by a pause of 0.3 s in the read
    # between its try and its look: 3 failures in 3). An empty lock file is a holder
    # letting go (or gone): tried again, within LETS_GO.
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LETTING_GO, str(root / ".memvault" / "lock"), "60"],
        env=env(), stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert lock_holder(root) == holder.pid
        (root / "people" / "tamsin.md").write_text("# Tamsin\n\nRestores clocks.\n", "utf-8")
        with Vault.open(root, mode=mode, embedder=HashEmbedder()) as v:  # type: ignore[arg-type]
            assert not v.engine.read_only  # the lock taken once let go, and synced
            assert [h.path for h in v.search("clocks")] == ["people/tamsin.md"]
    finally:
        holder.kill()
        holder.communicate(timeout=30)


# Another process that keeps the vault between calls (lets_go): takes the lock on the
# line "take", lets go of it on "go"; says "held" and "gone" when done.
TAKES_AND_LETS_GO = """
import sys
from pathlib import Path

from memvault.vault.lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
for line in sys.stdin:
    if line.strip() == "take":
        lock.acquire(lets_go=True)
        print("held", flush=True)
    elif line.strip() == "go":
        lock.release()
        print("gone", flush=True)
"""

# A read's look at the lock (holds_and_keeps), with the other process taking the lock
# ("taking") or letting go of it ("letting go") just as the look reads one of its files:
# at an audit hook on the open of that file, the look itself unchanged. Prints the look.
LOOK_WHILE = """
import os, subprocess, sys
from pathlib import Path

from memvault.vault.lock import LETS_GO_FILE, WriterLock
lock = WriterLock(Path(sys.argv[1]))
other = subprocess.Popen(
    [sys.executable, "-c", sys.argv[3], sys.argv[1]],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
)
def tell(line, answer):
    other.stdin.write(line + "\\n")
    other.stdin.flush()
    assert other.stdout.readline().strip() == answer
when = sys.argv[2]
if when == "letting go":
    tell("take", "held")
seen = []  # the files opened by the look, in order
def hook(event, args):
    if event != "open" or seen == ["done"] or not isinstance(args[0], (str, os.PathLike)):
        return
    name = Path(os.fspath(args[0])).name
    if name not in (lock.path.name, LETS_GO_FILE):
        return
    seen.append(name)
    if when == "letting go" and name == LETS_GO_FILE:  # as the look reads its word
        seen[:] = ["done"]
        tell("go", "gone")
    elif when == "taking" and name == lock.path.name and LETS_GO_FILE in seen:
        seen[:] = ["done"]  # the word read (none), the holder not named yet
        tell("take", "held")
sys.addaudithook(hook)
print(lock.holds_and_keeps(), flush=True)
other.stdin.close()
other.wait()
"""


@pytest.mark.parametrize("when", ["taking", "letting go"])
def test_a_holder_that_lets_go_is_never_taken_for_one_that_keeps_as_it_takes_or_lets_go(
    tmp_path: Path, when: str
) -> None:
    # flake54 read lock.lets-go before the lock file: another process that keeps the
    # vault between calls taking the lock between the two reads (its word not there yet,
    # its pid there since) was taken for a holder that does not let go: the read gave
    # up on it at once and answered from the index as it was (bench/lock_look_race.py:
    # 2 to 206 looks in 87,000 beside a holder taking and letting go in a loop). The
    # holder is named on both sides of its word now; one letting go empties the lock
    # file before it unsays its word (flake54's order, kept).
    root = new_vault(tmp_path)
    look = subprocess.run(
        [sys.executable, "-c", LOOK_WHILE, str(root / ".memvault" / "lock"), when,
         TAKES_AND_LETS_GO],
        env=env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert look.returncode == 0, look.stderr
    assert look.stdout.strip() == "False", look.stderr


def test_a_read_beside_a_kept_vault_not_let_go_in_time_says_what_it_misses_to_the_api(
    tmp_path: Path,
) -> None:
    # A holder that said it lets go and does not (stopped, starved): a read answers from
    # the index as it was after LETS_GO. Its warning went to the log only: an agent using
    # the Python API (or the MCP server's tools, which use it) was not told; Vault.stale.
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    kept = subprocess.Popen(
        [sys.executable, "-c", HOLD_KEPT, str(root / ".memvault" / "lock"), "60"],
        env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert kept.stdout is not None and kept.stdout.readline().strip() == "held"
        with Vault.open(root, mode="read", embedder=HashEmbedder()) as v:  # type: ignore[arg-type]
            assert v.engine.read_only and v.stale is None  # nothing changed: no news
        (root / "people" / "tamsin.md").write_text("# Tamsin\n\nRestores clocks.\n", "utf-8")
        with Vault.open(root, mode="query", embedder=HashEmbedder()) as v:  # type: ignore[arg-type]
            assert v.engine.read_only and v.search("clocks") == []
            assert v.stale is not None
            assert "misses 1 note changed since (people/tamsin.md)" in v.stale, v.stale
            assert f"process {kept.pid} keeps this vault" in v.stale
    finally:
        kept.kill()
        kept.communicate(timeout=30)


def test_a_daemon_starting_waits_for_a_kept_vault_past_lets_go_but_not_for_a_sync(
    tmp_path: Path,
) -> None:
    """`memvault up` beside agents whose vaults are kept between their commands
    (memvault/door.py) waited only LETS_GO (2 s) for the lock, then exited 6: "process N
    is already writing to this vault" (a field test: 1 start in 3 with three agents
    taking turns; an agent's first command, the model loading, can hold it longer). A
    holder that said it lets go when asked is now waited for (up to MEMVAULT_LOCK_WAIT);
    one that did not (a `memvault sync`) still refuses the daemon after LETS_GO."""
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    kept = subprocess.Popen(
        [sys.executable, "-c", HOLD_KEPT, str(root / ".memvault" / "lock"), str(LETS_GO * 2)],
        env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert kept.stdout is not None and kept.stdout.readline().strip() == "held"
    daemon = cli("daemon", "run", "--vault", str(root), "--port", "0")
    try:
        started = time.monotonic()
        while not (root / ".memvault" / "daemon.json").exists() and daemon.poll() is None:
            assert time.monotonic() - started < 60
            time.sleep(0.05)
        assert daemon.poll() is None, daemon.communicate(timeout=30)
        assert time.monotonic() - started >= LETS_GO  # it waited past LETS_GO
    finally:
        daemon.terminate()
        daemon.communicate(timeout=60)
        kept.kill()
        kept.communicate(timeout=30)
    holder = hold_lock(root, 60.0)  # a writer that does not say it lets go
    try:
        started = time.monotonic()
        refused = cli("daemon", "run", "--vault", str(root), "--port", "0")
        _, err = refused.communicate(timeout=60)
        assert refused.returncode == 6, err
        assert time.monotonic() - started < LETS_GO * 4, err
        assert re.search(r"\(waited 2(\.\d)? s\)", err), err  # what it waited, not 60 s
    finally:
        holder.kill()
        holder.communicate(timeout=30)


def test_a_stopping_daemon_is_said_stopping_and_a_daemon_starting_waits_for_it(
    tmp_path: Path,
) -> None:
    """daemon.json goes first thing in a stop, the lock held while the daemon finishes
    its batch and saves: `memvault daemon status` then said "no memvault daemon is
    running", and a daemon started then gave up after LETS_GO (exit 6, "process N is
    already writing"). Now status says it stops (exit 1: it serves no more), and a daemon
    starting waits for it, saying so, then serves. The first daemon is frozen (SIGSTOP)
    in that window, once daemon.json is gone, so the window stays open."""
    import signal

    root = new_vault(tmp_path)
    for i in range(300):
        (root / "people" / f"p{i:04}.md").write_text(f"# P{i}\n\nabout topic {i}\n", "utf-8")
    first = cli("daemon", "run", "--vault", str(root), "--port", "0")
    runfile = root / ".memvault" / "daemon.json"
    second = None
    try:
        started = time.monotonic()
        while not runfile.exists():
            assert first.poll() is None and time.monotonic() - started < 60
            time.sleep(0.02)
        first.send_signal(signal.SIGTERM)
        while runfile.exists():
            time.sleep(0.001)
        first.send_signal(signal.SIGSTOP)  # in its stop, the lock still held
        assert lock_holder(root) == first.pid, "it stopped before it could be frozen"
        said = cli("daemon", "status", "--vault", str(root))
        out, err = said.communicate(timeout=60)
        assert said.returncode == 1, out + err
        assert f"stopping: pid {first.pid}, still saving" in out, out + err
        as_json = cli("daemon", "status", "--vault", str(root), "--json")
        data = json.loads(as_json.communicate(timeout=60)[0])
        assert data["running"] is False and data["stopping"] is True, data
        assert data["pid"] == first.pid
        # a second `daemon stop` waits for it to end (it said "no daemon is running")
        stopper = cli("daemon", "stop", "--vault", str(root), "--timeout", "120")
        second = cli("daemon", "run", "--vault", str(root), "--port", "0")
        waiting = f"waiting for the memvault daemon (pid {first.pid}), which is stopping"
        time.sleep(LETS_GO * 2)  # past the LETS_GO it gave any other holder
        assert second.poll() is None, second.communicate(timeout=30)
        assert stopper.poll() is None, stopper.communicate(timeout=30)
        first.send_signal(signal.SIGCONT)
        assert first.wait(60) == 0
        out, err = stopper.communicate(timeout=60)
        assert stopper.returncode == 0 and f"stopped (pid {first.pid})" in out, out + err
        started = time.monotonic()
        while (info := runfile_pid(root)) != second.pid:
            assert second.poll() is None, second.communicate(timeout=30)
            assert time.monotonic() - started < 60, info
            time.sleep(0.05)
        assert not (root / ".memvault" / STOPPING_FILE).exists()
        second.terminate()
        _, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert waiting in err, err
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.kill()
                process.communicate(timeout=30)
        first.communicate(timeout=30)


def runfile_pid(root: Path) -> int | None:
    from memvault.vault import runfile

    info = runfile.running(root)
    return None if info is None else info.pid
