"""core/wikilinks.py: finding, resolving and rewriting links like Obsidian."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.core.wikilinks import (
    LinkIndex,
    Resolution,
    find_links,
    heading_key,
    link_safe,
    mask_code,
    relink,
    rewrite_links,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[note]]", [("wiki", "note", None, None, False)]),
        ("[[note|Shown]]", [("wiki", "note", None, "Shown", False)]),
        ("[[note#Heading]]", [("wiki", "note", "Heading", None, False)]),
        ("[[note#^block-1]]", [("wiki", "note", "^block-1", None, False)]),
        ("[[#Local heading]]", [("wiki", "", "Local heading", None, False)]),
        ("![[diagram.png]]", [("wiki", "diagram.png", None, None, True)]),
        ("[[folder/note#H|alias]]", [("wiki", "folder/note", "H", "alias", False)]),
        ("| [[note\\|alias]] |", [("wiki", "note", None, "alias", False)]),
        ("[text](folder/note.md)", [("markdown", "folder/note.md", None, "text", False)]),
        ("[t](My%20Note.md#Sec)", [("markdown", "My Note.md", "Sec", "t", False)]),
        ("[t](<My Note.md>)", [("markdown", "My Note.md", None, "t", False)]),
        ("[t](https://x.y/a.md) [t](#anchor) [t](mailto:a@b.c)", []),
        (
            "[t](file.pdf) ![](<img/a b.png>)",
            [
                ("markdown", "file.pdf", None, "t", False),
                ("markdown", "img/a b.png", None, "", True),
            ],
        ),
        ("`[[in code]]` ``[[also]]``", []),
        ("```\n[[fenced]]\n```\n[[after]]", [("wiki", "after", None, None, False)]),
        ("~~~~\n[[fenced]]\n~~~\n[[still fenced]]\n~~~~\n", []),
        ("```\nunclosed [[x]]", []),
        ("[[a]] and [[b]]", [("wiki", "a", None, None, False), ("wiki", "b", None, None, False)]),
        ("[[]]", [("wiki", "", None, None, False)]),
    ],
)
def test_find_links(text: str, expected: list[tuple]) -> None:
    got = [(lk.kind, lk.target, lk.anchor, lk.alias, lk.embed) for lk in find_links(text)]
    assert got == expected


def test_links_carry_line_numbers() -> None:
    links = find_links("one\r\ntwo [[a]]\n\nfour [[b]]")
    assert [lk.line for lk in links] == [2, 4]


def test_mask_code_keeps_offsets() -> None:
    text = "a `b` c\n```\nd\n```\ne"
    masked = mask_code(text)
    assert len(masked) == len(text)
    assert masked.split("\n")[0] == "a     c"
    assert masked.endswith("\ne")


VAULT = [
    "MEMORY.md",
    "people/sarah-chen.md",
    "people/Ana López.md",
    "projects/alpha/notes.md",
    "projects/beta/notes.md",
    "projects/alpha/plan.md",
    "decisions/2024-03-12-why-postgresql.md",
    "logs/2024-03-15.md",
    "assets/diagram.png",
    "v1.2 release.md",
]
ALIASES = {"people/sarah-chen.md": ["Sarah", "SC"], "people/Ana López.md": ["SC"]}


@pytest.mark.parametrize(
    ("target", "source", "verdict", "path"),
    [
        ("people/sarah-chen", "MEMORY.md", "resolved", "people/sarah-chen.md"),
        ("People/Sarah-Chen", "MEMORY.md", "resolved", "people/sarah-chen.md"),
        ("people/sarah-chen.md", "MEMORY.md", "resolved", "people/sarah-chen.md"),
        ("sarah-chen", "logs/2024-03-15.md", "resolved", "people/sarah-chen.md"),
        ("SARAH-CHEN", "logs/2024-03-15.md", "resolved", "people/sarah-chen.md"),
        ("Ana López", "MEMORY.md", "resolved", "people/Ana López.md"),
        ("Ana Lo\u0301pez", "MEMORY.md", "resolved", "people/Ana López.md"),  # NFD spelling
        ("notes", "MEMORY.md", "ambiguous", None),
        ("notes", "projects/alpha/plan.md", "resolved", "projects/alpha/notes.md"),
        ("alpha/notes", "MEMORY.md", "resolved", "projects/alpha/notes.md"),
        ("../beta/notes", "projects/alpha/plan.md", "resolved", "projects/beta/notes.md"),
        ("diagram.png", "MEMORY.md", "resolved", "assets/diagram.png"),
        ("v1.2 release", "MEMORY.md", "resolved", "v1.2 release.md"),
        ("Sarah", "MEMORY.md", "alias", "people/sarah-chen.md"),
        ("SC", "MEMORY.md", "ambiguous", None),
        ("nobody", "MEMORY.md", "unresolved", None),
        ("people/nobody", "MEMORY.md", "unresolved", None),
        ("", "logs/2024-03-15.md", "resolved", "logs/2024-03-15.md"),
    ],
)
def test_resolution_like_obsidian(target: str, source: str, verdict: str, path: str | None) -> None:
    res = LinkIndex(VAULT, ALIASES).resolve(target, source)
    assert (res.verdict, res.path) == (verdict, path)


def test_ambiguous_links_name_their_candidates() -> None:
    res = LinkIndex(VAULT).resolve("notes", "MEMORY.md")
    assert res == Resolution(
        "ambiguous", None, ("projects/alpha/notes.md", "projects/beta/notes.md")
    )


@pytest.mark.parametrize(
    ("path", "source", "link"),
    [
        ("people/sarah-chen.md", "MEMORY.md", "sarah-chen"),
        ("projects/alpha/notes.md", "MEMORY.md", "projects/alpha/notes"),
        ("assets/diagram.png", "MEMORY.md", "diagram.png"),
    ],
)
def test_shortest_link_resolves_back_uniquely(path: str, source: str, link: str) -> None:
    idx = LinkIndex(VAULT)
    assert idx.shortest_link(path, source) == link
    assert idx.resolve(link, source) == Resolution("resolved", path)


def test_rewrite_changes_only_the_target_bytes() -> None:
    text = "see [[old#Sec|Alias]] and ![[old]] and [x](old.md#a) end"
    out = rewrite_links(text, lambda lk: "new" if lk.kind == "wiki" else "new.md")
    assert out == "see [[new#Sec|Alias]] and ![[new]] and [x](new.md#a) end"


_text = st.text(alphabet=st.sampled_from(list("ab [](){}#|^!`\n-.md/")), max_size=80)


@given(
    before=_text,
    target=st.text(alphabet="abcxyz/ -", min_size=1, max_size=12),
    anchor=st.sampled_from(["", "#Heading", "#^blk"]),
    alias=st.sampled_from(["", "|Shown"]),
    after=_text,
    new=st.text(alphabet="pqrs/ -", min_size=1, max_size=12),
)
def test_rewriting_a_link_changes_no_other_byte(
    before: str, target: str, anchor: str, alias: str, after: str, new: str
) -> None:
    link = f"[[{target}{anchor}{alias}]]"
    text = f"{before}\n{link}\n{after}"
    out = rewrite_links(
        text,
        lambda lk: new if lk.target == target.strip() and lk.start == len(before) + 1 else None,
    )
    start = len(before) + 1
    if not any(lk.start == start for lk in find_links(text)):
        assert out == text  # the link sits inside code (a backtick span around it): not a link
        return
    assert out[:start] == text[:start]
    assert out[start:].startswith(f"[[{new}{anchor}{alias}]]")
    assert out[start + len(f"[[{new}{anchor}{alias}]]") :] == text[start + len(link) :]


@pytest.mark.parametrize(
    ("link_format", "expected"),
    [
        (
            "shortest",
            "x [[note-renamed#H|Shown]] y [[note-renamed]] z [md](note-renamed.md#H) [[other]]",
        ),
        (
            "relative",
            "x [[../archive/note-renamed#H|Shown]] y [[../archive/note-renamed]] z "
            "[md](../archive/note-renamed.md#H) [[other]]",
        ),
        (
            "absolute",
            "x [[archive/note-renamed#H|Shown]] y [[archive/note-renamed]] z "
            "[md](archive/note-renamed.md#H) [[other]]",
        ),
    ],
)
def test_relink_follows_a_move_and_keeps_anchor_and_alias(link_format: str, expected: str) -> None:
    before_files = ["a/note.md", "b/other.md"]
    after_files = ["archive/note-renamed.md", "b/other.md"]
    moves = {"a/note.md": "archive/note-renamed.md"}
    text = "x [[a/note#H|Shown]] y [[note]] z [md](../a/note.md#H) [[other]]"
    out = relink(
        text,
        "b/other.md",
        "b/other.md",
        LinkIndex(before_files),
        LinkIndex(after_files),
        moves,
        link_format,  # type: ignore[arg-type]
    )
    assert out == expected


def test_relink_leaves_links_that_still_resolve() -> None:
    moves = {"a/note.md": "b/note.md"}
    text = "[[note]] [[missing]]"
    out = relink(
        text,
        "x.md",
        "x.md",
        LinkIndex(["a/note.md", "x.md"]),
        LinkIndex(["b/note.md", "x.md"]),
        moves,
    )
    assert out == text


def test_relink_disambiguates_when_a_move_creates_a_name_clash() -> None:
    # [[plan]] led to alpha/plan.md; a second plan.md moving in makes it ambiguous
    before = LinkIndex(["alpha/plan.md", "drafts/draft.md", "x.md"])
    after = LinkIndex(["alpha/plan.md", "beta/plan.md", "x.md"])
    out = relink("[[plan]]", "x.md", "x.md", before, after, {"drafts/draft.md": "beta/plan.md"})
    assert out == "[[alpha/plan]]"


def test_link_safe_names() -> None:
    assert link_safe("people/Ana López.md")
    assert not link_safe("notes/C# tips.md")
    assert not link_safe("a|b.md")


def test_heading_key_ignores_case_space_and_unsafe_characters() -> None:
    assert heading_key("Why: the  Database") == heading_key("why the database")
