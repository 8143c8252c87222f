"""The wheel ships the vault template; the README's test command is what CI runs."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_built_wheel_contains_the_vault_template(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("memvault-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for rel in (
        "MEMORY.md",
        ".memvault/config.toml",
        "templates/decision.md",
        ".obsidian/app.json",
        "people/sarah-chen.md",
    ):
        assert f"memvault/vault-template/{rel}" in names, rel
    assert "memvault/interfaces/cli/app.py" in names and "memvault/core/notes.py" in names


def test_ci_runs_the_readmes_test_command_word_for_word() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", readme, re.S)
    commands = [line.strip() for b in blocks for line in b.splitlines() if "pytest" in line]
    assert commands, "the README shows no test command"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[0] in ci.splitlines()
