"""A clone's note saved while a writer runs elsewhere (docs/TEAM.md): the team's index
has it only once the writer's machine does (git: commit and push here, pull there), and a
search on the clone missed it and said nothing. The clone's reader daemon notes the paths
that change here; its searches and contexts name those the index lacks or holds older,
with what brings them there. A real server (pgserver), real git with a remote, a real
writer daemon and a real reader daemon, the CLI as a process, the Python API."""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from anyio.from_thread import start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from helpers import DaemonProcess, eventually, memvault_env, note, run_memvault, write
from memvault.api import Vault
from pg_helpers import git_out, team_clones, team_settings

ANA = "people/ana-quill.md"
SARAH = "people/sarah-chen.md"


Machines = tuple[Path, Path, dict[str, str], list[DaemonProcess]]


@pytest.fixture
def machines(tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Machines]:
    """Machine a: the writer's clone and its daemon, its first index done; machine b: a
    clone of the same remote. Yields (a, b, the team's settings, b's daemons: a test
    puts there the ones it starts, each stopped before the writer)."""
    settings = team_settings(pg_dsn, monkeypatch)
    a, b = team_clones(tmp_path)
    writer = DaemonProcess(tmp_path, a, "up", str(a), **settings, MEMVAULT_HOSTNAME="a")
    readers: list[DaemonProcess] = []
    try:
        writer.ready(answering=True)
        eventually(lambda: _indexed(a, SARAH), 60, "the writer's first index")
        yield a, b, settings, readers
    finally:
        for reader in readers:
            reader.stop()
        writer.stop()


@pytest.fixture
def team(tmp_path: Path, machines: Machines) -> tuple[Path, Path, dict[str, str]]:
    """``machines``, and machine b's reader daemon. Returns (a, b, b's settings)."""
    a, b, settings, readers = machines
    reader = DaemonProcess(tmp_path, b, "up", str(b), **settings, MEMVAULT_HOSTNAME="b")
    readers.append(reader)
    reader.ready(answering=True)
    assert "read-only: this is a reader of the index" in reader.stderr
    return a, b, memvault_env(tmp_path, **settings, MEMVAULT_HOSTNAME="b")


def _mcp_search(root: Path, env: dict[str, str]) -> dict[str, Any]:
    """memory_search through the MCP server (a process over stdio, the real client)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memvault", "mcp", "--vault", str(root)],
        env=env,
        cwd=str(root.parent),
    )

    async def ask() -> dict[str, Any]:
        with (root.parent / "mcp-stderr.log").open("w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                found = await s.call_tool("memory_search", {"query": "quill harpsichord"})
                assert not found.is_error
                return found.structured_content or {}

    with start_blocking_portal() as portal:
        return portal.call(ask)


def _indexed(root: Path, path: str) -> bool:
    with Vault.open(root, mode="peek") as v:
        return v.engine.store.note(path) is not None


def _asked(b: Path) -> tuple[list[str], str | None]:
    """A search on b through its reader daemon: the hits' paths and the note."""
    with Vault.open(b, mode="query") as v:
        assert v.daemon is not None  # through the reader daemon
        hits = v.search("quill harpsichord tuning", k=5)
        return [h.path for h in hits], v.stale


def test_a_clones_note_saved_while_the_writer_runs_is_named_until_the_index_has_it(
    team: tuple[Path, Path, dict[str, str]],
) -> None:
    a, b, env = team
    assert _asked(b)[1] is None  # nothing changed here: nothing said
    write(b, ANA, note("Ana Quill", body="Ana owns the quill harpsichord tuning."))
    sarah = (b / SARAH).read_text(encoding="utf-8")
    write(b, SARAH, sarah + "\nSarah tunes the quill harpsichord on Fridays.\n")

    def said() -> str | None:
        note = _asked(b)[1]
        return note if note and ANA in note and SARAH in note else None

    stale = eventually(said, 30, "the clone's notes named")
    assert "lacks 1 note of this copy (people/ana-quill.md)" in stale, stale
    assert "1 note changed here (it holds an older copy) (people/sarah-chen.md)" in stale
    assert "its writer (a) indexes them once its copy has them" in stale
    assert "commit and push here, pull there" in stale
    # the CLI through the reader daemon says it (stderr); the HTTP answer carries it
    for command in ("search", "context"):
        asked = run_memvault(command, "quill harpsichord", "--vault", str(b), env=env)
        assert asked.returncode == 0, asked.stderr
        assert "lacks 1 note of this copy (people/ana-quill.md)" in asked.stderr, asked.stderr
    assert ANA in _mcp_search(b, env).get("note", "")  # an agent reads no stderr
    with Vault.open(b, mode="query") as v:
        assert v.daemon is not None
        http = httpx.post(
            f"{v.daemon.base_url}/search",
            json={"query": "quill harpsichord"},
            headers={"Authorization": f"Bearer {v.daemon._token}"},
            trust_env=False,
        )
        assert ANA in http.json()["note"]
    # committed and pushed here, pulled there: the writer indexes them, nothing is said
    git_out(b, "add", "-A")
    git_out(b, "commit", "-qm", "Ana")
    git_out(b, "push", "-q", "origin", "main")
    git_out(a, "pull", "-q", "--ff-only")
    eventually(lambda: _indexed(a, ANA), 60, "the writer to index the pulled note")

    def quiet() -> bool:
        paths, note = _asked(b)
        return note is None and ANA in paths

    eventually(quiet, 60, "the clone's search to find Ana and say nothing")


def test_a_note_saved_or_committed_before_the_reader_daemon_started_is_named_too(
    tmp_path: Path, machines: Machines
) -> None:
    """The person writes a note and commits it without pushing, writes another, then
    starts the reader daemon (a laptop's login): its watcher never saw those saves; git
    knows them."""
    _, b, settings, readers = machines
    write(b, ANA, note("Ana Quill", body="Ana owns the quill harpsichord tuning."))
    git_out(b, "add", "-A")
    git_out(b, "commit", "-qm", "Ana, not pushed")
    write(b, "people/bo.md", note("Bo", body="Bo fixes the quill harpsichord."))
    reader = DaemonProcess(tmp_path, b, "up", str(b), **settings, MEMVAULT_HOSTNAME="b")
    readers.append(reader)
    reader.ready(answering=True)
    stale = _asked(b)[1]
    assert stale is not None
    assert "lacks 2 notes of this copy (people/ana-quill.md, people/bo.md)" in stale, stale


def test_notes_no_index_holds_are_not_named_by_a_reader_daemon(
    tmp_path: Path, machines: Machines
) -> None:
    """A first day on a clone: the person edits a template (``templates/**``, which
    memvault ignores by default), Obsidian moves a deleted note to its ``.trash/``, a
    sync tool leaves a conflict copy, a symlinked note leads out of the vault (the scan
    skips it); none of them is a note the team's index would ever hold. Git lists them
    as edited or untracked at the reader daemon's start (the watcher, a symlink saved):
    they were named on every search as notes the index lacks, for as long as it ran,
    with the advice to commit and push them."""
    _, b, settings, readers = machines
    template = b / "templates" / "person.md"
    template.write_text(template.read_text(encoding="utf-8") + "\n## Tuning\n", "utf-8")
    write(b, ".trash/old-quill.md", note("Old", body="The quill harpsichord, once."))
    write(b, "people/ana (conflicted copy).md", note("Ana", body="A quill harpsichord."))
    outside = tmp_path / "machine-b" / "inbox.md"  # a symlink out of the vault: skipped
    outside.write_text(note("Inbox", body="The quill harpsichord inbox."), "utf-8")
    (b / "inbox.md").symlink_to(outside)
    reader = DaemonProcess(tmp_path, b, "up", str(b), **settings, MEMVAULT_HOSTNAME="b")
    readers.append(reader)
    reader.ready(answering=True)
    assert _asked(b)[1] is None
    write(b, ANA, note("Ana Quill", body="Ana owns the quill harpsichord tuning."))
    stale = eventually(lambda: _asked(b)[1], 30, "the clone's new note named")
    assert "lacks 1 note of this copy (people/ana-quill.md)" in stale, stale


def _one_inotify_watch() -> None:
    """(A daemon's ``preexec``.) Its own user namespace, mapped onto this machine's ids
    (so it reaches the index's socket as before), where inotify gives one watch at most:
    a real kernel's limit reached (``fs.inotify.max_user_watches``, as a desktop's file
    indexer or an IDE leaves it), on this process alone. A helper still outside writes
    its id maps."""
    libc = ctypes.CDLL(None, use_errno=True)
    me = os.getpid()
    ask, asked = os.pipe()
    done, said = os.pipe()
    helper = os.fork()
    if helper == 0:
        try:
            os.read(ask, 1)
            for name in ("uid_map", "gid_map"):
                Path(f"/proc/{me}/{name}").write_text("0 0 65536", encoding="ascii")
            os.write(said, b"x")
        finally:
            os._exit(0)
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        raise OSError(ctypes.get_errno(), "unshare")
    os.write(asked, b"x")
    os.read(done, 1)
    os.waitpid(helper, 0)
    Path("/proc/sys/user/max_inotify_watches").write_text("1", encoding="ascii")


@pytest.mark.skipif(os.geteuid() != 0, reason="ids mapped into a user namespace: root's")
@pytest.mark.parametrize("observer", ["native", "auto"])
def test_a_reader_daemon_with_no_inotify_watch_to_be_had_serves_and_does_not_poll(
    tmp_path: Path, machines: Machines, observer: str
) -> None:
    """A clone's reader daemon serves the team's index; its watcher, new, only names
    the notes saved here. Where inotify's watches are used up, it failed to start at
    all with ``observer = "native"`` (it served before its watcher ran), and with
    ``auto`` it polled the whole vault every 2 s (9 % of a core at 10,000 notes, 41 % at
    50,000: bench/reader_idle_watch.py) where it used none. It serves, says once why saves here are not
    named, and polls nothing."""
    _, b, settings, readers = machines
    reader = DaemonProcess(
        tmp_path,
        b,
        "daemon",
        "run",
        "--vault",
        str(b),
        preexec=_one_inotify_watch,
        **settings,
        MEMVAULT_HOSTNAME="b",
        MEMVAULT_DAEMON_OBSERVER=observer,
    )
    readers.append(reader)
    reader.ready(answering=True)
    with Vault.open(b, mode="query") as v:
        assert v.daemon is not None
        assert SARAH in [h.path for h in v.search("Sarah Chen", k=5)]
        assert v.status()["daemon"]["observer"] != "polling"
    assert "the inotify watch limit is reached" in reader.stderr, reader.stderr
    assert "does not name the notes saved here" in reader.stderr, reader.stderr
