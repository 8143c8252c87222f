"""A stash kept in the list after its changes came back: `git stash apply` (not `pop`)
that went through, and a stash holding the same MEMORY.md as another whose pop
conflicted (vault/git_stash.newest_stash: ``applied``, ``unless_undone``). Found by
hand with real git and the CLI: after a clean apply, status said `git stash pop` would
stop over MEMORY.md and to run `git checkout -- MEMORY.md && git stash pop`, which threw
the person's applied words out of MEMORY.md and was refused over their note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import eventually, note, open_vault, write
from memvault.interfaces.cli import app
from memvault.vault.git_stash import stash_stops, stash_waits
from test_field_git_conflicts import MARKS, cy_listed_after_a_base
from test_memory_git import age_stash, commit, git, git_vault
from test_service import Proc, api, settled

ED = "[[people/ed]]"


def _status(root: Path) -> dict[str, list[str]]:
    said = json.loads(CliRunner().invoke(app, ["status", "--json", "--vault", str(root)]).stdout)
    return {k: said[k] for k in ("git_stash_waits", "git_stash_stops")}


def _human(root: Path) -> str:
    return CliRunner().invoke(app, ["status", "--vault", str(root)]).stdout


def _vault_with_a_stash(tmp_path: Path, with_note: bool) -> Path:
    """A committed vault of ann and bea; cy written (untracked, as a new note is) and
    listed by memvault, a line of the person's in MEMORY.md, and (``with_note``) an edit
    of ann.md: all stashed (`git stash`; cy.md, untracked, stays)."""
    root = git_vault(tmp_path)
    for name in ("ann", "bea"):
        write(root, f"people/{name}.md", note(name.title(), f"{name} is here."))
    with open_vault(root) as v:
        v.sync()
    commit(root, "base")
    write(root, "people/cy.md", note("Cy", "cy is here."))
    with open_vault(root) as v:
        v.sync()
    mem = root / "MEMORY.md"
    mem.write_text(mem.read_text(encoding="utf-8") + "My words.\n", encoding="utf-8")
    if with_note:
        write(root, "people/ann.md", note("Ann", "ann is here.", body="Phone: 2."))
    git(root, "stash", "-q")
    return root


@pytest.mark.parametrize("with_note", [True, False], ids=["note-too", "memory-only"])
def test_a_stash_applied_cleanly_is_no_pop_to_come(tmp_path: Path, with_note: bool) -> None:
    """`git stash apply` went through, the entry kept (as a person keeps it, in case):
    its changes are in the files, and no pop is to come. Status said `git stash pop`
    would stop over MEMORY.md, `git checkout -- MEMORY.md && git stash pop` to do: the
    checkout took the person's words out of MEMORY.md, and the pop was refused over
    their note ("Your local changes ... would be overwritten"). Once memvault listed a
    new note in that MEMORY.md, so still, whatever the stash's age."""
    root = _vault_with_a_stash(tmp_path, with_note)
    mem = root / "MEMORY.md"
    git(root, "stash", "apply", "-q")
    assert git(root, "stash", "list").stdout  # kept
    assert stash_stops(root, ["MEMORY.md"]) == []  # before: ['MEMORY.md']
    assert _status(root) == {"git_stash_waits": [], "git_stash_stops": []}
    assert "stash pop" not in _human(root)  # before: `git checkout -- MEMORY.md && ...`
    write(root, "people/ed.md", note("Ed", "Ed is new."))
    with open_vault(root) as v:
        report = v.sync()
    assert not [w for w in report.warnings if "stash" in w], report.warnings
    text = mem.read_text(encoding="utf-8")
    assert ED in text and "My words." in text
    assert _status(root) == {"git_stash_waits": [], "git_stash_stops": []}  # before: stops
    age_stash(root)
    assert _status(root) == {"git_stash_waits": [], "git_stash_stops": []}
    assert "stash pop" not in _human(root)
    git(root, "stash", "drop", "-q")  # what the person does once sure: nothing lost
    assert "My words." in mem.read_text(encoding="utf-8")


def test_a_daemon_lists_notes_in_a_cleanly_applied_memory_md_and_advises_no_pop(
    tmp_path: Path,
) -> None:
    """With a real daemon: MEMORY.md's change alone stashed (memvault's line and the
    person's words; new notes are untracked and stay), applied cleanly, a note written:
    the daemon lists it, and its /status advised `git checkout -- MEMORY.md && git
    stash pop` (a checkout that threw the applied words away, for the same pop)."""
    root = _vault_with_a_stash(tmp_path, with_note=False)
    mem = root / "MEMORY.md"
    proc = Proc(tmp_path, root)
    try:
        info = proc.info()
        eventually(lambda: settled(info), what="the start-up reconcile")
        git(root, "stash", "apply", "-q")
        write(root, "people/ed.md", note("Ed", "Ed is new."))

        def listed() -> str | None:
            text = mem.read_text(encoding="utf-8")
            return text if ED in text and settled(info) else None

        text = eventually(listed, timeout=30, what="ed listed")
        assert "My words." in text and "[[people/cy]]" in text
        said = api(info, "GET", "/status").json()
        assert said["git_stash_waits"] == [] and said["git_stash_stops"] == [], said
    finally:
        proc.stop()
    assert _status(root) == {"git_stash_waits": [], "git_stash_stops": []}


def test_a_stash_applied_then_added_does_not_hold_memory_md(tmp_path: Path) -> None:
    """Applied, then its changes added (`git add -A`, a commit being put together, or
    `git stash apply --index`): MEMORY.md as git's index holds it, the stash's version,
    was taken for one waiting for the pop, and the note written meanwhile was not listed
    for up to 10 minutes (the pop would not touch MEMORY.md: git's index holds it)."""
    root = _vault_with_a_stash(tmp_path, with_note=True)
    git(root, "stash", "apply", "-q")
    git(root, "add", "-A")
    assert stash_waits(root, ["MEMORY.md"]) == []  # before: ['MEMORY.md']
    write(root, "people/ed.md", note("Ed", "Ed is new."))
    with open_vault(root) as v:
        v.sync()
    assert ED in (root / "MEMORY.md").read_text(encoding="utf-8")  # before: held


def test_a_clean_apply_taken_back_is_a_pop_to_come_again(tmp_path: Path) -> None:
    """A sync saw the apply (kept in the index meta); `git reset --hard` took it back:
    the stash holds the person's words only, and MEMORY.md waits for its pop again,
    which goes through; memvault listing a note after that does not make it applied."""
    root = _vault_with_a_stash(tmp_path, with_note=False)
    mem = root / "MEMORY.md"
    git(root, "stash", "apply", "-q")
    with open_vault(root) as v:
        v.sync()  # sees it applied
    git(root, "reset", "-q", "--hard")
    write(root, "people/ed.md", note("Ed", "Ed is new."))
    with open_vault(root) as v:
        v.sync()
    assert ED not in mem.read_text(encoding="utf-8")  # left for the pop
    assert _status(root)["git_stash_waits"] == ["MEMORY.md"]
    age_stash(root)
    with open_vault(root) as v:
        v.sync()  # past the 10 minutes: written
    assert ED in mem.read_text(encoding="utf-8")
    assert _status(root)["git_stash_stops"] == ["MEMORY.md"]  # the advice stands
    git(root, "checkout", "--", "MEMORY.md")
    git(root, "stash", "pop", "-q")
    assert "My words." in mem.read_text(encoding="utf-8")


def _two_stashes_of_one_memory_md(root: Path) -> tuple[str, str]:
    """A vault without merge=union: two stashes holding the same MEMORY.md (memvault's
    cy line and the person's words, as written again after the first stash), the older
    with ann.md's edit, the newer with bea.md's; another clone's MEMORY.md committed;
    the newer popped, conflicting in MEMORY.md, resolved (both sides), added, dropped.
    The older's commit, and MEMORY.md as resolved."""
    base = cy_listed_after_a_base(root)  # cy listed first, where the other clone lists di
    mem = root / "MEMORY.md"
    stashed = mem.read_text(encoding="utf-8") + "My words.\n"
    mem.write_text(stashed, encoding="utf-8")
    write(root, "people/ann.md", note("Ann", "ann is here.", body="Phone: 2.", updated="01"))
    git(root, "stash", "-q")
    older = git(root, "rev-parse", "stash@{0}").stdout.strip()
    mem.write_text(stashed, encoding="utf-8")
    write(root, "people/bea.md", note("Bea", "bea is here.", body="Phone: 3.", updated="02"))
    git(root, "stash", "-q")
    assert (
        git(root, "rev-parse", "stash@{0}:MEMORY.md", "stash@{1}:MEMORY.md").stdout.count(
            git(root, "rev-parse", "stash@{0}:MEMORY.md").stdout
        )
        == 2
    )  # the same blob
    begin = "<!-- memvault:begin people -->\n"
    mem.write_text(base.replace(begin, begin + "- [[people/di]] - di is here.\n"), "utf-8")
    commit(root, "di, from another clone")
    assert git(root, "stash", "pop", check=False).returncode != 0  # MEMORY.md conflicts
    kept = [ln for ln in mem.read_text("utf-8").splitlines(True) if not ln.startswith(MARKS)]
    mem.write_text("".join(kept), encoding="utf-8")
    git(root, "add", "MEMORY.md")
    git(root, "stash", "drop", "-q")
    assert git(root, "rev-parse", "stash@{0}").stdout.strip() == older
    return older, mem.read_text(encoding="utf-8")


def test_the_record_of_one_stash_pop_does_not_apply_another_of_the_same_memory_md(
    tmp_path: Path,
) -> None:
    """Found reproducing with real git: git's record of the newer stash's conflict
    (its MEMORY.md as "Stashed changes") was taken for the older's, holding the same
    MEMORY.md: the older, still to pop (ann.md untouched), counted applied and kept so.
    MEMORY.md did not wait for its pop, memvault listed a note in it, and `git stash
    pop` was refused ("Your local changes ... would be overwritten by merge:
    MEMORY.md"); past the 10 minutes status never said what to do."""
    root = git_vault(tmp_path)
    _, resolved = _two_stashes_of_one_memory_md(root)
    mem = root / "MEMORY.md"
    assert stash_waits(root, ["MEMORY.md"]) == ["MEMORY.md"]  # before: []
    write(root, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))
    with open_vault(root) as v:
        v.sync()
    assert mem.read_text(encoding="utf-8") == resolved  # before: ed listed
    age_stash(root)
    with open_vault(root) as v:
        v.sync()  # past the wait: written, and the pop would stop over it
    assert ED in mem.read_text(encoding="utf-8")
    assert _status(root)["git_stash_stops"] == ["MEMORY.md"]  # before: [] (applied)
    git(root, "checkout", "--", "MEMORY.md")  # as status says
    popped = git(root, "stash", "pop", check=False)
    assert "would be overwritten" not in popped.stderr, popped.stderr
    assert "Phone: 2." in (root / "people" / "ann.md").read_text(encoding="utf-8")
    assert "My words." in mem.read_text(encoding="utf-8")


def test_a_clean_pop_of_one_of_two_stashes_of_one_memory_md_applies_only_it(
    tmp_path: Path,
) -> None:
    """Two stashes holding the same MEMORY.md, the newer popped cleanly: MEMORY.md holds
    the older's version too, but its note does not: the older is still to pop, and
    status says the pop would stop over MEMORY.md (not counted applied by it alone)."""
    root = git_vault(tmp_path)
    mem = root / "MEMORY.md"
    write(root, "people/ann.md", note("Ann", "ann is here."))
    with open_vault(root) as v:
        v.sync()
    commit(root, "base")
    write(root, "people/cy.md", note("Cy", "cy is here."))
    with open_vault(root) as v:
        v.sync()
    stashed = mem.read_text(encoding="utf-8") + "My words.\n"
    mem.write_text(stashed, encoding="utf-8")
    write(root, "people/ann.md", note("Ann", "ann is here.", body="Phone: 2."))
    git(root, "stash", "-q")
    mem.write_text(stashed, encoding="utf-8")
    git(root, "stash", "-q")
    git(root, "stash", "pop", "-q")
    assert mem.read_text(encoding="utf-8") == stashed
    assert _status(root)["git_stash_stops"] == ["MEMORY.md"]


def test_a_stash_applied_then_its_note_edited_further_is_no_pop_to_come(
    tmp_path: Path,
) -> None:
    """Found reviewing (rev54d): `git stash apply` went through, then the person went on
    editing the note it brought back, no sync between (no daemon running). ann.md no
    longer held the stash's version: the stash counted still to pop, and status said
    `git checkout -- MEMORY.md && git stash pop`, whose checkout took the applied words
    out of MEMORY.md and whose pop was refused over ann.md ("Your local changes ...
    would be overwritten")."""
    root = _vault_with_a_stash(tmp_path, with_note=True)
    git(root, "stash", "apply", "-q")
    write(root, "people/ann.md", note("Ann", "ann is here.", body="Phone: 2. Mobile: 3."))
    assert stash_stops(root, ["MEMORY.md"]) == []  # before: ['MEMORY.md']
    assert _status(root) == {"git_stash_waits": [], "git_stash_stops": []}
    assert "stash pop" not in _human(root)
    age_stash(root)
    assert _status(root) == {"git_stash_waits": [], "git_stash_stops": []}
    git(root, "reset", "-q", "--hard")  # taken back: a pop to come again
    assert _status(root)["git_stash_waits"] == [] and stash_stops(root, ["MEMORY.md"]) == []
    git(root, "stash", "pop", "-q")
    assert "My words." in (root / "MEMORY.md").read_text(encoding="utf-8")
