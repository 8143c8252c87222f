"""Field test of a first day: `memvault init` and `sync` on a folder of a person's own
notes that already has a long MEMORY.md of their own words. Real files, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import write
from memvault.interfaces.cli import app

runner = CliRunner()


def run(*args: str | Path) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout


def test_status_of_a_long_memory_md_of_ones_own_names_migrate_and_where_the_sections_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's 600 lines stay as they are and memvault's sections go after them.
    `status` told them to "lower memory.max_lines or a section's limit", which cannot
    shorten their own lines, and not that the sections now sit past what an agent
    loads; it says both, and names `memvault migrate`."""
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    monkeypatch.setenv("COLUMNS", "400")  # one status line a line
    root = tmp_path / "notes"
    own = "# My memory\n\n" + "".join(
        f"- {i}: talked to [[Ana]] about item {i}\n" for i in range(600)
    )
    write(root, "MEMORY.md", own)
    write(root, "People/Ana.md", "# Ana\n\nAna runs the website.\n")
    assert run("init", root)[0] == 0
    assert run("sync", "--vault", root)[0] == 0
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert text.startswith(own)  # every word of theirs, byte for byte, first
    code, out = run("status", "--vault", root)
    assert code == 1  # over budget
    assert "604 lines of it are your own text" in out  # theirs, and a section's heading
    assert "`memvault migrate MEMORY.md` splits them into notes" in out
    assert "lower memory.max_lines" not in out
    assert "memvault's sections begin at line 605" in out
    memory = json.loads(run("status", "--vault", root, "--json")[1])["memory"]
    assert (memory["own_lines"], memory["sections_from_line"]) == (604, 605)


def test_status_of_a_memory_md_long_by_its_sections_says_to_lower_their_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    monkeypatch.setenv("COLUMNS", "400")
    root = tmp_path / "notes"
    assert run("init", root)[0] == 0
    config = root / ".memvault" / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("limit = 7", "limit = 300"), encoding="utf-8"
    )
    for day in range(1, 251):
        write(
            root, f"logs/2024-{1 + day // 28:02d}-{1 + day % 28:02d}.md", f"# Day {day}\n\nwork\n"
        )
    assert run("sync", "--vault", root)[0] == 0
    _, out = run("status", "--vault", root)
    assert "lower memory.max_lines or a section's limit" in out
    assert "your own text" not in out and "sections begin at line" not in out


AGENT_INDEX = "# Memory\n\n" + "".join(
    f"- [Topic {i}](topic-{i}.md) — what we learnt about area {i}, in one line\n"
    for i in range(300)
)
DUMP = "# Memory\n\n" + "".join(
    f"- [Topic {i % 7}](topic-{i % 7}.md) said again: a dump names its notes over and over\n"
    for i in range(300)
)


@pytest.mark.parametrize(
    ("own", "migrate"),
    [(AGENT_INDEX, False), (DUMP, True)],
    ids=["an agent's index of links", "a dump whose lines open with links"],
)
def test_status_names_migrate_for_a_dump_not_for_an_agents_index_of_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own: str, migrate: bool
) -> None:
    """An agent that keeps its own index in MEMORY.md (Claude Code's auto memory: a line
    per topic file, ``- [Title](file.md) — hook``) grew it to 300 lines: status said
    "`memvault migrate MEMORY.md` splits them into notes", which would move 300 pointers
    into one inbox note. It says so for a dump only; an index is told to be shortened."""
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    monkeypatch.setenv("COLUMNS", "400")
    root = tmp_path / "notes"
    write(root, "MEMORY.md", own)
    for i in range(7):
        write(root, f"topic-{i}.md", f"# Topic {i}\n\nWhat we learnt about area {i}.\n")
    assert run("init", root)[0] == 0
    assert run("sync", "--vault", root)[0] == 0
    assert (root / "MEMORY.md").read_text(encoding="utf-8").startswith(own)
    _, out = run("status", "--vault", root)
    said = " ".join(out.split())
    assert "Claude Code loads only that much" in said
    assert ("`memvault migrate MEMORY.md` splits them into notes" in said) is migrate
    assert ("an index of links kept outside memvault's sections" in said) is not migrate
    assert "memvault's sections begin at line 305" in said  # either way: after the own lines
    memory = json.loads(run("status", "--vault", root, "--json")[1])["memory"]
    assert memory["own_index"] is not migrate and memory["own_lines"] == 304
