"""core/about.py: what a note's frontmatter says it is about, and the lines that say it."""

from __future__ import annotations

import pytest

from memvault.core.about import about_text, describing_lines
from memvault.core.chunks import chunk_note, embed_texts
from memvault.core.notes import parse_note
from memvault.core.text import split_lines

DECISION = """---
title: "Use PostgreSQL"
type: decision
status: proposed
date: "2026-12-01"
deciders: []
summary: We chose PostgreSQL for the event store
tags: []
---
# Use PostgreSQL

## Context

## Decision

## Consequences

## Status
"""


def words(text: str) -> int:
    return len(text.split())


def described(text: str) -> list[str]:
    """The frontmatter lines ``describing_lines`` picks, as text."""
    note = parse_note("n.md", text)
    lines = split_lines(note.raw_frontmatter)
    return ["\n".join(lines[a:b]) for a, b in describing_lines(note)]


@pytest.mark.parametrize(
    ("frontmatter", "expected"),
    [
        pytest.param("summary: one line", "one line", id="summary"),
        pytest.param("description: said   twice\n", "said twice", id="description"),
        pytest.param("summary: 1234567", "1234567", id="a-number"),
        pytest.param("summary: true", "", id="a-bool-says-nothing"),
        pytest.param(
            "summary:\n  - first point\n  - second point", "first point\nsecond point", id="a-list"
        ),
        pytest.param("summary: {why: speed, who: [ana, bo]}", "speed\nana\nbo", id="a-mapping"),
        pytest.param("aliases: [Pat, Patricia Q]\nalias: P", "Pat\nPatricia Q\nP", id="aliases"),
        pytest.param(
            'tags: ["#project/alpha", nested/tags]',
            "#project/alpha\nnested/tags",
            id="tags-as-written",
        ),
        pytest.param("tags: db, infra", "db, infra", id="tags-as-a-string"),
        pytest.param("title: Only a title\ntype: log", "", id="the-title-is-elsewhere"),
        pytest.param("summary: ''\ntags: []\naliases: [null]", "", id="all-empty"),
    ],
)
def test_about_text_is_the_description_aliases_and_tags(frontmatter: str, expected: str) -> None:
    note = parse_note("n.md", f"---\n{frontmatter}\n---\nbody\n")
    assert about_text(note) == expected


def test_about_text_of_a_frontmatter_that_was_ignored_is_empty() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    note = parse_note("n.md", f"---\n{bomb}summary: boom\n---\nbody\n")
    assert note.warnings and note.frontmatter == {}
    assert about_text(note) == ""
    assert note.raw_frontmatter == ""  # its text is the body: chunked as text (chunks)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(DECISION, ["summary: We chose PostgreSQL for the event store"], id="decision"),
        pytest.param(
            '---\ntitle: "Alice Smith"\ntype: person\nsummary: ""\ntags: []\n---\n# Alice Smith\n',
            ['title: "Alice Smith"'],
            id="only-a-title",
        ),
        pytest.param(
            "---\nsummary: >\n  folded over\n\n  two paragraphs\n\ntags:\n- a\n- b/c\ntype: x\n---\n",
            ["summary: >\n  folded over\n\n  two paragraphs\n\ntags:\n- a\n- b/c"],
            id="block-scalar-and-block-list",
        ),
        pytest.param(
            "---\naliases: [A]\ntype: x\n# a comment\ntags: [t]\n---\n",
            ["aliases: [A]", "tags: [t]"],
            id="two-runs",
        ),
        pytest.param(
            "---\n'summary' : quoted key\ndate: 2024-01-01\n---\n",
            ["'summary' : quoted key"],
            id="quoted-key",
        ),
        pytest.param("---\n{summary: flow}\n---\n", [], id="flow-mapping-is-not-read"),
        pytest.param("---\ndate: 2024-01-01\n---\n", [], id="nothing-describes-it"),
        pytest.param("no frontmatter\n", [], id="no-frontmatter"),
    ],
)
def test_describing_lines_are_the_fields_lines_as_written(text: str, expected: list[str]) -> None:
    assert described(text) == expected


def test_a_note_of_empty_headings_is_its_summary_line_at_its_line_number() -> None:
    note = parse_note("decisions/d.md", DECISION)
    chunks = chunk_note(note, words, target_tokens=96, max_tokens=254, parts=("title",))
    assert [(c.text, c.line_start, c.line_end, c.heading_path) for c in chunks] == [
        ("summary: We chose PostgreSQL for the event store", 7, 7, ())
    ]
    assert split_lines(DECISION)[6] == chunks[0].text


def test_the_description_is_embedded_before_the_first_chunk_only() -> None:
    text = "---\nsummary: the event store ledger\n---\n# T\n\none\n\n## B\n\ntwo\n"
    note = parse_note("n.md", text)
    chunks = chunk_note(note, words, target_tokens=96, max_tokens=254, parts=())
    assert [c.text for c in chunks] == ["# T\n\none", "## B\n\ntwo"]  # the file's text
    texts = embed_texts(note, chunks, (), words, max_tokens=254, overlap_tokens=0)
    assert texts == ["the event store ledger\n# T\n\none", "## B\n\ntwo"]


@pytest.mark.parametrize("max_tokens", [6, 8, 40, 254])
def test_a_long_description_gives_way_to_the_window(max_tokens: int) -> None:
    summary = " ".join(f"w{i}" for i in range(50_000))  # ~340 KB
    text = f"---\nsummary: {summary}\n---\nthe body words\n"
    note = parse_note("n.md", text)
    chunks = chunk_note(note, words, target_tokens=4, max_tokens=max_tokens, parts=("title",))
    calls: list[int] = []

    def counting(t: str) -> int:
        calls.append(len(t))
        return words(t)

    (embedded,) = embed_texts(note, chunks, ("title",), counting, max_tokens=max_tokens,
                              overlap_tokens=0)  # fmt: skip
    assert words(embedded) <= max_tokens
    assert embedded.endswith("the body words")
    room = min(64, max_tokens - words("n\nthe body words") - 1)
    head = embedded.split("\n")[1] if room > 0 else ""
    if room > 0:  # the start of the description, as much of it as the room takes, near enough
        assert summary.startswith(head + " ")
        assert 0.75 * room <= words(head) <= room
    # the tokenizer never reads the whole description
    assert max(calls) < 10_000
