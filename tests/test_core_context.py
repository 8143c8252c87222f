"""core/context: what of MEMORY.md goes in a context, and how a note's excerpts are
laid out (pure; a words-and-punctuation tokenizer stands in for the model's)."""

from __future__ import annotations

import re

import pytest

from memvault.core.context import Piece, assemble, index_part, join_spans

WORD = re.compile(r"\w+|[^\w\s]")


def count(text: str) -> int:
    return len(WORD.findall(text))


MEMORY = """# Memory Index
Kept small; details live in the notes.

## Active Projects
<!-- memvault:begin projects -->
- [[projects/alpha]] - Rewrite of the billing service in Go.
<!-- memvault:end projects -->

## Key People
<!-- memvault:begin people -->
<!-- memvault:end people -->

## Daily Logs
<!-- memvault:begin logs -->
- [[logs/2024-03-15]]
- [[logs/2024-03-16]] - Kafka consumer lag fixed.
<!-- memvault:end logs -->
"""


def part(memory: str, budget: int, terms: list[str]) -> str:
    return index_part(memory, budget, count, terms)


def test_the_whole_index_when_it_fits_without_markers_or_empty_sections() -> None:
    got = part(MEMORY, 1000, ["anything"])
    assert got == (
        "# Memory Index\n"
        "Kept small; details live in the notes.\n\n"
        "## Active Projects\n"
        "- [[projects/alpha]] - Rewrite of the billing service in Go.\n\n"
        "## Daily Logs\n"
        "- [[logs/2024-03-15]]\n"
        "- [[logs/2024-03-16]] - Kafka consumer lag fixed."
    )
    assert "Key People" not in got and "<!--" not in got


def test_too_big_for_its_share_only_lines_about_the_question_each_under_its_headings() -> None:
    got = part(MEMORY, 30, ["billing"])
    assert got == (
        "# Memory Index\n\n## Active Projects\n"
        "- [[projects/alpha]] - Rewrite of the billing service in Go."
    )


def test_a_line_that_only_links_a_cited_note_stays_out() -> None:
    """The cited note's own lines follow; its index line would say it twice."""
    assert part(MEMORY, 30, ["nothing"]) == ""
    got = part(MEMORY, 30, ["kafka"])
    assert (
        got == "# Memory Index\n\n## Daily Logs\n- [[logs/2024-03-16]] - Kafka consumer lag fixed."
    )


@pytest.mark.parametrize(
    "memory",
    [
        "",
        "\n\n",
        "# Memory Index\n",
        "# Memory Index\n\n## Key People\n<!-- memvault:begin people -->\n"
        "<!-- memvault:end people -->\n",
        "<!-- only a comment -->",
    ],
)
def test_an_index_with_nothing_to_say_gives_nothing(memory: str) -> None:
    assert part(memory, 1000, ["people"]) == ""


def test_nothing_about_the_question_gives_no_bare_title() -> None:
    assert part(MEMORY, 20, ["zebra"]) == ""


def test_the_index_part_stays_within_its_budget() -> None:
    big = "# Index\n" + "".join(f"- [[logs/d{i}]] - billing day {i}\n" for i in range(200))
    for budget in (0, 1, 5, 12, 40, 200):
        got = part(big, budget, ["billing"])
        assert count(got) <= budget
        assert not got or got.startswith("# Index\n- [[logs/d0]]")


def test_a_heading_inside_code_is_not_a_heading() -> None:
    memory = "# Index\n```\n## not a heading\n```\n- [[a]] - alpha\n"
    assert part(memory, 1000, ["x"]) == "# Index\n- [[a]] - alpha"


@pytest.mark.parametrize(
    ("spans", "text"),
    [
        ([], ""),
        ([(3, 3, "a")], "a"),
        ([(3, 3, "a"), (4, 4, "b")], "a\nb"),
        ([(3, 3, "a"), (5, 5, "b")], "a\n\nb"),  # the blank line between them
        ([(3, 4, "a\n"), (9, 10, "## H\nb")], "a\n\n## H\nb"),  # several: one blank line
        ([(3, 3, "abc de"), (3, 3, "fg")], "abc de\nfg"),  # pieces of one long line
    ],
)
def test_join_spans(spans: list[tuple[int, int, str]], text: str) -> None:
    assert join_spans(spans) == text


def test_a_note_keeps_the_blank_line_before_its_headings() -> None:
    """the context dropped the blank line before ## headings."""
    whole = Piece(
        "notes/a.md", -1, (), 1, 9, join_spans([(1, 3, "# A\n\nintro"), (5, 9, "## Two\n\nbody")])
    )
    ctx = assemble("q", 200, count, "", [whole])
    assert "intro\n\n## Two\n\nbody" in ctx.text


def test_lines_of_one_chunk_keep_their_blank_lines() -> None:
    pieces = [
        Piece("logs/d.md", 10_000, (), 7, 7, "**Ann**: one"),
        Piece("logs/d.md", 10_001, (), 9, 9, "**Bob**: two"),
    ]
    ctx = assemble("q", 200, count, "", pieces)
    assert ctx.text == "[[logs/d]] L7-9\n**Ann**: one\n\n**Bob**: two"


def test_each_block_of_a_note_opens_with_its_own_lines() -> None:
    """One header per note; a later block (lines apart from the one before) opens
    with its range on a line of its own: no list of ranges, no separator line."""
    pieces = [
        Piece("logs/d.md", 10_000, (), 7, 7, "**Ann**: one"),
        Piece("logs/d.md", 30_002, (), 40, 41, "**Bob**: two\nmore"),
        Piece("logs/d.md", 10_001, (), 9, 9, "**Bob**: three"),
    ]
    ctx = assemble("q", 200, count, "", pieces)
    assert ctx.text == (
        "[[logs/d]] L7-9\n**Ann**: one\n\n**Bob**: three\n\nL40-41\n**Bob**: two\nmore"
    )
    assert [(s.line_start, s.line_end) for s in ctx.sources] == [(7, 7), (40, 41), (9, 9)]


def test_a_long_note_of_many_lines_is_counted_once_a_line_not_once_a_piece() -> None:
    """A 10 MB log gives a big budget thousands of its lines: the group was rendered
    and counted whole again for each line that joined it (quadratic: 40,000 tokens of
    one log took 70 s through the daemon, past its clients' 30 s). Each line and each
    block's range line is counted a bounded number of times; the text is the same."""
    import random

    pieces = [
        Piece(
            "logs/big.md",
            chunk * 10_000 + seq,
            (),
            chunk * 20 + seq + 1,
            chunk * 20 + seq + 1,
            f"line {chunk}.{seq} says item{chunk}x{seq} went well with code c{chunk * 7 + seq}",
        )
        for chunk in range(150)
        for seq in range(10)
    ]
    random.Random(7).shuffle(pieces)
    calls = 0

    def counting(text: str) -> int:
        nonlocal calls
        calls += 1
        return count(text)

    ctx = assemble("q", 100_000, counting, "", pieces)
    assert len(ctx.sources) == len(pieces)  # every line in
    assert calls < 12 * len(pieces)  # was ~ len(pieces) ** 2 / 2
    assert ctx.tokens == count(ctx.text) <= 100_000
    blocks = ctx.text.split("\n\n")
    assert blocks[0].startswith("[[logs/big]] L1-10\nline 0.0 says") and len(blocks) == 150
    assert blocks[1] == "L21-30\n" + "\n".join(
        f"line 1.{s} says item1x{s} went well with code c{7 + s}" for s in range(10)
    )
