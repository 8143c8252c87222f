"""MEMORY.md upkeep: (text, catalogue, what the daemon last wrote) -> new text.

A person owns MEMORY.md; memvault owns only its managed sections::

    <!-- memvault:begin decisions -->
    - [[decisions/2024-03-12-why-postgresql]] - Use PostgreSQL for ...
    - [[decisions/decisions|37 more decisions]]
    <!-- memvault:end decisions -->

Rules, all decided here and nowhere else:

- Every byte outside the markers is kept (links in it are only re-targeted
  when a note they point at moved, through the ``rewrite`` callable).
- Inside a section, a line is the daemon's only if it is exactly a line the
  daemon wrote (``owned``: its recent writes, so a stale editor buffer that
  brings an old line back does not freeze it), or exactly what it would write
  now for a note it lists (so a fresh template is adopted, not duplicated). Every other
  line is a person's: it stays at its position, and a note it links to is not
  listed a second time.
- The daemon's lines are the top ``limit`` notes of the rule (folder, filter,
  order), then one overflow line linking the folder note when more exist.
- A configured section a person deleted (it was seen before) is reported and
  not re-added unless ``restore_deleted``; one never seen is appended.
- Markers that do not pair up raise ``MarkerError``: the file is left alone.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memvault.core.text import lines_with_ends, newline_of
from memvault.core.wikilinks import find_links, link_safe

_MARKER = re.compile(r"^\s*<!--\s*memvault:(begin|end)\s+([A-Za-z0-9_-]+)\s*-->\s*$")
_ISO_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")
_NAME_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")
FOLDER_SECTION = "folder"
ORDERS = ("date", "updated", "mtime", "title")


class MarkerError(ValueError):
    """MEMORY.md's section markers do not pair up (a marker deleted or repeated by hand)."""


@dataclass(frozen=True, slots=True)
class SectionRule:
    """One managed section of MEMORY.md (configured in ``memory.sections``)."""

    name: str
    title: str
    folder: str
    filter: Mapping[str, str] = field(default_factory=dict)
    order: str = "date"  # one of ORDERS
    limit: int = 10


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """What MEMORY.md needs to know of one note."""

    path: str
    title: str
    summary: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    mtime_ns: int = 0

    @property
    def link(self) -> str:
        return self.path[:-3] if self.path.lower().endswith(".md") else self.path


@dataclass(frozen=True, slots=True)
class MemoryUpdate:
    text: str
    owned: dict[str, tuple[str, ...]]  # section -> the lines the daemon wrote
    present: tuple[str, ...]  # managed sections now in the file
    missing: tuple[str, ...]  # configured sections a person removed (not re-added)
    overflow: dict[str, tuple[CatalogueEntry, ...]]  # folder -> every note, for its folder note
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Block:
    name: str
    begin: int  # index of the begin marker line
    end: int  # index of the end marker line


def has_sections(text: str) -> bool:
    """Whether ``text`` holds a managed-section marker (a MEMORY.md memvault keeps)."""
    return any(_MARKER.match(line) for line in text.splitlines())


def folder_note_path(folder: str) -> str:
    """The generated folder note (Folder Notes convention): decisions/decisions.md."""
    return f"{folder}/{posixpath.basename(folder)}.md"


def is_folder_note(path: str) -> bool:
    folder, name = posixpath.split(path)
    return bool(folder) and name.lower() == posixpath.basename(folder).lower() + ".md"


def parse_blocks(lines: Sequence[str]) -> list[_Block]:
    """Find the managed sections; raise MarkerError if markers do not pair."""
    blocks: list[_Block] = []
    open_name: str | None = None
    open_at = 0
    names: set[str] = set()
    for i, line in enumerate(lines):
        m = _MARKER.match(line.rstrip("\r\n"))
        if not m:
            continue
        kind, name = m.groups()
        if kind == "begin":
            if open_name is not None:
                raise MarkerError(
                    f"line {i + 1}: section '{name}' begins inside '{open_name}' "
                    f"(begun on line {open_at + 1}) — close it first"
                )
            if name in names:
                raise MarkerError(f"line {i + 1}: section '{name}' appears twice")
            open_name, open_at = name, i
        else:
            if open_name is None:
                raise MarkerError(f"line {i + 1}: 'end {name}' without a matching begin")
            if name != open_name:
                raise MarkerError(
                    f"line {i + 1}: 'end {name}' closes section '{open_name}' "
                    f"(begun on line {open_at + 1})"
                )
            blocks.append(_Block(name, open_at, i))
            names.add(name)
            open_name = None
    if open_name is not None:
        raise MarkerError(f"line {open_at + 1}: section '{open_name}' is never closed")
    return blocks


def select(rule: SectionRule, catalogue: Sequence[CatalogueEntry]) -> list[CatalogueEntry]:
    """Every note the rule lists, in its order (before the limit)."""
    prefix = rule.folder.strip("/") + "/"
    chosen = [
        e
        for e in catalogue
        if e.path.startswith(prefix) and not is_folder_note(e.path) and _matches(e, rule.filter)
    ]
    return sort_entries(chosen, rule.order)


def _matches(entry: CatalogueEntry, wanted: Mapping[str, str]) -> bool:
    for name, value in wanted.items():
        have = entry.fields.get(name)
        values = have if isinstance(have, list) else [have]
        if not any(v is not None and str(v).strip().casefold() == value.casefold() for v in values):
            return False
    return True


def _date_of(entry: CatalogueEntry, name: str) -> str:
    value = entry.fields.get(name)
    if value is not None:
        m = _ISO_DATE.match(str(value).strip())
        if m:
            return str(value).strip()
    if name == "date":
        m = _NAME_DATE.search(posixpath.basename(entry.path))
        if m:
            return m.group(1)
    return ""


def sort_entries(entries: Sequence[CatalogueEntry], order: str) -> list[CatalogueEntry]:
    if order == "title":
        return sorted(entries, key=lambda e: (e.title.casefold(), e.path))
    if order == "mtime":
        return sorted(entries, key=lambda e: (-e.mtime_ns, e.path))
    fallbacks = ("updated", "date") if order == "updated" else ("date",)

    def key(e: CatalogueEntry) -> tuple[str, int, str]:
        stamp = next((d for d in (_date_of(e, f) for f in fallbacks) if d), "")
        return (stamp, e.mtime_ns, _reverse(e.path))

    return sorted(entries, key=key, reverse=True)


def _reverse(path: str) -> str:
    # ties break by path ascending while the sort runs descending
    return "".join(chr(0x10FFFF - ord(c)) for c in path)


def entry_line(entry: CatalogueEntry) -> str:
    """The line the daemon writes for a note (without the line ending)."""
    description = entry.summary.strip()
    if not description and entry.title != posixpath.basename(entry.link):
        description = entry.title
    description = " ".join(description.split())
    # Obsidian cannot link a name holding # | ^ [ ]: such a note is listed as text
    head = f"- [[{entry.link}]]" if link_safe(entry.link) else f"- `{entry.path}`"
    return f"{head} - {description}" if description else head


def overflow_line(folder: str, count: int, label: str) -> str:
    link = folder_note_path(folder)[:-3]
    return f"- [[{link}|{count} more {label}]]"


def _is_overflow(line: str, folder: str) -> bool:
    link = re.escape(folder_note_path(folder)[:-3])
    return re.fullmatch(rf"- \[\[{link}\|\d+ more [^\]]*\]\]", line) is not None


def update_memory(
    text: str | None,
    catalogue: Sequence[CatalogueEntry],
    rules: Sequence[SectionRule],
    owned: Mapping[str, Collection[str]],
    seen: Collection[str],
    *,
    resolve: Callable[[str], str | None],
    rewrite: Callable[[str], str] | None = None,
    restore_deleted: bool = False,
    title: str = "Memory Index",
) -> MemoryUpdate:
    """Recompute MEMORY.md. ``resolve`` maps a link target written in MEMORY.md to
    a note path (or None); ``rewrite`` re-targets links in a person's text after
    a move (applied to everything but the daemon's own lines)."""
    if text is None:  # no MEMORY.md at all: start afresh with every section
        text = f"# {title}\n"
        seen = ()
    nl = newline_of(text)
    lines = lines_with_ends(text)
    blocks = parse_blocks(lines)
    by_name = {b.name: b for b in blocks}
    problems: list[str] = []
    new_owned: dict[str, tuple[str, ...]] = {}
    overflow: dict[str, tuple[CatalogueEntry, ...]] = {}
    replaced: dict[str, list[str]] = {}
    for rule in rules:
        if rule.name not in by_name:
            continue
        block = by_name[rule.name]
        body = lines[block.begin + 1 : block.end]
        new_body, wrote, everything = _section(
            rule, body, catalogue, owned.get(rule.name, ()), resolve, rewrite, nl, problems
        )
        replaced[rule.name] = new_body
        new_owned[rule.name] = wrote
        if len(everything) > rule.limit:
            overflow[rule.folder] = tuple(everything)

    out: list[str] = []
    i = 0
    for block in blocks:
        out += _rewrite_lines(lines[i : block.begin + 1], rewrite)
        if block.name in replaced:
            out += replaced[block.name]
        else:  # a section no rule names: a person's text now
            out += _rewrite_lines(lines[block.begin + 1 : block.end], rewrite)
        i = block.end
    out += _rewrite_lines(lines[i:], rewrite)

    missing: list[str] = []
    for rule in rules:
        if rule.name in by_name:
            continue
        if rule.name in seen and not restore_deleted:
            missing.append(rule.name)
            continue
        if out and not out[-1].endswith("\n"):
            out[-1] += nl
        if out and out[-1].strip():
            out.append(nl)
        body, wrote, everything = _section(rule, [], catalogue, (), resolve, None, nl, problems)
        out += [f"## {rule.title}{nl}", f"<!-- memvault:begin {rule.name} -->{nl}", *body]
        out.append(f"<!-- memvault:end {rule.name} -->{nl}")
        new_owned[rule.name] = wrote
        if len(everything) > rule.limit:
            overflow[rule.folder] = tuple(everything)
    present = tuple(r.name for r in rules if r.name not in missing)
    return MemoryUpdate("".join(out), new_owned, present, tuple(missing), overflow, tuple(problems))


def _rewrite_lines(lines: list[str], rewrite: Callable[[str], str] | None) -> list[str]:
    if rewrite is None or not lines:
        return list(lines)
    return lines_with_ends(rewrite("".join(lines)))


def _section(
    rule: SectionRule,
    body: list[str],
    catalogue: Sequence[CatalogueEntry],
    owned: Collection[str],
    resolve: Callable[[str], str | None],
    rewrite: Callable[[str], str] | None,
    nl: str,
    problems: list[str],
) -> tuple[list[str], tuple[str, ...], list[CatalogueEntry]]:
    everything = select(rule, catalogue)
    shown = everything[: rule.limit]
    rendered = {e.path: entry_line(e) for e in shown}
    would_write = set(rendered.values())
    owned_set = set(owned)

    # Which lines are the daemon's, which a person's (and which notes those name).
    slots: list[int] = []  # positions of daemon lines
    kept: list[str] = []
    person_links: set[str] = set()
    # links are re-targeted and read in the section as a whole, so a line is judged in
    # its context (a nested list item is not indented code); only whole lines change
    rewritten = _rewrite_lines(body, rewrite)
    if len(rewritten) != len(body):
        rewritten = [_rewrite_lines([line], rewrite)[0] for line in body]
    links_on: dict[int, list[str]] = {}
    for link in find_links("".join(rewritten)):
        links_on.setdefault(link.line - 1, []).append(link.target)
    for i, line in enumerate(body):
        content = line.rstrip("\r\n")
        daemons = (
            content in owned_set or content in would_write or _is_overflow(content, rule.folder)
        )
        if daemons and content.strip():
            slots.append(len(kept))
            kept.append("")
            continue
        kept.append(rewritten[i])
        for link_target in links_on.get(i, ()):
            target = resolve(link_target) if link_target else None
            if target:
                person_links.add(target)

    wanted = [rendered[e.path] for e in shown if e.path not in person_links]
    for e in shown:
        if not link_safe(e.link):
            problems.append(
                f"{e.path}: Obsidian cannot link a file name holding # | ^ [ ]; listed as text"
            )
    hidden = len(everything) - len(shown)
    if hidden > 0:
        label = rule.folder.rsplit("/", 1)[-1]
        wanted.append(overflow_line(rule.folder, hidden, label))

    # Fill the daemon's old slots in order; extra lines go after the last slot
    # (or at the end of the section); unused slots disappear.
    result: list[str] = []
    it = iter(wanted)
    last_slot = slots[-1] if slots else None
    for pos, line in enumerate(kept):
        if pos in slots:
            nxt = next(it, None)
            if nxt is not None:
                result.append(nxt + nl)
            if pos == last_slot:
                result += [w + nl for w in it]
            continue
        result.append(line)
    if last_slot is None:
        rest = [w + nl for w in it]
        # keep a person's trailing blank lines below the daemon's lines
        cut = len(result)
        while cut > 0 and not result[cut - 1].strip():
            cut -= 1
        result[cut:cut] = rest
    if result and not result[-1].endswith("\n"):
        result[-1] += nl
    return result, tuple(wanted), everything


def render_folder_note(
    text: str | None, folder: str, entries: Sequence[CatalogueEntry], label: str
) -> str:
    """The generated folder note listing every note of a folder.

    Only the managed ``folder`` section is the daemon's; a person's text around
    it is kept (same markers as MEMORY.md).
    """
    nl = newline_of(text) if text else "\n"
    body = [entry_line(e) + nl for e in entries]
    if text is None:
        name = posixpath.basename(folder)
        head = [
            f"---{nl}",
            f"type: folder-note{nl}",
            f"summary: Every note in {folder}/, newest first (kept by memvault){nl}",
            f"---{nl}",
            f"# {name.capitalize()}{nl}",
            nl,
            f"All {len(entries)} {label} in this folder. memvault keeps the list below; "
            f"text outside it is yours.{nl}",
            nl,
        ]
        return "".join(
            [
                *head,
                f"<!-- memvault:begin {FOLDER_SECTION} -->{nl}",
                *body,
                f"<!-- memvault:end {FOLDER_SECTION} -->{nl}",
            ]
        )
    lines = lines_with_ends(text)
    blocks = {b.name: b for b in parse_blocks(lines)}
    block = blocks.get(FOLDER_SECTION)
    if block is None:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += nl
        return "".join(
            [
                *lines,
                nl,
                f"<!-- memvault:begin {FOLDER_SECTION} -->{nl}",
                *body,
                f"<!-- memvault:end {FOLDER_SECTION} -->{nl}",
            ]
        )
    return "".join([*lines[: block.begin + 1], *body, *lines[block.end :]])
