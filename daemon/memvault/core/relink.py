"""Rewrite links after a rename the way Obsidian does (finding and resolving them:
``core/wikilinks.py``).

After a rename (``relink``), a link is rewritten only when it no longer leads
where it led, and then in the vault's ``newLinkFormat`` (``link_text``:
Obsidian's ``fileToLinktext``), in the author's style: angle brackets stay,
``%20`` only where the link was percent-encoded, ``.md`` as written, the
anchor and alias untouched.
"""

from __future__ import annotations

import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from memvault.core.wikilinks import (
    Link,
    LinkFormat,
    LinkIndex,
    Resolution,
    decode_uri,
    file_link_name,
    find_links,
    link_name,
    link_safe,
)


def rewrite_links(text: str, replace: Callable[[Link], str | None]) -> str:
    """Replace link targets; every byte outside the replaced targets is kept.

    ``replace`` returns the new raw target (for markdown links: already
    encoded as it should be written) or None to leave the link alone.
    """
    pieces: list[str] = []
    pos = 0
    for link in find_links(text):
        new = replace(link)
        if new is None or new == text[link.target_start : link.target_end]:
            continue
        pieces.append(text[pos : link.target_start])
        pieces.append(new)
        pos = link.target_end
    if not pieces:
        return text
    pieces.append(text[pos:])
    return "".join(pieces)


_CONTROL = re.compile(r"[\\\x00-\x1f\x7f %]")
_ESCAPED = re.compile(r"%[0-9A-Fa-f]{2}")


def encode_markdown_target(target: str, *, angle: bool, like: str = "") -> str:
    """How a markdown link's target is written, in the style of the link it replaces.

    In angle brackets the path stays literal (spaces and all). Otherwise it is
    encoded the way Obsidian encodes it (spaces, backslashes, control
    characters and ``%``: ``My%20note.md``, ``Café.md``), or fully
    percent-encoded when the old target ``like`` escaped more than spaces
    (``Caf%C3%A9.md``). Parentheses that would end the link early are escaped
    either way. ``decode_uri`` of the result is ``target``.
    """
    if angle:
        encoded = _ESCAPED.sub(lambda m: "%25" + m.group(0)[1:], target)
        return encoded.replace("<", "%3C").replace(">", "%3E").replace("\n", "%0A")
    if any(m.group(0) != "%20" for m in _ESCAPED.finditer(like)):
        return urllib.parse.quote(target, safe="/!$&'()*+,;=:?@~")
    encoded = _CONTROL.sub(lambda m: urllib.parse.quote(m.group(0)), target)
    encoded = encoded.replace("<", "%3C").replace(">", "%3E")
    if encoded.count("(") != encoded.count(")") or "((" in encoded or "))" in encoded:
        encoded = encoded.replace("(", "%28").replace(")", "%29")
    return encoded


@dataclass(frozen=True, slots=True)
class Relinked:
    """One note's text after ``relink_note``, and what changed in it."""

    text: str
    rewritten: tuple[tuple[str, str], ...] = ()  # (old raw target, new raw target)
    skipped: tuple[tuple[str, str], ...] = ()  # (raw target, why it was left broken)
    # every link of the text given, and each rewrite as (target_start, target_end, new raw
    # target) in that text's offsets: what the indexer needs to carry a relinked note's
    # rows over instead of parsing it again (core/carry.py)
    links: tuple[Link, ...] = ()
    spans: tuple[tuple[int, int, str], ...] = ()


def _one_note(old: Resolution, moves: Mapping[str, str]) -> str | None:
    """The file an ambiguous link led to when all its candidates are one note: a name it
    had only between two looks beside the one it was indexed under, both moving to where
    it is now (``Linker.relink``'s ``passed``: a folder renamed, then the note in it)."""
    if old.verdict != "ambiguous" or len(old.candidates) < 2:
        return None
    ends = {moves.get(c, c) for c in old.candidates}
    return old.candidates[0] if len(ends) == 1 and old.candidates[0] in moves else None


def relink_note(
    text: str,
    source_old: str,
    source_new: str,
    before: LinkIndex,
    after: LinkIndex,
    moves: Mapping[str, str],
    link_format: LinkFormat = "shortest",
    names: frozenset[str] | None = None,
) -> Relinked:
    """Re-target the links of one note after files (notes or attachments) moved.

    ``moves`` maps old vault paths to new ones, for every file that moved —
    notes, images, PDFs, canvases, whole folders of them; ``before``/``after``
    index the vault's files before and after. A link is rewritten only when it
    led to a file before the moves and no longer leads to that file (or where
    it went) after them — a link whose form still works is kept as written,
    as Obsidian does. The new target is ``after.link_text`` in ``link_format``
    (the vault's ``newLinkFormat``), checked to resolve back to the file (else
    the full vault path), written in the style of the old one: ``.md`` kept or
    left out as written, angle brackets kept, percent-encoding as before. The
    anchor, alias and every other byte stay as they are.

    ``names``: ``moved_names(moves)``, made once for many notes. A link of a note that
    did not move can only lead elsewhere after the moves when its last name is one of
    a moved file's (every way of resolving ends on the file's name): the others are
    not resolved twice.
    """
    rewritten: list[tuple[str, str]] = []
    skipped: list[tuple[str, str]] = []
    found: list[Link] = []
    spans: list[tuple[int, int, str]] = []

    still = names is not None and source_old == source_new

    def replace(link: Link) -> str | None:
        found.append(link)
        if not link.target:
            return None  # [[#heading]] points into the note itself
        if still and names is not None and link_name(link.target) not in names:
            return None  # no moved file has its name: it leads where it led
        old = before.resolve(link.target, source_old)
        was = old.path if old.verdict == "resolved" else _one_note(old, moves)
        if was is None:
            return None
        expected = moves.get(was, was)
        new = after.resolve(link.target, source_new)
        if (new.verdict == "resolved" and new.path == expected) or expected not in after:
            return None
        raw = text[link.target_start : link.target_end]
        target = _new_target(link, expected, source_new, after, link_format)
        if link.kind == "wiki" and not link_safe(target):
            skipped.append((raw, f"{expected}: a wikilink cannot hold any of # | ^ [ ]"))
            return None
        if link.kind == "markdown":
            encoded = encode_markdown_target(target, angle=link.angle, like=raw)
            if not link.angle and not _still_one_link(text, link, encoded):
                # balanced parentheses in the name, with more in the anchor or title after
                # it (``Functions%20(renamed).md#%60hasTag()%60``), end the link early
                encoded = encoded.replace("(", "%28").replace(")", "%29")
            back = unicodedata.normalize("NFC", decode_uri(encoded))
            if "#" in target or back != unicodedata.normalize("NFC", target):
                skipped.append((raw, f"{expected}: a markdown link cannot lead to this name"))
                return None
            target = encoded
        if target != raw:
            rewritten.append((raw, target))
            spans.append((link.target_start, link.target_end, target))
        return target

    out = rewrite_links(text, replace)
    return Relinked(out, tuple(rewritten), tuple(skipped), tuple(found), tuple(spans))


def moved_names(moves: Mapping[str, str]) -> frozenset[str]:
    """The last names (``.md`` dropped, compared as Obsidian compares) of every moved
    file, before and after: what ``relink_note``'s ``names`` takes."""
    return frozenset(file_link_name(p) for pair in moves.items() for p in pair)


def _still_one_link(text: str, link: Link, raw: str) -> bool:
    """Whether ``link`` with its target bytes replaced by ``raw`` still reads as one
    whole link (the rest of it — anchor, title, closing parenthesis — unchanged)."""
    new = text[link.start : link.target_start] + raw + text[link.target_end : link.end]
    found = find_links(new)
    return len(found) == 1 and found[0].start == 0 and found[0].end == len(new)


def _new_target(
    link: Link, path: str, source: str, index: LinkIndex, link_format: LinkFormat
) -> str:
    """The decoded target a re-targeted link gets (before any encoding)."""
    is_note = path.endswith(".md")  # a NOTE.MD is a file: its .MD kept as spelt
    # a link may name a note, or a NOTE.MD, without its extension ([[Plan]]): it stays so
    keep_md = link.target.lower().endswith(".md") or not path.lower().endswith(".md")
    target = index.link_text(path, source, link_format, omit_md=True)
    if is_note and keep_md:
        target += ".md"
    elif not is_note and not keep_md:
        target = target[:-3]
    if index.resolve(target, source) != Resolution("resolved", path):
        # Obsidian's own form would not lead back here (a relative path that a
        # same-named file at the root shadows): write the full vault path
        target = path if keep_md else path[:-3]
    return target
