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

import os
from pathlib import Path

import pytest
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

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


def test_a_moved_upper_case_md_is_a_file_whose_words_are_left_as_they_are(
    tmp_path: Path,
) -> None:
    """`a/Plan.MD` moved to `b/`: its links were rewritten (`[x](x.md)` became
    `[x](a/x.md)`) as a note's are, though no note of Obsidian's and the docs said
    nothing is written to it; a `.png` moved is left alone, and so is it now."""
    root = make_vault(tmp_path)
    write(root, "a/x.md", note("X", body="one"))
    write(root, "c/x.md", note("X too", body="two"))
    text = note("Plan", body="see [x](x.md) and [[x]]")
    write(root, "a/Plan.MD", text)
    with open_vault(root) as v:
        v.sync()
        (root / "b").mkdir()
        (root / "a" / "Plan.MD").rename(root / "b" / "Plan.MD")
        report = v.sync()
    assert report.attachments_moved == (("a/Plan.MD", "b/Plan.MD"),)
    assert "b/Plan.MD" not in report.relinked
    assert (root / "b" / "Plan.MD").read_text(encoding="utf-8") == text


def test_a_link_to_a_moved_upper_case_md_keeps_its_spelling(tmp_path: Path) -> None:
    """A link to a `Plan.MD` that moved was re-targeted as to a note, its extension
    spelt anew: `[[a/Plan.MD]]` became `[[b/Plan.md]]`, a name no file has on a disk
    that tells case. Now it names the file as it is (`b/Plan.MD`); `[[a/Plan]]` stays
    without an extension, as written."""
    root = make_vault(tmp_path)
    write(root, "a/Plan.MD", "one\n")
    write(root, "c/Plan.MD", "the other\n")
    write(root, "x.md", note("X", body="see [[a/Plan.MD]], [p](a/Plan.MD) and [[a/Plan]]"))
    with open_vault(root) as v:
        v.sync()
        (root / "b").mkdir()
        (root / "a" / "Plan.MD").rename(root / "b" / "Plan.MD")
        assert v.sync().relinked == ("x.md",)
    text = (root / "x.md").read_text(encoding="utf-8")
    assert "see [[b/Plan.MD]], [p](b/Plan.MD) and [[b/Plan]]" in text


def test_the_memory_tool_renames_an_upper_case_md_as_its_refusal_says(tmp_path: Path) -> None:
    """An agent's `Fact.MD` (memvault's memory tool wrote one before it refused them)
    was refused to every command with 'rename it Fact.md', and `rename` refused too
    (no note; then the same name in another case): the agent could never reach its
    memory again. Now the rename it is told to make is made, and the note indexed."""
    root = make_vault(tmp_path)
    write(root, "Fact.MD", "The quokka budget review moves to Thursday.\n")
    with open_vault(root) as v:
        v.sync()
        with pytest.raises(MemoryToolError, match=r"rename it Fact\.md"):
            v.memory_tool({"command": "insert", "path": "/memories/Fact.MD", "insert_line": 0,
                           "insert_text": "x"})  # fmt: skip
        said = v.memory_tool(
            {"command": "rename", "old_path": "/memories/Fact.MD", "new_path": "/memories/Fact.md"}
        )
        assert said.startswith("Successfully renamed /memories/Fact.MD to /memories/Fact.md")
        assert v.engine.store.note("Fact.md") is not None
        assert "Fact.MD" not in {s["path"] for s in v.status()["skipped_files"]}
    assert [p.name for p in root.iterdir() if p.name.lower() == "fact.md"] == ["Fact.md"]


def test_the_memory_tool_views_an_upper_case_md_as_the_reference_shows_a_file_and_writes_none(
    tmp_path: Path,
) -> None:
    """The listings show an agent's ``Fact.MD`` as a file, saying no command but the
    rename writes into one, yet ``view`` of it was refused ("rename it Fact.md"): an
    agent that sees a file listed expects to read it, as the SDK's reference reads any
    file. Now it is shown as the reference shows it (numbered lines, ``view_range``);
    every write into it is refused as before, and nothing is written or indexed."""
    text = "The quokka budget review moves to Thursday.\nBring the slides.\n"
    reference = BetaLocalFilesystemMemoryTool(str(tmp_path / "reference"))
    write(tmp_path / "reference" / "memories", "facts/Fact.MD", text)
    root = make_vault(tmp_path)
    write(root, "facts/Fact.MD", text)
    path = "/memories/facts/Fact.MD"
    with open_vault(root) as v:
        v.sync()
        for view_range in (None, [2, -1], [1, 1]):
            command = {"command": "view", "path": path, "view_range": view_range}
            said = v.memory_tool(command)
            assert said == reference.call(command)
        assert "     1\tThe quokka budget review moves to Thursday." in said
        writes: list[dict[str, object]] = [
            {"command": "str_replace", "path": path, "old_str": "Thursday", "new_str": "Friday"},
            {"command": "insert", "path": path, "insert_line": 2, "insert_text": "More."},
            {"command": "create", "path": path, "file_text": "Replaced."},
            {"command": "delete", "path": path},
        ]
        for command in writes:
            with pytest.raises(MemoryToolError, match=r"rename it Fact\.md"):
                v.memory_tool(command)
        assert (root / "facts" / "Fact.MD").read_text(encoding="utf-8") == text
        assert v.engine.store.note("facts/Fact.MD") is None


def test_an_upper_case_md_beside_its_note_is_never_told_to_take_its_name(
    tmp_path: Path,
) -> None:
    """`Plan.MD` beside a note `Plan.md` (a disk that tells case: a clone, an export):
    status said 'rename it Plan.md to have it indexed', and a person doing so (`mv`)
    replaced the note `Plan.md` and lost its words. Now it says the note is there, and
    to give the file another name; by the full scan and by a sync of its path."""
    root = make_vault(tmp_path)
    write(root, "projects/Plan.md", note("Plan", body="the indexed plan"))
    write(root, "projects/Plan.MD", note("Plan", body=WORDS))
    with open_vault(root) as v:
        for report in (v.sync(), v.sync(["projects/Plan.MD"])):
            (why,) = [s.reason for s in report.skipped if s.path == "projects/Plan.MD"]
            assert "rename it Plan.md" not in why
            assert "Plan.md beside it is another note" in why and "Plan 2.md" in why
    assert not_a_note_for_obsidian("a/Plan.MD") == (
        "not a note: Obsidian reads only .md in lower case as a note, and this is .MD "
        "(rename it Plan.md to have it indexed)"
    )


def test_the_memory_tools_listings_show_an_agents_upper_case_md_files_as_files(
    tmp_path: Path,
) -> None:
    """An agent's ``Fact.MD`` (the tool wrote such files before it refused them) was in
    no listing: ``view /memories`` and a folder's view list notes, and a folder holding
    only such files was not listed at all. The tool lets the agent rename one to .md,
    but it could not see one to rename. The SDK's reference lists every file it holds.
    Now each is listed as a file (its size and path), with the rename to make; the tool
    still writes into none."""
    root = make_vault(tmp_path)
    write(root, "Fact.MD", "The quokka budget review moves to Thursday.\n")
    write(root, "facts/Old.MD", "An old fact.\n")
    write(root, "projects/Plan.Md", "A plan.\n")
    write(root, "templates/Form.MD", "Left out by vault.ignore.\n")
    with open_vault(root) as v:
        v.sync()
        index = v.memory_tool({"command": "view", "path": "/memories"})
        lines = index.split("\n")
        for path, size in (("Fact.MD", "44B"), ("facts/Old.MD", "13B"), ("projects/Plan.Md", "8B")):
            assert f"{size}\t/memories/{path}" in lines
        assert "13B\t/memories/facts/\t0 notes, 1 file not a note" in lines
        assert "Form.MD" not in index
        assert "Files not read as notes (3, newest first)" in index
        facts = v.memory_tool({"command": "view", "path": "/memories/facts"}).split("\n")
        assert "13B\t/memories/facts/Old.MD" in facts and "No notes in /memories/facts." in facts
        projects = v.memory_tool({"command": "view", "path": "/memories/projects"})
        assert "8B\t/memories/projects/Plan.Md" in projects.split("\n")
        assert "ai-assistant-refactor.md" in projects  # its notes as before
        with pytest.raises(MemoryToolError, match=r"rename it Old\.md"):
            v.memory_tool(
                {
                    "command": "str_replace",
                    "path": "/memories/facts/Old.MD",
                    "old_str": "old",
                    "new_str": "new",
                }
            )
        assert (root / "facts" / "Old.MD").read_text() == "An old fact.\n"
        v.memory_tool(
            {
                "command": "rename",
                "old_path": "/memories/facts/Old.MD",
                "new_path": "/memories/facts/Old.md",
            }
        )
        facts = v.memory_tool({"command": "view", "path": "/memories/facts"})
        assert "Files not read as notes" not in facts and "13B\t/memories/facts/Old.md" in facts


def test_an_upper_case_md_is_not_renamed_onto_its_name_beside_a_note_of_it_in_another_case(
    tmp_path: Path,
) -> None:
    """``Fact.MD`` beside a note ``fact.md`` (ext4): the listing says to rename it
    ``Fact.md``, and the tool did, taking ``fact.md`` for the source's own name in
    another case: two notes of one name, which a clone on a Mac or Windows cannot hold
    (one of the two lost there). Refused, naming the note; both files as they were."""
    root = make_vault(tmp_path)
    write(root, "facts/Fact.MD", "A person's fact.\n")
    write(root, "facts/fact.md", "# fact\n\nAnother note.\n")
    with open_vault(root) as v:
        v.sync()
        with pytest.raises(MemoryToolError, match=r"already exists as /memories/facts/fact\.md"):
            v.memory_tool(
                {
                    "command": "rename",
                    "old_path": "/memories/facts/Fact.MD",
                    "new_path": "/memories/facts/Fact.md",
                }
            )
        assert sorted(os.listdir(root / "facts")) == ["Fact.MD", "fact.md"]
        v.memory_tool(  # its own name respelt is still a rename
            {
                "command": "rename",
                "old_path": "/memories/facts/fact.md",
                "new_path": "/memories/facts/The-Fact.md",
            }
        )
        v.memory_tool(
            {
                "command": "rename",
                "old_path": "/memories/facts/The-Fact.md",
                "new_path": "/memories/facts/the fact.md",
            }
        )
        assert sorted(os.listdir(root / "facts")) == ["Fact.MD", "the fact.md"]


def test_the_listings_never_tell_an_agent_to_rename_onto_a_note_beside(tmp_path: Path) -> None:
    """``Plan.MD`` beside the note ``Plan.md``: the listing said "Rename each to .md
    (rename /memories/Plan.MD to /memories/Plan.md)", a rename the tool refuses (the
    destination already exists) and status says not to make (another name). The
    example is a file whose .md name is free; one whose is not says so."""
    root = make_vault(tmp_path)
    write(root, "Fact.MD", "A fact.\n")
    write(root, "Plan.md", "# Plan\n")
    plan = write(root, "Plan.MD", "An older plan.\n")
    os.utime(plan, ns=(os.stat(plan).st_mtime_ns + 10**9,) * 2)  # the newest
    with open_vault(root) as v:
        v.sync()
        index = v.memory_tool({"command": "view", "path": "/memories"})
        assert "(rename /memories/Fact.MD to /memories/Fact.md)" in index
        assert "rename /memories/Plan.MD to" not in index
        lines = index.split("\n")
        assert (
            "15B\t/memories/Plan.MD\t(Plan.md is another note: rename it another name, Plan 2.md)"
            in lines
        )
        assert "8B\t/memories/Fact.MD" in lines
        # a folder's view: its folders, its files not notes, its notes (docs/AGENTS.md)
        write(root, "facts/Old.MD", "An old fact.\n")
        write(root, "facts/older/Older.md", "# Older\n")
        write(root, "facts/new.md", "# New\n")
        view = v.memory_tool({"command": "view", "path": "/memories/facts"}).split("\n")
        at = [view.index("Folders:"), view.index("13B\t/memories/facts/Old.MD")]
        at.append(next(i for i, x in enumerate(view) if x.startswith("Notes 1-1 of 1")))
        assert at == sorted(at), view
