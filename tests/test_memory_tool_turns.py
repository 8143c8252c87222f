"""The vault a ``VaultMemoryTool`` given a folder opens for its commands and keeps a
moment (``_Turn``): which folder it is, and who else gets the writer lock meanwhile."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from anthropic.lib.tools import ToolError

from helpers import eventually, make_vault, note, open_vault, running_daemon, write
from memvault import door as integration
from memvault.errors import BadRequest
from memvault.index.embedder import HashEmbedder
from memvault.integrations.anthropic import VaultMemoryTool
from memvault.vault.lock import lock_holder


def _create(tool: VaultMemoryTool, rel: str) -> str:
    text = f"# {rel}\n\nA note.\n"
    return str(tool.call({"command": "create", "path": f"/memories/{rel}", "file_text": text}))


def test_a_folder_given_relative_stays_the_folder_it_named_when_the_process_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integration, "LINGER", 0.05)
    here, there = tmp_path / "here", tmp_path / "there"
    make_vault(here), make_vault(there)
    monkeypatch.chdir(here)
    with VaultMemoryTool("vault", embedder=HashEmbedder()) as tool:
        _create(tool, "first.md")
        eventually(lambda: lock_holder(here / "vault") is None, 10, "the vault let go")
        monkeypatch.chdir(there)  # before: the next command opened there/vault
        _create(tool, "second.md")
    assert (here / "vault" / "second.md").exists()
    assert not (there / "vault" / "second.md").exists()
    assert os.getcwd() == str(there)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # fork() beside the timer's thread
@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_does_not_let_go_of_the_vault_its_parent_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integration, "LINGER", 1.5)
    monkeypatch.setenv("MEMVAULT_LOCK_WAIT", "30")  # the child waits for the parent's turn
    root = make_vault(tmp_path)
    tool = VaultMemoryTool(root, embedder=HashEmbedder())
    _create(tool, "parent.md")  # the parent keeps the vault (and its writer lock)
    pid = os.fork()
    if pid == 0:  # the child: a tool of its own on the same folder
        code = 1
        try:
            child = VaultMemoryTool(root, embedder=HashEmbedder())
            code = 0 if "created" in _create(child, "child.md") else 2
            child.close()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    # the child found the parent's lock held and asked for it (the parent let go, as for
    # any process): before, it closed the parent's kept vault, whose lock file it shares,
    # took the lock at once, and wrote while the parent could
    assert (root / ".memvault" / "lock.wanted").exists()
    _create(tool, "parent-2.md")  # the parent's own turn goes on
    tool.close()
    assert (root / "child.md").exists() and (root / "parent-2.md").exists()


def test_a_cli_write_gets_its_turn_while_the_tool_is_used_without_a_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integration, "LINGER", 0.5)
    root = make_vault(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "MEMVAULT_LOCK_WAIT": "6"}
    with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
        _create(tool, "busy/n0.md")
        command = [sys.executable, "-m", "memvault", "log", "--vault", str(root), "from the CLI"]
        with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) as cli:
            started, n = time.monotonic(), 0
            # an agent's commands never LINGER apart: before, the vault was kept from one
            # to the next, the lock never let go, and the CLI gave up after its 6 s
            while cli.poll() is None and time.monotonic() - started < 30:
                n += 1
                _create(tool, f"busy/n{n}.md")
                time.sleep(0.2)
            assert cli.stderr is not None
            assert cli.wait(30) == 0, cli.stderr.read()
    assert "from the CLI" in "".join(p.read_text("utf-8") for p in (root / "logs").glob("*.md"))


def test_a_vault_kept_through_a_daemon_that_stopped_is_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integration, "LINGER", 60.0)  # the kept vault is still kept
    root = make_vault(tmp_path)
    with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
        with open_vault(root) as daemon_vault, running_daemon(daemon_vault):
            _create(tool, "through-the-daemon.md")
        # the daemon stopped (`memvault down`): before, the commands went on to it and got
        # "cannot reach the daemon", each one keeping that vault LINGER more
        assert "created" in _create(tool, "after-it.md")
        assert "after-it.md" in tool.call({"command": "view", "path": "/memories"})


def test_a_first_sync_that_fails_lets_the_writer_lock_go(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    (root / "MEMORY.md").unlink()
    (root / "MEMORY.md").mkdir()  # the sync of the first command opened here fails
    with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
        with pytest.raises(ToolError):
            _create(tool, "a.md")
        # before: the vault opened for it was never closed, its lock held for the
        # process's life (every later write: "this process is already writing")
        assert lock_holder(root) is None
        with pytest.raises(ToolError) as again:
            _create(tool, "b.md")
        assert "already writing" not in str(again.value)
    assert lock_holder(root) is None


def test_the_turns_of_folders_no_longer_used_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integration, "LINGER", 0.05)
    roots = [make_vault(tmp_path, f"vault-{i}") for i in range(3)]
    for root in roots[:2]:
        with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
            _create(tool, "a.md")
    left = VaultMemoryTool(roots[2], embedder=HashEmbedder())  # never closed: its timer
    _create(left, "a.md")

    def ours() -> list[Path]:
        return [p for p in integration._TURNS if p.is_relative_to(tmp_path.resolve())]

    # before: one entry per folder ever used, for the process's life (a server opening
    # a tool per user's vault grew ~600 bytes a folder)
    eventually(lambda: lock_holder(roots[2]) is None, 10, "the last vault let go")
    eventually(lambda: not ours(), 10, f"no turn kept: {ours()}")


def test_the_first_command_opened_here_after_a_daemon_served_syncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integration, "LINGER", 0.0)
    root = make_vault(tmp_path)
    with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
        with open_vault(root) as daemon_vault, running_daemon(daemon_vault):
            _create(tool, "through-the-daemon.md")
        # the daemon stopped; a person saves a note while nothing watches the folder
        write(root, "people/ana.md", note("Ana", "Saved while no daemon ran."))
        # before: the daemon's open counted as the sync, so none was run here
        assert "[[people/ana]]" in tool.call({"command": "view", "path": "/memories"})


def test_a_tool_opened_read_only_views_and_refuses_writes(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync(vectors=False)
    with VaultMemoryTool(root, embedder=HashEmbedder(), read_only=True) as tool:
        # before: the first command's sync ran on the read-only vault: every command,
        # a view too, was "this vault was opened read-only"
        assert "[[people/sarah-chen]]" in tool.call({"command": "view", "path": "/memories"})
        with pytest.raises(ToolError, match="read-only"):
            _create(tool, "a.md")
    assert not (root / "a.md").exists()


def test_a_mode_given_to_the_tool_goes_to_vault_open(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync(vectors=False)
    # before: TypeError, Vault.open() got multiple values for keyword argument 'mode'
    with VaultMemoryTool(root, embedder=HashEmbedder(), mode="peek") as tool:
        assert "[[people/sarah-chen]]" in tool.call({"command": "view", "path": "/memories"})
    with VaultMemoryTool(root, embedder=HashEmbedder(), mode="read") as tool:
        assert "created" in _create(tool, "a.md")


def test_a_view_does_not_wait_for_another_tools_write_waiting_for_another_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync(vectors=False)
    monkeypatch.setenv("MEMVAULT_LOCK_WAIT", "30")
    holder = subprocess.Popen(  # another process writes for a while (a long sync)
        [sys.executable, "-c", "import fcntl,sys; f=open(sys.argv[1],'a'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()",
         str(root / ".memvault" / "lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    writer, viewer = (VaultMemoryTool(root, embedder=HashEmbedder()) for _ in range(2))
    answers: list[str] = []
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"

        def write() -> None:
            try:
                answers.append(_create(writer, "w.md"))
            except ToolError as exc:
                answers.append(str(exc))

        thread = threading.Thread(target=write)
        thread.start()  # its write waits for the other process, up to 30 s
        eventually(lambda: integration._TURNS, 10, "the writer's turn")
        started = time.monotonic()
        listing = viewer.call({"command": "view", "path": "/memories/people"})
        assert "sarah-chen.md" in listing
        assert time.monotonic() - started < 10  # before: it waited for the writer's turn
    finally:
        assert holder.stdin is not None
        holder.stdin.close()  # the other process ends: the write gets its turn
        holder.wait(30)
        thread.join(60)
        writer.close(), viewer.close()
        assert holder.stdout is not None
        holder.stdout.close()
    assert answers and "created" in answers[0]


HOLD_THEN_WAIT = """
import fcntl, sys, time
from pathlib import Path
from memvault.vault.lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
if sys.argv[2] == "hold":  # hold it until a line on stdin
    lock.acquire()
    print("held", flush=True)
    sys.stdin.readline()
else:  # wait for it (up to 20 s), say when it is had
    lock.acquire(20.0)
    print("had it", flush=True)
lock.release()
"""


def _locker(root: Path, how: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HOLD_THEN_WAIT, str(root / ".memvault" / "lock"), how],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _tickets(root: Path) -> list[str]:
    line = root / ".memvault" / "lock.queue"
    return os.listdir(line) if line.is_dir() else []


def test_a_tool_that_waited_for_the_lock_keeps_the_vault_when_no_one_else_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integration, "LINGER", 60.0)
    monkeypatch.setenv("MEMVAULT_LOCK_WAIT", "30")
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync(vectors=False)
    holder = _locker(root, "hold")
    with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        threading.Timer(1.0, holder.communicate, ("go\n",)).start()  # then lets go
        _create(tool, "after-a-wait.md")  # waits for the holder, touching lock.wanted
        holder.wait(30)
        time.sleep(integration.LOOK * 5)  # its look at lock.wanted, several times over
        # before: its own touches while it waited were taken for another process's, and
        # it let go at its first look (or at its next command, waiting YIELD more)
        assert lock_holder(root) == os.getpid()


def test_a_tool_lets_go_after_a_command_when_another_process_waits_behind_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integration, "LINGER", 60.0)
    monkeypatch.setattr(integration, "LOOK", 60.0)  # its look would come too late
    monkeypatch.setenv("MEMVAULT_LOCK_WAIT", "30")
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync(vectors=False)
    holder = _locker(root, "hold")
    tool = VaultMemoryTool(root, embedder=HashEmbedder())
    waiter = None
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        thread = threading.Thread(target=_create, args=(tool, "first-in-line.md"))
        thread.start()  # the tool waits first (its ticket in lock.queue/)...
        eventually(lambda: _tickets(root), 20, "its ticket")
        waiter = _locker(root, "wait")  # ...then another process, behind it
        eventually(lambda: len(_tickets(root)) == 2, 20, "the waiter's ticket")
        holder.communicate("go\n", timeout=30)
        thread.join(60)
        assert (root / "first-in-line.md").exists()  # the tool went first
        # and let go after its command: before, it kept the vault until its next look
        assert waiter.communicate(timeout=30)[0].strip() == "had it"
    finally:
        for proc in (holder, waiter):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=30)
        tool.close()


TOOL_AFTER_A_WAIT = """
import sys
from memvault.index.embedder import HashEmbedder
from memvault.integrations.anthropic import VaultMemoryTool
from memvault.api import Vault
if sys.argv[2] == "tool":
    with VaultMemoryTool(sys.argv[1], embedder=HashEmbedder()) as tool:
        print(tool.call({"command": "create", "path": "/memories/waited.md", "file_text": "x"}))
else:
    with Vault.open(sys.argv[1], embedder=HashEmbedder()) as v:
        print(v.log("waited"))
"""


@pytest.mark.parametrize("how", ["tool", "open"])
def test_a_tool_waiting_its_turn_says_nothing_on_the_applications_stderr(
    tmp_path: Path, how: str
) -> None:
    """Two agents' tools take turns without a daemon: each wait for the other's is how
    the door works. Before, each printed "waiting for process N, which is writing to this
    vault..." on the application's stderr (Python's last-resort handler), 15 times in
    10 s in the field test. A plain ``Vault.open`` still says it (the CLI's message)."""
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync(vectors=False)
    holder = _locker(root, "hold")
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        waiter = subprocess.Popen(
            [sys.executable, "-c", TOOL_AFTER_A_WAIT, str(root), how],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "MEMVAULT_LOCK_WAIT": "30"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        eventually(lambda: _tickets(root), 30, "the waiter in line")
        holder.communicate("go\n", timeout=30)
        out, err = waiter.communicate(timeout=60)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.communicate(timeout=30)
    assert waiter.returncode == 0, out + err
    said = "which is writing to this vault" in err
    assert said == (how == "open"), err


def test_a_refused_request_keeps_the_vault_and_a_defects_value_error_lets_it_go(
    tmp_path: Path,
) -> None:
    """A request the library refuses (an empty query: ``BadRequest``) leaves the vault
    kept for the next call; a ``ValueError`` raised by a defect (here a query vector of
    the wrong shape, inside the vector index) lets it go, so the next call opens the
    vault afresh instead of going on with one whose state may be off."""
    root = make_vault(tmp_path)
    door = integration.VaultDoor(root, {"embedder": HashEmbedder()})
    try:
        write(root, "people/twice.md", note("Twice", body="## Role\nx\n\n## Role\ny"))
        door.run(lambda v: v.sync(), "write")
        for refused, mode in [
            (lambda v: v.search("   "), "query"),
            (lambda v: v.add("people", "Bo", fields={"bad key": "v"}), "write"),
            (lambda v: v.get("people/sarah-chen.md", lines="x"), "read"),
            # a title with no character a file name can hold, a section named twice
            (lambda v: v.add("people", "???"), "write"),
            (lambda v: v.add("people", "Twice", section="Role", body="z"), "write"),
        ]:
            with pytest.raises(BadRequest):
                door.run(refused, mode)
            assert lock_holder(root) == os.getpid()  # kept for the next call
        wrong = np.zeros(3, dtype=np.float32)
        with pytest.raises(ValueError, match="query vector has shape") as raised:
            door.run(lambda v: v.engine.embedding.vectors.query(wrong, 5), "query")
        assert not isinstance(raised.value, BadRequest)
        assert lock_holder(root) is None  # let go: before, kept as if the request was refused
        assert door.run(lambda v: v.search("Sarah Chen")[0].path, "query") == "people/sarah-chen.md"
        assert lock_holder(root) == os.getpid()
    finally:
        door.close()
    assert lock_holder(root) is None
