"""memvault search / context / get / add / log: output, --json, exit codes, one writer."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attacks import ATTACKS
from helpers import make_vault, open_vault, write
from memvault.interfaces.cli import app
from memvault.vault.lock import WriterLock
from memvault.vault.template import init_vault

runner = CliRunner()
DECISION = "decisions/2024-03-12-why-postgresql.md"


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")  # config reads it at Vault.open
    root = make_vault(tmp_path)
    # indexed once, as `memvault up` does: a read never indexes a vault by itself
    assert runner.invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    return root


def run(*args: str | Path, input: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args], input=input)
    return result.exit_code, result.stdout, result.stderr


def as_json(*args: str | Path) -> dict:
    code, out, err = run(*args, "--json")
    assert code == 0, err
    return json.loads(out)


# -- reads -----------------------------------------------------------------------------------


def test_search_prints_address_score_and_snippet(vault: Path) -> None:
    code, out, _ = run("search", "PostgreSQL pgvector", "--vault", vault, "--k", "3")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 6  # a header line and a snippet line per hit
    for rank, (header, snippet) in enumerate(zip(lines[::2], lines[1::2], strict=True), 1):
        assert re.fullmatch(rf" {rank}\. \[\[[^\]]+\]\]  \d\.\d{{4}}  \S+\.md:\d+-\d+", header)
        assert snippet.startswith("    ") and snippet.strip()
    assert "[[decisions/2024-03-12-why-postgresql#" in out and f"  {DECISION}:" in out


def test_search_json_is_the_hit_dicts(vault: Path) -> None:
    data = as_json("search", "PostgreSQL", "--vault", vault, "--k", "3", "--folder", "decisions")
    assert 0 < len(data["hits"]) <= 3
    hit = data["hits"][0]
    assert set(hit) >= {
        "path",
        "title",
        "heading",
        "line_start",
        "line_end",
        "snippet",
        "score",
        "text",
        "address",
    }
    assert all(h["path"].startswith("decisions/") for h in data["hits"])


def test_search_filters(vault: Path) -> None:
    tagged = as_json("search", "team", "--vault", vault, "--tag", "backend", "--tag", "person")
    assert {h["path"] for h in tagged["hits"]} == {"people/sarah-chen.md"}
    where = as_json("search", "team", "--vault", vault, "--where", "role=Backend Lead")
    assert {h["path"] for h in where["hits"]} == {"people/sarah-chen.md"}
    dated = as_json(
        "search", "PostgreSQL", "--vault", vault, "--since", "2024-03-13", "--path", "decisions/**"
    )
    assert dated["hits"] == []
    grouped = as_json("search", "PostgreSQL", "--vault", vault, "--group", "--k", "10")
    paths = [h["path"] for h in grouped["hits"]]
    assert len(paths) == len(set(paths))


def test_no_matches_is_said_on_stderr(vault: Path) -> None:
    code, out, err = run("search", "PostgreSQL", "--vault", vault, "--since", "2099-01-01")
    assert (code, out) == (0, "") and "no matches" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--where", "no-equals-sign"], "key=value"),
        (["--where", "=value"], "key=value"),
        (["--since", "last tuesday"], "since"),
        (["--until", "2024-13-45"], "until"),
        (["--k", "0"], "--k"),
    ],
)
def test_bad_filter_syntax_is_a_usage_error(vault: Path, args: list[str], message: str) -> None:
    code, _, err = run("search", "x", "--vault", vault, *args)
    assert code == 2 and message in err


def test_context_prints_the_text_within_the_budget(vault: Path) -> None:
    code, out, err = run(
        "context", "Why did we choose PostgreSQL?", "--budget", "400", "--vault", vault
    )
    assert code == 0
    assert "[[decisions/2024-03-12-why-postgresql" in out
    assert "/400 tokens" in err
    data = as_json("context", "Why did we choose PostgreSQL?", "--budget", "400", "--vault", vault)
    assert set(data) == {"query", "budget", "tokens", "text", "sources"}
    assert data["budget"] == 400 and 0 < data["tokens"] <= 400
    assert data["text"] == out.rstrip("\n")
    assert any(s["path"] == DECISION for s in data["sources"])


def test_context_takes_filters(vault: Path) -> None:
    data = as_json("context", "who prefers async updates", "--vault", vault, "--folder", "people")
    assert {s["path"] for s in data["sources"] if s["why"] == "hit"} <= {"people/sarah-chen.md"}


def test_get_prints_the_note_exactly(vault: Path) -> None:
    code, out, _ = run("get", "people/sarah-chen.md", "--vault", vault)
    assert code == 0
    assert out == (vault / "people/sarah-chen.md").read_text(encoding="utf-8")


def test_get_a_section_and_lines(vault: Path) -> None:
    code, out, _ = run("get", DECISION, "--heading", "Decision", "--vault", vault)
    assert code == 0 and out.startswith("## Decision") and "## Context" not in out
    data = as_json("get", "people/sarah-chen.md", "--lines", "2:3", "--vault", vault)
    assert data == {
        "path": "people/sarah-chen.md",
        "title": "Sarah Chen",
        "line_start": 2,
        "line_end": 3,
        "heading": None,
        "text": "title: Sarah Chen\ntype: person",
        "truncated": False,  # a note past vault.max_note_bytes says so
        "cut": None,
        "total_lines": None,
    }


@pytest.mark.parametrize(
    "args",
    [
        ["people/nobody.md"],
        ["people/sarah-chen.md", "--heading", "Hobbies"],
        ["people/sarah-chen.md", "--lines", "900:901"],
        ["people/sarah-chen.md", "--lines", "900:"],  # was exit 2, "must not run backwards"
    ],
)
def test_get_what_is_not_there_is_exit_4(vault: Path, args: list[str]) -> None:
    code, out, err = run("get", *args, "--vault", vault)
    assert code == 4 and out == "" and "error" in err


def test_get_bad_line_syntax_is_exit_2(vault: Path) -> None:
    code, _, err = run("get", "people/sarah-chen.md", "--lines", "ten", "--vault", vault)
    assert code == 2 and "lines" in err


@pytest.fixture
def vault_with_secrets(vault: Path) -> Path:
    """The vault, a secret beside it, a sibling 'vault-evil', symlinks leading out."""
    (vault.parent / "secret.md").write_text("SECRET", encoding="utf-8")
    (vault.parent / "vault-evil").mkdir()
    (vault.parent / "vault-evil" / "secret.md").write_text("SECRET", encoding="utf-8")
    (vault / "escape").symlink_to(vault.parent / "vault-evil")
    (vault / "escape-file.md").symlink_to(vault.parent / "secret.md")
    return vault


def test_every_traversal_attack_is_refused_with_exit_5(vault_with_secrets: Path) -> None:
    assert len(ATTACKS) >= 30
    for attack in ATTACKS:
        for extra in ([], ["--json"]):
            code, out, err = run("get", attack, "--vault", vault_with_secrets, *extra)
            assert code == 5, (attack, code, err)
            assert "SECRET" not in out and "SECRET" not in err, attack
            if extra:  # with --json the refusal is JSON on stdout too
                assert json.loads(out)["code"] == 5, attack
            else:
                assert out == "", attack


# -- writes ----------------------------------------------------------------------------------


def test_add_keeps_unicode_titles_readable(vault: Path) -> None:
    code, out, _ = run(
        "add",
        "people",
        "--title",
        "José Núñez",
        "--summary",
        "Joins in May",
        "--field",
        "role=SRE",
        "--field",
        "team=Platform",
        "--vault",
        vault,
    )
    assert code == 0 and out.strip() == "created people/josé-núñez.md"
    path = vault / unicodedata.normalize("NFC", "people/josé-núñez.md")
    text = path.read_text(encoding="utf-8")
    assert "# José Núñez" in text and "role: SRE" in text and "team: Platform" in text
    assert "[[people/josé-núñez]]" in (vault / "MEMORY.md").read_text(encoding="utf-8")


def test_add_json_body_from_stdin_and_the_clash_rule(vault: Path) -> None:
    body = "## Context\n\nOwns the **billing** pipeline.\n"
    code, out, _ = run(
        "add",
        "projects",
        "--title",
        "Billing v2",
        "--body",
        "-",
        "--json",
        "--vault",
        vault,
        input=body,
    )
    assert code == 0
    result = json.loads(out)
    assert result["path"] == "projects/billing-v2.md" and result["created"] is True
    assert result["report"]["created"] == ["projects/billing-v2.md"]
    assert "Owns the **billing** pipeline." in (vault / result["path"]).read_text(encoding="utf-8")

    code, out, err = run("add", "projects", "--title", "Billing v2", "--vault", vault)
    assert code == 5 and out == "" and "already exists" in err

    code, out, _ = run(
        "add",
        "projects",
        "--title",
        "Billing v2",
        "--body",
        "Paused for Q3.",
        "--field",
        "status=paused",
        "--update",
        "--vault",
        vault,
    )
    assert code == 0 and out.strip() == "updated projects/billing-v2.md"
    text = (vault / "projects/billing-v2.md").read_text(encoding="utf-8")
    # an update adds its body; the words already there stay
    assert "Paused for Q3." in text and "status: paused" in text and "billing** pipeline" in text
    hits = as_json("search", "Paused for Q3", "--vault", vault)["hits"]
    assert hits[0]["path"] == "projects/billing-v2.md"


def test_add_takes_the_title_as_typed_after_the_category_in_the_singular_or_any_case(
    vault: Path,
) -> None:
    """What a person types first: ``memvault add person "Ana Pérez"`` (before: "'person'
    is not one of ...", then "Missing option '--title'")."""
    for args, made in [
        (["person", "Ana Pérez", "--summary", "Payments lead"], "people/ana-pérez.md"),
        (["People/", "Bo Li"], "people/bo-li.md"),
        (["PROJECT", "Atlas", "--title", "Atlas"], "projects/atlas.md"),
        (["decisions", "--title", "Use Kafka"], None),
    ]:
        code, out, err = run("add", *args, "--vault", vault)
        assert code == 0, err
        if made is not None:
            assert out.strip() == f"created {made}"
    assert "[[people/ana-pérez]]" in (vault / "MEMORY.md").read_text(encoding="utf-8")
    code, _, err = run("add", "people", "Ana", "--title", "Bo", "--vault", vault)
    assert code == 2 and "two titles" in err


@pytest.mark.parametrize(
    "args",
    [
        ["pets", "--title", "Rex"],
        ["pets", "Rex"],
        ["people"],
        ["people", "--title", "X", "--field", "role"],
        ["people", "--title", "X", "--field", "bad key=v"],
        ["people", "--title", "///"],
    ],
)
def test_add_bad_arguments_are_exit_2(vault: Path, args: list[str]) -> None:
    code, _, _ = run("add", *args, "--vault", vault)
    assert code == 2


def test_log_appends_to_todays_log(vault: Path) -> None:
    today = dt.date.today().isoformat()
    code, out, _ = run("log", "Deployed v2.3 to staging", "--vault", vault)
    assert code == 0 and out.strip() == f"logged to logs/{today}.md"
    result = as_json("log", "Rolled back v2.3", "--vault", vault)
    assert result["path"] == f"logs/{today}.md" and result["created"] is False
    text = (vault / "logs" / f"{today}.md").read_text(encoding="utf-8")
    assert text.index("Deployed v2.3 to staging") < text.index("Rolled back v2.3")
    code, _, err = run("log", "   ", "--vault", vault)
    assert code == 2 and "nothing to log" in err


# -- one writer ------------------------------------------------------------------------------


def test_when_another_process_holds_the_lock_reads_work_and_writes_exit_6(vault: Path) -> None:
    assert run("search", "PostgreSQL", "--vault", vault)[0] == 0  # index built once
    lock = WriterLock(vault / ".memvault" / "lock")
    lock.acquire()
    try:
        code, out, _ = run("search", "PostgreSQL", "--vault", vault)
        assert code == 0 and "[[decisions/2024-03-12-why-postgresql" in out
        code, _, err = run("add", "people", "--title", "Ana", "--vault", vault)
        assert code == 6 and "already writing to this vault" in err
        assert run("log", "x", "--vault", vault)[0] == 6
        assert not (vault / "people" / "ana.md").exists()
    finally:
        lock.release()


def test_a_daemon_file_with_a_dead_pid_falls_back_to_in_process(vault: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    write(
        vault,
        ".memvault/daemon.json",
        json.dumps({"pid": proc.pid, "host": "127.0.0.1", "port": 9, "token": "x" * 43}),
    )
    code, out, _ = run("search", "PostgreSQL", "--vault", vault)
    assert code == 0 and "[[decisions/2024-03-12-why-postgresql" in out
    assert run("add", "people", "--title", "Ana", "--vault", vault)[0] == 0


def test_with_a_daemon_up_commands_go_through_it_and_print_the_same(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from helpers import running_daemon
    from memvault.interfaces.cli import agent

    monkeypatch.setattr(agent, "SLOW_ALONE", 0.0)  # through a daemon: never told of `up`

    run("search", "x", "--vault", vault)  # index built in-process first
    queries = [
        ("search", "PostgreSQL pgvector", "--k", "4"),
        ("context", "Why PostgreSQL?", "--budget", "300"),
        ("get", DECISION, "--heading", "Decision"),
    ]
    before = [as_json(*q, "--vault", vault) for q in queries]
    with open_vault(vault) as daemon_vault, running_daemon(daemon_vault):
        # The daemon holds the writer lock: these can only succeed through it.
        assert [as_json(*q, "--vault", vault) for q in queries] == before
        assert "memvault up" not in run("search", "PostgreSQL", "--vault", vault)[2]
        code, out, _ = run("add", "people", "--title", "Ana Lopez", "--vault", vault)
        assert code == 0 and out.strip() == "created people/ana-lopez.md"
        assert run("log", "via the daemon", "--vault", vault)[0] == 0
        code, out, _ = run("get", "../secret.md", "--vault", vault)
        assert code == 5 and out == ""
        assert run("get", "people/nobody.md", "--vault", vault)[0] == 4
        assert run("add", "people", "--title", "Ana Lopez", "--vault", vault)[0] == 5
        assert run("search", "x", "--since", "soon", "--vault", vault)[0] == 2


def test_mcp_without_a_vault_is_exit_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("mcp")
    assert code == 3 and out == "" and "memvault init" in err


# -- the real model --------------------------------------------------------------------------


@pytest.mark.model
def test_end_to_end_with_the_real_model(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    init_vault(root)
    body = (
        "Maya looks after our greenhouse. She waters the tomato seedlings every morning "
        "and keeps the orchids humid."
    )
    code, _, err = run("add", "people", "--title", "Maya Torres", "--body", body, "--vault", root)
    assert code == 0, err
    hits = as_json("search", "who takes care of the plants?", "--k", "3", "--vault", root)["hits"]
    assert "people/maya-torres.md" in [h["path"] for h in hits]
    for budget in (150, 600):
        ctx = as_json(
            "context", "who takes care of the plants?", "--budget", str(budget), "--vault", root
        )
        assert 0 < ctx["tokens"] <= budget
    assert (
        "maya-torres"
        in as_json("context", "gardening help", "--budget", "800", "--vault", root)["text"]
    )


def test_agent_commands_are_listed_and_help_imports_nothing_heavy() -> None:
    code = (
        "import sys; from memvault.interfaces.cli import app\n"
        "for args in (['--help'], ['search', '--help'], ['add', '--help']):\n"
        "    try:\n        app(args)\n    except SystemExit:\n        pass\n"
        "heavy = [m for m in ('httpx', 'memvault.client', 'memvault.api', 'mcp', 'numpy')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy)"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(root / "daemon"), "PATH": "/usr/bin:/bin"},
    )
    assert "HEAVY []" in out.stdout
    for command in ("search", "context", "get", "add", "log", "mcp"):
        assert command in out.stdout
    assert "--where" in out.stdout and "--field" in out.stdout


# -- a person's first day -------------------------------------------------------------


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A vault as `memvault init` makes it."""
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "mem"
    assert run("init", root)[0] == 0
    return root


def test_log_on_a_new_day_goes_under_the_date_and_becomes_the_summary(fresh: Path) -> None:
    code, _, err = run("log", "Deployed the retrieval stage to staging", "--vault", fresh)
    assert code == 0, err
    (day,) = (fresh / "logs").iterdir()
    text = day.read_text(encoding="utf-8")
    body = text.split("---\n", 2)[2]
    assert re.fullmatch(
        r"# \d{4}-\d\d-\d\d\n\n- \d\d:\d\d Deployed the retrieval stage to staging\n\n"
        r"## Follow-ups\n",
        body,
    ), body  # not under "## Follow-ups", and no template hint left in it
    code, _, _ = run("log", "Second entry", "--vault", fresh)
    assert code == 0
    lines = day.read_text(encoding="utf-8").split("\n")
    assert lines.index("## Follow-ups") > next(i for i, x in enumerate(lines) if "Second" in x)
    memory = (fresh / "MEMORY.md").read_text(encoding="utf-8")
    assert f"[[logs/{day.stem}]] - " in memory and "Deployed the retrieval stage" in memory
    assert "Timestamped" not in memory and "What happened" not in memory


def test_add_without_a_summary_takes_no_placeholder_for_one(fresh: Path) -> None:
    code, _, err = run("add", "decisions", "--title", "Use Kafka for events", "--vault", fresh)
    assert code == 0, err
    (path,) = (fresh / "decisions").glob("*use-kafka-for-events.md")
    text = path.read_text(encoding="utf-8")
    assert "## Context" in text and "## Decision" in text  # the headings...
    assert "%%" not in text and "constraints" not in text  # ...not the hints
    memory = (fresh / "MEMORY.md").read_text(encoding="utf-8")
    line = next(x for x in memory.splitlines() if "use-kafka-for-events" in x)
    assert "constraints" not in line and "problem" not in line
    # a person's note made from the template in Obsidian keeps its hints on disk, and
    # memvault neither indexes nor summarises them
    hints = (fresh / "templates" / "decision.md").read_text(encoding="utf-8")
    write(fresh, "decisions/by-hand.md", hints.replace("{{title}}", "By hand"))
    data = as_json("search", "constraints options considered", "--vault", fresh)
    assert not any("constraints" in h["text"] or "%%" in h["text"] for h in data["hits"])
    ctx = as_json("context", "What are the constraints and the options?", "--vault", fresh)
    assert "constraints" not in ctx["text"].replace("What are the constraints", "")


@pytest.mark.parametrize(
    "command",
    [
        ["status"],
        ["sync"],
        ["log", "hi"],
        ["add", "people", "--title", "Ana"],
        ["search", "x"],
        ["context", "x"],
        ["get", "MEMORY.md"],
        # not `links check`: it reads any folder of notes and writes nothing (issue 24;
        # tests/test_first_week.py checks that folder is left as it was)
        ["mcp"],
        ["daemon", "start"],
        ["obsidian", "install"],
    ],
)
def test_a_folder_that_is_not_a_vault_is_refused_and_left_as_it_was(
    tmp_path: Path, command: list[str]
) -> None:
    folder = tmp_path / "some" / "folder"
    folder.mkdir(parents=True)
    write(folder, "MEMORY.md", "# my agent's own memory\n")
    write(folder, "notes/a.md", "a note\n")
    before = sorted(
        (p.relative_to(folder), p.read_bytes()) for p in folder.rglob("*") if p.is_file()
    )
    code, out, err = run(*command, "--vault", folder)
    assert code == 3, (command, code, out, err)
    assert f"memvault init {folder}" in err and f"memvault migrate {folder / 'MEMORY.md'}" in err
    after = sorted(
        (p.relative_to(folder), p.read_bytes()) for p in folder.rglob("*") if p.is_file()
    )
    assert after == before and not (folder / ".memvault").exists()


def test_daemon_run_on_a_folder_that_is_not_a_vault_is_refused(tmp_path: Path) -> None:
    # a subprocess with a timeout: on a folder taken for a vault it would serve forever
    out = subprocess.run(
        [sys.executable, "-m", "memvault", "daemon", "run", "--vault", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "daemon"),
            "PATH": "/usr/bin:/bin",
        },
    )
    assert out.returncode == 3 and f"memvault init {tmp_path}" in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_memvault_vault_env_naming_a_plain_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_VAULT", str(tmp_path))
    code, _, err = run("status")
    assert code == 3 and "(MEMVAULT_VAULT) is not a memvault vault" in err
    assert not (tmp_path / ".memvault").exists()


def test_json_errors_are_json_on_stdout_with_the_same_exit_code(vault: Path) -> None:
    code, out, err = run("get", "decisions/nope.md", "--vault", vault, "--json")
    assert code == 4 and json.loads(out) == {"error": json.loads(out)["error"], "code": 4}
    assert "decisions/nope.md" in json.loads(out)["error"] and "nope" in err
    code, out, _ = run("search", "x", "--since", "soon", "--vault", vault, "--json")
    assert code == 2 and json.loads(out)["code"] == 2 and "since" in json.loads(out)["error"]
    code, out, _ = run(
        "add", "people", "--title", "T", "--field", "nokey", "--vault", vault, "--json"
    )
    assert code == 2 and "key=value" in json.loads(out)["error"]
    code, out, _ = run("status", "--vault", vault / "nope", "--json")
    assert code == 3 and json.loads(out)["code"] == 3
    code, out, _ = run("add", "people", "--title", "Sarah Chen", "--vault", vault, "--json")
    assert code == 5 and json.loads(out)["code"] == 5


def test_a_usage_error_with_json_is_json_too(vault: Path) -> None:
    # click parses the options before any command runs: the console script answers
    out = subprocess.run(
        [sys.executable, "-m", "memvault", "search", "x", "--k", "0", "--json", "--vault", vault],
        capture_output=True,
        text=True,
        env={
            "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "daemon"),
            "PATH": "/usr/bin:/bin",
        },
    )
    assert out.returncode == 2
    data = json.loads(out.stdout)
    assert data["code"] == 2 and "--k" in data["error"]


def test_a_note_that_exists_names_the_update_flag(vault: Path) -> None:
    code, _, err = run("add", "people", "--title", "Sarah Chen", "--vault", vault)
    assert code == 5
    assert "people/sarah-chen.md already exists (pass --update to change it)" in err


def test_a_slow_read_without_a_daemon_says_up_keeps_the_index_open(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large vault's index is read whole at each open without a daemon (100,000
    notes: ~15 s a search): past ``SLOW_ALONE`` the command says what keeps it open."""
    from memvault.interfaces.cli import agent

    code, out, err = run("search", "PostgreSQL", "--vault", vault, "--json")
    assert code == 0 and "memvault up" not in err  # quick: nothing said
    monkeypatch.setattr(agent, "SLOW_ALONE", 0.0)
    code, out, err = run("search", "PostgreSQL", "--vault", vault, "--json")
    assert code == 0 and json.loads(out)  # stdout stays the answer alone
    assert "with no daemon, each command opens the index itself" in err
    assert f"`memvault up {vault}` keeps it open" in err


def test_hits_found_by_keywords_alone_are_said_on_stderr(capsys: pytest.CaptureFixture) -> None:
    """Hits ``pending`` (vectors still queued, or the model's process away: every hit)
    are said, as --json, HTTP and MCP say them: before, the text answer looked like a
    search by meaning."""
    from memvault.core.results import Hit
    from memvault.interfaces.cli.agent import print_hits

    hit = Hit("a.md", "A", ("A",), 1, 3, "billing", 0.5)
    print_hits([hit])
    assert "keywords alone" not in capsys.readouterr().err
    print_hits([hit, Hit("b.md", "B", ("B",), 1, 3, "billing", 0.4, pending=True)])
    captured = capsys.readouterr()
    assert "1 of 2 hits found by keywords alone" in captured.err
    assert "keywords alone" not in captured.out  # (stdout: the hits, for scripts)
