"""A team's index in PostgreSQL with no writer running (docs/TEAM.md): the writer's
machine with its daemon stopped, or a clone while none runs. A search or context with no
daemon reads the index as its last writer left it and syncs nothing (a read never makes
this copy the writer); what it misses of this copy's notes is said, not left out
silently. A real server (pgserver), the CLI as a process, the Python API."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from anyio.from_thread import start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from helpers import make_vault, memvault_env, note, open_vault, run_memvault, write

NEW = "people/zoe-quark.md"


@pytest.fixture
def team_vault(tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example vault indexed in PostgreSQL by a writer that has stopped since."""
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = make_vault(tmp_path, "team")
    with open_vault(root) as writer:
        writer.sync()
    return root


def _new_note(root: Path) -> None:
    write(root, NEW, note("Zoe Quark", body="Zoe owns the zanzibar billing pipeline."))


def test_a_search_with_no_writer_running_names_the_notes_its_answer_misses(
    tmp_path: Path, team_vault: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person writes a note on the writer's machine, its daemon stopped, and asks:
    the answer, from the index as it was, lacks the note, and exit 0 said nothing (on a
    vault of its own the same search syncs first and finds it)."""
    _new_note(team_vault)
    env = memvault_env(
        tmp_path,
        MEMVAULT_INDEX_STORE="postgres",
        MEMVAULT_INDEX_DSN=pg_dsn,
        MEMVAULT_INDEX_SCHEMA=os.environ["MEMVAULT_INDEX_SCHEMA"],
    )
    for command in ("search", "context"):
        asked = run_memvault(command, "zanzibar billing", "--vault", str(team_vault), env=env)
        assert asked.returncode == 0, asked.stderr
        assert "which lacks 1 note of this copy (people/zoe-quark.md)" in (asked.stderr), (
            asked.stderr
        )
        assert "no writer runs to index them; `memvault up`" in asked.stderr, asked.stderr
    # the Python API (and so the MCP server's `note`) has it too
    with open_vault(team_vault, mode="query") as reader:
        assert reader.engine.read_only  # nothing was synced: the read wrote nothing
        assert reader.stale is not None and NEW in reader.stale


def test_a_search_says_nothing_when_the_files_are_the_index_or_a_writer_keeps_it(
    team_vault: Path,
) -> None:
    with open_vault(team_vault, mode="query") as reader:
        assert reader.engine.read_only and reader.stale is None  # nothing changed
    _new_note(team_vault)
    with open_vault(team_vault) as writer:  # a writer holds the lock (and indexed it)
        writer.sync()
        with open_vault(team_vault, mode="query") as reader:
            assert reader.engine.read_only
            assert reader.stale is None
            assert any(h.path == NEW for h in reader.search("zanzibar billing", k=3))


def test_the_mcp_server_with_no_writer_running_notes_what_its_answer_misses(
    team_vault: Path, pg_dsn: str
) -> None:
    """An agent reads no server's stderr: the tool result's `note` names the note (the
    real MCP client, the server a process over stdio)."""
    _new_note(team_vault)
    env = {
        "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "daemon"),
        "MEMVAULT_INDEX_MODEL": "hash",
        "MEMVAULT_INDEX_STORE": "postgres",
        "MEMVAULT_INDEX_DSN": pg_dsn,
        "MEMVAULT_INDEX_SCHEMA": os.environ["MEMVAULT_INDEX_SCHEMA"],
        "HF_HUB_OFFLINE": "1",
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memvault", "mcp", "--vault", str(team_vault)],
        env=env,
        cwd=str(team_vault.parent),
    )

    async def ask() -> tuple[dict[str, Any], str]:
        with (team_vault.parent / "mcp-stderr.log").open("w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                found = await s.call_tool("memory_search", {"query": "zanzibar billing"})
                context = await s.call_tool("memory_context", {"query": "zanzibar billing"})
                text = "".join(c.text for c in context.content if isinstance(c, types.TextContent))
                assert not found.is_error and not context.is_error
                return found.structured_content or {}, text

    with start_blocking_portal() as portal:
        found, context = portal.call(ask)
    assert NEW in found.get("note", ""), found.get("note")
    assert "no writer runs to index them" in found["note"]
    assert "(Note: this answer is from the team's index" in context and NEW in context


def test_a_search_with_no_writer_running_names_a_note_edited_here(team_vault: Path) -> None:
    """A review (rev56b): the person edits a note on the writer's machine, its daemon
    stopped, and asks for the words just written: no hit (the index has the note as it
    was), so no hit marked `this_copy`, and the names compared alike: nothing said."""
    sarah = team_vault / "people" / "sarah-chen.md"
    sarah.write_text(
        sarah.read_text(encoding="utf-8") + "\nSarah now owns the zanzibar billing pipeline.\n",
        encoding="utf-8",
    )
    with open_vault(team_vault, mode="query") as reader:
        assert reader.engine.read_only
        assert not any(h.path == "people/sarah-chen.md" for h in reader.search("zanzibar", k=3))
        assert reader.stale is not None, "an edit here said nothing"
        assert "1 note changed here (people/sarah-chen.md)" in reader.stale, reader.stale


def test_a_clone_whose_every_time_is_gits_is_no_note_changed(team_vault: Path) -> None:
    """A clone: every note's time is git's, none as indexed, its words the index's; nor is
    a note whose line ends alone differ (a Windows writer's checkout). Nothing said."""
    for path in team_vault.rglob("*.md"):
        if ".memvault" not in path.parts:
            os.utime(path, (1_700_000_000, 1_700_000_000))
    log = team_vault / "logs" / "2024-03-15.md"
    log.write_bytes(log.read_bytes().replace(b"\n", b"\r\n"))
    with open_vault(team_vault, mode="query") as reader:
        assert reader.engine.read_only and reader.stale is None, reader.stale


def test_a_clone_with_no_writer_running_is_told_its_notes_reach_the_index_by_git(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review (rev56b): on a clone, its own new note missing from the team's index, it
    was told "`memvault up` on the writer's machine does (here, if this copy is the
    writer's)": the writer indexes its own copy, which lacks the note until it is
    committed, pushed and pulled there; and this copy is not the writer's. The index
    keeps its last writer's host (meta vault_commit, in git)."""
    import subprocess

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    writer = make_vault(tmp_path / "machine-a", "team")
    git = ["git", "-c", "user.email=a@x", "-c", "user.name=a"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "vault"]):
        subprocess.run([*git, "-C", str(writer), *args], check=True, capture_output=True)
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "machine-a")
    with open_vault(writer) as kept:
        kept.sync()
    clone = tmp_path / "machine-b" / "team"
    subprocess.run([*git, "clone", "-q", str(writer), str(clone)], check=True, capture_output=True)
    _new_note(clone)
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "machine-b")
    with open_vault(clone, mode="query") as reader:
        assert reader.engine.read_only
        said = reader.stale or ""
        assert f"which lacks 1 note of this copy ({NEW})" in said, said
        assert "the writer's machine (machine-a) indexes them once its copy has them" in said
        assert "commit and push here, pull there" in said, said
    _new_note(writer)  # on the writer's own machine, its daemon stopped
    monkeypatch.setenv("MEMVAULT_HOSTNAME", "machine-a")
    with open_vault(writer, mode="query") as reader:
        said = reader.stale or ""
        assert "no writer runs to index them; `memvault up` here does" in said, said
