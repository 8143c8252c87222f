"""core/chunks.py: notes cut into chunks that fit the model window, with heading paths and lines."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.core.chunks import (
    MAX_CHARS_PER_TOKEN,
    Chunk,
    chunk_note,
    embed_text,
    embed_texts,
)
from memvault.core.notes import parse_note
from memvault.core.text import split_lines

ALL_PARTS = ("title", "headings", "date")


def words(text: str) -> int:
    return len(text.split())


def chars(text: str) -> int:
    return len(text)


def pieces(text: str) -> int:
    """Word-piece-like and not additive: cutting a word can change the count."""
    return len(re.findall(r"\w{1,4}|[^\w\s]", text))


class CountingCounter:
    def __init__(self, count=words) -> None:
        self.count = count
        self.calls = 0
        self.chars = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        self.chars += len(text)
        return self.count(text)


def chunks_of(text: str, *, target: int = 96, max_tokens: int = 254, parts=(), count=words):
    note = parse_note("notes/n.md", text)
    return note, chunk_note(note, count, target_tokens=target, max_tokens=max_tokens, parts=parts)


def file_span(text: str, chunk: Chunk) -> str:
    return "\n".join(split_lines(text)[chunk.line_start - 1 : chunk.line_end])


def assert_lines_exact(text: str, chunks: list[Chunk]) -> None:
    lines = split_lines(text)
    for c in chunks:
        span = file_span(text, c)
        assert c.text in span
        first, last = c.text.split("\n")[0], c.text.split("\n")[-1]
        assert first in lines[c.line_start - 1]
        assert last in lines[c.line_end - 1]
        assert c.text == c.text.strip("\n") and c.text.strip()


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        pytest.param(
            "# T\nintro\n## A\na\n### B\nb\n## C\nc\n",
            [("T",), ("T", "A"), ("T", "A", "B"), ("T", "C")],
            id="nested",
        ),
        pytest.param(
            "before\n## A\na\n# B\nb\n", [(), ("A",), ("B",)], id="preamble-and-shallower"
        ),
        pytest.param("### Deep\nd\n## Up\nu\n", [("Deep",), ("Up",)], id="deep-first"),
        # an empty section makes no chunk, yet its heading still opens the path below it
        pytest.param("# T\n## A\n## B\nb\n", [("T", "B")], id="empty-sections"),
        pytest.param("# T\n## A\n### B\nb\n", [("T", "A", "B")], id="empty-parent"),
        pytest.param("## A ##\nx\n", [("A",)], id="closing-hashes"),
        pytest.param("#nospace\n#tag text\n", [()], id="tags-are-not-headings"),
    ],
)
def test_heading_nesting_gives_heading_paths(text: str, paths: list[tuple[str, ...]]) -> None:
    _, chunks = chunks_of(text, target=1)
    assert [c.heading_path for c in chunks] == paths
    assert [c.ord for c in chunks] == list(range(len(chunks)))


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (1, ["one two", "three four", "five six"]),
        (4, ["one two\n\nthree four", "five six"]),
        (6, ["one two\n\nthree four\n\nfive six"]),
        (100, ["one two\n\nthree four\n\nfive six"]),
    ],
)
def test_paragraphs_merge_up_to_the_target(target: int, expected: list[str]) -> None:
    text = "one two\n\nthree four\n\nfive six\n"
    _, chunks = chunks_of(text, target=target)
    assert [c.text for c in chunks] == expected
    for c in chunks:
        assert file_span(text, c) == c.text


def test_merging_never_crosses_a_heading() -> None:
    _, chunks = chunks_of("a\n## H\nb\n", target=100)
    assert [c.text for c in chunks] == ["a", "## H\nb"]


def test_a_heading_line_joins_the_paragraph_after_it() -> None:
    text = "## Decision\n\nWe use Postgres because of JSONB.\n\nSecond paragraph here.\n"
    _, chunks = chunks_of(text, target=7)
    assert chunks[0].text == "## Decision\n\nWe use Postgres because of JSONB."
    assert (chunks[0].line_start, chunks[0].line_end) == (1, 3)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("## Empty\n\n## Full\ntext\n", [("## Full\ntext", ("Full",), 3)], id="blank"),
        pytest.param("## Empty\n## Full\ntext\n", [("## Full\ntext", ("Full",), 2)], id="adjacent"),
        pytest.param(
            "## Empty\n%% what goes here %%\n\n%%\nmore hint\n%%\n## Full\ntext\n",
            [("## Full\ntext", ("Full",), 7)],
            id="only-hints",
        ),
        pytest.param("# T\n\n## A\n\n## B\n   \n", [], id="nothing-but-headings"),
        pytest.param("## Last\n\n\n", [], id="last-and-blank"),
        pytest.param(
            "## Code\n```\n# not a heading\n```\n",
            [("## Code\n```\n# not a heading\n```", ("Code",), 1)],
            id="fenced-hash-is-text",
        ),
        pytest.param(
            "## Empty\n```\n## fenced\n```\n",
            [("## Empty\n```\n## fenced\n```", ("Empty",), 1)],
            id="fenced-heading-is-text",
        ),
        pytest.param(
            "## A\ninline %% a comment %% is text\n",
            [("## A\ninline %% a comment %% is text", ("A",), 1)],
            id="inline-comment-is-text",
        ),
    ],
)
def test_a_heading_with_nothing_under_it_makes_no_chunk(
    text: str, expected: list[tuple[str, tuple[str, ...], int]]
) -> None:
    _, chunks = chunks_of(text, target=100)
    assert [(c.text, c.heading_path, c.line_start) for c in chunks] == expected
    assert [c.ord for c in chunks] == list(range(len(chunks)))


def test_an_oversize_paragraph_is_split_on_lines_then_sentences_then_words() -> None:
    lines = [f"line {i} " + " ".join(["word"] * 8) for i in range(30)]  # 10 words a line
    sentences = " ".join(f"Sentence {i} has exactly six words." for i in range(40))
    run = " ".join(f"w{i}" for i in range(300))
    text = "\n".join(lines) + "\n\n" + sentences + "\n\n" + run + "\n"
    _, chunks = chunks_of(text, target=20, max_tokens=40)
    assert all(words(c.text) <= 40 for c in chunks)
    line_chunks = [c for c in chunks if c.line_end <= 30]
    assert all(c.text == file_span(text, c) for c in line_chunks)  # cut at line ends
    sentence_chunks = [c for c in chunks if c.line_start == 32]
    assert all(c.text.endswith(".") for c in sentence_chunks)
    run_chunks = [c for c in chunks if c.line_start == 34]
    assert " ".join(c.text for c in run_chunks) == run  # every word, in order, once
    assert_lines_exact(text, chunks)


def test_split_pieces_aim_for_the_target_not_the_window() -> None:
    text = " ".join(f"w{i}" for i in range(1000)) + "\n"
    _, chunks = chunks_of(text, target=50, max_tokens=254)
    sizes = [words(c.text) for c in chunks]
    assert max(sizes) <= 50
    assert sum(sizes) == 1000
    assert len(chunks) <= 1000 // 50 + 3  # pieces are nearly full


def test_a_paragraph_within_the_window_is_not_split_even_above_the_target() -> None:
    text = " ".join(["word"] * 150) + "\n"
    _, chunks = chunks_of(text, target=96, max_tokens=254)
    assert [c.text for c in chunks] == [text.strip()]


@pytest.mark.parametrize(
    "fence",
    [
        "```python\n# not a heading\n\nx = 1\n```",
        "~~~\n## still code\n\n\n~~~",
        "````\n```\n# inner\n```\n````",
    ],
)
def test_code_fences_are_one_paragraph_and_hold_no_headings(fence: str) -> None:
    text = f"## Real\nintro\n\n{fence}\n\nafter\n"
    _, chunks = chunks_of(text, target=1)
    assert [c.heading_path for c in chunks] == [("Real",)] * 3
    assert chunks[1].text == fence
    assert chunks[1].text == file_span(text, chunks[1])


def test_an_unclosed_fence_runs_to_the_end() -> None:
    _, chunks = chunks_of("a\n\n```\n# x\n\n# y\n", target=1)
    assert [c.text for c in chunks] == ["a", "```\n# x\n\n# y"]


def test_list_items_without_blank_lines_stay_together() -> None:
    _, chunks = chunks_of("- one\n- two\n- three\n\nafter\n", target=1)
    assert chunks[0].text == "- one\n- two\n- three"


def test_crlf_is_stripped_and_lines_still_count() -> None:
    text = "---\r\ntitle: T\r\n---\r\n# T\r\n\r\npara one\r\nstill one\r\n\r\npara two\r\n"
    _, chunks = chunks_of(text, target=1)
    assert [(c.line_start, c.line_end, c.text) for c in chunks] == [
        (4, 7, "# T\n\npara one\nstill one"),
        (9, 9, "para two"),
    ]
    assert all("\r" not in c.text for c in chunks)


@pytest.mark.parametrize(
    ("text", "first_line"),
    [
        ("---\ntitle: x\ndate: 2024-01-01\n---\nbody\n", 5),
        ("---\n---\n\n\nbody\n", 5),
        ("body\n", 1),
        ("---\ntitle: [broken\n---\nbody\n", 1),  # invalid YAML: the whole text is the body
    ],
)
def test_line_numbers_count_the_frontmatter(text: str, first_line: int) -> None:
    _, chunks = chunks_of(text, target=100)
    assert chunks[0].line_start == first_line
    assert chunks[-1].text.endswith("body")
    assert_lines_exact(text, chunks)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "   \n\t\n",
        "---\n---\n",
        "---\ndate: 2024-01-01\ntype: log\n---\n",  # nothing in it says what it is
        "---\ntitle: ''\nsummary:\ntags: []\naliases: [null]\n---\n# Heading\n",
        "%% only a hint %%\n",
    ],
)
def test_empty_and_undescribed_notes_have_no_chunks(text: str) -> None:
    assert chunks_of(text)[1] == []


def test_unicode_text_keeps_its_characters_and_lines() -> None:
    text = "# Café ☕\n\nnaïve résumé — 東京で会議 🎉\n\nZ\u0301alg\u0300o ok\n"
    _, chunks = chunks_of(text, target=1, count=chars, max_tokens=254)
    assert [c.text for c in chunks] == [
        "# Café ☕\n\nnaïve résumé — 東京で会議 🎉",
        "Z\u0301alg\u0300o ok",
    ]
    assert chunks[0].heading_path == ("Café ☕",)
    assert_lines_exact(text, chunks)


def test_a_cjk_paragraph_is_cut_after_its_full_stops_then_its_commas() -> None:
    """Chinese and Japanese put no space after a full stop: a long line was cut between
    two characters (inside a word, which then no keyword found: 出|现问题)."""
    sentences = "".join(f"这是第{i}个句子，它讲的是出现问题的几率。" for i in range(30))
    clauses = "、".join(f"第{i}项" for i in range(80)) + "。"
    quoted = "".join(f"他说「第{i}次出现问题了。」" for i in range(30))
    text = sentences + "\n\n" + clauses + "\n\n" + quoted + "\n"
    _, chunks = chunks_of(text, target=40, max_tokens=80, count=chars)
    assert all(len(c.text) <= 80 for c in chunks)
    by_line = {n: [c.text for c in chunks if c.line_start == n] for n in (1, 3, 5)}
    assert len(by_line[1]) > 1 and all(t.endswith("。") for t in by_line[1])
    assert "".join(by_line[1]) == sentences
    assert len(by_line[3]) > 1 and all(t.endswith(("、", "。")) for t in by_line[3])
    assert all(t.endswith("。」") for t in by_line[5])  # the closing quote kept with it
    assert all("出现问题" in t for t in by_line[1] + by_line[5])  # no word cut in two


@pytest.mark.parametrize(
    "unit",
    [
        "e\u0301",  # an accent of combining class 230
        "ข\u0e31\u0e49",  # Thai's ั (class 0) and a tone mark (107)
        "क\u093e",  # Hindi's ा: a spacing mark (Mc), class 0
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # one emoji of three joined (ZWJ)
        "\U0001f1e9\U0001f1ea",  # a flag: two regional indicators
        "\U0001f44d\U0001f3fd",  # an emoji and its skin tone
        "\u1112\u1161\u11ab",  # 한 in jamo, as macOS may write Korean (NFD)
    ],
)
def test_character_cuts_never_separate_a_combining_mark(unit: str) -> None:
    text = (unit * 400) + "\n"
    _, chunks = chunks_of(text, target=8, max_tokens=16, count=chars)
    assert len(chunks) > 1 and "".join(c.text for c in chunks) == text.strip()
    assert all(c.text.startswith(unit) for c in chunks)


@pytest.mark.parametrize("mark", ["\u0301", "\u0e31"])
def test_a_run_of_marks_alone_is_cut_in_whole_windows(mark: str) -> None:
    """A hostile line of 4,000 marks after one letter: with no letter to cut before,
    each piece was one character (a walk back over the run for each, quadratic: 12 s for
    40,000); a piece is now a window's worth."""
    text = "x" + mark * 4000 + "\n"
    _, chunks = chunks_of(text, target=100, max_tokens=200, count=chars)
    assert "".join(c.text for c in chunks) == text.strip()
    assert all(len(c.text) >= 50 for c in chunks[:-1]) and len(chunks) <= 80


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ((), ""),
        (("title",), "Why we chose PostgreSQL"),
        (("headings",), "Why we chose PostgreSQL › Decision"),
        (("title", "headings"), "Why we chose PostgreSQL › Decision"),  # H1 = title: said once
        (("title", "headings", "date"), "Why we chose PostgreSQL › Decision (2024-03-12)"),
        (("date", "title"), "Why we chose PostgreSQL (2024-03-12)"),  # fixed order
        (("date",), "(2024-03-12)"),
    ],
)
def test_the_context_header_names_title_headings_and_date(parts, expected: str) -> None:
    text = "---\ndate: 2024-03-12\n---\n# Why we chose PostgreSQL\n## Decision\nWe use it.\n"
    note, chunks = chunks_of(text, target=1, parts=parts)
    chunk = chunks[-1]
    assert chunk.heading_path == ("Why we chose PostgreSQL", "Decision")
    assert embed_text(note, chunk, parts) == (f"{expected}\n" if expected else "") + chunk.text


def test_the_context_header_is_one_clipped_line() -> None:
    title = "A title\nwith a newline and " + "very " * 100 + "long"
    note = parse_note("n.md", f"---\ntitle: {title!r}\n---\n## {'h' * 300}\nx\n")
    chunk = chunk_note(note, words, target_tokens=10, max_tokens=254, parts=ALL_PARTS)[0]
    prefix = embed_text(note, chunk, ALL_PARTS).removesuffix("\n" + chunk.text)
    assert prefix != embed_text(note, chunk, ALL_PARTS)  # a header was there
    assert "\n" not in prefix and len(prefix) <= 160


def test_unknown_context_part_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown context part"):
        chunks_of("x\n", parts=("summary",))


def test_the_context_header_counts_against_the_window() -> None:
    text = "---\ntitle: Five words in this title\n---\n" + " ".join(["w"] * 40) + "\n"
    note, chunks = chunks_of(text, target=100, max_tokens=20, parts=("title",))
    assert len(chunks) > 2
    assert all(words(embed_text(note, c, ("title",))) <= 20 for c in chunks)


def test_a_window_too_small_for_the_header_is_an_error() -> None:
    text = "---\ntitle: Five words in this title\n---\nbody\n"
    with pytest.raises(ValueError, match="no room"):
        chunks_of(text, max_tokens=5, parts=("title",))


def test_chunks_are_deterministic() -> None:
    text = "# T\n" + "\n\n".join(" ".join(f"w{i}{j}" for j in range(i % 30)) for i in range(60))
    assert (
        chunks_of(text, target=20, max_tokens=40)[1] == chunks_of(text, target=20, max_tokens=40)[1]
    )


def test_a_huge_single_line_chunks_in_linear_time_and_respects_the_char_cap() -> None:
    text = "x" * 5_000_000
    counter = CountingCounter(lambda s: 1 + len(s) // 1000)  # like [UNK]: few tokens, many chars
    started = time.perf_counter()
    _, chunks = chunks_of(text, target=96, max_tokens=254, count=counter)
    elapsed = time.perf_counter() - started
    assert all(len(c.text) <= 254 * MAX_CHARS_PER_TOKEN for c in chunks)
    assert sum(len(c.text) for c in chunks) == len(text)
    assert counter.chars <= 3 * len(text)
    assert elapsed < 20


def test_a_huge_prose_line_counts_each_character_a_bounded_number_of_times() -> None:
    text = " ".join(f"word{i % 97}." if i % 13 == 0 else f"w{i % 89}" for i in range(400_000))
    counter = CountingCounter(words)
    _, chunks = chunks_of(text, target=96, max_tokens=254, parts=ALL_PARTS, count=counter)
    assert all(words(c.text) <= 96 for c in chunks)
    assert counter.chars <= 4 * len(text)
    assert counter.calls <= 3 * len(chunks)


# --- the window invariant, as a property --------------------------------------

_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé東🎉.,!?-", min_size=1, max_size=14)
_line = st.one_of(
    st.lists(_word, min_size=1, max_size=30).map(" ".join),
    st.builds(lambda n, w: "#" * n + " " + w, st.integers(1, 4), _word),
    st.just(""),
    st.just("```"),
    st.just("- item"),
    st.text(alphabet="xyz", min_size=50, max_size=600),  # a run with no space
    st.lists(_word, min_size=1, max_size=5).map(lambda ws: "  " + " ".join(ws) + "  "),
)
_note = st.builds(
    lambda fm, lines, crlf: (fm + "\n".join(lines)).replace("\n", "\r\n" if crlf else "\n"),
    st.sampled_from(["", "---\ntitle: Some Title\ndate: 2024-01-02\n---\n", "---\n---\n"]),
    st.lists(_line, max_size=40),
    st.booleans(),
)


@settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    text=_note,
    count=st.sampled_from([words, chars, pieces]),
    parts=st.sampled_from([(), ("title",), ALL_PARTS]),
    max_tokens=st.integers(3, 300),
    target_fraction=st.floats(0.05, 1.0),
)
def test_no_chunk_exceeds_the_window(text, count, parts, max_tokens, target_fraction) -> None:
    if parts:
        max_tokens += 180  # the header alone may take up to 160 characters
    target = max(1, int(max_tokens * target_fraction))
    note = parse_note("n.md", text)
    chunks = chunk_note(note, count, target_tokens=target, max_tokens=max_tokens, parts=parts)
    for c in chunks:
        assert count(embed_text(note, c, parts)) <= max_tokens
        assert len(c.text) <= max_tokens * MAX_CHARS_PER_TOKEN
    assert_lines_exact(text, chunks)
    assert [c.ord for c in chunks] == list(range(len(chunks)))
    assert [c.line_start for c in chunks] == sorted(c.line_start for c in chunks)
    # nothing lost: every non-space character of the body is in some chunk, in order,
    # but the headings with nothing under them
    body = re.sub(r"\s", "", without_empty_headings(note))
    if body:
        assert re.sub(r"\s", "", "".join(c.text for c in chunks)) == body
    else:  # the lines of the frontmatter that describe the note, if any do
        assert all(c.line_end < note.body_line for c in chunks)
        assert bool(chunks) == ("title: Some Title" in text)


def without_empty_headings(note) -> str:
    """The body without the lines of headings followed by no text before the next one."""
    lines = split_lines(note.body)
    heads = [h.line - note.body_line for h in note.headings]
    empty = {
        at
        for at, nxt in zip(heads, [*heads[1:], len(lines)], strict=False)
        if not any(line.strip() for line in lines[at + 1 : nxt])
    }
    return "\n".join(line for i, line in enumerate(lines) if i not in empty)


@settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    text=_note,
    count=st.sampled_from([words, chars, pieces]),
    overlap=st.integers(0, 80),
    max_tokens=st.integers(200, 300),
)
def test_overlapping_embed_texts_stay_within_the_window(text, count, overlap, max_tokens) -> None:
    note = parse_note("n.md", text)
    chunks = chunk_note(note, count, target_tokens=40, max_tokens=max_tokens, parts=ALL_PARTS)
    texts = embed_texts(
        note, chunks, ALL_PARTS, count, max_tokens=max_tokens, overlap_tokens=overlap
    )
    assert len(texts) == len(chunks)
    for chunk, embedded in zip(chunks, texts, strict=True):
        assert count(embedded) <= max_tokens
        assert embedded.endswith(chunk.text)


# --- with the real tokenizer ----------------------------------------------------


@pytest.mark.model
def test_no_chunk_exceeds_the_real_model_window() -> None:
    from memvault.config import DEFAULT_MODEL
    from memvault.index.tokenizer import Tokenizer

    tokenizer = Tokenizer.for_model(DEFAULT_MODEL)
    assert tokenizer.max_tokens == 254
    prose = " ".join(
        ["The quarterly review covered PostgreSQL replication lag, naïve retries and 東京 latency."]
        * 80
    )
    text = (
        "---\ntitle: Incident review for the replication outage of March\ndate: 2024-03-12\n---\n"
        "# Incident review\n\n## Timeline\n" + prose + "\n\n"
        "## Evidence\n```\n"
        + "\n".join(f"log line {i}: ERR_CONN_RESET at 0x{i:08x}" for i in range(200))
        + "\n```\n\n## Blob\n"
        + "QUJD" * 20_000
        + "\n"
    )
    note = parse_note("logs/review.md", text)
    chunks = chunk_note(note, tokenizer.count, target_tokens=96, max_tokens=254, parts=ALL_PARTS)
    assert len(chunks) > 10
    for c in chunks:
        assert tokenizer.count(embed_text(note, c, ALL_PARTS)) <= 254
        assert len(c.text) <= 254 * MAX_CHARS_PER_TOKEN
    assert_lines_exact(text, chunks)


def test_template_hints_are_never_in_a_chunk_and_line_numbers_stay_true() -> None:
    text = (
        "---\ntitle: Use Kafka\n---\n# Use Kafka\n\n## Context\n\n"
        "%% The problem, the constraints, and the options that were considered. %%\n\n"
        "## Decision\n\n%%\nWhat was decided,\nby whom.\n%%\nWe use Kafka for events.\n"
    )
    _, chunks = chunks_of(text)
    assert chunks and not any("%%" in c.text or "constraints" in c.text for c in chunks)
    decided = next(c for c in chunks if "Kafka for events" in c.text)
    lines = text.split("\n")
    assert lines[decided.line_end - 1] == "We use Kafka for events."


@pytest.mark.parametrize("count", [chars, pieces])
def test_a_folder_rename_moves_no_boundary_and_no_embedded_text(count) -> None:
    """Issue 27: the window is measured on the text embedded (links without their
    inner folders), so links made longer by a folder rename cut the note where it was cut, into the same
    embedded texts: no linking chunk is embedded again."""
    paras = [
        f"Paragraph {i} about [[projects/alpha/a{i:03}]] and [[projects/alpha/b{i:03}|B]] too."
        for i in range(30)
    ]
    text = "---\ntitle: T\n---\n# T\n\n" + "\n\n".join(paras) + "\n"
    moved = text.replace("projects/alpha/", "projects/alpha-archived-in-2024/")

    def cut(src: str) -> tuple[list[tuple[int, int]], list[str]]:
        note = parse_note("n.md", src)
        chunks = chunk_note(note, count, target_tokens=60, max_tokens=120, parts=ALL_PARTS)
        texts = embed_texts(note, chunks, ALL_PARTS, count, max_tokens=120, overlap_tokens=10)
        return [(c.line_start, c.line_end) for c in chunks], texts

    before, after = cut(text), cut(moved)
    assert len(before[0]) > 3
    assert after == before
