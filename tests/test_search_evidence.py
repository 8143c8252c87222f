"""Search's evidence beside a chunk's fused score (core/ranking.with_evidence,
engine/evidence.py) on a real index: a note whose vectors are still pending is
neither rewarded nor punished for the evidence it cannot have yet (issue 25)."""

from __future__ import annotations

from pathlib import Path

from helpers import make_vault, note, open_vault, write

ANA = "people/ana-lopez.md"


def test_a_note_just_written_ranks_first_for_its_own_words_while_its_vectors_are_pending(
    tmp_path: Path,
) -> None:
    """Seen at a merge: the memory tool wrote Ana's note (keywords indexed, vectors
    pending) and "mornings", its own word, ranked Sarah's note first — her chunks had
    own-line evidence Ana's could not have yet (counted 0 against her), and Ana's one
    chunk, found by "mornings", passed its whole score on to Sarah through the
    "Works with [[sarah-chen]]" line beside it."""
    root = make_vault(tmp_path)
    with open_vault(root) as vault:
        vault.sync()
        text = note(
            "Ana Lopez", "Leads the data team; prefers mornings.", "Works with [[sarah-chen]]."
        )
        write(root, ANA, text)
        vault.sync([ANA], vectors=False)
        hits = vault.search("mornings", k=5)
        assert hits[0].path == ANA and hits[0].pending, [(h.path, h.score) for h in hits]
