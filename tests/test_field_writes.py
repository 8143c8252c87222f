"""What agents and people met writing through memvault's interfaces (the field, round 2).

Each test reproduces a defect found by using the real CLI, HTTP API, MCP server and
Python API on a scratch vault as a careless or hostile user would: the real filesystem,
SQLite and the HTTP app in-process; the hash embedder (the model is not the point).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from helpers import new_vault, note, open_vault, write
from memvault.api import Vault
from memvault.core.text import decode
from memvault.daemon.http_api import create_app
from memvault.interfaces.cli import app as cli_app

PORT = 48131
TOKEN = "field-writes-token-" + "x" * 24
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@contextmanager
def http(vault: Vault) -> Iterator[TestClient]:
    app = create_app(vault, TOKEN, lambda: {"port": PORT}, port=PORT)
    try:
        with TestClient(app, base_url=f"http://127.0.0.1:{PORT}", headers=AUTH) as client:
            yield client
    finally:
        app.state.close()


def readable(root: Path) -> None:
    """Every note of the vault is still text memvault (and an editor) can read."""
    for path in root.rglob("*.md"):
        if ".memvault" not in path.parts:
            decode(path.read_bytes())  # raises NotText for a file turned binary


# -- a NUL character an agent sends ---------------------------------------------------------
#
# It was written as it came: `POST /log {"text": "a\u0000b"}` put a NUL into today's log,
# which memvault then read as a binary file: that write and every later `log` of the day
# failed ("binary file (NUL bytes)") and the day's log left the index. A NUL in a title
# did the same to the new note (the `# title` heading), and one in a summary to MEMORY.md
# and the folder note (the entry's description), which memvault could no longer keep.


NUL_WRITES = [
    ("/log", {"text": "deployed a\x00b"}),
    ("/notes", {"category": "people", "title": "Nul\x00Title"}),
    ("/notes", {"category": "people", "title": "Nul body", "body": "one\x00two"}),
    ("/notes", {"category": "people", "title": "Nul summary", "summary": "one\x00two"}),
]


@pytest.mark.parametrize(("route", "body"), NUL_WRITES)
def test_a_nul_character_is_refused_with_400_and_nothing_is_written(
    tmp_path: Path, route: str, body: dict
) -> None:
    root = new_vault(tmp_path)
    memory = (root / "MEMORY.md").read_bytes()
    with open_vault(root) as v:
        v.sync()
        v.log("before")  # today's log exists
        with http(v) as client:
            r = client.post(route, json=body)
            assert r.status_code == 400, r.text
            assert "NUL" in r.json()["error"]["message"]
            # the day's log still takes entries
            assert client.post("/log", json={"text": "after"}).status_code == 200
    assert list((root / "people").iterdir()) == []
    (log,) = (root / "logs").glob("*.md")
    entries = [ln.split(" ", 2)[2] for ln in log.read_text("utf-8").splitlines() if ln[:2] == "- "]
    assert entries == ["before", "after"]
    assert (root / "MEMORY.md").read_bytes() != memory  # the log is listed
    readable(root)


def test_the_cli_refuses_a_nul_from_stdin_with_exit_2(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    result = CliRunner().invoke(
        cli_app,
        ["add", "people", "--title", "Ana", "--body", "-", "--vault", str(root)],
        input="line one\x00line two\n",
    )
    assert result.exit_code == 2, result.output
    assert "NUL" in result.stderr
    assert list((root / "people").iterdir()) == []


def test_a_summary_holding_a_nul_in_a_persons_note_keeps_memory_md_text(tmp_path: Path) -> None:
    # YAML's "\0" escape is how a person (or a sync tool) can put one in a note
    root = new_vault(tmp_path)
    write(root, "people/ana.md", '---\nsummary: "Ana\\0Lopez\\x07 runs ops"\n---\n# Ana\n')
    write(root, "projects/beta.md", note("Beta", "the beta", status="active"))
    with open_vault(root) as v:
        v.sync()
        write(root, "projects/gamma.md", note("Gamma", "the gamma", status="active"))
        report = v.sync()
    assert list(report.created) == ["projects/gamma.md"]
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "- [[people/ana]] - Ana Lopez runs ops" in text.splitlines()
    assert "[[projects/gamma]]" in text  # MEMORY.md is still kept
    readable(root)
