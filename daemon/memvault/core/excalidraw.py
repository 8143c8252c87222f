"""A drawing of the Obsidian Excalidraw plugin, kept as a note (``.excalidraw.md``).

The plugin writes each drawing as markdown: frontmatter with ``excalidraw-plugin:``,
then a line telling a reader to switch views (``==⚠  Switch to EXCALIDRAW VIEW in the
MORE OPTIONS menu of this document. ⚠==``, in newer versions with more after it), its
own headings (``# Excalidraw Data``, ``## Text Elements``, ...), the drawing's text
elements each with a block id, and the drawing itself as JSON inside ``%%``. Obsidian
shows the drawing under its file name. The banner is no description of the drawing
and the plugin's headings are no title of it: every drawing would be described by the
banner in MEMORY.md and titled "Excalidraw Data". Nor are the banner and the plugin's
list of the images a drawing embeds (``## Embedded Files``: ``<file id>: [[image]]``,
the id 40 hex digits) words of the drawing to search: every drawing held the banner's
chunk, a hit for "view", "menu", "settings", "data"..., and a chunk of ids; a LaTeX
formula or a link of the drawing's elements stays. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memvault.core.text import split_lines

PLUGIN_KEY = "excalidraw-plugin"
# the headings the plugin lays down in every drawing (older versions: "# Text Elements")
SCAFFOLD = frozenset(
    {
        "Excalidraw Data",
        "Text Elements",
        "Element Links",
        "Embedded Files",
        "Embedded files",
        "Drawing",
    }
)


def is_drawing(frontmatter: Mapping[str, Any]) -> bool:
    """Whether a note's frontmatter says the Excalidraw plugin owns it."""
    return PLUGIN_KEY in frontmatter


# an image the drawing embeds, as the plugin lists it: its file id (a sha1), a link
_EMBEDDED_FILE = re.compile(r"[0-9a-f]{40}: !?\[")


def banner_lines(text: str, first: int) -> frozenset[int]:
    """The 1-based numbers of the plugin's switch-views lines (from line ``first`` on)."""
    return frozenset(
        n
        for n, line in enumerate(split_lines(text)[first - 1 :], start=first)
        if line.startswith("==⚠") and "EXCALIDRAW VIEW" in line
    )


def plugin_lines(text: str, first: int) -> frozenset[int]:
    """The 1-based numbers of the lines the plugin writes for itself, not for a reader
    (from line ``first`` on): the switch-views banner and the embedded files' ids."""
    return banner_lines(text, first) | frozenset(
        n
        for n, line in enumerate(split_lines(text)[first - 1 :], start=first)
        if _EMBEDDED_FILE.match(line)
    )


# the plugin's sections of a drawing's own words: its text elements, its elements' links
_WORDS = frozenset({"## Text Elements", "# Text Elements", "## Element Links"})
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")


def drawing_words(text: str, first: int) -> frozenset[int]:
    """The 1-based numbers of the lines of a drawing's text elements and element links
    (from line ``first`` on), up to the plugin's next heading or a ``%%``. The plugin
    (2.x) keeps its whole data section inside a ``%%`` comment (``%%`` then ``# Excalidraw
    Data``): a hint to ``notes``, never indexed, the drawing's words with it."""
    out: set[int] = set()
    inside = False
    for n, line in enumerate(split_lines(text)[first - 1 :], start=first):
        bare = line.strip()
        if _HEADING.match(bare) or bare.startswith("%%") or bare.endswith("%%"):
            inside = bare in _WORDS
        elif inside and bare:
            out.add(n)
    return frozenset(out)
