"""Faults: kill -9 at random moments, and 10,000 files at once. Slow; CI runs them.

Each kill run is cheap (a small vault, the hash embedder, 30 ms debounce, vectors
saved after every sync) so that kills land mid-embedding, mid-transaction,
mid-vector-save and mid-MEMORY.md-write across the runs.
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers import (
    DaemonProcess,
    daemon_idle,
    eventually,
    make_vault,
    note,
    open_vault,
    rebuilt_snapshot,
    snapshot,
)
from memvault.core.memory_md import parse_blocks
from memvault.vault.files import TEMP_MARK

KILL_RUNS = 50
CHECK_EVERY = 10

pytestmark = pytest.mark.slow


def status(info: dict[str, Any]) -> dict[str, Any]:
    r = httpx.get(
        f"http://127.0.0.1:{info['port']}/status",
        trust_env=False,
        timeout=60,
        headers={"Authorization": f"Bearer {info['token']}"},
    )
    r.raise_for_status()
    data: dict[str, Any] = r.json()
    return data


def temp_files(root: Path) -> list[str]:
    return [
        os.path.join(d, n)
        for d, _, names in os.walk(root)
        for n in names
        if TEMP_MARK in n or ".daemon.json.tmp-" in n
    ]


def assert_memory_whole(root: Path) -> None:
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert text.startswith("# Memory Index") and text.endswith("\n"), text[-200:]
    names = {b.name for b in parse_blocks(text.split("\n"))}
    # (topics: the root's section names the topics/ folder its notes are in)
    assert names in ({"projects", "people", "decisions", "logs"} | t for t in ({"topics"}, set()))


def burst(rng: random.Random, root: Path, run: int) -> None:
    """Creates, edits, renames and a delete, the way an editor or git would."""
    folders = ["people", "projects", "decisions", "topics"]
    existing = sorted(
        p for f in folders for p in (root / f).glob("*.md") if p.stem != p.parent.name
    )
    for i in range(rng.randint(4, 12)):
        kind = rng.random()
        if kind < 0.4 or len(existing) < 5:
            folder = rng.choice(folders)
            path = root / folder / f"r{run}-{i}.md"
            path.parent.mkdir(exist_ok=True)
            path.write_text(
                note(
                    f"Run {run} note {i}",
                    f"made in run {run}",
                    "\n\n".join(f"Para {j} of run {run}." for j in range(3)),
                ),
                encoding="utf-8",
            )
            existing.append(path)
        elif kind < 0.7:
            path = rng.choice(existing)
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"\nEdited in run {run}.\n")
        elif kind < 0.9:
            path = existing.pop(rng.randrange(len(existing)))
            os.rename(path, path.with_name(f"m{run}-{i}-{path.name}"))
            existing.append(path.with_name(f"m{run}-{i}-{path.name}"))
        else:
            existing.pop(rng.randrange(len(existing))).unlink()
    if len(existing) > 40:  # keep every run cheap
        for path in existing[:10]:
            path.unlink()


def converge(root: Path, tmp_path: Path) -> None:
    """Restart, let it settle, stop it; then the index equals a rebuild."""
    proc = DaemonProcess(tmp_path, root)
    try:
        info = proc.ready()

        def settled() -> bool:
            d = status(info)
            return daemon_idle(d["daemon"]) and bool(d["index"]["matches_disk"])

        eventually(settled, what="the restarted daemon to settle")
    finally:
        assert proc.stop(60) == 0  # (its exit, waited for: a loaded machine's final save)
    # a killed write's temp file is gone (removed at start); looked for once the daemon
    # stopped: while it runs, its own save of vectors.bin has one for a moment (seen at
    # a merge: the restarted daemon saving the vectors it caught up on, right at ready)
    assert not temp_files(root), temp_files(root)
    assert_memory_whole(root)
    with open_vault(root) as v:
        ours = snapshot(v)  # what the daemon left, before any sync of ours
    assert ours == rebuilt_snapshot(root, tmp_path)


def test_kill_9_at_random_moments_then_restart_converges(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    rng = random.Random(1234)
    settings = {"MEMVAULT_VAULT_QUIET_MS": "30", "MEMVAULT_DAEMON_SAVE_SECONDS": "0"}
    for run in range(KILL_RUNS):
        proc = DaemonProcess(tmp_path, root, **settings)
        try:
            if rng.random() < 0.2:  # sometimes mid start-up / initial reconcile
                threading.Event().wait(rng.uniform(0.3, 1.5))
            else:
                proc.ready()
                burst(rng, root, run)
                threading.Event().wait(rng.uniform(0.0, 0.5))
        finally:
            proc.kill()
        assert_memory_whole(root)  # the whole old or the whole new text, never a torn one
        if (run + 1) % CHECK_EVERY == 0:
            converge(root, tmp_path)


def test_ten_thousand_files_at_once(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        template_notes = v.status()["notes"]
    proc = DaemonProcess(tmp_path, root)
    try:
        info = proc.ready()
        eventually(lambda: status(info)["daemon"]["state"] == "watching")
        started = time.monotonic()
        for d in range(20):  # like an unzip or a git clone: many files in a few folders
            folder = root / "bulk" / f"d{d:02}"
            folder.mkdir(parents=True)
            for i in range(500):
                (folder / f"n{i:03}.md").write_text(
                    f"# Bulk {d}-{i}\n\nNote {i} of folder {d}, word w{d}x{i}.\n", encoding="utf-8"
                )
        seen: list[dict[str, Any]] = []

        def done() -> bool:
            data = status(info)
            seen.append(
                {
                    **data["daemon"],
                    "notes": data["notes"],
                    "at": round(time.monotonic() - started, 1),
                }
            )
            return bool(
                data["notes"] == 10_000 + template_notes
                and data["index"]["matches_disk"]
                and data["daemon"]["lag_seconds"] is None
            )

        try:
            eventually(done, 150, "10,000 notes indexed", every=2.0)  # /status scans the vault
        except AssertionError:
            raise AssertionError("\n".join(map(str, seen))) from None
        elapsed = time.monotonic() - started
        daemon = seen[-1]
        assert proc.proc.poll() is None and daemon["last_error"] is None
        assert daemon["overflows"] >= 1  # one full reconcile, not 10,000 paths queued
        assert daemon["batches"] < 100, daemon
        assert elapsed < 150
        assert any(d["lag_seconds"] for d in seen[:-1])  # the lag was visible meanwhile
        r = httpx.post(
            f"http://127.0.0.1:{info['port']}/search",
            trust_env=False,
            timeout=30,
            json={"query": "w13x250"},
            headers={"Authorization": f"Bearer {info['token']}"},
        )
        assert r.json()["hits"][0]["path"] == "bulk/d13/n250.md"
    finally:
        # a terminates bound: the final save of 10,000 vectors on a loaded machine
        assert proc.stop(30) == 0
