"""The wheel ships the vault template; the README's test command is what CI runs."""

from __future__ import annotations

import os
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
        ".gitattributes",
        "templates/decision.md",
        ".obsidian/app.json",
    ):
        assert f"memvault/vault-template/{rel}" in names, rel
    # a new vault gets no notes; `memvault init --example` takes them from here
    assert not any(n.startswith("memvault/vault-template/people/") for n in names)
    assert "memvault/vault-example/people/sarah-chen.md" in names
    assert "memvault/interfaces/cli/app.py" in names and "memvault/core/notes.py" in names
    # the graph's projection for the default model (index/projection.py): without it an
    # installed memvault keeps the full graph, twice the memory
    assert "memvault/index/graph_projection.npz" in names
    # the built Obsidian plugin, byte for byte, so `memvault obsidian install` needs no Node
    with zipfile.ZipFile(wheel) as zf:
        for name in ("main.js", "manifest.json", "styles.css"):
            shipped = zf.read(f"memvault/obsidian-plugin/{name}")
            assert shipped == (ROOT / "obsidian-plugin" / name).read_bytes(), name
        shipped_plugin = sorted(n for n in names if n.startswith("memvault/obsidian-plugin/"))
        assert shipped_plugin == [
            f"memvault/obsidian-plugin/{n}" for n in ("main.js", "manifest.json", "styles.css")
        ]  # not its sources, not node_modules
        unpacked = tmp_path / "unpacked"
        zf.extractall(unpacked)
    vault = tmp_path / "vault"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["PYTHONPATH"] = str(unpacked)  # the wheel's package, not the checkout's
    for example in ([], ["--example"]):  # the template, then the example notes, from the wheel
        made = subprocess.run(
            [sys.executable, "-m", "memvault", "init", str(vault), *example],
            env=env,
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert made.returncode == 0, made.stderr
        assert (vault / "people" / "sarah-chen.md").is_file() == bool(example)
    r = subprocess.run(
        [sys.executable, "-m", "memvault", "obsidian", "install", "--vault", str(vault), "--json"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    installed = vault / ".obsidian" / "plugins" / "memvault" / "main.js"
    assert installed.read_bytes() == (ROOT / "obsidian-plugin" / "main.js").read_bytes()


def test_ci_runs_the_readmes_test_command_word_for_word() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", readme, re.S)
    commands = [line.strip() for b in blocks for line in b.splitlines() if "pytest" in line]
    assert commands, "the README shows no test command"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[0] in ci.splitlines()
