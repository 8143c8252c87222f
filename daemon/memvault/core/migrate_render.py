"""How a planned migration note is written (pure): its frontmatter, one value a line, and
its body; the provenance (which lines of which original) is in the frontmatter only.

Split out of ``migrate.py`` (the planner); ``render_note`` is re-exported there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol

import yaml

from memvault.core.migrate_rules import _ISO, _LINK_UNSAFE, _PLAIN, _YAML_WORDS


class Planned(Protocol):
    """What rendering reads of a planned note (``migrate.PlannedNote``, which imports
    this module: named here by its shape, so the two make no import circle)."""

    @property
    def frontmatter(self) -> Mapping[str, object]: ...
    @property
    def segments(self) -> Sequence[tuple[str, int, int]]: ...
    @property
    def body(self) -> str: ...


FIELD_ORDER = ("title", "type", "date", "status", "summary", "tags", "source")


def _yaml(value: object) -> str:
    """A YAML value on one line: plain when safe, else quoted (PyYAML for odd cases)."""
    if isinstance(value, list):
        return "[" + ", ".join(map(_yaml, value)) + "]"
    if isinstance(value, str) and value.isprintable():
        if _PLAIN.fullmatch(value) and " #" not in value and value.lower() not in _YAML_WORDS:
            return value
        return "'" + value.replace("'", "''") + "'"
    style = '"' if isinstance(value, str) else None  # escapes control characters and breaks
    dumped = yaml.safe_dump(value, allow_unicode=True, default_style=style, width=1 << 30)
    return dumped.removesuffix("\n...\n").strip()


def render_note(
    note: Planned, archive_link: str | Mapping[str, str], *, footer: bool = False
) -> str:
    """The file text: frontmatter (its ``archive:`` property links the archived original of
    each source; ``source:`` has the line ranges) and the body — the provenance once, in
    the frontmatter, where no search hit or context spends tokens on it.

    ``archive_link`` names the archive note (``archive/MEMORY-2024-05-01``) of every
    source, or maps each source name to its archive note. ``footer=True`` renders as
    memvault did before, with a ``*Migrated from [[...]] lines ...*`` line closing the
    body (a re-run recognises notes it wrote then as its own, unchanged).
    """
    fm = note.frontmatter
    keys = [k for k in FIELD_ORDER if k in fm] + sorted(k for k in fm if k not in FIELD_ORDER)
    head = [
        f"{k}: {fm[k] if k == 'date' and _ISO.fullmatch(str(fm[k])) else _yaml(fm[k])}"
        for k in keys
    ]
    ranges: dict[str, list[tuple[int, int]]] = {}
    for name, a, b in note.segments:
        ranges.setdefault(name, []).append((a, b))
    refs, links = [], []
    for name, rs in ranges.items():
        target = archive_link if isinstance(archive_link, str) else archive_link.get(name)
        if not target or re.search(r"[\[\]|#^\n]", target):
            raise ValueError(f"no usable archive link for {name!r}: {target!r}")
        spans = ", ".join(f"{a}–{b}" if a != b else str(a) for a, b in rs[:8])
        more = f" and {len(rs) - 8} more" if len(rs) > 8 else ""
        word = "line" if len(rs) == 1 and rs[0][0] == rs[0][1] else "lines"
        alias = _LINK_UNSAFE.sub(" ", name)
        link = f"[[{target.removesuffix('.md')}|{alias}]]"
        refs.append(f"{link} {word} {spans}{more}")
        links.append(link)
    if footer:
        back = "; ".join(refs) or "a dump (this note only links to what was taken out of it)"
        tail = f"\n\n---\n*Migrated from {back}.*\n"
        return "---\n" + "\n".join(head) + f"\n---\n\n{note.body}{tail}"
    if links:  # a property Obsidian shows as links (quoted: YAML reads [[ as a list)
        head.append("archive: " + _yaml(links[0] if len(links) == 1 else links))
    return "---\n" + "\n".join(head) + f"\n---\n\n{note.body}\n"
