"""A `git stash pop` that conflicted keeps its stash in the list ("The stash entry is kept
in case you need it again"): once the conflict is resolved, no pop is to come, though
git's refs and reflogs look as before the pop. memvault held MEMORY.md for it (up to 10
minutes after the stash), and status told the person to pop it again, a pop that
conflicted again over their resolution (vault/git_stash.newest_stash: ``applied``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import eventually, note, open_vault, write
from memvault.core.conflicts import find_conflicts
from memvault.interfaces.cli import app
from memvault.vault.git_stash import stash_stops, stash_waits
from test_field_git_conflicts import MARKS, _memory_md_conflicted_by_a_stash_pop
from test_memory_git import age_stash, commit, git, git_vault
from test_service import Proc, api, settled

ED = "[[people/ed]]"


def _status(root: Path) -> dict[str, object]:
    said = CliRunner().invoke(app, ["status", "--json", "--vault", str(root)])
    out: dict[str, object] = json.loads(said.stdout)
    return out


def _resolve(root: Path, conflicted: str, how: str) -> None:
    """The conflict in MEMORY.md resolved as a person does: both sides' lines kept and
    marked resolved (`git add`), the stash's side taken (`git checkout --theirs`, `git
    add`), or both sides kept and left unstaged (`git reset`, as a pop that goes through
    leaves it)."""
    mem = root / "MEMORY.md"
    if how == "theirs-add":
        git(root, "checkout", "--theirs", "--", "MEMORY.md")
    else:
        kept = [ln for ln in conflicted.splitlines(keepends=True) if not ln.startswith(MARKS)]
        mem.write_text("".join(kept), encoding="utf-8")
    git(root, *(("reset", "-q") if how == "both-reset" else ("add", "MEMORY.md")))


@pytest.mark.parametrize("how", ["both-add", "theirs-add", "both-reset"])
def test_a_conflicted_pop_once_resolved_is_no_pop_to_come(tmp_path: Path, how: str) -> None:
    """Found by hand (memvault sync and status, real git): the pop conflicted in
    MEMORY.md, the person resolved it and `git add`ed it, and wrote a note. The sync
    warned that MEMORY.md waits for `git stash pop` and did not list the note (10
    minutes after the stash); status said "pop it". Popped, it conflicted again, the
    person's resolution under new markers. Left unstaged (`git reset`), status said the
    pop would stop over MEMORY.md, with `git checkout -- MEMORY.md && git stash pop` to
    do: their resolution thrown away for the same conflict. Past the 10 minutes, with
    MEMORY.md written since, status said so in every case."""
    root = git_vault(tmp_path)
    conflicted = _memory_md_conflicted_by_a_stash_pop(root)
    mem = root / "MEMORY.md"
    _resolve(root, conflicted, how)
    assert git(root, "stash", "list").stdout  # kept: git's refs are as before the pop
    resolved = mem.read_text(encoding="utf-8")
    assert stash_waits(root, ["MEMORY.md"]) == []  # before: ['MEMORY.md'] (`git add`)
    assert stash_stops(root, ["MEMORY.md"]) == []  # before: ['MEMORY.md'] (`git reset`)
    said = _status(root)
    assert said["git_stash_waits"] == [] and said["git_stash_stops"] == [], said
    write(root, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))
    with open_vault(root) as v:
        report = v.sync()
    assert not [w for w in report.warnings if "git stash pop" in w], report.warnings
    text = mem.read_text(encoding="utf-8")
    assert ED in text and not find_conflicts(text)  # before: waited for the pop
    names = ("ann", "bea", "cy", "ed") if how == "theirs-add" else ("ann", "bea", "cy", "di")
    for name in names:  # the side(s) the person kept, and the new note
        assert text.count(f"[[people/{name}]]") == 1, (name, text)
    assert resolved != text
    age_stash(root)
    said = _status(root)
    assert said["git_stash_waits"] == [] and said["git_stash_stops"] == [], said
    human = CliRunner().invoke(app, ["status", "--vault", str(root)]).stdout
    assert "stash pop" not in human, human


def test_a_pop_taken_back_with_reset_hard_is_still_to_come(tmp_path: Path) -> None:
    """The conflicted pop given up (`git reset --hard`: MEMORY.md as committed, git's
    record of the conflict gone): the stash holds the person's words still, and
    MEMORY.md waits for its pop, which then goes through."""
    root = git_vault(tmp_path)
    _memory_md_conflicted_by_a_stash_pop(root)
    git(root, "reset", "-q", "--hard")
    assert stash_waits(root, ["MEMORY.md"]) == ["MEMORY.md"]
    write(root, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))
    with open_vault(root) as v:
        v.sync()
    assert ED not in (root / "MEMORY.md").read_text(encoding="utf-8")  # left for the pop


def test_a_resolved_pop_stays_applied_after_a_switch_of_branch(tmp_path: Path) -> None:
    """A switch of branch (or a pull that merges) clears git's record of the resolved
    conflict, the stash still in the list: the newest stash a sync saw applied is kept
    in the index meta, so MEMORY.md does not wait for it again, nor status advise it."""
    root = git_vault(tmp_path)
    conflicted = _memory_md_conflicted_by_a_stash_pop(root)
    _resolve(root, conflicted, "both-add")
    with open_vault(root) as v:
        v.sync()  # sees the stash applied (git's record of the conflict)
    commit(root, "resolved")
    git(root, "switch", "-q", "-c", "side")
    git(root, "switch", "-q", "main")
    assert git(root, "ls-files", "--resolve-undo").stdout == ""  # git's record gone
    write(root, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))
    with open_vault(root) as v:
        v.sync()
    assert ED in (root / "MEMORY.md").read_text(encoding="utf-8")  # before: waited
    said = _status(root)
    assert said["git_stash_waits"] == [] and said["git_stash_stops"] == [], said
    age_stash(root)
    assert _status(root)["git_stash_stops"] == []  # before: ['MEMORY.md']
    git(root, "stash", "drop", "-q")
    assert _status(root)["git_stash_stops"] == []


def test_a_conflict_in_a_note_applies_the_stash_too(tmp_path: Path) -> None:
    """The pop conflicted in a note, MEMORY.md's change merged and staged: the stash is
    applied (the note's conflict the person's to resolve), and MEMORY.md waited for a
    pop to come, status advising it, 10 minutes."""
    root = git_vault(tmp_path)
    write(root, "people/ann.md", note("Ann", "Ann leads.", body="Phone: 1."))
    with open_vault(root) as v:
        v.sync()
    commit(root, "base")
    mem = root / "MEMORY.md"
    mem.write_text(mem.read_text(encoding="utf-8") + "My words.\n", encoding="utf-8")
    write(root, "people/ann.md", note("Ann", "Ann leads.", body="Phone: 2."))
    git(root, "stash", "-q")
    write(root, "people/ann.md", note("Ann", "Ann leads.", body="Phone: 3."))
    commit(root, "phone 3")
    assert git(root, "stash", "pop", check=False).returncode != 0  # a conflict in ann.md
    assert "My words." in mem.read_text(encoding="utf-8")  # merged, staged
    assert stash_waits(root, ["MEMORY.md"]) == []  # before: ['MEMORY.md']
    write(root, "people/ed.md", note("Ed", "Ed is new."))
    with open_vault(root) as v:
        v.sync()
    text = mem.read_text(encoding="utf-8")
    assert ED in text and "My words." in text


def test_a_daemon_lists_new_notes_once_a_conflicted_pop_is_resolved(tmp_path: Path) -> None:
    """With a real daemon: the pop conflicted in MEMORY.md, the person resolved it and
    `git add`ed it, then wrote a note. The daemon held MEMORY.md until 10 minutes after
    the stash, its status warning to pop (and status, past that, that the pop would
    stop). Now the note is listed at the next sync."""
    root = git_vault(tmp_path)
    conflicted = _memory_md_conflicted_by_a_stash_pop(root)
    mem = root / "MEMORY.md"
    proc = Proc(tmp_path, root)
    try:
        info = proc.info()
        eventually(lambda: settled(info), what="the start-up reconcile")
        _resolve(root, conflicted, "both-add")
        write(root, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))

        def listed() -> str | None:
            text = mem.read_text(encoding="utf-8")
            return text if ED in text and settled(info) else None

        text = eventually(listed, timeout=30, what="ed listed")  # before: 10 minutes
        for name in ("ann", "bea", "cy", "di", "ed"):
            assert text.count(f"[[people/{name}]]") == 1, (name, text)
        said = api(info, "GET", "/status").json()
        assert said["git_stash_waits"] == [] and said["git_stash_stops"] == [], said
        assert not [w for w in said["daemon"]["warnings"] if "stash" in w], said["daemon"]
    finally:
        proc.stop()


def test_an_autostash_that_conflicted_once_resolved_is_no_pop_to_come(tmp_path: Path) -> None:
    """Field test, two clones each with a running daemon, a vault made before memvault
    wrote its .gitattributes: `git pull --rebase --autostash` on B put its autostash
    back with a conflict in MEMORY.md ("Your changes are safe in the stash"); the person
    resolved it and `git add`ed it, and wrote a note: not listed after 40 s (10 minutes
    after the autostash), status saying MEMORY.md waits for `git stash pop`. The
    autostash is in the stash list as any stash, and applied as a pop is."""
    from test_field_git import machines

    a, b = machines(tmp_path)
    (a / ".gitattributes").unlink()
    commit(a, "no attributes")
    git(a, "push", "-q")
    git(b, "pull", "-q")
    for root, who in ((a, "alpha"), (b, "beta")):
        mem = root / "MEMORY.md"
        first, rest = mem.read_text(encoding="utf-8").split("\n", 1)
        mem.write_text(f"{first}\nNote to self: {who}.\n{rest}", encoding="utf-8")
    commit(a, "A's line")
    git(a, "push", "-q")
    pulled = git(b, "pull", "-q", "--rebase", "--autostash", check=False)
    assert "conflict" in pulled.stdout + pulled.stderr
    mem = b / "MEMORY.md"
    conflicted = mem.read_text(encoding="utf-8")
    assert find_conflicts(conflicted) and git(b, "stash", "list").stdout
    _resolve(b, conflicted, "both-add")
    write(b, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))
    with open_vault(b) as v:
        v.sync()
    text = mem.read_text(encoding="utf-8")
    assert ED in text, text  # before: waited for a pop of the autostash
    assert "Note to self: alpha." in text and "Note to self: beta." in text
    said = _status(b)
    assert said["git_stash_waits"] == [] and said["git_stash_stops"] == [], said


def test_a_pop_taken_back_after_a_sync_saw_it_conflicted_is_still_to_come(
    tmp_path: Path,
) -> None:
    """Found reviewing: a daemon syncs as soon as a pop's conflict writes MEMORY.md, and
    kept the stash as applied in the index meta; the person gave the pop up (`git reset
    --hard`), and memvault wrote MEMORY.md, its new note listed: the next `git stash
    pop` was refused ("Your local changes ... would be overwritten"), status silent.
    The stash kept as applied now counts only once HEAD moved from where it was seen
    applied (a commit, a switch, a pull); a sync that finds git's record gone at that
    same HEAD lets it go, so a commit after the reset does not make it applied again."""
    root = git_vault(tmp_path)
    _memory_md_conflicted_by_a_stash_pop(root)
    mem = root / "MEMORY.md"
    write(root, "people/ed.md", note("Ed", "Ed is new.", updated="2024-05-05"))
    with open_vault(root) as v:
        v.sync()  # as the daemon does at once: the pop seen applied (unmerged)
    git(root, "reset", "-q", "--hard")  # the pop given up
    with open_vault(root) as v:
        v.sync()
    assert ED not in mem.read_text(encoding="utf-8")  # before: written, ed listed
    assert _status(root)["git_stash_waits"] == ["MEMORY.md"]
    git(root, "commit", "-q", "--allow-empty", "-m", "something else")
    with open_vault(root) as v:
        v.sync()
    assert ED not in mem.read_text(encoding="utf-8")  # still left for the pop
    popped = git(root, "stash", "pop", check=False)
    assert "would be overwritten" not in popped.stderr, popped.stderr
    assert find_conflicts(mem.read_text(encoding="utf-8"))  # applied again, as before
