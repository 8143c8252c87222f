"""A folder note two clones made apart, as git's line-by-line merge leaves it.

Each clone's daemon made the same folder note (``people/people.md``) before either
pulled; committed on both, the pull merges two added files, with no version in common,
line by line (the vault's ``.gitattributes``: ``merge=union``). git keeps the lines at
the top that both have once, then each side's others one after the other: one side's
count line, begin marker and list, then the other's, and the end marker they share.
memvault read the second begin marker as a section begun inside the first and left the
note untouched ("section 'folder' begins inside 'folder'"), both counts and both lists
in it. ``folded`` makes the lines from the first begin marker to the last end marker the
one list again (written afresh by the update); a line there none of memvault's (a
marker, an entry line, a count line, a blank one) is a person's, kept above the list.
"""

from __future__ import annotations

import re

from memvault.core.memory_md import FOLDER_SECTION, entry_target

_MARKER = re.compile(rf"\s*<!--\s*memvault:(begin|end)\s+{FOLDER_SECTION}\s*-->\s*")
# memvault's count line (memory_md.count_line), whatever the count and label
_COUNT = re.compile(
    r"All \d+ [^\n]+? in this folder\. memvault keeps the list below; text outside it is yours\."
)


def folded(text: str) -> str:
    """``text`` with a folder section begun twice before its end (two clones' lists
    merged line by line) made one section; any other text as it is."""
    lines = text.splitlines(keepends=True)
    marks = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _MARKER.fullmatch(line))]
    begins = [i for i, kind in marks if kind == "begin"]
    ends = [i for i, kind in marks if kind == "end"]
    if len(begins) < 2 or not ends or ends[0] < begins[1]:
        return text  # one section, or two whole ones (a person's copy: left as it is)
    first, last = begins[0], ends[-1]
    theirs = [
        line
        for line in lines[first + 1 : last]
        if line.strip()
        and not _MARKER.fullmatch(line)
        and entry_target(line.rstrip("\r\n")) is None
        and not _COUNT.fullmatch(line.rstrip("\r\n"))
    ]
    return "".join([*lines[:first], *theirs, lines[first], lines[last], *lines[last + 1 :]])


__all__ = ["folded"]
