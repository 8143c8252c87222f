"""Claude's memory tool in whole sessions: the SDK's own tool runner against a loopback
stand-in of the Messages API, two agents through a real daemon, agents and a person on
one note at once, and ``POST /memory-tool``."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic.lib.tools import ToolError
from starlette.testclient import TestClient

from helpers import TOKEN, make_vault, note, open_vault, running_daemon
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
from memvault.integrations.anthropic import VaultMemoryTool
from memvault.service.http_api import create_app
from memvault.service.http_schema import openapi_schema

# -- a loopback stand-in of the Messages API -------------------------------------------------


class MessagesStandIn:
    """``POST /v1/messages`` answered from scripts: per model name, one assistant turn
    per step (its tool uses), then a closing text. The step is read from the request:
    the thread it continues (``previous_message_id``, as this SDK sends it), else the
    number of assistant turns in it. Every request is kept."""

    def __init__(self, scripts: dict[str, list[list[dict[str, Any]]]]) -> None:
        self.scripts = scripts
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stand_in._lock:
                    stand_in.requests.append(body)
                answer = json.dumps(stand_in.answer(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="messages-api")

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        model = body["model"]
        previous = (body.get("thread") or {}).get("previous_message_id")
        if previous:  # the SDK continues a thread: only the new messages are sent
            step = int(previous.rsplit("_", 1)[1]) + 1
        else:
            step = sum(1 for m in body["messages"] if m["role"] == "assistant")
        script = self.scripts[model]
        base = {"id": f"msg_{model}_{step}", "type": "message", "role": "assistant",
                "model": model, "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 10}}  # fmt: skip
        if step >= len(script):
            return {**base, "content": [{"type": "text", "text": "Done."}],
                    "stop_reason": "end_turn"}  # fmt: skip
        uses = [
            {"type": "tool_use", "id": f"toolu_{model}_{step}_{i}", "name": "memory", "input": c}
            for i, c in enumerate(script[step])
        ]
        return {**base, "content": uses, "stop_reason": "tool_use"}

    def __enter__(self) -> MessagesStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)

    def results(self, model: str) -> list[dict[str, Any]]:
        """The tool results the runner sent back, in order (each once)."""
        out: dict[str, dict[str, Any]] = {}
        for request in (r for r in self.requests if r["model"] == model):
            for m in request["messages"]:
                if m["role"] == "user" and isinstance(m["content"], list):
                    for b in m["content"]:
                        if b.get("type") == "tool_result":
                            out.setdefault(b["tool_use_id"], b)
        return list(out.values())


def run_agent(stand_in: MessagesStandIn, model: str, tool: VaultMemoryTool) -> Any:
    client = anthropic.Anthropic(api_key="test-key", base_url=stand_in.url, max_retries=0)
    try:
        runner = client.beta.messages.tool_runner(
            model=model,
            max_tokens=1024,
            tools=[tool],
            messages=[{"role": "user", "content": "Keep what you learn in your memory."}],
        )
        return runner.until_done()
    finally:
        client.close()


def text_of(result: dict[str, Any]) -> str:
    content = result["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content)


# -- the recorded-shape session ---------------------------------------------------------------

SESSION: list[list[dict[str, Any]]] = [
    [{"command": "view", "path": "/memories"}],
    [{"command": "create", "path": "/memories/people/ana-lopez.md",
      "file_text": "---\ntitle: Ana Lopez\nsummary: Leads the data team; prefers written "
                   "updates.\n---\n# Ana Lopez\n\n- Role: data lead\n- Works with "
                   "[[sarah-chen]] on the schema.\n"}],
    [{"command": "view", "path": "/memories/people/sarah-chen.md", "view_range": [1, 6]}],
    [{"command": "str_replace", "path": "/memories/people/ana-lopez.md",
      "old_str": "- Role: data lead", "new_str": "- Role: head of data (since March)"}],
    [{"command": "rename", "old_path": "/memories/projects/ai-assistant-refactor.md",
      "new_path": "/memories/projects/assistant-pipeline.md"}],
    [{"command": "str_replace", "path": "/memories/people/sarah-chen.md",
      "old_str": "Sarah Chen", "new_str": "x"}],  # two matches: an error the model sees
]  # fmt: skip


def assert_vault_true(v: Vault) -> None:
    """links check clean, MEMORY.md listing every note of its sections' folders, and
    every note found by search."""
    v.sync()
    assert v.links_check() == []
    memory = (v.root / "MEMORY.md").read_text(encoding="utf-8")
    notes = [
        row.path
        for row in v.engine.store.notes()
        if row.kind == "note" and not row.path.startswith("templates/")
    ]
    for path in notes:
        folder = path.split("/")[0]
        if (
            folder in ("people", "projects", "decisions", "logs")
            and path != f"{folder}/{folder}.md"
        ):
            # listed in MEMORY.md, or past its section's limit in the folder note it links
            folder_note = v.root / folder / f"{folder}.md"
            listed = f"[[{path[:-3]}]]" in memory or (
                f"[[{folder}/{folder}|" in memory
                and f"[[{path[:-3]}]]" in folder_note.read_text(encoding="utf-8")
            )
            assert listed, path
        title = v.engine.catalogue.note(path)
        assert title is not None
        hits = [h.path for h in v.search(title.title, k=10)]
        assert path in hits, (path, title.title, hits)


def test_the_sdks_tool_runner_drives_a_recorded_session_and_leaves_the_vault_true(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    with (
        MessagesStandIn({"claude-stand-in": SESSION}) as stand_in,
        open_vault(root) as v,
    ):
        v.sync()
        final = run_agent(stand_in, "claude-stand-in", VaultMemoryTool(v))
        assert final.content[0].text == "Done."
        results = stand_in.results("claude-stand-in")
        assert [bool(r.get("is_error")) for r in results] == [False] * 5 + [True]
        assert text_of(results[0]).startswith("Here is the index of /memories")
        assert text_of(results[1]) == "File created successfully at: /memories/people/ana-lopez.md"
        assert text_of(results[3]).startswith("The memory file has been edited.")
        assert text_of(results[4]).startswith(
            "Successfully renamed /memories/projects/ai-assistant-refactor.md to "
            "/memories/projects/assistant-pipeline.md"
        )
        assert "Multiple occurrences of old_str `Sarah Chen`" in text_of(results[5])
        # the request carried the tool as the API defines it
        assert stand_in.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        assert "[[people/ana-lopez]] - Leads the data team" in memory
        assert "[[projects/assistant-pipeline]]" in memory
        assert "ai-assistant-refactor" not in memory
        assert "head of data (since March)" in (root / "people/ana-lopez.md").read_text("utf-8")
        assert_vault_true(v)


def _agent_script(name: str, rounds: int) -> list[list[dict[str, Any]]]:
    """Twenty commands of one agent: people and decisions it creates, edits, links,
    renames; and lines added to a project note both agents keep."""
    steps: list[list[dict[str, Any]]] = [[{"command": "view", "path": "/memories"}]]
    for i in range(rounds):
        person = f"/memories/people/{name}-colleague-{i}.md"
        steps += [
            [
                {
                    "command": "create",
                    "path": person,
                    "file_text": f"---\ntitle: {name.title()} Colleague {i}\nsummary: Met by agent "
                    f"{name} in round {i}.\n---\n# {name.title()} Colleague {i}\n\n"
                    f"- works with [[sarah-chen]]\n",
                }
            ],
            [
                {
                    "command": "str_replace",
                    "path": person,
                    "old_str": f"in round {i}.",
                    "new_str": f"in round {i}; owns topic-{name}-{i}.",
                }
            ],
            [
                {
                    "command": "insert",
                    "path": "/memories/projects/ai-assistant-refactor.md",
                    "insert_line": 16,
                    "insert_text": f"<!-- note from {name} {i} -->",
                }
            ],
            [{"command": "view", "path": "/memories/people"}],
        ]
    steps += [
        [{"command": "rename", "old_path": f"/memories/people/{name}-colleague-0.md",
          "new_path": f"/memories/people/{name}-lead.md"}],
        [{"command": "create", "path": f"/memories/decisions/2026-12-01-{name}-choice.md",
          "file_text": f"# {name.title()} choice\n\nAgreed with [[{name}-lead]] and "
                       f"[[{name}-colleague-1]].\n"}],
        [{"command": "view", "path": f"/memories/decisions/2026-12-01-{name}-choice.md"}],
    ]  # fmt: skip
    return steps


@pytest.mark.slow
def test_two_agents_replaying_forty_commands_through_the_daemon_leave_a_clean_vault(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    scripts = {"agent-a": _agent_script("ana", 4), "agent-b": _agent_script("bo", 4)}
    assert sum(len(s) for s in scripts.values()) == 40
    with open_vault(root) as daemon_vault, running_daemon(daemon_vault):
        daemon_vault.sync()
        tools = {m: VaultMemoryTool(root, embedder=HashEmbedder()) for m in scripts}
        assert all(t.vault.daemon is not None for t in tools.values())  # the one writer
        errors: list[BaseException] = []

        def agent(model: str) -> None:
            try:
                run_agent(stand_in, model, tools[model])
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        with MessagesStandIn(scripts) as stand_in:
            threads = [threading.Thread(target=agent, args=(m,), name=m) for m in scripts]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
        for t in tools.values():
            t.close()
        assert not errors
        for model in scripts:
            bad = [text_of(r) for r in stand_in.results(model) if r.get("is_error")]
            assert bad == [], bad
        project = (root / "projects/ai-assistant-refactor.md").read_text(encoding="utf-8")
        for name in ("ana", "bo"):
            for i in range(4):
                assert f"<!-- note from {name} {i} -->" in project
        decision = (root / "decisions/2026-12-01-ana-choice.md").read_text(encoding="utf-8")
        assert "[[ana-lead]]" in decision
        assert (root / "people/ana-lead.md").exists()
        assert_vault_true(daemon_vault)


def test_two_agents_and_a_person_on_one_note_at_once_lose_no_word(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    rel = "projects/ai-assistant-refactor.md"
    rounds = 60
    errors: list[BaseException] = []
    answered: dict[str, list[str]] = {"a": [], "b": []}
    # a 20 ms quiet period lets memvault write between the person's saves (as in
    # test_memory_race), so its check-and-swap races their saves many times
    with open_vault(root, overrides={"vault": {"quiet_ms": 20}}) as v:
        v.sync()
        tools = {name: VaultMemoryTool(v) for name in answered}
        lines = (root / rel).read_text(encoding="utf-8").split("\n")
        at = next(i for i, line in enumerate(lines) if line.startswith("# ")) + 1  # below the title

        def agent(name: str) -> None:
            try:
                for i in range(rounds):
                    command = {"command": "insert", "path": f"/memories/{rel}", "insert_line": at,
                               "insert_text": f"- agent {name} line {i}"}  # fmt: skip
                    if i % 3 == 2:
                        command = {"command": "str_replace", "path": f"/memories/{rel}",
                                   "old_str": f"- agent {name} line {i - 1}\n",
                                   "new_str": f"- agent {name} line {i - 1} (checked {i})\n"}  # fmt: skip
                    for _ in range(40):  # a model told "try again" tries again
                        try:
                            answered[name].append(str(tools[name].call(command)))
                            break
                        except ToolError as exc:
                            if "try again" not in str(exc) and "kept changing" not in str(exc):
                                raise
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        def person() -> None:
            try:
                for i in range(rounds * 2):
                    # a person adding lines at the end of the note as they save it
                    with open(root / rel, "a", encoding="utf-8") as fh:
                        fh.write(f"person edit {i}\n")
                    threading.Event().wait(0.004)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=agent, args=(n,), name=f"agent-{n}") for n in answered]
        threads.append(threading.Thread(target=person, name="person-editing"))
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors
        text = (root / rel).read_text(encoding="utf-8")
        assert [i for i in range(rounds * 2) if f"person edit {i}\n" not in text] == []
        for name in answered:
            assert len(answered[name]) == rounds
            for i in range(rounds):
                want = f"- agent {name} line {i}" + (f" (checked {i + 1})" if i % 3 == 1 else "")
                if i % 3 != 2:
                    assert want + "\n" in text, want
        v.sync()
        assert v.links_check() == []


# -- POST /memory-tool ------------------------------------------------------------------------


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        app = create_app(v, TOKEN, lambda: {"port": 48124}, port=48124)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        with TestClient(app, base_url="http://127.0.0.1:48124", headers=auth) as c:
            yield c
        app.state.close()


def test_post_memory_tool_runs_a_command_and_answers_the_tools_text(
    client: TestClient, tmp_path: Path
) -> None:
    r = client.post("/memory-tool", json={"command": "view", "path": "/memories"})
    assert r.status_code == 200
    assert r.json()["result"].startswith("Here is the index of /memories")
    body = {"command": "create", "path": "/memories/people/ana.md", "file_text": "# Ana\n"}
    assert client.post("/memory-tool", json=body).json() == {
        "result": "File created successfully at: /memories/people/ana.md"
    }
    assert "[[people/ana]]" in (tmp_path / "vault" / "MEMORY.md").read_text(encoding="utf-8")
    r = client.post("/memory-tool", json=body)
    assert r.status_code == 400
    assert r.json()["error"] == {
        "type": "MemoryToolError",
        "message": "File /memories/people/ana.md already exists",
    }
    r = client.post("/memory-tool", json={"command": "view", "path": "/memories/../x"})
    assert r.json()["error"]["message"] == "Path /memories/../x would escape /memories directory"
    r = client.post("/memory-tool", json={"command": "view", "path": "/m", "extra": 1})
    assert r.status_code == 400 and "unknown field 'extra'" in r.json()["error"]["message"]
    r = client.post("/memory-tool", json={"command": "view", "path": "/memories/people/ana.md",
                                          "view_range": ["1", 2]})  # fmt: skip
    assert r.status_code == 400 and "two whole numbers" in r.json()["error"]["message"]
    r = client.post("/memory-tool", headers={"Authorization": "Bearer wrong"}, json=body)
    assert r.status_code == 401


def test_the_openapi_document_describes_memory_tool() -> None:
    op = openapi_schema()["paths"]["/memory-tool"]["post"]
    schema = op["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["command"]
    assert schema["properties"]["view_range"] == {
        "type": "array",
        "items": {"type": "integer"},
        "description": schema["properties"]["view_range"]["description"],
    }
    assert {"path", "file_text", "old_str", "new_str", "insert_line", "insert_text",
            "old_path", "new_path"} <= set(schema["properties"])  # fmt: skip


def test_a_refusal_through_the_daemon_reads_as_in_process(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as daemon_vault, running_daemon(daemon_vault):
        daemon_vault.sync()
        with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
            assert tool.vault.daemon is not None
            with pytest.raises(ToolError) as caught:
                tool.call({"command": "delete", "path": "/memories"})
            assert str(caught.value) == "Cannot delete the /memories directory itself"
            tool.call({"command": "create", "path": "/memories/people/cy.md",
                       "file_text": note("Cy", "Runs the on-call rota.")})  # fmt: skip
        assert daemon_vault.search("on-call rota", k=1)[0].path == "people/cy.md"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(root / ".memvault" / "daemon.json")


# A field of the wrong type, and a view_range ending in null (the reference reads it as
# "to the end"): through the daemon these were the HTTP schema's ("'view_range' must be a
# list of whole numbers", and [1, null] refused), in-process the tool's own answers.
ODD_COMMANDS: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories/people/cy.md", "view_range": [2, None]},
    {"command": "view", "path": "/memories/people/cy.md", "view_range": [1.5, 2]},
    {"command": "view", "path": "/memories/people/cy.md", "view_range": "1,2"},
    {"command": "view", "path": 123},
    {"command": "create", "path": "/memories/people/dee.md", "file_text": 5},
    {"command": "insert", "path": "/memories/people/cy.md", "insert_line": "x",
     "insert_text": "hi"},
    {"command": "str_replace", "path": "/memories/people/cy.md", "old_str": ["rota"],
     "new_str": "roster"},
    {"command": "rename", "old_path": "/memories/people/cy.md", "new_path": False},
]  # fmt: skip


def _answers(tool: VaultMemoryTool) -> list[str]:
    out = []
    for command in ODD_COMMANDS:
        try:
            out.append(f"ok: {tool.call(command)}")
        except ToolError as exc:
            out.append(f"error: {exc}")
    return out


def test_odd_fields_through_the_daemon_answer_as_in_process(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    (root / "people" / "cy.md").write_text(note("Cy", "Runs the on-call rota."), "utf-8")
    with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
        assert tool.vault.daemon is None
        in_process = _answers(tool)
    assert in_process[0].startswith("ok: Here's the content of /memories/people/cy.md")
    assert "\n     1\t" not in in_process[0] and "\n     2\t" in in_process[0]
    with (
        open_vault(root) as daemon_vault,
        running_daemon(daemon_vault),
        VaultMemoryTool(root, embedder=HashEmbedder()) as tool,
    ):
        assert tool.vault.daemon is not None
        assert _answers(tool) == in_process
    with contextlib.suppress(FileNotFoundError):
        os.unlink(root / ".memvault" / "daemon.json")


# Another agent's process beside this one, no daemon: its tool stays open between its
# commands (an agent's session), and this process's commands still get their turns.
OTHER_AGENT = """
import sys
from memvault.index.embedder import HashEmbedder
from memvault.integrations.anthropic import VaultMemoryTool

tool = VaultMemoryTool(sys.argv[1], embedder=HashEmbedder())
for line in sys.stdin:  # one command's note name a line; an empty line ends it
    name = line.strip()
    if not name:
        break
    text = f"# {name}\\n\\n{name} notes from the other agent.\\n"
    tool.call({"command": "create", "path": f"/memories/other/{name}.md", "file_text": text})
    print("done", name, flush=True)
tool.close()
"""


def test_another_agents_open_tool_does_not_lock_this_one_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault(tmp_path)
    monkeypatch.setenv("MEMVAULT_LOCK_WAIT", "5")  # before: 5 s, then "LockHeld"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-c", OTHER_AGENT, str(root)]
    with subprocess.Popen(
        command, env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as other:
        assert other.stdin is not None and other.stdout is not None

        def other_does(name: str) -> None:
            assert other.stdin is not None and other.stdout is not None
            other.stdin.write(f"{name}\n")
            other.stdin.flush()
            assert other.stdout.readline().strip() == f"done {name}"

        try:
            other_does("first")  # its tool stays open from here to its end
            with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
                listing = tool.call({"command": "view", "path": "/memories"})
                assert "/memories/other/\t1 note" in listing  # synced by the other's command
                tool.call({"command": "create", "path": "/memories/people/mine.md",
                           "file_text": note("Mine", "Written beside the other agent.")})  # fmt: skip
                other_does("second")  # its next command, after mine
                seen = tool.call({"command": "view", "path": "/memories/other"})
                assert "second.md" in seen and "first.md" in seen
            other.stdin.write("\n")
            other.stdin.flush()
            assert other.wait(30) == 0
        finally:
            if other.poll() is None:
                other.kill()
    with open_vault(root) as v:
        v.sync(vectors=False)
        assert "Written beside the other agent." in v.get("people/mine.md").text
        assert v.search("notes from the other agent", k=5)
        memory = (root / "MEMORY.md").read_text("utf-8")
        assert "[[people/mine]]" in memory and "2 notes in other/" in memory


def test_a_cli_write_and_a_daemon_start_get_the_lock_a_kept_vault_holds(tmp_path: Path) -> None:
    """The tool keeps the vault (and its lock) between commands for speed, up to LINGER
    (15 s): a CLI write asking for the lock meanwhile has it at once, not after."""
    import time

    from helpers import DaemonProcess, memvault_env, run_memvault

    root = make_vault(tmp_path)
    env = memvault_env(tmp_path, MEMVAULT_LOCK_WAIT="30")
    with VaultMemoryTool(root, embedder=HashEmbedder()) as tool:
        tool.call({"command": "create", "path": "/memories/people/cy.md",
                   "file_text": note("Cy", "Runs the on-call rota.")})  # fmt: skip
        began = time.monotonic()
        done = run_memvault("log", "Cy took the rota", "--vault", str(root), env=env)
        assert done.returncode == 0, done.stderr
        assert time.monotonic() - began < 10  # before: the 15 s linger, then the write
        tool.call({"command": "str_replace", "path": "/memories/people/cy.md",
                   "old_str": "on-call rota", "new_str": "on-call rota and the pager"})  # fmt: skip
        daemon = DaemonProcess(tmp_path, root)  # a daemon starting: it gets the lock
        try:
            daemon.ready(answering=True)
            out = tool.call({"command": "view", "path": "/memories/people/cy.md"})
            assert "the pager" in out
            tool.call({"command": "create", "path": "/memories/people/di.md",
                       "file_text": note("Di", "Through the daemon.")})  # fmt: skip
            assert tool.vault.daemon is not None
        finally:
            assert daemon.stop() == 0
    assert "Cy took the rota" in "".join(p.read_text("utf-8") for p in (root / "logs").glob("*.md"))
    assert "[[people/di]]" in (root / "MEMORY.md").read_text("utf-8")
