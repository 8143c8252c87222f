"""Branch racy60: a second save in the same clock tick (engine/racy_rows.py).

``noop BASE NEW VAULT [ROUNDS]``: a no-op sync of VAULT (old notes, indexed with the
hash embedder) in a new process for each code (BASE, NEW: folders holding ``memvault``),
alternated ROUNDS times: the sync's seconds cold (the process's first) and warm (the
median of 3 more), whether index.db or its WAL changed, medians and their ratio.

``saves CODE VAULT``: the door field test's racy.py: a save, a kept door's call (it
syncs), the same note saved again at the same size at once, a search for its new word;
10 times, 1.1 s apart. Prints how many second saves fell in the first's second (same
size and mtime) and how many the search missed. VAULT: a fresh vault (``memvault
init``; made when missing) on the disk to try (an exFAT mount keeps whole seconds).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _child(code: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": code, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def _noop_once(root: Path) -> None:
    from memvault.api import Vault
    from memvault.index.embedder import HashEmbedder

    def stamp() -> list[tuple[int, int] | None]:
        files = [root / ".memvault" / n for n in ("index.db", "index.db-wal")]
        return [(f.stat().st_mtime_ns, f.stat().st_size) if f.exists() else None for f in files]

    before = stamp()
    with Vault.open(root, embedder=HashEmbedder()) as v:
        t = time.perf_counter()
        v.sync()
        cold = time.perf_counter() - t
        warm = []
        for _ in range(3):
            t = time.perf_counter()
            v.sync()
            warm.append(time.perf_counter() - t)
    print(json.dumps({"cold": cold, "warm": statistics.median(warm), "written": stamp() != before}))


def noop(base: str, new: str, vault: str, rounds: int) -> None:
    runs: dict[str, list[dict[str, float]]] = {"base": [], "new": []}
    for _ in range(rounds):
        for name, code in (("base", base), ("new", new)):
            runs[name].append(json.loads(_child(code, "_noop", vault)))
    for key in ("cold", "warm"):
        b = statistics.median(r[key] for r in runs["base"])
        n = statistics.median(r[key] for r in runs["new"])
        print(f"{key}: base {b * 1000:.1f} ms, new {n * 1000:.1f} ms, new/base {n / b:.2f}")
    print("index written:", {k: sum(bool(r["written"]) for r in v) for k, v in runs.items()})


def saves(root: Path) -> None:
    import memvault
    from memvault.api import Vault
    from memvault.door import VaultDoor
    from memvault.index.embedder import HashEmbedder
    from memvault.vault.template import init_vault

    if not root.exists():
        init_vault(root)
    with Vault.open(root, embedder=HashEmbedder()) as v:
        v.sync()
    door = VaultDoor(root, {"embedder": HashEmbedder()})
    door.run(lambda v: None, "read")
    path, racy, missed = root / "r.md", 0, 0
    for i in range(10):
        path.write_text(f"---\ntitle: R\n---\n# R\n\nword{i}a\n", encoding="utf-8")
        door.run(lambda v: None, "read")
        st = path.stat()
        path.write_text(f"---\ntitle: R\n---\n# R\n\nword{i}b\n", encoding="utf-8")
        now = path.stat()
        racy += (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
        word = f"word{i}b"
        missed += not door.run(lambda v, w=word: [h for h in v.search(w, 3) if w in h.text], "read")
        time.sleep(1.1)
    door.close()
    print(f"{memvault.__file__}: {missed}/10 second saves missed ({racy}/10 in the same second)")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "noop":
        rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 9
        noop(sys.argv[2], sys.argv[3], sys.argv[4], rounds)
    elif cmd == "_noop":
        _noop_once(Path(sys.argv[2]))
    elif cmd == "saves":
        print(_child(sys.argv[2], "_saves", sys.argv[3]))
    elif cmd == "_saves":
        saves(Path(sys.argv[2]))
    else:
        raise SystemExit(__doc__)
