"""MEMORY.md upkeep: (text, catalogue) -> new text, decided from the files alone.

A person owns MEMORY.md; memvault owns only its managed sections::

    <!-- memvault:begin decisions -->
    - [[decisions/2024-03-12-why-postgresql]] - Use PostgreSQL for ...
    - [[decisions/decisions|37 more]]
    <!-- memvault:end decisions -->

Rules, all decided here and nowhere else (docs/MEMORY.md tells them to a person).
Nothing depends on file times, so a fresh index of the same files writes the same
MEMORY.md byte for byte (but a line for a note not there, which only the index that
wrote it drops: below), and no tool that only brings back an older MEMORY.md (git,
an editor's stale buffer) can hide a note:

- Every byte outside the markers is kept (links in it are only re-targeted
  when a note they point at moved, through the ``rewrite`` callable).
- Inside a section, memvault's lines are recognised from the file: the overflow line,
  and *entry lines* — ``- [[target]]`` or ``- [[target]] - description`` (`` - `path` ``
  for a name no link can hold) — for a note of the section's folder when the line is
  exactly what memvault writes for it now, or is a line memvault wrote before
  (``owned``: so a summary's change, a stale buffer's old line, the line of a note since
  deleted or moved to another folder (its ``[[name]]`` may still lead to it) is updated
  or dropped, not frozen; losing that history only makes such a line count as the
  person's). A line naming a note that is not there and that memvault never wrote is a
  person's (a note still to come: its words are never dropped; ``links check`` reports
  the link). Every other line is a person's: it stays where it is, and a note it links
  is not listed a second time.
- The daemon's lines are the top ``limit`` notes of the rule (folder, filter,
  order: ``core.memory_order``), then one overflow line linking the folder note
  when more exist (plain text when the folder note's path is a person's own note).
  They take the places of memvault's lines already there, in order; more go after
  the last of them; the overflow line keeps its place (or follows the entries).
- A note stays out of every section when it says so: ``memory-index: false``.
- A configured section missing from the file is appended once it has a note to
  list (to drop a section for good, remove it from ``memory.sections``).
- Markers that do not pair up raise ``MarkerError``: the file is left alone.
- Mid-reconcile (``pending``: notes on disk a reconcile has still to index) an
  update is provisional: it lists what is indexed so far, keeps every line naming
  a pending note as it is, and leaves a folder's "N more" line alone until all its
  notes are indexed (none is added, an old one is not changed).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from memvault.core.memory_copies import alike_said, description, without_alike
from memvault.core.memory_order import (
    KEEP_OUT_FIELD,
    ORDERS,
    UNWRITABLE,
    CatalogueEntry,
    Listing,
    SectionRule,
    in_folder,
    is_marker_name,
    keeps_out,
    listing,
    matches,
    other_folder,
    select,
    sort_entries,
    sort_key,
)
from memvault.core.memory_tail import (
    folder_note_path,
    is_tail_line,
    overflow_line,
    tail_lines,
)
from memvault.core.text import lines_with_ends, newline_of
from memvault.core.wikilinks import find_links, link_safe

# a section's name as config.py lets one be, any script (is_marker_name): read as ASCII
# only, a section named `люди` was not found, and each write added it again
_NAME = r"[^\s<>]+"
_MARKER = re.compile(rf"^\s*<!--\s*memvault:(begin|end)\s+({_NAME})\s*-->\s*$")
_ENTRY = re.compile(r"- (?:\[\[([^\[\]|#^\n]+)\]\]|`([^`\n]+)`)(?: - .*)?")
FOLDER_SECTION = "folder"


class MarkerError(ValueError):
    """MEMORY.md's section markers do not pair up (a marker deleted or repeated by hand)."""


@dataclass(frozen=True, slots=True)
class MemoryUpdate:
    text: str
    owned: dict[str, tuple[str, ...]]  # section -> the lines the daemon wrote
    present: tuple[str, ...]  # managed sections now in the file
    overflow: dict[str, int]  # folder -> how many notes its section selects (past the limit)
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Block:
    name: str
    begin: int  # index of the begin marker line
    end: int  # index of the end marker line


def has_sections(text: str) -> bool:
    """Whether ``text`` holds a managed-section marker (a MEMORY.md memvault keeps)."""
    return any((m := _MARKER.match(line)) and is_marker_name(m[2]) for line in text.splitlines())


def is_managed_folder_note(text: str) -> bool:
    """A folder note memvault keeps: it holds the ``folder`` section's markers (memvault
    created it, or a person added them). Any other note is a person's, whatever its name.

    Each line of ``text.splitlines()`` is matched, but only the lines holding
    ``memvault:`` are looked at (found by one scan: a folder note holds a line per note)."""
    for hit in re.finditer("memvault:", text):
        start = max(text.rfind(sep, 0, hit.start()) for sep in _LINE_BREAKS) + 1
        ends = [i for sep in _LINE_BREAKS if (i := text.find(sep, hit.end())) >= 0]
        m = _MARKER.match(text[start : min(ends, default=len(text))])
        if m is not None and m.group(2) == FOLDER_SECTION:
            return True
    return False


# what str.splitlines() breaks lines at
_LINE_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def folder_listing_span(text: str) -> tuple[int, int] | None:
    """Where a folder note's listing is: from the start of the line after its begin marker
    to the start of its end marker's line (offsets into ``text``); None when there is no
    pair of ``folder`` markers (one scan of the text, whatever its size)."""
    spans = _marker_spans(text)
    return None if spans is None else spans.get(FOLDER_SECTION)


def parse_blocks(lines: Sequence[str]) -> list[_Block]:
    """Find the managed sections; raise MarkerError if markers do not pair."""
    blocks: list[_Block] = []
    open_name: str | None = None
    open_at = 0
    names: set[str] = set()
    for i, line in enumerate(lines):
        if "memvault:" not in line:
            continue
        m = _MARKER.match(line.rstrip("\r\n"))
        if not m or not is_marker_name(m[2]):
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


def entry_line(entry: CatalogueEntry) -> str:
    """The line the daemon writes for a note (without the line ending)."""
    said = description(entry)  # (core/memory_copies)
    # Obsidian cannot link a name holding # | ^ [ ]: such a note is listed as text; a
    # name no line can hold (a line break: a script's file) as text with it escaped,
    # else the line broke in two and each update added another
    if UNWRITABLE.search(entry.path):
        head = f"- `{UNWRITABLE.sub(lambda m: repr(m.group())[1:-1], entry.path)}`"
    elif link_safe(entry.link):
        head = f"- [[{entry.link}]]"
    else:
        head = f"- `{entry.path}`"
    return f"{head} - {said}" if said else head


def entry_target(line: str) -> tuple[str, bool] | None:
    """The target of a line in the entry form memvault writes (``- [[x]]``, ``- [[x]] -
    text``, ``- `path` - text``), and whether it is a path written as text; else None."""
    m = _ENTRY.fullmatch(line)
    if m is None:
        return None
    return (m.group(1), False) if m.group(1) is not None else (m.group(2), True)


def update_memory(
    text: str | None,
    catalogue: Sequence[CatalogueEntry] | Mapping[str, CatalogueEntry],
    rules: Sequence[SectionRule],
    owned: Mapping[str, Collection[str]] | None = None,
    _seen: object = None,  # earlier versions' "sections seen": no longer decides anything
    *,
    resolve: Callable[[str], str | None],
    rewrite: Callable[[str], str] | None = None,
    title: str = "Memory Index",
    unlinked_folders: Collection[str] = (),
    pending: Collection[str] = (),
    listings: Mapping[str, Listing] | None = None,
    lines: Mapping[str, str] | None = None,
) -> MemoryUpdate:
    """Recompute MEMORY.md. ``resolve`` maps a link target written in MEMORY.md to
    a note path (or None); ``rewrite`` re-targets links in a person's text after
    a move (applied to everything but the daemon's own lines). ``owned``: per
    section, lines memvault wrote before (a hint only: see the module docstring);
    ``unlinked_folders``: folders whose folder-note path is a person's own note (the
    overflow line then links nothing). ``pending``: notes on disk that a reconcile in
    flight has not indexed yet (see ``waits_for``): the update is provisional.
    ``listings`` (per section) and ``lines`` (per note) are what the Linker keeps
    between updates; without them they are computed from ``catalogue``."""
    notes = catalogue if isinstance(catalogue, Mapping) else {e.path: e for e in catalogue}
    if text is None:  # no MEMORY.md at all: start afresh with every section
        text = f"# {title}\n"
    nl = newline_of(text)
    all_lines = lines_with_ends(text)
    blocks = parse_blocks(all_lines)
    by_name = {b.name: b for b in blocks}
    problems: list[str] = []
    new_owned: dict[str, tuple[str, ...]] = {}
    overflow: dict[str, int] = {}
    replaced: dict[str, list[str]] = {}
    waiting = frozenset(p for p in pending if p not in notes)

    def line_of(e: CatalogueEntry) -> str:
        got = lines.get(e.path) if lines is not None else None
        return got if got is not None else entry_line(e)

    def section(rule: SectionRule, body: list[str], fresh: bool) -> tuple[list[str], bool]:
        got = (listings or {}).get(rule.name)
        if got is None:
            got = listing(rule, list(notes.values()), presorted=False, rules=rules)
        s = _Section(
            rule,
            got,
            notes,
            frozenset(() if fresh or owned is None else owned.get(rule.name, ())),
            resolve,
            None if fresh else rewrite,
            nl,
            rule.folder not in unlinked_folders,
            waiting,
            waits_for(rule.folder, pending)
            or (not rule.folder.strip("/") and any(other_folder(p, rules) for p in pending)),
            line_of,
        )
        out, wrote = _section(s, body, problems)
        new_owned[rule.name] = wrote
        if got.total > rule.limit and not s.folder_waits:
            overflow[rule.folder] = got.total
        return out, bool(got.total or got.folders)  # something to list

    for rule in rules:
        if rule.name in by_name:
            block = by_name[rule.name]
            replaced[rule.name] = section(rule, all_lines[block.begin + 1 : block.end], False)[0]

    out: list[str] = []
    i = 0
    for block in blocks:
        out += _rewrite_lines(all_lines[i : block.begin + 1], rewrite)
        if block.name in replaced:
            out += replaced[block.name]
        else:  # a section no rule names: a person's text now
            out += _rewrite_lines(all_lines[block.begin + 1 : block.end], rewrite)
        i = block.end
    out += _rewrite_lines(all_lines[i:], rewrite)

    present = [r.name for r in rules if r.name in by_name]
    for rule in rules:
        if rule.name in by_name:
            continue
        body, any_note = section(rule, [], True)
        if not any_note:
            continue  # appended once it has a note to list
        present.append(rule.name)
        if out and not out[-1].endswith("\n"):
            out[-1] += nl
        if out and out[-1].strip():
            out.append(nl)
        out += [f"## {rule.title}{nl}", f"<!-- memvault:begin {rule.name} -->{nl}", *body]
        out.append(f"<!-- memvault:end {rule.name} -->{nl}")
    return MemoryUpdate("".join(out), new_owned, tuple(present), overflow, tuple(problems))


def waits_for(folder: str, pending: Collection[str]) -> bool:
    """Whether a note of ``folder`` is still to be indexed: until it is, MEMORY.md does
    not know how many more the folder holds, and its folder note is not rewritten."""
    return any(in_folder(p, folder) for p in pending)


def _rewrite_lines(lines: list[str], rewrite: Callable[[str], str] | None) -> list[str]:
    if rewrite is None or not lines:
        return list(lines)
    return lines_with_ends(rewrite("".join(lines)))


@dataclass(frozen=True, slots=True)
class _Section:
    """What recomputing one managed section needs besides its lines."""

    rule: SectionRule
    listing: Listing
    notes: Mapping[str, CatalogueEntry]
    owned: frozenset[str]
    resolve: Callable[[str], str | None]
    rewrite: Callable[[str], str] | None
    nl: str
    folder_note: bool  # the overflow line may link the folder note
    waiting: frozenset[str] = frozenset()  # on disk, not indexed yet (a reconcile in flight)
    folder_waits: bool = False
    line_of: Callable[[CatalogueEntry], str] = field(default=entry_line)


_ENTRY_SLOT, _OVERFLOW_SLOT = 0, 1


def _daemons(s: _Section, content: str) -> bool:
    """Whether a line of the section is memvault's (the module docstring's rule)."""
    got = entry_target(content)
    if got is None:
        return False
    target, as_text = got
    path = target if as_text else s.resolve(target)
    if path is None or (as_text and path not in s.notes):
        # a note not there: memvault's line only when memvault wrote it (a note since
        # deleted). A person writes a line for a note still to come, in memvault's form
        # too (Obsidian creates the note when its link is clicked): that line is theirs.
        # (A name written escaped, `a\nb.md`, is memvault's alone: no note has it as is;
        # ``[[/ Lead.md]]``, trim_proof's, is read as LinkIndex.resolve reads it.)
        guess = path or (t if (t := target.lstrip("/")).lower().endswith(".md") else t + ".md")
        ours = content in s.owned or (as_text and "\\" in target)
        return in_folder(guess, s.rule.folder) and guess not in s.waiting and ours
    entry = s.notes.get(path)
    if entry is None:  # a file memvault does not list (or one a reconcile has still to
        # index): memvault's line only when memvault wrote it, for a note it listed then
        # (a note that is no text now: a git LFS pointer, a binary file)
        return content in s.owned and in_folder(path, s.rule.folder) and path not in s.waiting
    if not in_folder(path, s.rule.folder):  # memvault's if it wrote it here: a root
        return content in s.owned  # note moved to people/, its [[name]] leading there
    mine = s.line_of(entry)  # (or it, counting the notes saying the same: memory_copies)
    return content == mine or without_alike(content) == mine or content in s.owned


def _section(
    s: _Section, body: list[str], problems: list[str]
) -> tuple[list[str], tuple[str, ...]]:
    rule = s.rule
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

    # Which lines are the daemon's, which a person's (and which notes those name).
    layout: list[str | int] = []
    person_links: set[str] = set()
    has_overflow = False
    for i, line in enumerate(body):
        content = line.rstrip("\r\n")
        if is_tail_line(content, rule.folder, s.listing, s.owned):
            if s.folder_waits:  # the count of a folder not all indexed stays as it is
                layout.append(line)
            elif not has_overflow:
                layout.append(_OVERFLOW_SLOT)
            has_overflow = True
            continue
        if content.strip() and _daemons(s, content):
            layout.append(_ENTRY_SLOT)
            continue
        layout.append(rewritten[i])
        person_links.update(links_on.get(i, ()))

    shown = s.listing.top
    alike = s.listing.alike or (0,) * len(shown)  # (a person's line lists a note: not these)
    mine = [(e, n) for e, n in zip(shown, alike, strict=True) if e.path not in person_links]
    wanted = [s.line_of(e) + alike_said(n) for e, n in mine]
    for e in shown:
        if not link_safe(e.link):
            problems.append(
                f"{e.path}: Obsidian cannot link a file name holding # | ^ [ ]; listed as text"
            )
    more = s.listing.total - len(shown) - sum(n for _, n in mine)
    tail = [] if s.folder_waits else tail_lines(rule, s.listing, more, s.folder_note)
    nl = s.nl
    slots = [pos for pos, item in enumerate(layout) if item == _ENTRY_SLOT]
    last_slot = slots[-1] if slots else None
    result: list[str] = []
    it = iter(wanted)
    placed_tail = False
    for pos, item in enumerate(layout):
        if item == _ENTRY_SLOT:
            nxt = next(it, None)
            if nxt is not None:
                result.append(nxt + nl)
            if pos == last_slot:
                result += [w + nl for w in it]
                if not has_overflow or s.folder_waits:
                    result += [t + nl for t in tail]
                    placed_tail = True
        elif item == _OVERFLOW_SLOT:
            if last_slot is None:
                result += [w + nl for w in it]
            result += [t + nl for t in tail]
            placed_tail = True
        else:
            assert isinstance(item, str)
            result.append(item)
    if last_slot is None and not placed_tail:
        rest = [w + nl for w in it] + [t + nl for t in tail]
        # keep a person's trailing blank lines below the daemon's lines
        cut = len(result)
        while cut > 0 and not result[cut - 1].strip():
            cut -= 1
        result[cut:cut] = rest
    if result and not result[-1].endswith("\n"):
        result[-1] += nl
    return result, tuple(wanted + tail)


def render_folder_note(
    text: str | None,
    folder: str,
    entries: Sequence[CatalogueEntry] | Sequence[str],
    label: str,
) -> str:
    """The generated folder note listing every note of a folder (``entries``: the notes,
    or the lines the Linker keeps for them, in order).

    Only the managed ``folder`` section is the daemon's; a person's text around
    it is kept (same markers as MEMORY.md).
    """
    nl = newline_of(text) if text else "\n"
    body = [(e if isinstance(e, str) else entry_line(e)) + nl for e in entries]
    if text is None:
        name = posixpath.basename(folder)
        head = [
            f"---{nl}",
            f"type: folder-note{nl}",
            f"summary: Every note in {folder}/, newest first (kept by memvault){nl}",
            f"---{nl}",
            f"# {name.capitalize()}{nl}",
            nl,
            f"{count_line(len(entries), label)}{nl}",
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
    spans = _marker_spans(text)
    if spans is None:  # the markers do not pair up: the line by line reading says how
        lines = lines_with_ends(text)
        block = {b.name: b for b in parse_blocks(lines)}.get(FOLDER_SECTION)
        if block is not None:
            above = _recounted("".join(lines[: block.begin]), len(entries), label)
            return "".join([above, lines[block.begin], *body, *lines[block.end :]])
        spans = {}
    span = spans.get(FOLDER_SECTION)
    if span is None:
        lines = lines_with_ends(_recounted(text, len(entries), label))
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
    return "".join([_recounted(text[: span[0]], len(entries), label), *body, text[span[1] :]])


def count_line(count: int, label: str) -> str:
    """The line a generated folder note opens with: memvault's, known by this form alone
    (it sits above the markers); a person who rewords it makes it theirs."""
    return (
        f"All {count} {label} in this folder. memvault keeps the list below; "
        "text outside it is yours."
    )


_COUNT_LINE = re.compile(
    r"^All \d+ (?P<label>[^\n]+?) in this folder\. memvault keeps the list below; "
    r"text outside it is yours\.(?=\r?$)",
    re.MULTILINE,
)


_COUNT_LINES = re.compile(_COUNT_LINE.pattern + r"\r?\n?", re.MULTILINE)


def _recounted(head: str, count: int, label: str) -> str:
    """``head`` (the text above the folder's list) with memvault's count line, if it is
    there in its own form, saying ``count``: the first such line; a second one in that
    form (two clones' counts, both kept by git's line-by-line merge) is memvault's too,
    and goes. Nothing else changes."""
    seen = False

    def one(m: re.Match[str]) -> str:
        nonlocal seen
        if seen:
            return ""
        seen = True
        return count_line(count, label) + m.group(0)[len(m.group(0).rstrip("\r\n")) :]

    return _COUNT_LINES.sub(one, head)


# a marker from its "<!--" (a literal the regex engine skips to) to the line's end; the
# start of its line is checked apart (only blanks before it): one scan of 100,000 lines
_MARKER_LINE = re.compile(
    rf"<!--[ \t]*memvault:(begin|end)[ \t]+({_NAME})[ \t]*-->[ \t]*\r?$", re.MULTILINE
)


def _marker_lines(text: str) -> Iterator[re.Match[str]]:
    """The marker lines of ``text`` (``^[ \t]*<!-- memvault:begin|end name -->[ \t]*$``)."""
    for m in _MARKER_LINE.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not text[line_start : m.start()].strip(" \t") and is_marker_name(m[2]):
            yield m


def _marker_spans(text: str) -> dict[str, tuple[int, int]] | None:
    """Per section, where its body starts (after the begin line) and ends (the end line's
    start), found by one scan of the whole text (a folder note can hold 100,000 lines);
    None when the markers do not pair up (``parse_blocks`` says how)."""
    spans: dict[str, tuple[int, int]] = {}
    open_name: str | None = None
    start = 0
    for m in _marker_lines(text):
        kind, name = m.groups()
        if kind == "begin":
            if open_name is not None or name in spans:
                return None
            open_name = name
            nl_at = text.find("\n", m.end())
            start = len(text) if nl_at < 0 else nl_at + 1
        else:
            if open_name != name:
                return None
            line_start = text.rfind("\n", 0, m.start()) + 1
            spans[name] = (start, line_start)
            open_name = None
    return None if open_name is not None else spans


__all__ = [
    "FOLDER_SECTION",
    "KEEP_OUT_FIELD",
    "ORDERS",
    "CatalogueEntry",
    "Listing",
    "MarkerError",
    "MemoryUpdate",
    "SectionRule",
    "entry_line",
    "entry_target",
    "folder_listing_span",
    "folder_note_path",
    "has_sections",
    "in_folder",
    "is_managed_folder_note",
    "keeps_out",
    "listing",
    "matches",
    "overflow_line",
    "parse_blocks",
    "render_folder_note",
    "select",
    "sort_entries",
    "sort_key",
    "update_memory",
    "waits_for",
]
