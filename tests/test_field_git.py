"""A team's memory synced by git between two machines (a field test's findings).

Two clones of one bare remote, each its own vault and index, real git: what a pull
brings must keep every person's words and leave MEMORY.md true on both machines.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import note, open_vault, write
from memvault.vault.template import init_vault
from test_memory_git import commit, git, status


def machines(tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote and two clones of it, A (which made the vault) and B."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    a = tmp_path / "A"
    init_vault(a)
    git(a, "init", "-q", "-b", "main")
    git(a, "remote", "add", "origin", str(remote))
    write(a, "people/ann.md", note("Ann", "Ann leads the data team."))
    with open_vault(a) as v:
        v.sync()
    commit(a, "vault")
    git(a, "push", "-q", "-u", "origin", "main")
    b = tmp_path / "B"
    git(tmp_path, "clone", "-q", str(remote), str(b))
    with open_vault(b) as v:
        v.sync()
    return a, b


def people_lines(root: Path) -> list[str]:
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    body = text.split("<!-- memvault:begin people -->\n", 1)[1]
    return body.split("<!-- memvault:end people -->", 1)[0].splitlines()


def test_a_line_a_person_wrote_for_a_note_to_come_survives_both_machines(
    tmp_path: Path,
) -> None:
    """Field test: a person typed ``- [[people/zed]] - Zed ... phone`` in Key People
    (Obsidian makes the note when the link is clicked); the next sync deleted the line,
    their words with it, as if it were a stale line of memvault's."""
    a, b = machines(tmp_path)
    mine = "- [[people/zed]] - Zed, our contractor: phone 555-0100"
    text = (b / "MEMORY.md").read_text(encoding="utf-8")
    text = text.replace("<!-- memvault:end people -->", mine + "\n<!-- memvault:end people -->")
    (b / "MEMORY.md").write_text(text, encoding="utf-8")
    with open_vault(b) as v:
        v.sync()
    assert mine in people_lines(b)
    commit(b, "zed to come")
    git(b, "push", "-q")

    git(a, "pull", "-q")
    with open_vault(a) as v:
        v.sync()
    assert people_lines(a) == ["- [[people/ann]] - Ann leads the data team.", mine]
    assert status(a) == ""

    # A deletes Ann and commits before its index saw it; B listed her: her line goes
    git(a, "rm", "-q", "people/ann.md")
    git(a, "commit", "-q", "-m", "ann left")
    git(a, "push", "-q")
    git(b, "pull", "-q")
    with open_vault(b) as v:
        v.sync()
    assert people_lines(b) == [mine]

    # the note comes: the person's line lists it, once
    write(b, "people/zed.md", note("Zed", "Zed, contractor."))
    with open_vault(b) as v:
        v.sync()
    assert people_lines(b) == [mine]
