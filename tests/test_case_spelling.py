"""One reading of "the same name in another case" on disk (``paths.spelt_in``), for the
memory tool's and ``connect``'s spelling (``case_spelling``) and a section's folder
(``folders.on_disk``): the real filesystem (ext4 keeps case apart)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from memvault.engine.folders import on_disk
from memvault.vault.paths import case_spelling, spelt_in


def test_the_name_spelt_so_wins_over_one_in_another_case(tmp_path: Path) -> None:
    nfd = unicodedata.normalize("NFD", "Café")
    (tmp_path / nfd).mkdir()
    (tmp_path / "CAFÉ").mkdir()
    # "CAFÉ" < "Café" in code-point order: the one spelt so (NFD on disk, as a Mac
    # writes it) is still the one
    assert spelt_in(str(tmp_path), "Café") == nfd
    assert on_disk(tmp_path, "Café") == "Café"
    assert case_spelling(str(tmp_path), "Café/x.md") is None


def test_of_two_in_other_cases_the_first_in_code_point_order(tmp_path: Path) -> None:
    (tmp_path / "people").mkdir()
    (tmp_path / "People").mkdir()
    (tmp_path / "People" / "Ana.md").write_text("x")
    assert spelt_in(str(tmp_path), "PEOPLE") == "People"
    assert on_disk(tmp_path, "PEOPLE") == "People"
    assert case_spelling(str(tmp_path), "PEOPLE/ana.md") == "People/Ana.md"
    # as far as its parts are there
    assert case_spelling(str(tmp_path), "PEOPLE/bob.md") == "People/bob.md"


def test_a_folder_reading_passes_over_files_and_a_dot_name_matches_only_as_spelt(
    tmp_path: Path,
) -> None:
    (tmp_path / "Logs").write_text("a file")
    (tmp_path / ".Obsidian").mkdir()
    assert spelt_in(str(tmp_path), "logs") == "Logs"
    assert spelt_in(str(tmp_path), "logs", dirs=True) is None
    assert on_disk(tmp_path, "logs") is None
    assert spelt_in(str(tmp_path), ".obsidian") is None
    assert spelt_in(str(tmp_path), ".Obsidian") == ".Obsidian"
    assert spelt_in(str(tmp_path / "gone"), "x") is None
