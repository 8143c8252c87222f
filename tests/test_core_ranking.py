"""Pure pieces of hybrid search: query terms, the FTS5 query (against real SQLite
FTS5), dropping terms too common to score, and the two fusions."""

from __future__ import annotations

import sqlite3

import pytest

from memvault.core.ranking import (
    MAX_QUERY_TERMS,
    convex,
    fts_query,
    fuse,
    informative_terms,
    query_terms,
)


def fts_table(docs: list[str]) -> sqlite3.Connection:
    """An FTS5 table with the tokenizer the store uses."""
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    db.executemany("INSERT INTO t(text) VALUES (?)", [(d,) for d in docs])
    return db


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("What did we decide about the database?", ["decide", "database"]),
        ("Who is he?", ["who", "is", "he"]),  # only stopwords: all of them are kept
        ("Kafka kafka KAFKA", ["kafka"]),
        ("café — naïve", ["café", "naïve"]),
        ("", []),
    ],
)
def test_query_terms(query: str, terms: list[str]) -> None:
    assert query_terms(query) == terms


@pytest.mark.parametrize(
    "query",
    [
        'he said "hi',
        "NEAR(a b) OR c*",
        "-x AND ^y",
        "col:value",
        "a'b; DROP TABLE t; --",
        '"" "',
        "{a b} : + ( )",
    ],
)
def test_fts_query_is_never_syntax(query: str) -> None:
    db = fts_table(["he said hi", "near a b or c", "value of col", "x and y"])
    match = fts_query(query_terms(query))
    if match:
        db.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()  # no error


def test_a_term_in_half_the_chunks_has_no_bm25_weight() -> None:
    """The premise of informative_terms, checked on real FTS5: a term in at least
    half the rows gets FTS5's floor IDF, so its scores are ~1e-6 and it does not
    change the order a rare term gives."""
    docs = [f"common filler {i}" + (" rare" if i % 200 == 0 else "") for i in range(2000)]
    db = fts_table(docs)
    common = db.execute(
        "SELECT bm25(t) FROM t WHERE t MATCH ?", (fts_query(["common"]),)
    ).fetchall()
    assert len(common) == 2000 and max(abs(s) for (s,) in common) < 1e-5
    both = db.execute(
        "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10",
        (fts_query(["common", "rare"]),),
    ).fetchall()
    rare = db.execute(
        "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (fts_query(["rare"]),)
    ).fetchall()
    assert both == rare


@pytest.mark.parametrize(
    ("docs", "total", "min_docs", "kept"),
    [
        ({"common": 40_000, "rare": 12}, 60_000, 1000, ["rare"]),
        ({"common": 30_000, "rare": 12}, 60_000, 1000, ["rare"]),  # exactly half
        ({"common": 29_999, "rare": 12}, 60_000, 1000, ["common", "rare"]),
        ({"common": 3, "rare": 1}, 4, 1000, ["common", "rare"]),  # a small vault keeps all
        ({"common": 900, "rare": 1}, 1000, 1000, ["common", "rare"]),
        ({"common": 1000, "rare": 1}, 1000, 1000, ["rare"]),
        ({"common": 50_000, "rare": 40_000}, 60_000, 1000, []),
        ({}, 0, 1000, ["common", "rare"]),  # an empty index
    ],
)
def test_informative_terms(docs: dict[str, int], total: int, min_docs: int, kept: list) -> None:
    asked: list[str] = []

    def docs_of(term: str) -> int:
        asked.append(term)
        return docs.get(term, 0)

    assert informative_terms(["common", "rare"], total, docs_of, min_docs) == kept
    if total < min_docs:
        assert asked == []  # a small index is not counted at all


def test_rrf_rewards_agreement_and_breaks_ties_by_label() -> None:
    fused = fuse([1, 2, 3], [3, 4], rrf_k=10)
    assert fused[0][0] == 3  # in both lists
    assert [label for label, _ in fused[1:]] == [1, 2, 4]  # 1 and 4 tie on rank: label order


def test_convex_normalises_each_side_and_weights_them() -> None:
    lexical = [(1, 8.0), (2, 4.0)]
    vector = [(2, 0.9), (3, 0.5)]
    fused = dict(convex(lexical, vector))
    assert fused == pytest.approx({1: 0.5, 2: 0.5 * 0.5 + 0.5 * 1.0, 3: 0.0})
    only_vector = dict(convex([], vector, lexical_weight=1, vector_weight=3))
    assert only_vector == pytest.approx({2: 0.75, 3: 0.0})
    assert convex([], []) == []


def test_a_very_long_query_keeps_its_first_distinct_terms() -> None:
    query = " ".join(f"word{i}" for i in range(5000)) + " the of"
    terms = query_terms(query)
    assert terms == [f"word{i}" for i in range(MAX_QUERY_TERMS)]


# -- a chunk's note's evidence --------------------------------------------------


def test_note_evidence_is_the_sum_of_a_notes_best_few_candidates_scaled() -> None:
    from memvault.core.ranking import note_evidence

    scores = [0.9, 0.5, 0.4, 0.3, 0.2]
    notes = ["a", "b", "b", "b", "c"]
    # a: 0.9; b: 0.5 + 0.4 (its best two, not all three); c: 0.2 -> scaled over 0.2..0.9
    got = note_evidence(scores, notes, top=2)
    assert got == pytest.approx([1.0, 1.0, 1.0, 1.0, 0.0])
    assert note_evidence(scores, notes, top=3)[1] == pytest.approx(1.0)  # b: 1.2 is the best
    assert note_evidence(scores, notes, top=3)[0] == pytest.approx((0.9 - 0.2) / (1.2 - 0.2))
    with pytest.raises(ValueError):
        note_evidence([0.1], ["a", "b"])


def test_a_note_several_of_whose_sections_answer_outranks_a_lone_chunk_that_scores_a_bit_higher() -> (
    None
):
    """A how-to answered by three of its sections vs one turn of phrase in another note."""
    from memvault.core.ranking import with_evidence

    fused = [(1, 0.80), (2, 0.75), (3, 0.70), (4, 0.65), (5, 0.10)]
    notes = {1: "other.md", 2: "howto.md", 3: "howto.md", 4: "howto.md", 5: "far.md"}
    plain = with_evidence(fused, notes)
    assert plain[0][0] == 1  # without the note's evidence: the lone chunk first
    ranked = with_evidence(fused, notes, note_weight=0.25, note_top=3)
    assert ranked[0][0] == 2
    assert all(0.0 <= s <= 1.0 for _, s in ranked)


def test_a_section_with_little_text_of_its_own_yields_to_one_whose_own_lines_answer() -> None:
    """The demo's "postgres migration": the Status chunk ("Accepted on 2024-03-12.
    Supersedes nothing.") had the best chunk vector (title + the text before it) and
    ranked above the Decision section, whose own lines name PostgreSQL."""
    from memvault.core.ranking import with_evidence

    fused = [(10, 0.50), (11, 0.40)]  # 10: Status, 11: Decision
    notes = {10: "decisions/pg.md", 11: "decisions/pg.md"}
    own = {10: 0.05, 11: 0.45}  # the best cosine of a line of each chunk's own text
    assert [lab for lab, _ in with_evidence(fused, notes, own)] == [10, 11]  # weight 0: as before
    assert [lab for lab, _ in with_evidence(fused, notes, own, own_weight=0.25)] == [11, 10]
    # a chunk with no line vector yet counts 0 there, it is not dropped
    assert {lab for lab, _ in with_evidence(fused, notes, {11: 0.45}, own_weight=0.25)} == {10, 11}


def test_a_note_that_a_strong_hit_links_to_gains_that_hits_evidence() -> None:
    """ "Drove the database choice in [[decisions/pg]]" in a person's note is about the
    decision: the decision's chunks gain the linking chunk's score."""
    from memvault.core.ranking import with_evidence

    fused = [(1, 0.90), (2, 0.60), (3, 0.55)]  # 1: the person's line, 2: a log, 3: the decision
    notes = {1: "people/sarah.md", 2: "logs/day.md", 3: "decisions/pg.md"}
    links = {1: {"decisions/pg.md"}, 3: {"decisions/pg.md"}}  # its own link counts nothing
    assert [lab for lab, _ in with_evidence(fused, notes, links=links)] == [1, 2, 3]
    ranked = with_evidence(fused, notes, links=links, link_weight=0.25)
    assert [lab for lab, _ in ranked] == [1, 3, 2]
    # a link to the chunk's own note is no evidence
    assert [
        lab
        for lab, _ in with_evidence(fused, notes, links={3: {"decisions/pg.md"}}, link_weight=0.25)
    ] == [1, 2, 3]


def test_with_evidence_drops_labels_without_a_note_and_keeps_an_empty_ranking_empty() -> None:
    from memvault.core.ranking import with_evidence

    got = with_evidence([(1, 0.5), (2, 0.4)], {2: "a.md"}, note_weight=0.5)
    assert got == [(2, pytest.approx((0.4 + 0.5 * 1.0) / 1.5))]  # divided by the weights' sum
    assert with_evidence([], {}, note_weight=0.5) == []


def test_a_chunk_whose_own_lines_have_no_vector_yet_is_neither_rewarded_nor_punished() -> None:
    """A note just written (its vectors pending) lacks own-line evidence: its score is
    divided by the weights of the evidence it has, not counted 0 against the others."""
    from memvault.core.ranking import with_evidence

    fused = [(1, 0.9), (2, 0.8), (3, 0.3)]  # 1: the new note, found by its own words
    notes = {1: "new.md", 2: "old.md", 3: "far.md"}
    own = {2: 0.5, 3: 0.1}  # 1 has none yet
    counted_against = with_evidence(fused, notes, own, own_weight=0.25)
    assert counted_against[0][0] == 2  # what it was: 0.9 / 1.25 < (0.8 + 0.25) / 1.25
    ranked = with_evidence(fused, notes, own, own_weight=0.25, unknown={1})
    assert ranked[0] == (1, pytest.approx(0.9))  # 0.9 over the weight of what it has
    assert dict(ranked)[2] == pytest.approx((0.8 + 0.25) / 1.25)  # the others as before


def test_a_chunk_whose_lines_have_no_vector_yet_passes_nothing_on_through_its_links() -> None:
    """A note just written, found by its own words ("prefers mornings"), with "Works
    with [[sarah]]" beside them: its keywords-only score is no evidence about Sarah."""
    from memvault.core.ranking import with_evidence

    fused = [(1, 1.0), (2, 0.8), (3, 0.3)]  # 1: the new note's one chunk
    notes = {1: "people/ana.md", 2: "people/sarah.md", 3: "far.md"}
    links = {1: {"people/sarah.md"}}
    passed = with_evidence(fused, notes, links=links, link_weight=0.5)
    assert passed[0][0] == 2  # (0.8 + 0.5 x 1.0) / 1.5 > 1.0 / 1.5
    ranked = with_evidence(fused, notes, links=links, link_weight=0.5, unknown={1})
    assert [lab for lab, _ in ranked] == [1, 2, 3]
    assert dict(ranked)[2] == pytest.approx(0.8 / 1.5)


def test_a_chunk_whose_vectors_are_pending_is_not_judged_on_its_notes_evidence() -> None:
    """Ana's note just written (one chunk a keyword candidate; her other chunks cannot
    be vector candidates yet) against Sarah's, two vector candidates: the sum of a
    note's best two would count what Ana's note cannot have yet against it."""
    from memvault.core.ranking import with_evidence

    fused = [(1, 1.0), (2, 0.6), (3, 0.55)]  # 1: the new note's chunk, keywords only
    notes = {1: "people/ana.md", 2: "people/sarah.md", 3: "people/sarah.md"}
    judged = with_evidence(fused, notes, note_weight=1.0, note_top=2)
    assert judged[0][0] == 2  # (0.6 + 1.0) / 2 > (1.0 + 0.0) / 2: Ana's note sums less
    ranked = with_evidence(fused, notes, note_weight=1.0, note_top=2, unknown={1})
    assert ranked[0] == (1, pytest.approx(1.0))  # divided by the weight of what it has
    assert dict(ranked)[2] == pytest.approx((0.6 + 1.0) / 2)  # the others as before


def test_a_short_note_that_answers_is_not_outweighed_by_a_digest_of_many_chunks() -> None:
    """A real vault's "why does my TCP connection wait 200 ms before acknowledging":
    the book note (many chunks, each naming TCP) ranked above the two-chunk note
    about delayed ACKs. A note's evidence is the sum of its best two candidates by
    default: its best three made the length of a digest count as evidence."""
    from memvault.config import SearchSettings
    from memvault.core.ranking import with_evidence

    fused = [(1, 0.74), (2, 0.70), (3, 0.68), (4, 0.66), (5, 0.60), (6, 0.20)]
    notes = {1: "short.md", 2: "book.md", 3: "book.md", 4: "book.md", 5: "short.md", 6: "far.md"}
    cfg = SearchSettings()
    ranked = with_evidence(fused, notes, note_weight=cfg.note_weight, note_top=cfg.note_top)
    assert ranked[0][0] == 1
    by_three = with_evidence(fused, notes, note_weight=cfg.note_weight, note_top=3)
    assert by_three[0][0] == 2  # what the best three did


def test_the_vector_sides_first_note_keeps_the_second_place_without_taking_the_first() -> None:
    """The help vault's "can I keep a folder on another drive and have it show up in
    my vault": the vectors rank Symbolic links first, but its chunks share no word
    with the question and the convex fusion put notes matching "folder" and "vault"
    weakly on both sides above it (none of its chunks on the first page). Its nearest
    chunk now ranks second: the first place stays the fused ranking's, the rest keep
    their order, and the scores stay best first."""
    from memvault.core.ranking import nearest_kept

    ranked = [(1, 0.80), (2, 0.70), (3, 0.65), (4, 0.60), (5, 0.55), (9, 0.30)]
    notes = {1: "backup.md", 2: "backup.md", 3: "sync.md", 4: "vault.md", 5: "vault.md"}
    notes |= {9: "symlinks.md", 8: "symlinks.md"}
    kept = nearest_kept(ranked, notes, [9, 3, 8], place=2, depth=1)
    assert [lab for lab, _ in kept] == [1, 2, 9, 3, 4, 5]
    scores = [s for _, s in kept]
    assert scores == sorted(scores, reverse=True) and 0.65 < scores[2] < 0.70
    # off, or the note already among the first two: the ranking as it was
    assert nearest_kept(ranked, notes, [9], place=0) == ranked
    assert nearest_kept(ranked, notes, [9], place=2, depth=0) == ranked  # notes 0: off too
    assert nearest_kept(ranked, notes, [3, 9], place=2, depth=1) == ranked


def test_the_vector_sides_nth_note_ranks_among_the_first_place_times_n_notes() -> None:
    """Interleaving: the vector side's second note keeps a place among the first four
    notes (help's "a link in another app that opens a note": Obsidian URI, the
    vectors' second, had no chunk on the first page); a label no note is known for
    (a note a hop brought in) counts as a note of its own."""
    from memvault.core.ranking import nearest_kept

    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6), (5, 0.5), (6, 0.4), (7, 0.3)]
    notes = {1: "a.md", 2: "b.md", 4: "d.md", 5: "e.md", 6: "uri.md", 7: "f.md"}
    # label 3: hopped in, no row
    kept = nearest_kept(ranked, notes, [2, 6], place=2, depth=2)
    assert [lab for lab, _ in kept] == [1, 2, 3, 6, 4, 5, 7]
    assert nearest_kept(ranked, notes, [2, 6], place=2, depth=1) == ranked


def test_the_note_holding_the_rare_word_is_kept_first() -> None:
    """The capybara line: the one chunk holding the query's rare word scored 1.0 on the
    keyword side and 0 on the vector side (the pool's least like the query); chunks
    without the word but near in meaning, and their notes' evidence, ranked it 11th.
    With place 1 it moves to the first place, its score just above the first's; the
    rest keep their order and scores."""
    from memvault.core.ranking import rare_kept

    ranked = [(lab, 1.0 - lab / 20) for lab in range(1, 12)]
    notes = {lab: f"note{lab}.md" for lab in range(1, 11)} | {11: "logs/2026-03-01.md"}
    kept = rare_kept(ranked, notes, {11}, place=1)
    assert [lab for lab, _ in kept] == [11, *range(1, 11)]
    assert kept[0][1] > kept[1][1] and kept[1:] == ranked[:10]
    # place 2: among the first two notes, the first place stays the fused ranking's
    assert [lab for lab, _ in rare_kept(ranked, notes, {11}, place=2)][:3] == [1, 11, 2]
    # off, no holder, or a holder that is no candidate (a filter left it out)
    assert rare_kept(ranked, notes, {11}, place=0) == ranked
    assert rare_kept(ranked, notes, set(), place=1) == ranked
    assert rare_kept(ranked, notes, {99}, place=1) == ranked


def test_each_note_holding_the_rare_word_keeps_a_place_by_its_best_holding_chunk() -> None:
    """A word held by three chunks of two notes: the first of those notes in the
    ranking (by its best holding chunk) ranks first, the second among the first two;
    a note already high enough stays where it is."""
    from memvault.core.ranking import rare_kept

    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6), (5, 0.5), (6, 0.4)]
    notes = {1: "a.md", 2: "b.md", 3: "c.md", 4: "host.md", 5: "host.md", 6: "ticket.md"}
    kept = rare_kept(ranked, notes, {5, 4, 6}, place=1)
    assert [lab for lab, _ in kept] == [4, 6, 1, 2, 3, 5]
    assert rare_kept(ranked, notes, {1}, place=1) == ranked  # first already
    assert [lab for lab, _ in rare_kept(ranked, notes, {2, 6}, place=1)] == [2, 6, 1, 3, 4, 5]


def test_notes_holding_another_form_of_the_rare_word_come_after_those_holding_it() -> None:
    """A Russian word asked as ``программистом``: the note holding that form keeps the
    first place, though the note holding only ``программисты`` ranked above it; that
    note comes second, and the notes holding the form asked are where they would be
    without it (the first place x m notes, m of them)."""
    from memvault.core.ranking import rare_kept

    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6), (5, 0.5), (6, 0.4)]
    notes = {1: "a.md", 2: "b.md", 3: "c.md", 4: "asked.md", 5: "other-form.md", 6: "d.md"}
    alone = rare_kept(ranked, notes, {4}, place=1)
    both = rare_kept(ranked, notes, {4}, place=1, other_forms={5})
    assert [lab for lab, _ in both] == [4, 5, 1, 2, 3, 6]
    assert both[:1] == alone[:1]
    # ranked above the form asked: the form asked still first, the other form kept second
    assert [lab for lab, _ in rare_kept(ranked, notes, {4}, 1, other_forms={2})][:3] == [4, 2, 1]
    # a chunk holding both is counted with the form asked; no holder: as it is
    assert rare_kept(ranked, notes, {4}, 1, other_forms={4}) == alone
    assert rare_kept(ranked, notes, set(), 1, other_forms={5}) == ranked
