"""Claude's memory tool on a vault (memvault.integrations.anthropic, engine.memory_tool):
the real SDK classes, commands shaped as the Messages API sends them, through ``call()``."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

from attacks import ATTACKS
from helpers import (
    MEMORY_UPDATED,
    as_the_reference_answers,
    escaping_vault,
    make_vault,
    note,
    open_vault,
    unmarked,
    write,
)
from memvault.api import Vault
from memvault.core import memory_tool as T
from memvault.core import memory_views as V
from memvault.errors import MemoryToolError, VaultNotFound
from memvault.integrations.anthropic import AsyncVaultMemoryTool, VaultMemoryTool


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    """The example vault, a secret beside it and symlinks inside it leading out."""
    root = escaping_vault(tmp_path)
    with open_vault(root, overrides={"vault": {"max_note_bytes": 20_000}}) as v:
        v.sync()
        yield v


@pytest.fixture
def tool(vault: Vault) -> VaultMemoryTool:
    return VaultMemoryTool(vault)


def call(tool: VaultMemoryTool, **command: Any) -> str:
    result = tool.call(command)
    assert isinstance(result, str)
    return result


def refused(tool: Any, **command: Any) -> str:
    with pytest.raises(ToolError) as caught:
        tool.call(command)
    return str(caught.value)


def memory_md(vault: Vault) -> str:
    return (vault.root / "MEMORY.md").read_text(encoding="utf-8")


# -- the SDK's own classes ------------------------------------------------------------------


def test_the_tools_are_the_sdks_memory_tools(tool: VaultMemoryTool, vault: Vault) -> None:
    assert isinstance(tool, BetaAbstractMemoryTool)
    assert isinstance(AsyncVaultMemoryTool(vault), BetaAsyncAbstractMemoryTool)
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    assert tool.name == "memory"


def test_answers_are_the_reference_tools_answers_word_for_word(
    tool: VaultMemoryTool, tmp_path: Path
) -> None:
    """The same session against the SDK's BetaLocalFilesystemMemoryTool and the vault:
    the same texts, successes and errors alike (models are trained on them)."""
    reference = BetaLocalFilesystemMemoryTool(str(tmp_path / "reference"))
    text = "# Ana\n\nAna leads the data team.\nShe likes tea.\nShe likes tea.\n"
    session: list[dict[str, Any]] = [
        {"command": "create", "path": "/memories/people/ana.md", "file_text": text},
        {"command": "create", "path": "/memories/people/ana.md", "file_text": "again"},
        {"command": "view", "path": "/memories/people/ana.md"},
        {"command": "view", "path": "/memories/people/ana.md", "view_range": [2, 3]},
        {"command": "view", "path": "/memories/people/ana.md", "view_range": [3, -1]},
        {"command": "str_replace", "path": "/memories/people/ana.md", "old_str": "data team",
         "new_str": "data platform team"},
        {"command": "str_replace", "path": "/memories/people/ana.md", "old_str": "coffee",
         "new_str": "tea"},
        {"command": "str_replace", "path": "/memories/people/ana.md", "old_str": "She likes tea.",
         "new_str": "x"},
        {"command": "insert", "path": "/memories/people/ana.md", "insert_line": 2,
         "insert_text": "Role: lead\n"},
        {"command": "insert", "path": "/memories/people/ana.md", "insert_line": 99,
         "insert_text": "x"},
        {"command": "insert", "path": "/memories/people/ana.md", "insert_line": -1,
         "insert_text": "x"},
        {"command": "view", "path": "/memories/people/nobody.md"},
        {"command": "str_replace", "path": "/memories/people/nobody.md", "old_str": "a",
         "new_str": "b"},
        {"command": "create", "path": "/memories/people/bo.md", "file_text": "# Bo\n"},
        {"command": "rename", "old_path": "/memories/people/bo.md",
         "new_path": "/memories/people/ana.md"},
        {"command": "rename", "old_path": "/memories/people/nobody.md",
         "new_path": "/memories/people/x.md"},
        {"command": "rename", "old_path": "/memories/people/bo.md",
         "new_path": "/memories/people/bob.md"},
        {"command": "delete", "path": "/memories/people/bob.md"},
        {"command": "delete", "path": "/memories/people/bob.md"},
        {"command": "delete", "path": "/memories"},
        {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
        {"command": "view", "path": "people/ana.md"},
        {"command": "view", "path": "/memories/../secret.md"},
        {"command": "view", "path": "/memories/people/ana.md"},
    ]  # fmt: skip
    for command in session:
        want = _answer(reference, command)
        got = as_the_reference_answers(command, _answer(tool, command))
        assert got == want, command


def _answer(tool: Any, command: dict[str, Any]) -> tuple[bool, str]:
    try:
        return True, str(tool.call(command))
    except ToolError as exc:
        return False, str(exc)


# -- view -----------------------------------------------------------------------------------------


def test_view_memories_is_the_index_memory_md_then_folders_with_counts(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    out = call(tool, command="view", path="/memories")
    lines = out.split("\n")
    assert lines[1] == "/memories/MEMORY.md:"
    assert lines[2] == "     1\t# Memory Index"
    assert "[[people/sarah-chen]]" in out
    at = lines.index("Folders:")
    assert [line.split("\t")[1:] for line in lines[at + 1 :]] == [
        ["/memories/decisions/", "1 note"],
        ["/memories/logs/", "1 note"],
        ["/memories/people/", "1 note"],
        ["/memories/projects/", "1 note"],
    ]
    assert "SECRET" not in out and "escape" not in out  # symlinks leading out are not listed


def test_view_memories_stays_within_60_lines_and_its_characters_on_a_big_vault(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    root = vault.root
    for i in range(3000):
        write(root, f"area-{i % 30:02d}/sub-{i % 7}/note-{i}.md", note(f"Note {i}", f"About {i}."))
    for i in range(120):  # Claude Code's topic files, at the top level
        write(root, f"topic-{i}.md", f"# Topic {i}\n")
    for i in range(40):  # files not read as notes, listed as files
        write(root, f"area-{i % 9:02d}/Old {i}.MD", f"# Old {i}\n")
    mem = root / "MEMORY.md"
    mem.write_text(
        mem.read_text(encoding="utf-8") + "".join(f"- a line of my own {i}\n" for i in range(400)),
        encoding="utf-8",
    )
    out = call(tool, command="view", path="/memories")
    lines = out.split("\n")
    assert len(lines) <= V.INDEX_LINES
    assert len(out) <= V.INDEX_CHARS
    assert "Files not read as notes (40, newest first)" in out
    assert lines[2] == "     1\t# Memory Index"
    assert any(line.startswith("(… ") and "view /memories/MEMORY.md" in line for line in lines)
    at = lines.index("Folders:")
    assert [line.split("\t")[1] for line in lines[at + 1 : at + 5]] == [
        "/memories/decisions/",
        "/memories/logs/",
        "/memories/people/",
        "/memories/projects/",
    ]  # the folders MEMORY.md has sections for first, then the biggest
    assert "/memories/area-00/\t100 notes" in out
    (more,) = [line for line in lines if line.startswith("… and 22 more folders (2200 notes; ")]
    # paged past the 120 top-level notes (their numbers kept), every folder by name (an
    # order no note written meanwhile changes, as it does the index's, biggest first)
    assert "; view /memories with view_range [121, M] lists all 34, by name): " in unmarked(more)
    folders = call(tool, command="view", path="/memories", view_range=[121, 160]).split("\n")
    assert folders[0].startswith(
        "Folders 1-34 of 34 in /memories, view_range [121, 154], numbered past its 120 notes "
    )
    names = [line.split("\t")[1] for line in folders[1:]]
    assert len(folders) == 35 and names == sorted(names)
    assert sum("/\t100 notes" in line for line in folders[1:]) == 30
    assert "Notes at the top level (120, newest first):" in out
    assert "view /memories with view_range [9, M] for the next ones" in unmarked(out)
    page = call(tool, command="view", path="/memories", view_range=[9, 48])
    assert "Notes 9-48 of 120 in the notes at the top level of /memories" in page


def test_files_not_notes_deep_in_long_folders_keep_the_index_within_its_characters(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    """Each ``Fact.MD`` was listed with its whole path, and the first twice more in the
    rename said: seven such files twelve long folders deep made ``view /memories``
    13,900 characters (5,000 said, ~3,500 tokens more). The files' lines are kept
    within their characters; those left out are counted, with where they are."""
    root = vault.root
    for j in range(7):
        folder = "/".join(f"{'é' * 60}-{j}-{k}" for k in range(12))
        write(root, f"{folder}/{'ü' * 100}-{j}.MD", "A fact.\n")
    write(root, "short/Fact.MD", "A short fact.\n")
    out = call(tool, command="view", path="/memories")
    assert len(out) <= V.INDEX_CHARS
    assert "Files not read as notes (8, newest first)" in out
    lines = out.split("\n")
    assert "14B\t/memories/short/Fact.MD" in lines  # the newest, whole
    assert "… and 7 more in 7 folders" in lines  # each too long to list within them
    assert "(rename /memories/short/Fact.MD to /memories/short/Fact.md)" in out


def test_view_of_a_folder_lists_its_notes_newest_first_and_says_how_to_see_the_rest(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    root = vault.root
    for i in range(100):
        path = write(root, f"people/p{i:03d}.md", note(f"Person {i}"))
        os.utime(path, ns=(1_700_000_000_000_000_000 + i * 10**9,) * 2)
    write(root, "people/old/friend.md", note("Friend"))
    write(root, "people/people.md", "# People\n")  # a folder note (a person's, here)
    os.utime(root / "people/people.md", ns=(1_600_000_000_000_000_000,) * 2)
    os.utime(root / "people/sarah-chen.md", ns=(1_600_000_000_000_000_000,) * 2)
    vault.sync()
    out = call(tool, command="view", path="/memories/people")
    lines = out.split("\n")
    size = len(note("Friend"))
    assert lines[:3] == ["Folders:", f"{size}B\t/memories/people/old/\t1 note", lines[2]]
    assert lines[2].startswith("Notes 1-40 of 102 in /memories/people, newest first")
    listed = [line.split("\t")[1] for line in lines[3:-1]]
    assert listed == [f"/memories/people/p{i:03d}.md" for i in range(99, 59, -1)]
    assert lines[3].endswith("\tAbout Person 99.")  # its summary (here its first line)
    assert unmarked(lines[-1]) == (
        "(62 more: view /memories/people with view_range [41, M] for the next ones; "
        "/memories/people/people.md lists every one)"
    )
    nxt = call(tool, command="view", path="/memories/people", view_range=[41, 80]).split("\n")
    assert nxt[0].startswith("Notes 41-80 of 102")
    assert nxt[1].split("\t")[1] == "/memories/people/p059.md"
    assert "Backend lead" in call(
        tool, command="view", path="/memories/people", view_range=[81, 120]
    )


def test_a_folders_subfolders_past_ten_are_paged_past_its_notes(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    """A folder per client: 25 subfolders, 10 listed, "… and 15 more folders here" named
    no command that lists the others. Its view_range numbers its notes first (a page of
    notes keeps its numbers), then its folders: the counted line says which."""
    root = vault.root
    for i in range(50):
        write(root, f"clients/n{i:02d}.md", note(f"N {i}"))
    for k in range(25):
        write(root, f"clients/Client {k:02d}/brief.md", note(f"Brief {k}"))
    lines = call(tool, command="view", path="/memories/clients").split("\n")
    assert [line.split("\t")[1] for line in lines[1:11]] == [
        f"/memories/clients/Client {k:02d}/" for k in range(10)
    ]
    assert unmarked(lines[11]).startswith(
        "… and 15 more folders (15 notes here; view /memories/clients with view_range "
        "[61, M] lists them): Client 10/, Client 11/, "
    )
    assert lines[12].startswith("Notes 1-40 of 50 in /memories/clients")
    assert unmarked(lines[-1]).startswith(
        "(10 more: view /memories/clients with view_range [41, M]"
    )
    notes = call(tool, command="view", path="/memories/clients", view_range=[41, 80])
    assert notes.startswith("Notes 41-50 of 50 in /memories/clients")
    folders = call(tool, command="view", path="/memories/clients", view_range=[61, 100])
    assert folders.split("\n") == [
        "Folders 11-25 of 25 in /memories/clients, view_range [61, 75], numbered past its "
        "50 notes (size, path, notes at or below it):",
        *(
            f"{len(note(f'Brief {k}'))}B\t/memories/clients/Client {k}/\t1 note"
            for k in range(10, 25)
        ),
    ]
    with pytest.raises(ToolError, match=r"`76` should be within .*: \[1, 75\]"):
        call(tool, command="view", path="/memories/clients", view_range=[76, 100])


def test_view_of_a_file_shows_numbered_lines_and_a_range(tool: VaultMemoryTool) -> None:
    out = call(tool, command="view", path="/memories/people/sarah-chen.md", view_range=[1, 2])
    assert out == (
        "Here's the content of /memories/people/sarah-chen.md with line numbers:\n"
        "     1\t---\n     2\ttitle: Sarah Chen"
    )
    # as the reference reads them (tests/test_memory_tool_reference.py): past the end, no
    # lines; one element, the whole file
    assert call(
        tool, command="view", path="/memories/people/sarah-chen.md", view_range=[500, 600]
    ) == ("Here's the content of /memories/people/sarah-chen.md with line numbers:\n")
    assert call(tool, command="view", path="/memories/people/sarah-chen.md", view_range=[1]) == (
        call(tool, command="view", path="/memories/people/sarah-chen.md")
    )


# -- writes keep the vault true ----------------------------------------------------------------


def test_create_lists_the_note_in_memory_md_and_indexes_it_before_returning(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    text = note("Ana Lopez", "Leads the data team; prefers mornings.", "Works with [[sarah-chen]].")
    assert (
        call(tool, command="create", path="/memories/people/ana-lopez.md", file_text=text)
        == "File created successfully at: /memories/people/ana-lopez.md"
    )
    assert (vault.root / "people/ana-lopez.md").read_text(encoding="utf-8") == text
    assert "[[people/ana-lopez]] - Leads the data team" in memory_md(vault)
    # indexed before the call returned, and first for its own word while its vector is
    # still pending (the evidence it cannot have yet is not counted against it)
    assert vault.search("mornings", k=5)[0].path == "people/ana-lopez.md"
    assert vault.links_check() == []


def test_create_over_an_existing_note_is_refused_and_the_note_kept(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    before = (vault.root / "people/sarah-chen.md").read_bytes()
    assert (
        refused(tool, command="create", path="/memories/people/sarah-chen.md", file_text="x")
        == "File /memories/people/sarah-chen.md already exists"
    )
    assert refused(tool, command="create", path="/memories/MEMORY.md", file_text="x") == (
        "File /memories/MEMORY.md already exists"
    )
    assert (vault.root / "people/sarah-chen.md").read_bytes() == before


def test_str_replace_and_insert_change_the_note_and_memory_md_follows(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    path = "/memories/people/sarah-chen.md"
    call(tool, command="str_replace", path=path, old_str="summary: Backend lead",
         new_str="summary: Platform director")  # fmt: skip
    assert "[[people/sarah-chen]] - Platform director" in memory_md(vault)
    assert call(tool, command="insert", path=path, insert_line=0, insert_text="") == (
        f"The file {path} has been edited."
    )
    assert vault.search("Platform director", k=1)[0].path == "people/sarah-chen.md"


def test_edits_inside_memory_md_sections_are_refused_naming_the_note_to_change(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    before = memory_md(vault)
    lines = before.split("\n")
    entry = next(i for i, line in enumerate(lines) if "[[people/sarah-chen]]" in line) + 1
    why = refused(tool, command="str_replace", path="/memories/MEMORY.md",
                  old_str="Backend lead on the platform team", new_str="CTO")  # fmt: skip
    assert why.startswith("No replacement was performed: lines")
    assert "memvault's `people` section" in why
    assert "Change the note instead and this line follows: /memories/people/sarah-chen.md" in why
    why = refused(tool, command="insert", path="/memories/MEMORY.md", insert_line=entry,
                  insert_text="- [[people/ana]] - a hand-written entry")  # fmt: skip
    assert why.startswith("Text was not inserted:") and "/memories/people/" in why
    marker = "<!-- memvault:end projects -->"
    why = refused(tool, command="str_replace", path="/memories/MEMORY.md", old_str=marker,
                  new_str="")  # fmt: skip
    assert "`projects` section" in why
    assert memory_md(vault) == before
    # outside the markers the text is the agent's, as a person's
    call(tool, command="str_replace", path="/memories/MEMORY.md",
         old_str="Keep it small;", new_str="Keep it small, agent;")  # fmt: skip
    end = lines.index("<!-- memvault:end people -->") + 1
    call(tool, command="insert", path="/memories/MEMORY.md", insert_line=end,
         insert_text="Ask Sarah before schema changes.")  # fmt: skip
    vault.sync()
    after = memory_md(vault)
    assert "Keep it small, agent;" in after
    assert "<!-- memvault:end people -->\nAsk Sarah before schema changes.\n" in after


def test_an_edit_leaving_memory_mds_markers_unpaired_is_refused(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    # a stray marker outside the sections: accepted, memvault then left MEMORY.md alone
    # ("left untouched: line 9: section 'projects' begins inside 'people'"), and a note
    # created next went unlisted while the tool answered "File created successfully"
    before = memory_md(vault)
    why = refused(tool, command="insert", path="/memories/MEMORY.md", insert_line=0,
                  insert_text="<!-- memvault:begin people -->")  # fmt: skip
    assert why.startswith("Text was not inserted: /memories/MEMORY.md would be left with")
    assert "section markers unpaired (line " in why
    twice = "<!-- memvault:begin people -->\n<!-- memvault:end people -->\nKeep it small;"
    why = refused(tool, command="str_replace", path="/memories/MEMORY.md",
                  old_str="Keep it small;", new_str=twice)  # fmt: skip
    assert why.startswith("No replacement was performed: /memories/MEMORY.md would be left")
    assert "appears twice" in why
    assert memory_md(vault) == before
    call(tool, command="create", path="/memories/people/dan.md",
         file_text=note("Dan", "Dan joined the data team."))  # fmt: skip
    assert "[[people/dan]] - Dan joined the data team." in memory_md(vault)
    # a file whose markers are broken already may be mended (or edited) as before
    write(vault.root, "MEMORY.md", "<!-- memvault:begin people -->\n" + memory_md(vault))
    call(tool, command="insert", path="/memories/MEMORY.md", insert_line=1,
         insert_text="Still broken.")  # fmt: skip
    call(tool, command="str_replace", path="/memories/MEMORY.md",
         old_str="<!-- memvault:begin people -->\nStill broken.\n", new_str="")  # fmt: skip
    assert memory_md(vault).startswith("# Memory Index\n")


def test_rename_retargets_links_to_a_note_and_to_a_folder(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    root = vault.root
    out = call(tool, command="rename", old_path="/memories/people/sarah-chen.md",
               new_path="/memories/people/sarah.md")  # fmt: skip
    assert out.split("\n")[0] == (
        "Successfully renamed /memories/people/sarah-chen.md to /memories/people/sarah.md"
    )
    assert "Links to it were updated in" in out
    assert "[[people/sarah]]" in memory_md(vault)
    # an agent holding MEMORY.md's text from a view is told it changed under it
    assert out.endswith("\n" + MEMORY_UPDATED)
    call(tool, command="create", path="/memories/misc/a.md", file_text="# A\n\nA note.\n")
    out = call(tool, command="rename", old_path="/memories/misc/a.md",
               new_path="/memories/misc/b.md")  # fmt: skip
    assert out == "Successfully renamed /memories/misc/a.md to /memories/misc/b.md"
    project = (root / "projects/ai-assistant-refactor.md").read_text(encoding="utf-8")
    assert "sarah-chen" not in project and "[[sarah" in project
    call(tool, command="rename", old_path="/memories/decisions",
         new_path="/memories/choices")  # fmt: skip
    assert (root / "choices/2024-03-12-why-postgresql.md").exists()
    assert "decisions/2024-03-12" not in (root / "logs/2024-03-15.md").read_text(encoding="utf-8")
    assert vault.links_check() == []
    found = [h.path for h in vault.search("pgvector embeddings", k=5)]
    assert "choices/2024-03-12-why-postgresql.md" in found


def test_rename_onto_an_existing_note_or_into_a_hidden_folder_is_refused(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    old = "/memories/people/sarah-chen.md"
    assert refused(tool, command="rename", old_path=old,
                   new_path="/memories/projects/ai-assistant-refactor.md") == (
        "The destination /memories/projects/ai-assistant-refactor.md already exists"
    )  # fmt: skip
    for hidden in ("/memories/.obsidian/sarah.md", "/memories/.memvault/x.md",
                   "/memories/people/.old/sarah.md"):  # fmt: skip
        assert "is not memory" in refused(tool, command="rename", old_path=old, new_path=hidden)
    assert "into itself" in refused(
        tool, command="rename", old_path="/memories/people", new_path="/memories/people/x"
    )
    assert refused(tool, command="rename", old_path="/memories/MEMORY.md",
                   new_path="/memories/INDEX.md").startswith("Cannot rename /memories/MEMORY.md")  # fmt: skip
    assert (vault.root / "people/sarah-chen.md").exists()
    assert not (vault.root / ".obsidian/sarah.md").exists()


@pytest.mark.parametrize(
    "new_path",
    ["/memories/people/sarah-chen.md/old.md", "/memories/people/sarah-chen.md/a/b.md"],
)
def test_rename_into_a_path_through_a_note_says_a_part_of_it_is_a_file(
    tool: VaultMemoryTool, vault: Vault, new_path: str
) -> None:
    """A careless agent's rename to ``.../sarah-chen.md/old.md`` (a note taken for a
    folder) was answered "[Errno 17] File exists: '/home/…/people/sarah-chen.md'": the
    disk's path, which the model cannot use, and no word of what was wrong. Refused as
    ``create`` refuses it; nothing moved, no folder made."""
    before = sorted(p.relative_to(vault.root).as_posix() for p in vault.root.rglob("*"))
    said = refused(
        tool, command="rename", old_path="/memories/logs/2024-03-15.md", new_path=new_path
    )
    assert said == (
        f"Cannot rename /memories/logs/2024-03-15.md to {new_path}: a part of its path is a file"
    ), said
    assert sorted(p.relative_to(vault.root).as_posix() for p in vault.root.rglob("*")) == before


def test_delete_moves_to_the_trash_and_refuses_the_root_and_memory_md(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    root = vault.root
    text = (root / "logs/2024-03-15.md").read_text(encoding="utf-8")
    assert call(tool, command="delete", path="/memories/logs/2024-03-15.md") == (
        "Successfully deleted /memories/logs/2024-03-15.md"
    )
    assert not (root / "logs/2024-03-15.md").exists()
    assert (root / ".trash/logs/2024-03-15.md").read_text(encoding="utf-8") == text
    assert "[[logs/2024-03-15]]" not in memory_md(vault)
    assert vault.engine.store.manifest().get("logs/2024-03-15.md") is None
    assert refused(tool, command="delete", path="/memories") == (
        "Cannot delete the /memories directory itself"
    )
    assert refused(tool, command="delete", path="/memories/").startswith("Cannot delete the")
    assert refused(tool, command="delete", path="/memories/MEMORY.md").startswith(
        "Cannot delete /memories/MEMORY.md"
    )
    assert (root / "MEMORY.md").exists()
    call(tool, command="delete", path="/memories/projects")
    assert (root / ".trash/projects/ai-assistant-refactor.md").exists()
    assert not any(p.startswith("projects/") for p in vault.engine.store.manifest())


def test_a_delete_says_where_the_links_to_it_lead_now(tool: VaultMemoryTool, vault: Vault) -> None:
    """Links to a deleted note dangle (memvault mends MEMORY.md's lines, not a person's
    words): the answer names the notes holding them, so the agent can mend them, and a
    link that now leads to another note of that name."""
    root = vault.root
    call(tool, command="create", path="/memories/people/bo.md", file_text="# Bo\n\nBo runs ops.\n")
    call(tool, command="create", path="/memories/people/cy.md",
         file_text="# Cy\n\nWorks with [[people/bo]] and [[people/bo|Bo]].\n")  # fmt: skip
    call(tool, command="create", path="/memories/projects/ops.md",
         file_text="# Ops\n\nOwned by [[bo]].\n")  # fmt: skip
    assert call(tool, command="delete", path="/memories/people/bo.md").splitlines() == [
        "Successfully deleted /memories/people/bo.md",
        "Links to it now lead nowhere in 2 notes: /memories/people/cy.md, "
        "/memories/projects/ops.md (edit them, or restore it from .trash/people/bo.md)",
    ]
    assert (root / "people/cy.md").read_text(encoding="utf-8").count("[[people/bo") == 2
    # a link that a file of the same path's end now takes
    call(tool, command="create", path="/memories/people/dee.md", file_text="# Dee\n")
    call(tool, command="create", path="/memories/archive/people/dee.md", file_text="# Dee (2019)\n")
    call(
        tool, command="create", path="/memories/projects/e.md", file_text="# E\n\n[[people/dee]]\n"
    )
    assert call(tool, command="delete", path="/memories/people/dee.md").splitlines()[1:] == [
        "Links to it now lead to another note of that name: "
        "[[people/dee]] in /memories/projects/e.md -> /memories/archive/people/dee.md"
    ]
    # a folder: the links into it from outside it; none left: the reference's answer
    call(tool, command="create", path="/memories/teams/a.md", file_text="# A\n\n[[teams/b]]\n")
    call(tool, command="create", path="/memories/teams/b.md", file_text="# B\n")
    call(tool, command="create", path="/memories/notes/c.md", file_text="# C\n\n[[teams/a]]\n")
    assert call(tool, command="delete", path="/memories/teams").splitlines()[1:] == [
        "Links to it now lead nowhere in 1 note: /memories/notes/c.md "
        "(edit them, or restore it from .trash/teams)"
    ]
    assert call(tool, command="delete", path="/memories/notes/c.md") == (
        "Successfully deleted /memories/notes/c.md"
    )


def test_a_folders_delete_names_the_links_to_its_attachments_and_folder_note(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    """A folder's files are not only its notes: an image embedded from outside it, and
    a folder note of a person's, left links leading nowhere too."""
    write(vault.root, "teams/teams.md", "# Teams\n\nOur teams.\n")
    write(vault.root, "teams/a.md", "# A\n")
    (vault.root / "teams/chart.png").write_bytes(b"\x89PNG")
    write(vault.root, "notes/d.md", "# D\n\n![[chart.png]]\n")
    write(vault.root, "notes/e.md", "# E\n\nSee [[teams/teams]].\n")
    vault.sync()
    assert call(tool, command="delete", path="/memories/teams").splitlines()[1:] == [
        "Links to it now lead nowhere in 2 notes: /memories/notes/d.md, /memories/notes/e.md "
        "(edit them, or restore it from .trash/teams)"
    ]


def test_a_delete_names_memory_md_when_its_own_index_line_is_left_leading_nowhere(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    """Claude Code's auto memory keeps its own index in MEMORY.md, outside the markers
    (``- [调试笔记](调试笔记.md) — hook``): those lines are the agent's words, kept as
    written when the note goes, so the answer names MEMORY.md among the files whose links
    now lead nowhere (it said nothing: the agent's index kept a line to a note gone). The
    line memvault wrote for the note in its Topics section goes with it and is not said."""
    call(
        tool,
        command="create",
        path="/memories/调试笔记.md",
        file_text="# 调试\n\nGradle 先清缓存。\n",
    )
    call(tool, command="create", path="/memories/api.md", file_text="# API\n\nPages are 1-based.\n")
    text = memory_md(vault) + "\n## Claude Code\n- [调试笔记](调试笔记.md) — Gradle 排错\n"
    (vault.root / "MEMORY.md").write_text(text, encoding="utf-8")
    vault.sync()
    assert "[[api]]" in memory_md(vault) and "[[调试笔记]]" in memory_md(vault)
    assert call(tool, command="delete", path="/memories/调试笔记.md").splitlines() == [
        "Successfully deleted /memories/调试笔记.md",
        "Links to it now lead nowhere in 1 note: /memories/MEMORY.md "
        "(edit them, or restore it from .trash/调试笔记.md)",
    ]
    assert "[[调试笔记]]" not in memory_md(vault)
    assert "- [调试笔记](调试笔记.md) — Gradle 排错\n" in memory_md(vault)
    # only memvault's own line linked it: nothing dangles, nothing said
    assert call(tool, command="delete", path="/memories/api.md") == (
        "Successfully deleted /memories/api.md"
    )
    assert "[[api]]" not in memory_md(vault)


def test_a_long_notes_view_stops_at_a_bound_and_says_how_to_read_on(tmp_path: Path) -> None:
    """A 50,000-line log given whole would not fit a model's context (the reference
    gives it whole): a view stops at ``VIEW_CHARS`` on a line's end and names the
    ``view_range`` of the next lines; paging so reads every line once."""
    from memvault.core.memory_tool import VIEW_CHARS

    with open_vault(make_vault(tmp_path)) as vault:  # notes of up to 2 MB, the default
        _long_views(VaultMemoryTool(vault), vault, VIEW_CHARS)


def _long_views(tool: VaultMemoryTool, vault: Vault, view_chars: int) -> None:
    lines = [f"- 2024-01-{i % 28 + 1:02d} entry {i} about the ferry budget" for i in range(3000)]
    (vault.root / "logs/long.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    said = call(tool, command="view", path="/memories/logs/long.md")
    assert len(said) < view_chars + 400
    *shown, footer = said.split("\n")[1:]
    n = len(shown)
    assert footer == (
        f"(… lines 1-{n} of 3001 shown: a view shows 40,000 characters at most; "
        f"view_range [{n + 1}, -1] shows the next)"
    )
    seen = [row.split("\t", 1)[1] for row in shown]
    while footer.startswith("(… lines"):
        nxt = [int(x) for x in footer.rsplit("view_range [", 1)[1].split("]")[0].split(", ")]
        page = call(tool, command="view", path="/memories/logs/long.md", view_range=nxt)
        *rows, footer = page.split("\n")[1:]
        if not footer.startswith("(… lines"):
            rows.append(footer)
        seen += [row.split("\t", 1)[1] for row in rows]
    assert seen == [*lines, ""]  # every line once, in order, to the file's end
    # a range within the bound is the reference's, and one line past it shows its start
    assert call(tool, command="view", path="/memories/logs/long.md", view_range=[2, 3]) == (
        "Here's the content of /memories/logs/long.md with line numbers:\n"
        f"     2\t{lines[1]}\n     3\t{lines[2]}"
    )
    (vault.root / "logs/wide.md").write_text("x" * 100_000, encoding="utf-8")
    wide = call(tool, command="view", path="/memories/logs/wide.md").split("\n")
    assert wide[1].endswith("x …") and len(wide[1]) == view_chars + 2
    assert wide[2] == (
        "(… lines 1-1 of 1 shown: a view shows 40,000 characters at most; "
        "view_range [2, -1] shows the next)"
    )


# -- bad input -----------------------------------------------------------------------------------


def _outside(tmp: Path, root: Path) -> dict[str, bytes]:
    return {
        str(p): p.read_bytes()
        for p in tmp.rglob("*")
        if p.is_file() and not p.is_symlink() and root not in p.parents
    }


@pytest.mark.parametrize("attack", ATTACKS)
def test_paths_leaving_the_vault_are_refused_for_every_command(
    tool: VaultMemoryTool, vault: Vault, attack: str
) -> None:
    tmp = vault.root.parent
    before = _outside(tmp, vault.root)
    path = f"/memories/{attack}"
    for command in (
        {"command": "view", "path": path},
        {"command": "create", "path": path, "file_text": "pwned"},
        {"command": "str_replace", "path": path, "old_str": "SECRET", "new_str": "pwned"},
        {"command": "insert", "path": path, "insert_line": 0, "insert_text": "pwned"},
        {"command": "delete", "path": path},
        {"command": "rename", "old_path": path, "new_path": "/memories/stolen.md"},
        {"command": "rename", "old_path": "/memories/people/sarah-chen.md", "new_path": path},
    ):
        if attack.startswith("/") or (attack in ("", ".") and command["command"] == "view"):
            # "/memories//etc/passwd" is etc/passwd in the vault (as the reference reads
            # it); "/memories/" and "/memories/." are the root. Nothing outside changes
            # (checked below).
            with contextlib.suppress(ToolError):
                assert "SECRET" not in str(tool.call(command))
            continue
        why = refused(tool, **command)
        assert "SECRET" not in why
    assert _outside(tmp, vault.root) == before
    if not attack.startswith("/"):
        assert (vault.root / "people/sarah-chen.md").exists()
        assert not (vault.root / "stolen.md").exists()


@pytest.mark.parametrize(
    ("path", "answer"),
    [
        ("/memories/../x", "Path /memories/../x would escape /memories directory"),
        ("/memories/%2e%2e/x.md", "Path /memories/%2e%2e/x.md would escape /memories directory"),
        ("/etc/passwd", "Path must start with /memories, got: /etc/passwd"),
        ("/tmp/memories/x.md", "Path must start with /memories, got: /tmp/memories/x.md"),
        ("people/sarah-chen.md", "Path must start with /memories, got: people/sarah-chen.md"),
        ("/memoriesx/a.md", "Path must start with /memories, got: /memoriesx/a.md"),
        ("/memories/escape/secret.md",
         "Path /memories/escape/secret.md would escape /memories directory via symlink"),
        ("/memories/escape-file.md",
         "Path /memories/escape-file.md would escape /memories directory via symlink"),
    ],
)  # fmt: skip
def test_bad_paths_get_the_reference_wording(tool: VaultMemoryTool, path: str, answer: str) -> None:
    assert refused(tool, command="view", path=path) == answer


@pytest.mark.parametrize("hidden", [".memvault", ".memvault/config.toml", ".obsidian",
                                    ".obsidian/app.json", "people/.drafts/a.md"])  # fmt: skip
def test_memvault_and_obsidian_folders_are_not_memory(
    tool: VaultMemoryTool, vault: Vault, hidden: str
) -> None:
    (vault.root / ".obsidian").mkdir(exist_ok=True)
    (vault.root / ".obsidian/app.json").write_text("{}", encoding="utf-8")
    assert "is not memory" in refused(tool, command="view", path=f"/memories/{hidden}")
    assert "is not memory" in refused(
        tool, command="create", path=f"/memories/{hidden}/n.md", file_text="x"
    )
    assert "is not memory" in refused(tool, command="delete", path=f"/memories/{hidden}")
    assert (vault.root / ".obsidian/app.json").read_text(encoding="utf-8") == "{}"
    assert (vault.root / ".memvault").is_dir()


def test_a_file_that_is_not_markdown_is_not_a_note(tool: VaultMemoryTool, vault: Vault) -> None:
    why = refused(tool, command="create", path="/memories/notes.txt", file_text="hello")
    assert why.startswith("/memories/notes.txt is not a note")
    assert not (vault.root / "notes.txt").exists()
    (vault.root / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert "is not a note" in refused(tool, command="view", path="/memories/picture.png")
    assert "is not a note" in refused(tool, command="delete", path="/memories/picture.png")
    assert "is not a note" in refused(tool, command="rename", old_path="/memories/people/sarah-chen.md",
                                      new_path="/memories/people/sarah.txt")  # fmt: skip
    assert (vault.root / "picture.png").exists()


def test_a_name_over_255_bytes_is_refused(tool: VaultMemoryTool, vault: Vault) -> None:
    name = "é" * 130 + ".md"  # 263 bytes
    why = refused(tool, command="create", path=f"/memories/people/{name}", file_text="x")
    assert "too long" in why
    assert sorted(p.name for p in (vault.root / "people").iterdir()) == ["sarah-chen.md"]


@pytest.mark.parametrize("bad", ["a\x00b", "lone \ud800 surrogate", "\udfff"])
def test_nul_and_lone_surrogates_are_not_text(
    tool: VaultMemoryTool, vault: Vault, bad: str
) -> None:
    before = (vault.root / "people/sarah-chen.md").read_bytes()
    assert "is not text" in refused(tool, command="create", path="/memories/n.md", file_text=bad)
    assert "is not text" in refused(tool, command="str_replace",
                                    path="/memories/people/sarah-chen.md",
                                    old_str="Sarah", new_str=bad)  # fmt: skip
    assert "is not text" in refused(tool, command="insert", path="/memories/people/sarah-chen.md",
                                    insert_line=1, insert_text=bad)  # fmt: skip
    assert not (vault.root / "n.md").exists()
    assert (vault.root / "people/sarah-chen.md").read_bytes() == before


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("a\x00b\ud800", "a NUL character (at 1)"),
        ("ab\ud800c\x00", "a lone surrogate (U+D800 at 2)"),
        ("é" * 3 + "\udfff", "a lone surrogate (U+DFFF at 3)"),
        ("x" * 3_000_000 + "\x00", "a NUL character (at 3000000)"),  # looked at whole
    ],
)
def test_what_is_not_text_is_named_where_it_first_is(text: str, said: str) -> None:
    from memvault.core.memory_tool import Refusal, check_text

    with pytest.raises(Refusal) as refusal:
        check_text("file_text", text)
    assert str(refusal.value) == f"The `file_text` parameter holds {said}: it is not text"
    check_text("file_text", "é, 東京, 🙂 and \t tabs\n")  # text: nothing said


def test_str_replace_with_zero_or_two_matches_and_insert_out_of_range_change_nothing(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    path = "/memories/people/sarah-chen.md"
    before = (vault.root / "people/sarah-chen.md").read_bytes()
    assert refused(tool, command="str_replace", path=path, old_str="nowhere", new_str="x") == (
        f"No replacement was performed, old_str `nowhere` did not appear verbatim in {path}."
    )
    assert refused(tool, command="str_replace", path=path, old_str="Sarah", new_str="x").startswith(
        "No replacement was performed. Multiple occurrences of old_str `Sarah` in lines: "
    )
    lines = T.line_count(before.decode("utf-8"))
    for line in (-1, lines + 1, 10**9):
        assert refused(tool, command="insert", path=path, insert_line=line, insert_text="x") == (
            f"Invalid `insert_line` parameter: {line}. It should be within the range [0, {lines}]."
        )
    assert "whole number" in refused(tool, command="insert", path=path, insert_line="two",
                                     insert_text="x")  # fmt: skip
    assert (vault.root / "people/sarah-chen.md").read_bytes() == before


def test_text_past_max_note_bytes_is_refused(tool: VaultMemoryTool, vault: Vault) -> None:
    big = "word " * 5000  # 25,000 bytes; this vault's notes are at most 20,000
    why = refused(tool, command="create", path="/memories/big.md", file_text=big)
    assert "vault.max_note_bytes" in why and "20000" in why
    assert "vault.max_note_bytes" in refused(tool, command="str_replace",
                                             path="/memories/people/sarah-chen.md",
                                             old_str="title: Sarah Chen",
                                             new_str="title: " + big)  # fmt: skip
    assert not (vault.root / "big.md").exists()
    assert "word word" not in (vault.root / "people/sarah-chen.md").read_text(encoding="utf-8")


def test_a_memory_md_past_max_note_bytes_can_be_cut_down_but_not_grown(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    """An agent's own index grown past the cap (Claude Code's auto memory, a line a topic
    for months): ``memvault status`` says to shorten it, and every str_replace doing so was
    refused ("would be N bytes, more than this vault's notes may be"), MEMORY.md being the
    one file the agent may neither delete nor split: it was stuck. An edit that leaves a
    note smaller is taken; one that grows a note past the cap is still refused."""
    lines = "".join(f"- [Topic {i}](topic-{i}.md) — lesson {i} on caches\n" for i in range(600))
    text = memory_md(vault) + "\n## Claude Code\n" + lines
    (vault.root / "MEMORY.md").write_text(text, encoding="utf-8")
    assert len(text.encode("utf-8")) > 20_000  # this vault's cap
    vault.sync()
    cut = "- [Topic 7](topic-7.md) — lesson 7 on caches\n"
    answer = call(tool, command="str_replace", path="/memories/MEMORY.md", old_str=cut, new_str="")
    assert answer.splitlines()[-1] == (  # (it said "a write that makes it bigger than
        # 20 KB is refused" of a file of 32 KB, and to write on in /memories/MEMORY-2.md)
        "Note: /memories/MEMORY.md is 626 lines (33 KB), past the 20 KB a note may be "
        "(vault.max_note_bytes): only its first 20 KB is indexed, a write that makes it "
        "bigger is refused, and one that makes it smaller is taken: shorten it, moving "
        "what it holds into notes by topic."
    )
    assert cut not in memory_md(vault) and "- [Topic 8](topic-8.md)" in memory_md(vault)
    before = memory_md(vault)
    grow = "- [Topic 9](topic-9.md) — lesson 9 on caches\n"
    assert "vault.max_note_bytes" in refused(
        tool, command="str_replace", path="/memories/MEMORY.md", old_str=grow,
        new_str=grow + "- [More](more.md) — more\n",
    )  # fmt: skip
    assert "vault.max_note_bytes" in refused(
        tool, command="insert", path="/memories/MEMORY.md", insert_line=3, insert_text="x\n"
    )
    assert memory_md(vault) == before


def test_view_memories_counts_every_line_of_a_memory_md_past_max_note_bytes(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    """The index view's "(… N more lines: view /memories/MEMORY.md)" counted the lines of
    the part read (the first vault.max_note_bytes): a 50,000-line MEMORY.md said 23,898
    more. The agent deciding whether to shorten its index is told the true number."""
    lines = "".join(f"- [Topic {i}](topic-{i}.md) — lesson {i} on caches\n" for i in range(2000))
    text = memory_md(vault) + "\n## Claude Code\n" + lines
    (vault.root / "MEMORY.md").write_text(text, encoding="utf-8")
    assert len(text.encode("utf-8")) > 20_000  # this vault's cap
    answer = call(tool, command="view", path="/memories")
    shown = sum(1 for line in answer.splitlines() if line[:6].strip().isdigit())
    total = text.count("\n")
    assert f"(… {total - shown} more lines: view /memories/MEMORY.md)" in answer


def test_a_view_range_reads_the_lines_of_a_note_past_max_note_bytes(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    """A log grown past vault.max_note_bytes (a 23 MB one in the field test) was viewed
    as its first part only: `view_range` past it showed no line, only "(… cut at 20000
    bytes of 33890: vault.max_note_bytes)", so its newest entries could not be read at
    all, and the count of lines a long view gives was that of the part. A view reads the
    whole file, as the reference tool does, its 40,000-character bound kept."""
    lines = [f"entry {i} of the long log" for i in range(1, 1501)]
    write(vault.root, "logs/long.md", "\n".join(lines) + "\n")
    assert (vault.root / "logs/long.md").stat().st_size > 20_000  # this vault's cap
    answer = call(tool, command="view", path="/memories/logs/long.md", view_range=[1499, -1])
    assert answer.splitlines()[1:] == [
        "  1499\tentry 1499 of the long log",
        "  1500\tentry 1500 of the long log",
        "  1501\t",
    ]
    whole = call(tool, command="view", path="/memories/logs/long.md")
    assert "of 1501 shown" in whole.splitlines()[-1] and "cut at" not in whole


def test_malformed_commands_are_refused(tool: VaultMemoryTool) -> None:
    assert refused(tool, command="view") == (
        "Missing or invalid `path` parameter: it must be a string"
    )
    assert refused(tool, command="create", path="/memories/a.md").startswith(
        "Missing or invalid `file_text`"
    )
    with pytest.raises(MemoryToolError, match="Unknown command: format"):
        tool.vault.memory_tool({"command": "format", "path": "/memories"})


# -- Claude Code's files, the async tool, a vault opened by path ---------------------------------


def test_claude_code_topic_files_at_the_vault_root_are_kept_indexed_and_searchable(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    call(tool, command="create", path="/memories/debugging.md",
         file_text="# Debugging\n\n- flaky websocket tests: raise the ping timeout\n")  # fmt: skip
    write(vault.root, "api-conventions.md", "# API conventions\n\n- snake_case JSON keys\n")
    vault.sync()
    manifest = vault.engine.store.manifest()
    assert "debugging.md" in manifest and "api-conventions.md" in manifest
    assert vault.search("websocket ping timeout", k=1)[0].path == "debugging.md"
    assert vault.search("snake_case JSON keys", k=1)[0].path == "api-conventions.md"
    index = call(tool, command="view", path="/memories")
    assert "/memories/debugging.md" in index and "/memories/api-conventions.md" in index
    assert (vault.root / "debugging.md").read_text(encoding="utf-8").startswith("# Debugging")


def test_the_async_tool_runs_the_same_commands(vault: Vault) -> None:
    import asyncio

    tool = AsyncVaultMemoryTool(vault)

    async def session() -> tuple[Any, str]:
        created = await tool.call(
            {"command": "create", "path": "/memories/people/bo.md", "file_text": "# Bo\n"}
        )
        try:
            await tool.call({"command": "create", "path": "/memories/people/bo.md",
                             "file_text": "x"})  # fmt: skip
        except ToolError as exc:
            return created, str(exc)
        return created, ""

    created, error = asyncio.run(session())
    assert created == "File created successfully at: /memories/people/bo.md"
    assert error == "File /memories/people/bo.md already exists"
    assert "[[people/bo]]" in memory_md(vault)


def test_a_tool_given_a_path_opens_the_vault_syncs_it_and_lets_it_go_on_close(
    tmp_path: Path,
) -> None:
    from memvault.index.embedder import HashEmbedder

    root = make_vault(tmp_path)
    write(root, "people/ana.md", note("Ana", "Edited while nothing ran."))
    with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
        assert "[[people/ana]]" in call(tool, command="view", path="/memories")
        assert tool.vault.daemon is None
    with open_vault(root) as v:  # the lock was let go
        assert v.search("Edited while nothing ran", k=1)[0].path == "people/ana.md"
    tool = VaultMemoryTool(root)
    shutil.rmtree(root / ".memvault")  # gone after the tool was made: the model is told
    with pytest.raises(ToolError, match="not a memvault vault"):
        tool.call({"command": "view", "path": "/memories"})
    with pytest.raises(VaultNotFound, match="not a memvault vault"):  # the developer is
        VaultMemoryTool(root)


def test_two_tools_on_one_folder_in_one_process_take_turns(tmp_path: Path) -> None:
    from memvault.index.embedder import HashEmbedder

    root = make_vault(tmp_path)
    errors: list[str] = []

    def agent(name: str) -> None:
        with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
            for i in range(6):
                try:
                    tool.call({"command": "create", "path": f"/memories/{name}/n{i}.md",
                               "file_text": f"# {name} {i}\n\nNote {i} of agent {name}.\n"})  # fmt: skip
                    tool.call({"command": "view", "path": f"/memories/{name}"})
                except ToolError as exc:  # before: "already writing to this vault"
                    errors.append(str(exc))

    threads = [threading.Thread(target=agent, args=(n,)) for n in ("ada", "bo")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with open_vault(root) as v:
        memory = memory_md(v)
        assert "6 notes in ada/" in memory and "6 notes in bo/" in memory
        assert len(v.search("Note 3 of agent", k=20)) >= 2


def test_a_first_view_while_another_process_writes_reads_the_index_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.index.embedder import HashEmbedder

    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    monkeypatch.setenv("MEMVAULT_LOCK_WAIT", "30")  # a write would wait; a view does not
    # another process holds the writer lock (a long `memvault sync`, a migration)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl,sys,time; f=open(sys.argv[1],'a'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
         str(root / ".memvault" / "lock")], stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
            listing = tool.call({"command": "view", "path": "/memories"})
            assert "[[people/sarah-chen]]" in listing
            assert time.monotonic() - started < 10  # before: the 30 s wait, then an error
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()


def test_an_agent_appending_to_one_note_is_told_once_it_grows_long(
    tool: VaultMemoryTool, vault: Vault
) -> None:
    """The memory tool's answers said nothing while a note an agent appends to every
    turn grew, until a write was refused at vault.max_note_bytes. Past a quarter of it
    (5,000 of the fixture's 20,000 bytes) each write's answer says so, the answer as the
    reference gives it first (bench/RESULTS.md, "a year of an agent's writes")."""
    line = "- turn {}: the user prefers tabs over spaces, ticket PAY-{}"
    head = "# Notes\n" + "".join(line.format(i, i) + "\n" for i in range(80))  # ~4,700 bytes
    assert call(tool, command="create", path="/memories/notes.md", file_text=head) == (
        "File created successfully at: /memories/notes.md"
    )
    answers = [
        call(
            tool,
            command="insert",
            path="/memories/notes.md",
            insert_line=81 + i,
            insert_text=line.format(80 + i, 80 + i),
        )
        for i in range(8)
    ]
    plain = "The file /memories/notes.md has been edited."
    size = (vault.root / "notes.md").stat().st_size
    assert answers[0] == plain and size > 5_000
    assert answers[-1] == (
        plain + "\nNote: /memories/notes.md is now 89 lines (5 KB). A view shows it in parts, "
        "and a write that makes it bigger than 20 KB (vault.max_note_bytes) is refused: write "
        "what comes next in a new note (by topic, or by period: /memories/notes-2.md), and "
        "keep this one for what it holds."
    )
    replaced = call(
        tool, command="str_replace", path="/memories/notes.md", old_str="PAY-3\n", new_str="PAY-4\n"
    )
    assert replaced.endswith(answers[-1][len(plain) :])
    dump = call(tool, command="create", path="/memories/dump.md", file_text="x\n" * 3_000)
    assert dump.startswith("File created successfully at: /memories/dump.md\nNote: ")
    assert "/memories/dump.md is now 3,000 lines (6 KB)" in dump
