"""MEMORY.md upkeep: (text, catalogue, what the daemon last wrote) -> new text.

A person owns MEMORY.md; memvault owns only its managed sections::

    <!-- memvault:begin decisions -->
    - [[decisions/2024-03-12-why-postgresql]] - Use PostgreSQL for ...
    - [[decisions/decisions|37 more]]
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
  order), then one overflow line linking the folder note when more exist (plain
  text when the folder note's path is a person's own note: memvault writes folder
  notes only where it created them, or where a person put its markers).
- A configured section a person deleted (it was seen before) is reported and
  not re-added unless ``restore_deleted``; one never seen is appended.
- An entry a person deleted from a section (a line the daemon wrote last time,
  for a note it would still list, gone from the section with no other line
  linking that note) is *hidden*: not listed in that section again (nor counted
  in its "N more") until a line in the section links the note once more. The
  folder note still lists every note of its folder.
- Markers that do not pair up raise ``MarkerError``: the file is left alone.
- Mid-reconcile (``pending``: notes on disk a reconcile has still to index) an
  update is provisional: it lists what is indexed so far (a note saved meanwhile
  too), keeps every line naming a pending note as it is (an entry is never
  dropped for a note that exists), keeps a pending note hidden, and leaves a
  folder's "N more" line alone until all its notes are indexed (the count is not
  known yet: none is added, an old one is not changed).
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
    hidden: dict[str, tuple[str, ...]] = field(default_factory=dict)  # section -> notes


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
    """Named like its folder (``people/people.md``): where a folder note would go."""
    folder, name = posixpath.split(path)
    return bool(folder) and name.lower() == posixpath.basename(folder).lower() + ".md"


def is_managed_folder_note(text: str) -> bool:
    """A folder note memvault keeps: it holds the ``folder`` section's markers (memvault
    created it, or a person added them). Any other note is a person's, whatever its name."""
    return any(
        (m := _MARKER.match(line)) is not None and m.group(2) == FOLDER_SECTION
        for line in text.splitlines()
    )


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
    chosen = [e for e in catalogue if e.path.startswith(prefix) and _matches(e, rule.filter)]
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


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def entry_line(entry: CatalogueEntry) -> str:
    """The line the daemon writes for a note (without the line ending)."""
    description = entry.summary.strip()
    if not description and entry.title != posixpath.basename(entry.link):
        description = entry.title
    # one line of text: a control character from a summary ("\0" in YAML) would make
    # MEMORY.md a binary file that no one, memvault included, could edit again
    description = " ".join(_CONTROL.sub(" ", description).split())
    # Obsidian cannot link a name holding # | ^ [ ]: such a note is listed as text
    head = f"- [[{entry.link}]]" if link_safe(entry.link) else f"- `{entry.path}`"
    return f"{head} - {description}" if description else head


def overflow_line(folder: str, count: int, linked: bool = True) -> str:
    """``- [[people/people|3 more]]``; ``- 3 more in people/`` when there is no folder
    note memvault may keep."""
    if not linked:
        return f"- {count} more in {folder}/"
    return f"- [[{folder_note_path(folder)[:-3]}|{count} more]]"


def _is_overflow(line: str, folder: str) -> bool:
    link = re.escape(folder_note_path(folder)[:-3])
    # "N more <label>" is how earlier versions wrote it: still the daemon's line
    linked = rf"- \[\[{link}\|\d+ more(?: [^\]]*)?\]\]"
    return re.fullmatch(rf"{linked}|- \d+ more in {re.escape(folder)}/", line) is not None


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
    hidden: Mapping[str, Collection[str]] | None = None,
    last_written: Mapping[str, Collection[str]] | None = None,
    unlinked_folders: Collection[str] = (),
    pending: Collection[str] = (),
) -> MemoryUpdate:
    """Recompute MEMORY.md. ``resolve`` maps a link target written in MEMORY.md to
    a note path (or None); ``rewrite`` re-targets links in a person's text after
    a move (applied to everything but the daemon's own lines). ``hidden``: per
    section, the notes a person took out of it; ``last_written``: per section, the
    lines of the daemon's previous update (to notice an entry a person deleted);
    ``unlinked_folders``: folders whose folder-note path is a person's own note (the
    overflow line then links nothing). ``pending``: notes on disk that a reconcile in
    flight has not indexed yet (see ``waits_for``): the update is provisional."""
    if text is None:  # no MEMORY.md at all: start afresh with every section
        text = f"# {title}\n"
        seen = ()
    nl = newline_of(text)
    lines = lines_with_ends(text)
    blocks = parse_blocks(lines)
    by_name = {b.name: b for b in blocks}
    problems: list[str] = []
    new_owned: dict[str, tuple[str, ...]] = {}
    new_hidden: dict[str, tuple[str, ...]] = {}
    overflow: dict[str, tuple[CatalogueEntry, ...]] = {}
    replaced: dict[str, list[str]] = {}

    def section(rule: SectionRule, body: list[str], fresh: bool) -> list[str]:
        result = _section(
            _Section(
                rule,
                catalogue,
                () if fresh else owned.get(rule.name, ()),
                resolve,
                None if fresh else rewrite,
                nl,
                frozenset((hidden or {}).get(rule.name, ())),
                () if fresh or last_written is None else tuple(last_written.get(rule.name, ())),
                rule.folder not in unlinked_folders,
                frozenset(pending),
            ),
            body,
            problems,
        )
        new_owned[rule.name] = result.wrote
        new_hidden[rule.name] = result.hidden
        if len(result.everything) > rule.limit and not waits_for(rule.folder, pending):
            overflow[rule.folder] = tuple(result.everything)
        return result.lines

    for rule in rules:
        if rule.name in by_name:
            block = by_name[rule.name]
            replaced[rule.name] = section(rule, lines[block.begin + 1 : block.end], False)

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
            new_hidden[rule.name] = tuple(sorted((hidden or {}).get(rule.name, ())))
            continue
        if out and not out[-1].endswith("\n"):
            out[-1] += nl
        if out and out[-1].strip():
            out.append(nl)
        body = section(rule, [], True)
        out += [f"## {rule.title}{nl}", f"<!-- memvault:begin {rule.name} -->{nl}", *body]
        out.append(f"<!-- memvault:end {rule.name} -->{nl}")
    present = tuple(r.name for r in rules if r.name not in missing)
    return MemoryUpdate(
        "".join(out),
        new_owned,
        present,
        tuple(missing),
        overflow,
        tuple(problems),
        {k: v for k, v in new_hidden.items() if v},
    )


def waits_for(folder: str, pending: Collection[str]) -> bool:
    """Whether a note of ``folder`` is still to be indexed: until it is, MEMORY.md does
    not know how many more the folder holds, and its folder note is not rewritten."""
    prefix = folder.strip("/") + "/"
    return any(p.startswith(prefix) for p in pending)


def _rewrite_lines(lines: list[str], rewrite: Callable[[str], str] | None) -> list[str]:
    if rewrite is None or not lines:
        return list(lines)
    return lines_with_ends(rewrite("".join(lines)))


@dataclass(frozen=True, slots=True)
class _Section:
    """What recomputing one managed section needs besides its lines."""

    rule: SectionRule
    catalogue: Sequence[CatalogueEntry]
    owned: Collection[str]
    resolve: Callable[[str], str | None]
    rewrite: Callable[[str], str] | None
    nl: str
    hidden: frozenset[str]
    last_written: tuple[str, ...]
    folder_note: bool  # the overflow line may link the folder note
    pending: frozenset[str] = frozenset()  # on disk, not indexed yet (a reconcile in flight)


@dataclass(frozen=True, slots=True)
class _SectionResult:
    lines: list[str]
    wrote: tuple[str, ...]
    everything: list[CatalogueEntry]
    hidden: tuple[str, ...]


def _section(s: _Section, body: list[str], problems: list[str]) -> _SectionResult:
    rule = s.rule
    everything = select(rule, s.catalogue)
    # links are re-targeted and read in the section as a whole, so a line is judged in
    # its context (a nested list item is not indented code); only whole lines change
    rewritten = _rewrite_lines(body, s.rewrite)
    if len(rewritten) != len(body):
        rewritten = [_rewrite_lines([line], s.rewrite)[0] for line in body]
    links_on: dict[int, list[str]] = {}
    for link in find_links("".join(rewritten)):
        if link.target:
            target = s.resolve(link.target)
            if target:
                links_on.setdefault(link.line - 1, []).append(target)
    linked = {p for targets in links_on.values() for p in targets}

    # Hidden: notes a person took out of the section. A link to one in the section
    # (the person put it back) lists it again; a note that is gone is forgotten.
    existing = {e.path for e in s.catalogue}
    waiting = s.pending - existing
    folder_waits = waits_for(rule.folder, s.pending)
    hidden = {p for p in s.hidden if (p in existing or p in waiting) and p not in linked}
    listed = [e for e in everything if e.path not in hidden][: rule.limit]
    present = {line.rstrip("\r\n") for line in body}
    for line in s.last_written:
        if line in present or _is_overflow(line, rule.folder):
            continue
        gone = next((link.target for link in find_links(line) if link.target), None)
        path = s.resolve(gone) if gone else None
        if path and path not in linked and any(e.path == path for e in listed):
            hidden.add(path)  # the daemon's line for a note it still lists was deleted
    shown = [e for e in everything if e.path not in hidden][: rule.limit]
    rendered = {e.path: entry_line(e) for e in shown}
    would_write = set(rendered.values())
    owned_set = set(s.owned)

    # Which lines are the daemon's, which a person's (and which notes those name).
    slots: list[int] = []  # positions of daemon lines
    kept: list[str] = []
    person_links: set[str] = set()
    for i, line in enumerate(body):
        content = line.rstrip("\r\n")
        overflow = _is_overflow(content, rule.folder)
        daemons = content in owned_set or content in would_write or overflow
        # mid-reconcile: a line naming a note not indexed yet, and the count of a
        # folder not all indexed, stay as they are (they are not known to be wrong)
        unknown = (overflow and folder_waits) or not waiting.isdisjoint(links_on.get(i, ()))
        if daemons and content.strip() and not unknown:
            slots.append(len(kept))
            kept.append("")
            continue
        kept.append(rewritten[i])
        person_links.update(links_on.get(i, ()))

    wanted = [rendered[e.path] for e in shown if e.path not in person_links]
    for e in shown:
        if not link_safe(e.link):
            problems.append(
                f"{e.path}: Obsidian cannot link a file name holding # | ^ [ ]; listed as text"
            )
    more = len([e for e in everything if e.path not in hidden]) - len(shown)
    if more > 0 and not folder_waits:
        wanted.append(overflow_line(rule.folder, more, s.folder_note))

    # Fill the daemon's old slots in order; extra lines go after the last slot
    # (or at the end of the section); unused slots disappear.
    nl = s.nl
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
    return _SectionResult(result, tuple(wanted), everything, tuple(sorted(hidden)))


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
