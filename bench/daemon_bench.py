"""The daemon on a 5,000-note vault: save-to-searchable latency, idle CPU, peak RSS.

    python bench/daemon_bench.py                     # 5,000 notes, 30 edits, 60 s idle
    python bench/daemon_bench.py --edits 50 --idle-seconds 120
    python bench/daemon_bench.py --model hash        # the pipeline without the model

The vault and its index are built once (real model: ~2 min of embedding for
5,000 one-chunk notes) under ``--workdir`` and reused by later runs; a run
only appends lines to some notes, so reuse stays valid (``--rebuild`` starts over).

Latency: the daemon runs as `python -m memvault daemon run`; each edit appends
a line with a unique made-up word to a random note, and the clock runs from
the moment the file is closed until ``POST /search`` returns a hit in that
note whose text holds the word (polled every 20 ms). Edits are 1.5 s apart so
each is its own debounced batch. Idle CPU: utime+stime from /proc/PID/stat
across a quiet window after the idle save. Peak RSS: VmHWM from /proc/PID/status.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from memvault.api import Vault  # noqa: E402
from memvault.vault import runfile  # noqa: E402
from memvault.vault.template import init_vault  # noqa: E402

_TEXT = (
    "planning retrieval schema latency budget review cache index migration vector "
    "release onboarding pricing roadmap incident backup storage queue worker search "
    "design feedback hiring contract security audit metrics dashboard alert deploy"
)
WORDS = _TEXT.split()
FOLDERS = ("people", "projects", "decisions", "logs", "topics/eng", "topics/ops", "topics/biz")


def build_vault(root: Path, notes: int, model: str | None) -> float:
    """Write ``notes`` short notes and index them once; seconds spent indexing."""
    rng = random.Random(5000)
    init_vault(root)
    for i in range(notes):
        folder = FOLDERS[i % len(FOLDERS)]
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(25, 45)))
        title = f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {i}"
        text = (
            f"---\ntitle: {title}\nsummary: note {i} about {rng.choice(WORDS)}\n"
            f"date: 2024-{1 + i % 12:02}-{1 + i % 28:02}\n---\n# {title}\n\n{words}.\n"
        )
        path = root / folder / f"n{i:05}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    with Vault.open(root, overrides=_overrides(model)) as vault:
        last = [0.0]

        def progress(p: Any) -> None:
            if time.monotonic() - last[0] > 10:
                last[0] = time.monotonic()
                print(
                    f"  indexing {p.done}/{p.total} notes, {p.embedded} chunks embedded", flush=True
                )

        report = vault.sync(progress=progress)
    seconds = time.perf_counter() - started
    print(f"built: {report.summary()}", flush=True)
    return seconds


def read_daemon_json(root: Path) -> dict[str, Any] | None:
    """daemon.json as the bench uses it (pid, port, token), if it is there."""
    info = runfile.read(root)
    return None if info is None else {"pid": info.pid, "port": info.port, "token": info.token}


def _overrides(model: str | None) -> dict[str, dict[str, Any]] | None:
    return {"index": {"model": model}} if model else None


class Daemon:
    def __init__(
        self,
        root: Path,
        model: str | None,
        debounce_ms: int | None = None,
        code: Path | None = None,  # a checkout whose daemon/ runs (another branch's, say)
        extra_env: dict[str, str] | None = None,  # PYTHONPATH here goes after the code's
        args: tuple[str, ...] = (),  # more of `daemon run`'s options (--log-file)
    ) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
        extra = dict(extra_env or {})
        paths = [str((code or ROOT) / "daemon"), *filter(None, [extra.pop("PYTHONPATH", "")])]
        env["PYTHONPATH"] = os.pathsep.join(paths)
        env.update(extra)
        if model:
            env["MEMVAULT_INDEX_MODEL"] = model
        if debounce_ms is not None:  # the vault's config.toml holds the default of its day
            env["MEMVAULT_VAULT_QUIET_MS"] = str(debounce_ms)
        self.root = root
        # appended, one header a start: a bench that stops and starts the daemon keeps
        # every run's log for the forensics
        self.log = open(root.parent / "daemon-bench.log", "a")  # noqa: SIM115
        self.log.write(f"--- daemon started {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        self.log.flush()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memvault", "daemon", "run", "--vault", str(root), *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        self.info = self._wait_json()
        self.up_seconds = time.perf_counter() - self.started

    def _wait_json(self) -> runfile.DaemonInfo:
        while True:
            if self.proc.poll() is not None:
                raise SystemExit(f"the daemon exited: see {self.log.name}")
            info = runfile.read(self.root)
            if info is not None and info.pid == self.proc.pid:
                return info
            time.sleep(0.05)

    def call(self, method: str, path: str, body: Any = None, timeout: float = 120) -> Any:
        import urllib.request

        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"{self.info.url}{path}",
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.info.token}",
                "Content-Type": "application/json",
            },
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=timeout) as r:
            return json.loads(r.read())

    def settle(self) -> dict[str, Any]:
        while True:
            d = self.call("GET", "/status")["daemon"]
            idle = d["state"] == "watching" and d["lag_seconds"] is None and d["queue"] == 0
            if idle and d.get("model") != "loading":
                return d
            time.sleep(0.2)

    def cpu_ticks(self) -> int:
        return cpu_ticks(self.proc.pid)

    def status_kb(self, key: str) -> int:
        return status_kb(self.proc.pid, key)

    def children(self) -> list[int]:
        """The daemon's child processes (the model's own, while it is loaded)."""
        return children(self.proc.pid)

    def stop(self) -> float:
        started = time.perf_counter()
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(30)
        self.log.close()
        if code != 0:
            raise SystemExit(f"the daemon exited {code} at SIGTERM")
        return time.perf_counter() - started


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (fields 14, 15)


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    """A process's children: each of its threads lists those it started."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            continue  # the thread ended meanwhile
    return out


def children_kb(pid: int, key: str) -> list[int]:
    """``key`` (/proc status, kB) of each child still there."""
    out = []
    for kid in children(pid):
        try:
            out.append(status_kb(kid, key))
        except OSError:
            continue  # ended meanwhile
    return out


def measure_edits(d: Daemon, root: Path, edits: int) -> list[float]:
    rng = random.Random(7)
    notes = sorted(root.glob("topics/*/n*.md")) + sorted(root.glob("people/n*.md"))
    # the vault is reused across runs: a word from an earlier run would be found at once
    run = "".join(random.SystemRandom().choice(string.ascii_lowercase) for _ in range(6))
    latencies = []
    for i in range(edits):
        word = f"zq{run}" + "".join(rng.choice(string.ascii_lowercase) for _ in range(4))
        path = rng.choice(notes)
        rel = path.relative_to(root).as_posix()
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\nEdit {i}: {word}\n")
        saved = time.perf_counter()
        while True:
            hits = d.call("POST", "/search", {"query": word, "k": 5})["hits"]
            if any(h["path"] == rel and word in h["text"] for h in hits):
                break
            if time.perf_counter() - saved > 30:
                raise SystemExit(f"edit {i} never became searchable")
            time.sleep(0.02)
        latencies.append(time.perf_counter() - saved)
        print(f"  edit {i + 1}/{edits}: {latencies[-1] * 1000:.0f} ms", flush=True)
        time.sleep(1.5)
    return latencies


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=5000)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--idle-seconds", type=float, default=60.0)
    ap.add_argument("--model", default=None, help="index.model (default: the bundled MiniLM)")
    ap.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "memvault-daemon-bench"
    )
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument(
        "--debounce-ms", type=int, help="daemon.debounce_ms (default: the vault's config.toml)"
    )
    args = ap.parse_args()

    tag = (args.model or "minilm").replace("/", "_")
    root = args.workdir / f"vault-{args.notes}-{tag}"
    build_seconds = None
    if args.rebuild and root.exists():
        shutil.rmtree(root)
    if not (root / ".memvault" / "index.db").exists():
        print(f"building {args.notes} notes at {root} (once)", flush=True)
        shutil.rmtree(root, ignore_errors=True)
        root.parent.mkdir(parents=True, exist_ok=True)
        build_seconds = build_vault(root, args.notes, args.model)

    d = Daemon(root, args.model, args.debounce_ms)
    try:
        print(f"daemon pid {d.proc.pid} answering after {d.up_seconds:.2f} s", flush=True)
        ready = d.settle()
        ready_seconds = time.perf_counter() - d.started
        reconcile = ready["last_batch"]
        t = time.perf_counter()
        d.call("POST", "/search", {"query": "warm up the model"})
        warm = time.perf_counter() - t
        latencies = measure_edits(d, root, args.edits)
        d.settle()
        time.sleep(7)  # past the idle save (5 s after the last sync)
        before, t0 = d.cpu_ticks(), time.perf_counter()
        time.sleep(args.idle_seconds)
        ticks, wall = d.cpu_ticks() - before, time.perf_counter() - t0
        idle_cpu = ticks / os.sysconf("SC_CLK_TCK") / wall
        hwm, rss = d.status_kb("VmHWM"), d.status_kb("VmRSS")
    finally:
        stop_seconds = d.stop()
    result = {
        "notes": args.notes,
        "model": args.model or "sentence-transformers/all-MiniLM-L6-v2",
        "debounce_ms": args.debounce_ms or "the vault's",
        "build_seconds": build_seconds,
        "daemon_up_seconds": round(d.up_seconds, 2),
        "startup_reconcile": reconcile,
        "model_ready_seconds": round(ready_seconds, 2),
        "first_search_seconds": round(warm, 2),
        "edits": len(latencies),
        "latency_p50_ms": round(statistics.median(latencies) * 1000),
        "latency_p95_ms": round(pct(latencies, 0.95) * 1000),
        "latency_max_ms": round(max(latencies) * 1000),
        "idle_cpu_percent": round(idle_cpu * 100, 3),
        "idle_seconds": round(wall, 1),
        "peak_rss_mb": round(hwm / 1024, 1),
        "rss_mb_at_end": round(rss / 1024, 1),
        "sigterm_to_exit_seconds": round(stop_seconds, 2),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
