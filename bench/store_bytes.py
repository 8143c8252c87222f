"""Where the bytes of a vault's ``.memvault/`` go: each file, and each SQLite table and
index by ``dbstat`` (its pages; free pages apart), against the notes' own bytes.

    python bench/store_bytes.py VAULT [VAULT ...]      # one block per vault
    python bench/store_bytes.py --json VAULT           # one JSON line per vault
    python bench/store_bytes.py --compare BEFORE AFTER # side by side: file, table, index

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
    # not a -shm file: WAL's shared memory, there while a connection is open (this
    # script's read-only one leaves it: the second measure of a vault counted 66 KB more)
    files = {
        p.name: p.stat().st_size
        for p in sorted(state.iterdir())
        if p.is_file() and not p.name.endswith("-shm")
    }
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


def compare(before: dict[str, object], after: dict[str, object]) -> None:
    """Each file and each table or index of index.db and cache.db in both vaults (KB),
    and the ratio to the notes' bytes, as a Markdown table."""

    def rows(m: dict[str, object]) -> dict[str, int]:
        out = {f"{name}": size for name, size in m["files"].items()}  # type: ignore[union-attr]
        for db in ("index.db", "cache.db"):
            out.update({f"{db}: {t}": n for t, n in (m.get(db) or {}).items()})  # type: ignore[union-attr]
        return out

    a, b = rows(before), rows(after)
    print(f"| | {before['vault']} | {after['vault']} | saved |\n|---|---|---|---|")
    for name in sorted(a.keys() | b.keys(), key=lambda k: -max(a.get(k, 0), b.get(k, 0))):
        x, y = a.get(name, 0), b.get(name, 0)
        if max(x, y) >= 4096:
            print(f"| {name} | {x / 1e3:,.0f} KB | {y / 1e3:,.0f} KB | {(x - y) / 1e3:,.0f} KB |")
    x, y = before["memvault_bytes"], after["memvault_bytes"]
    print(
        f"| `.memvault/` (notes {before['notes_bytes']:,} / {after['notes_bytes']:,} B) | "
        f"{x / 1e6:.2f} MB = {before['memvault_x']}x | {y / 1e6:.2f} MB = {after['memvault_x']}x | "  # type: ignore[operator]
        f"{(x - y) / 1e3:,.0f} KB |"  # type: ignore[operator]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vaults", nargs="+", type=Path)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--compare", action="store_true", help="two vaults, side by side")
    args = ap.parse_args()
    if args.compare:
        compare(*(measure(root) for root in args.vaults))
        return
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
