"""Claude's memory tool without a daemon: one agent's commands, and two agents' at once.

    python bench/memory_tool_turns.py --vault DIR --code base=/tmp/old --code new=. --rounds 3

Each code (``NAME=CHECKOUT``, run with ``PYTHONPATH=CHECKOUT/daemon``, the hash embedder)
runs, in processes of its own, the codes alternating ``--rounds`` times:

- ``one``: one agent (``VaultMemoryTool(DIR)``), turns of three commands back to back
  (``view`` a folder, ``create`` a note, ``str_replace`` in it) with ``--pause`` seconds
  between turns (a model's answer), ``--turns`` turns, then its notes deleted. Reported:
  the median wall of a turn's first command and of the two after it.
- ``two``: two such agents in two processes at once, on the same vault. Reported: the
  commands refused (an agent locked out: ``MEMVAULT_LOCK_WAIT`` is ``--lock-wait``, 10 s:
  shorter than an agent's session, as the default 60 s is shorter than a real one), the
  median wall of a command and the slowest.

The vault is changed and put back: each agent's notes go to ``.trash/``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

AGENT = r"""
import json, sys, time
from anthropic.lib.tools import ToolError
from memvault.integrations.anthropic import VaultMemoryTool

root, name, turns, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
firsts, rest, refused = [], [], []
tool = VaultMemoryTool(root)
def do(command, into):
    began = time.perf_counter()
    try:
        tool.call(command)
    except ToolError as exc:
        refused.append(str(exc)[:200])
    into.append(time.perf_counter() - began)
for t in range(turns):
    path = f"/memories/bench-{name}/t{t}.md"
    do({"command": "view", "path": "/memories/people"}, firsts)
    do({"command": "create", "path": path, "file_text": f"# Turn {t}\n\nAgent {name}, turn {t}.\n"}, rest)
    do({"command": "str_replace", "path": path, "old_str": f"turn {t}.", "new_str": f"turn {t}, edited."}, rest)
    time.sleep(pause)
for t in range(turns):
    try:
        tool.call({"command": "delete", "path": f"/memories/bench-{name}/t{t}.md"})
    except ToolError:
        pass
tool.close()
print(json.dumps({"firsts": firsts, "rest": rest, "refused": refused}))
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
    args = ap.parse_args()
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.code]
    seen: dict[str, dict[str, list]] = {
        n: {"firsts": [], "rest": [], "two": [], "refused": []} for n, _ in codes
    }
    for _ in range(args.rounds):
        for name, code in codes:
            (one,) = agents(code, args.vault, ["a"], args.turns, args.pause, args.lock_wait)
            seen[name]["firsts"] += one["firsts"]
            seen[name]["rest"] += one["rest"]
            for two in agents(code, args.vault, ["b", "c"], args.turns, args.pause, args.lock_wait):
                seen[name]["two"] += two["firsts"] + two["rest"]
                seen[name]["refused"] += two["refused"]
    print(
        f"vault {args.vault}, {args.rounds} rounds, {args.turns} turns, pause {args.pause} s, "
        f"lock wait {args.lock_wait} s"
    )
    print(
        "| code | one agent: a turn's first command | the two after it "
        "| two agents: a command, median / slowest | refused |"
    )
    print("|---|---|---|---|---|")
    for name, _ in codes:
        s = seen[name]
        print(
            f"| {name} | {ms(s['firsts'])} | {ms(s['rest'])} "
            f"| {ms(s['two'])} / {max(s['two'], default=0):.1f} s "
            f"| {len(s['refused'])} of {len(s['two'])} |"
        )
        for text in sorted(set(s["refused"]))[:3]:
            print(f"  refused: {text}")


if __name__ == "__main__":
    main()
