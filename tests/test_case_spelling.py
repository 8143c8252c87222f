"""One reading of "the same name in another case" on disk (``paths.spelt_in``), for the
memory tool's and ``connect``'s spelling (``case_spelling``) and a section's folder
(``folders.on_disk``): the real filesystem (ext4 keeps case apart)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from memvault.engine.folders import folders_beside_in_another_case, on_disk
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


def test_a_symlink_in_a_loop_beside_the_folder_hides_it_from_no_reading(tmp_path: Path) -> None:
    """A folder listing asked each entry whether it was a folder, and a symlink in a
    loop beside ``People/`` (left by a tool, a sync of a link) raised: the listing
    failed whole, ``People/`` was not there for the section ``people`` (nor a folder
    beside it in another case for status)."""
    (tmp_path / "People").mkdir()
    (tmp_path / "people").mkdir()
    (tmp_path / "loop").symlink_to("loop")
    assert spelt_in(str(tmp_path), "PEOPLE", dirs=True) == "People"
    assert on_disk(tmp_path, "PEOPLE") == "People"
    beside = folders_beside_in_another_case(tmp_path, [("Key People", "people", "people")])
    assert beside == [("Key People", "people", "People")]
