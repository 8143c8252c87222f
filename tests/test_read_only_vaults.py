"""Commands that only read write nothing into a vault memvault never indexed, and the
`.memvault/` folder, wherever it is created, keeps the index out of the person's git."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import TEMPLATE, open_vault
from memvault.api import Vault
from memvault.errors import NotIndexed
from memvault.interfaces.cli import app
from memvault.vault.lock import WriterLock
from memvault.vault.state_dir import GITIGNORE_TEXT
from memvault.vault.template import init_vault

FIXTURE = Path(__file__).parent / "fixtures" / "obsidian-vault"
runner = CliRunner()


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file and folder under ``root``: content and mtime (folders: b'' and mtime)."""
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.stat()
        out[path.relative_to(root).as_posix()] = (
            path.read_bytes() if path.is_file() else b"",
            st.st_mtime_ns,
        )
    return out


@pytest.fixture(params=["obsidian", "template"])
def never_indexed(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """An Obsidian vault made a memvault vault by `init` but never indexed, or a vault
    `init` laid down."""
    root = tmp_path / "vault"
    if request.param == "obsidian":
        shutil.copytree(FIXTURE, root)
        init_vault(root)  # only init, up and migrate make a folder a vault
    else:
        init_vault(root)
        (root / "Functions.md").write_text("# Functions\n\n## `hasTag()`\n\nYes.\n")
    return root


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["links", "check"], None, None),
        (["status"], 0, "not indexed yet"),
        (["status", "--json"], 0, '"indexed": false'),
        (["get", "Functions.md", "--heading", "hasTag"], 0, "## `hasTag()`"),
        (["search", "tag"], 3, "not indexed yet"),
        (["context", "what does hasTag do"], 3, "not indexed yet"),
    ],
)
def test_a_read_on_a_vault_never_indexed_writes_nothing(
    never_indexed: Path, monkeypatch: pytest.MonkeyPatch, args: list, code: int | None, says: str
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    before = tree(never_indexed)
    result = runner.invoke(app, [*args, "--vault", str(never_indexed)])
    if code is not None:
        assert result.exit_code == code, result.output
    assert says is None or says in result.output
    assert tree(never_indexed) == before  # not a byte, not a folder, not an mtime


def test_links_check_on_a_vault_never_indexed_reads_it_in_memory(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    init_vault(root)
    state = sorted(p.name for p in (root / ".memvault").iterdir())
    result = runner.invoke(app, ["links", "check", "--vault", str(root), "--json"])
    assert result.exit_code == 1
    assert json.loads(result.output)["counts"] == {
        "unresolved": 2,
        "ambiguous": 1,
        "anchor": 3,
        "alias": 1,
    }
    assert sorted(p.name for p in (root / ".memvault").iterdir()) == state  # no index.db


def test_the_python_api_reads_a_vault_never_indexed_without_writing(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    init_vault(root)
    before = tree(root)
    with Vault.open(root, read_only=True) as v:
        assert v.get("Functions.md", heading="hasTag").text.startswith("## `hasTag()`")
        assert len([p for p in v.links_check() if p.verdict != "alias"]) == 6
        assert v.status()["indexed"] is False
        with pytest.raises(NotIndexed, match="not indexed yet"):
            v.search("tag")
    assert tree(root) == before


def test_once_indexed_a_read_sees_the_index(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    init_vault(root)
    assert runner.invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    result = runner.invoke(app, ["search", "hasTag", "--vault", str(root), "--json"])
    assert result.exit_code == 0, result.output
    assert "Functions.md" in {h["path"] for h in json.loads(result.output)["hits"]}


def test_no_writer_lock_to_be_had_reads_as_it_is_and_refuses_writes_by_exit_7(
    tmp_path: Path, monkeypatch
) -> None:
    """The lock file cannot be opened (.memvault/ read-only, as a field test found; a
    folder in its place here, which root cannot open either): a search read the index
    as it is, where it failed with exit 1 ("found problems"); a write is a storage
    error, exit 7, nothing written."""
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    init_vault(root)
    assert runner.invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    lock = root / ".memvault" / "lock"
    lock.unlink()
    lock.mkdir()
    before = tree(root)
    result = runner.invoke(app, ["search", "hasTag", "--vault", str(root), "--json"])
    assert result.exit_code == 0, result.output
    assert "Functions.md" in {h["path"] for h in json.loads(result.output)["hits"]}
    result = runner.invoke(app, ["log", "a line for today", "--vault", str(root)])
    assert result.exit_code == 7, result.output
    assert "cannot open the writer's lock" in result.output
    assert {k: v for k, v in tree(root).items() if not k.startswith(".memvault")} == {
        k: v for k, v in before.items() if not k.startswith(".memvault")
    }


# -- .memvault/.gitignore ---------------------------------------------------------------------


def test_the_template_ignore_file_is_the_one_memvault_writes() -> None:
    assert (TEMPLATE / ".memvault" / ".gitignore").read_text(encoding="utf-8") == GITIGNORE_TEXT


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout


def test_the_first_sync_of_an_existing_vault_keeps_the_index_out_of_git(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    git(root, "init", "-q")
    with open_vault(root) as v:
        v.sync()
    assert (root / ".memvault" / "index.db").is_file()
    assert (root / ".memvault" / ".gitignore").read_text(encoding="utf-8") == GITIGNORE_TEXT
    git(root, "add", "-A")
    tracked = git(root, "ls-files").splitlines()
    # memory-decisions.json is retired: memvault writes no state file into git
    assert [p for p in tracked if p.startswith(".memvault/")] == [".memvault/.gitignore"]
    assert "MEMORY.md" in tracked and "Home.md" in tracked


def test_the_writer_lock_creates_the_folder_with_its_ignore_file(tmp_path: Path) -> None:
    lock = WriterLock(tmp_path / ".memvault" / "lock")
    lock.acquire()
    try:
        assert (tmp_path / ".memvault" / ".gitignore").read_text(encoding="utf-8") == GITIGNORE_TEXT
    finally:
        lock.release()


def test_an_ignore_file_a_person_changed_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / ".memvault").mkdir(parents=True)
    (root / ".memvault" / ".gitignore").write_text("index.db\n", encoding="utf-8")
    with open_vault(root) as v:
        v.sync()
    assert (root / ".memvault" / ".gitignore").read_text(encoding="utf-8") == "index.db\n"
