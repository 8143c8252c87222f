"""A first index of Excalidraw drawings with the real model: time and chunks.

Each drawing's text elements are short labels, each with the block id the plugin
gives it (``Payments ^yrVib6Rg``), as real drawings hold them; the scene is
random base64 in the plugin's lines. Run it once per checkout, alternated, and
compare (the model's load is in each run's time):

    PYTHONPATH=CODE/daemon python bench/drawing_index.py [--drawings 21] [--labels 120]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import string
import tempfile
import time
from pathlib import Path

from drawing_save import drawing
from memvault.api import Vault

LABELS = [
    "App",
    "BFF",
    "Customer Resolution Service",
    "Order History Service",
    "Okta",
    "CRM",
    "Payments",
    "Loyalty Engine",
    "Register",
    "ECOMM",
    "Event Hubs",
    "Azure Kubernetes Service",
    "Firewall",
    "Admin UI",
    "Rules Database",
    "reconciliation control",
    "Beta seeding flow",
    "Sales Feed",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--drawings", type=int, default=21)
    ap.add_argument("--labels", type=int, default=120)
    args = ap.parse_args()
    rnd = random.Random(3)
    chars = string.ascii_letters + string.digits
    with tempfile.TemporaryDirectory(prefix="obs58-bench-") as tmp:
        root = Path(tmp) / "vault"
        (root / ".memvault").mkdir(parents=True)
        for d in range(args.drawings):
            words = "\n\n".join(
                f"{rnd.choice(LABELS)} ^{''.join(rnd.choice(chars) for _ in range(8))}"
                for _ in range(args.labels)
            )
            (root / f"Drawing {d}.excalidraw.md").write_text(
                drawing(words + "\n\nEnd", 100, rnd), encoding="utf-8"
            )
        t = time.perf_counter()
        with Vault.open(root) as v:
            v.sync()
        took = time.perf_counter() - t
        con = sqlite3.connect(root / ".memvault/index.db")
        (chunks,) = con.execute("SELECT count(*) FROM chunks").fetchone()
        con.close()
    print(f"{args.drawings} drawings: {took:.1f} s, {chunks} chunks")


if __name__ == "__main__":
    main()
