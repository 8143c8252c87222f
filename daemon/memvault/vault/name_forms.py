"""One name in two Unicode forms: which of the files a scan indexes, and how the other
is named when it is skipped.

A disk that keeps names as bytes (ext4) holds ``Café.md`` with ``é`` as one code point
(NFC) and ``Cafe\\u0301.md`` with an ``e`` and a combining acute accent (NFD) as two
files. memvault keys every path by its NFC form (links are compared in it), so one
name is one note and only one of the files is indexed:

- the one whose path is spelt in NFC: what a keyboard types on Linux and Windows, what
  memvault's own writes name, and the spelling of its key, so the indexed file and its
  key are the same string;
- neither being NFC (two decomposed spellings of one name), the first of them in
  code-point order.

Either way the choice is the same whatever order the disk lists the files in. The
other is skipped, and its reason shows both paths with their combining marks escaped
(``Cafe\\u0301.md``), since on a terminal the two names look alike. What Obsidian does
with such a pair is not known here; renaming one of the files has both indexed.
"""

from __future__ import annotations

import unicodedata


def form(path: str) -> str:
    """The Unicode form ``path`` is spelt in: NFC, NFD, or mixed (neither)."""
    if unicodedata.is_normalized("NFC", path):
        return "NFC"
    return "NFD" if unicodedata.is_normalized("NFD", path) else "mixed"


def shown(path: str) -> str:
    """``path`` with each combining mark escaped (``Cafe\\u0301.md``): two spellings of
    one name told apart on a terminal."""
    return "".join(
        f"\\u{ord(c):04x}" if unicodedata.category(c).startswith("M") else c for c in path
    )


def preferred(key: str, path: str, other: str) -> bool:
    """Whether a scan indexes ``path`` rather than ``other``, two files whose paths are
    both ``key`` in NFC: the NFC spelling, else the first in code-point order."""
    return (path != key, path) < (other != key, other)


def twin_reason(skipped: str, kept: str) -> str:
    """Why ``skipped`` is not indexed: ``kept`` is the same name in another form."""
    return (
        f"same name as {shown(kept)} ({form(kept)}, indexed) in another Unicode form: "
        f"this file is {shown(skipped)} ({form(skipped)}); of one name in two forms "
        "memvault indexes the NFC spelling, else the first in code-point order (rename "
        "one file to have both indexed)"
    )


__all__ = ["form", "preferred", "shown", "twin_reason"]
