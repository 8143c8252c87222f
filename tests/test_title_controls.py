"""A control character in a title is refused everywhere.

`add people --title $'Evil\\nName'` was accepted: the writer folded runs of whitespace
(a line break among them) into one space before it looked for control characters, so
the check never saw the newline, and the README says a title holding one is refused.
The real CLI, the HTTP app in-process and the core check; the MCP tool is in
tests/test_mcp_server.py's refusals.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from helpers import new_vault, open_vault
from memvault.core import compose
from memvault.interfaces.cli import app as cli_app
from memvault.service.http_api import create_app

PORT = 48137
TOKEN = "title-controls-token-" + "x" * 24
TITLES = ["Evil\nName", "Evil\rName", "Tab\tName", "Bell\x07Name", "Esc\x1b[31mName", "Del\x7f"]


@pytest.mark.parametrize("title", TITLES)
def test_the_core_check_refuses_a_control_character_in_a_title(title: str) -> None:
    with pytest.raises(ValueError, match="control character"):
        compose.clean_title(title)


def test_the_core_check_still_folds_plain_spaces() -> None:
    assert compose.clean_title("  Ana   López ") == "Ana López"


@pytest.mark.parametrize("title", ["Evil\nName", "Tab\tName"])
def test_the_cli_refuses_a_title_with_a_line_break_or_tab(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, title: str
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    result = CliRunner().invoke(cli_app, ["add", "people", "--title", title, "--vault", str(root)])
    assert result.exit_code == 2, result.output
    assert "control character" in result.stderr
    assert list((root / "people").iterdir()) == []


def test_http_refuses_a_title_with_a_line_break(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        app = create_app(v, TOKEN, lambda: {"port": PORT}, port=PORT)
        try:
            with TestClient(
                app,
                base_url=f"http://127.0.0.1:{PORT}",
                headers={"Authorization": f"Bearer {TOKEN}"},
            ) as client:
                r = client.post("/notes", json={"category": "people", "title": "Evil\nName"})
                assert r.status_code == 400, r.text
                assert "control character" in r.json()["error"]["message"]
        finally:
            app.state.close()
    assert list((root / "people").iterdir()) == []
