"""init finds the folders a person's notes already use, whatever else lies at the root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memvault.vault.template import find_roles, init_vault


@pytest.mark.parametrize("odd", ["loop", "no-access"])
def test_an_entry_that_cannot_be_stat_ed_leaves_the_persons_folders_found(
    tmp_path: Path, odd: str
) -> None:
    """A symlink loop (or a symlink into a folder that cannot be searched) beside
    People/ made every role go unseen: init added people/ beside People/."""
    root = tmp_path / "notes"
    (root / "People").mkdir(parents=True)
    (root / "People" / "Ana.md").write_text("# Ana\n", encoding="utf-8")
    (root / "Projects").mkdir()
    if odd == "loop":
        os.symlink("loop-b", root / "loop-a")
        os.symlink("loop-a", root / "loop-b")
    else:
        # ELOOP through a chain: stat raises an error other than "not found"
        os.symlink("x/../loop-a", root / "loop-a")
    roles, _ = find_roles(root)
    assert roles == {"people": "People", "projects": "Projects"}
    report = init_vault(root)
    assert "people/" not in report.created and not (root / "people").exists()
    assert not (root / "projects").exists()
