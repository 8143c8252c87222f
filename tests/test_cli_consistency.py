"""The CLI takes the same options everywhere.

`up --vault X` was "No such option" (`up`/`init` took only a positional path),
`daemon stop` had no `--json`, `mcp --help` left out memory_status, and `init` inside
a vault exited 3 ("no vault") where it is a refusal (5). The real CLI (typer's runner).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import new_vault
from memvault.interfaces.cli import app as cli_app


@pytest.fixture(autouse=True)
def _hash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli_app, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_init_takes_vault_as_the_folder(tmp_path: Path) -> None:
    code, out, err = cli("init", "--vault", str(tmp_path / "memory"), "--json")
    assert code == 0, err
    assert (tmp_path / "memory" / ".memvault").is_dir() and json.loads(out)["created"]


def test_two_different_folders_are_a_usage_error(tmp_path: Path) -> None:
    code, _, err = cli("init", str(tmp_path / "a"), "--vault", str(tmp_path / "b"))
    assert code == 2 and "two folders given" in err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("command", ["init", "up"])
def test_inside_a_vault_is_a_refusal_exit_5_with_vault_too(tmp_path: Path, command: str) -> None:
    root = new_vault(tmp_path)
    code, _, err = cli(command, "--vault", str(root / "people"))  # `up --vault`: accepted
    assert code == 5, err
    assert "No such option" not in err and f"inside the vault {root}" in err
    assert not (root / "people" / ".memvault").exists()


def test_daemon_stop_says_json(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    code, out, _ = cli("daemon", "stop", "--vault", str(root), "--json")
    assert code == 1 and json.loads(out)["code"] == 1 and "no memvault daemon" in out


def test_mcp_help_lists_every_tool() -> None:
    code, out, _ = cli("mcp", "--help")
    assert code == 0
    text = " ".join(out.split())
    for tool in ("search", "context", "get", "write", "log", "status"):
        assert re.search(rf"memory_{tool}\b", text), tool
