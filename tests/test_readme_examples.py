"""The README's shell examples (and docs/'), run as written: two of them once failed.

The Python block is run by tests/test_api.py. Here: each ``console`` block whose output
can be made on this machine is run through the shell as the README writes it, and its
output must be what the README shows (a line ``…`` stands for any lines; ``/home/ana`` is
the test's home folder). The "Agents: the CLI" steps, shown without output, must each
succeed right after the ``init --example ./demo && cd demo`` the README starts them with.
The migration demo (52,847 lines, minutes of the real model) is measured in bench/, not here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# the console blocks shown with output: the README's and those of the pages it links in docs/
SHOWN = "\n".join(
    [README] + [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))]
)


def console_blocks() -> dict[str, list[str]]:
    """command -> the output lines the README shows for it (first command of a block)."""
    out = {}
    for block in re.findall(r"```console\n(.*?)```", SHOWN, re.S):
        lines = block.rstrip("\n").split("\n")
        command = lines[0].removeprefix("$ ")
        rest = []
        for line in lines[1:]:
            if line.startswith("$ "):
                break
            rest.append(line)
        out[command] = rest
    return out


def shell(command: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``command`` through bash, ``memvault`` being this checkout's."""
    bindir = home / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    script = bindir / "memvault"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m memvault "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(
        PYTHONPATH=str(ROOT / "daemon"),
        HOME=str(home),
        PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}",
        MEMVAULT_INDEX_MODEL="hash",
        COLUMNS="200",
    )
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def matches(shown: list[str], got: list[str]) -> bool:
    """Whether ``got`` is what the README shows, ``…`` standing for any lines."""
    pattern = "".join(
        "(?:.*\n)*?" if line.strip() == "…" else re.escape(line) + "\n" for line in shown
    )
    return re.fullmatch(pattern, "\n".join(got) + "\n") is not None


def test_links_check_on_the_readmes_obsidian_vault(tmp_path: Path) -> None:
    command = "memvault links check --vault tests/fixtures/obsidian-vault"
    shown = console_blocks()[command]
    before = sorted(
        p.relative_to(ROOT) for p in (ROOT / "tests/fixtures/obsidian-vault").rglob("*")
    )
    proc = shell(command, ROOT, tmp_path / "home")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # "exits 1 when there is any..."
    assert proc.stdout.rstrip("\n").split("\n") == shown
    after = sorted(p.relative_to(ROOT) for p in (ROOT / "tests/fixtures/obsidian-vault").rglob("*"))
    assert after == before  # nothing written: no .memvault/, no index


def test_init_on_a_folder_of_notes_says_what_the_readme_shows(tmp_path: Path) -> None:
    command = "memvault init ~/notes"
    home = tmp_path / "home"
    notes = home / "notes"
    (notes / ".obsidian").mkdir(parents=True)
    (notes / ".obsidian" / "app.json").write_text("{}\n", encoding="utf-8")
    (notes / "logs").mkdir()
    for n in range(30):
        (notes / "work" / f"note-{n}.md").parent.mkdir(exist_ok=True)
        (notes / "work" / f"note-{n}.md").write_text(f"# Note {n}\n", encoding="utf-8")
    for n in range(7):
        (notes / "logs" / f"2024-03-0{n + 1}.md").write_text("# a day\n", encoding="utf-8")
    shown = [line.replace("/home/ana", str(home)) for line in console_blocks()[command]]
    proc = shell(command, tmp_path, home)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = proc.stdout.rstrip("\n").split("\n")
    assert matches(shown, got), "\n".join(got)


def agent_steps() -> list[str]:
    part = README.split("### Agents: the CLI", 1)[1]
    (block,) = re.findall(r"```sh\n(.*?)```", part.split("\n### ", 1)[0], re.S)
    return [line for line in block.strip().split("\n") if line.strip()]


def test_the_agents_cli_steps_run_right_after_init_example(tmp_path: Path) -> None:
    setup = re.search(r"On the example vault \(`([^`]+)`", README)
    assert setup is not None
    home = tmp_path / "home"
    steps = agent_steps()
    assert steps and steps[0].startswith("memvault context")
    proc = shell(" && ".join([setup[1], *steps]), tmp_path, home)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Why we chose PostgreSQL" in proc.stdout or "PostgreSQL" in proc.stdout
    assert "created decisions/" in proc.stdout  # the add step


@pytest.mark.parametrize("step", range(len(agent_steps())))
def test_each_agents_cli_step_on_its_own(tmp_path: Path, step: int) -> None:
    setup = re.search(r"On the example vault \(`([^`]+)`", README)
    assert setup is not None
    proc = shell(f"{setup[1]} >/dev/null && {agent_steps()[step]}", tmp_path, tmp_path / "home")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_python_examples_tag_is_one_the_demo_has(tmp_path: Path) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", README, re.S)
    home = tmp_path / "home"
    assert shell("memvault init --example my-memory", tmp_path, home).returncode == 0
    script = tmp_path / "example.py"
    script.write_text(block + "print('hits:', [h.path for h in hits])\n", encoding="utf-8")
    proc = shell(f"{sys.executable} {script}", tmp_path, home)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hits: ['decisions/2024-03-12-why-postgresql.md'" in proc.stdout


def readme_commands() -> list[str]:
    """Every ``memvault`` command of the README's ``sh`` blocks, comments cut, in order;
    ``a|b|c`` (``daemon start|stop|status``) stands for each, ``stop`` run last. Not
    here: ``memvault up`` (a foreground server, after the block's ``pip install``) and
    lines that start with another program (``pip``, ``claude``, ``python``, ``ruff``)."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        for line in block.split("\n"):
            command = re.sub(r"\s+#.*$", "", line).strip()
            if not command.startswith("memvault "):
                continue
            words = command.split(" ")
            alt = next((i for i, w in enumerate(words) if "|" in w), None)
            if alt is None:
                commands.append(command)
                continue
            choices = words[alt].split("|")
            choices.sort(key=lambda c: c == "stop")
            commands += [" ".join([*words[:alt], c, *words[alt + 1 :]]) for c in choices]
    return commands


def test_every_memvault_command_the_readme_shows_runs_as_shown(tmp_path: Path) -> None:
    """In a home of its own: ``~/memory`` the example vault, ``~/code/app`` a project, and
    for ``migrate`` a folder holding a small MEMORY.md dump. Each command, as the README
    writes it, exits 0 (``daemon install`` writes its unit under this home)."""
    commands = readme_commands()
    assert {"memvault status", "memvault daemon stop", "memvault migrate MEMORY.md"} <= set(
        commands
    )
    assert any(c.startswith("memvault connect claude-code") for c in commands)
    home = tmp_path / "home"
    (home / "code" / "app").mkdir(parents=True)
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "MEMORY.md").write_text(
        "# Memory\n\n## People\n\n- 2024-03-01: Sarah Chen leads the platform team.\n\n"
        "## Decisions\n\n- 2024-03-12: we chose PostgreSQL over MongoDB for the schema.\n",
        encoding="utf-8",
    )
    assert shell("memvault init --example ~/memory", tmp_path, home).returncode == 0
    try:
        for command in commands:
            cwd = dump if " migrate " in f"{command} " else home / "memory"
            proc = shell(command, cwd, home)
            assert proc.returncode == 0, f"{command}\n{proc.stdout}{proc.stderr}"
    finally:
        shell("memvault daemon stop", home / "memory", home)
