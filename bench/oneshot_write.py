"""A write in a process of its own, no daemon: `memvault add`, `memvault log` and the
`memvault search` after them, the whole process timed (its start, the index opened,
the write, its structure sync and MEMORY.md; the search's catch-up of the new chunks).

    python bench/oneshot_write.py --vault DIR --work TMP --code main=/work/main --code new=. --rounds 3

A write changes the vault: each code writes to its own copy of ``--vault`` (made in
``--work`` once, ``cp -a``; or given, ``--copy NAME=DIR``), the codes alternating round
by round; each round adds a new note (``add projects "Bench note R"``), logs a new line
and searches for it. Prints the medians per code and command (wall, CPU of the
process: user + system, its peak RSS), their ratio to the first code's, and whether
the search found the line logged by meaning (its first hit today's log, not pending).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from oneshot_bench import run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vault", type=Path, help="an indexed vault (copied, never written)")
    ap.add_argument("--work", type=Path, help="where the copies are made")
    ap.add_argument("--copy", action="append", default=[], help="NAME=DIR: a code's copy")
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT (repeatable)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.code]
    copies = {c.split("=", 1)[0]: Path(c.split("=", 1)[1]) for c in args.copy}
    for name, _ in codes:
        if name not in copies:
            if args.vault is None or args.work is None:
                raise SystemExit(f"no copy for {name}: give --copy {name}=DIR or --vault/--work")
            copies[name] = args.work / f"{name}-{args.vault.name}"
            if not copies[name].exists():
                subprocess.run(["cp", "-a", str(args.vault), str(copies[name])], check=True)
    times: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    found: dict[str, list[bool]] = {}
    for r in range(args.rounds):
        for name, code in codes if r % 2 == 0 else codes[::-1]:
            vault = copies[name].resolve()
            line = f"bench entry {name} zq{r}x{len(name)}"
            commands = {
                "add": ["add", "projects", f"Bench note {r}"],
                "log": ["log", line],
                "search": ["search", line, "--k", "3", "--json"],
            }
            for command, argv in commands.items():
                wall, cpu, rss, out = run(code, vault, argv)
                times.setdefault((name, command), []).append((wall, cpu, rss))
                if command == "search":
                    hits = json.loads(out)["hits"]
                    first = hits[0] if hits else {}
                    ok = str(first.get("path", "")).startswith("logs/") and line in first["text"]
                    found.setdefault(name, []).append(ok and not first.get("pending"))
                print(
                    f"round {r + 1} {name} {command}: wall {wall:.2f} s, cpu {cpu:.2f} s, "
                    f"rss {rss:.0f} MB",
                    flush=True,
                )
    base = codes[0][0]
    print("\nmedians (ratio to", base + ")")
    for command in ("add", "log", "search"):
        for name, _ in codes:
            walls, cpus, rsss = zip(*times[(name, command)], strict=True)
            w, c, m = statistics.median(walls), statistics.median(cpus), statistics.median(rsss)
            bw = statistics.median(t[0] for t in times[(base, command)])
            print(
                f"{command:7} {name:6} wall {w:.2f} s ({w / bw:.2f}x)  cpu {c:.2f} s  "
                f"rss {m:.0f} MB"
            )
    for name, _ in codes:
        print(f"{name}: the line logged found by the next search: {found.get(name)}")
    if args.vault is not None and args.work is not None and not args.copy:
        for name in copies:
            shutil.rmtree(copies[name], ignore_errors=True)


if __name__ == "__main__":
    main()
