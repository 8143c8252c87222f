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

    python bench/memory_md_bench.py --notes 100000
    python bench/memory_md_bench.py --notes 100000 --e2e 20000
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--baseline", type=Path, default=Path("/work/main"))
    ap.add_argument("--e2e", type=int, default=0, help="also a real vault of this many notes")
    args = ap.parse_args()
    baseline = args.baseline if (args.baseline / "daemon").is_dir() else None
    print(json.dumps({"upkeep": bench_upkeep(args.notes, baseline), "notes": args.notes}, indent=1))
    if args.e2e:
        out = {"this checkout": bench_e2e(args.e2e, HERE)}
        if baseline is not None:
            out["baseline"] = bench_e2e(args.e2e, baseline)
        print(json.dumps({"save": out, "notes": args.e2e}, indent=1))


if __name__ == "__main__":
    main()
