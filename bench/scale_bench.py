"""Scale: a vault of 1k-100k realistic notes, costs measured against a baseline in one run.

    python bench/scale_bench.py --sizes 1000,10000                    # this checkout vs main
    python bench/scale_bench.py --sizes 50000 --code branch=.          # one code only
    python bench/scale_bench.py --sizes 1000 --code base=/work/main --code branch=. --edits 10
    python bench/scale_bench.py --sizes 5000 --short      # short notes: .memvault/'s bytes

Each ``--code NAME=CHECKOUT`` runs with ``PYTHONPATH=CHECKOUT/daemon`` (default: ``main``
= the commit /work/main is at, exported once to a temporary folder so a merge during the
run cannot change the baseline; ``branch`` = this checkout). For each size and each code
a fresh vault is generated (the same seed: byte-identical vaults) and measured, with the
hash embedder (``MEMVAULT_INDEX_MODEL=hash``: the model is not what is timed):

- first sync: CPU seconds (user+sys of the process, from wait4) per note, wall, peak RSS;
- ``.memvault/`` bytes against the notes' bytes;
- a no-op sync (wall, in a fresh process: open + sync) and ``memvault links check``;
- the daemon: RSS idle after start (after the idle save), save -> searchable (median of
  ``--edits`` appends of a unique word, polled through ``POST /search``), then a
  500-note folder (``projects/alpha``) renamed on disk, linked from ~6,000 notes
  (``min(6000, 0.6 n)``; absolute-path links, so every one must be rewritten): seconds
  until every link names the new folder and the daemon is idle again, then its RSS idle
  (and VmHWM, the peak).

The notes: 100-600 words (a Zipf-distributed vocabulary of 4,000 made-up words) under
1-4 headings, paragraphs and bullet lists, 3-15 ``[[wikilinks]]`` each, frontmatter with
title, summary, date and tags, spread over people/ projects/ decisions/ logs/ topics/.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shutil
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

FOLDERS = (
    "people",
    "projects",
    "decisions",
    "logs",
    "topics/eng",
    "topics/ops",
    "topics/biz",
    "topics/research",
)
RENAMED = "projects/alpha"
RENAMED_TO = "projects/beta"


# -- the vault -------------------------------------------------------------------------------


def _vocabulary(
    rng: random.Random, n: int = 4000, english: bool = False
) -> tuple[list[str], list[float]]:
    """``n`` words, most frequent first, with Zipf weights (cumulative). Made-up words
    of 1-4 syllables, or (``english``) the words of Python's own documentation
    (``pydoc_data``: in every CPython) by their frequency there: made-up words cost
    the real model's tokenizer ~3 word pieces each, English ones ~1.2, so with the
    real model the same note is cut into ~2.5x the chunks (a vault in another
    language is nearer the made-up one)."""
    if english:
        from pydoc_data.topics import topics

        counts: dict[str, int] = {}
        for word in re.findall(r"[a-z]{2,}", " ".join(topics.values()).lower()):
            counts[word] = counts.get(word, 0) + 1
        ranked = sorted(counts, key=lambda w: (-counts[w], w))[:n]
        return ranked, list(itertools.accumulate(1.0 / (i + 1) for i in range(len(ranked))))
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"] + ["an", "er", "is", "on"]
    words = sorted({"".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(n * 2)})
    rng.shuffle(words)
    words = words[:n]
    cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(words))))
    return words, cum


def note_paths(n: int) -> list[str]:
    """Vault-relative paths without .md: the renamed folder first, then the rest."""
    alpha = min(500, n // 5)
    paths = [f"{RENAMED}/a{i:05}" for i in range(alpha)]
    for i in range(n - alpha):
        paths.append(f"{FOLDERS[i % len(FOLDERS)]}/n{i:06}")
    return paths


def generate(
    root: Path, n: int, seed: int = 27, short: bool = False, english: bool = False
) -> dict[str, int]:
    """Write an ``n``-note vault at ``root``; returns what it holds. ``short``: notes of
    5-60 words with 0-3 links, a title heading, no frontmatter (a person's quick notes:
    the vault of issue 27's 7.9x ``.memvault/``); the renamed folder and its links
    are not made."""
    rng = random.Random(seed)
    words, cum = _vocabulary(rng, english=english)
    paths = note_paths(n)
    if short:
        return _generate_short(root, paths, rng, words, cum)
    alpha = [p for p in paths if p.startswith(RENAMED + "/")]
    linkers = min(6000, n * 6 // 10)
    others = len(alpha)  # the notes after the renamed folder: linkers come first
    (root / ".obsidian").mkdir(parents=True, exist_ok=True)
    (root / ".obsidian" / "app.json").write_text('{"newLinkFormat": "absolute"}\n')
    total_links = links_in = 0
    for i, rel in enumerate(paths):
        count = rng.randint(100, 600)
        text_words = rng.choices(words, cum_weights=cum, k=count)
        k = rng.randint(3, 15)
        targets = [paths[rng.randrange(n)] for _ in range(k)]
        if others <= i < others + linkers:
            targets[0] = rng.choice(alpha)  # a link into the folder that is renamed
        links_in += sum(t.startswith(RENAMED + "/") for t in targets)
        total_links += k
        # link positions among the words
        spots = sorted(rng.sample(range(count), min(k, count)))
        for spot, target in zip(reversed(spots), reversed(targets), strict=False):
            text_words.insert(spot, f"[[{target}]]")
        sections = rng.randint(1, 4)
        per = max(1, len(text_words) // sections)
        body: list[str] = []
        for s in range(sections):
            part = (
                text_words[s * per : (s + 1) * per] if s < sections - 1 else text_words[s * per :]
            )
            body.append(f"## {' '.join(rng.choices(words, cum_weights=cum, k=2)).title()}\n")
            pos = 0
            while pos < len(part):
                size = rng.randint(12, 60)
                chunk = part[pos : pos + size]
                pos += size
                if rng.random() < 0.3:  # a bullet list
                    step = max(3, len(chunk) // rng.randint(2, 5))
                    body.append(
                        "\n".join(
                            "- " + " ".join(chunk[j : j + step]) for j in range(0, len(chunk), step)
                        )
                    )
                else:
                    body.append(" ".join(chunk).capitalize() + ".")
                body.append("")
        title = " ".join(rng.choices(words, cum_weights=cum, k=3)).title()
        tags = ", ".join(rng.sample(words[:60], 2))
        text = (
            f"---\ntitle: {title}\nsummary: {' '.join(rng.choices(words, cum_weights=cum, k=8))}\n"
            f"date: 2025-{1 + i % 12:02}-{1 + i % 28:02}\ntags: [{tags}]\n---\n"
            f"# {title}\n\n" + "\n".join(body)
        )
        path = root / f"{rel}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return {"notes": n, "renamed_notes": len(alpha), "links": total_links, "links_in": links_in}


def _generate_short(
    root: Path, paths: list[str], rng: random.Random, words: list[str], cum: list[float]
) -> dict[str, int]:
    (root / ".obsidian").mkdir(parents=True, exist_ok=True)
    total_links = 0
    for rel in paths:
        text_words = rng.choices(words, cum_weights=cum, k=rng.randint(5, 60))
        k = rng.randint(0, 3)
        for _ in range(k):
            text_words.insert(rng.randrange(len(text_words) + 1), f"[[{rng.choice(paths)}]]")
        total_links += k
        lines, pos = [], 0
        while pos < len(text_words):  # one to a few short lines, some of them bullets
            size = rng.randint(4, 20)
            line = " ".join(text_words[pos : pos + size])
            lines.append(("- " if rng.random() < 0.4 else "") + line)
            pos += size
        title = " ".join(rng.choices(words, cum_weights=cum, k=2)).title()
        path = root / f"{rel}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {title}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return {"notes": len(paths), "renamed_notes": 0, "links": total_links, "links_in": 0}


def links_into(root: Path, folder: str) -> int:
    """How many ``[[folder/...`` links the vault's notes hold."""
    needle = f"[[{folder}/"
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.endswith(".md"):
                with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                    count += fh.read().count(needle)
    return count


def tree_bytes(root: Path, suffix: str | None = None) -> int:
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        if suffix is not None:
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if suffix is None or name.endswith(suffix):
                total += os.path.getsize(os.path.join(dirpath, name))
    return total


# -- a code to measure -----------------------------------------------------------------------


def _env(code: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["PYTHONPATH"] = str(code / "daemon")
    env["MEMVAULT_INDEX_MODEL"] = "hash"
    return env


SYNC = """
import json, sys, time
from memvault.api import Vault
t = time.perf_counter()
with Vault.open(sys.argv[1]) as v:
    r = v.sync()
print(json.dumps({"wall": time.perf_counter() - t, "summary": r.summary()}))
"""


def _popen_wait4(code: Path, argv: list[str], ok: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, env=_env(code), stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode()
    if proc.returncode not in ok:  # links check exits 1 when it finds problems
        raise SystemExit(f"{argv} exited {proc.returncode}:\n{errors[-3000:]}")
    result: dict[str, Any] = {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "maxrss_mb": usage.ru_maxrss / 1024,
    }
    try:
        result["out"] = json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        result["out"] = text[-300:]
    return result


def save_to_searchable(d: Daemon, root: Path, edits: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    notes = sorted((root / "people").glob("n*.md"))
    run = "".join(random.SystemRandom().choice(string.ascii_lowercase) for _ in range(6))
    out = []
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
            if time.perf_counter() - saved > 60:
                raise SystemExit(f"edit {i} never became searchable")
            time.sleep(0.01)
        out.append(time.perf_counter() - saved)
        time.sleep(1.0)
    return out


def idle(d: Daemon) -> bool:
    try:
        s = d.call("GET", "/status")["daemon"]
    except (TimeoutError, OSError):  # a daemon busy on a loaded machine: not idle yet
        return False
    vectors = s.get("vectors") or {}
    return (
        s["state"] == "watching"
        and s.get("model", "ready") in ("ready", "failed")  # warm-up done (lists, vectors)
        and s["lag_seconds"] is None
        and s["queue"] == 0
        and not s.get("reconciling")
        and not vectors.get("pending")
        and not vectors.get("busy")
    )


def measure(
    name: str, code: Path, n: int, work: Path, edits: int, daemon: bool, short: bool = False
) -> dict[str, Any]:
    root = work / f"vault-{n}-{name}"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    t = time.perf_counter()
    made = generate(root, n, short=short)
    print(f"[{name} {n}] generated in {time.perf_counter() - t:.0f} s: {made}", flush=True)
    py = sys.executable
    _popen_wait4(code, [py, "-m", "memvault", "init", str(root)], ok=(0,))
    first = _popen_wait4(code, [py, "-c", SYNC, str(root)])
    print(f"[{name} {n}] first sync {first['wall']:.1f} s, {first['cpu']:.1f} s CPU", flush=True)
    notes_bytes = tree_bytes(root, ".md")
    state_bytes = tree_bytes(root / ".memvault")
    noop = _popen_wait4(code, [py, "-c", SYNC, str(root)])
    links = _popen_wait4(code, [py, "-m", "memvault", "links", "check", "--vault", str(root)])
    row: dict[str, Any] = {
        "code": name,
        "notes": n,
        "short": short,
        "first_sync_cpu_ms_per_note": round(first["cpu"] / n * 1000, 2),
        "first_sync_wall_s": round(first["wall"], 1),
        "first_sync_peak_rss_mb": round(first["maxrss_mb"]),
        "notes_mb": round(notes_bytes / 1e6, 1),
        "memvault_mb": round(state_bytes / 1e6, 1),
        "memvault_x": round(state_bytes / notes_bytes, 2),
        "noop_sync_s": round(noop["wall"], 2),
        "links_check_s": round(links["wall"], 2),
        "links_check_rss_mb": round(links["maxrss_mb"]),
    }
    print(f"[{name} {n}] {row}", flush=True)
    if not daemon:
        return row
    d = Daemon(root, "hash", code=code)
    try:
        d.settle()
        time.sleep(7)  # past the idle save
        row["rss_idle_start_mb"] = round(d.status_kb("VmRSS") / 1024)
        lat = save_to_searchable(d, root, edits, seed=n)
        row["save_to_searchable_ms_p50"] = round(statistics.median(lat) * 1000)
        row["save_to_searchable_ms_max"] = round(max(lat) * 1000)
        while not idle(d):
            time.sleep(0.2)
        time.sleep(2)
        row.update(rename_under(d, root))
    finally:
        d.stop()
    print(f"[{name} {n}] {row}", flush=True)
    return row


def quiet(d: Daemon) -> bool:
    """``idle`` from the daemon's own state alone: the first ``event: status`` of
    ``GET /events`` (state, queue, lag, vectors), not ``GET /status``, whose link
    check parses every note changed since its row (thousands mid-rename: seconds of
    the daemon's CPU a call, four calls a second, measured as the rename's)."""
    import urllib.request

    req = urllib.request.Request(
        f"{d.info.url}/events", headers={"Authorization": f"Bearer {d.info.token}"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=30) as r:
            event = ""
            for raw in r:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "status":
                    s = json.loads(line[6:])
                    break
            else:
                return False
    except (TimeoutError, OSError):
        return False
    vectors = s.get("vectors") or {}
    return (
        s["state"] == "watching"
        and s["lag_seconds"] is None
        and s["queue"] == 0
        and not s.get("progress")
        and not vectors.get("pending")
        and not vectors.get("busy")
    )


def linking_files(root: Path, folder: str) -> list[Path]:
    """The notes holding a ``[[folder/...`` link (read once, before the rename)."""
    needle = f"[[{folder}/"
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.endswith(".md"):
                path = Path(dirpath, name)
                if needle in path.read_text(encoding="utf-8"):
                    out.append(path)
    return out


def links_in(paths: list[Path], old: str, new: str, folder: str) -> int:
    """``links_into`` over ``paths`` only (a note inside the renamed folder is looked
    for under its new name): the probe reads thousands of files, not the vault."""
    needle = f"[[{folder}/"
    count = 0
    for path in paths:
        p = str(path)
        if f"/{old}/" in p:
            p = p.replace(f"/{old}/", f"/{new}/")
        try:
            with open(p, encoding="utf-8") as fh:
                count += fh.read().count(needle)
        except FileNotFoundError:
            pass
    return count


def rename_under(d: Daemon, root: Path) -> dict[str, Any]:
    """``projects/alpha`` renamed on disk under the running daemon ``d``: seconds until
    every link names the new folder and until the daemon is idle again (``quiet``),
    the daemon's CPU seconds meanwhile (/proc/PID/stat), the load average, RSS idle
    after (and VmHWM, the peak)."""
    row: dict[str, Any] = {}
    before = links_into(root, RENAMED)
    linking = linking_files(root, RENAMED)
    ticks, hz = d.cpu_ticks(), os.sysconf("SC_CLK_TCK")
    load = [os.getloadavg()[0]]
    os.rename(root / RENAMED, root / RENAMED_TO)
    moved = time.perf_counter()
    deadline = moved + 1200
    rewritten = False
    while time.perf_counter() < deadline:
        if not rewritten and links_in(linking, RENAMED, RENAMED_TO, RENAMED_TO) >= before:
            rewritten = True
            row["rename_links_rewritten_s"] = round(time.perf_counter() - moved, 1)
        if rewritten and quiet(d):
            break
        time.sleep(0.25)
        load.append(os.getloadavg()[0])
    row["rename_idle_s"] = round(time.perf_counter() - moved, 1)
    row["rename_daemon_cpu_s"] = round((d.cpu_ticks() - ticks) / hz, 1)
    row["rename_load_avg"] = [round(min(load), 1), round(max(load), 1)]
    row["rename_links"] = before
    row["rename_links_left_old"] = links_into(root, RENAMED)
    row["rename_links_new"] = links_into(root, RENAMED_TO)
    info = d.call("GET", "/status")["daemon"]
    row["overflows"] = info.get("overflows")
    row["rss_before_idle_mb"] = round(d.status_kb("VmRSS") / 1024)
    time.sleep(7)
    row["rss_idle_after_rename_mb"] = round(d.status_kb("VmRSS") / 1024)
    row["rss_peak_mb"] = round(d.status_kb("VmHWM") / 1024)
    return row


def rename_indexed(name: str, code: Path, indexed: Path, work: Path) -> dict[str, Any]:
    """The folder rename alone, under a daemon started on a copy of ``indexed`` (a vault
    ``generate`` made and a sync indexed: ``--indexed``), so a 50k-note rename needs no
    first sync of its own. The copy's start-up reconcile (nothing changed) is waited out."""
    root = work / f"vault-indexed-{name}"
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run(["cp", "-a", str(indexed), str(root)], check=True)
    (root / ".memvault" / "daemon.json").unlink(missing_ok=True)
    row: dict[str, Any] = {"code": name, "indexed": str(indexed)}
    d = Daemon(root, "hash", code=code)
    try:
        d.settle()
        while not quiet(d):
            time.sleep(0.5)
        time.sleep(7)  # past the idle save
        row["rss_idle_start_mb"] = round(d.status_kb("VmRSS") / 1024)
        row.update(rename_under(d, root))
    finally:
        d.stop()
    print(f"[{name} indexed] {row}", flush=True)
    return row


def _export_main(work: Path) -> Path:
    """The commit /work/main is at, exported (its daemon/ only) so a merge cannot move it."""
    head = subprocess.run(
        ["git", "-C", "/work/main", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    target = work / f"main-{head[:8]}"
    if not (target / "daemon").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", "/work/main", "archive", head, "daemon", "vault-template"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    print(f"main = {head}", flush=True)
    return target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT (repeatable)")
    ap.add_argument("--edits", type=int, default=15)
    ap.add_argument("--no-daemon", action="store_true")
    ap.add_argument("--short", action="store_true", help="short notes (5-60 words), no daemon part")
    ap.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "memvault-scale-bench"
    )
    ap.add_argument("--out", type=Path, help="append each row as a JSON line here")
    ap.add_argument(
        "--indexed", type=Path, help="an indexed vault: the daemon's rename on a copy of it, only"
    )
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    codes: list[tuple[str, Path]] = []
    for spec in args.code or ["main=main", "branch=."]:
        name, _, where = spec.partition("=")
        codes.append(
            (name, _export_main(args.workdir) if where == "main" else Path(where).resolve())
        )
    rows = []
    if args.indexed is not None:
        for name, code in codes:
            rows.append(rename_indexed(name, code, args.indexed.resolve(), args.workdir))
            if args.out:
                with open(args.out, "a") as fh:
                    fh.write(json.dumps(rows[-1]) + "\n")
            shutil.rmtree(args.workdir / f"vault-indexed-{name}", ignore_errors=True)
        print(json.dumps(rows, indent=1))
        return
    for n in [int(s) for s in args.sizes.split(",")]:
        for name, code in codes:
            daemon = not (args.no_daemon or args.short)
            row = measure(name, code, n, args.workdir, args.edits, daemon, args.short)
            rows.append(row)
            if args.out:
                with open(args.out, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
            shutil.rmtree(args.workdir / f"vault-{n}-{name}", ignore_errors=True)
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
