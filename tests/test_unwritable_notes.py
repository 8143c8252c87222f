"""A note memvault may not write (its folder read-only to the daemon's user: a shared
folder, a mount) holds up nothing else: its links wait as they are, said, and every other
note, MEMORY.md and the index go on. Found in the field: one such note linking a renamed
person failed every sync of the vault, retried forever, MEMORY.md left naming the old name."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import open_vault, write
from onnx_helpers import read_only

BODY = "Anna runs the data team.\nShe prefers async updates.\nShe joined in March.\n"


def test_a_note_in_a_folder_that_cannot_be_written_is_left_as_it_is_and_said(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    write(root, "people/anna.md", f"# Anna\n\n{BODY}")
    write(root, "projects/platform.md", "# Platform\n\nOwner: [[people/anna]].\n")
    shared = write(root, "shared/minutes.md", "# Minutes\n\nAsked [[people/anna]] about it.\n")
    with open_vault(root) as vault:
        vault.sync()
        (root / "people/anna.md").rename(root / "people/anna-weber.md")
        before = shared.read_bytes()
        with read_only(root / "shared"):
            report = vault.sync()
        assert report.moved == (("people/anna.md", "people/anna-weber.md"),)
        assert shared.read_bytes() == before
        said = " ".join(report.warnings + report.problems)
        assert "shared/minutes.md" in said and "cannot be written" in said, said
        assert "[[anna-weber]]" in (root / "projects/platform.md").read_text(encoding="utf-8")
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        assert "[[people/anna-weber]]" in memory and "[[people/anna]]" not in memory


def test_a_folder_note_that_cannot_be_written_holds_up_no_sync(tmp_path: Path) -> None:
    """Past a section's limit its folder gets a folder note (people/people.md); in a
    folder read-only to the daemon's user that write failed the sync, every time."""
    root = tmp_path / "vault"
    for i in range(10):
        write(root, f"people/p{i}.md", f"# Person {i}\n\n{BODY}")
    write(root, "projects/platform.md", "# Platform\n\nA project.\n")
    with open_vault(root) as vault, read_only(root / "people"):
        vault.sync()
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        assert "[[people/p0]]" in memory
        assert not (root / "people/people.md").exists()


def test_a_note_made_read_only_is_never_rewritten(tmp_path: Path) -> None:
    """``chmod 444`` is a person's "leave this note as it is": a relink replaced the file
    anyway (a new file renamed over it keeps no permission from being asked), for root
    and for its owner alike. Its links now stay as they are, said (`links check` lists
    them); a write to it is refused, the file unchanged."""
    import os

    root = tmp_path / "vault"
    write(root, "people/anna.md", f"# Anna\n\n{BODY}")
    frozen = write(root, "minutes.md", "# Minutes\n\nAsked [[people/anna]] about it.\n")
    with open_vault(root) as vault:
        vault.sync()
        frozen.chmod(0o444)
        before = frozen.read_bytes()
        (root / "people/anna.md").rename(root / "people/anna-weber.md")
        report = vault.sync()
        assert report.moved == (("people/anna.md", "people/anna-weber.md"),)
        assert frozen.read_bytes() == before and os.stat(frozen).st_mode & 0o777 == 0o444
        said = " ".join(report.warnings + report.problems)
        assert "minutes.md" in said and "read-only" in said, said
    log = write(root, "logs/2024-01-02.md", "# 2024-01-02\n\n- 09:00 kickoff\n")
    log.chmod(0o444)
    with open_vault(root) as vault, pytest.raises(PermissionError, match="read-only"):
        vault.engine.fs.update_text("logs/2024-01-02.md", lambda t: t + "- 10:00 more\n")
    assert log.read_text(encoding="utf-8") == "# 2024-01-02\n\n- 09:00 kickoff\n"
