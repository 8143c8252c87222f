"""Which names the memory tool may give a new note or folder, and how a name is shown
(the pure part; ``engine.memory_names`` reads the disk around it). A new name holds no
character Obsidian cannot link or Windows cannot hold (``unportable``), no space or
invisible character at its ends (``kept_name``), no bidi control anywhere (``BIDI``:
"Trojan Source", CVE-2021-42574: ``invoice<U+202E>dm.md`` reads as another name) and no
invisible format character inside it (``hidden_at``) but the joiners words need, where
Unicode's rules say they join (``joins``: UAX #31's contexts, and UTS #51's emoji ZWJ
sequences). A name a person gave already is read, edited and renamed as any other. Texts
show a name's unseen characters as ``<U+200B>`` (``spelt``), a listing beside the name.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from memvault.core.text import JS_SPACES

# Unicode's bidi controls: the embeddings, overrides and isolates (``text.BIDI_CONTROLS``)
# and the marks LRM, RLM and ALM, which move the neutral characters around them (the
# ``.`` of ``.md``): in a name, each shows it as another than it is written
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_BIDI = re.compile(f"[{BIDI}]")
_JOINERS = "\u200c\u200d"  # ZWNJ, ZWJ: part of how Persian, the Indic scripts, emoji spell
# the format characters that are drawn (Unicode's prepended concatenation marks: the
# Arabic number sign U+0600...): seen, as a letter is
_DRAWN = frozenset(
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
)
_TAGS = ("\U000e0020", "\U000e007f")  # the tags ending a flag (🏴 + gbsct + U+E007F)
_FLAG = "\U0001f3f4"


def hidden_at(name: str) -> int | None:
    """Where ``name`` holds a character a person cannot see and no word needs, if it does:
    a bidi control (``BIDI``), or a format character (Unicode Cf: U+200B, U+2060, U+FEFF,
    U+00AD, U+180E, U+2061-U+2064...) but a joiner where it joins (``joins``), the tags of
    a flag (🏴 England's) and the marks that are drawn (``_DRAWN``); or another
    default-ignorable character drawn as nothing there (``ignorable``: U+3164, CGJ)."""
    return next((i for i in range(len(name)) if _hidden(name, i)), None)


def _hidden(name: str, i: int) -> bool:
    """Whether ``name[i]`` is one ``hidden_at`` finds (and ``unseen`` spells)."""
    c = name[i]
    if c in _JOINERS:
        return not joins(name, i)
    return (
        bool(_BIDI.match(c))
        or (unicodedata.category(c) == "Cf" and not _seen(name, i))
        or ignorable(name, i)
    )


# Unicode's default-ignorable characters that are no format character (U+034F CGJ,
# Khmer's inherent vowels, the Hangul fillers: DerivedCoreProperties.txt's
# Default_Ignorable_Code_Point): drawn as nothing, ``Ana<U+3164>.md`` beside ``Ana.md``
_BLANK = frozenset("\u034f\u17b4\u17b5\u3164\uffa0")
_VARIATION = re.compile("[\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]")


def ignorable(text: str, i: int) -> bool:
    """Whether ``text[i]``, a default-ignorable character not of category Cf, is drawn as
    nothing where it stands: CGJ, Khmer's inherent vowels, the Hangul fillers (but the
    choseong filler before a vowel, the jungseong filler after a consonant: an old
    Hangul syllable), a variation selector where it varies nothing (first, after a
    space, a mark, a control, a cased letter or a path's ``/``: no variation sequence of Unicode's or
    of UTS #51's has such a base; after an emoji, a CJK ideograph, a digit it is seen)."""
    c = text[i]
    if c in _BLANK:
        return True
    if c == "\u115f":
        nxt = text[i + 1] if i + 1 < len(text) else ""
        return not ("\u1160" <= nxt <= "\u11a7" or "\ud7b0" <= nxt <= "\ud7c6")
    if c == "\u1160":
        prev = text[i - 1] if i else ""
        return not ("\u1100" <= prev <= "\u115f" or "\ua960" <= prev <= "\ua97c")
    if not _VARIATION.match(c):
        return False
    return i == 0 or text[i - 1] == "/" or unicodedata.category(text[i - 1]) in _NO_BASE


# what no variation sequence takes for its base: a cased letter, a mark (another
# selector), a control or format character, white space
_NO_BASE = frozenset(("Lu", "Ll", "Lt", "Mn", "Mc", "Me", "Cc", "Cf", "Co", "Cn", "Zs", "Zl", "Zp"))


def _seen(name: str, i: int) -> bool:
    c = name[i]
    if c in _DRAWN:
        return True
    if not _TAGS[0] <= c <= _TAGS[1]:
        return False
    while i > 0 and _TAGS[0] <= name[i - 1] <= _TAGS[1]:
        i -= 1
    return i > 0 and name[i - 1] == _FLAG


def joins(name: str, i: int) -> bool:
    """Whether the joiner at ``name[i]`` (U+200C ZWNJ, U+200D ZWJ) stands where Unicode
    says it joins: UAX #31 section 2.3 (A1: a ZWNJ between a letter joining to the next and
    one joining to the one before, transparent marks between, ``$LJ $T* ZWNJ $T* $RJ``, as
    Persian's می‌خواهم; A2 and B: either joiner after a virama, ``$L $M* $V $M1* ZWJ``,
    as Devanagari's half forms, a ZWNJ there only before a letter, whose conjunct it
    keeps apart: last, or before a space, it changes nothing a person sees, and
    ``अनिल्<U+200C>/`` was made beside ``अनिल्/``) or UTS #51 (a ZWJ between two emoji: 👩‍💻). Python has no
    Joining_Type table: a letter's is read from its Arabic presentation forms (an initial
    or medial form: it joins to the next; a final or medial one: to the one before), and a
    letter of another joining script without them (Syriac, N'Ko, Mongolian...) is taken as
    dual-joining; an emoji is a symbol (So) after its modifiers and variation selectors."""
    c = name[i]
    before = i - 1
    while before >= 0 and _transparent(name[before]):
        before -= 1
    if _after_virama(name, i):  # (a ZWNJ before no letter keeps apart no conjunct: unseen)
        return c == "\u200d" or (i + 1 < len(name) and unicodedata.category(name[i + 1])[0] == "L")
    if c == "\u200c":
        after = i + 1
        while after < len(name) and _transparent(name[after]):
            after += 1
        return (
            before >= 0
            and after < len(name)
            and "L" in _joining(name[before])
            and "R" in _joining(name[after])
        )
    j = i - 1
    while j >= 0 and (name[j] == "\ufe0f" or "\U0001f3fb" <= name[j] <= "\U0001f3ff"):
        j -= 1
    return j >= 0 and i + 1 < len(name) and _emoji(name[j]) and _emoji(name[i + 1])


def _transparent(c: str) -> bool:
    return unicodedata.category(c) in ("Mn", "Me") or (
        c not in _JOINERS and unicodedata.category(c) == "Cf"
    )


def _after_virama(name: str, i: int) -> bool:
    """``$L $M* $V $M1*`` ends at ``name[i - 1]`` (UAX #31: $V a virama, ccc 9; $M1 a
    mark of a nonzero class; $M a nonspacing mark; $L a letter)."""
    j = i - 1
    while (
        j >= 0
        and unicodedata.combining(name[j]) not in (0, 9)
        and unicodedata.category(name[j]) == "Mn"
    ):
        j -= 1
    if j < 0 or unicodedata.combining(name[j]) != 9:
        return False
    j -= 1
    while j >= 0 and unicodedata.category(name[j]) == "Mn":
        j -= 1
    return j >= 0 and unicodedata.category(name[j]).startswith("L")


_JOINING_SCRIPTS = (
    "ARABIC",
    "SYRIAC",
    "NKO",
    "MONGOLIAN",
    "MANDAIC",
    "MANICHAEAN",
    "PSALTER PAHLAVI",
    "PHAGS-PA",
    "ADLAM",
    "HANIFI ROHINGYA",
    "SOGDIAN",
    "OLD UYGHUR",
    "CHORASMIAN",
)


def _joining(c: str) -> str:
    """A letter's Joining_Type as the sides it joins on: "LR" dual, "L" to the next,
    "R" to the one before, "" none (``joins``)."""
    if not unicodedata.category(c).startswith("L"):
        return ""
    forms = _presentation_forms().get(c)
    if forms is not None:
        return ("L" if forms & {"initial", "medial"} else "") + (
            "R" if forms & {"final", "medial"} else ""
        )
    return "LR" if unicodedata.name(c, "").startswith(_JOINING_SCRIPTS) else ""


@cache
def _presentation_forms() -> dict[str, set[str]]:
    """Each Arabic letter's presentation forms (U+FB50-U+FDFF, U+FE70-U+FEFF) by kind."""
    forms: dict[str, set[str]] = {}
    for cp in [*range(0xFB50, 0xFE00), *range(0xFE70, 0xFF00)]:
        kind, _, base = unicodedata.decomposition(chr(cp)).partition(" ")
        if kind in ("<initial>", "<medial>", "<final>", "<isolated>") and " " not in base:
            forms.setdefault(chr(int(base, 16)), set()).add(kind[1:-1])
    return forms


def _emoji(c: str) -> bool:
    return unicodedata.category(c) == "So"


def spelt(text: str) -> str:
    """``text`` with each character a person cannot see (``unseen``) written ``<U+200B>``:
    how a text shows a name (a refusal, a listing's note beside the name)."""
    return "".join(f"<U+{ord(c):04X}>" if unseen(text, i) else c for i, c in enumerate(text))


def closed(text: str) -> str:
    """What ends the isolates, embeddings and overrides ``text`` opens: a U+2069 (PDI) for
    each isolate, then a U+202C (PDF) for each embedding or override (one with none open
    does nothing: UAX #9's X6a, X7), put after a name holding them (in the column after a
    listing's path) so that what follows on its line reads in its order: an override
    (``invoice<U+202E>dm.md``) runs to the end of its line, and showed the spelling
    beside the name, there to be read, backwards, as its summary."""
    isolates = sum(text.count(c) for c in "\u2066\u2067\u2068")
    embeddings = sum(text.count(c) for c in "\u202a\u202b\u202d\u202e")
    return "\u2069" * isolates + "\u202c" * embeddings


def unseen(text: str, i: int) -> bool:
    """Whether ``text[i]`` is not seen as what it is: a control character, a line or
    paragraph separator, white space other than the space (a no-break space reads as
    one), a bidi control, a format character not seen (``hidden_at``'s)."""
    c = text[i]
    if c == " ":
        return False
    if c in JS_SPACES or c in "\x85\u2028\u2029" or unicodedata.category(c) == "Cc":
        return True
    return _hidden(text, i)


def shows_unseen(text: str) -> bool:
    """Whether ``text`` holds a character ``spelt`` writes out."""
    if text.isascii():
        return any(ord(c) < 32 or c == "\x7f" for c in text)
    return any(unseen(text, i) for i in range(len(text)))


def suggested(name: str, *, note: bool = True) -> str:
    """``name`` without what a new name may not hold that a person cannot see: its bidi
    controls and hidden format characters (``hidden_at``), and the spaces and invisible
    characters at its ends (``kept_name``): the name a person reads."""
    while (i := hidden_at(name)) is not None:
        name = name[:i] + name[i + 1 :]
    return kept_name(name, note=note)


# a new note's or folder's name holds none: Obsidian cannot link # | ^ [ ]; Obsidian,
# Windows (a git clone of the vault there) and macOS' Finder refuse : * ? " < > |; a
# control character (a line break: U+0085, U+2028 and U+2029 too, as str.splitlines and
# memory_order.UNWRITABLE take them) breaks every listing of it; a bidi control
# (``BIDI``) shows it as another name
_UNPORTABLE = re.compile(r'[#|^\[\]:*?"<>\x00-\x1f\x7f-\x9f\u2028\u2029]|' + _BIDI.pattern)


# the names Windows keeps for its devices, with any extension (``CON.md``, ``aux/``): git
# there cannot check one out ("invalid path"), so a clone of the vault fails whole
_DEVICE = re.compile(
    r"(?i)(?:con|prn|aux|nul|conin\$|conout\$|clock\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(?=\.|$)"
)


def looks(name: str, *, note: bool = True) -> str:
    """``name`` as a person reads it (``suggested``), each space of another kind (a
    no-break space U+00A0, U+202F, an en space...: ``text.JS_SPACES``) read as a space, in
    NFC: ``Ana<U+00A0>Lee`` looks as ``Ana Lee`` does, and a model copying it types the
    space."""
    seen = suggested(name, note=note)
    return unicodedata.normalize("NFC", "".join(" " if c in JS_SPACES else c for c in seen))


def unportable(name: str, *, note: bool = True) -> str | None:
    """The first character of ``name`` a new note or folder may not hold, if any (or the
    device name Windows keeps that it begins with, ``CON``: ``_DEVICE``): or its
    last, a space or a dot, which Windows drops (``people /``, ``people./`` beside
    ``people/``: one folder to a clone there, two a person cannot tell apart here); or one
    at either end of it (of a ``note``'s name, of what precedes ``.md``) that a person
    cannot see or Obsidian's links trim (``invisible``: `` projects/`` beside
    ``projects/``, ``Plan .md``, ``Plan<U+FEFF>.md``: ``untrimmed_note``); or one inside
    it a person cannot see (``hidden_at``: ``Pl<U+200B>an.md`` beside ``Plan.md``)."""
    found = _UNPORTABLE.search(name) or _DEVICE.match(name)
    if found:
        return found.group()
    if note and untrimmed_note(name):
        stem = name[:-3]
        return stem[-1] if _trimmed_last(stem) else stem[0]
    if name.endswith((" ", ".")):
        return name[-1]
    end = name[-1] if _trimmed_last(name) else name[0] if name and invisible(name[0]) else None
    i = hidden_at(name) if end is None else None
    return end if i is None else name[i]


def invisible(char: str) -> bool:
    """White space as JavaScript's ``trim`` takes it (``text.JS_SPACES``: no-break
    spaces and U+FEFF too), or a format character (Unicode Cf: U+200B, U+2060, U+00AD; not
    the tag characters that end a flag emoji, 🏴 England's, which a person sees):
    at a name's start or end, a person reads the name without it, and a link to it by
    its name (which Obsidian trims so) leads elsewhere."""
    if "\U000e0020" <= char <= "\U000e007f":  # (the tags ending a flag: 🏴 + gbsct + U+E007F)
        return False
    return char in JS_SPACES or unicodedata.category(char) == "Cf"


def kept_name(name: str, *, note: bool = True) -> str:
    """``name`` without the ``invisible`` characters at its ends (a ``note``'s: of what
    precedes its ``.md``; a joiner that joins kept, ``_trimmed_last``): the name a person
    reads."""
    stem = name[:-3] if note and name.endswith(".md") else name
    start, end = 0, len(stem)
    while start < end and invisible(stem[start]):
        start += 1
    while end > start and _trimmed_last(stem[:end]):
        end -= 1
    return stem[start:end] + name[len(stem) :]


def _trimmed_last(name: str) -> bool:
    """Whether the last character of ``name`` is ``invisible``, and no joiner that joins
    there (``joins``: after a virama, Malayalam's ``ന്<U+200D>``, a chillu written the
    old way, which a person sees)."""
    if not name or not invisible(name[-1]):
        return False
    return not (name[-1] in _JOINERS and joins(name, len(name) - 1))


def untrimmed_note(name: str) -> bool:
    """Whether a note's name has a space (any white space, U+FEFF) or an invisible format
    character at the start or the end of what precedes ``.md`` (``foo .md``, `` foo.md``,
    ``  .md``): Obsidian reads a link's name trimmed (``[[foo ]]`` is ``[[foo]]``, as
    ``wikilinks.find_links`` reads it), so no link by its name leads to it (MEMORY.md's
    is its path, ``text.trim_proof``), and a person reads it as another name
    (Windows keeps the name: only a name's own last spaces it drops)."""
    return name.endswith(".md") and kept_name(name) != name


def unportable_refusal(start: str, path: str, name: str, char: str, *, taken: bool = False) -> str:
    """Why a new note or folder is not named ``name`` (``char``: ``unportable``'s), with
    the name to use (``taken``: a note of the trimmed name is there, to view or edit).
    Its unseen characters are written out (``spelt``); the name it gives may be made."""
    n, p = spelt(name), spelt(path)
    i = hidden_at(name)
    if _BIDI.match(char) or (
        i is not None
        and name[i] == char
        and (not invisible(char) or (0 < i < len(name) - 1 and not untrimmed_note(name)))
    ):
        return _hidden_refusal(start, p, name, name.index(char), taken=taken)
    if len(char) == 1 and _UNPORTABLE.match(char):  # (a line break: no space at an end)
        return _unlinkable(start, p, n, char)
    if len(char) > 1:  # (a device name: ``unportable``)
        return (
            f"{start}: {p} would make `{n}`, a name Windows keeps for a device "
            f"(`{char}`, with any extension): git cannot check it out there, and a clone of "
            f"the vault on Windows fails; name it otherwise (`{_portable(name)}`, say)"
        )
    if untrimmed_note(name) and invisible(char):
        kept = suggested(name)[:-3]
        if not kept:
            return (
                f"{start}: {p} would make `{n}`, a note named of spaces only: no link "
                "can name it (Obsidian reads a link's name trimmed); name it with a letter "
                "or a digit in it"
            )
        at = "ending in" if name[:-3].endswith(char) else "beginning with"
        use = (
            f"`{kept}.md` is there: view or edit it, or give another name"
            if taken
            else f"name it `{_portable(kept)}.md` (or another name"
        )
        why = (
            f"Obsidian reads a link's name trimmed, so [[{n[:-3]}]] (MEMORY.md's line for "
            f"it, a link to it) leads to `{spelt(kept_name(name))}`, never to it"
            if char in JS_SPACES
            else f"a person reads it as `{kept}.md` (in MEMORY.md, a listing, a link to it)"
        )
        return (
            f"{start}: {p} would make `{n}`, a note name {at} {_said(char)}: {why}; "
            f"{use} without it" + ("" if taken else ")")
        )
    if invisible(char) and not (char == " " and name.endswith(char)):
        kept = suggested(name, note=False)
        at = "ending in" if name.endswith(char) else "beginning with"
        there = (
            f"`{kept}` is there: give it, or another name"
            if taken
            else f"name it `{_portable(kept)}` (or another name without it)"
        )
        return (
            f"{start}: {p} would make `{n}`, a name {at} {_said(char)}: it reads as "
            f"`{kept}`, a name a person cannot tell from it in a listing; {there}"
            if kept
            else f"{start}: {p} would make `{n}`, a name of spaces only; name it with "
            "a letter or a digit in it"
        )
    if char in " ." and name.endswith(char):
        kept = name.rstrip(" .")
        if not kept:  # (" ", "...": nothing left to read it as, nor for Windows to keep)
            return (
                f"{start}: {p} would make `{n}`, a name of spaces and dots only: "
                "Windows (a clone of the vault there) cannot hold it; name it with a letter "
                "or a digit in it"
            )
        return (
            f"{start}: {p} would make `{n}`, a name ending in "
            f"{'a space' if char == ' ' else 'a dot'}: it reads as `{kept}`, and Windows "
            "(a clone of the vault there) drops its trailing spaces and dots, making it "
            f"that name; name it `{_portable(kept)}` (or another name not ending so)"
        )
    return _unlinkable(start, p, n, char)


def _unlinkable(start: str, p: str, n: str, char: str) -> str:
    return (
        f"{start}: {p} would make `{n}`, a name holding {char!r}: Obsidian cannot "
        "link a name holding # | ^ [ ], and Obsidian and Windows (a clone of the vault "
        'there) cannot hold one holding : * ? " < > | or a line break; name it without them'
    )


def _hidden_refusal(start: str, p: str, name: str, i: int, *, taken: bool) -> str:
    """``unportable_refusal`` of a name holding a bidi control or an invisible character
    (``hidden_at``) at ``name[i]``: the character, where, and a name to use."""
    char, n = name[i], spelt(name)
    at = f"at its character {i + 1}" + (f", after `{spelt(name[:i])}`" if i else "")
    note = name.endswith(".md")
    if not suggested(name, note=note).removesuffix(".md" if note else ""):
        what = "the bidi control" if _BIDI.match(char) else "an invisible character"
        return (
            f"{start}: {p} would make `{n}`, a name holding {what} {_named(char)} {at} and "
            "no character a person sees; name it with a letter or a digit in it"
        )
    use = _portable(suggested(name, note=note))
    if taken:
        there = f"`{use}` is there: view or edit it, or give another name"
    elif use.removesuffix(".md") and unportable(use, note=note) is None:
        there = f"name it `{use}` (or another name without it)"
    else:
        there = "name it with a letter or a digit, without it"
    if _BIDI.match(char):
        return (
            f"{start}: {p} would make `{n}`, a name holding the bidi control {_named(char)} "
            f"{at}, which shows the name in another order than it is written (a name read "
            f"as another); {there}"
        )
    return (
        f"{start}: {p} would make `{n}`, a name holding an invisible character "
        f"{_named(char)} {at}: a person reads it as `{suggested(name, note=note)}`, a name "
        f"they cannot tell from it (in a listing, a link to it); {there}"
    )


def _named(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}{' ' + name if name else ''}"


def _portable(name: str) -> str:
    """``name`` as a refusal gives it to use: as it is, or, when Windows keeps it for a
    device (``CON .md`` trimmed is ``CON.md``), ``-notes`` after the device's name (its
    extension kept): a name the next command may make."""
    device = _DEVICE.match(name)
    return name if device is None else f"{name[: device.end()]}-notes{name[device.end() :]}"


def _said(char: str) -> str:
    """A character ``invisible`` names as a person can find it."""
    if char == " ":
        return "a space"
    name = unicodedata.name(char, "")
    kind = "a space" if char in JS_SPACES else "an invisible character"
    return f"{kind} (U+{ord(char):04X}{' ' + name if name else ''})"


__all__ = [
    "BIDI",
    "closed",
    "hidden_at",
    "ignorable",
    "invisible",
    "joins",
    "kept_name",
    "shows_unseen",
    "spelt",
    "suggested",
    "unportable",
    "unportable_refusal",
    "untrimmed_note",
]
