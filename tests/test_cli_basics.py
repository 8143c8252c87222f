"""The CLI's conventions: --version, --help without torch, init, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from memvault import __version__
from memvault.interfaces.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_help_does_not_import_torch_or_the_model() -> None:
    code = (
        "import sys; from memvault.interfaces.cli import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
        "names = ('torch', 'sentence_transformers', 'hnswlib', 'watchdog', 'mcp', 'uvicorn')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "daemon"), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert "HEAVY []" in out.stdout
    assert "init" in out.stdout and "links" in out.stdout


def test_init_lays_the_template_down(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path / "mem"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert "MEMORY.md" in report["created"] and ".memvault/config.toml" in report["created"]
    for rel in (
        "people/sarah-chen.md",
        "projects/ai-assistant-refactor.md",
        "decisions/2024-03-12-why-postgresql.md",
        "logs/2024-03-15.md",
        "templates/decision.md",
        ".obsidian/app.json",
        ".memvault/.gitignore",
    ):
        assert (tmp_path / "mem" / rel).is_file(), rel
    assert report["skipped"] == []


def test_init_on_a_non_empty_folder_adds_only_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "people").mkdir()
    (tmp_path / "MEMORY.md").write_text("# Mine\nkeep me\n", encoding="utf-8")
    (tmp_path / "people" / "sarah-chen.md").write_text("my own sarah", encoding="utf-8")
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == "# Mine\nkeep me\n"
    assert (tmp_path / "people" / "sarah-chen.md").read_text(encoding="utf-8") == "my own sarah"
    assert "MEMORY.md" in result.output and "people/sarah-chen.md" in result.output
    assert (tmp_path / "logs" / "2024-03-15.md").is_file()


def test_no_vault_is_exit_3_with_a_hint(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["links", "check"])
    assert result.exit_code == 3
    assert "memvault init" in result.output


def test_vault_comes_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    runner.invoke(app, ["init", str(tmp_path / "v")])
    monkeypatch.setenv("MEMVAULT_VAULT", str(tmp_path / "v"))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["links", "check", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["count"] == 0


def test_sync_and_status_go_through_a_running_daemon(tmp_path: Path) -> None:
    from helpers import make_vault, open_vault, running_daemon, write

    root = make_vault(tmp_path)
    with open_vault(root) as v, running_daemon(v):
        v.sync()
        write(root, "people/ana.md", "---\ntitle: Ana\nsummary: Data lead.\n---\n# Ana\n")
        # the daemon holds the writer lock in real life; the CLI must ask it, not open the vault
        result = runner.invoke(app, ["sync", "--vault", str(root), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["created"] == ["people/ana.md"]
        status = runner.invoke(app, ["status", "--vault", str(root), "--json"])
        assert status.exit_code == 0, status.output
        data = json.loads(status.output)
        assert data["daemon"]["state"] == "running" and data["index"]["matches_disk"]


def test_links_check_gives_obsidians_verdicts_on_a_vault_with_every_link_form(
    tmp_path: Path,
) -> None:
    """Every link form on disk, before any sync: only the links Obsidian cannot
    follow are reported, each with file:line, and the exit code says so."""
    root = tmp_path / "v"
    files = {
        "MEMORY.md": "# Memory\n\n- [[people/sarah-chen]]\n",
        "people/sarah-chen.md": "---\naliases: [Sarah]\n---\n# Sarah Chen\n\n## Role\n\ntext ^role\n",
        "projects/alpha/notes.md": "# Alpha notes\n\nSee [[plan]] and [[notes]].\n",
        "projects/alpha/plan.md": "# Plan\n",
        "projects/beta/notes.md": "# Beta notes\n",
        "assets/diagram.png": "",
        "logs/2024-03-15.md": (
            "# Log\n"
            "[[sarah-chen#Role]] [[sarah-chen#^role]] [[Sarah-Chen|the lead]] ![[diagram.png]]\n"
            "[[#Log]] [markdown](../people/sarah-chen.md) [[../projects/beta/notes]]\n"
            "[[notes]]\n"  # line 4: two notes.md, neither in logs/: ambiguous
            "[[Sarah]]\n"  # line 5: an alias only; Obsidian shows it unresolved
            "[[nobody]] and [[people/ghost#Heading|Ghost]]\n"  # line 6: unresolved twice
            "`[[in inline code]]`\n"
            "```\n[[in a code block]]\n```\n"
        ),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / ".memvault").mkdir()
    result = runner.invoke(app, ["links", "check", "--vault", str(root), "--json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    found = sorted(
        (p["source"], p["line"], p["target"], p["verdict"], tuple(p["candidates"]))
        for p in data["problems"]
    )
    assert found == [
        (
            "logs/2024-03-15.md",
            4,
            "notes",
            "ambiguous",
            ("projects/alpha/notes.md", "projects/beta/notes.md"),
        ),
        ("logs/2024-03-15.md", 5, "Sarah", "alias", ()),
        ("logs/2024-03-15.md", 6, "nobody", "unresolved", ()),
        ("logs/2024-03-15.md", 6, "people/ghost", "unresolved", ()),
    ]
    assert data["count"] == 3  # the alias-only link is listed, but not counted as broken
    text = runner.invoke(app, ["links", "check", "--vault", str(root)])
    assert "logs/2024-03-15.md:4:1: [[notes]] is ambiguous" in text.output
    assert "logs/2024-03-15.md:6:16: [[people/ghost#Heading|Ghost]] does not resolve" in text.output
    assert "2 unresolved, 1 ambiguous (1 alias-only, not counted)" in text.output
