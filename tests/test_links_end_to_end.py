"""The fixture vault (tests/fixtures/obsidian-vault) through the whole engine: real files,
real renames on disk, a real sync (full reconcile and watcher-style batches), the CLI's
`links check` and `get --heading`.

Each rename scenario must leave every note exactly as the pure core says Obsidian would
(test_fixture_vault.py computes that without the engine): every link still working,
written in the vault's newLinkFormat, and not one byte changed outside link targets.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import open_vault
from memvault.core.wikilinks import find_links
from memvault.interfaces.cli import app
from memvault.vault.template import init_vault
from test_fixture_vault import PLANTED, SCENARIOS, load_vault, rename, skeleton

FIXTURE = Path(__file__).parent / "fixtures" / "obsidian-vault"
runner = CliRunner()

# What a person does on disk for each scenario of test_fixture_vault (files or folders).
ON_DISK: dict[str, list[tuple[str, str]]] = {
    "note": [("Obsidian Sync/Version history.md", "Obsidian Sync/Version log.md")],
    "note-to-folder": [("Functions.md", "Reference/Function list.md")],
    "folder": [("Obsidian Sync", "Sync")],
    "attachment": [("Attachments/Engelbart.jpg", "Attachments/people/Douglas Engelbart.jpg")],
    "attachment-folder": [("Attachments", "Media/2024")],
    "canvas-and-base": [
        ("Canvas/Board.canvas", "Canvas/Whiteboard.canvas"),
        ("Bases/Tasks.base", "Tasks.base"),
    ],
    "everything": [
        ("Obsidian Sync", "Sync"),
        ("Attachments", "Media"),
        ("Guides", "Guides/Old"),
        ("Sync limitations.md", "Reference/Limits.md"),
        ("Home.md", "Start here.md"),
    ],
}


def copy_fixture(tmp_path: Path, link_format: str | None = None) -> Path:
    root = tmp_path / "vault"
    # fresh mtimes (copy, not copy2): every file its own
    shutil.copytree(FIXTURE, root, copy_function=shutil.copy)
    if link_format is not None:
        (root / ".obsidian" / "app.json").write_text(
            json.dumps({"newLinkFormat": link_format}), encoding="utf-8"
        )
    return root


def move(root: Path, old: str, new: str) -> None:
    """``mv old new`` (a file or a folder; into a folder of its own too), mtimes kept."""
    src, dst = root / old, root / new
    if new.startswith(old + "/"):
        parked = root / f"{old}.moving"
        src.rename(parked)
        src = parked
    dst.parent.mkdir(parents=True, exist_ok=True)
    src.rename(dst)


def notes_on_disk(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        if not rel.startswith(".") and rel != "MEMORY.md":
            out[rel] = path.read_text(encoding="utf-8")
    return out


def links_check(root: Path) -> tuple[int, dict]:
    result = runner.invoke(app, ["links", "check", "--vault", str(root), "--json"])
    return result.exit_code, json.loads(result.output)


def planted_after(moves: dict[str, str]) -> set[tuple]:
    """The planted problems after a rename: a link with a missing anchor follows its
    note (its target changes), the anchor stays missing."""
    return {(moves.get(src, src), line, v) for src, line, _, v in PLANTED}


def found(data: dict) -> set[tuple]:
    return {(p["source"], p["line"], p["target"], p["verdict"]) for p in data["problems"]}


# -- the link check ----------------------------------------------------------------------------


def test_links_check_finds_exactly_the_planted_problems_with_column_and_text(
    tmp_path: Path,
) -> None:
    root = copy_fixture(tmp_path)
    with open_vault(root) as v:
        v.sync()
    code, data = links_check(root)
    assert code == 1
    assert found(data) == PLANTED
    assert data["counts"] == {"unresolved": 2, "ambiguous": 1, "anchor": 3, "alias": 1}
    assert data["count"] == 6  # the alias-only link is listed, not counted
    where = {(p["line"], p["column"], p["text"]) for p in data["problems"]}
    assert (6, 1, "[[Functions#hasTags]]") in where
    assert (11, 1, "[gone](Attachments/Gone.png)") in where
    text = runner.invoke(app, ["links", "check", "--vault", str(root)]).output
    assert "Broken links.md:6:1: [[Functions#hasTags]] leads to no heading in Functions.md" in text
    assert (
        "Broken links.md:7:1: [[Sync limitations#^no-such-block]] leads to no block in "
        "Sync limitations.md" in text
    )
    assert "2 unresolved, 1 ambiguous, 3 missing anchors (1 alias-only, not counted)" in text


def test_two_identical_broken_links_on_one_line_are_told_apart(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    (root / "Twice.md").write_text("See [[Nowhere]] and again [[Nowhere]].\n", encoding="utf-8")
    with open_vault(root) as v:
        v.sync()
    text = runner.invoke(app, ["links", "check", "--vault", str(root)]).output
    assert "Twice.md:1:5: [[Nowhere]] does not resolve" in text
    assert "Twice.md:1:27: [[Nowhere]] does not resolve" in text


def test_an_anchor_that_stops_matching_is_found_without_a_sync(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    with open_vault(root) as v:
        v.sync()
    # a person renames the heading the links point at; nothing synced since
    functions = root / "Functions.md"
    functions.write_text(
        functions.read_text(encoding="utf-8").replace("## `hasTag()`", "## `hasTags()`"),
        encoding="utf-8",
    )
    _, data = links_check(root)
    assert ("Home.md", 9, "Functions", "anchor") in found(data)
    # ... and the link that was broken is fixed by it
    assert ("Broken links.md", 6, "Functions", "anchor") not in found(data)


def test_status_counts_the_same_problems_as_the_check_without_reading_unchanged_notes(
    tmp_path: Path,
) -> None:
    """status counts an unchanged note's problems from its links rows (no read, no column):
    the counts must be the check's, before and after edits no sync has seen."""
    root = copy_fixture(tmp_path)
    with open_vault(root) as v:
        v.sync()

    def counts() -> tuple[dict[str, int], dict[str, int]]:
        with open_vault(root) as v:
            links = v.status()["links"]
        _, data = links_check(root)
        return links, data["counts"]

    def same(links: dict[str, int], check: dict[str, int]) -> None:
        assert links["unresolved"] == check["unresolved"]
        assert links["ambiguous"] == check["ambiguous"]
        assert links["missing_anchor"] == check["anchor"]
        assert links["alias_only"] == check["alias"]

    same(*counts())
    assert counts()[0]["unresolved"] == 2
    # unsynced: a note gains two broken links, a heading that a link names goes
    (root / "Twice.md").write_text("See [[Nowhere]] and again [[Nowhere]].\n", encoding="utf-8")
    functions = root / "Functions.md"
    functions.write_text(
        functions.read_text(encoding="utf-8").replace("## `hasTag()`", "## `hasTags()`"),
        encoding="utf-8",
    )
    links, check = counts()
    same(links, check)
    assert links["unresolved"] == 4


# -- get --heading -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("note", "heading", "first_line", "shown"),
    [
        ("Functions.md", "hasTag", "## `hasTag()`", "`hasTag()`"),
        ("Functions.md", "#`hasTag()`", "## `hasTag()`", "`hasTag()`"),
        (
            "Sync limitations.md",
            "How large can each remote vault be",
            "### How large can each remote vault be?",
            "How large can each remote vault be?",
        ),
        (
            "Sync limitations.md",
            "Limits#Storage#How large can each remote vault be",
            "### How large can each remote vault be?",
            "How large can each remote vault be?",
        ),
        ("Functions.md", "^HAS-TAG", "Returns whether a note has a tag. ^has-tag", "^has-tag"),
    ],
)
def test_get_heading_matches_as_obsidian_does(
    tmp_path: Path, note: str, heading: str, first_line: str, shown: str
) -> None:
    root = copy_fixture(tmp_path)
    init_vault(root)  # a vault, never indexed: get reads the file
    result = runner.invoke(app, ["get", note, "--heading", heading, "--vault", str(root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["text"].split("\n")[0] == first_line
    assert data["heading"] == shown


def test_get_heading_that_is_not_there_is_exit_4(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    init_vault(root)  # a vault, never indexed: get reads the file
    result = runner.invoke(
        app, ["get", "Functions.md", "--heading", "hasTags", "--vault", str(root)]
    )
    assert result.exit_code == 4
    assert "has no heading 'hasTags'" in result.output


# -- renames -----------------------------------------------------------------------------------


def expected_after(scenario: str, fmt: str) -> dict[str, str]:
    notes, files = load_vault()
    moves = SCENARIOS[scenario](files)
    new_notes, _ = rename(notes, files, moves, fmt)  # type: ignore[arg-type]
    return new_notes


def full_sync(root: Path, v, ops: list[tuple[str, str]]):
    return v.sync()


def batch_sync(root: Path, v, ops: list[tuple[str, str]]):
    # what the watcher hands over for a rename: both sides of each move event
    return v.sync([p for pair in ops for p in pair])


@pytest.mark.parametrize("how", [full_sync, batch_sync], ids=["full", "batch"])
@pytest.mark.parametrize("fmt", ["shortest", "relative", "absolute"])
@pytest.mark.parametrize("scenario", list(ON_DISK))
def test_renames_on_disk_relink_exactly_as_obsidian_would(
    tmp_path: Path, scenario: str, fmt: str, how: Callable
) -> None:
    root = copy_fixture(tmp_path, fmt)
    with open_vault(root) as v:
        v.sync()
        for old, new in ON_DISK[scenario]:
            move(root, old, new)
        report = how(root, v, ON_DISK[scenario])
        assert not [w for w in report.warnings if "left as it is" in w]
    expected = expected_after(scenario, fmt)
    on_disk = notes_on_disk(root)
    assert set(on_disk) == set(expected)
    for path, text in expected.items():
        assert on_disk[path] == text, path
    # the same problems as before, and only those; no byte changed outside link targets
    _, files = load_vault()
    moves = SCENARIOS[scenario](files)
    assert {(s, line, v) for s, line, _, v in found(links_check(root)[1])} == planted_after(moves)
    originals, _ = load_vault()
    for old, text in originals.items():
        new_text = on_disk[moves.get(old, old)]
        assert skeleton(new_text) == skeleton(text), old
        assert len(find_links(new_text)) == len(find_links(text))
    if scenario in ("attachment", "attachment-folder"):
        assert report.attachments_moved and report.relinked


def test_a_renamed_attachment_is_followed_in_memory_md_too(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    with open_vault(root) as v:
        v.sync()
        memory = root / "MEMORY.md"
        memory.write_text(
            memory.read_text(encoding="utf-8") + "\nThe photo: ![[Engelbart.jpg]]\n",
            encoding="utf-8",
        )
        v.sync()
        move(root, "Attachments/Engelbart.jpg", "Attachments/people/Douglas Engelbart.jpg")
        report = v.sync()
    assert report.memory_written
    assert "The photo: ![[Douglas Engelbart.jpg]]\n" in memory.read_text(encoding="utf-8")


def test_an_attachment_that_changed_as_well_as_moved_is_not_guessed(tmp_path: Path) -> None:
    """Found by size and mtime only: a new file with other contents is a new file, and
    links to the old name are left for `links check` to report, not re-pointed."""
    root = copy_fixture(tmp_path)
    with open_vault(root) as v:
        v.sync()
        move(root, "Attachments/Engelbart.jpg", "Attachments/Other.jpg")
        (root / "Attachments/Other.jpg").write_bytes(b"another picture")
        report = v.sync()
    assert report.attachments_moved == () and report.relinked == ()
    assert "![[Engelbart.jpg]]" in (root / "Home.md").read_text(encoding="utf-8")


def test_links_inside_canvas_files_are_not_rewritten(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    canvas = root / "Canvas/Board.canvas"
    before = canvas.read_bytes()
    with open_vault(root) as v:
        v.sync()
        move(root, "Home.md", "Start here.md")
        move(root, "Canvas/Board.canvas", "Canvas/Whiteboard.canvas")
        v.sync()
    assert (root / "Canvas/Whiteboard.canvas").read_bytes() == before


def test_link_format_setting_is_read_afresh(tmp_path: Path) -> None:
    """Change newLinkFormat in Obsidian between two renames: the second follows it."""
    root = copy_fixture(tmp_path, "shortest")
    with open_vault(root) as v:
        v.sync()
        move(root, "Functions.md", "Reference/Function list.md")
        v.sync()
        assert "[[Function list]], " in (root / "Home.md").read_text(encoding="utf-8")
        (root / ".obsidian" / "app.json").write_text(
            '{"newLinkFormat": "absolute"}', encoding="utf-8"
        )
        move(root, "Reference/Function list.md", "Reference/Functions A-Z.md")
        v.sync()
    assert "[[Reference/Functions A-Z]], " in (root / "Home.md").read_text(encoding="utf-8")


def test_a_link_no_wikilink_can_hold_is_a_sync_warning(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    with open_vault(root) as v:
        v.sync()
        move(root, "Functions.md", "Functions #1.md")
        report = v.sync()
    assert any(
        w.startswith("Home.md: a link to 'Functions' was left as it is") for w in report.warnings
    ), report.warnings
    assert "[[Functions]]" in (root / "Home.md").read_text(encoding="utf-8")


def test_an_attachment_moved_while_the_index_was_closed_is_followed(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path)
    with open_vault(root) as v:
        v.sync()
    os.makedirs(root / "Media")
    move(root, "Attachments/video/Video clip.mp4", "Media/Clip.mp4")
    with open_vault(root) as v:
        report = v.sync()
    assert report.attachments_moved == (("Attachments/video/Video clip.mp4", "Media/Clip.mp4"),)
    assert "![[Clip.mp4]]" in (root / "Home.md").read_text(encoding="utf-8")


# -- the daemon's watcher ----------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")
def test_the_watcher_follows_an_attachment_renamed_and_a_folder_of_them_moved(
    tmp_path: Path,
) -> None:
    """Real inotify events for files that are not notes: each rename re-targets links."""
    from test_watcher import eventually, start_watching

    w = start_watching(tmp_path)
    try:
        (w.root / "assets").mkdir()
        (w.root / "assets" / "diagram.png").write_bytes(b"\x89PNG fake")
        note = w.root / "projects" / "ai-assistant-refactor.md"
        note.write_text(
            note.read_text(encoding="utf-8")
            + "\n![[diagram.png]] and ![plan](../assets/diagram.png)\n",
            encoding="utf-8",
        )
        w.settle()
        os.rename(w.root / "assets" / "diagram.png", w.root / "assets" / "architecture.png")
        # newLinkFormat unset: shortest, the name alone (no other file has it)
        eventually(
            lambda: (
                "![[architecture.png]] and ![plan](architecture.png)"
                in note.read_text(encoding="utf-8")
            ),
            what="the renamed image followed",
        )
        w.settle()
        with note.open("a", encoding="utf-8") as fh:
            fh.write("[[assets/architecture.png|by its path]]\n")
        w.settle()
        os.rename(w.root / "assets", w.root / "media")
        eventually(
            lambda: "[[architecture.png|by its path]]" in note.read_text(encoding="utf-8"),
            what="the moved folder followed",
        )
        # the links that still lead to the picture are left as they are
        assert "![[architecture.png]] and ![plan](architecture.png)" in note.read_text(
            encoding="utf-8"
        )
    finally:
        w.watcher.stop()
        w.vault.close()


@pytest.mark.parametrize("how", ["renamed", "deleted"])
def test_a_link_to_a_root_note_named_with_a_leading_space_follows_it(
    tmp_path: Path, how: str
) -> None:
    """`` Lead.md`` at the vault root is linked ``[[/ Lead.md]]`` (the form memvault
    writes: MEMORY.md's line, a hit's address, a relinked link; ``trim_proof``). Its
    name as a file was taken trimmed, ``lead``, the link's `` lead``: renamed, the link
    was not rewritten; deleted, its stored verdict stayed ``resolved`` into the gone
    note and ``links check`` said nothing of a link leading nowhere."""
    from memvault.core.wikilinks import LinkIndex

    root = tmp_path / "vault"
    init_vault(root)
    (root / " Lead.md").write_text("# Lead\n\nLeads the launch.\n", encoding="utf-8")
    (root / "a.md").write_text("# A\n\nAsk [[/ Lead.md|the lead]].\n", encoding="utf-8")
    with open_vault(root) as v:
        v.sync()
        assert not [p for p in v.links_check() if p.source == "a.md"]
        if how == "renamed":
            os.rename(root / " Lead.md", root / "Leader.md")
        else:
            (root / " Lead.md").unlink()
        v.sync()
        text = (root / "a.md").read_text(encoding="utf-8")
        problems = [(p.source, p.target) for p in v.links_check() if p.source == "a.md"]
        kept = [(r.target, r.verdict, r.resolved) for r in v.engine.store.links("a.md")]
    (link,) = find_links(text)
    if how == "renamed":
        assert text == "# A\n\nAsk [[Leader.md|the lead]].\n"  # (its .md kept, as written)
        assert LinkIndex(["Leader.md", "a.md"]).resolve(link.target, "a.md").path == "Leader.md"
        assert not problems and kept == [("Leader.md", "resolved", "Leader.md")]
    else:
        assert problems == [("a.md", "/ Lead.md")]
        assert kept == [("/ Lead.md", "unresolved", None)]
