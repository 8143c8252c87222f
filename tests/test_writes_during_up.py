"""A write while `up` first indexes waits and lands (in part).

`memvault log "x"` while `up` indexed a big folder (minutes before it served) exited 6
"process N is already writing". The write now waits for the writer lock, saying so,
and goes to the daemon as soon as it serves (vault/lock.py's bounded wait; the
structure lane still runs before `up` serves). Real `up` and `log` processes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import note, write

DAEMON_DIR = Path(__file__).resolve().parents[1] / "daemon"


@pytest.mark.slow
def test_a_log_during_ups_first_indexing_waits_and_lands(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(1500):
        write(root, f"notes/n{i:04}.md", note(f"Note {i}", body=f"Paragraph about topic {i}."))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(PYTHONPATH=str(DAEMON_DIR), MEMVAULT_INDEX_MODEL="hash")
    up = subprocess.Popen(
        [sys.executable, "-m", "memvault", "up", str(root), "--port", "0"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (root / ".memvault" / "index.db").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        logged = subprocess.run(
            [sys.executable, "-m", "memvault", "log", "while up indexes", "--vault", str(root)],
            env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
    finally:
        up.send_signal(signal.SIGTERM)
        try:
            up.wait(30)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()
    assert logged.returncode == 0, logged.stderr
    logs = [p.read_text(encoding="utf-8") for p in (root / "logs").glob("*.md")]
    assert any("while up indexes" in text for text in logs)
