"""What a reader daemon's watcher costs at idle (``Watcher.watch_changes_here``): the
process CPU over 2 s windows with watchdog's native observer (inotify) on a vault of
``--notes`` notes, against its polling observer (what the watcher falls back to on a
network or FUSE mount, or with inotify's limits used up: a snapshot of the whole vault
every 2 s), in the same run, and no observer at all (the reader daemon before it
watched). Median of ``--windows`` windows, nothing changing in the vault.

    python bench/reader_idle_watch.py [--notes 10000] [--windows 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

POLL_SECONDS = 2.0  # observers.POLL_SECONDS


def _vault(root: Path, notes: int) -> None:
    for n in range(notes):
        folder = root / "notes" / f"{n // 100:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{n}.md").write_text(f"# Note {n}\n\n" + "words " * 250, encoding="utf-8")


def _idle_cpu(root: Path, kind: str, windows: int) -> float:
    """Median process CPU (all threads) per 2 s window with ``kind`` observing."""
    observer = None
    if kind != "none":
        observer = Observer() if kind == "native" else PollingObserver(timeout=POLL_SECONDS)
        observer.schedule(FileSystemEventHandler(), str(root), recursive=True)
        observer.start()
        time.sleep(2 * POLL_SECONDS)  # settled: the first snapshot or the watches made
    cpu = []
    try:
        for _ in range(windows):
            c0 = time.process_time()
            time.sleep(POLL_SECONDS)
            cpu.append(time.process_time() - c0)
    finally:
        if observer is not None:
            observer.stop()
            observer.join()
    return statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--windows", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reader-idle-") as tmp:
        root = Path(tmp) / "vault"
        _vault(root, args.notes)
        got = {kind: _idle_cpu(root, kind, args.windows) for kind in ("none", "native", "polling")}
    base = max(got["native"], 1e-6)
    for kind, cpu in got.items():
        print(
            f"{args.notes} notes, {kind}: {cpu * 1000:.1f} ms CPU per 2 s "
            f"({cpu / POLL_SECONDS * 100:.2f} % of a core), ratio to native {cpu / base:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
