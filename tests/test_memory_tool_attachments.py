"""Claude's memory tool on a folder of a person's attachments (images, PDFs a note
links): a folder's view lists notes only, so it says how many other files it holds,
where the SDK's reference lists each one. Driven through the SDK's own classes."""

from __future__ import annotations

import re
from pathlib import Path

from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

from helpers import open_vault, write
from memvault.integrations.anthropic import VaultMemoryTool
from test_memory_tool import call

IMAGES = ["Attachments/chart.png", "Attachments/scan.pdf", "Attachments/Changelog/dialog.png"]


def _notes_and_images(root: Path) -> None:
    for rel in IMAGES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"\x89PNG\r\n\x1a\n" + rel.encode())
    write(root, "Guide.md", "# Guide\n\n![[chart.png]] and ![[scan.pdf]], ![[dialog.png]]\n")
    write(root, "Projects/Alpha.md", "# Alpha\n\nThe plan. ![[diagram.png]]\n")
    (root / "Projects/diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    write(root, "People/Ana.md", "# Ana\n\nLeads data.\n")


def test_a_folder_of_attachments_is_not_said_to_hold_nothing(tmp_path: Path) -> None:
    """Field test (the help vault's Attachments/, 113 images): `view /memories/Attachments`
    answered "No notes in /memories/Attachments." and nothing else, which a first-day
    agent reads as an empty folder; its `delete` then moved every image to .trash/ and
    259 links of 68 notes led nowhere. The reference lists each file there; the view now
    says how many files it holds that are no notes, and that a delete takes them too."""
    root = tmp_path / "notes"
    _notes_and_images(root)
    reference_root = tmp_path / "reference"
    _notes_and_images(reference_root / "memories")
    reference = BetaLocalFilesystemMemoryTool(str(reference_root))
    listed = str(reference.call({"command": "view", "path": "/memories/Attachments"}))
    in_it = [line for line in listed.split("\n")[2:] if not line.endswith("/")]
    assert len(in_it) == 3  # the reference: each of its files, its subfolder's too
    with open_vault(root) as vault:
        vault.sync()
        tool = VaultMemoryTool(vault)
        page = call(tool, command="view", path="/memories/Attachments")
        assert page == (
            "Not listed: 3 files in it or below it that are not notes (attachments notes "
            "link, images, PDFs; files memvault does not index: vault.ignore's, sync conflict "
            "copies); this tool lists notes only, and deleting the folder moves them to "
            ".trash/ with it.\n"
            "No notes in /memories/Attachments."
        )
        # a folder of notes and an image says it too; one of notes alone says nothing more
        projects = call(tool, command="view", path="/memories/Projects")
        assert "Not listed: 1 file in it or below it that is not a note (" in projects
        assert "/memories/Projects/Alpha.md" in projects
        people = call(tool, command="view", path="/memories/People")
        assert "Not listed" not in people
        # a next page of notes does not say it again (the first page did)
        for i in range(45):
            write(root, f"Projects/p{i}.md", f"# P{i}\n")
        vault.sync()
        first = call(tool, command="view", path="/memories/Projects")
        more = re.search(r"view_range \[41, (\d+)\]", first)
        assert more is not None and "Not listed: 1 file" in first
        second = call(
            tool, command="view", path="/memories/Projects", view_range=[41, int(more.group(1))]
        )
        assert second.startswith("Notes 41-46 of 46 in /memories/Projects")
        assert "Not listed" not in second


def test_the_count_is_of_every_file_a_delete_moves_that_the_view_does_not_list(
    tmp_path: Path,
) -> None:
    """The line says what a `delete` of the folder takes with it. A sync tool's conflict
    copy of a note (another machine's words) and a file of a name memvault refuses are
    no notes it indexes, and were not counted: a folder of one note and an image was
    "1 file" while its delete moved three. Notes ``vault.ignore`` leaves out (templates)
    were counted as "images, PDFs, other attachments"; an ignored ``Draft.MD`` not at
    all. Hidden files (``.DS_Store``) are not counted, as the reference lists none."""
    root = tmp_path / "notes"
    write(root, "Projects/Alpha.md", "# Alpha\n")
    (root / "Projects/diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    write(root, "Projects/Alpha.sync-conflict-20240101-101010-ABCDEFG.md", "# Alpha, theirs\n")
    (root / "Projects/back\\slash.png").write_bytes(b"x")
    (root / "Projects/.DS_Store").write_bytes(b"x")
    write(root, "Projects/templates/daily.md", "# {{date}}\n")
    write(root, "Projects/templates/Draft.MD", "# draft\n")
    (root / ".memvault").mkdir()
    (root / ".memvault/config.toml").write_text(
        '[vault]\nignore = ["Projects/templates/**"]\n', encoding="utf-8"
    )
    with open_vault(root) as vault:
        vault.sync()
        page = call(VaultMemoryTool(vault), command="view", path="/memories/Projects")
        assert "Not listed: 5 files in it or below it that are not notes" in page
        assert "conflict copies" in page and "vault.ignore" in page
        assert "/memories/Projects/Alpha.md" in page
        call(VaultMemoryTool(vault), command="delete", path="/memories/Projects")
    moved = {p.name for p in (root / ".trash/Projects").rglob("*") if p.is_file()}
    assert len(moved - {"Alpha.md", ".DS_Store"}) == 5  # what the line counted
