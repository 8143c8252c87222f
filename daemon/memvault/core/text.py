"""Text helpers shared by the core: decoding, line splitting, hashing, where a
text may be cut (``grapheme_cut``).

Only ``\\n`` and ``\\r\\n`` end a line (never a lone ``\\r`` or the Unicode
separators ``str.splitlines`` honours), so line numbers agree with editors and
with git, and a file's own line endings can be kept byte for byte.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Decoded:
    """A file's text with its byte-order mark set aside."""

    text: str
    bom: bool


class NotText(ValueError):
    """The bytes are not UTF-8 text (binary, or another encoding)."""


# a git LFS pointer (git-lfs docs/spec.md: at most 1024 bytes, LF line ends, the version
# first, the other keys sorted): what git keeps of a file stored in LFS, left in its
# place by a clone without git-lfs or before `git lfs pull`; the note's text is elsewhere
_LFS_POINTER = re.compile(
    rb"version https://(?:git-lfs|hawser)\.github\.com/spec/v1\n"
    rb"(?:ext-[^\n]*\n)*oid sha256:[0-9a-f]{64}\nsize [0-9]+\n?"
)
LFS_POINTER = "a git LFS pointer, not the note: its text is in git LFS (git lfs pull brings it)"


def decode(data: bytes) -> Decoded:
    """Decode UTF-8 bytes, setting a BOM aside; raise NotText for anything else (a git
    LFS pointer too: the text it stands for is not in the file)."""
    if b"\x00" in data[:8192]:
        raise NotText("binary file (NUL bytes)")
    if len(data) <= 1024 and _LFS_POINTER.fullmatch(data):
        raise NotText(LFS_POINTER)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText(f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    if text.startswith(BOM):
        return Decoded(text[1:], True)
    return Decoded(text, False)


def encode(decoded: Decoded) -> bytes:
    return ((BOM if decoded.bom else "") + decoded.text).encode("utf-8")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def split_lines(text: str) -> list[str]:
    """Lines without their endings (``\\n`` or ``\\r\\n``)."""
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def line_count(text: str) -> int:
    """The lines of ``text`` as an editor numbers them (a last line without its ending
    counts): ``len(lines_with_ends(text))``, without the list."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def lines_with_ends(text: str) -> list[str]:
    """Lines with their endings kept, so ``"".join(result) == text``."""
    out: list[str] = []
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            if start < len(text):
                out.append(text[start:])
            return out
        out.append(text[start : end + 1])
        start = end + 1


def newline_of(text: str) -> str:
    """The file's dominant line ending, for lines the system adds."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


_ZWJ = "\u200d"
_SPACING = frozenset((_ZWJ, "\u200c", "\u0e33", "\u0eb3"))
_GRAPHEME_WALK = 32  # a cluster longer than this (stacked marks, hostile) is cut anyway


def _extends(ch: str) -> bool:
    """Whether ``ch`` belongs to the character before it (UAX #29's Extend, SpacingMark,
    ZWJ, and Hangul's vowel and final jamo)."""
    code = ord(ch)
    return (
        unicodedata.category(ch)[0] == "M"  # combining marks, variation selectors
        or ch in _SPACING  # ZWJ, ZWNJ, Thai and Lao SARA AM (Lo, but a SpacingMark)
        or 0x1F3FB <= code <= 0x1F3FF  # an emoji's skin tone
        or 0xE0020 <= code <= 0xE007F  # the tags of a subdivision flag
        or 0x1160 <= code <= 0x11FF  # Hangul vowel and final jamo (NFD Korean)
        or 0xD7B0 <= code <= 0xD7FF
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _boundary(text: str, i: int) -> bool:
    ch, before = text[i], text[i - 1]
    if _extends(ch) or before == _ZWJ or (before == "\r" and ch == "\n"):
        return False
    if 0x1100 <= ord(before) <= 0x115F and (
        0x1100 <= ord(ch) <= 0x11FF or 0xAC00 <= ord(ch) <= 0xD7A3
    ):
        return False  # a leading jamo and what it leads
    if _regional(ch) and _regional(before):
        n = 0
        while i - 1 - n >= 0 and _regional(text[i - 1 - n]):
            n += 1
        return n % 2 == 0  # a flag is a pair of indicators
    return True


def grapheme_cut(text: str, at: int) -> int:
    """The last place at or before ``at`` where ``text`` can be cut without cutting a
    character a reader sees in half (a letter and its marks, an emoji joined by ZWJ or
    with its skin tone, a flag, a Hangul syllable in jamo, CRLF): ``at`` itself when it
    is one, or when none is within ``_GRAPHEME_WALK`` characters before it."""
    if at <= 0 or at >= len(text):
        return at
    for i in range(at, max(0, at - _GRAPHEME_WALK), -1):
        if _boundary(text, i):
            return i
    return 0 if at <= _GRAPHEME_WALK else at


# Unicode's bidirectional embeddings, overrides and isolates (LRE RLE PDF LRO RLO, LRI
# RLI FSI PDI): invisible, they show the text after them in another order than it is
# written ("Trojan Source", CVE-2021-42574): a name holding one reads as another name
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def bidi_control(text: str) -> str | None:
    """The first bidi control character (``BIDI_CONTROLS``) in ``text``, if any."""
    found = BIDI_CONTROLS.search(text)
    return found.group() if found else None


# JavaScript's White_Space and line ends (what ``trim()`` takes off and ``\s`` matches):
# no-break spaces and U+FEFF too, which Python's ``str.strip`` keeps. Obsidian reads a
# wikilink's name trimmed so: ``[[Plan ]]`` and ``[[Plan<U+FEFF>]]`` are ``[[Plan]]``
JS_SPACES = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """``text`` as JavaScript's ``String.prototype.trim`` leaves it."""
    return text.strip(JS_SPACES)


def trim_proof(link: str, path: str) -> str:
    """``link`` (written to lead to the file at ``path``), or, when Obsidian would read it
    as another name, a link that leads there. Obsidian trims a wikilink's name (as
    JavaScript's ``trim`` does: no-break spaces and U+FEFF too) and looks up what is
    left, so ``Plan .md``'s ``[[Plan ]]`` is ``[[Plan]]`` (Obsidian's own link to it is
    so: Vinzent03/find-unlinked-files#21); its ``.md`` kept, ``[[Plan .md]]``, ends in
    no space and names it (``getLinkpathDest`` looks a name up with its extension
    first); `` Lead.md``'s path from the root, ``[[/ Lead.md]]``, starts with none. So
    ``new.md.md``'s ``.md`` is kept: ``[[new.md]]`` leads there only as Obsidian's second
    look-up (``link_name`` and ``LinkIndex.resolve`` take it as ``new``'s link)."""
    if path.lower().endswith(".md.md") and not link.lower().endswith(".md.md"):
        link += path[-3:]
    if js_trim(link) == link:
        return link
    return path if js_trim(path) == path else "/" + path


SHORT_PATH_KEEP = 60  # characters kept at each end of a path too long to print whole


def short_path(path: str, keep: int = SHORT_PATH_KEEP) -> str:
    """``path`` as a person reads it in a line of output: whole, or, past about two
    terminal lines (a note skipped in a folder tree deeper than the system allows: 4,000
    characters filled the screen), its first and last ``keep`` characters and how long it
    is — ``deep/dddd…dddd/note.md (4,035 characters)``. Machines read the whole path:
    JSON and the index keep it."""
    if len(path) <= 2 * keep + 40:
        return path
    head = grapheme_cut(path, keep)
    tail = len(path) - keep
    while tail < len(path) and grapheme_cut(path, tail) != tail:  # a whole character
        tail += 1
    return f"{path[:head]}…{path[tail:]} ({len(path):,} characters)"
