"""core/folder_merge: two clones' folder notes merged line by line, one list again."""

from __future__ import annotations

from memvault.core.folder_merge import folded

HEAD = "---\ntype: folder-note\n---\n# People\n\n"
COUNT = "All {n} people in this folder. memvault keeps the list below; text outside it is yours.\n"
BEGIN, END = "<!-- memvault:begin folder -->\n", "<!-- memvault:end folder -->\n"


def test_two_lists_merged_by_union_are_one_section_and_a_persons_line_stays() -> None:
    merged = (
        HEAD
        + COUNT.format(n=2)
        + "\n"
        + BEGIN
        + "- [[people/ann]] - Ann.\n- [[people/di]] - Di.\n"
        + "Call Di first.\n"  # a person's line, inside: kept, above the list
        + COUNT.format(n=3)
        + "\n"
        + BEGIN
        + "- [[people/ann]] - Ann.\n- [[people/bea]] - Bea.\n"
        + END
        + "\nMine below.\n"
    )
    assert folded(merged) == (
        HEAD + COUNT.format(n=2) + "\n" + "Call Di first.\n" + BEGIN + END + "\nMine below.\n"
    )


def test_a_note_with_one_section_or_two_whole_ones_is_left_as_it_is() -> None:
    one = HEAD + COUNT.format(n=1) + BEGIN + "- [[people/ann]] - Ann.\n" + END
    assert folded(one) == one
    two = one + "\n" + BEGIN + "- [[people/bo]]\n" + END  # a person's copy: MarkerError says
    assert folded(two) == two
