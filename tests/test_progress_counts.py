"""Progress and sync reports count notes as notes.

`up` said "indexing: 384/5,300 notes, 384 chunks embedded" (5,300 were chunks; the vault
had 3,000 notes), its first bar counted MEMORY.md as a note, and a new empty vault's
sync reported "1 created" (MEMORY.md) while `status` said 0 notes. Real vault, real
SQLite, the hash embedder.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from helpers import new_vault, note, open_vault, write
from memvault.engine.indexer import Progress
from memvault.interfaces.cli import app as cli_app
from memvault.interfaces.cli import common


def test_a_new_empty_vault_reports_nothing_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    runner = CliRunner()
    said = runner.invoke(cli_app, ["sync", "--vault", str(root), "--json"])
    assert said.exit_code == 0, said.output
    assert json.loads(said.stdout)["created"] == []
    status = runner.invoke(cli_app, ["status", "--vault", str(root), "--json"])
    assert json.loads(status.stdout)["notes"] == 0


def test_the_first_sync_counts_the_notes_and_not_memory_md(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    for i in range(30):
        write(root, f"people/p{i:02}.md", note(f"P {i}", f"person {i}"))
    seen: list[Any] = []
    with open_vault(root) as v:
        report = v.sync(progress=seen.append)
        assert v.status()["notes"] == 30
    notes_stage = [p for p in seen if p.stage == "notes"]
    assert notes_stage and {p.total for p in notes_stage} == {30}  # was 31, MEMORY.md too
    assert notes_stage[-1].done == 30
    assert len(report.created) == 30 and "MEMORY.md" not in report.created


def test_a_line_of_progress_calls_chunks_chunks() -> None:
    rate = common.Rate(clock=lambda: 0.0)
    line = common.progress_line("indexing", Progress(384, 5300, 384, "vectors"), rate)
    assert line == "indexing: 384/5,300 chunks given vectors, estimating time left"
    line = common.progress_line("indexing", Progress(1200, 3000, 0, "notes"), rate)
    assert line == "indexing: 1,200/3,000 notes, estimating time left"


def test_the_bar_names_what_it_counts_in_each_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=buf, force_terminal=False, width=200))
    monkeypatch.setattr(common, "PROGRESS_LINE_SECONDS", 0.0)
    with common.progress_bar("indexing") as bar:
        bar(Progress(100, 3000, 0, "notes"))
        bar(Progress(384, 5300, 384, "vectors"))
    assert buf.getvalue().splitlines() == [
        "indexing: 100/3,000 notes, estimating time left",
        "indexing: 384/5,300 chunks given vectors, estimating time left",
    ]
