"""core/markup.py: which parts of a note are prose, and which are code, math or comments."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.core.markup import frontmatter_end, mask_inert
from memvault.core.wikilinks import find_links


def targets(text: str) -> list[str]:
    return [link.target for link in find_links(text)]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        # code spans and fences
        ("`[[a]]` ``[[b]]`` [[c]]", ["c"]),
        ("```\n[[a]]\n```\n[[b]]", ["b"]),
        ("~~~~\n[[a]]\n~~~\n[[still code]]\n~~~~\n[[b]]", ["b"]),
        ("```\nunclosed [[a]]", []),
        ("- item\n  ```\n  [[in a fenced block of a list item]]\n  ```\n  [[b]]", ["b"]),
        ("> ```\n> [[quoted code]]\n> ```\n> [[b]]", ["b"]),
        ("1. ```py\n   [[a]]\n   ```\n", []),
        # indented code: four columns past the margin or the list item's content
        ("text\n\n    [[code]]\n\n[[b]]", ["b"]),
        ("\t[[tab-indented code]]\n[[b]]", ["b"]),
        ("# Heading\n    [[code right after a heading]]", []),
        ("para\n    [[a lazy continuation is prose]]", ["a lazy continuation is prose"]),
        ("- item\n\n      [[code inside the item]]\n\n- next", []),
        ("- item\n\n    [[a second paragraph of the item]]", ["a second paragraph of the item"]),
        ("- item\n    [[continuation of the item]]", ["continuation of the item"]),
        (
            "10. item\n\n    [[paragraph of a wide ordered item]]",
            ["paragraph of a wide ordered item"],
        ),
        ("-\titem\n\n\t[[paragraph after a tab marker]]", ["paragraph after a tab marker"]),
        ("- item\n\n\t- [[tab-nested item]]", ["tab-nested item"]),
        ("> quote\n>\n>     [[code in a quote]]", []),
        # math
        ("$$\n[[a]]\n$$\n[[b]]", ["b"]),
        ("$$x = [[a]]$$ [[b]]", ["b"]),
        ("text $$ [[a]] $$ and [[b]]", ["b"]),
        ("inline $[[a]]$ math, [[b]]", ["b"]),
        ("costs $5 and [[a]] costs $6", ["a"]),
        ("a $ [[b]] $ c", ["b"]),  # a dollar before a space opens nothing
        ("$x$5 [[a]] y$", []),  # a closing dollar is not followed by a digit
        (r"escaped \$ [[a]] \$ dollars", ["a"]),
        ("$$\nunclosed math runs to the end [[a]]", []),
        # HTML comments
        ("<!-- [[a]] --> [[b]]", ["b"]),
        ("<!--\n[[a]]\n-->\n[[b]]", ["b"]),
        ("text <!-- spans\n[[a]]\nlines --> [[b]]", ["b"]),
        ("<!-- unclosed at a line start [[a]]\n\n[[b]]", []),
        ("text <!-- unclosed inline [[a]]", ["a"]),
        # what Obsidian reads: Obsidian comments, frontmatter, raw HTML
        ("%% [[in an Obsidian comment]] %%", ["in an Obsidian comment"]),
        ("%%\n[[in a comment block]]\n%%", ["in a comment block"]),
        ("---\nrelated: '[[a]]'\nblock: |\n    [[b]]\n---\n[[c]]", ["a", "b", "c"]),
        ("<div>[[in html]]</div>", ["in html"]),
        # leftmost wins, as in CommonMark
        ("[[a `b]] `c`", ["a `b"]),
        ("`x [[a]]` [[b]]", ["b"]),
        ("[x](a$b.md) $y$ [[c]]", ["a$b.md", "c"]),
        ("$[[a]]$ [[b]]", ["b"]),
    ],
)
def test_links_are_read_where_obsidian_reads_them(text: str, found: list[str]) -> None:
    assert targets(text) == found


@given(st.text(alphabet=st.sampled_from(list("ab \n\t`$<!->[]()%#|^\\:")), max_size=120))
def test_masking_keeps_every_offset_and_line_break(text: str) -> None:
    masked = mask_inert(text)
    assert len(masked) == len(text)
    assert [i for i, c in enumerate(masked) if c == "\n"] == [
        i for i, c in enumerate(text) if c == "\n"
    ]
    # a character is either kept or blanked, never changed into another one
    assert all(m == c or m == " " for m, c in zip(masked, text, strict=True))


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("---\na: 1\n---\nbody", 13),
        ("---\r\na: 1\r\n...\r\nbody", 16),
        ("---\nunclosed\n", 0),
        ("\n---\na: 1\n---\n", 0),
        ("---\n---", 7),
    ],
)
def test_frontmatter_end(text: str, end: int) -> None:
    assert frontmatter_end(text) == end


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        "$a " * 100_000,
        "<!-- " * 50_000,
        "`" * 3 + "x`" * 100_000,
        "".join("  " * (i % 40) + "- item [[x]]\n" for i in range(20_000)),
        "> " * 2_000 + "x\n" * 2_000,
        "[[" * 100_000,
    ],
    ids=["brackets", "dollars", "comments", "backticks", "nested-lists", "quotes", "openers"],
)
def test_hostile_paragraphs_are_read_in_one_pass(text: str) -> None:
    # Each of these took minutes when every unmatched opener searched to the end of
    # the paragraph; the assertion is only that the scan finishes and keeps offsets.
    assert len(mask_inert(text)) == len(text)


_PIECES = [
    "a", "b", " ", "  ", "   ", "\n", "#", "> ", "- ", "* ", "1. ", "[[x]]", "[", "]", "(", ")",
    "|", "%%", "<", ">", "!", "\\", "_", "**", "---", "~", "~~", "<div>", "-->", "[a](b)", "+ ",
    "\n - ", "\n   - ", "`", "$", "\t",
]  # fmt: skip
_PROSE = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@given(_PROSE)
def test_a_text_without_any_inert_opener_is_its_own_mask(text: str) -> None:
    """The fast path (no backtick, ``~~~``, dollar, ``<!--``, tab nor four spaces: no
    region can be inert) gives what the full scan gives."""
    from memvault.core.markup import _mask_all, may_be_inert

    if not may_be_inert(text):
        assert _mask_all(text) == text == mask_inert(text)
    else:
        assert mask_inert(text) == _mask_all(text)
