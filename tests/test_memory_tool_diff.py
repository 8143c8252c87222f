"""bench/memory_tool_diff.py as a test: random memory-tool command sequences, valid and
hostile, run on the SDK's reference over a folder and on memvault's tool over a vault;
every difference in the answers or the files must be one of memvault's documented
choices (docs/AGENTS.md), none a ``DEFECT``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import memory_tool_diff as diff


@pytest.mark.parametrize("seed", [0, 1, 4])
def test_random_commands_differ_from_the_reference_only_as_documented(
    tmp_path: Path, seed: int
) -> None:
    """Seeds 1 and 4 found, before their fixes: a rename from a path not there onto one
    there answered otherwise than the reference, and a str_replace on a folder."""
    found = diff.run_seed(seed, 120, tmp_path)
    defects = [d for d in found if d.label == diff.DEFECT]
    assert not defects, "\n".join(
        f"{d.command!r}\n  reference: {d.reference!r}\n  memvault:  {d.mine!r}\n  {d.files}"
        for d in defects[:5]
    )
    assert len(found) < 120 * 0.6  # most commands are answered alike, word for word


def test_the_classifier_calls_an_unexplained_difference_a_defect() -> None:
    """What no documented choice explains stays a DEFECT: the class is not a catch-all."""
    create = {"command": "create", "path": "/memories/a.md", "file_text": "x"}
    done = (True, "File created successfully at: /memories/a.md")
    assert diff.classify(create, done, done, {"a.md": b"x"}, {"a.md": b"x"}) is None
    assert diff.classify(create, done, done, {"a.md": b"x"}, {"a.md": b"y"}) == diff.DEFECT
    view = {"command": "view", "path": "/memories/a.md"}
    shown = "Here's the content of /memories/a.md with line numbers:\n     1\tx"
    assert diff.classify(view, (True, shown), (True, shown + "y"), {}, {}) == diff.DEFECT
    said = (False, "The path /memories/a.md does not exist. Please provide a valid path.")
    assert diff.classify(view, said, (False, "something else"), {}, {}) == diff.DEFECT
    assert diff.classify(view, (True, shown), said, {}, {}) == diff.DEFECT


def test_a_refusal_that_changed_the_vaults_files_is_a_defect() -> None:
    """A refusal is "Refused ... and nothing changed" (docs/AGENTS.md): one in a
    documented refusal's words that changed the vault's files anyway (a person's words
    lost, or a note half made) was classed by its words alone, as that choice."""
    create = {"command": "create", "path": "/memories/x y/Fact.MD", "file_text": "x"}
    done = (True, "File created successfully at: /memories/x y/Fact.MD")
    refused = (False, "/memories/x y/Fact.MD is not a note: Obsidian reads only .md in "
               "lower case as a note, and this is .MD (rename it Fact.md to have it indexed)")  # fmt: skip
    ref_files = {"a.md": b"mine", "x y/Fact.MD": b"x"}
    before = {"a.md": b"mine"}
    assert diff.classify(create, done, refused, ref_files, before, before) == (
        "refused: not a note for Obsidian (.MD)"
    )
    assert diff.classify(create, done, refused, ref_files, {}, before) == diff.DEFECT
    assert diff.classify(create, done, refused, ref_files, {"a.md": b""}, before) == diff.DEFECT
