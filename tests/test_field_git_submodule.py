"""A vault kept in git holding another repository: a submodule of shared notes (a field
test's findings).

Its notes are the vault's to index, list and link to; its files are the other
repository's: a file memvault wrote there is a change the vault's `git add -A && git
commit` never takes, and the `git submodule update` that brings a new version of it
is refused.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import eventually, note, open_vault, write
from test_memory_git import commit, git, git_vault, status
from test_service import Proc, api, settled

SUBMODULE = ("-c", "protocol.file.allow=always", "submodule")  # a local remote (git >= 2.38.1)


def team_notes(tmp_path: Path) -> tuple[Path, Path]:
    """A notes repository (its bare remote, and the clone its people commit in) whose
    Dana links Eve, and Ann of the vault by her name."""
    remote = tmp_path / "notes.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    notes = tmp_path / "notes"
    git(tmp_path, "clone", "-q", str(remote), str(notes))
    write(
        notes, "dana.md", note("Dana", "Dana runs the shared infra.", body="With [[ann]], [[eve]].")
    )
    write(notes, "eve.md", note("Eve", "Eve is on call.", body="Backs up [[dana]]."))
    commit(notes, "team")
    git(notes, "push", "-q", "origin", "HEAD:main")
    return remote, notes


def test_memvault_writes_nothing_in_a_submodule_and_its_update_is_not_refused(
    tmp_path: Path,
) -> None:
    """Field test: shared notes added with `git submodule add` under team/, a section
    listing team/ (limit 1). The daemon made team/team.md (an untracked file in the
    submodule) and, when a person renamed ann.md in the vault, rewrote Dana's link
    inside the submodule: `git status` said ` M team`, the vault's commit did not take
    it, and the next `git submodule update --remote` bringing a change to dana.md was
    refused ("Your local changes ... would be overwritten by checkout"). Now the
    submodule's notes are indexed and listed, links to them follow their renames, and
    nothing is written in it: the link left is said, MEMORY.md counts the notes."""
    remote, notes = team_notes(tmp_path)
    root = git_vault(tmp_path)
    config = root / ".memvault" / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8")
        + '\n[[memory.sections]]\nname = "team"\ntitle = "Team"\nfolder = "team"\n'
        'order = "title"\nlimit = 1\n',
        encoding="utf-8",
    )
    write(root, "people/ann.md", note("Ann", "Ann leads the data team.", body="Knows [[eve]]."))
    with open_vault(root) as v:
        v.sync()
    commit(root, "vault")
    git(root, *SUBMODULE, "add", "-q", str(remote), "team")
    commit(root, "team notes")
    proc = Proc(tmp_path, root)
    try:
        info = proc.info()
        eventually(lambda: settled(info), what="the start-up reconcile")
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        assert "- [[team/dana]] - Dana runs the shared infra." in memory
        assert "[[team/team" not in memory and "1 more" in memory  # counted, no link
        assert not (root / "team" / "team.md").exists()
        hits = api(info, "POST", "/search", json={"query": "shared infra"}).json()["hits"]
        assert hits[0]["path"] == "team/dana.md"

        (root / "people" / "ann.md").rename(root / "people" / "annie.md")  # a person's rename

        def told() -> list[str] | None:
            d = api(info, "GET", "/status").json()["daemon"]
            said = [w for w in d["warnings"] if w.startswith("team/dana.md: its links")]
            return said if said and settled(info) else None

        assert "team/ is a git repository of its own" in eventually(told)[0]
        assert status(root / "team") == ""  # clean: nothing of memvault's in it
        # the submodule's people rename Eve and change Dana; the vault takes both
        git(notes, "mv", "eve.md", "evelyn.md")
        write(notes, "dana.md", note("Dana", "Dana runs the shared infra.", body="Now alone."))
        commit(notes, "evelyn")
        git(notes, "push", "-q", "origin", "HEAD:main")
        git(root, *SUBMODULE, "update", "-q", "--remote")  # refused before

        def relinked() -> str | None:
            text = (root / "people" / "annie.md").read_text(encoding="utf-8")
            return text if "[[evelyn]]" in text and settled(info) else None

        eventually(relinked, what="Ann's link to Eve following her rename")
        assert status(root / "team") == ""
        commit(root, "annie, evelyn")
        assert status(root) == ""
    finally:
        proc.stop()


def test_nested_repo_is_the_folder_with_a_git_of_its_own(tmp_path: Path) -> None:
    from memvault.vault.gitstate import nested_repo

    root = git_vault(tmp_path)
    (root / "team" / "sub").mkdir(parents=True)
    (root / "team" / ".git").write_text("gitdir: ../.git/modules/team\n", encoding="utf-8")
    assert nested_repo(root, "team/sub/dana.md") == "team"
    assert nested_repo(root, "team/dana.md") == "team"
    assert nested_repo(root, "people/ann.md") is None
    assert nested_repo(root, "MEMORY.md") is None  # the vault's own .git is not nested
