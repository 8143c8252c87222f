"""``memvault init``: lay the vault template down, never overwriting a file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from memvault.core.report import Record


@dataclass(frozen=True, slots=True)
class InitReport(Record):
    root: str
    created: tuple[str, ...]
    skipped: tuple[str, ...]  # already there: left exactly as they were


def template_root() -> Traversable:
    """The template shipped inside the wheel, or the checkout's vault-template/."""
    packaged = resources.files("memvault") / "vault-template"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / "vault-template"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError("the vault template is missing from this installation of memvault")


def _files(folder: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    out = []
    for item in sorted(folder.iterdir(), key=lambda t: t.name):
        rel = f"{prefix}{item.name}"
        if item.is_dir():
            out += _files(item, rel + "/")
        elif item.name not in ("__pycache__",) and not item.name.endswith(".pyc"):
            out.append((rel, item))
    return out


EXAMPLES = ("MEMORY.md", "people/", "projects/", "decisions/", "logs/")


def init_vault(path: str | Path, *, examples: bool = True) -> InitReport:
    """Create the template's files under ``path``; existing files are kept as they are.

    ``examples=False`` leaves out the example notes and the example MEMORY.md
    (a migration brings its own).
    """
    root = Path(path).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    created, skipped = [], []
    for rel, item in _files(template_root()):
        if not examples and rel.startswith(EXAMPLES):
            continue
        target = root.joinpath(*rel.split("/"))
        if target.exists() or target.is_symlink():
            skipped.append(rel)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        data = item.read_bytes()
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:  # appeared meanwhile: still never overwritten
            skipped.append(rel)
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        created.append(rel)
    return InitReport(str(root.resolve()), tuple(created), tuple(skipped))
