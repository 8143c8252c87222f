"""What one save of an Excalidraw drawing costs memvault (the plugin saves at every change).

A drawing is a note (``*.excalidraw.md``) whose scene, JSON or ``compressed-json``
inside ``%%``, is most of its bytes and none of its words. This times ``Vault.sync``
of the one drawing changed (read, parse, chunk, commit; the hash embedder, vectors
off: the structure lane a daemon runs at a save), against the same sync of a note
holding only the drawing's words, in the same run, alternated: the ratio is what
the scene costs. Drawings are generated (random base64 in the plugin's 256-character
lines), nothing is read from elsewhere.

    PYTHONPATH=daemon python bench/drawing_save.py [--scene-kb 200,1500] [--rounds 9]
"""

from __future__ import annotations

import argparse
import base64
import random
import statistics
import tempfile
import time
from pathlib import Path

from memvault.api import Vault
from memvault.index.embedder_hash import HashEmbedder

BANNER = "==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠=="


def words(n: int) -> str:
    return "\n\n".join(
        f"Billing flow step {i} owned by the payments team ^el{i:06d}" for i in range(n)
    )


def drawing(text: str, scene_kb: int, rnd: random.Random) -> str:
    raw = base64.b64encode(rnd.randbytes(scene_kb * 768)).decode()
    scene = "\n\n".join(raw[k : k + 256] for k in range(0, len(raw), 256))
    return (
        "---\n\nexcalidraw-plugin: parsed\ntags: [excalidraw]\n\n---\n"
        f"{BANNER}\n\n\n# Excalidraw Data\n\n## Text Elements\n{text}\n\n"
        f"%%\n## Drawing\n```compressed-json\n{scene}\n```\n%%"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scene-kb", default="200,1500")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    rnd = random.Random(5)
    with tempfile.TemporaryDirectory(prefix="obs58-bench-") as tmp:
        root = Path(tmp) / "vault"
        (root / ".memvault").mkdir(parents=True)
        kbs = [int(k) for k in args.scene_kb.split(",")]
        for kb in kbs:
            (root / f"d{kb}.excalidraw.md").write_text(
                drawing(words(60), kb, rnd), encoding="utf-8"
            )
        (root / "plain.md").write_text("# Plain\n\n" + words(60) + "\n", encoding="utf-8")
        with Vault.open(root, embedder=HashEmbedder()) as v:
            v.sync()
            times: dict[str, list[float]] = {"plain.md": []} | {
                f"d{kb}.excalidraw.md": [] for kb in kbs
            }
            for r in range(args.rounds):
                for name in times:
                    path = root / name
                    text = path.read_text(encoding="utf-8")
                    path.write_text(text.replace("step 1 ", f"step 1 r{r} ", 1), encoding="utf-8")
                    t = time.perf_counter()
                    v.sync([name], vectors=False)
                    times[name].append(time.perf_counter() - t)
        base = statistics.median(times["plain.md"])
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"{name:24s} {med * 1000:8.1f} ms  x{med / base:6.1f} the words-only note")


if __name__ == "__main__":
    main()
