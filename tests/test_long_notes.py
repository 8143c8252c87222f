"""`get` of a note past `vault.max_note_bytes` says it is cut.

A 4 MB note came back as 38,680 of its 80,006 lines with no word, a 50 MB one-line note
as `# Huge`. Now the CLI (stderr), the JSON, HTTP and MCP results say it is cut, where,
and how to read on with `--lines`, and reading on gives the rest. Real files, real CLI
and HTTP app; the MCP tool is in tests/test_mcp_server.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from helpers import new_vault, open_vault
from memvault.interfaces.cli import app as cli_app
from memvault.service.http_api import create_app

CAP = 2_000
PORT = 48139
TOKEN = "long-notes-token-" + "x" * 24
LINES = [f"line {i:04} of the long note" for i in range(1, 501)]  # 27 bytes each


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    config = root / ".memvault" / "config.toml"
    config.write_text(f"[vault]\nmax_note_bytes = {CAP}\n", encoding="utf-8")
    (root / "notes").mkdir()
    (root / "notes" / "long.md").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    (root / "notes" / "huge.md").write_text("# Huge\n" + "x" * (3 * CAP) + "\n", "utf-8")
    with open_vault(root) as v:
        v.sync()
    return root


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli_app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_cli_says_a_long_note_is_cut_where_and_how_to_read_on(vault: Path) -> None:
    code, out, err = cli("get", "notes/long.md", "--vault", str(vault))
    assert code == 0, err
    shown = out.splitlines()
    assert 0 < len(shown) < len(LINES) and shown == LINES[: len(shown)]
    assert "max_note_bytes" in err and f"of {len(LINES)}" in err
    assert f"cut after line {len(shown)} of {len(LINES)}" in err
    assert f"--lines {len(shown) + 1}:" in err


def test_reading_on_with_lines_gives_the_whole_note(vault: Path) -> None:
    got: list[str] = []
    start = 1
    for _ in range(50):  # each read is at most CAP bytes: 500 lines take a handful
        code, out, err = cli(
            "get", "notes/long.md", "--lines", f"{start}:", "--json", "--vault", str(vault)
        )
        assert code == 0, err
        data = json.loads(out)
        assert data["line_start"] == start and data["total_lines"] == len(LINES)
        lines = data["text"].split("\n")
        assert data["line_end"] == start + len(lines) - 1  # whole lines only
        got += lines
        if not data["truncated"]:
            break
        assert f"--lines {data['line_end'] + 1}:" in data["cut"]
        start = data["line_end"] + 1
    assert got == LINES


def test_a_note_that_fits_says_it_is_whole(vault: Path) -> None:
    (vault / "notes" / "short.md").write_text("# Short\n\nfits\n", encoding="utf-8")
    code, out, err = cli("get", "notes/short.md", "--json", "--vault", str(vault))
    assert code == 0, err
    data = json.loads(out)
    assert data["truncated"] is False and data["cut"] is None and "note:" not in err


def test_one_line_longer_than_the_cap_says_so(vault: Path) -> None:
    code, out, err = cli("get", "notes/huge.md", "--lines", "2:", "--json", "--vault", str(vault))
    assert code == 0, err
    data = json.loads(out)
    assert data["truncated"] and data["total_lines"] == 2
    assert data["text"] == "x" * CAP and "line 2 of 2 alone is longer" in data["cut"]
    code, out, err = cli("get", "notes/huge.md", "--vault", str(vault))
    assert out.splitlines()[0] == "# Huge" and "of 2" in err  # not a silent "# Huge"


def test_http_says_it_is_cut(vault: Path) -> None:
    with open_vault(vault) as v:
        app = create_app(v, TOKEN, lambda: {"port": PORT}, port=PORT)
        try:
            with TestClient(
                app,
                base_url=f"http://127.0.0.1:{PORT}",
                headers={"Authorization": f"Bearer {TOKEN}"},
            ) as client:
                r = client.get("/notes/notes%2Flong.md")
                assert r.status_code == 200, r.text
                data = r.json()
        finally:
            app.state.close()
    assert data["truncated"] is True and data["total_lines"] == len(LINES)
    assert "max_note_bytes" in data["cut"] and "--lines" in data["cut"]


def test_a_note_of_one_huge_line_is_indexed_up_to_the_cap(vault: Path) -> None:
    """Cut after its last whole line, it kept only ``# Huge``: nothing was searchable of
    it ("nothing to embed"). Now it is cut inside its one line, at the cap."""
    with open_vault(vault) as v:
        chunks = v.engine.store.chunks_of("notes/huge.md")
        text = "".join(c.text for c in chunks)
        assert CAP // 2 < text.count("x") <= CAP
        problems = [json.dumps(p) for p in v.status()["problems"]]
        assert any("huge.md" in p and "only the first" in p for p in problems)


def test_the_cut_says_two_different_sizes(vault: Path) -> None:
    """A note just past the cap read "2.0 MB; only the first 2.0 MB is indexed" (here,
    at a cap of 2,000 bytes, "0.0 MB; only the first 0.0 MB"): sizes that print alike
    are said in bytes."""
    with open_vault(vault) as v:
        said = [p["reason"] for p in v.status()["problems"] if p["path"] == "notes/huge.md"]
    assert said == ["6,008 bytes; only the first 2,000 bytes are indexed (vault.max_note_bytes)"]


# -- a write that leaves a note long says so through every door ----------------------------
#
# MCP's memory_write answered `note` and the memory tool a `Note:` line once a note passed
# a quarter of vault.max_note_bytes; `memvault add --update` / `--section`, POST /notes and
# Vault.add said nothing, however long the note an agent added to every turn grew.

BUILDS = "".join(f"- build {i:03} passed on runner {i % 7}\n" for i in range(16))  # 512 bytes


def test_an_add_that_leaves_a_note_long_says_so_through_every_door(vault: Path) -> None:
    from helpers import running_daemon
    from memvault.api import Vault
    from memvault.index.embedder import HashEmbedder

    with open_vault(vault) as v:
        short = v.add("projects", "Build history", body="- build 000 passed")
        assert short.note is None and "note" not in short.to_dict()
        grown = v.add("projects", "Build history", body=BUILDS, update=True)  # Python API
        size = (vault / grown.path).stat().st_size
        assert CAP // 4 < size < CAP and grown.written
        assert grown.note is not None
        assert grown.note.startswith("projects/build-history.md is now ")
        assert "(vault.max_note_bytes) is refused" in grown.note
        assert '"Build history 2"' in grown.note and "--lines" in grown.note
        assert grown.to_dict()["note"] == grown.note
        app = create_app(v, TOKEN, lambda: {"port": PORT}, port=PORT)
        try:
            with TestClient(
                app,
                base_url=f"http://127.0.0.1:{PORT}",
                headers={"Authorization": f"Bearer {TOKEN}"},
            ) as client:  # HTTP
                body = {"category": "projects", "title": "Build history", "update": True}
                r = client.post("/notes", json={**body, "body": "- build 016 passed"})
                assert r.status_code == 200, r.text
                assert r.json()["note"].startswith("projects/build-history.md is now ")
                r = client.post("/notes", json={"category": "people", "title": "Ana"})
                assert r.status_code == 201 and "note" not in r.json()
        finally:
            app.state.close()
        with running_daemon(v), Vault.open(vault, embedder=HashEmbedder()) as door:
            assert door.daemon is not None  # the API through the daemon: the client's result
            through = door.add("projects", "Build history", body="- build 017", update=True)
            assert through.note is not None and "is now " in through.note
    # the CLI: --update and --section, text (stderr) and --json
    args = ["add", "projects", "Build history", "--vault", str(vault)]
    code, out, err = cli(*args, "--update", "--body", "- build 018 passed")
    assert code == 0 and out.strip() == "updated projects/build-history.md", err
    assert err.startswith("note: projects/build-history.md is now "), err
    code, out, err = cli(*args, "--section", "Status", "--body", "green", "--json")
    assert code == 0, err
    assert json.loads(out)["note"].startswith("projects/build-history.md is now ")
    code, out, err = cli("add", "people", "Bo", "--vault", str(vault))
    assert code == 0 and out.strip() == "created people/bo.md" and "note" not in err
    code, out, _ = cli("add", "people", "Cy", "--json", "--vault", str(vault))
    assert "note" not in json.loads(out)
