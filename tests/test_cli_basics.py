"""The CLI's conventions: --version, --help without torch, init, exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memvault import __version__
from memvault.interfaces.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


# A daemon's own modules, written where asked: a thread of the daemon (sitecustomize).
_MODULES_SEEN = """\
import os, sys, threading, time
def _watch(ask=os.environ["MODULES_ASK"], said=os.environ["MODULES_SAID"]):
    while not os.path.exists(ask):
        time.sleep(0.05)
    with open(said + ".part", "w") as fh:
        fh.write("\\n".join(sorted(sys.modules)))
    os.replace(said + ".part", said)
threading.Thread(target=_watch, daemon=True).start()
"""


def test_a_running_daemon_holds_no_rich_and_no_cli(tmp_path: Path) -> None:
    """``memvault daemon run`` prints its start as plain lines and makes the CLI's
    consoles only when something is printed: rich's 41 modules (1.4 MiB) stayed for the
    daemon's life (bench/RESULTS.md, "byte by byte"); and it enters the daemon without the
    CLI (interfaces/daemon_run): typer and the CLI's modules stayed too."""
    from helpers import DAEMON_DIR, DaemonProcess, new_vault

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_MODULES_SEEN)
    root = new_vault(tmp_path)
    ask, said = tmp_path / "ask", tmp_path / "said"
    daemon = DaemonProcess(
        tmp_path,
        root,
        PYTHONPATH=f"{site}{os.pathsep}{DAEMON_DIR}",
        MODULES_ASK=str(ask),
        MODULES_SAID=str(said),
    )
    try:
        daemon.ready(answering=True)
        ask.write_text("")
        deadline = time.monotonic() + 30
        while not said.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        modules = said.read_text().split()
    finally:
        assert daemon.stop() == 0
    assert "memvault.service.daemon" in modules and "uvicorn" in modules  # it served
    assert "memvault daemon serving" in daemon.stderr  # its start, said
    assert [m for m in modules if m == "rich" or m.startswith("rich.")] == []
    framework = ("typer", "memvault.interfaces.cli")  # (click stays: uvicorn's own import)
    assert [m for m in modules if m in framework or m.startswith(framework)] == []


def test_daemon_run_is_read_without_the_cli_only_as_the_cli_reads_it() -> None:
    """``daemon run`` and its three options, as the CLI reads them, are served without the
    CLI; anything else is the CLI's to read and answer (None), as before."""
    from memvault.interfaces.daemon_run import RunArgs, parse

    assert parse(["daemon", "run"]) == RunArgs()
    assert parse(["daemon", "run", "--vault", "/v", "--log-file"]) == RunArgs(
        Path("/v"), None, True
    )
    assert parse(["daemon", "run", "--port=0", "--vault=a b"]) == RunArgs(Path("a b"), 0, False)
    for other in (
        ["daemon", "start", "--vault", "/v"],
        ["daemon", "run", "--help"],
        ["daemon", "run", "--vault"],  # its value missing
        ["daemon", "run", "--vault", "/v", "--vault", "/w"],
        ["daemon", "run", "--port", "x"],
        ["daemon", "run", "--port", "-1"],
        ["daemon", "run", "--log-file", "--log-file"],
        ["daemon", "run", "--log-file=1"],
        ["daemon", "run", "--json"],
        ["daemon", "run", "extra"],
        ["up", "/v"],
        [],
    ):
        assert parse(other) is None, other


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["--help"], 0, "Run the daemon in the foreground"),
        (["--port", "x"], 2, "'x' is not a valid int"),
        (["--nope"], 2, "No such option: --nope"),
    ],
)
def test_daemon_run_the_cli_reads_is_answered_as_before(
    tmp_path: Path, args: list[str], code: int, said: str
) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "memvault", "daemon", "run", "--vault", str(tmp_path), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT / "daemon"), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == code and said in out.stdout + out.stderr
    assert list(tmp_path.iterdir()) == []


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


EXAMPLE_NOTES = (
    "people/sarah-chen.md",
    "projects/ai-assistant-refactor.md",
    "decisions/2024-03-12-why-postgresql.md",
    "logs/2024-03-15.md",
)


def test_init_lays_down_structure_templates_and_settings_but_no_notes(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path / "mem"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert "MEMORY.md" in report["created"] and ".memvault/config.toml" in report["created"]
    for rel in ("templates/decision.md", ".obsidian/app.json", ".memvault/.gitignore"):
        assert (tmp_path / "mem" / rel).is_file(), rel
    for folder in ("people", "projects", "decisions", "logs"):
        assert (tmp_path / "mem" / folder).is_dir() and not any(
            (tmp_path / "mem" / folder).iterdir()
        )
    # the fictional Sarah Chen became a user's memory
    notes = [p for p in (tmp_path / "mem").rglob("*.md") if "templates" not in p.parts]
    assert [p.name for p in notes] == ["MEMORY.md"]
    assert "[[" not in (tmp_path / "mem" / "MEMORY.md").read_text(encoding="utf-8")
    assert report["skipped"] == [] and report["notes"] == 0


def test_init_example_adds_the_example_notes(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path / "demo"), "--example"])
    assert result.exit_code == 0, result.output
    for rel in EXAMPLE_NOTES:
        assert (tmp_path / "demo" / rel).is_file(), rel
    assert "[[people/sarah-chen]]" in (tmp_path / "demo" / "MEMORY.md").read_text(encoding="utf-8")


def test_init_on_a_non_empty_folder_adds_only_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "people").mkdir()
    (tmp_path / "MEMORY.md").write_text("# Mine\nkeep me\n", encoding="utf-8")
    (tmp_path / "people" / "ana.md").write_text("my own ana", encoding="utf-8")
    (tmp_path / "ideas.md").write_text("an idea", encoding="utf-8")
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "app.json").write_text("{}", encoding="utf-8")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert {p: p.read_bytes() for p in before} == before  # every file kept byte for byte
    added = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    added -= {p.relative_to(tmp_path).as_posix() for p in before}
    assert added == {
        ".gitattributes",
        ".memvault/config.toml",
        ".memvault/.gitignore",
        "templates/daily-log.md",
        "templates/decision.md",
        "templates/person.md",
        "templates/project.md",
    }  # no example notes, nothing added into a person's Obsidian settings
    # and it says so
    assert "2 notes were already here, kept as they are" in result.output
    assert "+ templates/decision.md" in result.output and "= MEMORY.md" in result.output
    assert "kept your Obsidian settings (.obsidian/)" in result.output


OLD_DECISION = """---
title: "{{title}}"
type: decision
status: proposed
date: "{{date}}"
deciders: []
summary: ""
tags: []
---
# {{title}}

## Context

*The problem, the constraints, and the options that were considered.*

## Decision

*What was decided, by whom, in one or two sentences.*

## Consequences

*What becomes easier or harder; what must be done next; when to revisit.*

## Status

*Proposed, accepted or superseded, with the date and a link to any replacement.*
"""  # memvault's decision template before hints were marked


def test_init_brings_an_unchanged_old_template_up_to_date_and_keeps_an_edited_one(
    tmp_path: Path,
) -> None:
    root = tmp_path / "v"
    runner.invoke(app, ["init", str(root)])
    (root / "templates" / "decision.md").write_text(OLD_DECISION)  # as an earlier init left it
    (root / "templates" / "person.md").write_bytes(b"# my own person template\n")
    result = runner.invoke(app, ["init", str(root), "--json"])
    report = json.loads(result.output)
    assert report["updated"] == ["templates/decision.md"]
    assert b"%%" in (root / "templates" / "decision.md").read_bytes()
    assert (root / "templates" / "person.md").read_bytes() == b"# my own person template\n"


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


def test_status_lists_problems_and_exits_1_for_an_unclosed_memory_md_section(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "v"
    runner.invoke(app, ["init", str(root), "--example"])
    assert runner.invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    (root / "notes").mkdir()
    (root / "notes" / "binary.md").write_bytes(b"\x00\x01 binary")
    assert runner.invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    memory = root / "MEMORY.md"
    memory.write_text(
        memory.read_text(encoding="utf-8").replace("<!-- memvault:end logs -->\n", ""),
        encoding="utf-8",
    )  # a marker deleted by hand in Obsidian, and no sync since: status reads the file
    result = runner.invoke(app, ["status", "--vault", str(root)])
    assert result.exit_code == 1, result.output
    assert "problems (2)" in result.output
    assert "section 'logs' is never closed" in result.output
    assert "notes/binary.md: not indexed: binary file (NUL bytes)" in result.output
    result = runner.invoke(app, ["status", "--vault", str(root), "--json"])
    assert result.exit_code == 1
    listed = {p["path"]: p["kind"] for p in json.loads(result.stdout)["problems"]}
    assert listed == {"MEMORY.md": "memory", "notes/binary.md": "skipped"}


def test_status_says_how_many_chunks_still_wait_for_their_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a field test saw "index matches the files on disk" during a first index, and
    # nothing of the 1,949 chunks the vector lane had still to embed
    from memvault.api import Vault

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "v"
    runner.invoke(app, ["init", str(root)])
    for i in range(5):
        (root / "projects" / f"p{i}.md").write_text(f"# P{i}\n\nProject {i} ships soon.\n")
    with Vault.open(root) as v:
        v.sync(vectors=False)  # the structure lane only: every chunk queued
        waiting = v.status()["index"]["vectors_pending"]
    assert waiting > 0
    result = runner.invoke(app, ["status", "--vault", str(root)])
    assert f"{waiting:,} chunks waiting for their vectors" in result.output, result.output
    assert "`memvault sync` embeds them" in result.output
    assert runner.invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    result = runner.invoke(app, ["status", "--vault", str(root)])
    assert "waiting for their vectors" not in result.output


def test_status_names_the_notes_grown_long_before_a_write_to_them_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent appending to one note every turn: nothing said it grew until a write was
    refused at vault.max_note_bytes (the memory tool), or, the file written directly (Claude
    Code's topic files), what it appended past the cap was never indexed. Past a quarter
    of the cap, status names it (bench/RESULTS.md, "a year of an agent's writes")."""
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    monkeypatch.setenv("MEMVAULT_VAULT_MAX_NOTE_BYTES", "40000")
    root = tmp_path / "v"
    runner.invoke(app, ["init", str(root)])
    line = "- turn {}: the user asked about the deploy window, ticket PAY-{}\n"
    (root / "debugging.md").write_text("".join(line.format(i, i) for i in range(200)))
    (root / "notes.md").write_text("".join(line.format(i, i) for i in range(900)))
    (root / "short.md").write_text("".join(line.format(i, i) for i in range(100)))
    assert runner.invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    result = runner.invoke(app, ["status", "--vault", str(root)])
    out = " ".join(result.output.split())
    assert "long notes (2, past 10 KB): notes.md (900 lines, 60 KB, only the first 40 KB" in out
    assert "debugging.md (200 lines, 13 KB)" in out and "short.md" not in out
    assert "(vault.max_note_bytes) is refused" in out
    data = json.loads(runner.invoke(app, ["status", "--vault", str(root), "--json"]).stdout)
    long = data["long_notes"]
    assert (long["count"], long["from_bytes"], long["max_note_bytes"]) == (2, 10_000, 40_000)
    assert [(n["path"], n["lines"]) for n in long["notes"]] == [
        ("notes.md", 900),
        ("debugging.md", 200),
    ]
    # a note past LINES_COUNTED_BYTES is named by its size: a 500 MB dump is not read
    # whole at each status
    from memvault.engine import status as status_module

    monkeypatch.setattr(status_module, "LINES_COUNTED_BYTES", 20_000)
    data = json.loads(runner.invoke(app, ["status", "--vault", str(root), "--json"]).stdout)
    assert [(n["path"], n["lines"]) for n in data["long_notes"]["notes"]] == [
        ("notes.md", None),
        ("debugging.md", 200),
    ]
    out = " ".join(runner.invoke(app, ["status", "--vault", str(root)]).output.split())
    assert "notes.md (60 KB, only the first 40 KB indexed)" in out
    monkeypatch.undo()
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    monkeypatch.setenv("MEMVAULT_VAULT_MAX_NOTE_BYTES", "40000")
    (root / "notes.md").unlink()
    (root / "debugging.md").write_text("# Debugging\n\nSplit by topic.\n")
    assert runner.invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    assert "long notes" not in runner.invoke(app, ["status", "--vault", str(root)]).output


# -- progress ---------------------------------------------------------------------------


class Step:
    def __init__(self, done: int, total: int, embedded: int) -> None:
        self.done, self.total, self.embedded = done, total, embedded


def test_time_left_comes_from_the_average_rate_since_the_start() -> None:
    from memvault.interfaces.cli.common import Rate, duration

    now = [100.0]
    rate = Rate(clock=lambda: now[0])
    assert rate.left(10, 1000) is None  # no rate to go by yet
    now[0] = 160.0  # a minute for 100 notes, bursts or not
    assert rate.left(100, 1000) == 540.0
    assert duration(rate.left(100, 1000)) == "about 9 min left"
    assert duration(42.0) == "about 40 s left" and duration(7200.0) == "about 2.0 h left"


def test_the_bar_on_a_terminal_shows_its_columns_within_80_columns(monkeypatch) -> None:
    import io

    from rich.console import Console

    from memvault.interfaces.cli import common

    buf = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=buf, force_terminal=True, width=80))
    with common.progress_bar("indexing") as bar:
        for done in range(0, 60_001, 6_000):
            bar(Step(done, 60_000, done * 5))
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    lines = [x for x in re.split(r"[\r\n]", screen) if x.strip()]
    assert "[progress.description]" not in screen  # was shown literally (markup=False)
    assert any("60000/60000 notes, 300,000 chunks" in x for x in lines), lines
    assert all(len(x) <= 80 for x in lines), max(lines, key=len)


def test_not_on_a_terminal_progress_is_a_line_now_and_then(monkeypatch) -> None:
    import io

    from rich.console import Console

    from memvault.interfaces.cli import common

    buf = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=buf, force_terminal=False, width=200))
    monkeypatch.setattr(common, "PROGRESS_LINE_SECONDS", 0.0)
    with common.progress_bar("indexing") as bar:
        bar(Step(5, 10, 0))  # too little work for progress
        for done in (100, 200, 300):
            bar(Step(done, 300, done * 2))
    assert buf.getvalue().splitlines() == [
        "indexing: 100/300 notes, 200 chunks embedded, estimating time left",
        "indexing: 200/300 notes, 400 chunks embedded, estimating time left",
    ]  # one plain line each time, none at the end (the summary follows)


def test_a_command_suggested_for_a_folder_with_spaces_runs_as_pasted(tmp_path: Path) -> None:
    # found in a field test: `next: memvault up /tmp/sp ace` broke when copied and pasted
    import shlex

    folder = tmp_path / "My Vault ünï 日本"
    result = runner.invoke(app, ["init", str(folder)])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("next: memvault up "))
    assert shlex.split(line.removeprefix("next: ").split("   ")[0]) == [
        "memvault",
        "up",
        str(folder),
    ]
    result = runner.invoke(app, ["search", "--vault", str(folder), "anything"])
    said = re.search(r"`(memvault sync --vault [^`]+)`", result.output)
    assert said and shlex.split(said.group(1))[-1] == str(folder)
    missing = tmp_path / "no such"
    result = runner.invoke(app, ["status", "--vault", str(missing)])
    said = re.search(r"`(memvault init [^`]+)`", result.output)
    assert said and shlex.split(said.group(1))[-1] == str(missing)
