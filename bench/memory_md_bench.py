"""What one save costs MEMORY.md's upkeep with N tiny notes in one folder (issue 21 item
12, issue 27 "Every save pays for the whole vault").

Two measurements, each for this checkout's code and, as the baseline in the same run,
for the code at ``--baseline`` (default /work/main, imported read-only):

- ``upkeep``: the Linker's MEMORY.md step on its own, in process: N notes in
  decisions/ (plus a few elsewhere), one note changed, then MEMORY.md recomputed and
  the folder note (decisions/decisions.md, N lines) rendered and written to a temp
  folder. The baseline's inputs are its own: sort_entries over every entry,
  update_memory with its history, render_folder_note of the whole folder.
- ``save`` (``--e2e N``): a real vault of N notes in one folder, indexed with the hash
  embedder by a subprocess running each code base, then a note saved and
  ``Vault.sync([path])`` timed until MEMORY.md lists it (median of 5 saves).

- ``daemon`` (``--daemon N``): the whole path a person's save takes. A vault of N tiny
  notes in decisions/ is built and indexed once (hash embedder, a ``memvault sync``
  subprocess of each code base; kept under ``--workdir`` and copied, index and all, for
  each run), then the real daemon (``python -m memvault daemon run``: the real watchdog
  observer, the 100 ms quiet period, the HTTP status) is started on the copy and left
  to settle. Each save is a plain file write, as an editor makes: a new note created, a
  note MEMORY.md lists edited, a note deep in the folder edited. The clock runs from the
  close of the file until MEMORY.md (polled every 5 ms) and the folder note
  (decisions/decisions.md, polled by stat, read when it changes) show it, and until the
  daemon's ``/events`` stream says it is idle again (the folder note re-indexed), and the
  daemon's CPU time (utime+stime, all threads) from the write to then. Median of
  ``--saves`` of each kind; the baseline (``--baseline-code``, a checkout or an extracted
  ``git archive``) is run the same way in the same run.

    python bench/memory_md_bench.py --notes 100000
    python bench/memory_md_bench.py --notes 100000 --e2e 20000
    python bench/memory_md_bench.py --notes 0 --daemon 100000
    python bench/memory_md_bench.py --notes 0 --daemon 20000 --baseline-code /tmp/old
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "daemon"))

from memvault.config import DEFAULT_SECTIONS  # noqa: E402
from memvault.core import memory_md  # noqa: E402
from memvault.core.wikilinks import LinkIndex  # noqa: E402
from memvault.engine.memory_listing import MemoryListing  # noqa: E402
from memvault.index.rows import NoteRow  # noqa: E402


def load_baseline(root: Path) -> ModuleType:
    """The baseline's core/memory_md.py as a module of its own (its imports resolve
    against this checkout's memvault, which it shares: text, wikilinks)."""
    spec = importlib.util.spec_from_file_location(
        "baseline_memory_md", root / "daemon/memvault/core/memory_md.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def rows(n: int) -> dict[str, NoteRow]:
    out = {}
    for i in range(n):
        path = f"decisions/2024-{1 + i % 12:02}-{1 + i % 28:02}-d{i}.md"
        fm = {"summary": f"Decision {i}."}
        out[path] = NoteRow(
            path=path,
            size=60,
            mtime_ns=i,
            sha256="x",
            kind="note",
            title=f"D{i}",
            summary=f"Decision {i}.",
            frontmatter=fm,
        )
    for folder in ("people", "projects", "logs"):
        for i in range(20):
            path = f"{folder}/n{i}.md"
            out[path] = NoteRow(
                path=path,
                size=60,
                mtime_ns=i,
                sha256="x",
                kind="note",
                title=f"N{i}",
                summary="s",
                frontmatter={"status": "active", "updated": f"2024-01-{1 + i:02}"},
            )
    return out


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def bench_upkeep(n: int, baseline: Path | None, saves: int = 5) -> dict[str, float]:
    base_rows = rows(n)
    rules = DEFAULT_SECTIONS
    idx = LinkIndex([*base_rows, "MEMORY.md"])

    def resolve(target: str) -> str | None:
        res = idx.resolve(target, "MEMORY.md")
        return res.path if res.verdict == "resolved" else None

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder_note = Path(tmp) / "decisions.md"
        # -- this checkout: the Linker's incremental lists -------------------------------
        listing = MemoryListing(rules)
        current = dict(base_rows)
        listing.refresh(current)
        text = memory_md.update_memory(
            None, listing.refresh(current).notes, rules, resolve=resolve
        ).text
        decisions = next(r for r in rules if r.folder == "decisions")
        write_atomic(
            folder_note,
            memory_md.render_folder_note(
                None, "decisions", listing.folder_lines(decisions), "decisions"
            ),
        )
        times = []
        for s in range(saves):
            path = f"decisions/2030-01-01-new{s}.md"
            current[path] = NoteRow(
                path=path,
                size=60,
                mtime_ns=0,
                sha256="y",
                kind="note",
                title="New",
                summary=f"New {s}.",
                frontmatter={"summary": f"New {s}."},
            )
            t0 = time.perf_counter()
            ref = listing.refresh(current)
            listings = {r.name: listing.listing(r) for r in rules}
            text = memory_md.update_memory(
                text,
                ref.notes,
                rules,
                {},
                resolve=resolve,
                listings=listings,
                lines=listing.lines(),
            ).text
            if "decisions" in ref.changed_folders:
                old = folder_note.read_text(encoding="utf-8")
                new = memory_md.render_folder_note(
                    old, "decisions", listing.folder_lines(decisions), "decisions"
                )
                if new != old:
                    write_atomic(folder_note, new)
            times.append(time.perf_counter() - t0)
            assert f"new{s}]]" in text
        out["this checkout, ms per save"] = statistics.median(times) * 1000
        # -- the baseline: everything recomputed per save ---------------------------------
        if baseline is not None:
            old_md = load_baseline(baseline)
            cat = [
                old_md.CatalogueEntry(r.path, r.title, r.summary, r.frontmatter, r.mtime_ns)
                for r in base_rows.values()
            ]
            up = old_md.update_memory(None, cat, rules, {}, (), resolve=resolve)
            text, owned = up.text, up.owned
            times = []
            for s in range(saves):
                cat.append(
                    old_md.CatalogueEntry(
                        f"decisions/2030-01-01-new{s}.md", "New", f"New {s}.", {}, 0
                    )
                )
                t0 = time.perf_counter()
                up = old_md.update_memory(
                    text, cat, rules, owned, (), resolve=resolve, last_written=owned
                )
                text, owned = up.text, up.owned
                entries = old_md.sort_entries(
                    [e for e in cat if e.path.startswith("decisions/")], "date"
                )
                old = folder_note.read_text(encoding="utf-8")
                new = old_md.render_folder_note(old, "decisions", entries, "decisions")
                if new != old:
                    write_atomic(folder_note, new)
                times.append(time.perf_counter() - t0)
                assert f"new{s}]]" in text
            out["baseline, ms per save"] = statistics.median(times) * 1000
    return out


E2E = r"""
import json, statistics, sys, time
from pathlib import Path
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
root = Path(sys.argv[1])
t0 = time.perf_counter()
with Vault.open(root, embedder=HashEmbedder()) as v:
    v.sync()
    first = time.perf_counter() - t0
    times = []
    for s in range(5):
        rel = f"decisions/2030-01-0{s + 1}-saved{s}.md"
        (root / rel).write_text(f"---\nsummary: Saved {s}.\n---\n# Saved {s}\n", encoding="utf-8")
        t = time.perf_counter()
        v.sync(paths=[rel], vectors=False)
        times.append(time.perf_counter() - t)
        assert f"saved{s}]]" in (root / "MEMORY.md").read_text(encoding="utf-8")
print(json.dumps({"first_sync_s": first, "save_ms": statistics.median(times) * 1000}))
"""


def bench_e2e(n: int, code: Path) -> dict[str, float]:
    from memvault.vault.template import init_vault

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        init_vault(root)
        for i in range(n):
            (root / f"decisions/2024-01-01-d{i}.md").write_text(
                f"# D{i}\n\nDecision {i}.\n", encoding="utf-8"
            )
        env = {**os.environ, "PYTHONPATH": str(code / "daemon"), "MEMVAULT_INDEX_MODEL": "hash"}
        run = subprocess.run(
            [sys.executable, "-c", E2E, str(root)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        result: dict[str, float] = json.loads(run.stdout.strip().splitlines()[-1])
        return result


def build_daemon_vault(workdir: Path, label: str, code: Path, n: int) -> Path:
    """N tiny notes in decisions/, indexed once by ``code``'s ``memvault sync`` (hash
    embedder); kept under ``workdir`` for later runs (``<label>-<n>.built`` says so)."""
    import shutil

    base = workdir / f"{label}-{n}"
    marker = workdir / f"{label}-{n}.built"
    if marker.exists():
        return base
    shutil.rmtree(base, ignore_errors=True)
    env = _env(code)
    run = [sys.executable, "-m", "memvault"]
    subprocess.run([*run, "init", str(base)], env=env, check=True, capture_output=True)
    (base / "decisions").mkdir(exist_ok=True)
    for i in range(n):
        (base / f"decisions/2024-01-01-d{i}.md").write_text(
            f"# D{i}\n\nDecision {i}.\n", encoding="utf-8"
        )
    print(f"{label}: first index of {n:,} notes (once, kept in {base})", flush=True)
    t0 = time.perf_counter()
    subprocess.run(
        [*run, "sync", "--vault", str(base), "--json"], env=env, check=True, capture_output=True
    )
    marker.write_text(json.dumps({"first_sync_s": time.perf_counter() - t0}), encoding="utf-8")
    return base


def _env(code: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    return env | {"PYTHONPATH": str(code / "daemon"), "MEMVAULT_INDEX_MODEL": "hash"}


def _wait_for(path: Path, needle: str, started: float, limit: float = 120.0) -> float:
    """Seconds from ``started`` until ``path`` holds ``needle`` (read when its stat
    changes, checked every 5 ms)."""
    seen = None
    while True:
        try:
            st = path.stat()
            now = (st.st_size, st.st_mtime_ns, st.st_ino)
        except FileNotFoundError:
            now = None
        if now is not None and now != seen:
            seen = now
            if needle in path.read_text(encoding="utf-8"):
                return time.perf_counter() - started
        if time.perf_counter() - started > limit:
            raise SystemExit(f"{path.name} never showed {needle!r}")
        time.sleep(0.005)


class StatusStream:
    """The daemon's ``/events`` stream read on a thread of its own: the latest
    ``event: status`` and when each came. (Polling ``GET /status`` instead would time
    the status itself: it scans the vault and checks every link, seconds at 100k.)"""

    def __init__(self, url: str, token: str) -> None:
        import threading
        import urllib.request

        req = urllib.request.Request(f"{url}/events", headers={"Authorization": f"Bearer {token}"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self._resp = opener.open(req, timeout=600)
        self.events: list[tuple[float, dict[str, object]]] = []
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        kind = None
        try:
            for raw in self._resp:
                line = raw.decode("utf-8").rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind == "status":
                    with self._cond:
                        self.events.append((time.perf_counter(), json.loads(line[6:])))
                        self._cond.notify_all()
                elif not line:
                    kind = None
        except (OSError, ValueError):
            return

    def model_ready(self, limit: float = 900.0) -> None:
        """Wait for the vector lane's warm-up after the start-up reconcile (the model, and
        on this code MEMORY.md's lists and the link index): ``model`` says ready."""
        deadline = time.perf_counter() + limit
        with self._cond:
            while not any(s.get("model") in ("ready", "failed") for _, s in self.events):
                if time.perf_counter() > deadline:
                    raise SystemExit("the model never came ready")
                self._cond.wait(0.1)

    @staticmethod
    def busy(status: dict[str, object]) -> bool:
        vectors = status.get("vectors")
        return bool(
            status.get("state") in ("starting", "indexing")
            or status.get("progress")
            or status.get("queue")
            or status.get("lag_seconds") is not None
            or (isinstance(vectors, dict) and vectors.get("busy"))
        )

    def idle_after(self, since: float, limit: float = 300.0) -> float:
        """When the daemon was idle again after work it began after ``since``: the first
        idle status following the last busy one (waiting until one comes)."""
        deadline = time.perf_counter() + limit
        with self._cond:
            while True:
                later = [(t, s) for t, s in self.events if t >= since]
                busy = [t for t, s in later if self.busy(s)]
                if busy:
                    idle = [t for t, s in later if t > busy[-1] and not self.busy(s)]
                    if idle:
                        return idle[0]
                elif (
                    self.events
                    and not self.busy(self.events[-1][1])
                    and time.perf_counter() > since + 5.0
                ):
                    # no busy status in 5 s: the work came and went between two events
                    return max(since, self.events[-1][0])
                if time.perf_counter() > deadline:
                    raise SystemExit("the daemon never came back to idle")
                self._cond.wait(0.05)


def bench_daemon(workdir: Path, label: str, code: Path, n: int, saves: int) -> dict[str, object]:
    import shutil

    from daemon_bench import Daemon  # type: ignore[import-not-found]

    base = build_daemon_vault(workdir, label, code, n)
    root = workdir / f"run-{label}-{n}"
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run(["cp", "-a", str(base), str(root)], check=True)
    built = json.loads((workdir / f"{label}-{n}.built").read_text(encoding="utf-8"))
    d = Daemon(root, "hash", code=code)
    kinds: dict[str, dict[str, list[float]]] = {}

    def timed(kind: str, rel: str, text: str, memory: str | None, folder: str) -> None:
        ticks = d.cpu_ticks()
        with open(root / rel, "w", encoding="utf-8") as fh:  # a plain save, as an editor's
            fh.write(text)
        t0 = time.perf_counter()
        got = kinds.setdefault(
            kind, {"memory_md_ms": [], "folder_note_ms": [], "idle_ms": [], "cpu_ms": []}
        )
        if memory is not None:
            got["memory_md_ms"].append(_wait_for(root / "MEMORY.md", memory, t0) * 1000)
        got["folder_note_ms"].append(_wait_for(root / "decisions/decisions.md", folder, t0) * 1000)
        got["idle_ms"].append((stream.idle_after(t0) - t0) * 1000)
        # the daemon's CPU for the save, all threads (less sensitive to the machine's load)
        got["cpu_ms"].append((d.cpu_ticks() - ticks) * 1000 / os.sysconf("SC_CLK_TCK"))
        print(
            f"  {label} {kind}: " + ", ".join(f"{k} {v[-1]:.0f}" for k, v in got.items() if v),
            flush=True,
        )
        time.sleep(1.0)

    try:
        stream = StatusStream(d.info.url, d.info.token)
        stream.idle_after(d.started, limit=3600)  # the start-up reconcile
        stream.model_ready()
        ready = time.perf_counter() - d.started
        time.sleep(2.0)
        for s in range(saves):
            rel = f"decisions/2030-01-{s + 1:02}-saved{s}.md"
            new = f"# Saved {s}\n\nSaved note {s}.\n"
            timed("create", rel, new, f"saved{s}]]", f"saved{s}]]")
            edit = f"Edited {s} zq{s}x."
            timed("edit listed", rel, f"# Saved {s}\n\n{edit}\n", edit, edit)
            k = (s * 7919) % n
            deep = f"Deep edit {s} zq{s}y."
            timed("edit deep", f"decisions/2024-01-01-d{k}.md", f"# D{k}\n\n{deep}\n", None, deep)
        rss = d.status_kb("VmRSS")
    finally:
        d.stop()
        shutil.rmtree(root, ignore_errors=True)
    return {
        "first_sync_s": round(built["first_sync_s"], 1),
        "daemon_ready_s": round(ready, 1),
        "rss_mb": rss // 1024,
        # the first save after the start, apart (it may build what later saves keep)
        "first_create": {k: round(v[0]) for k, v in kinds["create"].items() if v},
        **{
            kind: {k: round(statistics.median(v)) for k, v in got.items() if v}
            for kind, got in kinds.items()
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--baseline", type=Path, default=Path("/work/main"))
    ap.add_argument("--e2e", type=int, default=0, help="also a real vault of this many notes")
    ap.add_argument("--daemon", type=int, default=0, help="the real daemon on N notes")
    ap.add_argument("--saves", type=int, default=5, help="saves of each kind (--daemon)")
    ap.add_argument("--baseline-code", type=Path, help="--daemon: also run this code base")
    ap.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "memvault-memory-md-bench"
    )
    args = ap.parse_args()
    if args.daemon:
        args.workdir.mkdir(parents=True, exist_ok=True)
        res = {"this checkout": bench_daemon(args.workdir, "this", HERE, args.daemon, args.saves)}
        if args.baseline_code is not None:
            res["baseline"] = bench_daemon(
                args.workdir, "baseline", args.baseline_code, args.daemon, args.saves
            )
        print(json.dumps({"daemon": res, "notes": args.daemon}, indent=1))
    if not args.notes:
        return
    baseline = args.baseline if (args.baseline / "daemon").is_dir() else None
    print(json.dumps({"upkeep": bench_upkeep(args.notes, baseline), "notes": args.notes}, indent=1))
    if args.e2e:
        out = {"this checkout": bench_e2e(args.e2e, HERE)}
        if baseline is not None:
            out["baseline"] = bench_e2e(args.e2e, baseline)
        print(json.dumps({"save": out, "notes": args.e2e}, indent=1))


if __name__ == "__main__":
    main()
