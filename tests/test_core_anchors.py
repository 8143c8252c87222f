"""core/anchors.py: #heading, #A#B and #^block anchors matched as Obsidian matches them."""

from __future__ import annotations

import pytest

from memvault.core.anchors import (
    Section,
    anchor_matches,
    find_anchor,
    heading_key,
    outline,
    strip_heading,
)


def test_strip_heading_is_obsidians():
    # the example of obsidian-typings' stripHeading
    assert strip_heading('foo!"#$%&()*+,.:;<=>?@^`{|}~/\\[\\]\\\\\r\nbar') == "foo bar"


@pytest.mark.parametrize(
    ("heading", "written", "matches"),
    [
        ("`hasTag()`", "hasTag", True),  # backticks and parentheses go
        ("How large can each remote vault be?", "How large can each remote vault be", True),
        ("Why: the  Database", "why the database", True),  # case and runs of spaces
        ("C# tips", "C tips", True),
        ("A/B testing", "A B testing", True),
        ("100% done", "100 done", True),
        ("Links [[like this]]", "Links like this", True),
        ("Block ^refs", "Block refs", True),
        ("Remove link", "remove-link", False),  # '-' is kept: GitHub-style slugs do not match
        ("Don't panic", "Dont panic", False),  # so is the apostrophe
        ("snake_case", "snake case", False),  # and the underscore
        ("Café", "Cafe", False),  # and accents
        ("Ünïcödé", "ünïcödé", True),
        ("Tabs\tand\u00a0spaces", "tabs and spaces", True),
        ("trailing space ", "trailing space", True),
    ],
)
def test_heading_anchor_normalisation(heading: str, written: str, matches: bool) -> None:
    assert (heading_key(heading) == heading_key(written)) is matches
    note = outline(f"# Title\n\n## {heading}\n\ntext\n")
    assert anchor_matches(note, written) is matches


NESTED = """\
# A
## B
text under A > B
# C
## B
### D
text under C > B > D
#### B
"""


@pytest.mark.parametrize(
    ("anchor", "line"),
    [
        ("B", 2),  # the first heading with that text
        ("A#B", 2),
        ("C#B", 5),  # a second B, found through its parent
        ("C#D", 6),  # deeper, not necessarily a direct child
        ("C#B#D", 6),
        ("D#B", 8),
        ("A#D", 6),  # Obsidian only asks for a deeper heading later on, not inside A's section
        ("##C##B", 5),  # empty parts are dropped
        ("B#C", None),  # C is not deeper than B
        ("D#C", None),  # nor is it after D
        ("C#A", None),  # order matters
        ("X", None),
    ],
)
def test_nested_heading_anchors_walk_in_order(anchor: str, line: int | None) -> None:
    found = find_anchor(outline(NESTED), anchor)
    assert (found.start if found else None) == line


def test_a_heading_section_runs_to_the_next_heading_as_high():
    note = outline(NESTED)
    assert find_anchor(note, "A") == Section("heading", 1, 3, "A")
    assert find_anchor(note, "C#B") == Section("heading", 5, 8, "B")
    assert find_anchor(note, "D") == Section("heading", 6, 8, "D")


BLOCKS = """\
---
id: ^not-a-block-in-frontmatter
---
A paragraph
that ends with an id ^para

- first item ^item-one
- second item
  ^item-two

| a | b |
|---|---|
| 1 | 2 |

^table-id

![[version-history-collaboration.png]]^version-history-image

```
code ^not-a-block
```
^code-block

Mid ^not-the-end
of a paragraph.

> [!note]
> A callout ^callout

`^in-code`

Not^glued-to-a-word
"""


@pytest.mark.parametrize(
    ("anchor", "lines"),
    [
        ("^para", (4, 5)),
        ("^PARA", (4, 5)),  # ids compare case-insensitively
        ("^item-one", (7, 7)),
        ("^item-two", (8, 9)),  # an id on the line under a list item names that item
        ("^table-id", (11, 15)),  # on its own line after a table: the table
        ("^version-history-image", (17, 17)),  # right after an embed's ]]
        ("^code-block", (19, 22)),  # on the line after a code block: the code block
        ("^callout", (27, 28)),
        ("^not-a-block", None),  # inside code
        ("^not-the-end", None),  # ids end a paragraph
        ("^in-code", None),
        ("^glued-to-a-word", None),
        ("^not-a-block-in-frontmatter", None),
    ],
)
def test_block_anchors(anchor: str, lines: tuple[int, int] | None) -> None:
    found = find_anchor(outline(BLOCKS), anchor)
    assert ((found.start, found.end) if found else None) == lines
    if found:
        assert found.kind == "block"
        assert found.block and found.block.lower() == anchor[1:].lower()


@pytest.mark.parametrize(
    ("text", "anchor", "matches"),
    [
        ("```\n## In code\n```\n", "In code", False),
        ("<!--\n## In a comment\n-->\n", "In a comment", False),
        ("$$\n## In math\n$$\n", "In math", False),
        ("    ## Indented code\n", "Indented code", False),
        ("Setext one\n===\n", "Setext one", True),
        ("Setext two\n---\n", "Setext two", True),
        ("- item\n---\n", "item", False),  # a rule under a list item is no underline
        ("> ## In a quote\n", "In a quote", True),
        ("> [!tip] Title\n> ## In a callout\n", "In a callout", True),
        ("- ## In a list item\n", "In a list item", True),
        ("## Closing hashes ##\n", "Closing hashes", True),
        ("#NoSpace\n", "NoSpace", False),  # a tag, not a heading
        ("---\ntitle: x\n---\n", "title x", False),  # frontmatter is no setext heading
        ("## Heading\n", "", True),  # no anchor: the note itself
        ("## Heading\n", "#", True),
        ("## Heading\n", "[^1]", True),  # footnotes are not checked
    ],
)
def test_what_counts_as_a_heading(text: str, anchor: str, matches: bool) -> None:
    assert anchor_matches(outline(text), anchor) is matches


def test_headings_keep_their_line_numbers_with_crlf_and_frontmatter():
    note = outline("---\r\na: 1\r\n---\r\n# One\r\ntext\r\n## Two\r\n")
    assert [(h.level, h.text, h.line) for h in note.headings] == [(1, "One", 4), (2, "Two", 6)]
    assert note.lines == 6
    assert find_anchor(note, "One") == Section("heading", 4, 6, "One")
