"""memvault migrate: a giant dump becomes a vault; nothing lost, nothing doubled, re-runs are no-ops."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memvault.errors import MemvaultError
from memvault.interfaces.cli import app
from memvault.migration import migrate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from make_dump import make_dump

runner = CliRunner()
NOTE_FOLDERS = ("people", "projects", "decisions", "logs", "inbox")


@pytest.fixture(autouse=True)
def _fast_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")


def migrated_lines(root: Path) -> Counter[str]:
    """Every body line of every migrated note (frontmatter, footer and decision links left out)."""
    lines: Counter[str] = Counter()
    for folder in NOTE_FOLDERS:
        for path in (root / folder).rglob("*.md") if (root / folder).is_dir() else ():
            text = path.read_text(encoding="utf-8")
            assert text.startswith("---\n")
            if "\ntype: folder-note\n" in text.split("\n---\n", 1)[0]:
                continue  # the generated list of a folder, not a migrated note
            body = text.split("\n---\n", 1)[1]
            body = body.rsplit("\n---\n*Migrated from", 1)[0]
            lines.update(
                ln for ln in body.split("\n") if ln.strip() and not ln.startswith("- Decision: [[")
            )
    return lines


def source_lines(text: str) -> Counter[str]:
    return Counter(ln.rstrip("\r") for ln in text.replace("\r\n", "\n").split("\n") if ln.strip())


def snapshot_files(root: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file() and ".memvault" not in p.parts
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_line_lands_in_exactly_one_note_and_reruns_change_nothing(
    tmp_path: Path, seed: int
) -> None:
    dump_text = make_dump(3000, seed)
    dump = tmp_path / "old" / "MEMORY.md"
    dump.parent.mkdir()
    dump.write_text(dump_text, encoding="utf-8")
    vault = tmp_path / "vault"
    report = migrate(dump, vault)
    assert migrated_lines(vault) == source_lines(dump_text)
    assert report.created and not report.kept
    assert (vault / report.archive[0]).read_bytes() == dump.read_bytes()
    assert dump.read_text(encoding="utf-8") == dump_text  # the source is untouched with --into

    before = snapshot_files(vault)
    again = migrate(dump, vault)
    assert again.created == () and len(again.unchanged) == len(report.plan)
    after = snapshot_files(vault)
    assert after == before, "a re-run changed files"

    result = runner.invoke(app, ["links", "check", "--vault", str(vault)])
    assert result.exit_code == 0, result.output


def test_in_place_migration_archives_the_dump_and_leaves_a_small_index(tmp_path: Path) -> None:
    dump_text = make_dump(5000, 11)
    (tmp_path / "MEMORY.md").write_text(dump_text, encoding="utf-8")
    report = migrate(tmp_path / "MEMORY.md")
    index = (tmp_path / "MEMORY.md").read_text(encoding="utf-8")
    assert report.before.lines == 5000 and report.after.lines < 60
    assert len(index.splitlines()) < 60 and "<!-- memvault:begin decisions -->" in index
    assert (tmp_path / report.archive[0]).read_text(encoding="utf-8") == dump_text
    assert f"[[{report.archive[0].removesuffix('.md')}]]" in index
    assert migrated_lines(tmp_path) == source_lines(dump_text)


def test_after_an_in_place_migration_re_runs_write_nothing(tmp_path: Path) -> None:
    """Running the same command again refuses the index it made; migrating the
    archived original again (from inside the vault) finds the vault and its notes."""
    dump_text = make_dump(2000, 4)
    (tmp_path / "MEMORY.md").write_text(dump_text, encoding="utf-8")
    first = migrate(tmp_path / "MEMORY.md", index=False)
    before = snapshot_files(tmp_path)
    with pytest.raises(MemvaultError, match="already this vault's memvault index"):
        migrate(tmp_path / "MEMORY.md", index=False)
    result = runner.invoke(app, ["migrate", str(tmp_path / "MEMORY.md"), "--no-index"])
    assert result.exit_code == 1 and "nothing to migrate" in result.output
    again = migrate(tmp_path / first.archive[0], index=False)
    assert again.vault == str(tmp_path)
    assert again.created == () and again.kept == ()
    assert len(again.unchanged) == len(first.plan)
    assert snapshot_files(tmp_path) == before, "a re-run changed files"
    assert not (tmp_path / "archive" / "archive").exists()


def test_a_dump_memvault_already_added_its_sections_to_is_still_migrated(
    tmp_path: Path,
) -> None:
    """The first day as the README tells it: ``memvault up`` on a folder whose MEMORY.md
    an agent grew appends memvault's sections to it; ``status`` then says to run
    ``memvault migrate MEMORY.md``, which must split the person's lines (it refused: "already
    this vault's memvault index"). memvault's own lines go to no note; the file as it was,
    sections and all, is archived."""
    dump_text = make_dump(2000, 4)
    (tmp_path / "MEMORY.md").write_text(dump_text, encoding="utf-8")
    (tmp_path / "billing.md").write_text("# Billing\n\nA topic note.\n", encoding="utf-8")
    for args in (["init", str(tmp_path)], ["sync", "--vault", str(tmp_path)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    grown = (tmp_path / "MEMORY.md").read_text(encoding="utf-8")
    assert grown.startswith(dump_text) and "<!-- memvault:begin" in grown
    report = migrate(tmp_path / "MEMORY.md", index=False)
    assert migrated_lines(tmp_path) == source_lines(dump_text)
    assert (tmp_path / report.archive[0]).read_text(encoding="utf-8") == grown
    index = (tmp_path / "MEMORY.md").read_text(encoding="utf-8")
    assert len(index.splitlines()) < 80 and "<!-- memvault:begin decisions -->" in index
    with pytest.raises(MemvaultError, match="already this vault's memvault index"):
        migrate(tmp_path / "MEMORY.md", index=False)


def test_a_workspace_folder_merges_daily_files_and_archives_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n## 2024-01-02\n\n- met Ana about billing\n", encoding="utf-8"
    )
    (ws / "memory" / "2024-01-02.md").write_text(
        "- later: we decided to drop the v1 API\n", encoding="utf-8"
    )
    (ws / "memory" / "2024-01-03.md").write_text("- quiet day\n", encoding="utf-8")
    report = migrate(ws)
    log = (ws / "logs" / "2024-01-02.md").read_text(encoding="utf-8")
    assert "- met Ana about billing" in log
    assert (ws / "logs" / "2024-01-03.md").is_file()
    assert any(p.startswith("decisions/2024-01-02-") for p in report.created)
    assert not (ws / "memory" / "2024-01-02.md").exists()
    assert (
        (ws / "archive" / "memory" / "2024-01-02.md")
        .read_text(encoding="utf-8")
        .startswith("- later")
    )
    # the agent keeps writing daily files; a re-run takes them and leaves the index alone
    index = (ws / "MEMORY.md").read_bytes()
    inbox = sorted(p.name for p in (ws / "inbox").iterdir())
    (ws / "memory" / "2024-01-04.md").write_text("- shipped billing v2\n", encoding="utf-8")
    again = migrate(ws)
    assert again.created == ("logs/2024-01-04.md",)
    assert (ws / "MEMORY.md").read_bytes() != index  # re-synced: the new log is listed
    assert "[[logs/2024-01-04]]" in (ws / "MEMORY.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in (ws / "inbox").iterdir()) == inbox  # the index is no dump


def test_a_dump_without_headings_becomes_dated_logs_or_one_inbox_note(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "2024-01-02: shipped the thing\n\n2024-01-05: fixed it\n", encoding="utf-8"
    )
    report = migrate(tmp_path / "a.md", tmp_path / "v1", index=False)
    assert {r.path for r in report.plan} == {"logs/2024-01-02.md", "logs/2024-01-05.md"}
    assert any(u["kind"] == "no-headings" for u in report.uncertain)
    (tmp_path / "b.md").write_text("just some thoughts\n\nand more thoughts\n", encoding="utf-8")
    report = migrate(tmp_path / "b.md", tmp_path / "v2", index=False)
    assert [r.kind for r in report.plan] == ["inbox"]
    assert any(u["kind"] == "no-structure" for u in report.uncertain)


def test_bom_mixed_line_endings_and_invalid_utf8_are_kept_and_reported(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbf# M\r\n\r\n## 2024-02-01\n- caf\xe9 with Ana\r\n- fine line\n"
    (tmp_path / "MEMORY.md").write_bytes(raw)
    report = migrate(tmp_path / "MEMORY.md", tmp_path / "v", index=False)
    assert report.replaced_bytes == 1
    log = (tmp_path / "v" / "logs" / "2024-02-01.md").read_text(encoding="utf-8")
    assert "- caf\ufffd with Ana" in log and "- fine line" in log
    assert (tmp_path / "v" / report.archive[0]).read_bytes() == raw


def test_dry_run_writes_nothing_and_the_cli_shows_the_plan(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(make_dump(800, 5), encoding="utf-8")
    before = snapshot_files(tmp_path)
    result = runner.invoke(app, ["migrate", str(tmp_path / "MEMORY.md"), "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["dry_run"] and data["plan"] and data["before"]["lines"] == 800
    assert data["after"]["lines"] < 60
    assert snapshot_files(tmp_path) == before
    assert not (tmp_path / ".memvault").exists()
    human = runner.invoke(app, ["migrate", str(tmp_path / "MEMORY.md"), "--dry-run"])
    assert "MEMORY.md before: 800 lines" in human.output


@pytest.mark.slow
def test_a_50000_line_dump_plans_and_writes_in_seconds(tmp_path: Path) -> None:
    dump = tmp_path / "MEMORY.md"
    dump.write_text(make_dump(50_000, 3), encoding="utf-8")
    report = migrate(dump, tmp_path / "vault", index=False)
    assert migrated_lines(tmp_path / "vault") == source_lines(dump.read_text(encoding="utf-8"))
    assert report.after.lines < 60


# -- migrate --no-index: the structure now, the vectors later ---------------------------


def test_no_index_writes_the_whole_memory_md_and_keyword_index_without_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MEMORY.md from the notes' metadata, as the full migration writes it, and keyword
    search at once; the model is never loaded (its factory raises) and the vectors
    wait for the next sync, which gives them."""
    from memvault.api import Vault
    from memvault.engine import embedding

    dump = make_dump(3000, 7)
    for name in ("full", "lean"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "MEMORY.md").write_text(dump, encoding="utf-8")
    full = migrate(tmp_path / "full" / "MEMORY.md")  # the hash model: indexes everything
    assert full.pending_vectors == 0 and full.sync and full.sync["embedded_chunks"] > 0

    monkeypatch.delenv("MEMVAULT_INDEX_MODEL")  # the real default model, were it loaded

    def no_model(*_: object, **__: object) -> None:
        raise AssertionError("migrate --no-index loaded the embedding model")

    monkeypatch.setattr(embedding, "make_embedder", no_model)
    result = runner.invoke(app, ["migrate", str(tmp_path / "lean" / "MEMORY.md"), "--no-index"])
    assert result.exit_code == 0, result.output
    assert "left for the next sync or the daemon" in result.output
    lean, whole = (tmp_path / d / "MEMORY.md" for d in ("lean", "full"))
    text = lean.read_text(encoding="utf-8")
    assert text == whole.read_text(encoding="utf-8")  # every section, as with the model
    assert "[[people/" in text and "[[decisions/" in text and "[[projects/" in text
    with Vault.open(tmp_path / "lean") as vault:
        pending, since = vault.pending_vectors()
        assert pending == vault.engine.store.chunk_count() > 0  # every chunk waits
        assert since is not None
        hits = vault.search("PostgreSQL", k=3)  # keywords alone: no model for the query either
        assert hits and all(h.pending for h in hits)

    monkeypatch.undo()  # the hash model again: the next sync gives the vectors
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    with Vault.open(tmp_path / "lean") as vault:
        report = vault.sync()
        assert report.embedded_chunks > 0 and vault.pending_vectors()[0] == 0
        assert not report.created and not report.modified  # the structure was already there
        assert lean.read_text(encoding="utf-8") == text


def test_migrate_no_index_imports_no_model_runtime(tmp_path: Path) -> None:
    """In a process of its own, with the default (ONNX) backend configured: neither
    onnxruntime nor torch is imported by `migrate --no-index`."""
    (tmp_path / "MEMORY.md").write_text(make_dump(400, 2), encoding="utf-8")
    code = (
        "import sys; from memvault.interfaces.cli import app\n"
        f"try:\n    app(['migrate', {str(tmp_path / 'MEMORY.md')!r}, '--no-index', '--json'])\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "heavy = [m for m in ('onnxruntime', 'torch', 'sentence_transformers')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "daemon")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "HEAVY []" in out.stdout
    report = json.loads(out.stdout[: out.stdout.rindex("HEAVY")])
    assert report["pending_vectors"] > 0 and report["sync"]["created"]
    assert "<!-- memvault:end logs -->" in (tmp_path / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)) * 40,  # a compressed dump, a PDF renamed
        "# Memory\n\n- met Ana\n".encode("utf-16"),  # Notepad's "Unicode"
    ],
)
def test_a_dump_that_is_not_text_is_refused_and_nothing_written(
    tmp_path: Path, data: bytes
) -> None:
    """`memvault migrate` of a binary file (the wrong file picked) wrote an inbox note of
    its bytes, NUL bytes and all, which memvault itself then refused to index."""
    dump = tmp_path / "old" / "dump.md"
    dump.parent.mkdir()
    dump.write_bytes(data)
    vault = tmp_path / "vault"
    with pytest.raises(MemvaultError, match="not text"):
        migrate(dump, vault)
    assert not vault.exists()
    result = runner.invoke(app, ["migrate", str(dump), "--into", str(vault), "--dry-run"])
    assert result.exit_code == 1 and "UTF-8" in result.output
