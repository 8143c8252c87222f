"""Unresolved git merge conflicts in a note: reported, never taken for its summary.

A field test: a merge left `<<<<<<< HEAD` in a note, the person committed it, and
MEMORY.md listed the note as "- [[topic]] - <<<<<<< HEAD Master side line" while
`status` said nothing. Now the note gets a warning naming the line (kept as a
problem until the file is saved without the markers), its summary comes from its
first real line, and memvault leaves the note's bytes as they are.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import new_vault, open_vault, write
from memvault.core.conflicts import find_conflicts, left_as_git_wrote_it
from memvault.core.folder_parse import parse_outside_listing
from memvault.core.notes import parse_note
from memvault.interfaces.cli import app

runner = CliRunner()

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_EDITOR": "true",
}

CONFLICT = "<<<<<<< HEAD\nMaster side line\n=======\nOther side line\n>>>>>>> other\n"
ONE = "unresolved merge conflict (git) at line {}: resolve it and save"


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    assert not check or done.returncode == 0, (args, done.stdout, done.stderr)
    return done


# -- what parse_note makes of a note -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "summary", "line"),
    [
        (CONFLICT, "Master side line", 1),
        (CONFLICT.replace("\n", "\r\n"), "Master side line", 1),  # saved on Windows
        # diff3 / zdiff3: the base section is what both sides changed away from
        (
            "<<<<<<< HEAD\n||||||| merged common ancestors\nOld line\n=======\n"
            "Their line\n>>>>>>> other\n",
            "Their line",
            1,
        ),
        (
            "# Topic\n\nIntro sentence.\n<<<<<<< ours\nA\n=======\nB\n>>>>>>> theirs\n",
            "Intro sentence.",
            4,
        ),
        ("<<<<<<<\n=======\nOnly theirs\n>>>>>>>\n", "Only theirs", 1),  # no labels
    ],
)
def test_a_conflict_is_a_warning_and_no_marker_line_is_the_summary(
    text: str, summary: str, line: int
) -> None:
    note = parse_note("topic.md", text)
    assert note.summary == summary
    assert note.warnings == (ONE.format(line),)


@pytest.mark.parametrize(
    "text",
    [
        # a document that shows git's markers in a fenced code block
        "How a conflict looks:\n\n```\n" + CONFLICT + "```\n",
        "How a conflict looks:\n\n~~~~ text\n" + CONFLICT + "~~~~\n",
        # a Setext heading underlined with seven '='
        "Big title\n=======\n\nText.\n",
        # a nested quote seven deep, a line of '<' in prose, markers out of order
        ">>>>>>> deep quote\n",
        "<<<<<<< an arrow of sorts\n\nText.\n",
        "Text\n>>>>>>> other\n=======\n<<<<<<< HEAD\n",
        "<<<<<<< HEAD\nA\n>>>>>>> other\n=======\n",
        # eight markers are not git's (unless conflict-marker-size says so)
        "<<<<<<<< HEAD\nA\n========\nB\n>>>>>>>> other\n",
        "    <<<<<<< HEAD\n    A\n    =======\n    B\n    >>>>>>> other\n",  # indented
    ],
)
def test_what_only_looks_like_a_conflict_is_not_one(text: str) -> None:
    assert find_conflicts(text) == ()
    assert not parse_note("doc.md", text).warnings
    # and a real conflict after it is found where it starts, and only it
    real = text + "\n" + CONFLICT
    assert parse_note("doc.md", real).warnings == (ONE.format(text.count("\n") + 2),)


def test_every_conflict_is_counted_and_the_warning_names_where_they_start() -> None:
    text = "Intro.\n\n" + "".join(f"Part {i}\n\n{CONFLICT}\n" for i in range(7))
    starts = [c.start for c in find_conflicts(text)]
    assert starts == [5 + 8 * i for i in range(7)]
    (warning,) = parse_note("t.md", text).warnings
    assert warning == (
        "7 unresolved merge conflicts (git) at lines 5, 13, 21, 29, 37 and 2 more: "
        "resolve them and save"
    )


def test_a_fence_one_side_opens_hides_no_marker_after_it() -> None:
    # the sides are alternatives: ours opens a fence that theirs does not have
    text = "<<<<<<< HEAD\n```python\nx = 1\n=======\ny = 2\n>>>>>>> other\nAfter.\n"
    (conflict,) = find_conflicts(text)
    assert (conflict.start, conflict.base, conflict.separator, conflict.end) == (1, None, 4, 6)
    assert parse_note("t.md", text).warnings == (ONE.format(1),)
    # and what follows the conflict is read as it was before it: a later example in a
    # fenced block is still an example
    later = text + "\n```\n" + CONFLICT + "```\n"
    assert parse_note("t.md", later).warnings == (ONE.format(1),)


def test_a_conflict_in_the_frontmatter_ignores_it_and_no_side_is_the_summary() -> None:
    text = (
        "---\n<<<<<<< HEAD\nsummary: Ours\n=======\nsummary: Theirs\n>>>>>>> other\n---\n"
        "# Topic\n\nThe body line.\n"
    )
    note = parse_note("t.md", text)
    assert note.frontmatter == {}
    assert note.summary == "The body line." and note.title == "Topic"
    assert note.warnings == (
        "frontmatter ignored: it holds an unresolved merge conflict",
        ONE.format(2),
    )
    # a quoted value over several lines: YAML reads it, markers and all
    quoted = '---\nsummary: "one\n<<<<<<< HEAD\ntwo\n=======\nthree\n>>>>>>> o\nfour"\n---\nBody.\n'
    note = parse_note("q.md", quoted)
    assert note.summary == "Body." and "<<<<<<<" not in json.dumps(note.frontmatter)


def test_the_title_is_never_the_base_sections_heading() -> None:
    # ours deleted the heading, theirs changed it: the base's is neither side's
    text = "<<<<<<< HEAD\n||||||| base\n# Old title\n=======\n# New title\n>>>>>>> other\n"
    assert parse_note("t.md", text).title == "New title"


def test_a_folder_notes_conflict_is_found_in_its_listing_at_the_files_line() -> None:
    text = (
        "---\ntype: folder-note\n---\n# Decisions\n\n2 notes\n\n"
        "<!-- memvault:begin folder -->\n"  # line 8
        "<<<<<<< HEAD\n- [[decisions/a]] - A\n=======\n- [[decisions/b]] - B\n>>>>>>> other\n"
        "<!-- memvault:end folder -->\n"
        "A person's line.\n"
    )
    note = parse_outside_listing("decisions/decisions.md", text)
    assert note.warnings == (ONE.format(9),)
    after = text + CONFLICT  # and one after the listing: its line is the file's
    assert parse_outside_listing("decisions/decisions.md", after).warnings == (
        "2 unresolved merge conflicts (git) at lines 9, 16: resolve them and save",
    )


# -- the field test, with real git ---------------------------------------------------------


def _committed_conflict(tmp_path: Path) -> Path:
    """The field test's vault: a merge whose conflict in topic.md was committed as is."""
    root = new_vault(tmp_path, "v4")
    git(root, "init", "-q", "-b", "master")
    write(root, "topic.md", "Original topic line\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    git(root, "checkout", "-qb", "other")
    write(root, "topic.md", "Other side line\n")
    git(root, "commit", "-qam", "other")
    git(root, "checkout", "-q", "master")
    write(root, "topic.md", "Master side line\n")
    git(root, "commit", "-qam", "master")
    assert git(root, "merge", "other", "-m", "m", check=False).returncode != 0
    git(root, "add", "topic.md")
    git(root, "commit", "-qm", "markers left")
    return root


def test_committed_markers_are_a_problem_and_never_reach_memory_md(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = _committed_conflict(tmp_path)
    before = (root / "topic.md").read_bytes()
    assert before.startswith(b"<<<<<<< HEAD\n")

    synced = runner.invoke(app, ["sync", "--vault", str(root)])
    assert synced.exit_code == 0, synced.output
    assert f"topic.md: {ONE.format(1)}" in synced.output  # sync prints it
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "- [[topic]] - Master side line\n" in memory
    assert "<<<<<<<" not in memory and ">>>>>>>" not in memory

    status = runner.invoke(app, ["status", "--vault", str(root), "--json"])
    problems = json.loads(status.stdout)["problems"]
    assert {"path": "topic.md", "reason": ONE.format(1), "kind": "note"} in problems
    assert (root / "topic.md").read_bytes() == before  # only reported, never edited

    # search indexes the note as it is
    with open_vault(root) as vault:
        hits = vault.search("Other side line", k=3)
        assert hits and hits[0].path == "topic.md"

    # resolved and saved: the problem goes, the summary follows the file
    write(root, "topic.md", "Both sides, merged by hand\n")
    synced = runner.invoke(app, ["sync", "--vault", str(root)])
    assert synced.exit_code == 0 and "merge conflict" not in synced.output
    status = runner.invoke(app, ["status", "--vault", str(root), "--json"])
    assert not [p for p in json.loads(status.stdout)["problems"] if p["path"] == "topic.md"]
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "- [[topic]] - Both sides, merged by hand\n" in memory


def test_a_conflict_in_memory_md_itself_is_listed(tmp_path: Path) -> None:
    # two machines each listed a new note; the merge's conflict was committed as is
    root = new_vault(tmp_path)
    write(root, "a.md", "Note a.\n")
    write(root, "b.md", "Note b.\n")
    with open_vault(root) as vault:
        vault.sync()
        memory = root / "MEMORY.md"
        text = memory.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        at = lines.index("- [[a]] - Note a.\n")
        lines[at : at + 2] = [
            "<<<<<<< HEAD\n",
            "- [[a]] - Note a.\n",
            "=======\n",
            "- [[b]] - Note b.\n",
            ">>>>>>> other\n",
        ]
        memory.write_text("".join(lines), encoding="utf-8")
        report = vault.sync()
        assert f"MEMORY.md: {ONE.format(at + 1)}" in report.warnings
        reasons = [p["reason"] for p in vault.status()["problems"] if p["path"] == "MEMORY.md"]
        # listed once: status reads MEMORY.md's conflicts from the file (the note's own
        # warning, the index's, said the same a second time)
        assert len(reasons) == 1, reasons
        assert f"it holds git's conflict markers (line {at + 1})" in reasons[0], reasons


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        (CONFLICT, [1]),
        # what a person resolving one left: a marker line git wrote, with its label
        ("- a\n=======\n- b\n>>>>>>> Stashed changes\n", [4]),
        ("<<<<<<< Updated upstream\n- a\n=======\n- b\n", [1]),
        ("<<<<<<< HEAD\n- a\n>>>>>>> other\n- b\n", [1, 3]),
        ("||||||| base\n- a\n", [1]),
        # not: a Setext heading, a bare quote line, markers shown in a code block
        ("Big title\n=======\n", []),
        ("> quote\n>>>>>>>\n", []),
        ("```\n>>>>>>> other\n<<<<<<< HEAD\n```\n", []),
    ],
)
def test_memory_md_is_left_while_any_marker_line_of_gits_is(text: str, lines: list[int]) -> None:
    why = left_as_git_wrote_it(text)
    if not lines:
        assert why is None
        return
    assert why is not None
    shown = ", ".join(map(str, lines))
    assert f"(line{'s' if len(lines) > 1 else ''} {shown})" in why, why
