"""Files memvault generates, in a vault two machines share through git (a field test).

Two clones of one bare remote, each its own vault and index, real git: a pull must
not be refused over a file memvault made, and nobody's words are lost on the way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import eventually, note, open_vault, write
from memvault.vault.template import init_vault
from test_field_git import machines
from test_memory_git import commit, git, git_vault, status
from test_service import Proc, settled


def limit_people(root: Path, limit: int) -> None:
    config = root / ".memvault" / "config.toml"
    text = config.read_text("utf-8")
    old = 'folder = "people"\norder = "updated"\nlimit = 8'
    assert old in text
    config.write_text(text.replace(old, f'folder = "people"\norder = "updated"\nlimit = {limit}'))


@pytest.mark.parametrize("how", ["--no-rebase", "--rebase"])
def test_a_folder_note_both_machines_made_does_not_stop_the_second_pull(
    tmp_path: Path, how: str
) -> None:
    """Field test: Key People passed its limit on both machines before either pulled;
    each daemon made people/people.md, and the second machine's `git pull --autostash`
    was refused ("untracked working tree files would be overwritten by merge"), with or
    without --rebase, until a person removed or committed memvault's file. memvault now
    adds a folder note it makes to git's index (`git add`), so git sets it aside with
    the person's changes and merges both machines' lists line by line."""
    a, b = machines(tmp_path)
    limit_people(a, 2)
    commit(a, "limit 2")
    git(a, "push", "-q")
    git(b, "pull", "-q")
    for root, names in ((a, ["bea", "cy"]), (b, ["di", "ed"])):
        for name in names:
            write(root, f"people/{name}.md", note(name.title(), f"{name.title()} is new."))
        with open_vault(root) as v:
            v.sync()
        assert (root / "people" / "people.md").is_file()
    commit(a, "A's people")
    git(a, "push", "-q")
    pulled = git(b, "pull", "-q", how, "--autostash", check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    with open_vault(b) as v:
        v.sync()
    folder_note = (b / "people" / "people.md").read_text("utf-8")
    for name in ("ann", "bea", "cy", "di", "ed"):
        assert f"- [[people/{name}]] - " in folder_note, folder_note
    assert "<<<<<<<" not in folder_note
    assert folder_note.count("<!-- memvault:begin folder -->") == 1
    # the second machine commits and pushes; the first pulls: both end the same
    commit(b, "B's people")
    git(b, "push", "-q")
    git(a, "pull", "-q", "--autostash")
    with open_vault(a) as v:
        v.sync()
    with open_vault(b) as v:
        v.sync()
    for rel in ("MEMORY.md", "people/people.md"):
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_a_folder_note_of_a_vault_git_does_not_keep_is_not_staged(tmp_path: Path) -> None:
    """A vault kept as a folder of a project's repository that git does not track (the
    person never added it: their notes stay on this machine): memvault's folder note was
    the one file of the vault `git add`ed, and the person's next `git commit` of their
    own change committed it into the project. Only a vault git keeps (a file of it
    tracked) shares its folder notes with other clones; another is left untouched."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    write(project, "README.md", "An app.\n")
    commit(project, "app")
    root = project / "notes" / "memory"
    init_vault(root)
    limit_people(root, 2)
    for name in ("ann", "bea", "cy"):
        write(root, f"people/{name}.md", note(name.title(), f"{name.title()} is new."))
    with open_vault(root) as v:
        v.sync()
    assert (root / "people" / "people.md").is_file()
    assert git(project, "diff", "--cached", "--name-only").stdout == ""
    write(project, "README.md", "An app, changed.\n")
    git(project, "commit", "-q", "-am", "the person's change")
    shown = git(project, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert shown == ["README.md"]


def test_a_folder_note_of_a_vault_in_a_folder_of_the_repository_is_staged(
    tmp_path: Path,
) -> None:
    """A vault git keeps as a folder of a larger repository, its path with a space and
    an accent: the folder note is staged at its path in the repository."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    root = project / "team notes" / "mémoire"
    init_vault(root)
    limit_people(root, 2)
    commit(project, "the vault")
    for name in ("ann", "bea", "cy"):
        write(root, f"people/{name}.md", note(name.title(), f"{name.title()} is new."))
    with open_vault(root) as v:
        v.sync()
    staged = git(project, "-c", "core.quotepath=off", "diff", "--cached", "--name-only")
    assert staged.stdout.splitlines() == ["team notes/mémoire/people/people.md"]


@pytest.mark.parametrize("how", ["--no-rebase", "--rebase"])
def test_a_folder_note_both_machines_made_and_committed_merges_into_one_list(
    tmp_path: Path, how: str
) -> None:
    """Field test: both machines' people/people.md made (and staged) apart, the second
    machine's plain `git pull` refused over it, as over MEMORY.md; the way through git
    gives, commit then pull, merged the two added files line by line (no version in
    common): one side's count line, begin marker and list, then the other's, the one
    end marker. memvault left that note untouched ("section 'folder' begins inside
    'folder'"), both lists in it. Now the list is one again, every note in it once."""
    a, b = machines(tmp_path)
    limit_people(a, 2)
    commit(a, "limit 2")
    git(a, "push", "-q")
    git(b, "pull", "-q")
    for root, names in ((a, ["bea", "cy"]), (b, ["di", "ed", "fay"])):
        for name in names:
            write(root, f"people/{name}.md", note(name.title(), f"{name.title()} is new."))
            with open_vault(root) as v:
                v.sync()  # a note at a time: B's staged folder note changed since (AM)
    commit(a, "A's people")
    git(a, "push", "-q")
    refused = git(b, "pull", "-q", "--no-rebase", check=False)
    assert refused.returncode != 0 and "people/people.md" in refused.stderr
    commit(b, "B's people")  # the way through git's message gives
    git(b, "pull", "-q", how)
    with open_vault(b) as v:
        v.sync()
    folder_note = (b / "people" / "people.md").read_text("utf-8")
    assert folder_note.count("<!-- memvault:begin folder -->") == 1, folder_note
    assert folder_note.count("All 6 people in this folder.") == 1, folder_note
    for name in ("ann", "bea", "cy", "di", "ed", "fay"):
        assert folder_note.count(f"- [[people/{name}]] - ") == 1, folder_note
    commit(b, "merged")
    git(b, "push", "-q")
    git(a, "pull", "-q")
    with open_vault(a) as v:
        v.sync()
    assert status(a) == "" and status(b) == ""


def _staged(root: Path) -> list[str]:
    return git(root, "diff", "--cached", "--name-only").stdout.split()


def _people_to_the_limit(tmp_path: Path) -> Path:
    """A vault in git, Key People at its limit (2): the next person makes people.md."""
    root = git_vault(tmp_path)
    limit_people(root, 2)
    for name in ("ann", "bea"):
        write(root, f"people/{name}.md", note(name.title(), f"{name.title()} is here."))
    with open_vault(root) as v:
        v.sync()
    commit(root, "base")
    return root


def _stage_a_change_of_theirs(root: Path) -> None:
    """The person's change to ann.md, staged for a commit of its own (`git add`)."""
    ann = root / "people" / "ann.md"
    ann.write_text(ann.read_text("utf-8") + "Ann moved to Oslo.\n", "utf-8")
    git(root, "add", "people/ann.md")


def test_a_folder_note_made_while_the_person_has_changes_staged_waits_for_their_commit(
    tmp_path: Path,
) -> None:
    """Found checking as a careful user: the person had staged one note for a commit of
    its own (`git add people/ann.md`); a folder note memvault made meanwhile was `git
    add`ed, and their `git commit -m ann` took it along, listing notes they had not
    added. It now waits while they have changes staged, and is added once they are
    committed (the next update, or the daemon's tick), for the other clone's pull."""
    root = _people_to_the_limit(tmp_path)
    _stage_a_change_of_theirs(root)
    write(root, "people/cy.md", note("Cy", "Cy is new."))
    with open_vault(root) as v:
        v.sync()
        assert (root / "people" / "people.md").is_file()
        assert _staged(root) == ["people/ann.md"]  # before: people/people.md too
        git(root, "commit", "-q", "-m", "ann moved")
        shown = git(root, "show", "--name-only", "--format=", "HEAD").stdout.split()
        assert shown == ["people/ann.md"]
        write(root, "people/di.md", note("Di", "Di is new."))
        v.sync()  # the next update adds it
    assert _staged(root) == ["people/people.md"]


def test_the_daemon_adds_a_folder_note_once_the_persons_commit_is_made(
    tmp_path: Path,
) -> None:
    """With a real daemon: the folder note made while the person's change was staged
    is left untracked, and `git add`ed within a tick of their `git commit`, no note
    changed since."""
    root = _people_to_the_limit(tmp_path)
    _stage_a_change_of_theirs(root)
    proc = Proc(tmp_path, root)
    try:
        info = proc.info()
        eventually(lambda: settled(info), what="the start-up reconcile")
        write(root, "people/cy.md", note("Cy", "Cy is new."))
        eventually(lambda: (root / "people" / "people.md").is_file(), what="people.md made")
        eventually(lambda: settled(info), what="the sync")
        assert _staged(root) == ["people/ann.md"]  # before: people/people.md too
        git(root, "commit", "-q", "-m", "ann moved")
        eventually(lambda: _staged(root) == ["people/people.md"], what="people.md staged")
    finally:
        proc.stop()


def test_a_folder_note_kept_for_later_is_added_after_a_rebase_too(tmp_path: Path) -> None:
    """The folder note kept while the person's change was staged, then a rebase (the
    person committed and ran `git pull --rebase`, stopped at a conflict): tried while git
    was busy, it was let go for good, and never added. It waits for the rebase too."""
    root = _people_to_the_limit(tmp_path)
    _stage_a_change_of_theirs(root)
    write(root, "people/cy.md", note("Cy", "Cy is new."))
    with open_vault(root) as v:
        v.sync()
        assert _staged(root) == ["people/ann.md"]
        git(root, "commit", "-q", "-m", "ann moved")
        rebase_merge = Path(git(root, "rev-parse", "--git-path", "rebase-merge").stdout.strip())
        rebase_merge = rebase_merge if rebase_merge.is_absolute() else root / rebase_merge
        rebase_merge.mkdir()  # git mid rebase, as a stopped `git pull --rebase` leaves it
        assert v.engine.linker.staging.retry() == []
        rebase_merge.rmdir()  # done
        assert v.engine.linker.staging.retry() == ["people/people.md"]  # before: []
    assert _staged(root) == ["people/people.md"]


def test_a_folder_note_kept_for_later_is_added_by_the_next_process(tmp_path: Path) -> None:
    """Found reviewing: the folder note kept while the person's change was staged was
    remembered by that process alone. Made by `memvault sync` (or a daemon stopped
    before the person committed), it was never added: untracked for good, and the
    other clone's pull that brings its own was refused, as before memvault added its
    folder notes. The next process's update adds it once the commit is made."""
    root = _people_to_the_limit(tmp_path)
    _stage_a_change_of_theirs(root)
    write(root, "people/cy.md", note("Cy", "Cy is new."))
    with open_vault(root) as v:
        v.sync()
    assert (root / "people" / "people.md").is_file()
    assert _staged(root) == ["people/ann.md"]
    git(root, "commit", "-q", "-m", "ann moved")
    write(root, "people/di.md", note("Di", "Di is new."))
    with open_vault(root) as v:
        v.sync()
    assert _staged(root) == ["people/people.md"]  # before: [] (untracked for good)


def test_a_folder_note_memvault_staged_is_not_the_persons_change(tmp_path: Path) -> None:
    """Found reviewing: a folder note memvault added (nothing of the person's staged)
    counted as the person's change staged: the next folder note memvault made was left
    untracked until the person's next commit, and the other clone's pull refused."""
    root = _people_to_the_limit(tmp_path)
    config = root / ".memvault" / "config.toml"
    old = 'folder = "decisions"\norder = "date"\nlimit = 8'
    text = config.read_text("utf-8")
    assert old in text
    config.write_text(text.replace(old, old[:-1] + "1"), "utf-8")
    write(root, "decisions/one.md", note("One", "One.", date="2024-01-01"))
    with open_vault(root) as v:
        v.sync()
    commit(root, "one decision")
    write(root, "people/cy.md", note("Cy", "Cy is new."))
    with open_vault(root) as v:
        v.sync()
        assert _staged(root) == ["people/people.md"]
        write(root, "decisions/two.md", note("Two", "Two.", date="2024-01-02"))
        v.sync()
    assert (root / "decisions" / "decisions.md").is_file()
    # before: ['people/people.md'] (decisions.md left untracked)
    assert _staged(root) == ["decisions/decisions.md", "people/people.md"]


def test_a_folder_note_made_while_another_git_holds_the_index_is_added_after(
    tmp_path: Path,
) -> None:
    """Found reviewing: a `git add` of a folder note tried while another git held the
    index (index.lock: the person's `git add`, `git commit`, as retries come when git's
    index changed) let the note go for good, untracked. It is tried again once the
    index is free."""
    root = _people_to_the_limit(tmp_path)
    write(root, "people/cy.md", note("Cy", "Cy is new."))
    with open_vault(root) as v:
        lock = root / ".git" / "index.lock"
        lock.write_bytes(b"")  # another git writing the index this moment
        v.sync()  # (waits: git is busy)
        folder_note = root / "people" / "people.md"
        folder_note.write_text((root / "people" / "cy.md").read_text("utf-8"), "utf-8")
        assert v.engine.linker.staging.made("people/people.md") is False
        lock.unlink()
        assert v.engine.linker.staging.retry() == ["people/people.md"]  # before: []
    assert _staged(root) == ["people/people.md"]


def test_status_says_how_to_pull_over_a_folder_note_left_unadded(tmp_path: Path) -> None:
    """Found reproducing with two clones: B had a change staged, so the folder note its
    daemon made was left untracked; A made the same one and pushed, and B's `git pull
    --autostash` was refused ("untracked working tree files would be overwritten by
    merge: people/people.md"), status silent. Status now names the note and the command
    that goes through; run, the pull merges both machines' lists."""
    import json

    from typer.testing import CliRunner

    from memvault.interfaces.cli import app

    a, b = machines(tmp_path)
    limit_people(a, 2)
    commit(a, "limit 2")
    git(a, "push", "-q")
    git(b, "pull", "-q")
    for root, names in ((a, ["bea", "cy"]), (b, ["di", "ed"])):
        for name in names:
            write(root, f"people/{name}.md", note(name.title(), f"{name.title()} is new."))
    _stage_a_change_of_theirs(b)
    for root in (a, b):
        with open_vault(root) as v:
            v.sync()
    assert _staged(b) == ["people/ann.md"]  # people.md left for after their commit
    commit(a, "A's people")
    git(a, "push", "-q")
    pulled = git(b, "pull", "-q", "--autostash", check=False)
    assert pulled.returncode != 0 and "people/people.md" in pulled.stderr, pulled.stderr
    run = CliRunner().invoke
    said = json.loads(run(app, ["status", "--json", "--vault", str(b)]).stdout)
    assert said.get("git_folder_notes_unadded") == ["people/people.md"]
    human = " ".join(run(app, ["status", "--vault", str(b)]).stdout.split())
    command = "git add people/people.md && git pull --autostash"
    assert command in human, human  # before: nothing said
    git(b, "add", "people/people.md")
    assert git(b, "pull", "-q", "--autostash", check=False).returncode == 0
    with open_vault(b) as v:
        v.sync()
    folder_note = (b / "people" / "people.md").read_text("utf-8")
    for name in ("ann", "bea", "cy", "di", "ed"):
        assert f"- [[people/{name}]] - " in folder_note, folder_note
    assert "Ann moved to Oslo." in (b / "people" / "ann.md").read_text("utf-8")
    said = json.loads(run(app, ["status", "--json", "--vault", str(b)]).stdout)
    assert said["git_folder_notes_unadded"] == []
