"""A note holding git's conflict markers while git is not in the middle of anything (a
`git stash pop` that conflicted): a person's to resolve (a field test's findings)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import eventually, note, open_vault, write
from memvault.core.conflicts import find_conflicts
from memvault.interfaces.cli import app
from memvault.vault.gitstate import git_busy
from test_memory_git import commit, git, git_vault
from test_service import Proc, api, settled


def test_links_in_a_conflicted_note_wait_until_it_is_resolved(tmp_path: Path) -> None:
    """Field test: `git stash pop` conflicted in ann.md (no MERGE_HEAD: git is busy with
    nothing), and a person renamed bob.md meanwhile: the daemon rewrote the links inside
    the conflict, both sides. The person took the stash's side (`git checkout --theirs`)
    and got `[[bob]]` back, a link to nothing, never re-targeted: the rename was done.
    Now the conflicted note is left as git wrote it, said in status, and its links are
    re-targeted once it is resolved."""
    root = git_vault(tmp_path)
    write(root, "people/bob.md", note("Bob", "Bob runs ops."))
    ann = root / "people" / "ann.md"
    body = "Ann works with [[bob]] {}.\nPhone: 1."
    write(root, "people/ann.md", note("Ann", "Ann leads data.", body=body.format("often")))
    with open_vault(root) as v:
        v.sync()
    commit(root, "base")
    proc = Proc(tmp_path, root)
    try:
        info = proc.info()
        eventually(lambda: settled(info), what="the start-up reconcile")
        write(root, "people/ann.md", note("Ann", "Ann leads data.", body=body.format("daily")))
        git(root, "stash", "-q")
        write(root, "people/ann.md", note("Ann", "Ann leads data.", body=body.format("weekly")))
        commit(root, "weekly")
        assert git(root, "stash", "pop", check=False).returncode != 0  # a conflict
        assert git_busy(root) is None
        conflicted = ann.read_bytes()
        assert b"<<<<<<< " in conflicted
        (root / "people" / "bob.md").rename(root / "people" / "robert.md")

        def moved() -> bool:
            hits = api(info, "POST", "/search", json={"query": "Bob runs ops"}).json()["hits"]
            return any(h["path"] == "people/robert.md" for h in hits) and bool(settled(info))

        eventually(moved, what="the rename indexed")
        assert ann.read_bytes() == conflicted  # untouched (before: [[robert]] both sides)
        warnings = api(info, "GET", "/status").json()["daemon"]["warnings"]
        assert any(w.startswith("people/ann.md: its links to moved files wait") for w in warnings)
        git(root, "checkout", "--theirs", "--", "people/ann.md")  # the stash's side
        git(root, "reset", "-q")  # (resolved: unstaged, as `git stash pop` leaves it)

        def relinked() -> str | None:
            text = ann.read_text(encoding="utf-8")
            return text if "[[robert]] daily" in text and settled(info) else None

        text = eventually(relinked, what="ann's link re-targeted once resolved")
        assert "<<<<<<<" not in text and "[[bob]]" not in text
    finally:
        proc.stop()


def test_a_folder_note_holding_conflict_markers_is_left_as_git_wrote_it(tmp_path: Path) -> None:
    """A folder note that git could not merge (a `git stash pop` or an add/add merge with
    no merge=union: no MERGE_HEAD after the pop): the update folded the two lists and
    rewrote it, the conflict's lines moved ('=======' and '>>>>>>>' left above the list,
    the other side's count gone) while git still held it unmerged. Left as it is."""
    from test_field_git_generated import limit_people

    root = git_vault(tmp_path)
    limit_people(root, 2)
    for name in ("ann", "bea", "cy"):
        write(root, f"people/{name}.md", note(name.title(), f"{name.title()} is here."))
    with open_vault(root) as v:
        v.sync()
    folder_note = root / "people" / "people.md"
    made = folder_note.read_text(encoding="utf-8")
    begin = made.index("All 3 people")
    head, tail = made[:begin], made[begin:]
    other = tail.replace("All 3 people", "All 4 people").replace(
        "<!-- memvault:end folder -->\n", ""
    )
    ours = tail.replace("<!-- memvault:end folder -->\n", "")
    conflicted = (
        head
        + "<<<<<<< Updated upstream\n"
        + ours
        + "=======\n"
        + other
        + "- [[people/di]] - Di is there.\n"
        + ">>>>>>> Stashed changes\n"
        + "<!-- memvault:end folder -->\n"
    )
    folder_note.write_text(conflicted, encoding="utf-8")
    write(root, "people/ed.md", note("Ed", "Ed is new."))
    with open_vault(root) as v:
        v.sync()
    assert folder_note.read_text(encoding="utf-8") == conflicted  # before: rewritten


def cy_listed_after_a_base(root: Path) -> str:
    """A vault made before memvault wrote a .gitattributes (no merge=union): ann and
    bea listed and committed, then cy written and listed by a sync (uncommitted).
    MEMORY.md as committed."""
    (root / ".gitattributes").unlink()
    for name, day in (("ann", "01"), ("bea", "02")):
        write(root, f"people/{name}.md", note(name.title(), f"{name} is here.", updated=day))
    with open_vault(root) as v:
        v.sync()
    commit(root, "base")
    base = (root / "MEMORY.md").read_text(encoding="utf-8")
    write(root, "people/cy.md", note("Cy", "cy is here.", updated="2024-03-03"))
    with open_vault(root) as v:
        v.sync()
    return base


def _memory_md_conflicted_by_a_stash_pop(root: Path, mine: str = "") -> str:
    """A vault made before memvault wrote a .gitattributes (no merge=union): the daemon
    listed cy in MEMORY.md, the person stashed that change, another clone's MEMORY.md
    listing di was committed, and `git stash pop` conflicted in the people section (no
    MERGE_HEAD: git is busy with nothing). ``mine``: a line of the person's stashed with
    cy's, below it. MEMORY.md's text as git wrote it."""
    base = cy_listed_after_a_base(root)
    mem = root / "MEMORY.md"
    listed = mem.read_text(encoding="utf-8")
    assert "[[people/cy]]" in listed
    cy = "- [[people/cy]] - cy is here.\n"
    mem.write_text(listed.replace(cy, cy + mine), encoding="utf-8")  # (a line of theirs)
    git(root, "stash", "-q")  # MEMORY.md's change set aside; cy.md, untracked, stays
    write(root, "people/di.md", note("Di", "di is here.", updated="2024-04-04"))
    # the other clone's daemon listed di where this one listed cy
    begin = "<!-- memvault:begin people -->\n"
    mem.write_text(base.replace(begin, begin + "- [[people/di]] - di is here.\n"), "utf-8")
    git(root, "add", "MEMORY.md", "people/di.md")
    git(root, "commit", "-q", "-m", "di, from another clone")
    assert git(root, "stash", "pop", check=False).returncode != 0  # a conflict
    assert git_busy(root) is None
    conflicted = mem.read_text(encoding="utf-8")
    assert find_conflicts(conflicted)
    return conflicted


def test_memory_md_holding_conflict_markers_is_left_as_git_wrote_it_until_resolved(
    tmp_path: Path,
) -> None:
    """Field test: `git stash pop` conflicted in MEMORY.md's people section; the daemon
    went on rewriting the section around git's markers, its lines moved from one side
    to the other. Now MEMORY.md is left as git wrote it while it holds them, status says
    so (naming the file and what to do), and it is brought up once resolved and saved."""
    root = git_vault(tmp_path)
    conflicted = _memory_md_conflicted_by_a_stash_pop(root)
    mem = root / "MEMORY.md"
    proc = Proc(tmp_path, root)
    try:
        info = proc.info()
        eventually(lambda: settled(info), what="the start-up reconcile")
        write(root, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))

        def indexed() -> bool:
            hits = api(info, "POST", "/search", json={"query": "Ed is new"}).json()["hits"]
            return any(h["path"] == "people/ed.md" for h in hits) and bool(settled(info))

        eventually(indexed, what="ed indexed")
        assert mem.read_text(encoding="utf-8") == conflicted  # before: rewritten around them
        at = api(info, "GET", "/status").json()["last_sync_at"]
        threading.Event().wait(5)  # the daemon's catch-up looks every 2 s
        assert api(info, "GET", "/status").json()["last_sync_at"] == at  # before: a sync each
        problems = api(info, "GET", "/status").json()["problems"]
        said = [p for p in problems if p["path"] == "MEMORY.md"]
        # once, with what to do: the index's warning of the note MEMORY.md ("unresolved
        # merge conflict (git) at line 13: resolve it and save") said it a second time
        assert len(said) == 1, said
        assert "conflict markers" in said[0]["reason"], said
        assert "delete the marker lines and save" in said[0]["reason"], said
        human = CliRunner().invoke(app, ["status", "--vault", str(root)]).stdout
        assert "MEMORY.md" in human and "conflict markers" in human, human
        listed = human.split("kept until the file is fixed:")[1].split("\nlast sync")[0]
        assert listed.count("MEMORY.md") == 1, human
        # resolved: both sides' lines kept, the markers deleted, saved
        kept = [ln for ln in conflicted.splitlines(keepends=True) if not ln.startswith(MARKS)]
        mem.write_text("".join(kept), encoding="utf-8")

        def brought_up() -> str | None:
            text = mem.read_text(encoding="utf-8")
            return text if "[[people/ed]]" in text and settled(info) else None

        text = eventually(brought_up, what="MEMORY.md brought up once resolved")
        assert not find_conflicts(text)
        for name in ("ann", "bea", "cy", "di", "ed"):
            assert text.count(f"[[people/{name}]]") == 1, (name, text)
        problems = api(info, "GET", "/status").json()["problems"]
        assert not [p for p in problems if p["path"] == "MEMORY.md"], problems
    finally:
        proc.stop()


MARKS = ("<<<<<<<", "=======", ">>>>>>>")


def test_memory_md_holding_conflict_markers_waits_for_the_cli_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no daemon: a sync leaves the conflicted MEMORY.md as git wrote it, `status
    --json` names it with what to do, and the first CLI run after the person resolved
    it (a search, which syncs first) brings it up."""
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = git_vault(tmp_path)
    conflicted = _memory_md_conflicted_by_a_stash_pop(root)
    mem = root / "MEMORY.md"
    write(root, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))
    run = CliRunner().invoke
    assert run(app, ["sync", "--vault", str(root)]).exit_code == 0
    assert mem.read_text(encoding="utf-8") == conflicted  # before: rewritten around them
    said = json.loads(run(app, ["status", "--json", "--vault", str(root)]).stdout)
    reasons = [p["reason"] for p in said["problems"] if p["path"] == "MEMORY.md"]
    assert any(r.startswith("left untouched: it holds git's conflict markers") for r in reasons)
    assert len(reasons) == 1, reasons  # before: the index's "unresolved merge conflict" too
    # the pop stopped over it already: no `git checkout -- MEMORY.md && git stash pop`,
    # which git refuses over an unmerged file, and which would take the resolution back
    assert said["git_stash_stops"] == [], said["git_stash_stops"]  # before: ['MEMORY.md']
    resolved = "".join(
        ln for ln in conflicted.splitlines(keepends=True) if not ln.startswith(MARKS)
    )
    mem.write_text(resolved, encoding="utf-8")
    assert run(app, ["search", "Ed is new", "--vault", str(root)]).exit_code == 0
    text = mem.read_text(encoding="utf-8")
    for name in ("ann", "bea", "cy", "di", "ed"):
        assert text.count(f"[[people/{name}]]") == 1, (name, text)
    said = json.loads(run(app, ["status", "--json", "--vault", str(root)]).stdout)
    assert not [p for p in said["problems"] if p["path"] == "MEMORY.md"], said["problems"]


def test_markers_in_a_code_block_of_memory_md_are_no_conflict(tmp_path: Path) -> None:
    """MEMORY.md showing git's markers in a fenced code block (a note on how to resolve
    a conflict) is updated as any other."""
    root = git_vault(tmp_path)
    mem = root / "MEMORY.md"
    shown = "```\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> other\n```\n"
    mem.write_text(mem.read_text(encoding="utf-8") + shown, encoding="utf-8")
    write(root, "people/ann.md", note("Ann", "ann is here."))
    with open_vault(root) as v:
        v.sync()
    text = mem.read_text(encoding="utf-8")
    assert "[[people/ann]]" in text and text.endswith(shown)


def test_links_in_a_conflicted_memory_md_wait_until_it_is_resolved(tmp_path: Path) -> None:
    """A note renamed while MEMORY.md holds git's markers: MEMORY.md is left as git wrote
    it, and its links to the note wait in the relink journal, as a note's do; the side
    the person takes (`git checkout --theirs`: the stash's, from git's objects) has the
    old link, re-targeted once it is resolved. Left untouched with nothing waiting, it
    kept `[[people/bea]]`, a link to nothing, for good."""
    root = git_vault(tmp_path)
    mine = "Ask [[people/bea]] about billing.\n"
    conflicted = _memory_md_conflicted_by_a_stash_pop(root, mine)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        (root / "people" / "bea.md").rename(root / "people" / "beatrice.md")
        report = v.sync()
        assert mem.read_text(encoding="utf-8") == conflicted
        assert "MEMORY.md" in report.relink_waiting
        assert "MEMORY.md" in v.sync().relink_waiting  # tried again: still conflicted
        assert mem.read_text(encoding="utf-8") == conflicted
        git(root, "checkout", "--theirs", "--", "MEMORY.md")  # the stash's side
        git(root, "reset", "-q")  # (resolved: unstaged, as `git stash pop` leaves it)
        v.sync()
        text = mem.read_text(encoding="utf-8")
        assert "Ask [[people/beatrice]] about billing." in text, text
        assert "[[people/bea]]" not in text and not find_conflicts(text)
        assert v.status()["index"]["relink_pending"] == 0


@pytest.mark.parametrize(
    "deleted_first",
    [("<<<<<<<",), ("=======",), (">>>>>>>",), ("<<<<<<<", "=======")],
    ids=["open", "separator", "close", "open-and-separator"],
)
def test_memory_md_half_resolved_waits_for_its_last_marker_line(
    tmp_path: Path, deleted_first: tuple[str, ...]
) -> None:
    """Field test: the person resolving MEMORY.md in their editor deleted one marker line
    of git's and the editor saved (Obsidian saves as one types): what was left was no
    conflict in order any more, and a sync rewrote the section under their editor, the
    new note listed above the `=======` left, di's line moved below it, cy's below the
    `>>>>>>> Stashed changes` left. A marker line git wrote, with its label, holds it as
    git wrote it until the last one is gone."""
    root = git_vault(tmp_path)
    conflicted = _memory_md_conflicted_by_a_stash_pop(root)
    mem = root / "MEMORY.md"
    lines = conflicted.splitlines(keepends=True)
    half = "".join(ln for ln in lines if not ln.startswith(deleted_first))
    mem.write_text(half, encoding="utf-8")
    write(root, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))
    with open_vault(root) as v:
        v.sync()
        assert mem.read_text(encoding="utf-8") == half  # before: rewritten around them
        reasons = [p["reason"] for p in v.status()["problems"] if p["path"] == "MEMORY.md"]
        assert any("conflict markers" in r for r in reasons), reasons
        resolved = "".join(ln for ln in lines if not ln.startswith(MARKS))
        mem.write_text(resolved, encoding="utf-8")
        v.sync()
    text = mem.read_text(encoding="utf-8")
    for name in ("ann", "bea", "cy", "di", "ed"):
        assert text.count(f"[[people/{name}]]") == 1, (name, text)


def test_links_in_memory_md_wait_while_a_stash_holds_it(tmp_path: Path) -> None:
    """The conflict resolved as git says to (`git checkout --theirs`, then `git add`):
    the stash is applied, no pop to come (test_field_git_stash_applied), and MEMORY.md's
    links to the note renamed meanwhile are re-targeted at once (before: it waited for a
    pop, the stash kept in the list). A stash still to pop holding MEMORY.md: its links
    wait in the relink journal until the pop; the journal was dropped as the update
    waited for the stash, and the side kept linked `[[people/bea]]`, a note gone."""
    root = git_vault(tmp_path)
    mine = "Ask [[people/bea]] about billing.\n"
    _memory_md_conflicted_by_a_stash_pop(root, mine)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        (root / "people" / "bea.md").rename(root / "people" / "beatrice.md")
        assert "MEMORY.md" in v.sync().relink_waiting
        git(root, "checkout", "--theirs", "--", "MEMORY.md")  # the stash's side
        git(root, "add", "MEMORY.md")  # marked resolved
        report = v.sync()
        assert not [w for w in report.warnings if "git stash pop" in w], report.warnings
        text = mem.read_text(encoding="utf-8")
        assert "Ask [[people/beatrice]] about billing." in text, text
        assert "[[people/bea]]" not in text and not find_conflicts(text)
        assert v.status()["index"]["relink_pending"] == 0
        git(root, "stash", "drop", "-q")
        commit(root, "resolved")
        # a stash to pop: the person's line naming cy, set aside
        mem.write_text(text + "Ask [[people/cy]] too.\n", encoding="utf-8")
        git(root, "stash", "-q")
        (root / "people" / "cy.md").rename(root / "people" / "cyrus.md")
        report = v.sync()
        assert any("git stash pop" in w for w in report.warnings), report.warnings
        assert "MEMORY.md" in report.relink_waiting  # before: () and the journal dropped
        git(root, "stash", "pop", "-q")
        v.sync()
        text = mem.read_text(encoding="utf-8")
        assert "Ask [[people/cyrus]] too." in text, text
        assert "[[people/cy]]" not in text
        assert v.status()["index"]["relink_pending"] == 0


def test_folder_notes_are_kept_while_memory_md_holds_conflict_markers(tmp_path: Path) -> None:
    """MEMORY.md holding git's markers (a `git stash pop` that conflicted) was left as
    git wrote it, and the folder notes with it: a person new in people/ was listed in
    people/people.md only once MEMORY.md was resolved, a day later if so. A folder note
    lists its folder whatever MEMORY.md holds: it is brought up to date meanwhile, and
    MEMORY.md left untouched."""
    from test_field_git_generated import limit_people

    root = git_vault(tmp_path)
    limit_people(root, 1)
    conflicted = _memory_md_conflicted_by_a_stash_pop(root)
    mem = root / "MEMORY.md"
    folder_note = root / "people" / "people.md"
    write(root, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))
    with open_vault(root) as v:
        report = v.sync()
        assert mem.read_text(encoding="utf-8") == conflicted
        listed = folder_note.read_text(encoding="utf-8")
        assert "[[people/ed]]" in listed, listed  # before: not listed until resolved
        assert report.folder_notes_written == ("people/people.md",)  # (indexed as made)
        write(root, "people/fay.md", note("Fay", "Fay is new.", updated="2024-06-06"))
        v.sync()
        assert "[[people/fay]]" in folder_note.read_text(encoding="utf-8")
        assert mem.read_text(encoding="utf-8") == conflicted
        resolved = "".join(
            ln for ln in conflicted.splitlines(keepends=True) if not ln.startswith(MARKS)
        )
        mem.write_text(resolved, encoding="utf-8")
        v.sync()
    text = mem.read_text(encoding="utf-8")
    assert not find_conflicts(text) and "people/people" in text  # its overflow line
