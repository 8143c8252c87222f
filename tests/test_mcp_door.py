"""The MCP server without a daemon keeps the vault between calls (memvault/door.py):
what it sees, and who else gets the vault meanwhile. Real servers over stdio (the SDK's
client), real CLI and daemon subprocesses, one vault each test."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from anyio.from_thread import start_blocking_portal

from helpers import DaemonProcess, eventually, memvault_env, note, run_memvault, write
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
from memvault.vault.lock import lock_holder
from memvault.vault.template import init_vault
from test_mcp_server import Server, mcp_session


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    init_vault(root, example=True)
    with Vault.open(root, embedder=HashEmbedder()) as v:  # a vault in use: indexed
        v.sync()
    return root


@contextmanager
def mcp_server(root: Path, name: str = "server", model: str | None = "hash") -> Iterator[Server]:
    """A ``memvault mcp`` over stdio, its stderr in a file beside the vault."""
    with (
        (root.parent / f"{name}-stderr.log").open("w", encoding="utf-8") as errlog,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(mcp_session(root, errlog, model)) as session,
    ):
        yield Server(portal, session, root)


def paths(server: Server, query: str) -> list[str]:
    return [h["path"] for h in server.ok("memory_search", query=query, k=5)["hits"]]


def other_holder(root: Path) -> int | None:
    """The pid holding the vault's writer lock, when it is not this process."""
    pid = lock_holder(root)
    return pid if pid != os.getpid() else None


def test_the_vault_is_kept_between_calls_and_a_note_saved_on_disk_meanwhile_is_found(
    vault: Path,
) -> None:
    with mcp_server(vault) as server:
        assert "people/sarah-chen.md" in paths(server, "Sarah Chen")
        kept_by = other_holder(vault)
        assert kept_by is not None  # the server holds the lock between calls: kept
        # a person saves notes in their editor, no daemon running
        write(vault, "people/quillon.md", note("Quillon Marsh", body="Quillon tends the orchids."))
        sarah = vault / "people" / "sarah-chen.md"
        sarah.write_text(sarah.read_text("utf-8") + "\nSarah now keeps bees.\n", "utf-8")
        assert "people/quillon.md" in paths(server, "orchids")  # a new note, by keywords
        assert "people/sarah-chen.md" in paths(server, "bees")  # an edited one
        assert "keeps bees" in server.ok("memory_get", path="people/sarah-chen.md")["text"]
        (vault / "people" / "quillon.md").unlink()
        assert "people/quillon.md" not in paths(server, "orchids")  # a deleted one
        assert "NoteNotFound" in server.refused("memory_get", path="people/quillon.md")
        # a refused request keeps the vault; every call above went to the same one
        assert other_holder(vault) == kept_by
        made = server.ok("memory_write", category="people", title="Ona Vey", body="Ona.")
        assert made["created"] and other_holder(vault) == kept_by
    # the client went away: the server let the lock go as it ended
    assert lock_holder(vault) is None


def test_the_index_deleted_under_the_kept_vault_is_built_again_not_written_unseen(
    vault: Path,
) -> None:
    # `rm .memvault/index.db` (a person starting the index afresh) under a kept vault:
    # its calls went on writing to the deleted file, which no other process opens,
    # until it was let go. The kept vault is let go; the call opens the vault again,
    # which builds the index from the notes.
    import sqlite3

    with mcp_server(vault) as server:
        assert "people/sarah-chen.md" in paths(server, "Sarah Chen")
        index = vault / ".memvault" / "index.db"
        index.unlink()
        made = server.ok("memory_write", category="people", title="Ona Vey", body="Ona.")
        assert made["created"]
        assert index.exists()
        with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as db:
            held = {r[0] for r in db.execute("SELECT path FROM notes")}
        assert {"people/sarah-chen.md", made["path"]} <= held


def test_settings_changed_between_calls_are_the_next_calls_settings(vault: Path) -> None:
    # a per-call open read config.toml at each call; the vault kept read it once: a
    # folder a person (or a git pull) added to the ignore list stayed searchable
    write(vault, "private/plan.md", note("Plan", body="The zebracorn operation."))
    with mcp_server(vault) as server:
        assert "private/plan.md" in paths(server, "zebracorn")
        kept_by = other_holder(vault)
        settings = vault / ".memvault" / "config.toml"
        text = settings.read_text("utf-8")
        assert "\nignore = [" in text
        settings.write_text(text.replace("\nignore = [", '\nignore = ["private/**", ', 1), "utf-8")
        assert "private/plan.md" not in paths(server, "zebracorn")
        assert "private/" in str(server.ok("memory_status"))  # said as ignored
        assert other_holder(vault) == kept_by  # opened again, and kept again
        # settings that no longer load are said at the call, as an open says them
        settings.write_text(text + "\n[index\n", "utf-8")
        assert "ConfigError" in server.refused("memory_search", query="zebracorn")
        settings.write_text(text, "utf-8")
        assert "private/plan.md" in paths(server, "zebracorn")


def test_a_model_changed_in_the_settings_between_calls_is_the_next_calls_model(
    vault: Path, tmp_path: Path
) -> None:
    # The server loads one model for the session. It was the one config.toml named when
    # the server started, given to every vault it opened after, which took it for a
    # fallback of the model config.toml named now: the index stayed on the old model,
    # and the next CLI sync or daemon re-embedded every note for the new one (and the
    # server's next query every note back).
    settings = vault / ".memvault" / "config.toml"
    text = settings.read_text("utf-8")
    model_line = next(ln for ln in text.splitlines() if ln.startswith("model = "))
    settings.write_text(text.replace(model_line, 'model = "hash-64"'), "utf-8")
    with mcp_server(vault, model=None) as server:
        assert "people/sarah-chen.md" in paths(server, "Sarah Chen")
        assert server.ok("memory_status")["index"]["model"] == "hash-64"
        settings.write_text(text.replace(model_line, 'model = "hash-32"'), "utf-8")
        write(vault, "people/ivo.md", note("Ivo Brand", body="Ivo carves spoons."))
        assert "people/ivo.md" in paths(server, "spoons")
        status = server.ok("memory_status")["index"]
        assert status["model"] == "hash-32", status
    env = memvault_env(tmp_path, model=None)
    synced = run_memvault("sync", "--vault", str(vault), "--json", env=env)
    assert synced.returncode == 0, synced.stderr
    assert "re-embedding every note" not in synced.stderr


def test_two_servers_on_one_vault_take_turns(vault: Path) -> None:
    with mcp_server(vault, "a") as a, mcp_server(vault, "b") as b:
        for i in range(3):
            for me, other in ((a, b), (b, a)):
                title = f"Turn {i} {'a' if me is a else 'b'}"
                started = time.monotonic()
                me.ok("memory_write", category="projects", title=title, body=f"Word{i}x.")
                # the other server's read finds the lock held by this one, which lets go
                # within its look (0.2 s): the read takes the lock, syncs and sees it
                slug = title.lower().replace(" ", "-")
                assert f"projects/{slug}.md" in paths(other, title)
                assert time.monotonic() - started < 20
        # and a note saved by a person is seen by both
        write(vault, "people/rho.md", note("Rho Anselm", body="Rho grows saffron."))
        assert "people/rho.md" in paths(a, "saffron")
        assert "people/rho.md" in paths(b, "saffron")


def test_a_cli_log_and_a_cli_search_get_their_turn_while_the_server_keeps_the_vault(
    vault: Path, tmp_path: Path
) -> None:
    env = memvault_env(tmp_path, MEMVAULT_LOCK_WAIT="8")
    with mcp_server(vault) as server:
        server.ok("memory_search", query="Sarah")
        assert other_holder(vault) is not None
        started = time.monotonic()
        logged = run_memvault("log", "--vault", str(vault), "heard from the cli", env=env)
        # before the lock queue and the door's look, it waited its 8 s and gave up
        assert logged.returncode == 0, logged.stderr
        assert time.monotonic() - started < 8
        assert "waiting" not in logged.stderr or "process" in logged.stderr
        assert any(p.startswith("logs/") for p in paths(server, "heard from the cli"))
        # a CLI search (a read, which never waits long) beside the kept vault: a note
        # saved since the server's last call is in its answer, not the index as it was
        write(vault, "people/tamsin.md", note("Tamsin Rook", body="Tamsin restores clocks."))
        found = run_memvault("search", "--vault", str(vault), "--json", "clocks", env=env)
        assert found.returncode == 0, found.stderr
        assert "people/tamsin.md" in found.stdout
        assert "waiting for" not in found.stderr  # a read's wait is no news
        assert "people/tamsin.md" in paths(server, "clocks")  # the server takes it back


def test_a_cli_search_beside_a_server_that_does_not_let_go_in_time_says_what_it_misses(
    vault: Path, tmp_path: Path
) -> None:
    # The server keeping the vault stopped (SIGSTOP: as starved, or in a long call, it
    # does not let go within LETS_GO): a read does not wait longer, it answers from the
    # index as it was. It said nothing, and the note saved since the server's last call
    # was silently missing; now its warning names it (and says nothing when the files
    # are as the index has them).
    env = memvault_env(tmp_path)
    with mcp_server(vault) as server:
        server.ok("memory_search", query="Sarah")
        kept_by = other_holder(vault)
        assert kept_by is not None
        os.kill(kept_by, signal.SIGSTOP)
        try:
            same = run_memvault("search", "--vault", str(vault), "--json", "Sarah", env=env)
            write(vault, "people/tamsin.md", note("Tamsin Rook", body="Tamsin restores clocks."))
            found = run_memvault("search", "--vault", str(vault), "--json", "clocks", env=env)
        finally:
            os.kill(kept_by, signal.SIGCONT)
        assert same.returncode == 0 and "people/sarah-chen.md" in same.stdout, same.stderr
        assert "misses" not in same.stderr, same.stderr  # nothing changed: no news
        assert found.returncode == 0, found.stderr
        assert "people/tamsin.md" not in found.stdout  # the index as it was: not waited on
        assert "misses 1 note changed since (people/tamsin.md)" in found.stderr, found.stderr
        assert f"process {kept_by} keeps this vault" in found.stderr
        assert "people/tamsin.md" in paths(server, "clocks")  # the server takes it back


def test_a_server_beside_one_that_does_not_let_go_in_time_tells_the_model_what_it_misses(
    vault: Path,
) -> None:
    # Two agents' servers on one vault; the one keeping it stopped (as starved, or in a
    # long call). The other's search and context answer from the index as it was: the
    # warning naming the note they miss went to the server's stderr only, which no
    # model reads; the tool result says it (a `note`; after the context's text).
    with mcp_server(vault, "keeper") as keeper, mcp_server(vault, "other") as other:
        keeper.ok("memory_search", query="Sarah")
        kept_by = other_holder(vault)
        assert kept_by is not None
        os.kill(kept_by, signal.SIGSTOP)
        try:
            same = other.ok("memory_search", query="Sarah")
            write(vault, "people/tamsin.md", note("Tamsin Rook", body="Tamsin restores clocks."))
            found = other.ok("memory_search", query="clocks")
            context = other.ok("memory_context", query="Who restores clocks?")
        finally:
            os.kill(kept_by, signal.SIGCONT)
        assert "note" not in same  # nothing changed: no news
        assert "people/tamsin.md" not in [h["path"] for h in found["hits"]]
        assert "misses 1 note changed since (people/tamsin.md)" in found["note"], found
        assert f"process {kept_by} keeps this vault" in found["note"]
        assert "restores clocks" not in context
        assert "misses 1 note changed since (people/tamsin.md)" in context, context
        assert "people/tamsin.md" in paths(other, "clocks")  # its turn once let go
        assert "note" not in other.ok("memory_search", query="clocks")


def test_a_daemon_started_while_the_server_keeps_the_vault_serves_the_next_calls(
    vault: Path, tmp_path: Path
) -> None:
    with mcp_server(vault) as server, ExitStack() as stack:
        server.ok("memory_write", category="people", title="Before Up", body="Early.")
        server_pid = other_holder(vault)
        assert server_pid is not None
        daemon = DaemonProcess(tmp_path, vault)
        stack.callback(daemon.stop)
        info = daemon.ready(answering=True)  # the daemon took the lock (it waits 2 s)
        assert lock_holder(vault) == daemon.proc.pid == info["pid"]
        made = server.ok("memory_write", category="people", title="After Up", body="Late.")
        assert made["created"]
        assert "people/after-up.md" in paths(server, "After Up")
        assert "daemon" in server.ok("memory_status")
        assert lock_holder(vault) == daemon.proc.pid  # the server never took it back
        assert daemon.stop() == 0
        # the daemon gone (`memvault down`): the server opens the vault again itself
        assert server.ok("memory_log", text="after the daemon")["path"].startswith("logs/")
        assert other_holder(vault) == server_pid


@pytest.mark.parametrize("how", ["renamed", "deleted", ".memvault deleted"])
def test_the_vault_folder_renamed_or_deleted_under_the_kept_vault_is_a_clear_tool_error(
    vault: Path, how: str
) -> None:
    aside = vault.with_name("vault-aside")
    with mcp_server(vault) as server:
        assert "people/sarah-chen.md" in paths(server, "Sarah Chen")
        if how == "renamed":
            vault.rename(aside)
        else:
            shutil.copytree(vault, aside, symlinks=True)
            shutil.rmtree(vault / ".memvault" if how == ".memvault deleted" else vault)
        for _ in range(3):  # each call says so; nothing is made at the old path
            said = server.refused("memory_search", query="Sarah Chen")
            assert "VaultNotFound" in said and str(vault) in said, said
            assert "VaultNotFound" in server.refused("memory_write", category="people", title="X")
            assert "VaultNotFound" in server.refused("memory_status")  # no sync: still said
        # before (the vault kept on a deleted .memvault/): its index, unlinked, answered,
        # and a write went on beside the next process's new lock
        assert not (vault / ".memvault").exists()
        shutil.rmtree(vault, ignore_errors=True)
        aside.rename(vault)  # put back: the server goes on with it
        assert "people/sarah-chen.md" in paths(server, "Sarah Chen")
        assert server.ok("memory_write", category="people", title="Back", body="b")["created"]
    assert not aside.exists() and lock_holder(vault) is None


def test_a_server_killed_while_keeping_the_vault_leaves_it_to_the_next_process(
    vault: Path, tmp_path: Path
) -> None:
    env = memvault_env(tmp_path)
    server = subprocess.Popen(
        [sys.executable, "-m", "memvault", "mcp", "--vault", str(vault)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdin is not None and server.stdout is not None
        for message in (
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            '"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_write",'
            '"arguments":{"category":"people","title":"Kept Then Killed","body":"K."}}}',
        ):
            server.stdin.write(message + "\n")
            server.stdin.flush()
        answers = [server.stdout.readline() for _ in range(2)]
        assert '"isError":false' in answers[1].replace(" ", ""), answers
        assert lock_holder(vault) == server.pid  # kept after its call
        server.send_signal(signal.SIGKILL)
        server.wait(30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(30)
        for stream in (server.stdin, server.stdout):
            if stream is not None:
                stream.close()
    # the kernel let go of its flock with it: the next process opens at once
    started = time.monotonic()
    with Vault.open(vault, embedder=HashEmbedder(), wait=0.0) as v:
        assert "people/kept-then-killed.md" in [h.path for h in v.search("Kept Then Killed")]
        v.log("after the kill")
    assert time.monotonic() - started < 30
    with mcp_server(vault) as again:
        assert "people/kept-then-killed.md" in paths(again, "Kept Then Killed")
    eventually(lambda: lock_holder(vault) is None, 10, "the lock let go")


def test_a_peek_over_the_team_index_set_by_the_doors_overrides_takes_no_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The door's peek does not take the lock over the team's index in PostgreSQL; that
    index named by the door's own ``overrides`` (or ``env``), not config.toml, was not
    seen: the peek opened a writer's open there at each call."""
    from memvault import door as door_module

    root = tmp_path / "memory"
    init_vault(root)
    opened: list[str] = []

    def fake_open(path: Path, *, mode: str = "write", **_: object) -> object:
        opened.append(mode)
        raise RuntimeError("stop here")

    monkeypatch.setattr(door_module.Vault, "open", staticmethod(fake_open))
    team = {"index": {"store": "postgres", "dsn": "postgresql://memvault@db.invalid/team"}}
    env = {"MEMVAULT_INDEX_STORE": "postgres", "MEMVAULT_INDEX_DSN": team["index"]["dsn"]}
    for options in ({"overrides": team}, {"env": env}):
        with pytest.raises(RuntimeError):
            door_module.VaultDoor(root, dict(options))._open("peek")
    assert opened == ["peek", "peek"]
