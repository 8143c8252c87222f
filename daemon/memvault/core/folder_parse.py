"""What the index reads of a folder note memvault keeps: everything but its listing.

A folder note lists every note of its folder (``core.memory_md.render_folder_note``):
100,000 lines for a folder of 100,000 notes, rewritten at each save there. Its
listing is derived from the catalogue, so indexing it again (parsing every line,
storing a link row per note) only made each save cost the folder's size.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memvault.core.conflicts import conflict_warning, find_conflicts
from memvault.core.memory_md import FOLDER_SECTION, folder_listing_span
from memvault.core.notes import Note, parse_note

_BEGIN = re.compile(
    rf"^[ \t]*<!--[ \t]*memvault:begin[ \t]+{FOLDER_SECTION}[ \t]*-->[ \t]*\r?$", re.MULTILINE
)


def parse_outside_listing(path: str, text: str, cut_off: bool = False) -> Note:
    """A folder note memvault keeps, parsed without the lines of its listing: what the
    index keeps of it (its title, properties, a person's text and links around the list).
    The listing is the catalogue's own (a line per note of the folder, links that always
    resolve); parsing and storing its links made every save cost the folder's size.
    Lines and offsets are those of ``text``. No listing found: the whole note.

    ``cut_off``: ``text`` is the head of a bigger file (``vault.max_note_bytes``): a
    listing whose end marker is past the cut runs to the end of ``text``."""
    span = folder_listing_span(text)
    if span is None and cut_off and (begin := _BEGIN.search(text)) is not None:
        nl_at = text.find("\n", begin.end())
        span = (len(text) if nl_at < 0 else nl_at + 1, len(text))
    if span is None:
        return parse_note(path, text)
    start, end = span
    first = text.count("\n", 0, start) + 1  # the listing's first line
    held, cut = text.count("\n", start, end), end - start

    def line(n: int) -> int:
        return n + held if n >= first else n

    def at(offset: int) -> int:
        return offset + cut if offset >= start else offset

    outside = text[:start] + text[end:]
    note = parse_note(path, outside)
    # a merge conflict is looked for in the whole file: git's markers may well be in
    # the listing (two machines each listing a new note), and its lines are the file's
    seen = conflict_warning(find_conflicts(outside))
    whole = conflict_warning(find_conflicts(text))
    warnings = tuple(w for w in note.warnings if w != seen) + ((whole,) if whole else ())
    return replace(
        note,
        warnings=warnings,
        links=tuple(
            replace(
                link,
                line=line(link.line),
                start=at(link.start),
                end=at(link.end),
                target_start=at(link.target_start),
                target_end=at(link.target_end),
            )
            for link in note.links
        ),
        headings=tuple(replace(h, line=line(h.line)) for h in note.headings),
        hints=frozenset(line(n) for n in note.hints),
        outline=None,  # anchors into a folder note are read from the file (linkcheck)
    )


__all__ = ["parse_outside_listing"]
