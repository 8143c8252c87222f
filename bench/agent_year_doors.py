"""A careless agent's year, part 2 (bench/RESULTS.md, "A year of an agent's writes,
part 2"): thousands of one-line memory-tool notes in one folder, written through a
running daemon, and what the doors do with repeated facts, tool dumps and near-twin
names.

    python bench/agent_year_doors.py                     # this checkout, 5,000 creates
    python bench/agent_year_doors.py --code /tmp/main/daemon --creates 5000

Starts ``memvault daemon run`` on a new vault (hash embedder), opens it as an agent
does (``Vault.open``: writes go to the daemon over HTTP), creates
``/memories/facts/fact-N.md`` one line each: per-create wall time (median, p95, the
first 100 vs the last 100), MEMORY.md's size, the daemon's RSS after. Then, in the
same vault: the same ``log`` line 50 times, a 0.9 MB ``log``, the memory tool
creating ``people/Ana Pérez.md`` beside ``people/ana-pérez.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", default=str(ROOT / "daemon"))
    ap.add_argument("--creates", type=int, default=5000)
    args = ap.parse_args()
    os.environ["MEMVAULT_INDEX_MODEL"] = "hash"
    sys.path.insert(0, args.code)
    from memvault import Vault

    env = dict(os.environ, PYTHONPATH=args.code)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        run = [sys.executable, "-m", "memvault"]
        subprocess.run([*run, "init", str(root)], env=env, check=True, capture_output=True)
        daemon = subprocess.Popen(
            [*run, "daemon", "run", "--vault", str(root)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            for _ in range(100):
                time.sleep(0.5)
                vault = Vault.open(root)
                if vault.daemon is not None:
                    break
                vault.close()
            walls = []
            for i in range(args.creates):
                t = time.perf_counter()
                vault.memory_tool(
                    {
                        "command": "create",
                        "path": f"/memories/facts/fact-{i}.md",
                        "file_text": f"Fact {i}: the user mentioned item {i * 7919 % 10007}.\n",
                    }
                )
                walls.append(time.perf_counter() - t)
            time.sleep(3)
            status = Path(f"/proc/{daemon.pid}/status").read_text()
            rss = int(status.split("VmRSS:")[1].split()[0]) // 1024
            memory_md = (root / "MEMORY.md").read_bytes()
            walls.sort()
            said = {
                "creates": args.creates,
                "median_ms": round(statistics.median(walls) * 1e3, 1),
                "p95_ms": round(walls[int(len(walls) * 0.95) - 1] * 1e3, 1),
                "first100_ms": round(statistics.median(walls[:100]) * 1e3, 1),
                "last100_ms": round(statistics.median(walls[-100:]) * 1e3, 1),
                "memory_md_bytes": len(memory_md),
                "daemon_rss_mb": rss,
            }
            for _ in range(50):
                log = vault.log("deployed payments v2 to staging").path
            said["same_log_line_x50_lines"] = (
                (root / log).read_text("utf-8").count("deployed payments v2 to staging")
            )
            try:
                vault.log("\n".join(f"{i:06d} timeout retry ledger" for i in range(30_000)))
                said["log_0.9MB"] = "kept"
            except ValueError as exc:
                said["log_0.9MB"] = f"refused: {str(exc)[:60]}"
            vault.memory_tool(
                {"command": "create", "path": "/memories/people/ana-pérez.md", "file_text": "x\n"}
            )
            try:
                vault.memory_tool(
                    {
                        "command": "create",
                        "path": "/memories/people/Ana Pérez.md",
                        "file_text": "y\n",
                    }
                )
                said["twin_create"] = "made"
            except Exception as exc:  # MemoryToolError: the tool's refusal
                said["twin_create"] = f"refused: {str(exc)[:60]}"
            vault.close()
            print(json.dumps(said, ensure_ascii=False, indent=1))
        finally:
            daemon.terminate()
            daemon.wait(30)


if __name__ == "__main__":
    main()
