"""A lookup's rare words (core/rare_words): the query's words as written, and which
of them a search keeps the notes of first (bench/RESULTS.md "rare words", "stop 49")."""

from __future__ import annotations


def test_the_rare_word_is_the_rarest_term_when_few_chunks_hold_it() -> None:
    """A ticket number held by one chunk is the query's rare word; "happened", held by
    many, is not; a term no chunk holds (a typo) is none either."""
    from memvault.core.rare_words import rare_terms

    docs = {"happened": 40, "pay": 12, "4521": 1, "typo": 0, "kestrel": 1}.__getitem__
    assert rare_terms([["happened"], ["pay", "4521"]], docs, 2000, 3) == ["4521"]
    assert rare_terms([["happened"], ["typo"], ["4521"]], docs, 2000, 1) == ["4521"]
    assert rare_terms([["happened"], ["pay"]], docs, 2000, 3) == []  # none in 3 or fewer
    assert rare_terms([["happened"], ["pay"]], docs, 2000, 12) == ["pay"]
    assert rare_terms([["kestrel"], ["4521"]], docs, 2000, 3) == ["kestrel"]  # a tie: the first
    assert rare_terms([["4521"]], docs, 2000, 0) == []  # 0: off
    assert rare_terms([["typo"]], docs, 2000, 3) == []
    assert rare_terms([], docs, 2000, 3) == []


def test_a_querys_words_are_the_terms_the_keyword_table_cuts_each_into() -> None:
    from memvault.core.rare_words import query_words

    assert query_words("what happened with PAY-4521?") == [[], ["happened"], [], ["pay", "4521"]]
    assert query_words("kestrel-db-04") == [["kestrel", "db", "04"]]
    # a list's comma or semicolon, a bracket or a double quote parts words as a space
    # does, in Latin and CJK forms; a slash, dot or colon is inside an identifier
    two = [["pay", "4521"], ["kestrel", "db", "04"]]
    for written in ("PAY-4521,kestrel-db-04", "PAY-4521;kestrel-db-04", "(PAY-4521)kestrel-db-04"):
        assert query_words(written) == two, written
    for written in (
        '"PAY-4521"kestrel-db-04',
        "PAY-4521、kestrel-db-04",
        "PAY-4521，kestrel-db-04",
    ):
        assert query_words(written) == two, written
    assert query_words("feature/PAY-4521") == [["feature", "pay", "4521"]]
    assert query_words("db.kestrel:5432") == [["db", "kestrel", "5432"]]


def test_a_cjk_run_is_a_word_of_its_own_and_an_unheld_run_its_pairs() -> None:
    """Chinese and Japanese are written without spaces: "PAY-4521の担当者は誰ですか" was
    one word, so the ticket's share of the query was always whole (the rule fired on
    any such question), and "关于凤凰的决定是什么" was one word of one term no chunk
    holds, so the rule never saw 凤凰 — the keyword side asks for the run's pairs
    (``cjk.backoff``), the rare word's rule asked for the run. A run is a word of its
    own; one no chunk holds as written is its pairs, each a word."""
    from memvault.core.rare_words import query_words

    ticket = "PAY-4521の担当者は誰ですか"
    assert query_words(ticket) == [["pay", "4521"], ["の担当者は誰ですか"]]
    assert query_words("担当者PAY-4521") == [["担当者"], ["pay", "4521"]]
    pairs = ["の担", "担当", "当者", "者は", "は誰", "誰で", "です", "すか"]
    assert query_words(ticket, lambda _t: 0) == [["pay", "4521"], *([p] for p in pairs)]
    held = {"凤凰的决定": 2}
    assert query_words("凤凰的决定", lambda t: held.get(t, 0)) == [["凤凰的决定"]]  # as written
    assert query_words("凤凰", lambda _t: 0) == [["凤凰"]]  # two characters: no pairs


def test_a_word_written_without_spaces_is_its_held_pairs_joined() -> None:
    """关于凤凰的决定是什么: the run's pairs 凤凰 and 凰的 are each held by the one chunk
    naming 凤凰 (an unknown name's pairs are as rare as it), 的决 and 决定 by many, 于凤
    and the question's own pairs by none (notes do not ask 什么, "what"). Pairs held
    one after another are one word (凤凰的决定), weighing as its rarest pair: the name
    carries the query's weight and the rule keeps its note first. Counted apart, the
    name's two pairs weighed as two words and 的决定 as two: under 0.55."""
    from memvault.core.rare_words import query_words, rare_terms

    docs = {"关于": 40, "凤凰": 1, "凰的": 1, "的决": 30, "决定": 35}.get
    words = query_words("关于凤凰的决定是什么", lambda t: docs(t, 0))
    assert ["凤凰"] in words and ["凰的"] in words
    assert rare_terms(words, lambda t: docs(t, 0), 400, 5, 0.55) == ["凤凰"]
    apart = [w for w in words if w != ["凰的"]] + [["凰的"]]  # no longer one after another
    assert rare_terms(apart, lambda t: docs(t, 0), 400, 5, 0.55) == []


def test_a_common_word_of_a_run_weighs_once_beside_an_identifier() -> None:
    """E4417の原因は何ですか ("what causes E4417?"): 原因 and the pair across it and
    the particle before it (の原) are each held by 13 of 211 chunks. Counted as two
    words they weighed twice what 原因 weighs, and the error code carried 0.48 of the
    query: the rule kept nothing (the whole question had been one word on main, whose
    share was always whole). One word, 原因 weighs once: the code carries 0.65."""
    from memvault.core.rare_words import query_words, rare_terms

    docs = {"e4417": 1, "の原": 13, "原因": 13}.get
    words = query_words("E4417の原因は何ですか", lambda t: docs(t, 0))
    assert words[:3] == [["e4417"], ["の原"], ["原因"]]
    assert rare_terms(words, lambda t: docs(t, 0), 211, 5, 0.55) == ["e4417"]


def test_two_rare_words_asked_together_each_keep_their_notes() -> None:
    """ "did ERR_LEDGER_STALE happen on kestrel-db-04?": two identifiers, one chunk each;
    neither carries 0.55 of the query's weight, so with one rare word the rule never
    fired for either. With ``count`` 2 each is a rare word, as each would be asked
    alone. A question whose rare words pass only together ("What food should we avoid
    ordering for David?" in a vault of 49 chunks: food in 2, ordering in 3, David in 3)
    keeps none; nor does one rare word beside a stray one."""
    from memvault.core.rare_words import rare_terms

    total = 370
    docs = {"err_ledger_stale": 1, "happen": 0, "kestrel": 1, "db": 20, "04": 30}.get
    words = [["did"], ["err_ledger_stale"], ["happen"], [], ["kestrel", "db", "04"]]
    assert rare_terms(words, lambda t: docs(t, 0), total, 5, 0.55) == []
    assert rare_terms(words, lambda t: docs(t, 0), total, 5, 0.55, 2) == [
        "err_ledger_stale",
        "kestrel",
    ]
    food = {"food": 2, "avoid": 0, "ordering": 3, "david": 3}.get
    question = [["food"], ["avoid"], ["ordering"], ["david"]]
    assert rare_terms(question, lambda t: food(t, 0), 49, 5, 0.55, 2) == []
    # "CQRS references" in a garden of five chunks: each word is most of the query
    # with the other taken out, but every word of so small a vault is in few chunks;
    # the one rare word's rule is main's (references: 0.76 of the weight)
    garden = {"cqrs": 2, "references": 1}.get
    small = [["cqrs"], ["references"]]
    assert rare_terms(small, lambda t: garden(t, 0), 5, 5, 0.55, 2) == ["references"]
    assert rare_terms(words, lambda t: docs(t, 0), 49, 5, 0.55, 2) == []
    # one identifier and a common word: as with one rare word
    one = [["what"], ["happened"], ["pay", "4521"]]
    few = {"happened": 40, "pay": 12, "4521": 1}.get
    got = rare_terms(one, lambda t: few(t, 0), 2000, 5, 0.55, 2)
    assert got == rare_terms(one, lambda t: few(t, 0), 2000, 5, 0.55) == ["4521"]


def test_the_rare_word_must_carry_its_share_of_the_querys_weight() -> None:
    """The share tells a lookup from a question that happens to use a word few chunks
    hold: "Tom Rautenbach" is about the surname (its IDF is most of the query's); "How
    fast was OpenSearch on our catalogue?" held "fast" in one chunk, not the one that
    answers, beside two other rare words; two words equally rare ("What counts as a
    SEV2?", the topic set's) are each half of it. A word the tokenizer cuts counts
    whole: every CVE note holds "cve" and "2025", yet "CVE-2025-52805" is one thing
    asked for."""
    import math

    from memvault.core.rare_words import rare_terms

    total = 2000
    docs = {"tom": 12, "rautenbach": 1, "fast": 1, "opensearch": 3, "catalogue": 4}
    docs |= {"counts": 1, "sev2": 1, "cve": 25, "2025": 30, "52805": 1, "affected": 9}
    idf = {t: math.log((total - n + 0.5) / (n + 0.5)) for t, n in docs.items()}
    share = idf["rautenbach"] / (idf["tom"] + idf["rautenbach"])
    assert 0.55 < share < 0.6
    lookup = [["tom"], ["rautenbach"]]
    assert rare_terms(lookup, docs.__getitem__, total, 5, share - 1e-9) == ["rautenbach"]
    assert rare_terms(lookup, docs.__getitem__, total, 5, share + 0.01) == []
    question = [["fast"], ["opensearch"], ["catalogue"]]
    assert rare_terms(question, docs.__getitem__, total, 5, 0.55) == []
    assert rare_terms(question, docs.__getitem__, total, 5, 0.3) == ["fast"]
    assert rare_terms([["counts"], ["sev2"]], docs.__getitem__, total, 5, 0.55) == []
    assert rare_terms([["counts"], ["sev2"]], docs.__getitem__, total, 5, 0.5) == ["counts"]
    cve = [["affected"], ["cve", "2025", "52805"]]
    assert idf["52805"] < 0.55 * sum(idf[t] for t in ("affected", "cve", "2025", "52805"))
    assert rare_terms(cve, docs.__getitem__, total, 5, 0.55) == ["52805"]
    # a term in at least half the chunks has FTS5's floor IDF: it weighs nothing
    assert rare_terms([["4521"], ["the"]], {"4521": 1, "the": 1500}.__getitem__, total, 5, 0.99)


def test_a_term_counted_in_more_chunks_than_the_total_weighs_nothing_not_an_error() -> None:
    """A search counts its terms' chunks, then the chunks (``chunk_count``) a moment
    later: a sync deleting notes in between (a folder moved out of the vault, the team
    index's writer) leaves a term in more chunks than the total. Its IDF is FTS5's floor
    (a term in at least half the chunks); it was ``math domain error``, the search failed."""
    from memvault.core.rare_words import rare_terms

    docs = {"standup": 3000, "4521": 1}.__getitem__
    assert rare_terms([["standup"], ["4521"]], docs, 200, 5, 0.55) == ["4521"]
    assert rare_terms([["standup"], ["4521"]], docs, 0, 5, 0.55) in (["4521"], [])


def test_a_pasted_text_is_read_as_far_as_its_64_terms() -> None:
    """A query's words are read as far as ``query_terms`` reads: to the word holding
    the 64th term. A text pasted whole was cut into words twice more to its end (0.5 s a
    MB); the terms are the same as ``query_terms``'s, in every script."""
    from memvault.core.ranking import MAX_QUERY_TERMS, query_terms
    from memvault.core.rare_words import query_words

    pasted = " ".join(f"w{i}" for i in range(200_000))
    words = query_words(pasted)
    assert words == [[f"w{i}"] for i in range(MAX_QUERY_TERMS)]
    for query in (
        "what happened with PAY-4521?",
        "who is it",
        "???",
        "the the a",
        "Pe\u0301rez İstanbul Straße ＰＡＹ－４５２１ v2.3.1 foo_bar ops@example.com C++",
        "東京タワーはどこ 田中さんのPAY-4521 김민수는 누구야 ภาษาไทย zero\u200bwidth",
        "a " * 70 + " ".join(f"t{i}" for i in range(80)),
    ):
        got = {t for word in query_words(query) for t in word}
        assert got == set(query_terms(query)), query


def test_a_page_pasted_without_spaces_is_looked_up_only_as_far_as_it_is_read() -> None:
    """A page of Chinese or Japanese pasted as a query has no space in it: its phrases,
    parted by 、 and 。, are one piece. Each of its runs was looked up (``docs_of``: a
    count of the chunks holding it, a round trip each on the team index) to the page's
    end, though only its first 64 terms are read: 77,084 counts and 6.7 s for a MB
    pasted, where main counted 128. The runs are looked up as far as they are read."""
    from memvault.core.ranking import MAX_QUERY_TERMS
    from memvault.core.rare_words import query_words

    runs = ["".join(chr(0x4E00 + 3 * i + j) for j in range(3)) for i in range(500)]
    asked: list[str] = []

    def docs(term: str) -> int:
        asked.append(term)
        return 0  # no run held as written: each is its two pairs

    words = query_words("、".join(runs), docs)
    assert len(asked) == MAX_QUERY_TERMS // 2, len(asked)
    pairs = [t for word in words for t in word]
    assert pairs == [p for run in runs[: MAX_QUERY_TERMS // 2] for p in (run[:2], run[1:])]


def test_a_name_asked_twice_in_a_question_written_without_spaces_is_still_its_rare_word() -> None:
    """凤凰项目？凤凰项目的负责人是谁 ("Phoenix project? who leads the Phoenix project?"):
    the name's pairs, joined, weigh as its rarest pair; the two runs naming it were each
    joined and the pairs' weight cut twice over (a factor squared), so naming the
    project twice left it under 0.55 of the question, and the rule kept nothing — asked
    once, its note was kept first."""
    from memvault.core.rare_words import query_words, rare_terms

    held = {"凤凰": 1, "凰项": 1, "项目": 30, "负责": 20, "责人": 25, "人是": 40}

    def docs(term: str) -> int:
        return held.get(term, 0)

    for query in (
        "凤凰项目的负责人是谁",
        "凤凰项目？凤凰项目的负责人是谁",
        "凤凰项目的负责人是谁？凤凰项目",
    ):
        assert rare_terms(query_words(query, docs), docs, 2000, 5, 0.55, 2) == ["凤凰"], query
