"""A save at scale: the real daemon on a copy of an already indexed vault (issue 27).

    python bench/save_bench.py --vault /tmp/s27/v100k --code main=/tmp/s27/main-0fcb838 \\
        --code branch=. --saves 12

``--vault`` is a vault indexed once (bench/scale_bench.py's notes, first-synced with the
hash embedder, e.g. /tmp/s27/build.py); it is never written: each ``--code NAME=CHECKOUT``
runs on its own ``cp -a`` copy (index and all) under ``--workdir``, deleted after. The
daemon (``python -m memvault daemon run``, ``PYTHONPATH=CHECKOUT/daemon``, hash
embedder: the model is not what is timed; the real watchdog observer and quiet period)
is started on the copy and waited for (the start-up reconcile, the vector lane's warm-up:
``/events`` says ``model: ready``), then its idle RSS is read (VmRSS). Each save is a
plain ``open``/``write``/``close``, as an editor makes, one kind after the other,
``--saves`` rounds, 1 s apart:

- ``new note``: a note created in people/ (it tops MEMORY.md's Key People, ordered by
  update): the clock runs from its close until MEMORY.md (polled every 5 ms, read when
  its stat changes) links it;
- ``edit listed``: a note MEMORY.md lists (one of Key People) given a new summary, until
  MEMORY.md shows the summary;
- ``edit searchable``: a line with a made-up word appended to a note of people/, until
  ``POST /search`` returns a hit in that note holding the word (polled every 10 ms, as
  scale_bench.save_to_searchable).

For each save also the daemon's CPU (utime+stime of every thread, /proc/PID/stat) from
the write until it is idle again, and that time (the first idle ``/events`` status after
its last busy one). Medians per kind; one JSON line per code (``--out`` appends them).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from daemon_bench import Daemon  # noqa: E402
from memory_md_bench import StatusStream, _wait_for  # noqa: E402

_LISTED = re.compile(r"^- \[\[(people/[^\]|#]+)\]\]", re.M)


def _people_section(memory: str) -> str:
    _, _, rest = memory.partition("## Key People")
    return rest.split("\n## ", 1)[0] if rest else ""


def _searchable(d: Daemon, rel: str, word: str, started: float, limit: float = 60.0) -> float:
    while True:
        hits = d.call("POST", "/search", {"query": word, "k": 5})["hits"]
        if any(h["path"] == rel and word in h["text"] for h in hits):
            return time.perf_counter() - started
        if time.perf_counter() - started > limit:
            raise SystemExit(f"{rel}: {word} never became searchable")
        time.sleep(0.01)


def _set_summary(text: str, summary: str) -> str:
    if text.startswith("---\n") and "\nsummary:" in text.split("\n---\n", 1)[0]:
        return re.sub(r"(?m)^summary:.*$", f"summary: {summary}", text, count=1)
    return text


def measure(
    name: str, code: Path, vault: Path, work: Path, saves: int, profile: Path | None = None
) -> dict[str, Any]:
    root = work / f"save-{name}"
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run(["cp", "-a", str(vault), str(root)], check=True)
    for stale in ("daemon.json", "daemon.lock"):
        (root / ".memvault" / stale).unlink(missing_ok=True)
    run = "".join(random.SystemRandom().choice(string.ascii_lowercase) for _ in range(6))
    rng = random.Random(27)
    people = sorted((root / "people").glob("n*.md"))
    d = Daemon(root, "hash", code=code)
    with sqlite3.connect(f"file:{root / '.memvault' / 'index.db'}?mode=ro", uri=True) as db:
        notes = db.execute("SELECT COUNT(*) FROM notes WHERE kind = 'note'").fetchone()[0]
    row: dict[str, Any] = {"code": name, "vault": str(vault), "notes": notes}
    kinds: dict[str, dict[str, list[float]]] = {}
    try:
        stream = StatusStream(d.info.url, d.info.token)
        stream.idle_after(d.started, limit=3600)  # the start-up reconcile
        stream.model_ready()
        row["daemon_ready_s"] = round(time.perf_counter() - d.started, 1)
        time.sleep(7.0)  # past the idle save
        row["rss_idle_start_mb"] = round(d.status_kb("VmRSS") / 1024)
        load = [os.getloadavg()[0]]
        spy = None
        if profile is not None:  # py-spy on the daemon during the saves (not their figures)
            spy = subprocess.Popen(
                [
                    "py-spy",
                    "record",
                    "-p",
                    str(d.proc.pid),
                    "-r",
                    "100",
                    "--format",
                    "raw",
                    "-o",
                    str(profile / f"{name}.txt"),
                    "--nonblocking",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(2.0)

        def timed(kind: str, rel: str, text: str, until: Any) -> None:
            ticks = d.cpu_ticks()
            with open(root / rel, "w", encoding="utf-8") as fh:  # a plain save
                fh.write(text)
            t0 = time.perf_counter()
            got = kinds.setdefault(kind, {"ms": [], "idle_ms": [], "cpu_ms": []})
            got["ms"].append(until(t0) * 1000)
            got["idle_ms"].append((stream.idle_after(t0) - t0) * 1000)
            got["cpu_ms"].append((d.cpu_ticks() - ticks) * 1000 / os.sysconf("SC_CLK_TCK"))
            print(
                f"  [{name}] {kind}: " + ", ".join(f"{k} {v[-1]:.0f}" for k, v in got.items()),
                flush=True,
            )
            load.append(os.getloadavg()[0])
            time.sleep(1.0)

        for i in range(saves):
            rel = f"people/zsave-{run}-{i:02}.md"
            title = f"Saved {run} {i}"
            text = (
                f"---\ntitle: {title}\nsummary: saved person {i}\ndate: 2027-01-{i + 1:02}\n---\n"
                f"# {title}\n\nA person saved {i}, who works with [[people/n000001]].\n"
            )
            timed(
                "new note",
                rel,
                text,
                lambda t0, rel=rel: _wait_for(root / "MEMORY.md", f"[[{rel[:-3]}]]", t0),
            )
            listed = _LISTED.findall(_people_section((root / "MEMORY.md").read_text()))
            older = [p for p in listed if "zsave" not in p] or listed
            target = f"{older[-1] if older else listed[-1]}.md"
            summary = f"edited summary zq{run}{i:02}s"
            before = (root / target).read_text(encoding="utf-8")
            after = _set_summary(before, summary)
            timed(
                "edit listed",
                target,
                after,
                lambda t0, s=summary: _wait_for(root / "MEMORY.md", s, t0),
            )
            path = rng.choice(people)
            erel = path.relative_to(root).as_posix()
            word = f"zq{run}" + "".join(rng.choice(string.ascii_lowercase) for _ in range(4))
            text = path.read_text(encoding="utf-8") + f"\nEdit {i}: {word}\n"
            timed(
                "edit searchable", erel, text, lambda t0, r=erel, w=word: _searchable(d, r, w, t0)
            )
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        row["rss_after_saves_mb"] = round(d.status_kb("VmRSS") / 1024)
        row["load_avg"] = [round(min(load), 1), round(max(load), 1)]
    finally:
        d.stop()
        shutil.rmtree(root, ignore_errors=True)
    for kind, got in kinds.items():
        row[kind] = {k: round(statistics.median(v)) for k, v in got.items()}
        row[kind]["ms_max"] = round(max(got["ms"]))
        row[kind]["first_ms"] = round(got["ms"][0])
    print(f"[{name}] {json.dumps(row)}", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, required=True, help="an indexed vault (not written)")
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT (repeatable)")
    ap.add_argument("--saves", type=int, default=12, help="rounds of the three kinds (<= 28)")
    ap.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "memvault-save-bench"
    )
    ap.add_argument("--out", type=Path, help="append each row as a JSON line here")
    ap.add_argument("--profile", type=Path, help="py-spy record the daemon into DIR/NAME.txt")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for spec in args.code or ["branch=."]:
        name, _, where = spec.partition("=")
        if args.profile:
            args.profile.mkdir(parents=True, exist_ok=True)
        row = measure(
            name, Path(where).resolve(), args.vault, args.workdir, args.saves, args.profile
        )
        rows.append(row)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
