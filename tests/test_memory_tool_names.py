"""Names a person cannot see, given to Claude's memory tool by a hostile or careless agent
(the SDK's classes driving memvault's tool, and MCP's memory_write): bidi controls and
marks ("Trojan Source"), invisible characters inside a name, the joiners words need,
Windows' console and clock devices; how listings and answers show such names; and links
read trimmed as Obsidian trims them (``core.memory_names``, ``engine.memory_names``)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from anyio.from_thread import start_blocking_portal

from helpers import open_vault, write
from memvault.api import Vault
from memvault.core.compose import slug
from memvault.core.wikilinks import LinkIndex, address_parts, find_links, link_name
from memvault.integrations.anthropic import VaultMemoryTool
from memvault.vault.template import init_vault
from test_mcp_server import Server, mcp_session
from test_memory_tool import call, refused


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    root = tmp_path / "notes"
    write(root, "Inbox.md", "# Inbox\n\n- call Ana\n")
    write(root, "People/Ana.md", "# Ana\n\nAna leads the data team.\n")
    with open_vault(root) as v:
        v.sync()
        yield v


def files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def raw_unseen(text: str) -> list[str]:
    """The characters of ``text`` a person cannot see, left raw (written apart from
    memvault's code: controls, format characters, line separators)."""
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def by_hand(text: str) -> str:
    return "".join(f"<U+{ord(c):04X}>" if raw_unseen(c) else c for c in text)


def given_name(said: str) -> str:
    use = re.search(r"name it `([^`]+)`", said)
    assert use is not None, said
    return use.group(1)


@pytest.mark.parametrize(
    ("name", "char", "at"),
    [
        (
            "invoice\u202edm.md",
            "U+202E RIGHT-TO-LEFT OVERRIDE",
            "at its character 8, after `invoice`",
        ),
        ("Plan\u2067B.md", "U+2067 RIGHT-TO-LEFT ISOLATE", "at its character 5, after `Plan`"),
        ("\u202aLead.md", "U+202A LEFT-TO-RIGHT EMBEDDING", "at its character 1"),
        ("notes\u200e.md", "U+200E LEFT-TO-RIGHT MARK", "at its character 6, after `notes`"),
        ("a\u200fb.md", "U+200F RIGHT-TO-LEFT MARK", "at its character 2, after `a`"),
        ("x\u061cy.md", "U+061C ARABIC LETTER MARK", "at its character 2, after `x`"),
    ],
)
def test_a_name_holding_a_bidi_control_is_refused_naming_it_and_where(
    vault: Vault, name: str, char: str, at: str
) -> None:
    """``create /memories/invoice<U+202E>dm.md`` reads as ``invoicemd.md`` backwards in
    Obsidian and a listing; the marks LRM, RLM and ALM (``notes<U+200E>.md``) were made,
    and the override's refusal named neither where it was nor a name to use. Refused in a
    create and a rename, the character named with its place, the name spelt (no raw
    control in the answer), and the name it gives is made."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    path = f"/memories/{name}"
    said = refused(tool, command="create", path=path, file_text="# x\n")
    assert said.startswith(f"Nothing was written: {by_hand(path)} would make `{by_hand(name)}`")
    assert f"the bidi control {char} {at}" in said, said
    assert raw_unseen(said) == [], said
    said = refused(tool, command="rename", old_path="/memories/Inbox.md", new_path=path)
    assert said.startswith(f"Nothing was changed: {by_hand(path)}"), said
    assert files(vault.root) == before
    use = given_name(said)
    call(tool, command="create", path=f"/memories/{use}", file_text="# x\n")
    assert (vault.root / use).read_text(encoding="utf-8") == "# x\n"


@pytest.mark.parametrize(
    "char",
    [
        "\u200b",
        "\u2060",
        "\ufeff",
        "\u00ad",
        "\u180e",
        "\u2061",
        "\u2062",
        "\u2063",
        "\u2064",
        "\U000e0041",
    ],
)
def test_a_name_holding_an_invisible_character_inside_is_refused(vault: Vault, char: str) -> None:
    """``create /memories/People/An<U+200B>a.md`` made a second Ana beside People/Ana.md:
    two names a person cannot tell apart in Obsidian or a listing, MEMORY.md's line for
    each alike. Refused (in a folder's name too), naming the character; the name to use
    is the one a person reads, and says it is there."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    code = f"U+{ord(char):04X} {unicodedata.name(char)}"
    said = refused(tool, command="create", path=f"/memories/People/An{char}a.md", file_text="x\n")
    assert f"an invisible character {code} at its character 3, after `An`" in said, said
    assert "`Ana.md` is there: view or edit it" in said, said
    assert raw_unseen(said) == [], said
    said = refused(tool, command="create", path=f"/memories/Pl{char}an.md", file_text="# x\n")
    assert "a person reads it as `Plan.md`" in said and given_name(said) == "Plan.md", said
    said = refused(tool, command="create", path=f"/memories/Dr{char}afts/x.md", file_text="x\n")
    assert f"would make `Dr{by_hand(char)}afts`" in said and given_name(said) == "Drafts", said
    said = refused(
        tool, command="rename", old_path="/memories/Inbox.md", new_path=f"/memories/In{char}box.md"
    )
    assert said.startswith("Nothing was changed"), said
    assert files(vault.root) == before


@pytest.mark.parametrize(
    ("name", "char", "at"),
    [
        ("Ana\u3164.md", "\u3164", "at its character 4, after `Ana`"),  # HANGUL FILLER
        ("\u3164Ana.md", "\u3164", "at its character 1"),
        ("A\uffa0na.md", "\uffa0", "at its character 2, after `A`"),  # HALFWIDTH HANGUL FILLER
        ("A\u115fna.md", "\u115f", "at its character 2, after `A`"),  # CHOSEONG FILLER
        ("An\u034fa.md", "\u034f", "at its character 3, after `An`"),  # CGJ
        ("An\u17b4a.md", "\u17b4", "at its character 3, after `An`"),  # KHMER VOWEL INHERENT AQ
        ("An\ufe00a.md", "\ufe00", "at its character 3, after `An`"),  # VS1 after a Latin letter
        ("Ana\ufe0f.md", "\ufe0f", "at its character 4, after `Ana`"),  # VS16 after a letter
        ("An\U000e0100a.md", "\U000e0100", "at its character 3, after `An`"),  # VS17
    ],
)
def test_a_default_ignorable_character_drawn_as_nothing_is_refused(
    vault: Vault, name: str, char: str, at: str
) -> None:
    """Unicode's default-ignorable characters that are no format character (Cf) are drawn
    as nothing too: ``create /memories/People/Ana<U+3164>.md`` (a Hangul filler, the
    "invisible name" of chat apps) made a second Ana beside People/Ana.md, and
    ``<U+3164>Ana.md`` was refused as holding a character Obsidian cannot link. Refused
    naming the character and its place, the note there named (no raw character in the
    answer); the name a person reads is made in another folder."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    code = f"U+{ord(char):04X} {unicodedata.name(char)}"
    said = refused(tool, command="create", path=f"/memories/People/{name}", file_text="x\n")
    assert f"an invisible character {code} {at}" in said, said
    assert "`Ana.md` is there: view or edit it" in said, said
    assert f"`{by_hand(name).replace(char, f'<U+{ord(char):04X}>')}`" in said, said
    assert char not in said, said
    said = refused(
        tool, command="rename", old_path="/memories/Inbox.md", new_path=f"/memories/{name}"
    )
    assert f"an invisible character {code} {at}" in said and given_name(said) == "Ana.md", said
    assert files(vault.root) == before
    call(tool, command="create", path="/memories/Ana.md", file_text="# x\n")


@pytest.mark.parametrize(
    "name",
    [
        "\u2615\ufe0f tea.md",  # ☕️: an emoji's variation selector
        "1\ufe0f\u20e3 one.md",  # 1️⃣: a keycap
        "\u4e00\U000e0100.md",  # an ideographic variation sequence
        "\u182d\u180b.md",  # Mongolian: a free variation selector after its letter
        "\u115f\u1161.md",  # an old Hangul syllable: the choseong filler before a vowel
        "\u1100\u1160.md",  # the jungseong filler after a consonant
    ],
)
def test_variation_selectors_and_fillers_where_they_are_seen_are_made(
    vault: Vault, name: str
) -> None:
    tool = VaultMemoryTool(vault)
    call(tool, command="create", path=f"/memories/{name}", file_text="# x\n")
    assert (vault.root / name).read_text(encoding="utf-8") == "# x\n"


@pytest.mark.parametrize(
    "name",
    [
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.md",  # Persian می‌خواهم: ZWNJ between joining letters
        "\u0646\u0627\u0645\u0647\u200c\u0647\u0627.md",  # نامه‌ها: after HEH, a dual-joining letter
        "\u0915\u094d\u200d\u0937.md",  # Devanagari क्‍ष: ZWJ after a virama (a half form)
        "\u0915\u094d\u200c\u0937.md",  # क्‌ष: ZWNJ after a virama (the virama shown)
        "\u0d05\u0d35\u0d28\u0d4d\u200d.md",  # Malayalam അവന്‍: a chillu the old way, ZWJ last
        "\U0001f469\u200d\U0001f4bb notes.md",  # 👩‍💻: an emoji ZWJ sequence
        "\U0001f468\u200d\U0001f469\u200d\U0001f467.md",  # 👨‍👩‍👧
        "\U0001f3f3\ufe0f\u200d\U0001f308.md",  # 🏳️‍🌈: after a variation selector
        "Trip \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f.md",  # a flag
    ],
)
def test_joiners_where_unicode_says_they_join_are_made(vault: Vault, name: str) -> None:
    """The joiners words need stay allowed where UAX #31 (A1, A2, B) and UTS #51 say they
    join: a person's Persian, Hindi or emoji name is made as written."""
    tool = VaultMemoryTool(vault)
    call(tool, command="create", path=f"/memories/{name}", file_text="# x\n")
    assert (vault.root / name).read_text(encoding="utf-8") == "# x\n"
    listing = call(tool, command="view", path="/memories")
    line = next(li for li in listing.splitlines() if f"\t/memories/{name}\t" in li)
    assert "(spelt" not in line, line  # a joiner that joins is seen: not spelt


@pytest.mark.parametrize(
    ("name", "use"),
    [
        ("Lo\u200dpez.md", "Lopez.md"),  # ZWJ between Latin letters: no word needs it
        ("Auf\u200claden.md", "Aufladen.md"),  # ZWNJ between Latin letters (not a joining script)
        (
            "\u0648\u200c\u0627.md",
            "\u0648\u0627.md",
        ),  # ZWNJ after WAW, which joins to no next letter
        ("\U0001f469\u200dx.md", "\U0001f469x.md"),  # ZWJ between an emoji and a letter
    ],
)
def test_joiners_where_they_join_nothing_are_refused(vault: Vault, name: str, use: str) -> None:
    tool = VaultMemoryTool(vault)
    said = refused(tool, command="create", path=f"/memories/{name}", file_text="# x\n")
    assert "an invisible character U+200" in said and given_name(said) == use, said
    call(tool, command="create", path=f"/memories/{use}", file_text="# x\n")


def test_a_name_ending_in_a_space_says_where_its_link_leads_as_obsidian_reads_it(
    vault: Vault,
) -> None:
    """``Pl<U+200B>an .md``: Obsidian reads ``[[Pl<U+200B>an ]]`` trimmed, as
    ``Pl<U+200B>an``, whose ZWSP it keeps: the link leads to ``Pl<U+200B>an.md``. The
    refusal said ``Plan.md`` (the name it gives to use, which the link never names)."""
    tool = VaultMemoryTool(vault)
    said = refused(tool, command="create", path="/memories/Pl\u200ban .md", file_text="x\n")
    assert "[[Pl<U+200B>an ]] (MEMORY.md's line for it, a link to it) leads to " in said, said
    assert "leads to `Pl<U+200B>an.md`, never to it" in said, said
    assert given_name(said) == "Plan.md" and raw_unseen(said) == [], said


@pytest.mark.parametrize(
    ("path", "char"),
    [
        ("\u202e/x.md", "the bidi control U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("\u2067\u2069.md", "the bidi control U+2067 RIGHT-TO-LEFT ISOLATE"),
        ("\u3164/x.md", "an invisible character U+3164 HANGUL FILLER"),
        ("People/\ufe0f.md", "an invisible character U+FE0F VARIATION SELECTOR-16"),
    ],
)
def test_a_name_of_unseen_characters_only_is_refused_asking_for_a_letter(
    vault: Vault, path: str, char: str
) -> None:
    """``create /memories/<U+202E>/x.md`` answered "`` is there: view or edit it" (the
    name left without the override is empty: the vault's root, there), and a note named
    of a filler only "a person reads it as `.md`". Refused asking for a letter or a
    digit, nothing said to be there."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    said = refused(tool, command="create", path=f"/memories/{path}", file_text="x\n")
    assert f"a name holding {char} at its character 1 and no character a person sees; " in said
    assert said.endswith("name it with a letter or a digit in it"), said
    assert "``" not in said and raw_unseen(said) == [], said
    assert files(vault.root) == before


ANIL = "\u0905\u0928\u093f\u0932\u094d"  # अनिल्: its last consonant with a virama


def test_a_zwnj_after_a_virama_before_no_letter_is_refused(vault: Vault) -> None:
    """UAX #31 takes a ZWNJ after a virama for the conjunct it keeps apart; last in a
    name, or before a space, there is none, and a person sees nothing: ``अनिल्<U+200C>/``
    was made beside ``अनिल्/`` (main refused a name ending so), and MCP's slug kept it.
    Refused as a name ending in, or holding, an invisible character; before a letter
    (``क्<U+200C>ष``, ``test_joiners_where_unicode_says_they_join_are_made``) it is made."""
    tool = VaultMemoryTool(vault)
    call(tool, command="create", path=f"/memories/{ANIL}/a.md", file_text="# a\n")
    call(tool, command="create", path=f"/memories/People/{ANIL}.md", file_text="# a\n")
    before = files(vault.root)
    said = refused(tool, command="create", path=f"/memories/{ANIL}\u200c/b.md", file_text="x\n")
    assert "a name ending in an invisible character (U+200C ZERO WIDTH NON-JOINER)" in said, said
    assert f"`{ANIL}` is there: give it" in said, said
    said = refused(tool, command="create", path=f"/memories/{ANIL}\u200c.md", file_text="x\n")
    assert "a note name ending in an invisible character (U+200C" in said, said
    assert given_name(said) == f"{ANIL}.md", said
    said = refused(tool, command="create", path=f"/memories/{ANIL}\u200c x.md", file_text="x\n")
    assert "an invisible character U+200C ZERO WIDTH NON-JOINER at its character 6" in said
    assert given_name(said) == f"{ANIL} x.md", said
    assert files(vault.root) == before
    assert slug(f"{ANIL}\u200c") == ANIL and slug(f"{ANIL}\u200d") == f"{ANIL}\u200d"


@pytest.mark.parametrize(
    ("path", "device"),
    [
        ("CONIN$.md", "CONIN$"),
        ("conout$.md", "conout$"),
        ("Clock$.txt.md", "Clock$"),
        ("CONOUT$/x.md", "CONOUT$"),
    ],
)
def test_the_console_and_clock_device_names_are_refused(
    vault: Vault, path: str, device: str
) -> None:
    """``CONIN$``, ``CONOUT$`` and ``CLOCK$`` are names Windows keeps for devices as
    ``CON`` is (git for Windows refuses ``CONIN$``/``CONOUT$``: a clone fails): they
    were made. Refused like ``CON.md``, the name given made; a person's own is edited."""
    tool = VaultMemoryTool(vault)
    before = files(vault.root)
    said = refused(tool, command="create", path=f"/memories/{path}", file_text="# x\n")
    assert f"a name Windows keeps for a device (`{device}`, with any extension)" in said, said
    assert files(vault.root) == before
    use = re.search(r"name it otherwise \(`([^`]+)`", said)
    assert use is not None, said
    made = "/".join([use.group(1), *path.split("/")[1:]])
    call(tool, command="create", path=f"/memories/{made}", file_text="# x\n")
    write(vault.root, "CONIN$.md", "# c\n\nold\n")
    vault.sync()
    call(tool, command="str_replace", path="/memories/CONIN$.md", old_str="old", new_str="new")
    assert (vault.root / "CONIN$.md").read_text(encoding="utf-8") == "# c\n\nnew\n"


def test_a_persons_names_with_unseen_characters_are_listed_as_the_reference_and_spelt(
    vault: Vault, tmp_path: Path
) -> None:
    """A person's ``Pl<U+200B>an.md``, ``invoice<U+202E>dm.md`` and ``Dr<U+2060>afts/``:
    the SDK's reference lists each path as it is (raw), and memvault's listings did too,
    with nothing to tell an agent or a person reading the transcript that the name holds
    a character no one sees (an override turned the line around). Each is listed as the
    reference lists it (the name the tool takes back: viewed, edited and renamed by it)
    and spelt beside it; a path given without the character names the note there."""
    names = {"Pl\u200ban.md": "# Plan\n\nship\n", "invoice\u202edm.md": "# Invoice\n\nold\n"}
    for name, text in names.items():
        write(vault.root, name, text)
    write(vault.root, "Dr\u2060afts/y.md", "# y\n\ny\n")
    vault.sync()
    reference = BetaLocalFilesystemMemoryTool(str(tmp_path / "ref"))
    for name, text in names.items():
        (tmp_path / "ref" / "memories" / name).write_text(text, encoding="utf-8")
    listed_by_reference = reference.call({"command": "view", "path": "/memories"})
    assert isinstance(listed_by_reference, str)
    tool = VaultMemoryTool(vault)
    top = call(tool, command="view", path="/memories")
    for name in names:
        assert f"\t/memories/{name}\n" in listed_by_reference + "\n"  # (raw: the reference's form)
        line = next(li for li in top.splitlines() if f"\t/memories/{name}\t" in li)
        ends = "\u202c" if "\u202e" in name else ""  # (the override ended: ``test_..._order``)
        assert f"\t{ends}(spelt /memories/{by_hand(name)}: give the path as listed)" in line, line
    line = next(li for li in top.splitlines() if "/memories/Dr\u2060afts/\t" in li)
    assert "(spelt /memories/Dr<U+2060>afts/: give the path as listed)" in line, line
    folder = call(tool, command="view", path="/memories/Dr\u2060afts")
    assert "/memories/Dr\u2060afts/y.md\t(spelt /memories/Dr<U+2060>afts/y.md" in folder, folder
    # the raw path listed is the name the tool takes back
    assert "ship" in call(tool, command="view", path="/memories/Pl\u200ban.md")
    call(
        tool,
        command="str_replace",
        path="/memories/invoice\u202edm.md",
        old_str="old",
        new_str="new",
    )
    assert (vault.root / "invoice\u202edm.md").read_text(encoding="utf-8") == "# Invoice\n\nnew\n"
    call(
        tool,
        command="rename",
        old_path="/memories/invoice\u202edm.md",
        new_path="/memories/invoice.md",
    )
    assert (vault.root / "invoice.md").exists() and not (vault.root / "invoice\u202edm.md").exists()
    # an agent whose tokens dropped the ZWSP is told which note is there, spelt
    said = refused(tool, command="view", path="/memories/Plan.md")
    assert said == (
        "The path /memories/Plan.md does not exist. Please provide a valid path. "
        "(/memories/Pl\u200ban.md is there, spelt /memories/Pl<U+200B>an.md: its name holds a "
        "character a person cannot see or tell from a space, which a path gives as the name is)"
    )
    said = refused(tool, command="view", path="/memories/Drafts/y.md")
    assert "(/memories/Dr\u2060afts/y.md is there, spelt /memories/Dr<U+2060>afts/y.md" in said


def still_open(text: str) -> int:
    """How many bidi isolates, embeddings and overrides are open at the end of ``text``
    (UAX #9's X1-X8, written apart from memvault's code): an override open reverses the
    text after it, to the end of its line."""
    stack: list[str] = []
    for c in text:
        if c in "\u202a\u202b\u202d\u202e":
            stack.append("embedding")
        elif c in "\u2066\u2067\u2068":
            stack.append("isolate")
        elif c == "\u202c" and stack and stack[-1] == "embedding":
            stack.pop()
        elif c == "\u2069" and "isolate" in stack:
            while stack.pop() != "isolate":
                pass
        elif c in "\n\u2029":
            stack.clear()
    return len(stack)


@pytest.mark.parametrize(
    "name",
    [
        "invoice\u202edm.md",  # RLO: "invoice(spelt ...)" read backwards
        "a\u202bb\u202dc\u202ed.md",  # RLE, LRO, RLO open at once
        "x\u2067y\u202ez.md",  # an override inside an isolate
        "p\u202eq\u2066r.md",  # an isolate inside an override
        "Dr\u202eafts/x.md",  # a folder's
    ],
)
def test_a_listing_and_an_answer_spell_a_name_in_its_order_past_its_overrides(
    vault: Vault, name: str
) -> None:
    """A person's ``invoice<U+202E>dm.md``: the override runs to the end of the line, so
    the listing's ``(spelt /memories/invoice<U+202E>dm.md: ...)`` beside the name, and
    the note's summary after it, showed backwards to a person reading the transcript
    (``(detsil sa htap eht evig :dm.md<E202+U>eciovni/seiromem/ tleps)``, as fribidi lays
    it out), as did the answer naming it to an agent that gave ``invoicedm.md``. The
    spelling is read after every override and isolate of the name ended; the path stays
    as the reference lists it, the name the tool takes back."""
    write(vault.root, name, "# Invoice\n\nold\n")
    vault.sync()
    tool = VaultMemoryTool(vault)
    listing = call(tool, command="view", path="/memories")
    if "/" in name:
        listing = call(tool, command="view", path=f"/memories/{name.split('/')[0]}")
    line = next(li for li in listing.splitlines() if f"\t/memories/{name}\t" in li)
    assert still_open(line[: line.index("(spelt ")]) == 0, ascii(line)
    assert f"(spelt /memories/{by_hand(name)}: give the path as listed)" in line, ascii(line)
    said = refused(tool, command="view", path=f"/memories/{raw_unseen_dropped(name)}")
    assert f"(/memories/{name} " in said, ascii(said)
    assert still_open(said[: said.index(", spelt ")]) == 0, ascii(said)
    assert f"spelt /memories/{by_hand(name)}:" in said, ascii(said)
    assert "old" in call(tool, command="view", path=f"/memories/{name}")


def raw_unseen_dropped(text: str) -> str:
    return "".join(c for c in text if not raw_unseen(c))


@pytest.mark.parametrize(
    ("target", "there"),
    [("Zed\x1f", "Zed\x1f.md"), ("Zed\x1c", "Zed\x1c.md"), ("Zed\x85", "Zed\x85.md")],
)
def test_a_link_is_trimmed_as_obsidian_trims_it_not_as_python_strips(
    target: str, there: str
) -> None:
    """JavaScript's ``trim`` (Obsidian's) keeps U+001C-U+001F and U+0085, which Python's
    ``str.strip`` takes off: ``LinkIndex.resolve("Zed<U+001F>")`` led to Zed.md, while
    Obsidian leads ``[[Zed<U+001F>]]`` to the file of that name. Resolved, named and read
    as an address as the parser (``find_links``) reads the link."""
    index = LinkIndex(["Zed.md", there])
    (link,) = find_links(f"see [[{target}]]")
    assert link.target == target
    assert index.resolve(target, "Inbox.md").path == there
    assert index.resolve(f" {target}\ufeff", "Inbox.md").path == there  # (JS trims these)
    assert link_name(target) == link_name(there) != link_name("Zed.md")
    assert address_parts(target) == (target, None)


PERSIAN = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # می‌خواهم


def test_mcp_writes_no_device_name_nor_a_name_with_unseen_characters(tmp_path: Path) -> None:
    """Through MCP's memory_write a hostile title ``CONIN$`` made ``people/conin$.md``,
    a name Windows keeps for a device (the slug knew CON and its kin only). Titles with
    a bidi mark, a zero-width space or a joiner where it joins nothing make names without
    them; Persian's ZWNJ is kept."""
    vault = tmp_path / "vault"
    init_vault(vault, example=True)
    with (
        (tmp_path / "err.log").open("w", encoding="utf-8") as errlog,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(mcp_session(vault, errlog)) as session,
    ):
        server = Server(portal, session, vault)
        made = {
            title: server.ok("memory_write", category="people", title=title, body="x")["path"]
            for title in [
                "CONIN$",
                "Clock$",
                "a\u200eb",
                "Pl\u200ban",
                "Lo\u200dpez",
                "Dr\u3164afts",
                PERSIAN,
            ]
        }
    assert made == {
        "CONIN$": "people/conin$-note.md",
        "Clock$": "people/clock$-note.md",
        "a\u200eb": "people/ab.md",
        "Pl\u200ban": "people/plan.md",
        "Lo\u200dpez": "people/lopez.md",
        "Dr\u3164afts": "people/drafts.md",
        PERSIAN: f"people/{PERSIAN}.md",
    }


def test_the_next_note_a_long_note_names_is_one_the_tool_creates(tmp_path: Path) -> None:
    """A long note's answer says where to write what comes next (``{stem}-2.md``): of a
    person's note holding an unseen character (Pl<U+200B>an.md, Re<U+202E>port/), the
    name it gave kept it, and the create the answer asked for was refused ("a name
    holding an invisible character")."""
    root = tmp_path / "notes"
    write(root, "Pl\u200ban.md", "# Plan\n\nshort\n")
    write(root, "Re\u202eport/Q\u200b3.md", "# Q3\n\nshort\n")
    with open_vault(root, overrides={"vault": {"max_note_bytes": 20_000}}) as v:
        tool = VaultMemoryTool(v)
        for path, want in [
            ("/memories/Pl\u200ban.md", "/memories/Plan-2.md"),
            ("/memories/Re\u202eport/Q\u200b3.md", "/memories/Re\u202eport/Q3-2.md"),
        ]:
            long = "x" * 6_000 + "\n"  # past a quarter of max_note_bytes: long
            said = call(tool, command="insert", path=path, insert_line=3, insert_text=long)
            named = re.search(r"by period: (.+?)\), and keep", said)
            assert named is not None, said
            assert named.group(1) == want
            made = call(tool, command="create", path=named.group(1), file_text="# Next\n")
            assert made == f"File created successfully at: {want}"


# -- no-break spaces: names a person reads as spaced ---------------------------------------------


@pytest.mark.parametrize("space", ["\u00a0", "\u202f"])
def test_a_folder_named_with_a_no_break_space_has_no_look_alike_twin(
    vault: Vault, space: str
) -> None:
    """A name pasted from a web page or a French text holds a no-break space where a
    person (and a model, typing) reads a space. Before: `Ana Lee/` was made beside
    `Ana<U+00A0>Lee/`, two folders no one tells apart, and `view /memories/Ana Lee/x.md`
    said only "does not exist" of the note that was there."""
    tool = VaultMemoryTool(vault)
    root = vault.root
    odd = f"Ana{space}Lee"
    call(tool, command="create", path=f"/memories/{odd}/x.md", file_text="# X\n")
    call(tool, command="create", path=f"/memories/People/Bo{space}Li.md", file_text="# Bo\n")
    before = files(root)
    said = refused(tool, command="create", path="/memories/Ana Lee/y.md", file_text="y\n")
    spelling = f"/memories/Ana<U+{ord(space):04X}>Lee"
    assert said == (
        f"Nothing was changed: /memories/Ana Lee/y.md is /memories/{odd} in this vault's "
        f"spelling (spelt {spelling}: a folder a person cannot tell apart from it would be "
        f"made beside it); give /memories/{odd}"
    )
    call(tool, command="create", path="/memories/Elsewhere/z.md", file_text="z\n")
    said = refused(tool, command="rename", old_path="/memories/Elsewhere",
                   new_path="/memories/Ana Lee")  # fmt: skip
    assert said.startswith(f"Nothing was changed: /memories/Ana Lee is /memories/{odd} in")
    assert files(root) == sorted([*before, "Elsewhere", "Elsewhere/z.md"])
    for command in ("view", "str_replace"):
        extra = {"old_str": "X", "new_str": "Y"} if command == "str_replace" else {}
        said = refused(tool, command=command, path="/memories/Ana Lee/x.md", **extra)
        assert said == (
            "The path /memories/Ana Lee/x.md does not exist. Please provide a valid path. "
            f"(/memories/{odd}/x.md is there, spelt {spelling}/x.md: its name holds a "
            "character a person cannot see or tell from a space, which a path gives as the "
            "name is)"
        )
    said = refused(tool, command="view", path="/memories/People/Bo Li.md")
    assert f"(/memories/People/Bo{space}Li.md is there, spelt /memories/People/Bo<U+" in said
    # the name as given works, and its own folder takes notes
    call(tool, command="create", path=f"/memories/{odd}/y.md", file_text="y\n")
    assert (root / odd / "y.md").read_text(encoding="utf-8") == "y\n"
    assert not (root / "Ana Lee").exists()


def test_a_listings_words_spell_the_names_they_hold(tmp_path: Path) -> None:
    """A listing gives each path as it is (the name the tool takes back, in its path
    column and its commands) with its spelling beside it; the names in its words were
    left raw: the folders past a page (`… and 4 more folders (...): Sub<U+200B>10/`), a
    folder's name in "Notes 1-40 of 45 in …" and "No notes in …", the folders other files
    not notes are in, a `.MD` file's twin note, and the example rename (now only of a
    name a person reads right)."""
    root = tmp_path / "notes"
    z = "\u200b"
    for i in range(14):
        write(root, f"Zo{z}ne/Sub{z}{i:02}/n.md", "# t\n")
    for i in range(45):
        write(root, f"Zo{z}ne/note{i}.md", "# t\n")
    for i in range(8):
        write(root, f"F{z}old/Fa{z}ct{i}.MD", "x\n")
    write(root, f"Ta{z}ken.MD", "x\n")
    write(root, f"Ta{z}ken.md", "# t\n")
    raw_paths = sorted(
        {"/memories/" + p.relative_to(root).as_posix() for p in root.rglob("*")}, key=len
    )
    with open_vault(root) as v:
        v.sync()
        views = {
            p: v.memory_tool({"command": "view", "path": p})
            for p in ("/memories", f"/memories/Zo{z}ne", f"/memories/F{z}old")
        }
    for path, out in views.items():
        for line in out.split("\n"):
            if re.match(r" *\d+\t", line):
                continue  # MEMORY.md's own lines, as the file holds them
            words = line
            for raw in reversed(raw_paths):  # the paths as they are: the names to give back
                words = words.replace(raw, "")
            assert not raw_unseen(words.replace("\t", " ")), (path, line)
    assert (
        ": Sub<U+200B>10/, Sub<U+200B>11/, Sub<U+200B>12/, Sub<U+200B>13/"
        in views[f"/memories/Zo{z}ne"]
    )
    assert "Notes 1-40 of 45 in /memories/Zo<U+200B>ne, newest first" in views[f"/memories/Zo{z}ne"]
    assert "No notes in /memories/F<U+200B>old." in views[f"/memories/F{z}old"]
    assert "… and 4 more in /memories/F<U+200B>old/" in views["/memories"]
    assert (
        "(Ta<U+200B>ken.md is another note: rename it another name, Ta<U+200B>ken 2.md)"
        in (views["/memories"])
    )


def test_a_folder_note_said_to_list_every_note_is_named_as_the_tool_takes_it(
    tmp_path: Path,
) -> None:
    """A folder's page past its 40 notes ends "<the folder note> lists every one": a path
    to view. It was given only spelt (``Zo<U+200B>ne.md``), which the tool answers "does
    not exist"; now as it is, its spelling beside it."""
    root = tmp_path / "notes"
    z = "\u200b"
    for i in range(45):
        write(root, f"Zo{z}ne/note{i}.md", f"# t{i}\n")
    write(root, f"Zo{z}ne/Zo{z}ne.md", "# Zone\n\n[[note1]]\n")
    with open_vault(root) as v:
        v.sync()
        page = v.memory_tool({"command": "view", "path": f"/memories/Zo{z}ne"})
        last = page.split("\n")[-1]
        named = f"/memories/Zo{z}ne/Zo{z}ne.md"
        assert last.endswith(
            f"; {named} (spelt /memories/Zo<U+200B>ne/Zo<U+200B>ne.md) lists every one)"
        ), last
        assert v.memory_tool({"command": "view", "path": named}).startswith("Here's the content")
