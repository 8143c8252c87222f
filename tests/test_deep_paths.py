"""A folder tree deeper than the system's path limit (4096 bytes on Linux: a recursive
copy gone wrong, a hostile archive) holds up nothing: every sync of the daemon failed on
it ("sync failed: OSError(36, 'File name too long')"), retried for ever, so no note was
indexed and MEMORY.md stood still. The paths it names are refused and said."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import open_vault, write


def _deep(root: Path, levels: int = 30) -> str:
    """A folder ``levels`` deep of 200-byte names (made with relative paths, as the
    kernel allows), its note inside; its vault-relative path."""
    here = os.getcwd()
    os.makedirs(root / "deep", exist_ok=True)
    os.chdir(root / "deep")
    try:
        for _ in range(levels):
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        Path("note.md").write_text("# Deep\n\nwombats\n", encoding="utf-8")
    finally:
        os.chdir(here)
    return "deep/" + "/".join(["d" * 200] * levels)


def test_a_path_past_the_systems_limit_is_refused_and_the_batch_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "people/ana.md", "# Ana\n\nAna runs the data team.\n")
    with open_vault(root) as vault:
        vault.sync()
        folder = _deep(root)
        write(root, "people/bo.md", "# Bo\n\nBo runs the platform.\n")
        report = vault.sync([folder, folder + "/note.md", "people/bo.md"])
        assert report.created == ("people/bo.md",)
        assert any("too long" in s.reason for s in report.skipped), report.skipped
        assert "people/bo.md" in {h.path for h in vault.search("platform")}
        assert vault.sync().created == ()  # a full sync passes over it too
