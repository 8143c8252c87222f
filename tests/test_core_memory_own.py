"""core/memory_own.py: a MEMORY.md's own lines are an index of links, or a dump."""

from __future__ import annotations

import pytest

from memvault.core.memory_own import is_index, pointer


@pytest.mark.parametrize(
    ("line", "target"),
    [
        ("- [Debugging](debugging.md) — how we bisect flaky tests", "debugging.md"),
        ("- [[debugging]] - how we bisect", "debugging"),
        ("- [[people/Ana|Ana]]: payments lead", "people/ana"),
        ("* **[API](api-conventions.md)**: the rules", "api-conventions.md"),
        ("1. [[a#Setup]]", "a"),
        ("  - [[nested]]", "nested"),
        ("- 3: talked to [[Ana]] about item 3", None),  # a dump's line naming a note
        ("- observation 4 about the project", None),
        ("Met [[Ana]] today.", None),
        ("- [Title](file.md) " + "x" * 300, None),  # no hook: a paragraph
    ],
)
def test_a_pointer_is_a_list_item_opening_with_a_link_and_a_short_hook(
    line: str, target: str | None
) -> None:
    assert pointer(line) == target


def test_an_index_names_each_note_once_and_a_dump_is_prose() -> None:
    index = [f"- [Topic {i}](topic-{i}.md) — area {i}" for i in range(300)]
    assert is_index(["# Memory", "", "<!-- kept by the agent -->", *index, "---"])
    assert is_index([*index[:90], "a stray sentence", "another one"])  # 90 of 92
    assert not is_index([*index[:7], *(f"- observation {i}" for i in range(10))])
    assert not is_index([f"- [[Ana]] agreed to item {i}" for i in range(300)])  # one note
    assert not is_index([f"- {i}: talked to [[Ana]] about item {i}" for i in range(600)])
    assert not is_index(["# Memory", "", "---"])  # no line of text: nothing to call it
