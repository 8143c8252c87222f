"""Claude's memory tool without a daemon: one agent's commands, and two or more agents'
at once.

    python bench/memory_tool_turns.py --vault DIR --code base=/tmp/old --code new=. --rounds 3
    python bench/memory_tool_turns.py --vault DIR --code base=/tmp/old --code new=. \
        --agents 3,4 --no-one --pause 0.3

Each code (``NAME=CHECKOUT``, run with ``PYTHONPATH=CHECKOUT/daemon``, the hash embedder)
runs, in processes of its own, the codes alternating ``--rounds`` times:

- ``one``: one agent (``VaultMemoryTool(DIR)``), turns of three commands back to back
  (``view`` a folder, ``create`` a note, ``str_replace`` in it) with ``--pause`` seconds
  between turns (a model's answer), ``--turns`` turns, then its notes deleted. Reported:
  the median wall of a turn's first command and of the two after it.
- ``N agents`` (``--agents``, 2: two): N such agents in N processes at once, on the same
  vault. Reported: the commands refused (an agent locked out: ``MEMVAULT_LOCK_WAIT`` is
  ``--lock-wait``, 10 s: shorter than an agent's session, as the default 60 s is shorter
  than a real one), the median wall of a command, the slowest command, and the median
  over rounds of each round's slowest (the machine is shared: one round's stall is not
  the code's), and the median wall of a round (the agents started to the last done:
  what fairness costs in throughput). A command that failed otherwise is said apart (none expected).

The vault is changed and put back: each agent's notes go to ``.trash/``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

AGENT = r"""
import json, os, sys, time
from anthropic.lib.tools import ToolError
from memvault.integrations.anthropic import VaultMemoryTool

root, name, turns, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
firsts, rest, refused, failed = [], [], [], []
tool = VaultMemoryTool(root)
def do(command, into):
    began = time.perf_counter()
    try:
        tool.call(command)
    except ToolError as exc:  # locked out, or another error (said apart)
        (refused if "writing to this vault" in str(exc) else failed).append(str(exc)[:200])
    into.append(time.perf_counter() - began)
tag = os.getpid()  # a note left by a refused delete is not created again
for t in range(turns):
    path = f"/memories/bench-{name}/{tag}-t{t}.md"
    do({"command": "view", "path": "/memories/people"}, firsts)
    do({"command": "create", "path": path, "file_text": f"# Turn {t}\n\nAgent {name}, turn {t}.\n"}, rest)
    do({"command": "str_replace", "path": path, "old_str": f"turn {t}.", "new_str": f"turn {t}, edited."}, rest)
    time.sleep(pause)
for t in range(turns):
    try:
        tool.call({"command": "delete", "path": f"/memories/bench-{name}/{tag}-t{t}.md"})
    except ToolError:
        pass
tool.close()
print(json.dumps({"firsts": firsts, "rest": rest, "refused": refused, "failed": failed}))
"""


def agents(
    code: Path, vault: Path, names: list[str], turns: int, pause: float, wait: float
) -> list[dict]:
    env = dict(
        os.environ,
        MEMVAULT_INDEX_MODEL="hash",
        MEMVAULT_LOCK_WAIT=str(wait),
        PYTHONPATH=str(code / "daemon"),
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", AGENT, str(vault), n, str(turns), str(pause)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # "waiting for process ..." at each wait
            text=True,
        )
        for n in names
    ]
    out = []
    for p in procs:
        stdout, _ = p.communicate()
        out.append(json.loads(stdout))
    return out


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms" if values else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True, help="an indexed vault")
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT (repeatable)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--pause", type=float, default=3.0)
    ap.add_argument("--lock-wait", type=float, default=10.0)
    ap.add_argument("--agents", default="2", help="how many agents at once, e.g. 2,3,4")
    ap.add_argument("--no-one", action="store_true", help="skip the one agent's run")
    args = ap.parse_args()
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.code]
    groups = [int(n) for n in args.agents.split(",")]
    one: dict[str, dict[str, list]] = {n: {"firsts": [], "rest": []} for n, _ in codes}
    many: dict[tuple[str, int], dict[str, list]] = {
        (n, g): {"walls": [], "worst": [], "rounds": [], "refused": [], "failed": []}
        for n, _ in codes
        for g in groups
    }
    for _ in range(args.rounds):
        for name, code in codes:
            if not args.no_one:
                (a,) = agents(code, args.vault, ["a"], args.turns, args.pause, args.lock_wait)
                one[name]["firsts"] += a["firsts"]
                one[name]["rest"] += a["rest"]
            for g in groups:
                names = [chr(ord("b") + i) for i in range(g)]
                s = many[name, g]
                walls, began = [], time.perf_counter()
                outs = agents(code, args.vault, names, args.turns, args.pause, args.lock_wait)
                s["rounds"].append(time.perf_counter() - began)
                for out in outs:
                    walls += out["firsts"] + out["rest"]
                    s["refused"] += out["refused"]
                    s["failed"] += out["failed"]
                s["walls"] += walls
                s["worst"].append(max(walls))
    print(
        f"vault {args.vault}, {args.rounds} rounds, {args.turns} turns, pause {args.pause} s, "
        f"lock wait {args.lock_wait} s"
    )
    if not args.no_one:
        print("| code | one agent: a turn's first command | the two after it |")
        print("|---|---|---|")
        for name, _ in codes:
            print(f"| {name} | {ms(one[name]['firsts'])} | {ms(one[name]['rest'])} |")
    print(
        "| code | agents at once | a command: median | slowest "
        "| a round's slowest: median | a round, all agents done: median | refused |"
    )
    print("|---|---|---|---|---|---|---|")
    for g in groups:
        for name, _ in codes:
            s = many[name, g]
            print(
                f"| {name} | {g} | {ms(s['walls'])} | {max(s['walls']):.1f} s "
                f"| {statistics.median(s['worst']):.1f} s "
                f"| {statistics.median(s['rounds']):.1f} s "
                f"| {len(s['refused'])} of {len(s['walls'])} |"
            )
            for text in sorted(set(s["refused"]))[:2] + sorted(set(s["failed"]))[:3]:
                print(f"  refused or failed: {text}")


if __name__ == "__main__":
    main()
