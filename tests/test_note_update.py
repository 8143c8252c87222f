"""An agent's update keeps every word a person wrote unless it names the words it
replaces: through MCP memory_write, HTTP POST /notes and
`memvault add --update`, each against the real adapter."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal
from starlette.testclient import TestClient

from helpers import open_vault, run_memvault
from memvault.core.note_update import NoSuchHeading, append_body, replace_section
from memvault.service.http_api import create_app
from memvault.vault.template import init_vault
from test_mcp_server import mcp_session, text_of

ROOT = Path(__file__).resolve().parents[1]
SARAH = (
    "---\ntitle: Sarah Chen\n---\n# Sarah Chen\n\nMy sister-in-law, lives in Leeds.\n\n"
    "## Health\n\nSevere peanut allergy: carries an EpiPen.\n\n## Hobbies\n\nClimbing.\n"
)
PERSON_WORDS = ("My sister-in-law, lives in Leeds.", "Severe peanut allergy: carries an EpiPen.")


def person_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    init_vault(root)
    (root / "people" / "Sarah Chen.md").write_text(SARAH, encoding="utf-8")
    return root


def sarah(root: Path) -> str:
    return (root / "people" / "Sarah Chen.md").read_text(encoding="utf-8")


# -- the rules (pure) ------------------------------------------------------------------------


def test_append_keeps_every_word_and_does_not_add_twice() -> None:
    out = append_body(SARAH, "Promoted to CTO in March.")
    assert out == SARAH + "\nPromoted to CTO in March.\n"
    assert append_body(out, "Promoted to CTO in March.") == out  # an agent retrying


def test_a_named_section_alone_is_replaced() -> None:
    out = replace_section(SARAH, "Health", "Peanut allergy (EpiPen); asthma.")
    assert out == SARAH.replace(
        "Severe peanut allergy: carries an EpiPen.", "Peanut allergy (EpiPen); asthma."
    )
    # the last section, and a heading the note lacks (added at the end)
    assert replace_section(SARAH, "hobbies", "Climbing, chess.").endswith(
        "## Hobbies\n\nClimbing, chess.\n"
    )
    added = replace_section(SARAH, "Role", "CTO since March.")
    assert added == SARAH + "\n## Role\n\nCTO since March.\n"
    crlf = SARAH.replace("\n", "\r\n")
    assert replace_section(crlf, "Health", "x\ny") == crlf.replace(
        "Severe peanut allergy: carries an EpiPen.", "x\r\ny"
    )


def test_a_heading_that_appears_twice_is_refused() -> None:
    twice = SARAH + "\n## Health\n\nAgain.\n"
    with pytest.raises(NoSuchHeading, match="2 headings 'Health'"):
        replace_section(twice, "Health", "x")


# -- through each adapter --------------------------------------------------------------------


def test_mcp_memory_write_update_keeps_the_persons_words(tmp_path: Path) -> None:
    root = person_vault(tmp_path)
    with (
        (tmp_path / "stderr.log").open("w", encoding="utf-8") as errlog,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(mcp_session(root, errlog)) as session,
    ):

        def call(**arguments: Any) -> Any:
            result = portal.call(session.call_tool, "memory_write", arguments)
            assert not result.is_error, text_of(result)
            return result.structured_content

        tools = {t.name: t for t in portal.call(session.list_tools).tools}
        write = tools["memory_write"]
        # honest: an update appends; `section` replaces that section's text
        assert write.annotations.destructive_hint is True
        assert "nothing already in the note is removed" in write.description
        assert "section" in write.input_schema["properties"]
        # field test: `update` said "Without it an existing note is refused.", yet a
        # `section` without it changes the note (below): the descriptions say so
        described = write.input_schema["properties"]
        assert "Without it an existing note is refused." not in described["update"]["description"]
        assert "unless `section` is given" in described["update"]["description"]
        assert "with or without update=true" in described["section"]["description"]

        # the call, word for word
        made = call(
            category="people", title="Sarah Chen", body="Promoted to CTO in March.", update=True
        )
        assert made["path"] == "people/Sarah Chen.md" and made["created"] is False
        text = sarah(root)
        assert all(w in text for w in PERSON_WORDS) and "Promoted to CTO in March." in text
        done = call(  # no update=true: the note is changed all the same
            category="people", title="Sarah Chen", section="Hobbies", body="Climbing, chess."
        )
        assert done["created"] is False
        text = sarah(root)
        assert all(w in text for w in PERSON_WORDS)
        assert "Climbing, chess." in text and "\nClimbing.\n" not in text


def test_http_post_notes_update_keeps_the_persons_words(tmp_path: Path) -> None:
    root = person_vault(tmp_path)
    with open_vault(root) as vault:
        vault.sync()
        app = create_app(vault, "t" * 32, dict, port=8765, max_request_bytes=100_000)
        try:
            with TestClient(
                app,
                base_url="http://127.0.0.1:8765",
                headers={"Authorization": "Bearer " + "t" * 32},
            ) as client:
                body = {"category": "people", "title": "Sarah Chen", "update": True}
                r = client.post("/notes", json={**body, "body": "Promoted to CTO in March."})
                assert r.status_code == 200, r.text
                text = sarah(root)
                assert all(w in text for w in PERSON_WORDS) and "CTO" in text
                r = client.post("/notes", json={**body, "section": "Role", "body": "CTO."})
                assert r.status_code == 200, r.text
                assert sarah(root).endswith("## Role\n\nCTO.\n")
                r = client.post("/notes", json={**body, "section": "Health", "body": "Fine."})
                assert r.status_code == 200, r.text
                text = sarah(root)
                assert PERSON_WORDS[0] in text and "## Health\n\nFine.\n\n## Hobbies" in text
        finally:
            app.state.close()


def test_cli_add_update_keeps_the_persons_words(tmp_path: Path) -> None:
    root = person_vault(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "daemon"), "MEMVAULT_INDEX_MODEL": "hash"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_memvault(*args, "--vault", str(root), "--json", env=env)

    done = cli("add", "people", "--title", "Sarah Chen", "--body", "Promoted to CTO.", "--update")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == "people/Sarah Chen.md"
    text = sarah(root)
    assert all(w in text for w in PERSON_WORDS) and "Promoted to CTO." in text
    done = cli("add", "people", "--title", "Sarah Chen", "--section", "Health", "--body", "Fine.")
    assert done.returncode == 0, done.stderr
    text = sarah(root)
    assert PERSON_WORDS[0] in text and "## Health\n\nFine.\n\n## Hobbies" in text


# -- a day's log: its date, its template, its entries a line at a time ---------------------------
#
# Field test: memory_write(category="logs", title="Standup", body=...) on a day with no log
# yet made logs/<date>.md headed "# Standup", its body in place of the template's headings
# ("## Follow-ups" gone), while its frontmatter title stayed the date.


def test_a_body_for_a_new_days_log_is_refused_and_the_day_keeps_its_date_and_template(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    init_vault(root)
    with open_vault(root) as vault:
        with pytest.raises(ValueError, match="takes no body") as caught:
            vault.add("logs", "Standup", body="Discussed the roadmap.")
        assert "memvault log" in str(caught.value) and "memory_log" in str(caught.value)
        assert not list((root / "logs").glob("*.md"))  # nothing written
    with (
        (tmp_path / "stderr.log").open("w", encoding="utf-8") as errlog,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(mcp_session(root, errlog)) as session,
    ):
        tools = {t.name: t for t in portal.call(session.list_tools).tools}
        described = tools["memory_write"].input_schema["properties"]
        assert "takes no body" in described["body"]["description"]
        assert "no body" in described["category"]["description"]
        asked = {"category": "logs", "title": "Standup", "body": "Discussed the roadmap."}
        result = portal.call(session.call_tool, "memory_write", asked)
        assert result.is_error and "BadArgument: a day's log" in text_of(result)
        assert "memory_log" in text_of(result)
        assert not list((root / "logs").glob("*.md"))
        # what is not a body makes the day's log as `memvault log` does: its date, its headings
        made = portal.call(session.call_tool, "memory_write",
                           {"category": "logs", "title": "Standup", "summary": "Launch day"})  # fmt: skip
        assert not made.is_error, text_of(made)
        path = made.structured_content["path"]
        day = Path(path).stem
        text = (root / path).read_text(encoding="utf-8")
        assert f'title: "{day}"' in text and f"\n# {day}\n" in text and "## Follow-ups" in text
        assert "summary: Launch day" in text and "Standup" not in text
        logged = portal.call(session.call_tool, "memory_log", {"text": "Discussed the roadmap."})
        assert not logged.is_error and logged.structured_content["path"] == path
    text = (root / path).read_text(encoding="utf-8")
    entry = text.index("Discussed the roadmap.")
    assert text.index(f"# {day}") < entry < text.index("## Follow-ups")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "daemon"), "MEMVAULT_INDEX_MODEL": "hash"}
    done = run_memvault("add", "logs", "--title", "Standup", "--body", "More.", "--vault",
                        str(root), env=env)  # fmt: skip
    assert done.returncode == 2 and "takes no body" in done.stderr, done.stderr
    assert (root / path).read_text(encoding="utf-8") == text
