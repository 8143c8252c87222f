"""The scan of a folder of ``Fact.MD`` files (named as notes but for their case), code
against code, on the disks given (one that folds case, exFAT through FUSE, and ext4).

    python bench/casefs_md_scan.py --files 10000 --rounds 3 \\
        --dir exfat=/mnt/exfat/bench --dir ext4=/tmp/bench-md \\
        --code base=/tmp/base-checkout --code branch=.

Each ``--dir NAME=FOLDER`` gets ``FOLDER/facts`` with ``--files`` files ``Fact N.MD``
(made once, kept). Each ``--code NAME=CHECKOUT`` scans it in a process of its own
(``PYTHONPATH=CHECKOUT/daemon``): ``VaultFS(FOLDER).scan()``, wall time, the median of
``--rounds``, rounds alternating the codes. (Mount an exFAT disk as root as
tests/test_field_casefs.py does: losetup, mkfs.exfat, mount.exfat-fuse.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

_CHILD = r"""
import json, sys, time
from pathlib import Path
from memvault.vault.files import VaultFS
fs = VaultFS(Path(sys.argv[1]))
t = time.perf_counter()
scan = fs.scan()
print(json.dumps({"s": time.perf_counter() - t, "skipped": len(scan.skipped)}))
"""


def _pair(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    if not value:
        raise argparse.ArgumentTypeError(f"NAME=PATH, not {text!r}")
    return name, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", type=_pair, action="append", required=True)
    ap.add_argument("--code", type=_pair, action="append", required=True)
    args = ap.parse_args()
    for _, folder in args.dir:
        facts = Path(folder) / "facts"
        facts.mkdir(parents=True, exist_ok=True)
        have = set(os.listdir(facts))
        for i in range(args.files):
            if f"Fact {i}.MD" not in have:
                (facts / f"Fact {i}.MD").write_text(f"Fact {i}.\n")
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for dname, folder in args.dir:
            for cname, code in args.code:
                env = dict(os.environ, PYTHONPATH=str(Path(code).resolve() / "daemon"))
                out = subprocess.run(
                    [sys.executable, "-c", _CHILD, folder],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                got = json.loads(out.stdout.strip().splitlines()[-1])
                times.setdefault((dname, cname), []).append(got["s"])
    base = args.code[0][0]
    print("| disk | code | scan (median) | vs " + base + " |")
    print("|---|---|---|---|")
    for dname, _ in args.dir:
        ref = statistics.median(times[(dname, base)])
        for cname, _ in args.code:
            med = statistics.median(times[(dname, cname)])
            print(f"| {dname} | {cname} | {med:.2f} s | {med / ref:.2f}x |")


if __name__ == "__main__":
    main()
