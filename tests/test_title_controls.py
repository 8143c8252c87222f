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


# "invoice<RLO>fdp.exe" shows as "invoiceexe.pdf": a bidi embedding, override or isolate
# shows the name after it in another order than it is written (CVE-2021-42574)
BIDI = [
    "invoice\u202efdp.exe",
    "a\u202ab",
    "a\u202bb",
    "a\u202cb",
    "a\u202db",
    "a\u2066b",
    "a\u2069b",
]


@pytest.mark.parametrize("title", BIDI)
def test_a_title_holding_a_bidi_control_is_refused(title: str) -> None:
    with pytest.raises(ValueError, match="bidi control"):
        compose.clean_title(title)


@pytest.mark.parametrize("title", ["שלום עולם", "مرحبا بالعالم", "Ana\u200dLópez", "x\u200fy"])
def test_right_to_left_titles_and_joiners_are_not_bidi_controls(title: str) -> None:
    """Hebrew and Arabic titles, a zero-width joiner and a right-to-left mark (a mark,
    not an override) are kept."""
    assert compose.clean_title(title) == title


def test_the_cli_refuses_a_title_with_a_bidi_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    result = CliRunner().invoke(cli_app, ["add", "people", BIDI[0], "--vault", str(root)])
    assert result.exit_code == 2, result.output
    said = " ".join(result.stderr.split())
    assert "bidi control character (U+202E)" in said and "write it without" in said
    assert list((root / "people").iterdir()) == []


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
