"""The link check: one link -> a problem or None (pure; the engine supplies the files).

A link is a problem when its target does not resolve (``unresolved``), resolves
to several files (``ambiguous``), resolves only through a frontmatter alias
(``alias``, which Obsidian does not follow), or resolves to a note in which its
``#heading`` / ``#^block`` anchor finds nothing (``anchor``, matched as Obsidian
matches it: ``core/anchors.py``). Anchors on links to other files
(``image.png#outline``, ``file.pdf#page=3``) are not headings and are not checked.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from memvault.core.anchors import Outline, anchor_matches
from memvault.core.results import LinkProblem
from memvault.core.wikilinks import LINK_FORMATS, LinkFormat, LinkIndex


def link_problem(
    source: str,
    line: int,
    target: str,
    anchor: str | None,
    index: LinkIndex,
    outline_of: Callable[[str], Outline | None],
) -> LinkProblem | None:
    """What is wrong with one link written in ``source`` (None: nothing).

    ``outline_of(path)`` gives the outline (``anchors.outline``) of a note the
    link resolves to, or None when it cannot be read (the anchor is then not
    judged).
    """
    res = index.resolve(target, source)
    if res.verdict != "resolved" or res.path is None:
        return LinkProblem(source, line, target, res.verdict, res.candidates, anchor)
    if anchor is None or not res.path.lower().endswith(".md"):
        return None
    outline = outline_of(res.path)
    if outline is None or anchor_matches(outline, anchor):
        return None
    return LinkProblem(source, line, target, "anchor", (res.path,), anchor)


def link_format(app_json: str | None) -> LinkFormat:
    """The vault's ``newLinkFormat`` from the text of ``.obsidian/app.json``.

    ``shortest`` (Obsidian's default) when the file is missing, is not JSON, or
    names no format Obsidian knows.
    """
    try:
        value = json.loads(app_json).get("newLinkFormat") if app_json else None
    except (ValueError, AttributeError):
        return "shortest"
    for fmt in LINK_FORMATS:
        if value == fmt:
            return fmt
    return "shortest"
