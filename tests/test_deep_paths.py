"""A folder tree deeper than the system's path limit (4096 bytes on Linux: a recursive
copy gone wrong, a hostile archive) holds up nothing: every sync of the daemon failed on
it ("sync failed: OSError(36, 'File name too long')"), retried for ever, so no note was
indexed and MEMORY.md stood still. The paths it names are refused and said."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from helpers import open_vault, write
from memvault.core.text import short_path


def _deep(root: Path, levels: int = 30) -> str:
    """A folder ``levels`` deep of 200-byte names (made with relative paths, as the
    kernel allows), its note inside; its vault-relative path."""
    here = os.getcwd()
    os.makedirs(root / "deep", exist_ok=True)
    os.chdir(root / "deep")
    try:
        for _ in range(levels):
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        Path("note.md").write_text("# Deep\n\nwombats\n", encoding="utf-8")
    finally:
        os.chdir(here)
    return "deep/" + "/".join(["d" * 200] * levels)


def test_a_path_past_the_systems_limit_is_refused_and_the_batch_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "people/ana.md", "# Ana\n\nAna runs the data team.\n")
    with open_vault(root) as vault:
        vault.sync()
        folder = _deep(root)
        write(root, "people/bo.md", "# Bo\n\nBo runs the platform.\n")
        report = vault.sync([folder, folder + "/note.md", "people/bo.md"])
        assert report.created == ("people/bo.md",)
        assert any("too long" in s.reason for s in report.skipped), report.skipped
        assert "people/bo.md" in {h.path for h in vault.search("platform")}
        assert vault.sync().created == ()  # a full sync passes over it too


def test_a_skipped_deep_path_is_printed_shortened_and_given_whole_to_machines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A field test: `memvault status` printed the skipped path, thousands of characters,
    whole — a terminal full of one line; `sync` and the daemon's log the same."""
    from typer.testing import CliRunner

    from memvault.interfaces.cli import app

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "vault"
    write(root, "people/ana.md", "# Ana\n\nAna runs the data team.\n")
    _deep(root)
    runner = CliRunner()
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    with caplog.at_level(logging.INFO, logger="memvault"):
        synced = runner.invoke(app, ["sync", "--vault", str(root)])
    status = runner.invoke(app, ["status", "--vault", str(root)])
    told = [r.getMessage() for r in caplog.records if r.getMessage().startswith("problem: deep/")]
    for text in (synced.output, status.output, *told):
        said = [line for line in text.splitlines() if "deep/ddd" in line]
        assert said, text[:2000]
        for line in said:  # the start, the end, the length: never the whole
            assert len(line) < 300 and "…" in line and " characters)" in line, line[:300]
    assert told, [r.getMessage()[:200] for r in caplog.records]
    data = json.loads(runner.invoke(app, ["status", "--vault", str(root), "--json"]).output)
    skipped = [p["path"] for p in data["problems"] if p["path"].startswith("deep/")]
    assert skipped and all(len(p) > 2000 and "…" not in p for p in skipped), skipped


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("people/ana.md", "people/ana.md"),
        ("a" * 160, "a" * 160),  # two terminal lines at most: whole
        ("a" * 100 + "b" * 100, "a" * 60 + "…" + "b" * 60 + " (200 characters)"),
        # a character a reader sees is never cut in half (here an emoji with its skin tone)
        (
            "x" * 59 + "\N{WAVING HAND SIGN}\N{EMOJI MODIFIER FITZPATRICK TYPE-4}" + "y" * 200,
            "x" * 59 + "…" + "y" * 60 + f" ({59 + 2 + 200:,} characters)",
        ),
        (
            "d" * 4000 + "/note\N{COMBINING ACUTE ACCENT}.md",
            "d" * 60 + "…" + "d" * 51 + "/note\N{COMBINING ACUTE ACCENT}.md (4,009 characters)",
        ),
    ],
    ids=["short", "two-lines", "long", "emoji", "deep"],
)
def test_short_path_keeps_the_start_the_end_and_says_the_length(path: str, shown: str) -> None:
    assert short_path(path) == shown
