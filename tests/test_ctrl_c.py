"""Ctrl-C during `sync` or `migrate`: said, not a silent exit 130. The README promises
that `up`, `sync` and `migrate` "stop cleanly on Ctrl-C, keeping what is indexed"; `up`
said what it kept, `sync` and `migrate` printed nothing at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import write
from memvault.api import Vault
from memvault.interfaces.cli import app


@pytest.fixture
def interrupted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")

    def ctrl_c(self: Vault, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Vault, "sync", ctrl_c)


@pytest.mark.parametrize("command", ["sync", "migrate"])
def test_ctrl_c_says_what_is_kept_and_what_to_run(
    tmp_path: Path, interrupted: None, command: str
) -> None:
    for name, json_flag in (("a", []), ("b", ["--json"])):
        root = tmp_path / name
        write(root, "MEMORY.md", "# Memory\n\n## 2024-01-02\n\n- met Ana about billing\n")
        assert CliRunner().invoke(app, ["init", str(root)]).exit_code == 0
        if command == "sync":
            args = ["sync", "--vault", str(root), *json_flag]
        else:
            args = ["migrate", str(root / "MEMORY.md"), *json_flag]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 130, result.output
        if json_flag:
            assert json.loads(result.stdout)["code"] == 130
        else:
            said = " ".join(result.output.split())
            assert "stopped (Ctrl-C)" in said and "memvault sync" in said, said
