"""Review of wcold (a write with no daemon follows the change) and writes51 (what an
agent's write answers): the defects found, each a test that failed on the branch head."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import new_vault, note, open_vault, write


def _listings(root: Path) -> dict[str, str]:
    out = {"MEMORY.md": (root / "MEMORY.md").read_text("utf-8")}
    for folder in ("people", "projects", "decisions", "logs"):
        path = root / folder / f"{folder}.md"
        if path.exists():
            out[path.name] = path.read_text("utf-8")
    return out


def _fresh(root: Path, tmp_path: Path, tag: str) -> dict[str, str]:
    copy = tmp_path / f"fresh-{tag}"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    with open_vault(copy) as fresh:
        fresh.sync(vectors=False)
    return _listings(copy)


def test_an_update_whose_body_is_part_of_a_line_is_written(tmp_path: Path) -> None:
    """`add --update` skipped a body found anywhere in the note's text, a part of a line
    included: "Budget: 10" onto a note saying "Budget: 100 EUR" was dropped, and
    writes51 answered ``written: false`` (the note "holds it"), the agent's new fact
    lost. A retry (the same body, whole lines at the note's end) still writes nothing."""
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        made = v.add("projects", "Harbour", summary="budget", body="Budget: 100 EUR a month.\n")
        changed = v.add("projects", "Harbour", body="Budget: 10", update=True)
        assert changed.written
        text = (root / made.path).read_text("utf-8")
        assert text.endswith("Budget: 100 EUR a month.\n\nBudget: 10\n")
        again = v.add("projects", "Harbour", body="Budget: 10", update=True)
        assert not again.written  # an agent retrying: whole lines the note holds
        assert (root / made.path).read_text("utf-8") == text


def test_a_write_with_no_daemon_on_postgres_lists_as_a_fresh_index(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """wcold's lean reads (now the kept keys of note_lists, note_titles) are SQL PgStore inherits:
    a no-daemon add and update on the PostgreSQL index list MEMORY.md as SQLite's does."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = new_vault(tmp_path)
    for i, title in enumerate(["Éclair", "alpha", "Beta", "topic-10", "topic-2"]):
        write(root, f"people/p{i}.md", note(title, f"person {i}", updated="2026-01-01"))
    with open_vault(root) as v:
        v.sync(vectors=False)
    with open_vault(root) as v:
        v.add("people", "Zoë", summary="new")
        v.add("people", "alpha", summary="found by title", update=True)
        assert v.engine.catalogue._rows is None
    memory = (root / "MEMORY.md").read_text("utf-8")
    assert "found by title" in (root / "people" / "p1.md").read_text("utf-8")
    assert "- [[people/zoë]] - new" in memory
    monkeypatch.delenv("MEMVAULT_INDEX_STORE")
    assert _fresh(root, tmp_path, "pg") == _listings(root)


def test_a_list_of_web_links_is_no_index_of_notes() -> None:
    """memory_own.is_index read any markdown link as a pointer to a note: a dump of an
    agent's events, each line a pull request's or a ticket's link and what happened,
    was "an index of links ... the notes it links stay as they are" (status, init), so
    `memvault migrate` was not named for it; it links no note."""
    from memvault.core.memory_own import is_index, pointer  # (writes51's module)

    events = [
        f"- [PR {i}](https://github.com/acme/api/pull/{i}) merged: fixes flaky test {i}"
        for i in range(300)
    ]
    assert pointer(events[0]) is None
    assert pointer("- [Spec](<https://acme.test/spec>) — the spec") is None
    assert not is_index(events)
    assert pointer("- [Debugging](debugging.md) — how we bisect") == "debugging.md"
    assert pointer("- [Setup](./topics/setup.md) — first day") == "./topics/setup.md"
