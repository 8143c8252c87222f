"""core/wikilinks.py: finding, resolving and rewriting links like Obsidian."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.core.linkcheck import link_format
from memvault.core.relink import relink_note, rewrite_links
from memvault.core.results import Hit
from memvault.core.wikilinks import (
    LinkIndex,
    Resolution,
    decode_uri,
    find_links,
    heading_key,
    key,
    link_safe,
    mask_code,
    unfiled_links,
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


def relink(text: str, *args: Any) -> str:
    """The text ``relink_note`` leaves (what these cases check)."""
    return relink_note(text, *args).text


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
    assert idx.link_text(path, source, "shortest") == link
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


# -- link formats: Obsidian's fileToLinktext -------------------------------------------------

HELP = [
    "Obsidian Sync/Security and privacy.md",
    "Obsidian Publish/Security and privacy.md",
    "Obsidian Sync/Version history.md",
    "Obsidian Sync/Collaborate on a shared vault.md",
    "Attachments/Engelbart.jpg",
    "a/b/c/deep.md",
    "a/x.md",
    "a/y.md",
    "README.md",
    "docs/README.md",
]


@pytest.mark.parametrize(
    ("path", "source", "link_format", "omit_md", "expected"),
    [
        ("Obsidian Sync/Version history.md", "a/x.md", "shortest", True, "Version history"),
        ("Obsidian Sync/Version history.md", "a/x.md", "shortest", False, "Version history.md"),
        # a name two files share is written in full, even from the target's own folder
        (
            "Obsidian Sync/Security and privacy.md",
            "Obsidian Sync/Collaborate on a shared vault.md",
            "shortest",
            True,
            "Obsidian Sync/Security and privacy",
        ),
        (
            "README.md",
            "docs/README.md",
            "shortest",
            True,
            "README",
        ),  # root: the full path is the name
        ("docs/README.md", "README.md", "shortest", True, "docs/README"),
        ("Attachments/Engelbart.jpg", "a/x.md", "shortest", True, "Engelbart.jpg"),
        ("a/b/c/deep.md", "a/x.md", "relative", True, "b/c/deep"),
        ("a/x.md", "a/b/c/deep.md", "relative", True, "../../x"),
        ("a/y.md", "a/x.md", "relative", True, "y"),
        ("a/x.md", "README.md", "relative", True, "a/x"),
        ("README.md", "a/x.md", "relative", True, "../README"),
        (
            "Attachments/Engelbart.jpg",
            "a/b/c/deep.md",
            "relative",
            True,
            "../../../Attachments/Engelbart.jpg",
        ),
        (
            "Obsidian Sync/Version history.md",
            "a/x.md",
            "absolute",
            True,
            "Obsidian Sync/Version history",
        ),
        (
            "Obsidian Sync/Version history.md",
            "a/x.md",
            "absolute",
            False,
            "Obsidian Sync/Version history.md",
        ),
    ],
)
def test_link_text_is_obsidians_file_to_linktext(
    path: str, source: str, link_format: str, omit_md: bool, expected: str
) -> None:
    idx = LinkIndex(HELP)
    assert idx.link_text(path, source, link_format, omit_md=omit_md) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "link_format", "expected"),
    [
        ("Plan .md", "shortest", "Plan .md"),
        ("Plan .md", "absolute", "Plan .md"),
        ("Plan\ufeff.md", "shortest", "Plan\ufeff.md"),
        ("Plan\u00a0.md", "relative", "Plan\u00a0.md"),
        (" Lead.md", "shortest", "/ Lead.md"),
        (" Space/Lead.md", "absolute", "/ Space/Lead.md"),
        (" Space/Lead.md", "shortest", "Lead"),  # (its name alone is trimmed of nothing)
        ("Drafts /Plan.md", "absolute", "Drafts /Plan"),  # (inside: nothing trims it)
    ],
)
def test_a_link_to_a_name_obsidian_would_read_trimmed_leads_to_it(
    path: str, link_format: str, expected: str
) -> None:
    """Obsidian writes ``[[Plan ]]`` for ``Plan .md`` (its ``fileToLinktext``) and reads it
    trimmed, ``[[Plan]]``: a link leading nowhere, or to Plan.md. memvault writes one that
    leads there: the ``.md`` kept, or the path from the root with a ``/`` ahead."""
    idx = LinkIndex([path, "Other.md"])
    link = idx.link_text(path, "Other.md", link_format)  # type: ignore[arg-type]
    assert link == expected
    (found,) = find_links(f"[[{link}]]")
    assert idx.resolve(found.target, "Other.md") == Resolution("resolved", path)


def test_a_link_to_a_note_named_md_md_keeps_its_md() -> None:
    """A careless ``create /memories/new.md.md`` was listed in MEMORY.md as
    ``[[new.md]]``: Obsidian finds it at its second look-up (the name with ``.md``), but
    memvault reads a link ending in ``.md`` as that name (``links check`` flagged
    MEMORY.md's own line). ``[[new.md.md]]`` leads there in both."""
    idx = LinkIndex(["new.md.md", "Other.md"])
    assert idx.resolve("new.md", "Other.md").verdict == "unresolved"
    assert idx.link_text("new.md.md", "Other.md") == "new.md.md"
    assert idx.resolve("new.md.md", "Other.md") == Resolution("resolved", "new.md.md")


@pytest.mark.parametrize(
    ("path", "address"),
    [
        ("Plan .md", "[[Plan .md#Goal]]"),
        (" Lead.md", "[[/ Lead.md#Goal]]"),
        ("a/b.md", "[[a/b#Goal]]"),
    ],
)
def test_a_hits_address_leads_to_its_note_whatever_spaces_its_name_has(
    path: str, address: str
) -> None:
    """A search hit's address (``get`` reads it; a person pastes it into a note) was
    ``[[Plan #Goal]]`` for ``Plan .md``: a link to nothing once pasted."""
    hit = Hit(path, "Plan", ("Goal",), 1, 2, "", 1.0)
    assert hit.address == address
    (link,) = find_links(address)
    assert LinkIndex([path]).resolve(link.target, "x.md") == Resolution("resolved", path)


def test_a_wikilinks_name_is_trimmed_as_javascript_trims_it() -> None:
    """U+FEFF and no-break spaces are white space to JavaScript's ``trim`` (not to
    Python's ``strip``): ``[[Plan<U+FEFF>]]`` is ``[[Plan]]`` to Obsidian."""
    targets = [link.target for link in find_links("[[Plan\ufeff]] [[\u00a0Plan|x]] [[Plan\u200b]]")]
    assert targets == ["Plan", "Plan", "Plan\u200b"]


@pytest.mark.parametrize(
    ("app_json", "expected"),
    [
        (None, "shortest"),
        ("", "shortest"),
        ("{}", "shortest"),
        ('{"newLinkFormat": "relative"}', "relative"),
        ('{"newLinkFormat": "absolute", "useMarkdownLinks": true}', "absolute"),
        ('{"newLinkFormat": "shortest"}', "shortest"),
        ('{"newLinkFormat": "Relative"}', "shortest"),
        ('{"newLinkFormat": 3}', "shortest"),
        ("[1, 2]", "shortest"),
        ("{not json", "shortest"),
    ],
)
def test_the_link_format_comes_from_app_json(app_json: str | None, expected: str) -> None:
    assert link_format(app_json) == expected


# -- relinking after renames: the cases from a real vault ---------------------------------------


def test_a_folder_rename_keeps_a_path_where_the_name_is_not_unique() -> None:
    # these became [[Security and privacy#Encryption|...]], which only resolved by a
    # same-folder tie-break; Obsidian writes the full path when the name is not unique
    before = LinkIndex(HELP)
    moves = {
        "Obsidian Sync/Security and privacy.md": "Sync/Security and privacy.md",
        "Obsidian Sync/Version history.md": "Sync/Version history.md",
        "Obsidian Sync/Collaborate on a shared vault.md": "Sync/Collaborate on a shared vault.md",
    }
    after = LinkIndex(moves.get(p, p) for p in HELP)
    text = (
        "If the vault is [[Obsidian Sync/Security and privacy#Encryption|end-to-end encrypted]], "
        "see [[Version history]] and [[Obsidian Sync/Version history#^version-history-image]]."
    )
    out = relink(
        text,
        "Obsidian Sync/Collaborate on a shared vault.md",
        "Sync/Collaborate on a shared vault.md",
        before,
        after,
        moves,
    )
    assert out == (
        "If the vault is [[Sync/Security and privacy#Encryption|end-to-end encrypted]], "
        "see [[Version history]] and [[Version history#^version-history-image]]."
    )
    assert after.resolve("Sync/Security and privacy", "Sync/x.md").path == (
        "Sync/Security and privacy.md"
    )


@pytest.mark.parametrize(
    ("link_format", "written", "expected"),
    [
        # the angle-bracket link came back as <../Sync/Version%20log.md>
        ("relative", "[v](<../Sync/Version history.md>)", "[v](<../Sync/Version log.md>)"),
        ("shortest", "[v](<../Sync/Version history.md>)", "[v](<Version log.md>)"),
        ("absolute", "[v](<../Sync/Version history.md>)", "[v](<Sync/Version log.md>)"),
        ("relative", "[v](../Sync/Version%20history.md)", "[v](../Sync/Version%20log.md)"),
        ("shortest", "[v](../Sync/Version%20history.md#Restore)", "[v](Version%20log.md#Restore)"),
        ("shortest", "![v](<../Sync/Version history.md>)", "![v](<Version log.md>)"),
        ("shortest", "[v](../Sync/Version%20history)", "[v](Version%20log)"),  # no .md: none added
        ("shortest", "[[Sync/Version history.md|v]]", "[[Version log.md|v]]"),  # .md kept
        ("shortest", "[[Sync/Version history|v]]", "[[Version log|v]]"),
        ("relative", "| [[Sync/Version history\\|v]] |", "| [[../Sync/Version log\\|v]] |"),
    ],
)
def test_a_renamed_link_keeps_its_authors_style(
    link_format: str, written: str, expected: str
) -> None:
    files = ["Sync/Version history.md", "Publish/Guide.md"]
    moves = {"Sync/Version history.md": "Sync/Version log.md"}
    out = relink(
        written,
        "Publish/Guide.md",
        "Publish/Guide.md",
        LinkIndex(files),
        LinkIndex(moves.get(p, p) for p in files),
        moves,
        link_format,  # type: ignore[arg-type]
    )
    assert out == expected


@pytest.mark.parametrize(
    ("written", "new_name", "expected"),
    [
        ("[c](Caf%C3%A9.md)", "Crème brûlée.md", "[c](Cr%C3%A8me%20br%C3%BBl%C3%A9e.md)"),
        ("[c](Café.md)", "Crème brûlée.md", "[c](Crème%20brûlée.md)"),
        ("[c](<Café.md>)", "Crème brûlée.md", "[c](<Crème brûlée.md>)"),
        ("[c](Café.md)", "100% (final.md", "[c](100%25%20%28final.md)"),
        ("[c](<Café.md>)", "50%20off.md", "[c](<50%2520off.md>)"),
        ("[c](Café.md)", "Q&A; notes (v2).md", "[c](Q&A;%20notes%20(v2).md)"),
    ],
)
def test_markdown_targets_are_encoded_as_the_author_encoded_them(
    written: str, new_name: str, expected: str
) -> None:
    files = ["Café.md", "x.md"]
    moves = {"Café.md": new_name}
    out = relink(written, "x.md", "x.md", LinkIndex(files), LinkIndex([new_name, "x.md"]), moves)
    assert out == expected
    (link,) = find_links(out)
    assert link.target == new_name  # the link as rewritten leads to the file


def test_a_link_whose_form_still_works_is_left_as_written() -> None:
    # Obsidian rewrites a link only when it no longer leads where it led
    files = ["Sync/Version history.md", "Sync/Guide.md", "Other/x.md"]
    text = "[[Sync/Version history]] [[Version history]] [[version HISTORY]] [v](../Sync/Version%20history.md)"
    # the note itself moves: its vault paths and names still work, the relative one does not
    moves = {"Sync/Guide.md": "Other/Deep/Guide.md"}
    out = relink(
        text,
        "Sync/Guide.md",
        "Other/Deep/Guide.md",
        LinkIndex(files),
        LinkIndex(moves.get(p, p) for p in files),
        moves,
    )
    assert out == (
        "[[Sync/Version history]] [[Version history]] [[version HISTORY]] [v](Version%20history.md)"
    )


def test_a_name_a_wikilink_cannot_hold_is_reported_not_written() -> None:
    files = ["notes/tips.md", "x.md"]
    moves = {"notes/tips.md": "notes/C# tips.md"}
    result = relink_note(
        "[[tips]] and [t](notes/tips.md)",
        "x.md",
        "x.md",
        LinkIndex(files),
        LinkIndex(["notes/C# tips.md", "x.md"]),
        moves,
    )
    assert result.text == "[[tips]] and [t](notes/tips.md)"
    assert [raw for raw, _ in result.skipped] == ["tips", "notes/tips.md"]
    assert result.rewritten == ()


def test_links_in_code_math_and_comments_are_never_edited() -> None:
    # renaming notes/alpha.md rewrote [[alpha]] in all of these
    text = (
        "Real: [[alpha]]\n\n"
        "    indented code [[alpha]]\n\n"
        "$$\nmath [[alpha]]\n$$\n"
        "<!-- comment [[alpha]] -->\n"
        "`inline [[alpha]]` and $inline [[alpha]]$\n"
        "```\nfenced [[alpha]]\n```\n"
        "%% Obsidian comment [[alpha]] %%\n"
    )
    moves = {"notes/alpha.md": "notes/beta.md"}
    out = relink(
        text,
        "x.md",
        "x.md",
        LinkIndex(["notes/alpha.md", "x.md"]),
        LinkIndex(["notes/beta.md", "x.md"]),
        moves,
    )
    assert out == text.replace("Real: [[alpha]]", "Real: [[beta]]").replace(
        "%% Obsidian comment [[alpha]]", "%% Obsidian comment [[beta]]"
    )


# -- attachments -------------------------------------------------------------------------------

ATTACHMENT_TYPES = [
    "jpg", "png", "svg", "webp", "avif", "gif", "mp3", "ogg", "m4a", "flac", "mp4", "webm",
    "mov", "mkv", "pdf", "canvas", "base", "excalidraw", "docx",
]  # fmt: skip


@pytest.mark.parametrize("ext", ATTACHMENT_TYPES)
def test_renamed_attachments_are_followed_like_notes(ext: str) -> None:
    old, new = f"Attachments/Engelbart.{ext}", f"Attachments/people/Douglas Engelbart.{ext}"
    files = [old, "Notes/Demo.md"]
    text = (
        f"![[Engelbart.{ext}]] ![[Engelbart.{ext}|100x145]] ![[Engelbart.{ext}#page=3]] "
        f"[[Attachments/Engelbart.{ext}|the file]] ![alt](../Attachments/Engelbart.{ext}) "
        f"[f](<../Attachments/Engelbart.{ext}>)"
    )
    out = relink(
        text,
        "Notes/Demo.md",
        "Notes/Demo.md",
        LinkIndex(files),
        LinkIndex([new, "Notes/Demo.md"]),
        {old: new},
    )
    assert out == (
        f"![[Douglas Engelbart.{ext}]] ![[Douglas Engelbart.{ext}|100x145]] "
        f"![[Douglas Engelbart.{ext}#page=3]] [[Douglas Engelbart.{ext}|the file]] "
        f"![alt](Douglas%20Engelbart.{ext}) [f](<Douglas Engelbart.{ext}>)"
    )


def test_a_moved_folder_of_attachments_is_followed() -> None:
    files = ["Attachments/a.png", "Attachments/a.pdf", "Media/a.png", "n.md"]
    moves = {"Attachments/a.png": "Archive/img/a.png", "Attachments/a.pdf": "Archive/img/a.pdf"}
    after = LinkIndex(moves.get(p, p) for p in files)
    text = "![[Attachments/a.png]] ![[a.pdf]] ![[Media/a.png]] ![](Attachments/a.png)"
    out = relink(text, "n.md", "n.md", LinkIndex(files), after, moves)
    # a.png exists twice, so its links need the full path; a.pdf is unique
    assert out == "![[Archive/img/a.png]] ![[a.pdf]] ![[Media/a.png]] ![](Archive/img/a.png)"


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        ("My%20Note.md", "My Note.md"),
        ("Caf%C3%A9.md", "Café.md"),
        ("%E2%82%AC", "€"),
        ("a%2Fb%23c%3F", "a%2Fb%23c%3F"),  # reserved characters stay escaped, as in decodeURI
        ("%E2%82", "%E2%82"),  # a cut sequence: the text as written
        ("%zz.md", "%zz.md"),
        ("100%", "100%"),
        ("%+1", "%+1"),
        ("plain", "plain"),
    ],
)
def test_decode_uri_is_javascripts(raw: str, decoded: str) -> None:
    assert decode_uri(raw) == decoded


_word = st.text(alphabet="abcxyz -", min_size=1, max_size=8).map(str.strip).filter(bool)


@given(
    pieces=st.lists(
        st.tuples(
            st.text(alphabet=st.sampled_from(list("ab \n-.:#")), max_size=12),
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(
                ["[[{}]]", "[[{}#H|x]]", "![[{}.md]]", "[t](<{}.md>)", "[t]({}.md#^b)"]
            ),
        ),
        max_size=6,
    ),
    new_names=st.tuples(_word, _word, _word),
    link_format=st.sampled_from(["shortest", "relative", "absolute"]),
)
def test_relinking_changes_only_link_targets(
    pieces: list[tuple[str, str, str]], new_names: tuple[str, str, str], link_format: str
) -> None:
    files = ["d/a.md", "d/b.md", "e/c.md", "src.md"]
    moves = {f: f"moved/{n}.md" for f, n in zip(files[:3], new_names, strict=True)}
    if len(set(moves.values())) < 3:
        return
    text = "".join(prose + form.format(name) for prose, name, form in pieces)
    result = relink_note(
        text,
        "src.md",
        "src.md",
        LinkIndex(files),
        LinkIndex([*moves.values(), "src.md"]),
        moves,
        link_format,  # type: ignore[arg-type]
    )

    def skeleton(s: str) -> list[str]:
        out, pos = [], 0
        for link in find_links(s):
            out.append(s[pos : link.target_start])
            pos = link.target_end
        return [*out, s[pos:]]

    assert skeleton(result.text) == skeleton(text)
    assert len(find_links(result.text)) == len(find_links(text))
    after = LinkIndex([*moves.values(), "src.md"])
    for link in find_links(result.text):
        res = after.resolve(link.target, "src.md")
        assert res.verdict == "resolved" and res.path in moves.values()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[[Old name]] [[Old name#Part|p]] [[#Part]]",
            "[[New name]] [[New name#Part|p]] [[#Part]]",
        ),
        ("[[old NAME.md#Part]]", "[[New name.md#Part]]"),
        ("[[ Old name ]]", "[[New name]]"),
        ("[s](Old%20name.md#Part)", "[s](New%20name.md#Part)"),
    ],
)
def test_a_renamed_note_follows_its_links_to_itself(text: str, expected: str) -> None:
    moves = {"notes/Old name.md": "notes/New name.md"}
    out = relink(
        text,
        "notes/Old name.md",
        "notes/New name.md",
        LinkIndex(["notes/Old name.md"]),
        LinkIndex(["notes/New name.md"]),
        moves,
    )
    assert out == expected


def test_parentheses_in_a_new_name_never_end_a_markdown_link_early() -> None:
    """Found by bench/links_bench.py on the fixture vault: `Functions.md` renamed to
    `Functions (renamed).md` under `[functions](Functions.md#%60hasTag()%60)` gave a link
    with two groups of parentheses, which no longer read as a link at all."""
    text = "From the root: [functions](Functions.md#%60hasTag()%60) and [plain](Functions.md).\n"
    moves = {"Functions.md": "Functions (renamed).md"}
    before = LinkIndex(["Functions.md", "note.md"])
    after = LinkIndex(["Functions (renamed).md", "note.md"])
    result = relink_note(text, "note.md", "note.md", before, after, moves)
    links = find_links(result.text)
    assert len(links) == 2 and result.skipped == ()
    assert [after.resolve(link.target, "note.md").path for link in links] == [
        "Functions (renamed).md",
        "Functions (renamed).md",
    ]
    assert links[0].anchor == "`hasTag()`"
    assert "[plain](Functions%20(renamed).md)" in result.text  # one group alone reads fine


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("see [[projects/alpha/a00001|Alpha one]] now", "see [[projects/a00001|Alpha one]] now"),
        ("[[people/ana]] and [[ana#Role]]", "[[people/ana]] and [[ana#Role]]"),
        ("[[projects/alpha/plan.md#Risks|the risks]]", "[[projects/plan.md#Risks|the risks]]"),
        ("[[a/b/c/ana#^b1c2]]", "[[a/ana#^b1c2]]"),
        ("[[#Heading/with/slashes]] [[plan#A/B/C]]", "[[#Heading/with/slashes]] [[plan#A/B/C]]"),
        ("![[Attachments/2024/diagram.png]]", "![[Attachments/diagram.png]]"),
        ("| [[projects/alpha/ana\\|Ana]] |", "| [[projects/ana\\|Ana]] |"),
        ("[[../../projects/alpha/ana|a/b/c]]", "[[../../projects/ana|a/b/c]]"),
        ("[[../people/ana]] [[./people/ana]]", "[[../people/ana]] [[./people/ana]]"),
        ("[the plan](projects/alpha/plan.md#Risks/x)", "[the plan](projects/plan.md#Risks/x)"),
        ('[p](../work/people/ana.md "Ana")', '[p](../work/ana.md "Ana")'),
        (
            "[](projects/alpha/plan%20b.md) [y](people/y.md)",
            "[](projects/plan%20b.md) [y](people/y.md)",
        ),
        ("[x](<my folder/sub dir/y z.md>)", "[x](<my folder/y z.md>)"),
        ("![img](assets/2024/x.png)", "![img](assets/x.png)"),
        (
            "[docs](https://example.org/projects/alpha)",
            "[docs](https://example.org/projects/alpha)",
        ),
        ("[[]] and [x](#here) and a/b/c", "[[]] and [x](#here) and a/b/c"),
        ("no links at all", "no links at all"),
    ],
)
def test_unfiled_links_drop_the_folders_below_the_first(text: str, shown: str) -> None:
    """The link stays a link (syntax, its first folder, name, heading, block, alias,
    the embed's "!"): only the folders between the first and the file's name go."""
    assert unfiled_links(text) == shown


@pytest.mark.parametrize(
    ("fmt", "prefix"),
    [("absolute", "projects/alpha/"), ("shortest", ""), ("relative", "../projects/alpha/")],
)
def test_a_folder_rename_leaves_the_unfiled_links_as_they_were(fmt: str, prefix: str) -> None:
    """Issue 27: what a rewritten link shows the model is what it showed before, the
    links written in the vault's link format (a relink that changes a link's format,
    absolute to shortest, changes what the model reads)."""
    index = LinkIndex(["projects/alpha/plan.md", "logs/day.md"])
    text = f"See [[{prefix}plan#Risks]] and [p]({prefix}plan.md), [[plan|P]]."
    moved = LinkIndex(["projects/beta/plan.md", "logs/day.md"])
    moves = {"projects/alpha/plan.md": "projects/beta/plan.md"}
    out = relink_note(text, "logs/day.md", "logs/day.md", index, moved, moves, fmt)
    assert out.text != text or fmt == "shortest"
    assert unfiled_links(out.text) == unfiled_links(text)


@given(st.text(alphabet="ab [](|#^!/.:\n", max_size=60))
def test_unfiled_links_never_add_words_or_characters(text: str) -> None:
    """The chunker counts a chunk's text as written against the window; what is
    embedded (its links without their inner folders) must never count more."""
    shown = unfiled_links(text)
    assert len(shown) <= len(text)
    assert len(shown.split()) <= len(text.split())


def test_relinking_with_the_moved_names_gives_what_resolving_every_link_gives() -> None:
    """``names`` (the moved files' last names) lets a link no moved file is named like be
    left unresolved: on random vaults, moves (renames, folders, a name another file
    has, attachments) and notes of links in every form, the result is the same."""
    import random

    from memvault.core.relink import moved_names

    rng = random.Random(3)
    names = ["plan", "Plan", "ana", "risk", "notes", "a b", "Café"]
    folders = ["", "people", "projects/alpha", "projects/beta", "logs", "People"]
    for _ in range(300):
        files = sorted(
            {
                "/".join(p for p in (rng.choice(folders), rng.choice(names) + ext) if p)
                for ext in (".md",) * 3 + (".png",)
                for _ in range(4)
            }
        )
        moved = rng.sample(files, rng.randint(1, 3))
        moves = {}
        for f in moved:
            folder, _, name = f.rpartition("/")
            if rng.random() < 0.5:
                new = "/".join(p for p in (rng.choice(folders), name) if p)
            else:
                new = "/".join(p for p in (folder, rng.choice(names) + f[f.rfind(".") :]) if p)
            if new not in files and new not in moves.values():
                moves[f] = new
        if not moves:
            continue
        after_files = [moves.get(f, f) for f in files]
        before, after = LinkIndex(files), LinkIndex(after_files)
        forms = []
        for f in [*files, "gone.md"]:
            stem = f[:-3] if f.endswith(".md") else f
            base = stem.rsplit("/", 1)[-1]
            forms += [f"[[{stem}]]", f"[[{base}|x]]", f"[[{base}#h]]", f"![[{f}]]"]
            forms += [f"[t]({f.replace(' ', '%20')})", f"[t](<{f}>)", f"[[../{stem}]]"]
        text = "\n".join(" ".join(rng.sample(forms, min(6, len(forms)))) for _ in range(4))
        source = "logs/n.md"
        fmt = rng.choice(["shortest", "relative", "absolute"])
        full = relink_note(text, source, source, before, after, moves, fmt)
        quick = relink_note(text, source, source, before, after, moves, fmt, moved_names(moves))
        assert quick == full


# -- two files whose paths differ only by case (ext4 holds both; a git pull brings both) ----
CASE_TWINS = ["People/ANA.md", "People/Ana.md", "People/carl.md", "topic.md"]


@pytest.mark.parametrize(
    ("target", "source", "verdict", "path"),
    [
        ("People/ANA", "MEMORY.md", "resolved", "People/ANA.md"),  # the exact spelling
        ("People/Ana", "MEMORY.md", "resolved", "People/Ana.md"),
        ("People/Ana.md", "MEMORY.md", "resolved", "People/Ana.md"),
        ("ANA", "People/carl.md", "resolved", "People/ANA.md"),  # relative, exact
        ("people/ana", "MEMORY.md", "ambiguous", None),  # no exact spelling: not guessed
        ("ana", "topic.md", "ambiguous", None),
        ("People/carl", "MEMORY.md", "resolved", "People/carl.md"),
    ],
)
def test_paths_differing_only_by_case_resolve_by_their_exact_spelling(
    target: str, source: str, verdict: str, path: str | None
) -> None:
    """Obsidian looks a link's path up as written first: ``[[People/ANA]]`` opens
    People/ANA.md even with People/Ana.md beside it. A spelling neither has is ambiguous,
    never whichever sorts last (a MEMORY.md line of one twin led to the other)."""
    built = LinkIndex(CASE_TWINS)
    grown = LinkIndex(["People/Ana.md", "People/carl.md", "topic.md"]).with_files(["People/ANA.md"])
    for idx in (built, grown):
        res = idx.resolve(target, source)
        assert (res.verdict, res.path) == (verdict, path)
        if verdict == "ambiguous":
            assert res.candidates == ("People/ANA.md", "People/Ana.md")


def test_a_file_is_in_the_link_index_only_as_spelt() -> None:
    """Membership is the bookkeeping's (did this file come, is it still there), not
    resolution's: ``People/ana.md`` beside ``People/Ana.md`` is another file, though
    ``[[People/ana]]`` would lead to either. Taken for the one there, a twin that came
    was never added to the link index (its links, and those of its name, kept stale
    verdicts) and one that went was taken for still there."""
    built = LinkIndex(CASE_TWINS)
    grown = LinkIndex(["People/Ana.md", "topic.md"]).with_files(["People/ANA.md"])
    for idx in (built, grown):
        assert "People/ANA.md" in idx and "People/Ana.md" in idx
        assert "People/ana.md" not in idx and "people/Ana.md" not in idx
    alone = LinkIndex(["People/Ana.md"])
    assert "People/ANA.md" not in alone and "People/Ana.md" in alone
    assert "Café.md" in LinkIndex(["Cafe\u0301.md"])  # one name in two Unicode forms


def test_a_path_given_twice_is_one_file_not_its_own_twin() -> None:
    """``link_index_with`` can hand a path the index has already (a save let in during
    a long sync, naming a note that sync has still to index): the link stays resolved,
    not ambiguous between a file and itself."""
    index = LinkIndex(["people/a.md", "people/a.md", "b.md"])
    assert index.resolve("a", "b.md") == Resolution("resolved", "people/a.md")
    assert index.resolve("people/a", "b.md") == Resolution("resolved", "people/a.md")
    assert index.with_files(["people/a.md"]).resolve("a", "b.md").verdict == "resolved"


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_an_ascii_path_is_keyed_as_any_path_is(path: str) -> None:
    """``key``'s ASCII fast path: the NFC form's lower case, the path itself when so."""
    assert key(path) == unicodedata.normalize("NFC", path).lower()
    lowered = path.lower()
    assert key(lowered) is lowered


def test_a_link_index_names_each_file_by_its_last_name() -> None:
    idx = LinkIndex(["People/Ana.md", "Ana.md", "deep/er/Ana.md", "b.md", "Notes/Ωμέγα.md"])
    assert idx.resolve("ana", "b.md").path == "Ana.md"  # the shortest path of the name
    assert idx.resolve("deep/er/ana", "b.md").path == "deep/er/Ana.md"
    assert idx.resolve("ΩΜΈΓΑ", "b.md").path == "Notes/Ωμέγα.md"
    assert idx.resolve("B", "Ana.md").path == "b.md"
