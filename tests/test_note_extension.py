"""Which files are notes: ``.md`` in lower case, as Obsidian has it.

Obsidian's notes are the files whose ``TFile.extension`` is ``"md"``: the extension is
kept as the name spells it and compared as it is (``Vault.getMarkdownFiles``; a plugin
registering ``rmd`` gets no ``.Rmd`` file, obsidian-plaintext#20; "the only api method
it offers uses case sensitivity", obsidian-custom-file-extensions-plugin#5). A
``NOTE.MD`` is no note there: no editor opens it as one, no search or graph shows it.
memvault indexed it all the same. Now it is not indexed either, and never hidden:
``status`` lists it with why and what to do, and a rename makes it a note.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import make_vault, note, open_vault, write
from memvault.errors import MemoryToolError
from memvault.vault.paths import is_note, not_a_note_for_obsidian

WORDS = "the quokka budget review moves to Thursday"


@pytest.mark.parametrize(
    ("name", "note_", "reason"),
    [
        ("a.md", True, False),
        ("a.MD", False, True),
        ("a.Md", False, True),
        ("dir/a.mD", False, True),
        ("a.md.bak", False, False),
        ("a.png", False, False),
        ("a.markdown", False, False),
    ],
)
def test_a_note_is_a_lower_case_md_and_another_case_is_said(
    name: str, note_: bool, reason: bool
) -> None:
    assert is_note(name) is note_
    said = not_a_note_for_obsidian(name)
    assert (said is not None) is reason
    if said is not None:
        assert name.rsplit(".", 1)[1] in said and "rename it" in said


def test_an_upper_case_md_is_not_indexed_and_status_says_why(tmp_path: Path) -> None:
    """`Plan.MD` was indexed as a note: searched, listed in MEMORY.md, where Obsidian
    shows no note of it. Now a full sync and a sync of its path skip it, say so in
    `status` (its words are not lost: they are where they were), and a rename to
    `Plan.md` indexes it and ends the problem."""
    root = make_vault(tmp_path)
    plan = write(root, "projects/Plan.MD", note("Plan", "Budget", body=WORDS))
    before = plan.read_bytes()
    with open_vault(root) as v:
        report = v.sync()
        skipped = {s.path: s.reason for s in report.skipped}
        assert "projects/Plan.MD" in skipped and "Plan.md" in skipped["projects/Plan.MD"]
        assert v.engine.store.note("projects/Plan.MD") is None
        assert not [h for h in v.search("quokka budget review", k=10) if "quokka" in h.text]
        listed = {s["path"]: s["reason"] for s in v.status()["skipped_files"]}
        assert listed["projects/Plan.MD"] == skipped["projects/Plan.MD"]
        assert "Plan" not in (root / "MEMORY.md").read_text(encoding="utf-8")
        write(root, "Ideas.Md", note("Ideas", body="okapi"))
        one = v.sync(["Ideas.Md"])
        assert [s.path for s in one.skipped] == ["Ideas.Md"]
        assert v.engine.store.note("Ideas.Md") is None
        assert plan.read_bytes() == before  # nothing written to it
        plan.rename(root / "projects" / "Plan.md")
        v.sync()
        assert v.engine.store.note("projects/Plan.md") is not None
        assert next(h.path for h in v.search("quokka budget review", k=3)) == "projects/Plan.md"
        listed = {s["path"] for s in v.status()["skipped_files"]}
        assert "projects/Plan.MD" not in listed and "Ideas.Md" in listed


def test_the_memory_tool_writes_no_note_obsidian_would_not_show(tmp_path: Path) -> None:
    """An agent's `create /memories/Fact.MD` wrote a file Obsidian shows as no note:
    refused, saying to name it `.md`; nothing written."""
    root = make_vault(tmp_path)
    with open_vault(root) as v, pytest.raises(MemoryToolError, match=r"Fact\.md"):
        v.memory_tool({"command": "create", "path": "/memories/Fact.MD", "file_text": "A fact.\n"})
    assert not (root / "Fact.MD").exists()
