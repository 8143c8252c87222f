"""Writes are served from the first second of `memvault up`.

`up` used to index the whole folder before it served: `memvault log "x"` meanwhile
waited for the writer lock and, past ``MEMVAULT_LOCK_WAIT`` (60 s), exited 6. Now
`up` serves at once and the first index is the daemon's start-up reconcile, which
steps aside between its batches: a write lands within a batch, while the first index
goes on. Real `up` and `log` processes, the hash embedder, thousands of notes.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import daemon_idle, eventually, note, write

DAEMON_DIR = Path(__file__).resolve().parents[1] / "daemon"
NOTES = 6000  # a first index that takes a while even on a quick machine


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(PYTHONPATH=str(DAEMON_DIR), MEMVAULT_INDEX_MODEL="hash")
    return env


def _indexed(root: Path) -> int:
    """Notes in the index now (read beside the daemon: SQLite in WAL mode)."""
    try:
        with sqlite3.connect(f"file:{root / '.memvault' / 'index.db'}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT COUNT(*) FROM notes WHERE kind = 'note'").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


def _memvault(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memvault", *args],
        env=_env(), capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


@pytest.mark.slow
def test_a_log_during_ups_first_index_lands_while_the_index_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(NOTES):
        write(root, f"people/p{i:05}.md", note(f"Person {i}", body=f"Paragraph about topic {i}."))
    up = subprocess.Popen(
        [sys.executable, "-m", "memvault", "up", str(root), "--port", "0"],
        env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        eventually(lambda: (root / ".memvault" / "index.db").exists(), what="up to open the vault")
        logged = _memvault("log", "while up indexes", "--vault", str(root))
        # landed while the first index was still running: it did not wait for all of it
        indexed_then = _indexed(root)
        assert logged.returncode == 0, logged.stderr
        assert indexed_then < NOTES, (
            f"the log returned only after the first index ({indexed_then} notes indexed)"
        )
        logs = [p.read_text(encoding="utf-8") for p in (root / "logs").glob("*.md")]
        assert any("while up indexes" in text for text in logs)
        # the first index finishes, and MEMORY.md is what a fresh index of the files writes
        eventually(lambda: _indexed(root) >= NOTES + 1, 300, "the first index to finish", 0.2)

        def settled() -> bool:
            status = _memvault("status", "--vault", str(root), "--json", timeout=60)
            if status.returncode != 0:
                return False
            import json

            data = json.loads(status.stdout)
            daemon = data.get("daemon") or {}
            return bool(
                data["index"]["matches_disk"]
                and daemon_idle(daemon)
                and not daemon.get("reconciling")
            )

        eventually(settled, 300, "the daemon to settle", 0.5)
    finally:
        up.send_signal(signal.SIGTERM)
        try:
            _, err = up.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            up.kill()
            _, err = up.communicate()
    assert up.returncode == 0, err
    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns(".memvault"))
    (fresh / ".memvault").mkdir()  # its settings only: a fresh index of the same files
    shutil.copy(root / ".memvault" / "config.toml", fresh / ".memvault" / "config.toml")
    rebuilt = _memvault("sync", "--vault", str(fresh), timeout=600)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == (fresh / "MEMORY.md").read_text(
        encoding="utf-8"
    )
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "[[logs/" in memory, memory  # the log written during the first index is listed


def test_a_write_as_up_stops_mid_index_waits_for_it_rather_than_failing(tmp_path: Path) -> None:
    """`memvault up` stopped (Ctrl-C) while it indexes finishes its batch in hand before it
    lets go. daemon.json used to name it all that while after it stopped answering: a
    field test's agents got "cannot reach the daemon ... Connection refused" (7 of their
    commands in one stop). daemon.json now goes before the daemon stops answering: a
    client finding it there finds the daemon answering, and a write opened after it went
    waits for the lock and lands."""
    import json
    import socket
    import threading

    root = tmp_path / "many"
    for i in range(3000):
        write(root, f"people/p{i:05}.md", note(f"Person {i}", body=f"Paragraph about topic {i}."))
    up = subprocess.Popen(
        [sys.executable, "-m", "memvault", "up", str(root), "--port", "0"],
        env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    runfile = root / ".memvault" / "daemon.json"
    refused: list[str] = []
    looks = [0]

    def look() -> None:  # as a client does: daemon.json, then a connection to its port
        while up.poll() is None:
            try:
                port = int(json.loads(runfile.read_text(encoding="utf-8"))["port"])
            except (OSError, ValueError, KeyError):
                continue
            looks[0] += 1
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
            except ConnectionRefusedError:
                if runfile.exists():  # still named when it no longer answers
                    refused.append(f"port {port} refused with daemon.json there")

    try:
        eventually(runfile.exists, 60, "up to serve", 0.05)
        eventually(lambda: _indexed(root) > 0, 120, "the first index to begin", 0.05)
        looker = threading.Thread(target=look)
        looker.start()
        eventually(lambda: looks[0] > 0, 60, "the client to find the daemon", 0.01)
        up.send_signal(signal.SIGINT)
        logged = _memvault("log", "as up stops", "--vault", str(root), timeout=120)
        looker.join(60)
        _, err = up.communicate(timeout=60)
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert up.returncode == 0, err
    assert looks[0] > 0
    assert refused == []
    assert logged.returncode == 0, logged.stdout + logged.stderr
    logs = [p.read_text(encoding="utf-8") for p in (root / "logs").glob("*.md")]
    assert any("as up stops" in text for text in logs)
