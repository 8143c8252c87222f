"""One hop along a pointer line (core/hops): the note a strong hit points at ranks
right behind it, by the share of the hit that the pointing line is (issue 25)."""

from __future__ import annotations

import pytest

from memvault.core.hops import Pointer, hop_scores, is_pointer, lifted, line_share


@pytest.mark.parametrize(
    ("line", "pointer"),
    [
        ("- [[NoSQL Distilled]]", True),
        ("Source: [[Deep Work]], ch. 3", True),
        ("- [Temporal](https://temporal.io/blog/what-is-durable-execution)", True),
        ("![[diagram.png]]", True),
        ("Drove the database choice in [[decisions/db]] with the whole team last spring", False),
        ("No link on this line at all", False),
    ],
)
def test_a_pointer_is_a_line_that_is_mostly_a_link(line: str, pointer: bool) -> None:
    assert is_pointer(line) is pointer


def test_a_lines_share_is_its_cosine_over_its_chunks_best_line() -> None:
    assert line_share(0.6, 0.6) == 1.0
    assert line_share(-0.2, -0.2) == 1.0  # the chunk is its pointer line: all of it
    assert line_share(0.15, 0.6) == pytest.approx(0.25)
    assert line_share(-0.1, 0.6) == 0.0
    assert line_share(-0.3, -0.1) == 0.0


def test_the_note_a_hits_pointer_leads_to_is_proposed_at_the_hits_damped_score() -> None:
    ranked = [(1, 0.8), (2, 0.5), (3, 0.4)]
    notes = {1: "cqrs.md", 2: "sagas.md", 3: "book.md"}
    pointers = [
        Pointer(1, "book.md", 1.0),  # the hit's References line: all of its score
        Pointer(2, "book.md", 0.5),
        Pointer(2, "tags/python.md", 0.1),  # a tag line beside what matched: little
        Pointer(1, "cqrs.md", 1.0),  # its own note: nothing
        Pointer(9, "other.md", 1.0),  # not a candidate: nothing
    ]
    got = hop_scores(ranked, notes, pointers, 0.9)
    assert got == {"book.md": pytest.approx(0.72), "tags/python.md": pytest.approx(0.045)}


def test_a_proposed_note_rises_to_its_proposal_or_enters_with_its_first_chunk() -> None:
    ranked = [(1, 0.8), (2, 0.5), (3, 0.3), (4, 0.2)]
    notes = {1: "cqrs.md", 2: "sagas.md", 3: "book.md", 4: "book.md"}
    proposals = {"book.md": 0.72, "sagas.md": 0.1, "new.md": 0.6, "gone.md": 0.9}
    firsts = {"new.md": 7}
    got = lifted(ranked, notes, proposals, firsts)
    # the book's best chunk rises behind the hit; sagas keeps its higher score; a note
    # not among the candidates enters with its first chunk; one with no chunk does not
    assert got == [(1, 0.8), (3, 0.72), (7, 0.6), (2, 0.5), (4, 0.2)]


def test_a_hits_best_line_that_links_one_note_passes_the_hit_on_however_long() -> None:
    """Help's "backlinks and the outline are out of date after I edited files in another
    editor": a hit's best line is a sentence that links the answer ("...
    [[How Obsidian stores data]]...", far more than four words: no pointer), and the
    answer's own text shares no word with the question. The line that matched
    describes the note it links: it passes the hit on as a pointer line does
    (``passed_share``). A line that is not the hit's best, or links several notes, or
    with ``described`` 0 (off), passes nothing; a pointer line keeps its line share."""
    from memvault.core.hops import passed_share

    sentence = "Edits made outside the app are picked up when [[How Obsidian stores data]] says"
    assert passed_share(sentence, 0.62, 0.62, targets=1) == 1.0
    assert passed_share(sentence, 0.62, 0.62, targets=1, described=0.5) == 0.5
    assert passed_share(sentence, 0.62, 0.62, targets=1, described=0.0) is None
    assert passed_share(sentence, 0.40, 0.62, targets=1) is None  # not the best line
    assert passed_share(sentence, 0.62, 0.62, targets=3) is None  # a line naming three
    assert passed_share("- [[NoSQL Distilled]]", 0.15, 0.6, targets=1) == pytest.approx(0.25)
    assert passed_share("No link on this line at all", 0.6, 0.6, targets=0) is None
