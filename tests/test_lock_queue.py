"""Processes waiting for a vault's writer lock take it in the order they came
(vault/lock_queue.py): three or more, a dead or hung one among them, a line that
cannot be kept. Real processes, the real flock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault.vault.lock_queue import HUNG, QUEUE_DIR, Seen, Ticket, waiting_ahead

DAEMON_DIR = Path(__file__).resolve().parents[1] / "daemon"


@pytest.mark.parametrize(
    ("mine", "tickets", "seen", "now", "ahead"),
    [
        (None, [], {}, 0.0, False),  # no one waits
        (None, [Ticket(3, 7)], {}, 0.0, True),  # without a ticket: anyone waiting
        (3, [Ticket(3, 7), Ticket(5, 7)], {}, 0.0, False),  # only later ones
        (5, [Ticket(3, 7)], {}, 0.0, True),
        (5, [Ticket(3, 7)], {3: Seen(7, 0.0)}, HUNG - 0.1, True),  # untouched, not yet hung
        (5, [Ticket(3, 7)], {3: Seen(7, 0.0)}, HUNG + 0.1, False),  # hung: passed over
        (5, [Ticket(3, 8)], {3: Seen(7, 0.0)}, HUNG + 0.1, True),  # touched: alive again
    ],
)
def test_who_waits_ahead(
    mine: int | None, tickets: list[Ticket], seen: dict[int, Seen], now: float, ahead: bool
) -> None:
    assert waiting_ahead(mine, tickets, seen, now)[0] is ahead


def test_a_ticket_new_to_a_looker_is_as_old_as_its_mtime() -> None:
    stale, fresh = Ticket(3, 0), Ticket(4, int(10e9))
    wall = int((HUNG + 1) * 1e9)
    assert waiting_ahead(None, [stale], {}, 50.0, wall_ns=wall)[0] is False
    assert waiting_ahead(None, [stale, fresh], {}, 50.0, wall_ns=wall)[0] is True
    # seen before: its own watch counts, not the mtime
    assert waiting_ahead(None, [stale], {3: Seen(0, 49.0)}, 50.0, wall_ns=wall)[0] is True


def test_what_was_seen_keeps_when_a_ticket_last_changed() -> None:
    _, seen = waiting_ahead(None, [Ticket(1, 5), Ticket(2, 5)], {1: Seen(5, 1.0)}, 9.0)
    assert seen == {1: Seen(5, 1.0), 2: Seen(5, 9.0)}
    _, seen = waiting_ahead(None, [Ticket(1, 6)], seen, 10.0)
    assert seen == {1: Seen(6, 10.0)}  # a ticket gone is forgotten


def _env() -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    return {**base, "PYTHONPATH": str(DAEMON_DIR)}


# Waits (60 s) for the lock, saying "waiting" on stdout once it waits; once it has it,
# appends its name to the log, holds it ``hold`` seconds (or until a line on stdin).
WAITER = """
import sys, time
from pathlib import Path
from memvault.vault.lock import WriterLock

lock_path, log, name, hold = sys.argv[1], Path(sys.argv[2]), sys.argv[3], float(sys.argv[4])
lock = WriterLock(Path(lock_path))
lock.acquire(60.0, on_wait=lambda _: print("waiting", flush=True))
with log.open("a") as fh:
    fh.write(name + "\\n")
print("held", flush=True)
if hold < 0:
    sys.stdin.readline()
else:
    time.sleep(hold)
lock.release()
"""


def _waiter(root: Path, name: str, hold: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WAITER, str(root / "lock"), str(root / "log"), name, str(hold)],
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _said(proc: subprocess.Popen[str], word: str) -> None:
    assert proc.stdout is not None and proc.stdout.readline().strip() == word


def _line_up(root: Path, names: list[str]) -> tuple[subprocess.Popen[str], list]:
    """A holder (until a line on its stdin), then waiters for ``names``, each started once
    the one before waits."""
    holder = _waiter(root, "holder", -1)
    _said(holder, "held")
    waiters = []
    for name in names:
        waiters.append(_waiter(root, name, 0.2))
        _said(waiters[-1], "waiting")
    return holder, waiters


def _taken(root: Path) -> list[str]:
    return (root / "log").read_text().split()[1:]  # after the holder's


def test_waiters_take_the_lock_in_the_order_they_came(tmp_path: Path) -> None:
    # before: whichever polled first after a let-go took it (5 waiters: 1 chance in 120)
    holder, waiters = _line_up(tmp_path, ["w1", "w2", "w3", "w4", "w5"])
    holder.communicate("go\n", timeout=30)
    for proc in waiters:
        proc.communicate(timeout=120)
    assert _taken(tmp_path) == ["w1", "w2", "w3", "w4", "w5"]
    assert os.listdir(tmp_path / QUEUE_DIR) == []  # each took its ticket away


def test_a_dead_or_hung_waiter_does_not_hold_up_the_others(tmp_path: Path) -> None:
    holder, waiters = _line_up(tmp_path, ["w1", "killed", "w3", "stopped", "w5", "w6"])
    killed, stopped = waiters[1], waiters[3]
    killed.kill()  # its ticket stays, its flock goes
    killed.communicate(timeout=30)
    os.kill(stopped.pid, signal.SIGSTOP)  # its ticket stays locked, no longer touched
    try:
        holder.communicate("go\n", timeout=30)
        for proc in (waiters[0], waiters[2], waiters[4], waiters[5]):
            proc.communicate(timeout=120)  # before HUNG: w5 and w6 waited for it
    finally:
        os.kill(stopped.pid, signal.SIGCONT)
    stopped.communicate(timeout=120)
    assert _taken(tmp_path) == ["w1", "w3", "w5", "w6", "stopped"]
    assert os.listdir(tmp_path / QUEUE_DIR) == []  # the dead one's removed by the others


def test_a_line_that_cannot_be_kept_leaves_the_waiters_racing_as_before(
    tmp_path: Path,
) -> None:
    (tmp_path / QUEUE_DIR).write_text("")  # no folder can be made there (a full disk...)
    holder, waiters = _line_up(tmp_path, ["w1", "w2"])
    holder.communicate("go\n", timeout=30)
    for proc in waiters:
        proc.communicate(timeout=120)
    assert sorted(_taken(tmp_path)) == ["w1", "w2"]


# Takes the lock ``rounds`` times back to back, holding it 50 ms each time; prints the
# most takes by others seen while it waited once.
HOG = """
import sys, time
from pathlib import Path
from memvault.vault.lock import WriterLock

lock_path, log, name, rounds, go = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), Path(sys.argv[5])
while not go.exists():
    time.sleep(0.01)
lock, worst = WriterLock(Path(lock_path)), 0
for _ in range(rounds):
    before = len(log.read_text().splitlines())
    lock.acquire(60.0)
    after = log.read_text().splitlines()[before:]
    worst = max(worst, sum(1 for who in after if who != name))
    with log.open("a") as fh:
        fh.write(name + "\\n")
    time.sleep(0.05)
    lock.release()
print(worst)
"""


def test_a_process_taking_the_lock_again_at_once_goes_behind_those_waiting(
    tmp_path: Path,
) -> None:
    # three processes each taking the lock 10 times back to back: before, the one letting
    # go took it again at once (the others poll every 50 ms) and a waiter saw 9 or 10
    # takes by the others; in turn, each other process goes at most once before it
    (tmp_path / "log").write_text("")
    go, names, rounds = tmp_path / "go", ["a", "b", "c"], 10
    lock, log = str(tmp_path / "lock"), str(tmp_path / "log")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", HOG, lock, log, name, str(rounds), str(go)],
            env=_env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    time.sleep(0.5)  # the three started (a late one only waits longer to go)
    go.touch()
    worst = [int(p.communicate(timeout=180)[0]) for p in procs]
    assert sorted((tmp_path / "log").read_text().split()) == sorted(names * rounds)
    # in turn: 2 (the other two); a generous bound for a loaded machine
    assert max(worst) <= 4, worst


def _held_ticket(folder: Path) -> bool:
    """Whether a ticket in ``folder`` is flocked by its waiter."""
    import fcntl

    for name in os.listdir(folder) if folder.is_dir() else []:
        fd = os.open(folder / name, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)
    return False


def test_a_hung_waiter_does_not_keep_the_free_lock_from_an_opener_new_to_the_line(
    tmp_path: Path,
) -> None:
    # A CLI write waiting its turn, then stopped (Ctrl-Z): its ticket stays flocked and
    # untouched. Before, an opener that had not watched it for HUNG seconds itself took
    # it for a live waiter: the lock free, a read's try (wait 0) found it "held" and a
    # daemon starting (2 s, backends.LETS_GO) exited 6, for as long as it stayed stopped.
    from memvault.vault.lock import WriterLock

    holder, [stopped] = _line_up(tmp_path, ["stopped"])
    deadline = time.monotonic() + 60
    while not _held_ticket(tmp_path / QUEUE_DIR):  # "waiting" is said before the ticket
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(stopped.pid, signal.SIGSTOP)
    try:
        holder.communicate("go\n", timeout=30)
        time.sleep(HUNG + 1)  # its ticket untouched since longer than HUNG
        for wait in (0.0, 2.0):  # a read; a daemon starting
            lock = WriterLock(tmp_path / "lock")
            lock.acquire(wait, on_wait=lambda _: None)  # before: LockHeld
            lock.release()
    finally:
        os.kill(stopped.pid, signal.SIGCONT)
    stopped.communicate(timeout=120)
    assert _taken(tmp_path) == ["stopped"]


def test_a_stray_file_in_the_line_is_no_ticket(tmp_path: Path) -> None:
    """Files in ``lock.queue/`` that are no ticket of memvault's (a superscript two and
    an Arabic-Indic three pass ``str.isdigit``; a sync tool's copy) neither raise in
    every acquire nor hold anyone up."""
    from memvault.vault.lock import WriterLock

    state = tmp_path / ".memvault"
    line = state / QUEUE_DIR
    line.mkdir(parents=True)
    for name in ("²", "٣", "7 (conflicted copy)", "notes.txt"):
        (line / name).write_text("x")
    lock = WriterLock(state / "lock")
    lock.acquire(0.0)
    lock.release()
    assert not lock.wanted_since(0)  # no one waits
