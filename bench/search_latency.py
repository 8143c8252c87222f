"""Wall time of `memvault search` as a subprocess: with the daemon up vs. without.

    python bench/search_latency.py                  # 12 runs per mode, a 60-note vault
    python bench/search_latency.py --runs 20 --notes 200 --keep /tmp/bench-vault
    python bench/search_latency.py --runs 9 --notes 500    # issue 14's figures (+ `log`)

Builds a small vault (the template plus generated notes), indexes it once with
the real bundled model (`memvault sync`), then times complete
`python -m memvault search QUERY --json` processes, rotating through ten
queries:

- without a daemon: each process opens the vault, takes the writer lock,
  syncs (nothing to do) and loads the model to embed the query;
- with a daemon (`memvault daemon start`): each process finds daemon.json,
  checks /health and asks the daemon over loopback HTTP — no model load;
- `memvault log TEXT` without a daemon: the line, MEMORY.md and FTS at once, the
  model never loaded (the chunk's vector is left pending);
- the daemon's answer alone: the same request from a warm process, to split
  the wall time into interpreter + CLI start-up and the daemon's work.

The floor is measured too: `python -c pass`, `memvault --version` and
`memvault search --help` (interpreter, typer and its command parsing: no
search can beat it). Prints a markdown table: wall times
(median, min, p90) and the median CPU time of the command's own process,
which does not depend on what else the machine is running.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from memvault.vault.template import init_vault  # noqa: E402

QUERIES = [
    "Why did we choose PostgreSQL?",
    "who prefers async written updates",
    "retrieval planning tool execution stages",
    "load test numbers for the memory schema",
    "team member working on payments",
    "what did we decide about caching",
    "on-call rotation and incident review",
    "design doc before writing code",
    "vector database comparison",
    "weekly planning meeting notes",
]
TOPICS = [
    "payments",
    "caching",
    "on-call",
    "search",
    "mobile app",
    "billing",
    "onboarding",
    "analytics",
    "security review",
    "data retention",
]


def make_vault(root: Path, notes: int) -> None:
    init_vault(root)
    for i in range(notes):
        topic = TOPICS[i % len(TOPICS)]
        kind = ("people", "projects", "decisions")[i % 3]
        text = (
            f"---\ntitle: Note {i} about {topic}\nsummary: Notes on {topic}, item {i}\n"
            f"tags: [{topic.replace(' ', '-')}]\ndate: 2024-0{1 + i % 9}-1{i % 10}\n---\n"
            f"# Note {i} about {topic}\n\n## Context\n\nThe {topic} work (item {i}) came up in "
            f"the weekly planning meeting. We compared options and wrote down the trade-offs.\n\n"
            f"## Details\n\n- Owner: person {i % 7}\n- Status: {'active' if i % 2 else 'done'}\n"
            f"- Follow-up: review the {topic} numbers next sprint.\n"
        )
        (root / kind / f"note-{i:03d}-{topic.replace(' ', '-')}.md").write_text(text, "utf-8")


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    # an installed memvault has its bytecode compiled; without it every process compiles
    # the package's sources again (~0.3 s of CPU: more than a `log` needs)
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    e["PYTHONPATH"] = str(ROOT / "daemon")
    e.setdefault("HF_HUB_OFFLINE", "1")
    e.setdefault("TRANSFORMERS_OFFLINE", "1")
    return e


def memvault(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memvault", *args],
        env=env(),
        text=True,
        capture_output=True,
        check=check,
    )


def timed(argv: list[str], runs: int, vary: bool = False) -> tuple[list[float], list[float]]:
    """Wall times, and the CPU time (user + system) the process itself used: the CPU
    column is what the command costs whatever else runs on the machine."""
    times, cpu = [], []
    for i in range(runs):
        args = [*argv]
        if vary:
            args[args.index("QUERY")] = QUERIES[i % len(QUERIES)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(args, env=env(), check=True, capture_output=True)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times, cpu


def answer_times(root: Path, runs: int) -> tuple[list[float], list[float]]:
    """The HTTP round trip of a search from an already running process: the part of
    the CLI's wall time that the daemon spends (query embedding, search, JSON)."""
    from memvault.client import DaemonClient

    client = DaemonClient.find(root)
    assert client is not None, "the daemon does not answer"
    times = []
    with client:
        for i in range(runs):
            started = time.perf_counter()
            client.search(QUERIES[i % len(QUERIES)], 5)
            times.append(time.perf_counter() - started)
    return times, []


def row(name: str, measured: tuple[list[float], list[float]]) -> str:
    times, cpu = measured
    q = statistics.quantiles(times, n=10) if len(times) >= 2 else times
    cpu_median = f"{statistics.median(cpu):.3f}" if cpu else "–"
    return (
        f"| {name} | {len(times)} | {statistics.median(times):.3f} | {min(times):.3f} | "
        f"{q[-1]:.3f} | {cpu_median} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--notes", type=int, default=60)
    parser.add_argument("--keep", type=Path, help="build the vault here and keep it")
    opts = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="memvault-bench-"))
    root = opts.keep or tmp / "vault"
    try:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(ROOT / "daemon")], env=env(), check=True
        )
        make_vault(root, opts.notes)
        started = time.perf_counter()
        memvault("sync", "--vault", str(root))
        print(
            f"indexed {opts.notes + 5} notes in {time.perf_counter() - started:.1f} s (real model)",
            file=sys.stderr,
        )

        search = [
            sys.executable,
            "-m",
            "memvault",
            "search",
            "QUERY",
            "--json",
            "--k",
            "5",
            "--vault",
            str(root),
        ]
        log = [sys.executable, "-m", "memvault", "log", "benchmark entry", "--vault", str(root)]
        results = {
            "python -c pass (floor)": timed([sys.executable, "-c", "pass"], opts.runs),
            "memvault --version": timed([sys.executable, "-m", "memvault", "--version"], opts.runs),
            "memvault search --help": timed([*search[:4], "--help"], opts.runs),
            "search, no daemon": timed(search, opts.runs, vary=True),
            # after the searches: each log leaves its chunk's vector pending (no model
            # loaded), which the next search without a daemon would embed first
            "log, no daemon": timed(log, opts.runs),
        }
        memvault("daemon", "start", "--vault", str(root))
        try:
            out = memvault("search", QUERIES[0], "--json", "--vault", str(root)).stdout
            assert '"hits"' in out
            results["search, daemon up"] = timed(search, opts.runs, vary=True)
            results["daemon's answer alone (warm client)"] = answer_times(root, opts.runs)
        finally:
            memvault("daemon", "stop", "--vault", str(root), check=False)

        print(
            f"\n{opts.notes + 5} notes, real model, {os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.1f}\n"
        )
        print("| command | runs | median wall s | min wall s | p90 wall s | median CPU s |")
        print("|---|---|---|---|---|---|")
        for name, times in results.items():
            print(row(name, times))
    finally:
        if opts.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
