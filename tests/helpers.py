"""Helpers shared by engine-level tests."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from memvault.api import Vault
from memvault.embedder import HashEmbedder
from memvault.template import init_vault

TEMPLATE = Path(__file__).resolve().parents[1] / "vault-template"


def make_vault(tmp_path: Path, name: str = "vault") -> Path:
    root = tmp_path / name
    init_vault(root)
    return root


def open_vault(root: Path, **kw: Any) -> Vault:
    kw.setdefault("embedder", HashEmbedder())
    return Vault.open(root, **kw)


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def note(title: str, summary: str = "", body: str = "", **fields: str) -> str:
    fm = [f"title: {title}"] + ([f"summary: {summary}"] if summary else [])
    fm += [f"{k}: {v}" for k, v in fields.items()]
    return (
        "---\n" + "\n".join(fm) + "\n---\n# " + title + "\n\n" + (body or f"About {title}.") + "\n"
    )


def snapshot(vault: Vault) -> dict[str, Any]:
    """What an index holds, independent of labels and timestamps."""
    store = vault.engine.store
    notes = {n.path: (n.sha256, n.kind, n.title, n.summary, n.tags) for n in store.notes()}
    chunks = {}
    for path in notes:
        chunks[path] = [
            (c.ord, c.heading, c.line_start, c.line_end, c.text, c.sha)
            for c in store.chunks_of(path)
        ]
    vectors = vault.engine.vectors
    labels = store.labels()
    assert vectors.labels() == labels, "vector index and db disagree"
    return {
        "notes": notes,
        "chunks": chunks,
        "links": sorted((r.source, r.line, r.target) for r in store.links()),
    }


def rebuilt_snapshot(root: Path, tmp_path: Path) -> dict[str, Any]:
    """Index a copy of the vault from scratch and snapshot it."""
    copy = tmp_path / f"rebuild-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    with open_vault(copy) as v:
        v.sync()
        return snapshot(v)
