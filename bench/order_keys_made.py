"""What MEMORY.md's kept keys recorded with the Python that made them cost: a normal open
(the keys this process's: one read of meta, as before) and the open of a writer whose
Python made them otherwise (``note_order.rekey``: every row's keys computed again).

    python bench/order_keys_made.py --state VAULT/.memvault --code main=/work/main --code new=. --rounds 5

Each step runs in a process of its own, importing that code's ``daemon/``: ``Store``
opened as a process with no daemon opens it (``trusting``: a file memvault closed is not
checked again) and closed. First the new code opens it once (an index of schema 13 is
upgraded then, its keys computed: timed as "first open"). Then, round by round and the
codes alternating, ``--opens`` normal opens of each; then the new code records another Python's
version in meta (its own write, so the file stays vouched for) and the next open, which
computes the keys again, is timed, and the open after it; then the same with another
key algorithm recorded (every row computed: as an index of before the record). Prints medians, the ratio of
each normal open to the first code's, and how many SQL statements of each open read or
write ``meta``. The vault's files are not read; ``--state`` is written (use a copy).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

_STEP = r"""
import json, sqlite3, sys, time
sys.path.insert(0, sys.argv[1] + "/daemon")
from pathlib import Path
from memvault.index import store as S
state, action = Path(sys.argv[2]), sys.argv[3]
statements = []
connect = S._connect
def traced(path):
    conn = connect(path)
    conn.set_trace_callback(lambda sql: statements.append(sql))
    return conn
S._connect = traced
if action.startswith("other="):
    s = S.Store(state / "index.db", state / "cache.db", trusting=True)
    s.set_meta("order_keys", action.split("=", 1)[1])
    s.close()
    print(json.dumps({}))
    raise SystemExit
start = time.perf_counter()
s = S.Store(state / "index.db", state / "cache.db", trusting=True)
took = time.perf_counter() - start
meta = [q for q in statements if " meta" in q]
made = s.meta("order_keys")
s.close()
print(json.dumps({"s": took, "meta": len(meta), "made": made, "checked": s.checked}))
"""


def step(code: Path, state: Path, action: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _STEP, str(code), str(state), action],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--state", type=Path, required=True, help="a copy's .memvault/ (written)")
    ap.add_argument("--code", action="append", default=[], help="NAME=CHECKOUT; the last: new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--opens", type=int, default=6, help="normal opens of each code a round")
    args = ap.parse_args()
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.code]
    new = codes[-1][1]
    first = step(new, args.state, "open")
    print(f"first open ({codes[-1][0]}): {first['s']:.2f} s, keys made under {first['made']!r}")
    opens: dict[str, list[float]] = {name: [] for name, _ in codes}
    metas: dict[str, set[object]] = {name: set() for name, _ in codes}
    # another Python (the same algorithm: the rows of a path or title not ASCII), and
    # another algorithm or none recorded (every row)
    others = {"unicode": f"{first['made']}".split(" ")[0] + " unicode 0.0.0", "algorithm": "0"}
    again: dict[str, list[float]] = {k: [] for k in others}
    after = []
    for _ in range(args.rounds):
        for _ in range(args.opens):
            for name, code in codes:
                got = step(code, args.state, "open")
                assert not got["checked"], "the file was checked: not a normal open"
                opens[name].append(float(got["s"]))  # type: ignore[arg-type]
                metas[name].add(got["meta"])
        for kind, made in others.items():
            step(new, args.state, f"other={made}")
            got = step(new, args.state, "open")
            assert not got["checked"] and got["made"] == first["made"]
            again[kind].append(float(got["s"]))  # type: ignore[arg-type]
            after.append(float(step(new, args.state, "open")["s"]))  # type: ignore[arg-type]
    base = statistics.median(opens[codes[0][0]])
    for name, _ in codes:
        m = statistics.median(opens[name])
        print(
            f"normal open, {name}: median {m * 1000:.1f} ms ({m / base:.2f}x), "
            f"statements on meta: {sorted(metas[name])}"
        )
    for kind, took in again.items():
        print(
            f"open computing the keys again, another {kind}: median {statistics.median(took):.2f} s"
        )
    print(f"the open after it: median {statistics.median(after) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
