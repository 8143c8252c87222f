"""What the defences against hostile and unlucky inputs cost (issue 11).

    python bench/hostile_bench.py all          # everything below, in order
    python bench/hostile_bench.py writers      # is a file open for writing? lease vs /proc
    python bench/hostile_bench.py update       # one MEMORY.md update, checks included
    python bench/hostile_bench.py renew        # renewing the watches after folders arrive
    python bench/hostile_bench.py connections  # /health while 1,100 idle sockets are held
    python bench/hostile_bench.py connections --daemon-path OLD/daemon   # the same, before

Medians of repeated runs (the machine is shared); the hash embedder throughout, so
that nothing here is model time. Results go to stdout as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from memvault.api import Vault  # noqa: E402
from memvault.index.embedder import HashEmbedder  # noqa: E402
from memvault.service.watcher import Watcher  # noqa: E402
from memvault.vault import open_files  # noqa: E402
from memvault.vault.files import VaultFS  # noqa: E402
from memvault.vault.template import init_vault  # noqa: E402


def median_ms(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000, 4)


def open_files_on_machine() -> int:
    count = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                count += len(os.listdir(f"/proc/{pid}/fd"))
            except OSError:
                continue
    return count


def bench_writers() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "MEMORY.md"
        f.write_text("# Memory Index\n" * 50, encoding="utf-8")
        return {
            "open_files_on_machine": open_files_on_machine(),
            "lease_probe_ms": median_ms(lambda: open_files.open_for_writing(f), 10_000),
            "proc_scan_ms": median_ms(lambda: open_files._scan_proc(f), 30),
        }


def bench_update() -> dict[str, Any]:
    """One MEMORY.md-sized update (read, change, temp + fsync, checks, swap, fsync)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "MEMORY.md").write_text("# Memory Index\n" + "- [[x]] - y\n" * 50, "utf-8")
        os.utime(root / "MEMORY.md", ns=(1, 1))
        fs = VaultFS(root)
        n = [0]

        def update() -> None:
            n[0] += 1
            fs.update_text("MEMORY.md", lambda t: t + f"line {n[0]}\n")

        path = root / "MEMORY.md"
        return {
            "update_text_ms": median_ms(update, 200),
            "busy_checks_ms": median_ms(lambda: fs._swapper.busy(path), 5_000),
        }


def make_tree(root: Path, folders: int, notes_per_folder: int) -> None:
    init_vault(root)
    for i in range(folders):
        folder = root / "topics" / f"t{i // 20}" / f"f{i}"
        folder.mkdir(parents=True, exist_ok=True)
        for j in range(notes_per_folder):
            (folder / f"n{j}.md").write_text(f"# Note {i}-{j}\n\nbody {i} {j}\n", "utf-8")


def bench_renew(folders: int = 500, notes_per_folder: int = 10) -> dict[str, Any]:
    """The observer restarted (a fresh walk, a watch per folder) and the full reconcile
    that follows, on a vault of ``folders`` folders and ``folders * notes`` notes."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        make_tree(root, folders, notes_per_folder)
        with Vault.open(root, embedder=HashEmbedder()) as vault:
            vault.sync()
            w = Watcher(root, vault.sync, is_ignored=vault.is_ignored)
            w.start(initial_reconcile=False)
            try:

                def renew() -> None:
                    w._folders_arrived.set()
                    w._renew_watches()
                    w.queue.take()  # the reconcile it asked for is timed on its own

                renew_ms = median_ms(renew, 10)
                reconcile_ms = median_ms(lambda: vault.sync(), 10)
            finally:
                w.stop()
        return {
            "folders": folders + 5,
            "notes": folders * notes_per_folder,
            "renew_watches_ms": renew_ms,
            "full_reconcile_ms": reconcile_ms,
        }


def bench_connections(sockets: int = 1100, daemon_path: Path | None = None) -> dict[str, Any]:
    """/health latency with and without ``sockets`` idle partial-header connections,
    against a real daemon whose open-file limit is 1,024 (soft and hard), and how long
    a note saved meanwhile takes to be indexed. ``daemon_path``: run another checkout's
    daemon (its ``daemon/`` folder), for a before/after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, sockets + 500)), hard))
    import httpx

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        init_vault(root)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
        env.update(
            PYTHONPATH=str(daemon_path or ROOT / "daemon"),
            MEMVAULT_INDEX_MODEL="hash",
            MEMVAULT_DAEMON_DEBOUNCE_MS="50",
        )

        def cap() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

        proc = subprocess.Popen(
            [sys.executable, "-m", "memvault", "daemon", "run", "--vault", str(root)],
            env=env,
            stderr=subprocess.DEVNULL,
            preexec_fn=cap,
        )
        held: list[socket.socket] = []
        try:
            info_path = root / ".memvault" / "daemon.json"
            while not info_path.exists():
                time.sleep(0.05)
            time.sleep(1.0)
            info = json.loads(info_path.read_text("utf-8"))
            base = f"http://127.0.0.1:{info['port']}"
            auth = {"Authorization": f"Bearer {info['token']}"}

            def healths(n: int) -> dict[str, Any]:
                times, failed = [], 0
                for _ in range(n):
                    started = time.perf_counter()
                    try:
                        httpx.get(f"{base}/health", timeout=10, trust_env=False)
                        times.append(time.perf_counter() - started)
                    except httpx.HTTPError:
                        failed += 1
                ms = round(statistics.median(times) * 1000, 1) if times else None
                return {"median_ms": ms, "failed_of": f"{failed}/{n}"}

            quiet = healths(20)
            started = time.perf_counter()
            for _ in range(sockets):
                s = socket.create_connection(("127.0.0.1", info["port"]), timeout=30)
                s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                held.append(s)
            opened = time.perf_counter() - started
            attacked = healths(20)
            (root / "people" / "newcomer.md").write_text("# Newcomer\n\nokapi\n", "utf-8")
            saved, indexed_after = time.perf_counter(), None
            while time.perf_counter() - saved < 60 and indexed_after is None:
                try:
                    r = httpx.get(
                        f"{base}/notes/people/newcomer.md", headers=auth, timeout=5, trust_env=False
                    )
                    if r.status_code == 200:
                        indexed_after = round(time.perf_counter() - saved, 2)
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
        finally:
            for s in held:
                s.close()
            proc.terminate()
            proc.wait(30)
    return {
        "idle_sockets": sockets,
        "seconds_to_open_them": round(opened, 2),
        "health_quiet": quiet,
        "health_while_held": attacked,
        "note_indexed_after_s": indexed_after,  # None: not within 60 s
    }


BENCHES: dict[str, Callable[[], dict[str, Any]]] = {
    "writers": bench_writers,
    "update": bench_update,
    "renew": bench_renew,
    "connections": bench_connections,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("which", choices=[*BENCHES, "all"])
    parser.add_argument("--daemon-path", type=Path, help="connections: another daemon/ folder")
    args = parser.parse_args()
    names = list(BENCHES) if args.which == "all" else [args.which]
    out: dict[str, Any] = {}
    for name in names:
        if name == "connections" and args.daemon_path:
            out[name] = bench_connections(daemon_path=args.daemon_path)
        else:
            out[name] = BENCHES[name]()
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
