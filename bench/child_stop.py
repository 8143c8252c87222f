"""A daemon whose model's process is stopped (SIGSTOP), the real int8 model.

    python bench/child_stop.py --rounds 3 [--daemon-code daemon]

Makes a vault of 40 notes under /tmp/robust60-bench-*, starts ``memvault daemon run``
on it (the code under ``--daemon-code``), waits for the model, then per round: stops
the model's process, saves a long note (a vector step larger than the pipe holds) and
times a POST /search over HTTP (60 s at most: "timeout"). Last: SIGSTOP again and
SIGTERM, timing the daemon's exit and saying whether the stopped process outlived it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx


def _child(pid: int) -> int | None:
    for task in Path(f"/proc/{pid}/task").iterdir():
        if kids := (task / "children").read_text().split():
            return int(kids[-1])
    return None


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait(check, within: float):
    end = time.monotonic() + within
    while time.monotonic() < end:
        if value := check():
            return value
        time.sleep(0.1)
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--daemon-code", default=str(Path(__file__).resolve().parents[1] / "daemon"))
    a = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": a.daemon_code}
    root = Path(tempfile.mkdtemp(prefix="robust60-bench-")) / "v"
    subprocess.run([sys.executable, "-m", "memvault", "init", str(root)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    for i in range(40):
        (root / "people" / f"p{i}.md").write_text(f"# Person {i}\n\nWorks on orchard {i}.\n")
    log = open(root.parent / "daemon.log", "w")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "memvault", "daemon", "run", "--vault",
                             str(root)], env=env, stderr=log, stdout=subprocess.DEVNULL)  # fmt: skip
    info = _wait(lambda: (root / ".memvault" / "daemon.json").exists()
                 and json.loads((root / ".memvault" / "daemon.json").read_text()), 60)  # fmt: skip
    http = httpx.Client(base_url=f"http://127.0.0.1:{info['port']}", trust_env=False,
                        headers={"Authorization": f"Bearer {info['token']}"}, timeout=60)  # fmt: skip
    _wait(lambda: http.get("/status").json()["daemon"]["model"] == "ready", 120)
    # the first vectors in (before them a search is keywords alone: no model asked)
    _wait(lambda: not http.get("/status").json()["daemon"]["vectors"]["pending"], 120)
    out: dict = {"search_after_sigstop_s": []}
    words = " ".join(f"kumquat{j} orchard valley" for j in range(3000))
    for r in range(a.rounds):
        child = _wait(lambda: _child(proc.pid), 30)
        os.kill(child, signal.SIGSTOP)
        (root / "people" / f"k{r}.md").write_text(f"# Kumquat {r}\n\n{words}\n")
        time.sleep(1.0)  # the note synced, its vector step started on the stopped child
        started = time.monotonic()
        try:
            http.post("/search", json={"query": f"kumquat orchard {r}", "k": 3}).raise_for_status()
            out["search_after_sigstop_s"].append(round(time.monotonic() - started, 2))
        except httpx.HTTPError as exc:
            out["search_after_sigstop_s"].append(f"failed after "
                                                 f"{time.monotonic() - started:.0f} s: "
                                                 f"{type(exc).__name__}")  # fmt: skip
            break
        _wait(lambda c=child: not _alive(c), 30)
        _wait(lambda: not http.get("/status").json()["daemon"]["vectors"]["pending"], 120)
    status = http.get("/status").json()["daemon"]["vectors"]
    out["model_process"] = status.get("model_process", "(not in status)")
    child = _child(proc.pid)
    if child:
        os.kill(child, signal.SIGSTOP)
    (root / "people" / "last.md").write_text(f"# Last\n\n{words}\n")
    time.sleep(1.0)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
        out["exit_after_sigterm_s"] = round(time.monotonic() - started, 2)
    except subprocess.TimeoutExpired:
        proc.kill()
        out["exit_after_sigterm_s"] = "over 60 s (killed)"
    time.sleep(1.0)
    out["stopped_child_outlived_daemon"] = bool(child and _alive(child))
    if child and _alive(child):
        os.kill(child, signal.SIGKILL)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
