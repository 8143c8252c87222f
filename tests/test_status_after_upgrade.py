"""What `memvault status` says right after memvault was upgraded.

The upgrade of an older index marks some notes to read again (schema 16 -> 17: a note
linking ``[[Zed<U+FEFF>]]``); the first command after it, a `status` with no daemon,
said "index is behind the files: 1 notes changed since the last sync": no one changed
them. Those notes are said as memvault's to read again, apart from a person's changes.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from helpers import memvault_env, open_vault
from memvault.vault.template import init_vault


def _as_schema_16_stored_it(index: Path) -> None:
    """The link rows of ``[[Zed<U+FEFF>]]`` as schema 16 stored them (its target
    stripped as Python strips, U+FEFF kept: tests/test_link_verdicts_kept.py)."""
    with closing(sqlite3.connect(index)) as db, db:
        db.execute(
            "UPDATE links SET target = ?, name = ?, resolved = ? "
            "WHERE source = 'a.md' AND target = 'Zed'",
            ("Zed\ufeff", "zed\ufeff", "Zed\ufeff.md"),
        )
        db.execute("UPDATE meta SET value = '16' WHERE key = 'schema_version'")


def _status(tmp_path: Path, root: Path, *more: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "memvault", "status", "--vault", str(root), *more],
        env=memvault_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_status_after_an_upgrade_says_its_notes_are_memvaults_to_read_again(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    (root / "a.md").write_text("# A\n\nSee [[Zed\ufeff]].\n", "utf-8")
    (root / "Zed.md").write_text("# Zed\n\nText.\n", "utf-8")
    (root / "b.md").write_text("# B\n\nText.\n", "utf-8")
    with open_vault(root) as v:
        v.sync()
    _as_schema_16_stored_it(root / ".memvault" / "index.db")
    said = _status(tmp_path, root)  # its open upgrades the index: a.md marked
    assert "changed since the last sync" not in said, said
    assert re.search(r"index is behind: \d+ notes to read again for memvault's upgrade", said), said
    (root / "b.md").write_text("# B\n\nText, edited.\n", "utf-8")  # a person's change
    said = _status(tmp_path, root)
    assert re.search(r"1 notes changed since the last sync, and \d+ notes to read again", said), (
        said
    )


def test_status_without_an_upgrade_says_a_persons_changes_as_before(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    (root / "b.md").write_text("# B\n\nText.\n", "utf-8")
    with open_vault(root) as v:
        v.sync()
    (root / "b.md").write_text("# B\n\nText, edited.\n", "utf-8")
    said = _status(tmp_path, root)
    assert "index is behind the files: 1 notes changed since the last sync" in said, said
    assert "read again" not in said, said
