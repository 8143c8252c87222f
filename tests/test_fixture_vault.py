"""The fixture vault (tests/fixtures/obsidian-vault) through the pure core: the link check
finds exactly the planted problems, and renames of notes, attachments and folders keep
every link working, in each newLinkFormat, changing no byte outside link targets.

tests/test_links_end_to_end.py runs the same vault and renames through the engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.core.linkcheck import link_format, link_problem
from memvault.core.notes import Note, parse_note
from memvault.core.relink import relink_note
from memvault.core.wikilinks import LinkFormat, LinkIndex, find_links

VAULT = Path(__file__).parent / "fixtures" / "obsidian-vault"


def load_vault() -> tuple[dict[str, str], list[str]]:
    notes: dict[str, str] = {}
    files: list[str] = []
    for path in sorted(VAULT.rglob("*")):
        rel = path.relative_to(VAULT).as_posix()
        if not path.is_file() or rel.startswith(".obsidian/"):
            continue
        files.append(rel)
        if rel.endswith(".md"):
            notes[rel] = path.read_text(encoding="utf-8")
    return notes, files


def problems(notes: dict[str, str], files: list[str]) -> set[tuple]:
    parsed: dict[str, Note] = {p: parse_note(p, t) for p, t in notes.items()}
    index = LinkIndex(files, {p: n.aliases for p, n in parsed.items() if n.aliases})
    found = set()
    for path, note in parsed.items():
        for link in note.links:
            problem = link_problem(
                path,
                link.line,
                link.target,
                link.anchor,
                index,
                lambda p: parsed[p].outline if p in parsed else None,
            )
            if problem:
                found.add((problem.source, problem.line, problem.target, problem.verdict))
    return found


PLANTED = {
    ("Broken links.md", 5, "Nowhere", "unresolved"),
    ("Broken links.md", 6, "Functions", "anchor"),
    ("Broken links.md", 7, "Sync limitations", "anchor"),
    ("Broken links.md", 8, "Sync limitations", "anchor"),
    ("Broken links.md", 9, "Security and privacy", "ambiguous"),
    ("Broken links.md", 10, "Start", "alias"),
    ("Broken links.md", 11, "Attachments/Gone.png", "unresolved"),
}


def test_the_link_check_finds_exactly_the_planted_problems() -> None:
    notes, files = load_vault()
    assert problems(notes, files) == PLANTED


def test_the_vault_uses_obsidians_default_link_format() -> None:
    assert link_format((VAULT / ".obsidian" / "app.json").read_text()) == "shortest"


def test_links_in_code_math_and_html_comments_are_not_read() -> None:
    notes, _ = load_vault()
    targets = [link.target for link in find_links(notes["Guides/Code and comments.md"])]
    assert targets == ["Functions", "Sync limitations"]


def rename(
    notes: dict[str, str], files: list[str], moves: dict[str, str], fmt: LinkFormat
) -> tuple[dict[str, str], list[str]]:
    """What a rename does to the vault: files move, every note is relinked."""
    parsed = {p: parse_note(p, t) for p, t in notes.items()}
    aliases = {p: n.aliases for p, n in parsed.items() if n.aliases}
    before = LinkIndex(files, aliases)
    after_files = [moves.get(p, p) for p in files]
    after = LinkIndex(after_files, {moves.get(p, p): a for p, a in aliases.items()})
    out = {}
    for path, text in notes.items():
        result = relink_note(text, path, moves.get(path, path), before, after, moves, fmt)
        assert result.skipped == ()
        out[moves.get(path, path)] = result.text
    return out, after_files


def skeleton(text: str) -> list[str]:
    pieces, pos = [], 0
    for link in find_links(text):
        pieces.append(text[pos : link.target_start])
        pos = link.target_end
    return [*pieces, text[pos:]]


def folder(old: str, new: str, files: list[str]) -> dict[str, str]:
    return {p: new + p[len(old) :] for p in files if p.startswith(old + "/")}


SCENARIOS = {
    "note": lambda files: {"Obsidian Sync/Version history.md": "Obsidian Sync/Version log.md"},
    "note-to-folder": lambda files: {"Functions.md": "Reference/Function list.md"},
    "folder": lambda files: folder("Obsidian Sync", "Sync", files),
    "attachment": lambda files: {
        "Attachments/Engelbart.jpg": "Attachments/people/Douglas Engelbart.jpg"
    },
    "attachment-folder": lambda files: folder("Attachments", "Media/2024", files),
    "canvas-and-base": lambda files: {
        "Canvas/Board.canvas": "Canvas/Whiteboard.canvas",
        "Bases/Tasks.base": "Tasks.base",
    },
    "everything": lambda files: {
        **folder("Obsidian Sync", "Sync", files),
        **folder("Attachments", "Media", files),
        **folder("Guides", "Guides/Old", files),
        "Sync limitations.md": "Reference/Limits.md",
        "Home.md": "Start here.md",
    },
}


@pytest.mark.parametrize("fmt", ["shortest", "relative", "absolute"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_renames_keep_every_link_working_and_every_other_byte(scenario: str, fmt: str) -> None:
    notes, files = load_vault()
    moves = SCENARIOS[scenario](files)
    assert moves and all(old in files for old in moves)
    new_notes, new_files = rename(notes, files, moves, fmt)  # type: ignore[arg-type]
    # the same problems, and only those: the planted ones (a link with a missing anchor
    # follows its note; the anchor stays missing)
    where = {old: new for old, new in moves.items()}
    expected = {(where.get(src, src), line, v) for src, line, _, v in PLANTED}
    assert {(src, line, v) for src, line, _, v in problems(new_notes, new_files)} == expected
    # links that led nowhere, or to several notes, are left exactly as written
    broken = "Broken links.md"
    old_lines, new_lines = (
        notes[broken].split("\n"),
        new_notes[where.get(broken, broken)].split("\n"),
    )
    assert [new_lines[i - 1] for i in (5, 9, 10, 11)] == [old_lines[i - 1] for i in (5, 9, 10, 11)]
    for path, text in notes.items():
        new_text = new_notes[where.get(path, path)]
        assert skeleton(new_text) == skeleton(text), path
        assert len(find_links(new_text)) == len(find_links(text)), path
    # nothing read in code, math or HTML comments was touched
    code = "Guides/Code and comments.md"
    old_code = notes[code].split("\n")[3:]
    assert new_notes[where.get(code, code)].split("\n")[3:] == old_code


def relinked(scenario: str, fmt: str, path: str) -> str:
    notes, files = load_vault()
    moves = SCENARIOS[scenario](files)
    new_notes, _ = rename(notes, files, moves, fmt)  # type: ignore[arg-type]
    return new_notes[moves.get(path, path)]


@pytest.mark.parametrize(
    ("fmt", "line"),
    [
        (
            "shortest",
            "If the remote vault is [[Sync/Security and privacy#Encryption|end-to-end encrypted]]",
        ),
        (
            "relative",
            "If the remote vault is [[Security and privacy#Encryption|end-to-end encrypted]]",
        ),
        (
            "absolute",
            "If the remote vault is [[Sync/Security and privacy#Encryption|end-to-end encrypted]]",
        ),
    ],
)
def test_a_folder_rename_writes_paths_obsidian_would(fmt: str, line: str) -> None:
    text = relinked("folder", fmt, "Obsidian Sync/Collaborate on a shared vault.md")
    assert line in text
    # [[Version history]] still leads to the same note after the move: kept as written
    assert "using [[Version history]]." in text


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("shortest", "[history](<Version history.md>)"),
        ("relative", "[history](<../Sync/Version history.md>)"),
        ("absolute", "[history](<Sync/Version history.md>)"),
    ],
)
def test_angle_bracket_links_keep_their_literal_spaces(fmt: str, expected: str) -> None:
    text = relinked("folder", fmt, "Guides/Markdown links.md")
    assert expected in text
    assert "%20" not in text.split("\n")[2]


def test_attachment_renames_follow_every_embed_form() -> None:
    home = relinked("attachment", "shortest", "Home.md")
    assert (
        "![[Douglas Engelbart.jpg]] ![[Douglas Engelbart.jpg|100x145]] "
        "![[Douglas Engelbart.jpg#outline]]" in home
    )
    assert "![Engelbart](Douglas%20Engelbart.jpg)" in home
    guide = relinked("attachment", "relative", "Guides/Markdown links.md")
    assert (
        '![Engelbart](../Attachments/people/Douglas%20Engelbart.jpg "Douglas Engelbart")' in guide
    )


def test_a_note_moved_into_a_folder_keeps_its_links_short() -> None:
    home = relinked("note-to-folder", "shortest", "Home.md")
    assert (
        "[[Function list]], [[Function list|the function list]], [[Function list#hasTag]]" in home
    )
    code = relinked("note-to-folder", "shortest", "Guides/Code and comments.md")
    assert "reads: [[Function list]] and %% [[Sync limitations]] %%." in code
    assert code.count("[[Functions]]") == 8  # the eight in code, math and comments
