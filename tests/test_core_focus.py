"""A note's focus as evidence (core/focus): when the vector side's nearest chunk is
another note's than the ranking's first, a note about the match throughout gains on
a long digest that mentions it once (issue 25, fourth round)."""

from __future__ import annotations

from collections.abc import Collection

import pytest

from memvault.core.focus import note_focus, with_focus

DIGEST = "Books/Operating Systems.md"  # 79 chunks, one on signals
NOTE = "Main Notes/SIGINT vs SIGTERM vs SIGKILL.md"  # 3 chunks, all on signals
OTHER = "Main Notes/Process Groups.md"


def test_focus_is_the_mean_vectors_cosine_over_the_best_chunks_clipped() -> None:
    assert note_focus(0.517, 0.590) == pytest.approx(0.876, abs=1e-3)
    assert note_focus(0.272, 0.552) == pytest.approx(0.493, abs=1e-3)
    assert note_focus(0.62, 0.60) == 1.0  # a mean can beat its best chunk
    assert note_focus(-0.1, 0.4) == 0.0  # the note as a whole leans away
    assert note_focus(0.2, 0.0) == 0.0 and note_focus(-0.3, -0.1) == 0.0  # nothing leans toward


RANKED = [(1, 0.72), (2, 0.70), (3, 0.58), (4, 0.40)]
NOTES = {1: DIGEST, 2: NOTE, 3: OTHER, 4: DIGEST}
FOCUS = {DIGEST: 0.49, NOTE: 0.88, OTHER: 0.79}


def _focus(asked: list[Collection[str]]):  # type: ignore[no-untyped-def]
    def focus_of(paths: Collection[str]) -> dict[str, float]:
        asked.append(set(paths))
        return {p: FOCUS[p] for p in paths if p in FOCUS}

    return focus_of


def test_when_the_nearest_chunk_is_another_notes_the_focused_note_passes_the_digest() -> None:
    """Modelled on the garden's OS book and its SIGKILL note (their real focus: 0.49
    and 0.88): the book's signals chunk ranks first, the note's (the vector side's
    nearest) second; the book's mean vector is far from its best chunk, the note's
    is not."""
    asked: list[Collection[str]] = []
    got = with_focus(RANKED, NOTES, NOTE, _focus(asked), 0.25, 1.75)
    assert [lab for lab, _ in got] == [2, 1, 3, 4]
    assert got[0][1] == pytest.approx((0.70 * 1.75 + 0.25 * 0.88) / 2.0)
    assert [set(a) for a in asked] == [{DIGEST, NOTE, OTHER}]
    # off: the ranking stands
    assert with_focus(RANKED, NOTES, NOTE, _focus([]), 0.0, 1.75) == RANKED


def test_when_both_sides_agree_on_the_first_note_the_ranking_stands_unread() -> None:
    asked: list[Collection[str]] = []
    assert with_focus(RANKED, NOTES, DIGEST, _focus(asked), 0.25, 1.75) == RANKED
    assert with_focus(RANKED, NOTES, None, _focus(asked), 0.25, 1.75) == RANKED
    assert asked == []  # no note's vectors were read


def test_a_note_without_vectors_yet_is_neither_rewarded_nor_punished() -> None:
    """A note just written (its vectors pending) can be no vector side's nearest; it
    keeps its score while the others' are joined with their focus."""
    notes = {**NOTES, 5: "new.md"}
    ranked = [(1, 0.72), (5, 0.70), (2, 0.60)]
    got = dict(with_focus(ranked, notes, NOTE, _focus([]), 0.25, 1.75))
    assert got[5] == 0.70
    assert got[1] == pytest.approx((0.72 * 1.75 + 0.25 * 0.49) / 2.0)


def test_only_the_first_notes_are_asked_for_the_rest_keep_their_scores() -> None:
    asked: list[Collection[str]] = []
    got = dict(with_focus(RANKED, NOTES, NOTE, _focus(asked), 0.25, 1.75, top=2))
    assert [set(a) for a in asked] == [{DIGEST, NOTE}]
    assert got[3] == 0.58
    assert got[2] == pytest.approx((0.70 * 1.75 + 0.25 * 0.88) / 2.0)
