"""core/notes.py: tolerant frontmatter, titles, summaries, tags, headings."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memvault.core.notes import first_paragraph, parse_note, plain_text
from memvault.core.ranking import tag_matches

TEMPLATES = Path(__file__).resolve().parents[1] / "vault-template" / "templates"


@pytest.mark.parametrize(
    ("text", "fields", "warned"),
    [
        ("---\ntitle: Plain\n---\nbody", {"title": "Plain"}, False),
        ("---\ndate: 2024-01-01\n---\n", {"date": "2024-01-01"}, False),
        ("---\nupdated: 2024-01-01T10:00:00Z\n---\n", {"updated": "2024-01-01T10:00:00Z"}, False),
        ("---\ntime: 10:00\n---\n", {"time": "10:00"}, False),
        (
            "---\nanswer: yes\ncount: 3\nok: true\n---\n",
            {"answer": "yes", "count": 3, "ok": True},
            False,
        ),
        ("---\npath: C:\\Users\\me\n---\n", {"path": "C:\\Users\\me"}, False),
        ('---\npath: "C:\\"\n---\nbody', {}, True),
        ("---\ntitle: *Italic*\n---\nbody", {}, True),
        ("---\n- [[link]]x\n---\nbody", {}, True),
        ("---\nJust a rule used as a separator\n---\nbody", {}, True),
        ("---\n---\nbody", {}, False),
        ("---\nno closing fence\n\nbody", {}, False),
        ("\n---\ntitle: not frontmatter\n---\n", {}, False),
    ],
)
def test_frontmatter_is_tolerant_and_keeps_values_as_written(
    text: str, fields: dict, warned: bool
) -> None:
    note = parse_note("n.md", text)
    for key, value in fields.items():
        assert note.frontmatter[key] == value
    if not fields:
        assert not {k for k in note.frontmatter if k != "title"} or warned is False
    assert bool(note.warnings) is warned


def test_invalid_frontmatter_leaves_the_note_indexable_as_text() -> None:
    note = parse_note("people/ana.md", "---\ntitle: *Italic*\n---\nAna leads the data team.\n")
    assert note.frontmatter == {}
    assert "Ana leads the data team." in note.body
    assert note.title == "ana"
    assert note.summary == "Ana leads the data team."
    assert note.warnings and "invalid YAML" in note.warnings[0]


@pytest.mark.parametrize(
    ("path", "text", "title"),
    [
        ("a/x.md", "---\ntitle: From FM\n---\n# From H1\n", "From FM"),
        ("a/x.md", "# From H1\n## Sub\n", "From H1"),
        ("a/x.md", "## Only H2\ntext", "x"),
        ("a/My Note.md", "text", "My Note"),
        ("a/x.md", "```\n# not a heading\n```\n", "x"),
        ("a/x.md", "---\ntitle: 2024\n---\n", "2024"),
    ],
)
def test_title_prefers_frontmatter_then_h1_then_file_name(path: str, text: str, title: str) -> None:
    assert parse_note(path, text).title == title


@pytest.mark.parametrize(
    ("text", "summary"),
    [
        ("---\nsummary: Given.\n---\nBody text.", "Given."),
        ("---\ndescription: Described\n---\nBody.", "Described"),
        ("# T\n\nFirst sentence here. Second one.", "First sentence here."),
        (
            "# T\n\n- 09:30 standup with [[people/sarah-chen|Sarah]]\n- more",
            "09:30 standup with Sarah",
        ),
        ("# T\n\n```\ncode first\n```\n\nThen **bold** prose.", "Then bold prose."),
        ("# T\n\n<!-- comment -->\nProse with [[people/ana]].", "Prose with ana."),
        ("# T\n\n| a | b |\n|---|---|\n\nAfter table.", "After table."),
        ("", ""),
        # a Claude Code topic file: code and snake_case names as written, not emphasis
        (
            "# Debugging\n\n- The flaky test `test_upload_retry` fails when the S3 mock "
            "starts late",
            "The flaky test test_upload_retry fails when the S3 mock starts late",
        ),
        ("# T\n\nSet max_note_bytes in my_mod, __bold__.", "Set max_note_bytes in my_mod, bold."),
        ("# T\n\nUse `**kwargs` and `a_b`, *not* _this_.", "Use **kwargs and a_b, not this."),
        ("# T\n\n**Run `make_all` first**, then ``x`y``.", "Run make_all first, then x`y."),
    ],
)
def test_summary_is_frontmatter_or_first_sentence(text: str, summary: str) -> None:
    assert parse_note("x.md", text).summary == summary


def test_summary_is_clipped_to_160_characters_at_a_word() -> None:
    note = parse_note("x.md", "word " * 100)
    assert len(note.summary) <= 160
    assert note.summary.endswith("…")
    assert " wor…" not in note.summary


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("---\ntags: [a, b]\n---\n", ("a", "b")),
        ("---\ntags: a, b c\n---\n", ("a", "b", "c")),
        ("---\ntags:\n  - '#hashy'\n---\n", ("hashy",)),
        ("text #inline and #nested/tag.", ("inline", "nested/tag")),
        ("# Heading\n## Also #intitle", ("intitle",)),
        ("`#code` and\n```\n#fenced\n```\n", ()),
        ("#123 is not a tag, #y2024 is", ("y2024",)),
        ("a link [[note#heading]] and url http://x.y/#frag", ()),
        ("#Dup and #dup", ("Dup",)),
        ("unicode #café", ("café",)),
    ],
)
def test_tags_from_frontmatter_and_inline_but_not_code_or_links(text: str, tags: tuple) -> None:
    assert parse_note("x.md", text).tags == tags


def test_headings_have_file_line_numbers_and_skip_code() -> None:
    text = "---\na: 1\n---\n# One\ntext\n```\n# no\n```\n## Two ##\n"
    heads = parse_note("x.md", text).headings
    assert [(h.level, h.text, h.line) for h in heads] == [(1, "One", 4), (2, "Two", 9)]


def test_crlf_notes_parse_like_lf_notes() -> None:
    lf = parse_note("x.md", "---\ntitle: T\ntags: [a]\n---\n# H\n\nBody [[l]].\n")
    crlf = parse_note("x.md", "---\r\ntitle: T\r\ntags: [a]\r\n---\r\n# H\r\n\r\nBody [[l]].\r\n")
    assert (lf.title, lf.tags, lf.summary, [h.line for h in lf.headings]) == (
        crlf.title,
        crlf.tags,
        crlf.summary,
        [h.line for h in crlf.headings],
    )
    assert [link.line for link in crlf.links] == [7]


def test_aliases_list_or_comma_string() -> None:
    assert parse_note("x.md", "---\naliases: [A, B]\n---\n").aliases == ("A", "B")
    assert parse_note("x.md", "---\nalias: A, B\n---\n").aliases == ("A", "B")


def test_plain_text_and_first_paragraph() -> None:
    assert (
        plain_text("see [[a/b#c|alias]] and [[a/b]] and [t](u.md) **x**")
        == "see alias and b and t x"
    )
    assert first_paragraph("# h\n\n---\n\nreal text ^block-1\n") == "real text"


@pytest.mark.parametrize(
    ("tag", "wanted", "ok"),
    [
        ("project/alpha", "project", True),
        ("Project", "project", True),
        ("projects", "project", False),
    ],
)
def test_tag_filter_is_nested_and_case_insensitive(tag: str, wanted: str, ok: bool) -> None:
    assert tag_matches(tag, wanted) is ok


# -- hints: template text that is not memory -------------------------------------------


@pytest.mark.parametrize(
    ("body", "summary"),
    [
        ("%% The problem and the options. %%\n\nWe chose Postgres.\n", "We chose Postgres."),
        ("%%\nThe problem,\nthe options.\n%%\nWe chose Postgres.\n", "We chose Postgres."),
        ("  %% indented hint %%\n\nWe chose Postgres.\n", "We chose Postgres."),
        ("%% only a hint %%\n", ""),
        # not hints: a comment inside a line of text, code, an unclosed comment
        ("We chose %% not sure %% Postgres.\n", "We chose %% not sure %% Postgres."),
        ("```\n%% code %%\n```\nAfter.\n", "After."),
        ("%% never closed\nWe chose Postgres.\n", "We chose Postgres."),
    ],
)
def test_a_hint_is_never_a_summary(body: str, summary: str) -> None:
    note = parse_note("decisions/d.md", '---\ntitle: D\nsummary: ""\n---\n# D\n\n' + body)
    assert note.summary == summary


def test_hint_lines_are_the_comments_on_lines_of_their_own() -> None:
    text = (
        "---\na: 1\n---\n# T\n%% one %%\ntext %% inline %%\n%%\ntwo\n%%\n"
        "```\n%% code %%\n```\n%% unclosed\n"
    )
    note = parse_note("t.md", text)
    assert note.hints == frozenset({5, 7, 8, 9})


def test_a_heading_inside_a_hint_is_no_heading() -> None:
    note = parse_note("t.md", "# T\n%%\n## Example heading\n%%\n## Real\n")
    assert [h.text for h in note.headings] == ["T", "Real"]


def test_the_template_hints_are_hints() -> None:
    from memvault.core.compose import fill

    for path in sorted((TEMPLATES).glob("*.md")):
        text = fill(path.read_text(encoding="utf-8"), "Ana", "2026-01-02", "09:00")
        note = parse_note(f"x/{path.name}", text)
        lines = text.split("\n")
        prose = [
            n
            for n, line in enumerate(lines, 1)
            if n >= note.body_line and line.strip() and not line.lstrip().startswith("#")
        ]
        assert prose and set(prose) <= note.hints, path.name  # every line of guidance
        assert note.summary == "", path.name


def test_a_dataview_field_line_is_no_description() -> None:
    """A field test: a note opening with Dataview fields was listed in MEMORY.md as
    "role:: Staff engineer team:: atlas Dana mentors..."; a line that is a field is the
    note's data, its first prose comes after. A field inside a sentence is prose."""
    assert first_paragraph("role:: Staff engineer\nteam:: atlas\n\nDana mentors new hires.\n") == (
        "Dana mentors new hires."
    )
    assert first_paragraph("- due:: 2026-12-05\nThe plan is set.\n") == "The plan is set."
    assert first_paragraph("See [due:: tomorrow] for it.\n") == "See [due:: tomorrow] for it."
    assert first_paragraph("std::vector is used here.\n") == "std::vector is used here."
    assert first_paragraph("Réunion:: lundi\nLe texte.\n") == "Le texte."
    # a second review: the forms Dataview reads as fields too, and prose that is none
    for field in ("**Role**:: Lead", "🎯 Goal:: v2", "> role:: lead", "- [ ] due:: 2026-12-05"):
        assert first_paragraph(f"{field}\nProse here.\n") == "Prose here.", field
    for prose in ("Meeting at 10::30 today.", "Call it as Vec:: new() here.", "See x.org::80."):
        assert first_paragraph(prose + "\n") == prose
    note = parse_note("people/dana.md", "# Dana\n\nrole:: Staff engineer\n\nDana mentors. Yes.\n")
    assert note.summary == "Dana mentors."


@pytest.mark.parametrize(
    ("markdown", "seen"),
    [
        ("see [t](https://en.wikipedia.org/wiki/Foo_(bar)) here", "see t here"),
        ("![chart](data:image/png;base64,iVBORw0KGgo=) Sales rose.", "chart Sales rose."),
        ("[a](b [c](d)", "[a](b c"),  # the first is no link (CommonMark: none either)
    ],
)
def test_markdown_links_read_as_their_text(markdown: str, seen: str) -> None:
    assert plain_text(markdown) == seen


def test_a_line_of_unclosed_markdown_links_is_read_in_linear_time() -> None:
    """``[a](`` 100,000 times on one line (a paste, or a hostile note) took 124 s to
    parse: each ``[a](`` searched the rest of the line for its ``)``. A note of 2 MB so
    made held the daemon's sync for about an hour."""
    started = time.perf_counter()
    note = parse_note("x.md", "[a](" * 100_000)
    assert time.perf_counter() - started < 5
    assert note.summary.startswith("[a]([a](")
