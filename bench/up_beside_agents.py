"""`memvault up` started, then stopped, while agents use Claude's memory tool on the vault
without a daemon (their vaults kept between commands: memvault/door.py).

    python bench/up_beside_agents.py --vault DIR --agents 3 --rounds 4

Each round: ``--agents`` agents (bench/memory_tool_turns.py's, 25 turns of three commands,
0.3 s apart) start; 4 s later `memvault up` starts; reported: whether it serves (and how
soon daemon.json is written) or exits (its code and last words); 3 s after it serves it
is stopped (SIGTERM) while the agents go on, then the agents' commands refused (locked
out) and failed otherwise (e.g. "cannot reach the daemon"). The hash embedder; the
vault is changed and put back (each agent deletes its notes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from memory_tool_turns import AGENT


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True, help="an indexed vault")
    ap.add_argument("--agents", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    code = Path(__file__).resolve().parents[1] / "daemon"
    env = dict(
        os.environ,
        MEMVAULT_INDEX_MODEL="hash",
        MEMVAULT_LOCK_WAIT="10",
        PYTHONPATH=str(code),
    )
    vault = str(args.vault)
    runfile = args.vault / ".memvault" / "daemon.json"
    for r in range(args.rounds):
        agents = [
            subprocess.Popen(
                [sys.executable, "-c", AGENT, vault, chr(98 + i), "25", "0.3"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            for i in range(args.agents)
        ]
        time.sleep(4)
        began = time.monotonic()
        up = subprocess.Popen(
            [sys.executable, "-m", "memvault", "up", "--port", "0", vault],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        state = "neither served nor exited within 30 s"
        while time.monotonic() - began < 30:
            if up.poll() is not None:
                said = (up.stdout.read() if up.stdout else "")[-300:]
                state = f"exited {up.returncode} after {time.monotonic() - began:.1f} s: {said!r}"
                break
            if runfile.exists():
                state = f"serving after {time.monotonic() - began:.1f} s"
                break
            time.sleep(0.05)
        if up.poll() is None:
            time.sleep(3)
            up.terminate()
            up.wait(60)
        outs = [json.loads(a.communicate()[0]) for a in agents]
        refused = sum(len(o["refused"]) for o in outs)
        failed = [f for o in outs for f in o["failed"]]
        commands = sum(len(o["firsts"]) + len(o["rest"]) for o in outs)
        print(
            f"round {r}: up {state}; agents: {commands} commands, {refused} refused, "
            f"{len(failed)} failed {[f[:100] for f in failed[:2]]}",
            flush=True,
        )


if __name__ == "__main__":
    main()
