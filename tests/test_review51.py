"""Review of wcold (a write with no daemon follows the change) and writes51 (what an
agent's write answers): the defects found, each a test that failed on the branch head."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import new_vault, note, open_vault, write


def _listings(root: Path) -> dict[str, str]:
    out = {"MEMORY.md": (root / "MEMORY.md").read_text("utf-8")}
    for folder in ("people", "projects", "decisions", "logs"):
        path = root / folder / f"{folder}.md"
        if path.exists():
            out[path.name] = path.read_text("utf-8")
    return out


def _fresh(root: Path, tmp_path: Path, tag: str) -> dict[str, str]:
    copy = tmp_path / f"fresh-{tag}"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    with open_vault(copy) as fresh:
        fresh.sync(vectors=False)
    return _listings(copy)


def test_an_update_whose_body_is_part_of_a_line_is_written(tmp_path: Path) -> None:
    """`add --update` skipped a body found anywhere in the note's text, a part of a line
    included: "Budget: 10" onto a note saying "Budget: 100 EUR" was dropped, and
    writes51 answered ``written: false`` (the note "holds it"), the agent's new fact
    lost. A retry (the same body, whole lines at the note's end) still writes nothing."""
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        made = v.add("projects", "Harbour", summary="budget", body="Budget: 100 EUR a month.\n")
        changed = v.add("projects", "Harbour", body="Budget: 10", update=True)
        assert changed.written
        text = (root / made.path).read_text("utf-8")
        assert text.endswith("Budget: 100 EUR a month.\n\nBudget: 10\n")
        again = v.add("projects", "Harbour", body="Budget: 10", update=True)
        assert not again.written  # an agent retrying: whole lines the note holds
        assert (root / made.path).read_text("utf-8") == text
