"""Field test of Claude's memory tool on a person's own folder of notes: folders named
in their own case (``People/``, ``Archive/``), names in any language, synced by git to
machines whose disks take names differing only in case for one file (macOS, Windows)."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import open_vault, write
from memvault.api import Vault
from memvault.core.wikilinks import LinkIndex, find_links
from memvault.integrations.anthropic import VaultMemoryTool
from test_memory_tool import call, refused


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    root = tmp_path / "notes"
    write(root, "People/Ana.md", "# Ana Pérez\n\nAna leads the data team.\n")
    write(root, "People/Иван.md", "# Иван Петров\n\nИван отвечает за инфраструктуру.\n")
    write(root, "Inbox.md", "# Inbox\n\n- call [[Ana]]\n- ask [[Иван]]\n")
    with open_vault(root) as v:
        v.sync()
        yield v


def by_hand(text: str) -> str:
    """``text`` with its controls, format characters, line separators and white space
    other than the space written
    ``<U+XXXX>``, as a refusal shows a name (spelt here apart from memvault's code)."""
    return "".join(
        f"<U+{ord(c):04X}>"
        if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") or (c.isspace() and c != " ")
        else c
        for c in text
    )


def unseen_in(text: str) -> list[str]:
    """The controls, format characters and line separators ``text`` holds raw."""
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def test_a_note_or_folder_named_again_in_another_case_is_not_made_beside_it(
    vault: Vault,
) -> None:
    """``create /memories/people/ana.md`` beside People/Ana.md made a second note, on ext4:
    one file to a Mac's or Windows' disk (a clone of the vault's git repository there
    holds one of the two), to Obsidian's ``[[Ana]]`` (now ambiguous in Inbox.md) and to
    MCP's memory_get (which reads People/Ana.md for people/ana.md); nor listed in
    MEMORY.md (its ``people/`` is no section's folder). The agent is told the spelling."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    said = refused(
        tool, command="create", path="/memories/people/ana.md", file_text="# Ana\n\nLisbon.\n"
    )
    assert said.startswith("File /memories/people/ana.md already exists")
    assert "/memories/People/Ana.md" in said
    said = refused(
        tool, command="create", path="/memories/People/иван.md", file_text="# Иван\n\nx\n"
    )
    assert said.startswith("File /memories/People/иван.md already exists")
    assert "/memories/People/Иван.md" in said
    write(vault.root, "People/иван.md", "# иван\n")  # twins already (ext4 holds both)
    said = refused(tool, command="create", path="/memories/People/ИВАН.md", file_text="# x\n")
    assert said.startswith("File /memories/People/ИВАН.md already exists as /memories/People/")
    (vault.root / "People" / "иван.md").unlink()
    said = refused(tool, command="create", path="/memories/people/bob.md", file_text="# Bob\n")
    assert "/memories/People/bob.md" in said  # the folder as it is spelt
    said = refused(tool, command="create", path="/memories/inbox.md", file_text="# x\n")
    assert "/memories/Inbox.md" in said
    assert files(vault.root) == before
    # the folder's own spelling works, and a name new in any case
    call(tool, command="create", path="/memories/People/bob.md", file_text="# Bob\n\nQA.\n")
    assert "/memories/People/bob.md" in call(tool, command="view", path="/memories/People")


def test_a_note_named_again_with_other_accents_spaces_or_hyphens_is_not_made_beside_it(
    vault: Vault,
) -> None:
    """An agent that forgot People/ana-pérez.md created ``People/Ana Pérez.md`` and
    ``People/ana perez.md`` beside it (NFD too): three notes for one person, the facts
    split between them, MEMORY.md listing three lines a person cannot tell apart. The
    create is refused naming the note there; a name with other words is made."""
    tool = VaultMemoryTool(vault)
    call(tool, command="create", path="/memories/People/ana-pérez.md", file_text="# Ana\n")
    before = files(vault.root)
    for name in ("Ana Pérez", "ana perez", "ANA_PEREZ", unicodedata.normalize("NFD", "Ana Pérez")):
        said = refused(
            tool, command="create", path=f"/memories/People/{name}.md", file_text="Lisbon.\n"
        )
        assert said.startswith(f"File /memories/People/{name}.md already exists as ")
        assert "/memories/People/ana-pérez.md" in said
    assert files(vault.root) == before
    call(tool, command="create", path="/memories/People/Ana Pérez 2.md", file_text="QA.\n")
    call(tool, command="create", path="/memories/People/ana-perez-notes.md", file_text="x\n")
    assert "People/ana-perez-notes.md" in files(vault.root)


_LONG = "Meeting notes on the quarterly planning session with the data and design teams"


def test_two_long_names_alike_in_their_first_80_characters_are_two_notes(vault: Vault) -> None:
    """``create /memories/People/<_LONG>, part 2.md`` beside ``…, part 1.md`` was refused
    as "already exists as …part 1.md (the same name spelt otherwise): view or edit it":
    the names' keys were their slugs', cut at 80 characters. The agent wrote part 2's
    notes into part 1, or gave up. Made now; a slug's cut of a long title (the name
    ``memvault migrate`` gives it) is still that title's name twin."""
    tool = VaultMemoryTool(vault)
    call(tool, command="create", path=f"/memories/People/{_LONG}, part 1.md", file_text="# 1\n")
    out = call(
        tool, command="create", path=f"/memories/People/{_LONG}, part 2.md", file_text="# 2\n"
    )
    assert out == f"File created successfully at: /memories/People/{_LONG}, part 2.md"
    call(
        tool,
        command="rename",
        old_path=f"/memories/People/{_LONG}, part 2.md",
        new_path=f"/memories/People/{_LONG}, part 3.md",
    )
    cut = "meeting-notes-on-the-quarterly-planning-session-with-the-data-and-design-teams"
    said = refused(tool, command="create", path=f"/memories/People/{cut}.md", file_text="# x\n")
    assert said.startswith(f"File /memories/People/{cut}.md already exists as "), said
    assert [f for f in files(vault.root) if "Meeting" in f] == [
        f"People/{_LONG}, part 1.md",
        f"People/{_LONG}, part 3.md",
    ]


def test_a_rename_onto_a_name_twin_is_refused_as_a_create_is_its_own_spelling_is_not(
    vault: Vault,
) -> None:
    """A create beside People/ana-pérez.md as "People/Ana Perez.md" is refused (the same
    name spelt otherwise); a rename of another note onto that name was let through, and
    made the two notes MEMORY.md lists as one person twice. Refused as the create is,
    naming the note there, nothing moved; a note renamed to another spelling of its own
    name (a person keeping both spellings too) is still renamed."""
    tool = VaultMemoryTool(vault)
    call(tool, command="create", path="/memories/People/ana-pérez.md", file_text="# Ana\n")
    call(tool, command="create", path="/memories/Inbox/ana perez.md", file_text="Lisbon.\n")
    before = files(vault.root)
    for new in ("/memories/People/Ana Perez.md", "/memories/People/ANA_PEREZ.md"):
        said = refused(
            tool, command="rename", old_path="/memories/Inbox/ana perez.md", new_path=new
        )
        assert said.startswith(f"The destination {new} already exists as "), said
        assert "/memories/People/ana-pérez.md" in said
    assert files(vault.root) == before
    call(
        tool,
        command="rename",
        old_path="/memories/People/ana-pérez.md",
        new_path=unicodedata.normalize("NFD", "/memories/People/Ana Pérez.md"),
    )
    write(vault.root, "People/ana-perez.md", "# Ana P.\n")  # a person's second spelling
    call(
        tool,
        command="rename",
        old_path="/memories/People/ana-perez.md",
        new_path="/memories/People/Ana-Perez.md",
    )
    assert "People/Ana-Perez.md" in files(vault.root)


def test_a_rename_onto_another_notes_name_in_another_case_is_refused_its_own_is_not(
    vault: Vault,
) -> None:
    tool = VaultMemoryTool(vault)
    call(tool, command="create", path="/memories/People/bob.md", file_text="# Bob\n\nQA.\n")
    said = refused(
        tool,
        command="rename",
        old_path="/memories/People/bob.md",
        new_path="/memories/people/ANA.md",
    )
    assert "/memories/People/Ana.md" in said
    said = refused(
        tool, command="rename", old_path="/memories/Inbox.md", new_path="/memories/people/inbox.md"
    )
    assert "/memories/People/inbox.md" in said  # not a people/ folder beside People/
    said = refused(
        tool,
        command="rename",
        old_path="/memories/People/bob.md",
        new_path="/memories/people/bob.md",
    )
    assert said.startswith(
        "Nothing was changed: /memories/people/bob.md is /memories/People/bob.md"
    )
    assert (vault.root / "People" / "bob.md").exists()
    assert not (vault.root / "people").exists()
    # a note's name in another case of its own: one file still, on any disk
    call(
        tool,
        command="rename",
        old_path="/memories/People/bob.md",
        new_path="/memories/People/Bob.md",
    )
    assert (vault.root / "People" / "Bob.md").exists()
    call(tool, command="rename", old_path="/memories/People", new_path="/memories/people")
    assert (vault.root / "people" / "Ana.md").exists()


def test_a_path_not_there_in_its_case_names_the_one_that_is(vault: Vault) -> None:
    """``view /memories/people/ana.md`` said only "does not exist" while People/Ana.md is
    the note (MCP memory_get reads it): the agent then creates it, or gives up."""
    tool = VaultMemoryTool(vault)
    for command in (
        {"command": "view", "path": "/memories/people/ana.md"},
        {
            "command": "str_replace",
            "path": "/memories/people/ana.md",
            "old_str": "a",
            "new_str": "b",
        },
        {
            "command": "insert",
            "path": "/memories/people/ana.md",
            "insert_line": 0,
            "insert_text": "x",
        },
        {"command": "delete", "path": "/memories/people/ana.md"},
        {"command": "rename", "old_path": "/memories/people/ana.md", "new_path": "/memories/x.md"},
    ):
        said = refused(tool, **command)
        assert "does not exist" in said, command
        assert "/memories/People/Ana.md" in said, command
    said = refused(tool, command="view", path="/memories/people")
    assert "/memories/People" in said
    # a path there in no case: the reference's words alone
    assert refused(tool, command="view", path="/memories/People/nobody.md") == (
        "The path /memories/People/nobody.md does not exist. Please provide a valid path."
    )


@pytest.mark.parametrize(
    "name",
    [
        "Meeting #3.md",
        "a|b.md",
        "[[z]].md",
        "x^y.md",
        "line\nbreak.md",
        "tab\there.md",
        "q: what?.md",
        "Q&A: auth.md",
        'say "hi".md',
        "why?.md",
        "a*b.md",
        "a<b>.md",
        "invoice\u202efdp.exe.md",  # a bidi override: shown as "invoiceexe.pdf.md"
        "a\u2067b.md",  # a right-to-left isolate
        "a\x85b.md",  # NEXT LINE, a C1 control (add refuses it in a title)
        "a\u2028b.md",  # LINE SEPARATOR: MEMORY.md listed the note only as text
    ],
)
def test_a_name_obsidian_cannot_link_or_windows_cannot_hold_is_not_made(
    vault: Vault, name: str
) -> None:
    """The agent's ``create /memories/Meeting #3.md`` was "File created successfully",
    while MEMORY.md could list it only as text (Obsidian cannot link a name holding
    # | ^ [ ]), a git clone on Windows cannot check out a name holding : * ? " < > |, and a
    name holding a line break broke the listings; ``q: what?.md`` was refused as "absolute
    paths are not allowed". memvault's own writes (add, MCP) never make such names."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    said = refused(tool, command="create", path=f"/memories/{name}", file_text="# x\n\ny\n")
    assert said.startswith(f"Nothing was written: /memories/{by_hand(name)}"), said
    assert "absolute" not in said
    assert unseen_in(said) == [], said  # (written out: a line break, an override raw broke it)
    said = refused(
        tool, command="create", path=f"/memories/{name[:-3]}/n.md", file_text="# x\n\ny\n"
    )
    assert said.startswith("Nothing was written"), said
    said = refused(
        tool, command="rename", old_path="/memories/Inbox.md", new_path=f"/memories/{name}"
    )
    assert said.startswith("Nothing was changed"), said
    assert files(vault.root) == before


@pytest.mark.parametrize("folder", ["people ", "people.", "people. ", "Archive  "])
def test_a_folder_named_with_a_trailing_space_or_dot_is_not_made(vault: Vault, folder: str) -> None:
    """A careless agent's ``create /memories/people /Sarah Chen.md`` made a second
    ``people`` folder beside the person's, listed as the same name (the index, Obsidian's
    file tree), with a second Sarah Chen a person could not tell from theirs; Windows
    drops a name's trailing spaces and dots, so a clone there holds one folder for both
    (git cannot check it out). Refused as the names Windows cannot hold are."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    path = f"/memories/{folder}/Sarah Chen.md"
    said = refused(tool, command="create", path=path, file_text="# Sarah\n\nnew\n")
    assert said.startswith(f"Nothing was written: {path} would make `{folder}`"), said
    assert "a name ending in" in said
    assert said.endswith(f"name it `{folder.rstrip(' .')}` (or another name not ending so)")
    said = refused(
        tool, command="rename", old_path="/memories/People", new_path=f"/memories/{folder}"
    )
    assert said.startswith(f"Nothing was changed: /memories/{folder} would make `"), said
    assert files(vault.root) == before


@pytest.mark.parametrize("folder", [" ", "...", ". .", "  "])
def test_a_folder_named_with_spaces_and_dots_only_is_refused_in_words_that_say_so(
    vault: Vault, folder: str
) -> None:
    """``create /memories/ /x.md`` was refused as "a name ending in a space: it reads as
    ``, and Windows drops it, making it that name; name it without": an empty name to
    read it as, and "without" what. It says the name is of spaces and dots only now."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    path = f"/memories/{folder}/x.md"
    said = refused(tool, command="create", path=path, file_text="# x\n")
    assert said.startswith(f"Nothing was written: {path} would make `{folder}`, a name of "), said
    assert "spaces and dots only" in said and "``" not in said, said
    assert files(vault.root) == before


@pytest.mark.parametrize(
    ("name", "kept"),
    [
        ("Plan .md", "Plan.md"),
        ("Plan  .md", "Plan.md"),
        (" Plan.md", "Plan.md"),
        ("Plan\u00a0.md", "Plan.md"),  # (a no-break space: str.strip and JS trim take it)
        ("People/Bea .md", "Bea.md"),
    ],
)
def test_a_note_named_with_a_space_before_md_is_not_made(
    vault: Vault, name: str, kept: str
) -> None:
    """``create /memories/Plan .md`` was "File created successfully", and a rename of
    Inbox.md to ``Plan .md`` re-targeted the links to it as ``[[Plan ]]``: Obsidian reads
    a link's name trimmed (as memvault's parser does), so ``[[Plan ]]``, MEMORY.md's line
    for the note too, led to no note (a rename broke the links it re-targeted). Refused
    as the names of new folders ending in a space are, naming the name to use; nothing
    written. (The SDK's reference makes any name the disk takes: no rule to follow.)"""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    inbox = (vault.root / "Inbox.md").read_text(encoding="utf-8")
    path = f"/memories/{name}"
    said = refused(tool, command="create", path=path, file_text="# Plan\n\nship it\n")
    leaf = name.rsplit("/", 1)[-1]
    assert said.startswith(
        f"Nothing was written: {by_hand(path)} would make `{by_hand(leaf)}`, a note name "
    ), said
    assert f"name it `{kept}`" in said and "Obsidian reads a link's name trimmed" in said
    said = refused(tool, command="rename", old_path="/memories/Inbox.md", new_path=path)
    assert said.startswith(f"Nothing was changed: {by_hand(path)} would make `{by_hand(leaf)}`"), (
        said
    )
    assert f"name it `{kept}`" in said
    assert files(vault.root) == before
    assert (vault.root / "Inbox.md").read_text(encoding="utf-8") == inbox


def test_a_note_named_of_spaces_only_is_refused_in_words_that_say_so(vault: Vault) -> None:
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    said = refused(tool, command="create", path="/memories/  .md", file_text="# x\n")
    assert said.startswith("Nothing was written: /memories/  .md would make `  .md`, a note "), said
    assert "spaces only" in said and "with a letter or a digit" in said
    assert files(vault.root) == before


def test_a_spaced_name_of_a_note_there_says_to_view_or_edit_it(vault: Vault) -> None:
    """``create /memories/People/Ana .md`` beside People/Ana.md: the name to use is
    taken, so the refusal says to view or edit that note, not to make it."""
    tool = VaultMemoryTool(vault)
    said = refused(tool, command="create", path="/memories/People/Ana .md", file_text="# A\n")
    assert "`Ana.md` is there: view or edit it, or give another name" in said, said
    assert "name it `Ana.md`" not in said


_NFD_ZOE = unicodedata.normalize("NFD", "Zoë")


@pytest.mark.parametrize(
    ("old", "new", "kept"),
    [
        ("Ana.md", " ana.md", "ana.md"),  # (its own name, in another case)
        ("Zoë.md", _NFD_ZOE + " .md", _NFD_ZOE + ".md"),  # (in NFD, as a Mac types it)
    ],
)
def test_a_rename_to_its_own_name_spaced_says_to_name_it_so(
    vault: Vault, old: str, new: str, kept: str
) -> None:
    """A rename of People/Ana.md to `` ana.md`` was told "`ana.md` is there: view or edit
    it, or give another name": the note there is the one renamed (its name in another
    case, or in another Unicode form, as a Mac's keyboard spells it), and ``ana.md`` is
    the name to give it. The refusal names it."""
    write(vault.root, "People/Zoë.md", "# Zoë\n")
    vault.sync()
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    said = refused(
        tool,
        command="rename",
        old_path=f"/memories/People/{old}",
        new_path=f"/memories/People/{new}",
    )
    assert "is there: view or edit it" not in said, said
    assert f"name it `{kept}`" in said, said
    assert files(vault.root) == before


def test_a_folder_named_as_a_note_with_a_space_is_not_refused_as_a_note(vault: Vault) -> None:
    """``create /memories/Drafts v2 .md/Plan.md`` was refused as "a note name ending in a
    space ... name it `Drafts v2.md`": ``Drafts v2 .md`` is a folder, which no link names
    by itself (links name the note, ``[[Plan]]``), and folders are refused only a last
    space or dot, as before."""
    tool = VaultMemoryTool(vault)
    out = call(tool, command="create", path="/memories/Drafts v2 .md/Plan.md", file_text="# P\n")
    assert out == "File created successfully at: /memories/Drafts v2 .md/Plan.md"
    assert (vault.root / "Drafts v2 .md" / "Plan.md").read_text(encoding="utf-8") == "# P\n"


def test_a_persons_note_with_a_space_before_md_is_read_edited_and_renamed(vault: Vault) -> None:
    """The refusal is of a new name: a person's ``Plan .md`` (made in a file manager,
    an importer that kept a title's trailing space) is viewed, edited, and renamed to a
    name its links can reach; a rename onto it is "already exists", as onto any file."""
    write(vault.root, "Plan .md", "# Plan\n\nWe ship Friday.\n")
    write(vault.root, "Drafts/Old .md", "# Old\n\nold\n")
    vault.sync()
    tool = VaultMemoryTool(vault)
    assert "Friday" in call(tool, command="view", path="/memories/Plan .md")
    call(
        tool,
        command="str_replace",
        path="/memories/Plan .md",
        old_str="Friday",
        new_str="Monday",
    )
    call(tool, command="insert", path="/memories/Plan .md", insert_line=3, insert_text="- QA\n")
    text = (vault.root / "Plan .md").read_text(encoding="utf-8")
    assert text == "# Plan\n\nWe ship Monday.\n- QA\n", text
    said = refused(tool, command="create", path="/memories/Plan .md", file_text="# x\n")
    assert said == "File /memories/Plan .md already exists", said
    said = refused(
        tool, command="rename", old_path="/memories/Inbox.md", new_path="/memories/Plan .md"
    )
    assert said.startswith("The destination /memories/Plan .md already exists"), said
    call(tool, command="rename", old_path="/memories/Plan .md", new_path="/memories/Plan.md")
    assert (vault.root / "Plan.md").read_text(encoding="utf-8") == text
    assert not (vault.root / "Plan .md").exists()
    call(tool, command="rename", old_path="/memories/Drafts/Old .md", new_path="/memories/Old.md")
    assert (vault.root / "Old.md").exists() and not (vault.root / "Drafts" / "Old .md").exists()


def test_a_persons_note_spaced_around_its_name_is_listed_by_a_link_that_leads_to_it(
    vault: Vault,
) -> None:
    """MEMORY.md listed a person's ``Plan .md`` as ``[[Plan ]]``, `` Lead.md`` as
    ``[[ Lead]]`` and ``Zed<U+FEFF>.md`` as ``[[Zed<U+FEFF>]]``: Obsidian reads a link's
    name trimmed (JavaScript's trim: U+FEFF too), so each led nowhere (``links check``
    said so of memvault's own lines). Each is listed by a link that leads to it: its
    ``.md`` kept, or its path from the root behind a ``/``."""
    write(vault.root, "Plan .md", "# Plan\n\nWe ship Friday.\n")
    write(vault.root, " Lead.md", "# Lead\n\nThe lead.\n")
    write(vault.root, "Zed\ufeff.md", "# Zed\n\nZed notes.\n")
    vault.sync()
    text = (vault.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "- [[Plan .md]] - We ship Friday." in text, text
    assert "- [[/ Lead.md]] - The lead." in text, text
    assert "- [[Zed\ufeff.md]] - Zed notes." in text, text
    files_now = [p.relative_to(vault.root).as_posix() for p in vault.root.rglob("*.md")]
    index = LinkIndex(files_now)
    led = {index.resolve(link.target, "MEMORY.md").path for link in find_links(text)}
    assert {"Plan .md", " Lead.md", "Zed\ufeff.md"} <= led, led


@pytest.mark.parametrize(
    ("name", "kept", "said"),
    [
        ("Plan\ufeff.md", "Plan.md", "a space (U+FEFF ZERO WIDTH NO-BREAK SPACE)"),
        ("\ufeffPlan.md", "Plan.md", "a space (U+FEFF ZERO WIDTH NO-BREAK SPACE)"),
        ("Plan\u200b.md", "Plan.md", "an invisible character (U+200B ZERO WIDTH SPACE)"),
        ("People/\u2060Bea.md", "Bea.md", "an invisible character (U+2060 WORD JOINER)"),
    ],
)
def test_a_note_named_with_an_invisible_character_at_an_end_is_not_made(
    vault: Vault, name: str, kept: str, said: str
) -> None:
    """``create /memories/Plan<U+FEFF>.md`` (a byte-order mark pasted with a title) was
    "File created successfully": a name a person reads as Plan.md, and MEMORY.md's
    ``[[Plan<U+FEFF>]]``, trimmed by Obsidian, led nowhere. Refused as a space there is,
    naming the character and the name to use; nothing written."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    path = f"/memories/{name}"
    leaf = name.rsplit("/", 1)[-1]
    answer = refused(tool, command="create", path=path, file_text="# Plan\n")
    assert answer.startswith(
        f"Nothing was written: {by_hand(path)} would make `{by_hand(leaf)}`, a note name "
    ), answer
    assert said in answer and f"name it `{kept}`" in answer, answer
    answer = refused(tool, command="rename", old_path="/memories/Inbox.md", new_path=path)
    assert answer.startswith(
        f"Nothing was changed: {by_hand(path)} would make `{by_hand(leaf)}`"
    ), answer
    assert files(vault.root) == before
    flag = "Trip \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f.md"
    call(tool, command="create", path=f"/memories/{flag}", file_text="# Trip\n")  # (a flag: seen)


@pytest.mark.parametrize(
    ("folder", "kept", "there"),
    [(" People", "People", True), (" Archive", "Archive", False), ("Arch\ufeff", "Arch", False)],
)
def test_a_new_folder_beginning_with_a_space_or_ending_in_an_invisible_one_is_not_made(
    vault: Vault, folder: str, kept: str, there: bool
) -> None:
    """``create /memories/ People/Bob.md`` made a second folder, `` People``, beside the
    person's People/: the same name in the index and Obsidian's file tree, and a note a
    person could not find where it seemed. Refused, naming the folder to give (and that it
    is there); a person's own folder so named stays usable."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    path = f"/memories/{folder}/Bob.md"
    said = refused(tool, command="create", path=path, file_text="# Bob\n")
    assert said.startswith(
        f"Nothing was written: {by_hand(path)} would make `{by_hand(folder)}`, a name "
    ), said
    assert f"it reads as `{kept}`" in said, said
    assert (f"`{kept}` is there: give it" in said) == there, said
    said = refused(tool, command="rename", old_path="/memories/Inbox.md", new_path=path)
    assert said.startswith(
        f"Nothing was changed: {by_hand(path)} would make `{by_hand(folder)}`"
    ), said
    assert files(vault.root) == before


def test_a_persons_folder_beginning_with_a_space_is_written_into_and_renamed(
    vault: Vault,
) -> None:
    write(vault.root, " Drafts/old.md", "# old\n\nold words\n")
    vault.sync()
    tool = VaultMemoryTool(vault)
    call(tool, command="create", path="/memories/ Drafts/new.md", file_text="# new\n")
    assert "/memories/ Drafts/new.md" in call(tool, command="view", path="/memories/ Drafts")
    call(tool, command="rename", old_path="/memories/ Drafts", new_path="/memories/Drafts")
    assert files(vault.root)[:3] == ["Drafts", "Drafts/new.md", "Drafts/old.md"]


def test_a_persons_folder_ending_in_a_space_or_dot_is_moved_into_and_renamed(
    vault: Vault,
) -> None:
    """The refusal is of a new folder so named: a person's (made on a Mac or Linux) is
    still a destination of a rename, and is renamed away from its name."""
    write(vault.root, "Drafts /old.md", "# old\n")
    write(vault.root, "Archive./older.md", "# older\n")
    vault.sync()
    tool = VaultMemoryTool(vault)
    call(
        tool, command="rename", old_path="/memories/Inbox.md", new_path="/memories/Drafts /Inbox.md"
    )
    assert (vault.root / "Drafts " / "Inbox.md").exists()
    call(tool, command="rename", old_path="/memories/Archive.", new_path="/memories/Archive")
    assert (vault.root / "Archive" / "older.md").exists()
    assert not (vault.root / "Archive.").exists()


def test_a_persons_note_so_named_is_still_read_and_edited(vault: Vault) -> None:
    write(vault.root, "Meeting #3.md", "# Meeting 3\n\nWe chose Kafka.\n")
    vault.sync()
    tool = VaultMemoryTool(vault)
    assert "Kafka" in call(tool, command="view", path="/memories/Meeting #3.md")
    call(
        tool,
        command="str_replace",
        path="/memories/Meeting #3.md",
        old_str="Kafka",
        new_str="NATS",
    )
    write(vault.root, "Notes #1/old.md", "# old\n")
    call(tool, command="create", path="/memories/Notes #1/new.md", file_text="# new\n")
    assert (vault.root / "Notes #1" / "new.md").exists()
    write(vault.root, "Drafts /old.md", "# old\n")  # (a person's, made on a Mac)
    call(tool, command="create", path="/memories/Drafts /new.md", file_text="# new\n")
    assert (vault.root / "Drafts " / "new.md").exists()


def test_a_folder_that_is_no_vault_is_the_developers_error_at_once_not_the_models(
    tmp_path: Path,
) -> None:
    """``VaultMemoryTool("memory")`` on a folder not (yet) a vault, a typo or a first day
    without ``memvault init``, was made without a word; then each command's ToolError
    ("no vault at ...: create one with `memvault init ...`") went to the model as the
    tool's result, which the tool runner never shows the developer: the agent just had
    no memory. The SDK's reference tool makes its folder when it is made."""
    from memvault.errors import VaultNotFound
    from memvault.integrations.anthropic import AsyncVaultMemoryTool

    for path in (tmp_path / "memory", tmp_path):  # not there; there, but no vault
        for kind in (VaultMemoryTool, AsyncVaultMemoryTool):
            with pytest.raises(VaultNotFound, match="memvault init"):
                kind(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    with VaultMemoryTool(tmp_path / "memory", create=True) as tool:  # made one, as asked
        assert "MEMORY.md" in call(tool, command="view", path="/memories")


def test_a_note_with_windows_line_ends_takes_the_lines_its_view_showed(vault: Vault) -> None:
    """A note saved with CRLF line ends (Notepad; a git clone on Windows, core.autocrlf):
    its view shows the lines, and a ``str_replace`` of two of them as the model copies
    them (``\\n`` between) was "did not appear verbatim" however often it was tried (the
    reference fails so too); an ``insert`` added a line ended LF alone among CRLF ones."""
    path = vault.root / "win.md"
    path.write_bytes(b"\xef\xbb\xbf# Windows note\r\n\r\nLine one.\r\nLine two.\r\nEnd.\r\n")
    vault.sync()
    tool = VaultMemoryTool(vault)
    shown = call(tool, command="view", path="/memories/win.md")
    assert "     3\tLine one." in shown and "     4\tLine two." in shown
    said = call(
        tool,
        command="str_replace",
        path="/memories/win.md",
        old_str="Line one.\nLine two.",
        new_str="Lines one\nand two.",
    )
    assert "     3\tLines one" in said
    call(tool, command="insert", path="/memories/win.md", insert_line=4, insert_text="Three.\n")
    assert path.read_bytes() == (
        b"\xef\xbb\xbf# Windows note\r\n\r\nLines one\r\nand two.\r\nThree.\r\nEnd.\r\n"
    )
    # twice there in CRLF: not unique, as verbatim
    path.write_bytes(b"a\r\nb\r\nx\r\na\r\nb\r\n")
    vault.sync()
    said = refused(
        tool, command="str_replace", path="/memories/win.md", old_str="a\nb", new_str="c"
    )
    assert "Multiple occurrences" in said and "in lines: 1, 4" in said
    assert path.read_bytes() == b"a\r\nb\r\nx\r\na\r\nb\r\n"


def test_a_name_twin_in_a_folder_a_mac_spelt_decomposed_is_refused(tmp_path: Path) -> None:
    """A folder a Mac wrote (``Cafe\u0301``, NFD) is the agent's ``Café``: the create
    went into it beside ``Ana Pérez.md`` as ``ana perez.md``, the twin unseen (the
    folder was looked for spelt in NFC, which ext4 does not have)."""
    root = tmp_path / "notes"
    write(root, "Cafe\u0301/Ana Pérez.md", "# Ana\n")
    write(root, "Inbox.md", "# Inbox\n")
    with open_vault(root) as v:
        v.sync()
        tool = VaultMemoryTool(v)
        before = files(root)
        said = refused(tool, command="create", path="/memories/Café/ana perez.md", file_text="x\n")
        assert said.startswith("File /memories/Café/ana perez.md already exists as "), said
        assert "Ana Pérez.md" in said
        said = refused(
            tool,
            command="rename",
            old_path="/memories/Inbox.md",
            new_path="/memories/Café/ana-perez.md",
        )
        assert said.startswith("The destination /memories/Café/ana-perez.md already exists as ")
        assert files(root) == before


def test_a_file_the_scan_takes_for_no_note_is_no_name_twin(tmp_path: Path) -> None:
    """A create beside a file the vault does not take for a note was refused as its
    "name twin", naming it: a hidden ``.ana.md`` or the ``._Ana Perez.md`` macOS leaves
    on a shared disk (which the agent cannot view: hidden paths are refused), an ignored
    template (where its facts would go unsearched); a name that is not UTF-8 in the
    folder made every create and rename there fail with "'utf-8' codec can't encode", a
    symlink in a loop with an OSError.
    A note of that name spelt otherwise is still a twin."""
    root = tmp_path / "notes"
    write(root, ".memvault/config.toml", '[vault]\nignore = ["People/_*"]\n')
    write(root, "People/Bob.md", "# Bob\n")
    write(root, "People/.ana.md", "a dotfile\n")
    write(root, "People/._Ana Perez.md", "\x00\x05\x16\x07 AppleDouble\n")
    write(root, "People/_carla.md", "# {{title}}\n\na template\n")
    write(root, "People/dora.sync-conflict-20261205-101010-ABCDEFG.md", "# Dora\n")
    with open(os.fsencode(root / "People") + b"/Eve\xff.md", "wb") as f:
        f.write(b"# Eve\n")
    (root / "People" / "Fay Lee.md").symlink_to("Fay Lee.md")  # a loop: OSError, raw
    with open_vault(root) as v:
        v.sync()
        tool = VaultMemoryTool(v)
        for name in ("ana.md", "Ana Perez.md", "carla.md", "eve.md", "fay-lee.md", "Bob Notes.md"):
            said = call(tool, command="create", path=f"/memories/People/{name}", file_text="x\n")
            assert said.startswith("File created successfully"), said
        call(tool, command="create", path="/memories/Inbox/dora.md", file_text="Dora.\n")
        call(
            tool,
            command="rename",
            old_path="/memories/Inbox/dora.md",
            new_path="/memories/People/dora.md",
        )
        said = refused(tool, command="create", path="/memories/People/BOB.md", file_text="x\n")
        assert "/memories/People/Bob.md" in said
        said = refused(tool, command="create", path="/memories/People/eve-.md", file_text="x\n")
        assert "already exists as /memories/People/eve.md" in said
    assert {"People/ana.md", "People/Ana Perez.md", "People/carla.md", "People/dora.md"} <= set(
        files(root)
    )


@pytest.mark.parametrize(
    ("path", "name"),
    [("CON.md", "CON"), ("aux/x.md", "aux"), ("nul.txt.md", "nul"), ("People/Lpt1.md", "Lpt1")],
)
def test_a_name_windows_keeps_for_a_device_is_not_made(vault: Vault, path: str, name: str) -> None:
    """``create /memories/CON.md`` (a careless agent's note on a "con" of a plan) was made:
    git on Windows cannot check out CON.md or aux/ ("invalid path"), so a clone of the
    person's git-synced vault there fails. Refused, naming the reserved name; names that
    only begin so are made, and a person's own CON.md stays editable."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    said = refused(tool, command="create", path=f"/memories/{path}", file_text="# x\n")
    assert said.startswith(f"Nothing was written: /memories/{path} would make `"), said
    assert f"a name Windows keeps for a device (`{name}`" in said, said
    said = refused(
        tool, command="rename", old_path="/memories/Inbox.md", new_path=f"/memories/{path}"
    )
    assert said.startswith(f"Nothing was changed: /memories/{path} would make `"), said
    assert files(vault.root) == before
    call(tool, command="create", path="/memories/Console.md", file_text="# c\n")
    call(tool, command="create", path="/memories/auxiliary/x.md", file_text="# x\n")
    write(vault.root, "CON.md", "# con\n\nold\n")
    vault.sync()
    call(tool, command="str_replace", path="/memories/CON.md", old_str="old", new_str="new")
    assert (vault.root / "CON.md").read_text(encoding="utf-8") == "# con\n\nnew\n"


@pytest.mark.parametrize(
    "path",
    ["CON.md", "nul.txt.md", "CON .md", " aux/x.md", "aux /x.md", "LPT1\u200b.md", "Zed\ufeff.md"],
)
def test_the_name_a_refusal_gives_to_use_is_made(vault: Vault, path: str) -> None:
    """An agent takes the name a refusal gives: ``CON.md`` was told `CON-notes` (no
    ``.md``: "not a note"), ``CON .md`` `CON.md` and `` aux/`` `aux` (each a name Windows
    keeps for a device: refused in turn). The name given is made."""
    tool = VaultMemoryTool(vault)
    said = refused(tool, command="create", path=f"/memories/{path}", file_text="# x\n")
    bad = re.search(r"would make `([^`]+)`", said)
    use = re.search(r"name it (?:otherwise \()?`([^`]+)`", said)
    assert bad is not None and use is not None, said
    parts = path.split("/")
    parts[[by_hand(part) for part in parts].index(bad.group(1))] = use.group(1)
    call(tool, command="create", path="/memories/" + "/".join(parts), file_text="# x\n")
    assert (vault.root / "/".join(parts)).read_text(encoding="utf-8") == "# x\n"
    assert "/".join(parts).endswith(".md")


def test_a_path_given_without_the_spaces_around_a_persons_name_says_which_is_there(
    vault: Vault,
) -> None:
    """An agent copying ``/memories/Plan .md`` from a listing as ``/memories/Plan.md`` (or
    whose tokens dropped a name's U+FEFF) was told only "does not exist", and made a
    second Plan.md. The answer names the note or folder there, as it names one there in
    another case."""
    write(vault.root, "Plan .md", "# Plan\n\nWe ship Friday.\n")
    write(vault.root, "Zed\ufeff.md", "# Zed\n\nzed\n")
    write(vault.root, " Drafts/y.md", "# y\n\ny\n")
    vault.sync()
    tool = VaultMemoryTool(vault)
    said = "is there: its name holds a space or an invisible character at its start or end"
    for given, there in [
        ("/memories/Plan.md", "/memories/Plan .md"),
        ("/memories/Zed.md", "/memories/Zed\ufeff.md"),
        ("/memories/Drafts/y.md", "/memories/ Drafts/y.md"),
    ]:
        answer = refused(tool, command="view", path=given)
        assert answer.startswith(f"The path {given} does not exist. "), answer
        assert f"({there} {said}" in answer, answer
    answer = refused(tool, command="delete", path="/memories/Drafts")
    assert answer.startswith("The path /memories/Drafts does not exist (/memories/ Drafts is"), (
        answer
    )
    answer = refused(
        tool, command="str_replace", path="/memories/Plan.md", old_str="a", new_str="b"
    )
    assert f"(/memories/Plan .md {said}" in answer, answer
    assert refused(tool, command="view", path="/memories/Nope.md") == (
        "The path /memories/Nope.md does not exist. Please provide a valid path."
    )


def test_a_notes_path_given_without_its_md_names_the_note(vault: Vault) -> None:
    """A first-day agent naming a note as a link names it (``/memories/People/Ana``) was
    told "does not exist", or, editing it, "not a note ... (name it with .md)": words
    about making a note, which would have made a second one. The answer names the note."""
    tool = VaultMemoryTool(vault)
    assert refused(tool, command="view", path="/memories/People/Ana") == (
        "The path /memories/People/Ana does not exist. Please provide a valid path. "
        "(/memories/People/Ana.md is there: a note's path ends in .md)"
    )
    said = refused(
        tool, command="str_replace", path="/memories/People/Ana", old_str="a", new_str="b"
    )
    assert said.endswith("; /memories/People/Ana.md is there"), said
    said = refused(tool, command="insert", path="/memories/Inbox", insert_line=0, insert_text="x")
    assert said.endswith("; /memories/Inbox.md is there"), said
    said = refused(tool, command="delete", path="/memories/Inbox")
    assert (
        said
        == "The path /memories/Inbox does not exist (/memories/Inbox.md is there: a note's path ends in .md)"
    )
