"""Issue 24: a person's first week on their own notes.

Each test here failed on the code before the issue was worked: a person's name across
accents, a vault's own capitalised folders, an ``Archive/`` of theirs, a migration into
a vault that already held the same project, preferences an agent never saw.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import new_vault, note, open_vault, write

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, cwd: Path | None = None, check: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "daemon"), MEMVAULT_INDEX_MODEL="hash")
    env.pop("MEMVAULT_VAULT", None)
    proc = subprocess.run(
        [sys.executable, "-m", "memvault", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


# -- item 5: "Ana López" and "Ana Lopez" are one person ---------------------------------------


@pytest.mark.parametrize("asked", ["Ana López", "Ana Lopez", "ana lopez", "people/Ana Lopez"])
def test_get_finds_a_note_by_its_title_across_accents(tmp_path: Path, asked: str) -> None:
    root = new_vault(tmp_path)
    write(root, "people/ana-lópez.md", note("Ana López", "Runs the data team"))
    write(root, "people/anabel.md", note("Anabel", "Not her"))
    with open_vault(root) as v:
        v.sync()
        got = v.get(asked)
    assert got.path == "people/ana-lópez.md"
    assert "Runs the data team" in got.text


def test_get_by_title_on_the_cli_and_add_finds_the_same_note(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    cli("add", "people", "--title", "Ana López", "--vault", str(root), check=True)
    got = cli("get", "Ana López", "--vault", str(root))
    assert got.returncode == 0, got.stdout + got.stderr
    assert "Ana López" in got.stdout
    again = cli("add", "people", "--title", "Ana Lopez", "--vault", str(root))
    assert again.returncode == 5, again.stdout + again.stderr  # it exists: --update changes it
    assert "ana-lópez.md" in again.stdout + again.stderr
    assert sorted(p.name for p in (root / "people").glob("*.md") if p.name != "people.md") == [
        "ana-lópez.md"
    ]


def test_a_title_two_notes_share_is_not_guessed(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "people/ana-lópez.md", note("Ana López"))
    write(root, "projects/ana-lopez.md", note("Ana Lopez"))
    with open_vault(root) as v:
        v.sync()
        from memvault.errors import NoteNotFound

        with pytest.raises(NoteNotFound):
            v.get("Ana Lopez")
