"""Branches switched under a running daemon: what a `git checkout` of N notes costs it,
and whether the next checkout is ever refused over a file memvault wrote.

    python bench/branch_switch.py                      # 1,000 notes apart, 10 switches
    python bench/branch_switch.py --notes 5000 --switches 6
    python bench/branch_switch.py --quick 40           # 40 switches 0-0.9 s apart
    python bench/branch_switch.py --code /work/main/daemon --quick 40   # another tree's code

The vault (under ``--workdir``, made afresh each run) has two branches, each commit's
MEMORY.md and folder notes as memvault made them for its notes: `main` with ``--notes``
notes, and `other`, where half of them are deleted and ``--notes`` others added (1.5 x
``--notes`` files change at each switch). The daemon (`python -m memvault daemon run`,
the hash embedder unless ``--model``) runs the code under ``--code``.

Settled switches: the clock runs from the checkout's start until the daemon's /status
counts the branch's notes with nothing queued, and `git status --porcelain` is empty;
its CPU (utime + stime of its process, children included) is read from /proc around
each switch. Quick switches: each checkout comes 0-0.9 s after the last (the daemon
still indexing the one before); a checkout git refuses ("Your local changes ... would
be overwritten") is counted, and made again once the daemon is done.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.org",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.org",
}


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    if check and done.returncode:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr}")
    return done


def memvault(code: Path, *args: str, model: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(code), "MEMVAULT_INDEX_MODEL": model}
    subprocess.run(
        [sys.executable, "-m", "memvault", *args], env=env, check=True, stdout=subprocess.DEVNULL
    )


def note(folder: str, i: int, what: str) -> tuple[str, str]:
    day = f"2024-{i % 12 + 1:02}-{i % 28 + 1:02}"
    text = f"---\nupdated: {day}\n---\n# {what} {i}\n\n{what} {i}: notes on item {i}.\n"
    return f"{folder}/{what.lower()}-{i}.md", text


def build(root: Path, n: int, code: Path, model: str) -> dict[str, int]:
    """The two branches; how many notes each has (MEMORY.md and folder notes left out)."""
    memvault(code, "init", str(root), model=model)
    git(root, "init", "-q", "-b", "main")
    for i in range(n):
        rel, text = note(("people", "decisions")[i % 2], i, "Main")
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    memvault(code, "sync", "--vault", str(root), model=model)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "main")
    git(root, "checkout", "-q", "-b", "other")
    for i in range(0, n, 2):
        (root / note(("people", "decisions")[i % 2], i, "Main")[0]).unlink()
    for i in range(n):
        rel, text = note(("projects", "decisions")[i % 2], i, "Other")
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    memvault(code, "sync", "--vault", str(root), model=model)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "other")
    git(root, "checkout", "-q", "main")
    memvault(code, "sync", "--vault", str(root), model=model)
    if git(root, "status", "--porcelain").stdout:
        raise SystemExit("the branches' MEMORY.md is not memvault's: " + git(root, "status").stdout)
    return {"main": n, "other": n - (n + 1) // 2 + n}


class Daemon:
    def __init__(self, root: Path, code: Path, model: str, log: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(code), "MEMVAULT_INDEX_MODEL": model}
        self.out = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memvault", "daemon", "run", "--vault", str(root)],
            env=env,
            stdout=self.out,
            stderr=subprocess.STDOUT,
        )
        info = root / ".memvault" / "daemon.json"
        for _ in range(600):
            if info.exists():
                try:
                    self.info = json.loads(info.read_text())
                    break
                except ValueError:
                    pass
            time.sleep(0.1)
        else:
            raise SystemExit("the daemon did not start")

    def status(self) -> dict[str, Any]:
        r = httpx.get(
            f"http://127.0.0.1:{self.info['port']}/status",
            headers={"Authorization": f"Bearer {self.info['token']}"},
            trust_env=False,
            timeout=30,
        )
        return dict(r.json())

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)
        self.out.close()


def settled(d: Daemon, root: Path, notes: int, timeout: float = 300) -> float:
    """Seconds until the daemon counts ``notes`` with nothing queued and git sees no
    change (checked twice, 0.2 s apart, both times so)."""
    start = time.perf_counter()
    good = 0
    while time.perf_counter() - start < timeout:
        s = d.status()
        dd = s["daemon"]
        ok = (
            s["notes"] == notes
            and dd["queue"] == 0
            and dd["state"] == "watching"
            and not git(root, "status", "--porcelain").stdout
        )
        good = good + 1 if ok else 0
        if good == 2:
            return time.perf_counter() - start - 0.2
        time.sleep(0.2 if ok else 0.02)
    raise SystemExit(f"not settled in {timeout} s: {d.status()['daemon']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--switches", type=int, default=10)
    ap.add_argument("--quick", type=int, default=0, help="switches 0-0.9 s apart, counted")
    ap.add_argument("--code", type=Path, default=ROOT / "daemon")
    ap.add_argument("--model", default="hash")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    work = a.workdir or Path(tempfile.mkdtemp(prefix="branch-switch-"))
    root = work / "vault"
    shutil.rmtree(root, ignore_errors=True)
    t = time.perf_counter()
    counts = build(root, a.notes, a.code, a.model)
    print(
        f"vault: main {counts['main']} notes, other {counts['other']} "
        f"({a.notes * 3 // 2} files change at a switch); built in {time.perf_counter() - t:.1f} s"
    )
    d = Daemon(root, a.code, a.model, work / "daemon.log")
    try:
        settled(d, root, counts["main"])
        branch = "main"
        times, cpus = [], []
        for _ in range(a.switches):
            branch = "other" if branch == "main" else "main"
            cpu = d.cpu()
            start = time.perf_counter()
            git(root, "checkout", "-q", branch)
            checkout = time.perf_counter() - start
            times.append(settled(d, root, counts[branch]) + checkout)
            cpus.append(d.cpu() - cpu)
        if times:
            print(
                f"settled switches: {len(times)}; to the index and git clean: median "
                f"{statistics.median(times):.2f} s, max {max(times):.2f} s; daemon CPU "
                f"median {statistics.median(cpus):.2f} s, max {max(cpus):.2f} s"
            )
        rng = random.Random(a.seed)
        refused = []
        for k in range(a.quick):
            branch = "other" if branch == "main" else "main"
            done = git(root, "checkout", "-q", branch, check=False)
            if done.returncode:
                refused.append(f"switch {k + 1}: {' '.join(done.stderr.split())[:160]}")
                other = "other" if branch == "main" else "main"
                settled(d, root, counts[other])
                git(root, "checkout", "-q", branch)
            time.sleep(rng.randrange(10) / 10)
        if a.quick:
            settled(d, root, counts[branch])
            print(f"quick switches: {a.quick}, refused {len(refused)}")
            for line in refused:
                print("  " + line)
    finally:
        d.stop()
    if a.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
