"""The vault's link problems, true to the disk now: ``links check`` and ``status``.

Notes the index holds unchanged are judged from the links table; only notes changed
since the last sync (and, for ``links check``, the notes with a problem, for its column
and text) are read, so the answer never depends on whether a sync ran.

Which stored links are judged again follows the change, not the vault. A stored verdict
is true to the files the index holds (``link_verdicts`` keeps it so after each sync), so
an unchanged note's link can differ from it only when it was not ``resolved``, has an
anchor (the target's headings decide that), or names a file that came or went
between the index and the disk. Those links alone are judged; the rest are as stored.
Every link is judged when the stored verdicts may be stale: a sync under way or one
that died between its files and their links (meta ``links_following``), the next
sync due to resolve them all (``links_resolve``), an index no memvault that keeps them
wrote (``links_trusted``: ``link_verdicts.trusted``). At 10,000 notes a ``status`` judged
90,000 links, all resolved, to find none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable

from memvault.core.anchors import Outline, outline
from memvault.core.changes import suspects
from memvault.core.linkcheck import link_problem
from memvault.core.notes import Note, parse_note
from memvault.core.results import LinkProblem
from memvault.core.text import NotText
from memvault.core.wikilinks import LinkIndex, file_link_name
from memvault.engine import link_verdicts as verdicts
from memvault.engine import racy_rows
from memvault.errors import NoteNotFound, UnsafePath
from memvault.index.rows import LinkRow
from memvault.index.store import Store
from memvault.vault.files import Scan, VaultFS


def link_problems(
    fs: VaultFS,
    store: Store,
    include_alias: bool = True,
    scan: Scan | None = None,
    *,
    as_written: bool = True,
    every_link: bool = False,
    unread: Collection[str] = (),
) -> list[LinkProblem]:
    """Unresolved, ambiguous and alias-only links and anchors that find nothing, each
    with its line, column and text as written. ``scan``: the vault's scan taken just now
    by the caller (``status`` shares its one), else one is taken. ``as_written=False``
    (``status``, which counts them): an unchanged note's problems come from its links
    table rows, without the column and the text, and it is not read (a vault of 20,000
    notes that each link a note not yet written had every note parsed on every
    ``status``). ``every_link``: judge every stored link (what the stored verdicts
    save is checked against it in the tests). ``unread``: changed notes not read, their
    links not judged (``status`` while a sync has thousands of notes to index; it says
    so)."""
    scan = scan if scan is not None else fs.scan()
    known = store.manifest()
    seen = scan.notes
    stale = set(suspects(known, seen))
    stale.update(racy_rows.changed(fs, racy_rows.recorded(store), known, seen))
    rows = {p for p in known if p in seen and p not in stale}  # indexed, unchanged
    indexed = store.paths_and_aliases()
    aliases = {p: a for p, a in indexed[1].items() if p in rows}
    parsed: dict[str, tuple[str, Note]] = {}
    for path in sorted(stale.difference(unread)):
        note = _parse(fs, path)
        if note is not None:
            parsed[path] = note
            if note[1].aliases:
                aliases[path] = note[1].aliases
    idx = LinkIndex(list(seen) + sorted(scan.attachments), aliases)
    outlines: dict[str, Outline | None] = {}

    def outline_of(path: str) -> Outline | None:
        if path in parsed:
            return parsed[path][1].outline
        if path not in outlines:  # the outline alone: cheaper than a whole parse
            try:
                outlines[path] = outline(fs.read(path).decoded.text)
            except (NoteNotFound, NotText, UnsafePath, OSError):
                outlines[path] = None
        return outlines[path]

    def judge(source: str, line: int, target: str, anchor: str | None) -> LinkProblem | None:
        problem = link_problem(source, line, target, anchor, idx, outline_of)
        if problem is None or (problem.verdict == "alias" and not include_alias):
            return None
        return problem

    stored: Iterable[list[LinkRow]]
    if every_link or not verdicts.trusted(store):
        stored = store.links_by_page()  # not all 900,000 of 100,000 notes at once
    else:
        stored = [store.links_to_judge(_came_or_went(store, scan, indexed[0]))]
    # the links table says which unchanged notes have a problem; those are read
    from_rows = [
        (r.source, problem)
        for page in stored
        for r in page
        if r.source in rows and (problem := judge(r.source, r.line, r.target, r.anchor))
    ]
    out = [] if as_written else [problem for _, problem in from_rows]
    for path in sorted({source for source, _ in from_rows} if as_written else ()):
        got = _parse(fs, path)
        if got is not None:
            parsed[path] = got
    for source, (text, parsed_note) in sorted(parsed.items()):
        for link in parsed_note.links:
            problem = judge(source, link.line, link.target, link.anchor)
            if problem is not None:
                line_start = text.rfind("\n", 0, link.start) + 1
                out.append(
                    dataclasses.replace(
                        problem,
                        column=link.start - line_start + 1,
                        text=text[link.start : link.end],
                    )
                )
    return out


def _came_or_went(store: Store, scan: Scan, indexed: list[str]) -> set[str]:
    """The link names of the notes (``indexed``: the index's) and attachments that came
    or went since the last sync, their paths compared as spelt (``people/ana.md`` beside
    ``people/Ana.md`` is a file that came). (Aliases need none: an alias leads only a
    link that no file's name does, and such a link is stored ``alias`` or
    ``unresolved``, judged again anyway.)"""
    paths = set(scan.notes).symmetric_difference(indexed)
    paths |= set(scan.attachments).symmetric_difference(store.attachment_paths())
    return {file_link_name(p) for p in paths}


def _parse(fs: VaultFS, path: str) -> tuple[str, Note] | None:
    try:
        text = fs.read(path).decoded.text
    except (NoteNotFound, NotText, UnsafePath, OSError):  # (a name the sync refuses too)
        return None
    return text, parse_note(path, text)
