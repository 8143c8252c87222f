"""Where the bytes of a vault's ``.memvault/`` go: each file, and each SQLite table and
index by ``dbstat`` (its pages; free pages apart), against the notes' own bytes.

    python bench/store_bytes.py VAULT [VAULT ...]      # one block per vault
    python bench/store_bytes.py --json VAULT           # one JSON line per vault

Reads only (the databases opened read-only, ``immutable`` not assumed: run it on a
vault no daemon is writing).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path


def notes_bytes(root: Path) -> int:
    return sum(
        p.stat().st_size
        for p in root.rglob("*.md")
        if ".memvault" not in p.parts and ".obsidian" not in p.parts
    )


def tables(db: Path) -> dict[str, int]:
    """Bytes by table or index (``dbstat``), and the free pages as ``(free)``."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out = dict(conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall())
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        out["(free)"] = conn.execute("PRAGMA freelist_count").fetchone()[0] * size
        return {k: int(v) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}
    finally:
        conn.close()


def measure(root: Path) -> dict[str, object]:
    state = root / ".memvault"
    files = {p.name: p.stat().st_size for p in sorted(state.iterdir()) if p.is_file()}
    notes = notes_bytes(root)
    total = sum(files.values())
    out: dict[str, object] = {
        "vault": str(root),
        "notes_bytes": notes,
        "memvault_bytes": total,
        "memvault_x": round(total / notes, 2) if notes else None,
        "files": files,
    }
    for name in ("index.db", "cache.db"):
        if (state / name).exists():
            out[name] = tables(state / name)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vaults", nargs="+", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    for root in args.vaults:
        m = measure(root)
        if args.json:
            print(json.dumps(m))
            continue
        print(f"{root}: notes {m['notes_bytes'] / 1e6:.2f} MB, .memvault/ "
              f"{m['memvault_bytes'] / 1e6:.2f} MB ({m['memvault_x']}x)")  # fmt: skip
        for name, size in m["files"].items():  # type: ignore[union-attr]
            print(f"  {name:<24} {size / 1e3:>10.0f} KB")
        for db in ("index.db", "cache.db"):
            for table, size in (m.get(db) or {}).items():  # type: ignore[union-attr]
                if size >= 1024:
                    print(f"    {db}: {table:<28} {size / 1e3:>8.0f} KB")


if __name__ == "__main__":
    main()
