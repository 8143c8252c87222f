"""Plan the migration of a giant memory dump into vault notes — pure and deterministic.

``plan_migration(sources)`` reads ``Source(name, text, date_hint)``s (a MEMORY.md or
CLAUDE.md dump, plus ``memory/YYYY-MM-DD.md`` files with ``date_hint``) and returns a
``MigrationPlan``: the notes to write, what was uncertain, counts. No I/O, no clock.

Invariant: every non-blank source line lands in exactly one note body, verbatim (heading
lines included), where ``PlannedNote.segments`` says. A body adds only blank lines between
separate segments and, in place of each decision taken out of it (``extracted``), one
``link_line()``: ``- Decision: [[decisions/2024-01-02-use-postgres|Use Postgres]]``.

Rules, by precedence:

- Lines end at ``\\r\\n``, ``\\n`` or a lone ``\\r``. ATX headings outside fenced code
  (```` ``` ```` or ``~~~``, any indent) give structure; a heading owns the lines up to the
  next one. An unclosed fence runs to the end of its source (CommonMark) and is reported.
- Inside a decision, everything stays in the decision.
- A heading that reads as a decision ("decided", "decision:", "we chose", "ADR", "ADR-12";
  not negated — "not decided yet" — nor a question), or any heading under a ``Decisions``
  container, is ``decisions/<date>-<slug>.md`` (``status: accepted``), dated by itself,
  else its enclosing section, else ``date_hint``; undated ones are reported. Inside a log,
  person or project it leaves a link there. A project note gets ``status: active`` (the
  dump was tracking it), so MEMORY.md's Active Projects lists it until a person changes it,
  unless its heading (``(paused)``, ``(done)``) or a ``Status:`` line of its own text
  (``- Status: paused.``, ``**Status:** on hold``, ``Status: shipped``) says otherwise.
- Inside a person or project, everything else stays there (its history).
- Inside a day's log, everything else stays, except a heading with another date, which
  starts that day's log. Person- or project-like headings there are only reported.
- A heading starting with a date (``2024-01-02``, ``Jan 2, 2024``, ``2 January 2024``,
  ``2024-01-02T10:30Z``, ``Tue 2024-01-02 — standup``) goes to ``logs/<date>.md``; same-day
  entries append in source order, each keeping its heading. Dates as written (no zones).
- A container (``People``, ``Projects``, ``Decisions``...) classifies its children; its
  own heading line goes to the inbox.
- ``Project: X``, ``Projects / X``, ``X (project)`` or a child of ``Projects`` is a project.
  ``People / X``, ``Person: X``, a name-like child of ``People``, or (level 2 and deeper)
  2–3 capitalised words that are not known non-name words (``Sarah Chen (backend lead)``,
  reported as a heuristic) is a person. Names only mentioned in text are only reported.
- A heading about the user (``About me``, ``Preferences``, ``User profile``...) outside any
  note is ``people/me.md`` ("Me"), updated as of the dump's last day, so MEMORY.md's Key
  People lists it first: an agent sees its user's standing preferences. Reported.
- Anything else goes to ``inbox/<source-slug>.md``, or to the log of a ``date_hint``
  source (a daily file is one day's log throughout).
- Inbox text is split at top-level lines starting with a date (``2024-01-02:``,
  ``[2024-01-02 10:30]``, ``- Jan 2, 2024 —``): each runs to that day's log up to the next
  heading or timestamp. A dump without headings is split this way, or stays one inbox note;
  either is reported.
- In a log, a top-level entry (a list item with its indented or lazy continuation, or a
  paragraph — one ending in ``:`` takes the list after it) whose lead paragraph reads as a
  decision becomes a decision note; the log keeps a link in its place. Undated entries that
  read as decisions stay in the inbox and are reported.
- One day, person, project (slug) or decision (date and title) is one note across sources,
  parts in source order, sources in the order given.
- Slugs: NFC, lowercase, letters kept, other runs ``-``, at most 60 chars. A path taken in
  ``existing_paths`` (case-insensitively) or by an earlier note gets ``-2``, ``-3``... To
  re-run into a vault, plan, compare ``content_hash`` with each file's body, and pass as
  ``existing_paths`` only the paths holding something else.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

from memvault.core.migrate_render import FIELD_ORDER, render_note
from memvault.core.migrate_rules import (
    _CLOSING_HASHES,
    _CONTAINERS,
    _FENCE,
    _HEAD_DATE,
    _HEADING,
    _ISO,
    _LINE_DATE,
    _LINK_PREFIX,
    _LIST_ITEM,
    _MENTION,
    _PATH,
    _PUNCT,
    _TAIL_DATE,
    _TITLE_STRIP,
    _USER_HEADINGS,
    USER_NOTE,
    USER_TITLE,
    _clean,
    _decision_title,
    _first_sentence,
    _is_pair_name,
    _match_date,
    _person_name,
    _project_name,
    _project_status,
    _reads_as_decision,
    _shorten,
    _slug,
    _strip_prefixes,
    link_line,
)

__all__ = ["MigrationPlan", "MigrationStats", "PlannedNote", "Source", "Uncertainty"]
__all__ += ["FIELD_ORDER", "link_line", "plan_migration", "render_note"]  # from migrate_render

Kind = Literal["log", "decision", "person", "project", "inbox"]
Segment = tuple[str, int, int]  # (source name, first line, last line), 1-based inclusive
FOLDERS = {"log": "logs", "decision": "decisions", "person": "people", "project": "projects"}
FOLDERS["inbox"] = "inbox"
SUMMARY_MAX = 160


@dataclass(frozen=True, slots=True)
class Source:
    """One text to migrate; ``date_hint`` (YYYY-MM-DD) makes all of it that day's log."""

    name: str
    text: str
    date_hint: str | None = None


@dataclass(frozen=True, slots=True)
class PlannedNote:
    path: str  # vault-relative posix path
    kind: Kind
    title: str
    date: str | None
    frontmatter: dict[str, object]
    body: str  # without frontmatter or trailing newline
    segments: tuple[Segment, ...]
    extracted: tuple[str, ...]  # decision paths whose link_line() stands in the body
    content_hash: str  # sha256 hex of body


@dataclass(frozen=True, slots=True)
class Uncertainty:
    source: str
    line: int  # 1-based; 0 for the whole source
    kind: str
    message: str
    path: str | None = None


@dataclass(frozen=True, slots=True)
class MigrationStats:
    sources: int
    lines: int
    non_blank_lines: int
    headings: int
    notes: int
    notes_by_kind: dict[str, int]
    decisions_from_entries: int
    inbox_lines: int  # non-blank lines left in inbox notes


@dataclass(frozen=True, slots=True)
class MigrationPlan:
    notes: tuple[PlannedNote, ...]  # sorted by path
    uncertainties: tuple[Uncertainty, ...]  # by source, then line
    stats: MigrationStats


_MESSAGES = {
    "empty-source": "the source is empty",
    "no-headings": "no headings: split by {n} paragraph timestamps into daily logs",
    "no-structure": "no headings and no timestamps: kept whole as one inbox note",
    "unclosed-fence": "a code fence never closes: the rest of the source is code",
    "invalid-date": "heading {raw!r} looks dated but its date does not exist",
    "decision-undated": "decision {raw!r} has no date",
    "kept-in-log": "heading {raw!r} looks like a person or project; kept in its day's log",
    "person-heuristic": "heading {raw!r} taken for a person by its shape",
    "undated-decision": "reads as a decision but has no date; kept in the inbox",
    "renamed": "{base} is taken; planned as {path}",
    "inbox": "{n} non-blank lines have no date or category; kept in the inbox",
    "name-mentions": "{name!r} is mentioned {n} times without a heading; no people note made",
    "user-note": "heading {raw!r} is about the user: kept in their own note (MEMORY.md's people)",
}
_Key = tuple[str, str]  # (kind, identity: date, full slug, date/slug, or source name)
_Part = tuple[int, int, int, "_Key | None"]  # source index, first, last (0-based) | a link


@dataclass(slots=True)
class _Frame:
    level: int
    target: _Key  # where the lines under this heading go
    kind: str  # log decision person project container generic inbox
    absorbing: bool  # subheadings stay in target (except decisions and other days)
    date: str | None
    hint: str | None = None  # container kind for the children


@dataclass(slots=True)
class _Draft:
    kind: Kind
    title: str
    date: str | None
    parts: list[_Part]


class _Planner:
    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources, self.lines = sources, list[list[str]]()
        self.meta: dict[_Key, tuple[Kind, str, str | None]] = {}
        self.drafts: dict[_Key, _Draft] = {}
        self.pending: list[tuple[int, int, str, str, _Key | None]] = []
        self.headings = self.entry_decisions = self.stamps = 0
        self.code = self.head = bytearray()
        self.ends: dict[int, int] = {}

    def _note(self, kind: Kind, ident: str, title: str, date: str | None) -> _Key:
        self.meta.setdefault((kind, ident), (kind, title, date))
        return (kind, ident)

    def _log(self, date: str) -> _Key:
        return self._note("log", date, date, date)

    def _decision(self, title: str, date: str | None) -> _Key:
        return self._note("decision", f"{date or ''}/{_slug(title, 0)}", title, date)

    def _draft(self, key: _Key) -> _Draft:
        if (d := self.drafts.get(key)) is None:
            d = self.drafts[key] = _Draft(*self.meta[key], [])
        return d

    def _add(self, key: _Key, si: int, a: int, b: int) -> None:
        lines = self.lines[si]
        if a > b or not any(lines[k].strip() for k in range(a, b + 1)):
            return
        d = self._draft(key)
        if d.parts and (p := d.parts[-1])[3] is None and p[0] == si and p[2] + 1 == a:
            d.parts[-1] = (si, p[1], b, None)  # contiguous with the last part: one segment
        else:
            d.parts.append((si, a, b, None))

    def _link(self, host: _Key, si: int, i: int, key: _Key) -> None:
        self._draft(host).parts.append((si, i, i, key))

    def _report(self, si: int, i: int, kind: str, key: _Key | None = None, **kw: object) -> None:
        self.pending.append((si, i + 1, kind, _MESSAGES[kind].format(**kw), key))

    def plan_source(self, si: int, src: Source) -> None:
        lines = src.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if lines[-1] == "":
            lines.pop()
        self.lines.append(lines)
        heads = self._scan(si, lines)
        if src.date_hint:
            root = _Frame(0, self._log(src.date_hint), "log", True, src.date_hint)
        else:
            inbox = self._note("inbox", src.name, f"Inbox: {src.name}", None)
            root = _Frame(0, inbox, "inbox", False, None)
        stack, stamps = [root], self.stamps
        self._emit(si, root.target, 0, (heads[0][0] if heads else len(lines)) - 1, False)
        for n, (i, level, raw) in enumerate(heads):
            end = heads[n + 1][0] - 1 if n + 1 < len(heads) else len(lines) - 1
            while stack[-1].level >= level:
                stack.pop()
            self._emit(si, self._classify(si, i, level, raw, stack), i, end, True)
        if not lines:
            self._report(si, -1, "empty-source")
        elif not heads and not src.date_hint and (n := self.stamps - stamps):
            self._report(si, -1, "no-headings", n=n)
        elif not heads and not src.date_hint:
            self._report(si, -1, "no-structure", root.target)

    def _scan(self, si: int, lines: list[str]) -> list[tuple[int, int, str]]:
        """Mark fenced code and collect the ATX headings outside it."""
        n, heads, fence, opened = len(lines), list[tuple[int, int, str]](), "", 0
        self.code, self.head, self.ends = bytearray(n), bytearray(n), {}
        for i in [i for i, line in enumerate(lines) if line.lstrip(" \t")[:1] in ("#", "`", "~")]:
            line = lines[i]
            if fence:  # inside a fence: only its closing line matters
                if line.lstrip(" \t").startswith(fence) and not _FENCE.match(line)[2].strip():  # type: ignore[index]
                    self._fence(opened, i)
                    fence = ""
            elif m := _HEADING.match(line):
                heads.append((i, len(m[1]), _CLOSING_HASHES.sub("", m[2] or "").strip()))
                self.head[i] = len(m[1])
            elif (m := _FENCE.match(line)) and not (m[1][0] == "`" and "`" in m[2]):
                fence, opened = m[1], i
        if fence:
            self._report(si, opened, "unclosed-fence")
            self._fence(opened, n - 1)
        return heads

    def _fence(self, first: int, last: int) -> None:
        self.code[first : last + 1] = b"\x01" * (last + 1 - first)
        self.ends[first] = last

    def _classify(self, si: int, i: int, level: int, raw: str, stack: list[_Frame]) -> _Key:
        """The note a heading's section goes to; pushes the heading's frame."""
        self.headings += 1
        parent, text = stack[-1], _clean(raw[:300])  # bounded: the regexes below stay linear
        m = _HEAD_DATE.match(text)
        rest = text
        if m is None and (m := _TAIL_DATE.search(text)):  # the date last: "Session 3 — …"
            rest = text[: m.start()].strip(_TITLE_STRIP)
        elif m:
            rest = text[m.end() :].strip(_TITLE_STRIP)
        date = _match_date(m) if m else None
        if m and date is None:
            self._report(si, i, "invalid-date", raw=raw)
            rest = text

        def push(
            key: _Key, kind: str, absorbs: bool, day: str | None, hint: str | None = None
        ) -> _Key:
            stack.append(_Frame(level, key, kind, absorbs, day, hint))
            return key

        if parent.kind == "decision":
            return push(parent.target, "decision", True, date or parent.date)
        if (parent.hint == "decisions" and not parent.absorbing) or _reads_as_decision(rest):
            day = date or parent.date
            key = self._decision(_decision_title(rest) or f"Decisions {day or ''}".strip(), day)
            if parent.absorbing:
                self._link(parent.target, si, i, key)
            if day is None:
                self._report(si, i, "decision-undated", key, raw=raw)
            return push(key, "decision", True, day)
        if parent.absorbing:
            if parent.kind == "log" and date and date != parent.date:
                return push(self._log(date), "log", True, date)
            if parent.kind == "log":
                if _person_name(text, False, 2)[0] or _project_name(text, False):
                    self._report(si, i, "kept-in-log", parent.target, raw=raw)
                return push(parent.target, "log", True, parent.date)
            return push(parent.target, parent.kind, True, date or parent.date)
        if date:
            return push(self._log(date), "log", True, date)
        folded = " ".join(_PUNCT.sub("", text.casefold()).split())
        if hint := _CONTAINERS.get(folded):
            return push(parent.target, "container", False, None, hint)
        if folded in _USER_HEADINGS and parent.kind in ("inbox", "generic"):
            key = self._note("person", USER_NOTE, USER_TITLE, None)
            self._report(si, i, "user-note", key, raw=raw)
            return push(key, "person", True, None)
        if name := _project_name(text, parent.hint == "projects"):
            return push(self._note("project", _slug(name, 0), name, None), "project", True, None)
        name, heuristic = _person_name(text, parent.hint == "people", level)
        if name:
            key = push(self._note("person", _slug(name, 0), name, None), "person", True, None)
            if heuristic:
                self._report(si, i, "person-heuristic", key, raw=raw)
            return key
        return push(parent.target, "generic", False, None, parent.hint)

    def _emit(self, si: int, key: _Key, a: int, b: int, heading_first: bool) -> None:
        if key[0] == "log":
            self._emit_log(si, key, a, b)
        elif key[0] != "inbox":
            self._add(key, si, a, b)
        else:  # split inbox text at top-level lines that start with a date
            lines, code, start, cur = self.lines[si], self.code, a, key
            for i in range(a + 1 if heading_first else a, b + 1):
                line = lines[i]
                if code[i] or not line or line[0] in " \t" or not (m := _LINE_DATE.match(line)):
                    continue
                if (day := _match_date(m)) is not None:
                    self._run(si, cur, start, i - 1)
                    cur, start, self.stamps = self._log(day), i, self.stamps + 1
            self._run(si, cur, start, b)

    def _run(self, si: int, key: _Key, a: int, b: int) -> None:
        if key[0] == "log":
            return self._emit_log(si, key, a, b)
        for i, _last, lead in self._entries(si, a, b):
            if _reads_as_decision(lead):
                self._report(si, i, "undated-decision", key)
        self._add(key, si, a, b)

    def _emit_log(self, si: int, key: _Key, a: int, b: int) -> None:
        start = a
        for i, last, lead in self._entries(si, a, b):
            if _reads_as_decision(lead):
                self._add(key, si, start, i - 1)
                decision = self._decision(_decision_title(lead) or "Decision", key[1])
                self._link(key, si, i, decision)
                self._add(decision, si, i, last)
                self.entry_decisions, start = self.entry_decisions + 1, last + 1
        self._add(key, si, start, b)

    def _entries(self, si: int, a: int, b: int) -> Iterator[tuple[int, int, str]]:
        """Top-level entries in lines a..b: (first line, last line, lead paragraph)."""
        lines, code, head, i = self.lines[si], self.code, self.head, a
        while i <= b:
            line = lines[i]
            if code[i] or head[i] or not line.strip() or line[0] in " \t":
                i += 1
                continue
            mode = "item" if _LIST_ITEM.match(line) else "para"
            last, lead, lead_open, blank, k = i, [line], True, False, i + 1
            while k <= b and not head[k]:
                ln = lines[k]
                if not ln.strip():
                    if mode == "para":
                        break
                    blank, lead_open, k = True, False, k + 1
                    continue
                indented = ln[0] in " \t"
                if code[k]:  # a fence opener: part of a list item only when indented
                    if mode == "para" or not indented:
                        break
                    k = last = min(self.ends.get(k, k), b)
                    lead_open = False
                elif indented:
                    last = k
                    lead_open = lead_open and not _LIST_ITEM.match(ln.lstrip())
                    if lead_open:
                        lead.append(ln)
                elif _LIST_ITEM.match(ln):
                    if mode == "para" and not blank and lines[last].rstrip().endswith(":"):
                        mode = "list"  # "We decided:" takes the list that follows
                    if mode != "list" or blank:
                        break
                    last, lead_open = k, False
                elif blank:
                    break
                else:
                    last = k  # lazy continuation
                    if lead_open:
                        lead.append(ln)
                blank, k = False, k + 1
            yield i, last, " ".join(lead)
            i = last + 1

    def finish(
        self, existing: AbstractSet[str], folders: Mapping[str, str] | None = None
    ) -> MigrationPlan:
        taken, paths = {p.casefold() for p in existing}, dict[_Key, str]()
        where = FOLDERS | dict(folders or {})  # a vault's own folders (People/, Daily/)
        for key, d in self.drafts.items():
            if d.kind == "log":
                base = f"{where['log']}/{d.date}.md"
            elif d.kind == "decision":
                base = f"{where['decision']}/{d.date + '-' if d.date else ''}{_slug(d.title)}.md"
            else:
                name = key[1].removesuffix(".md") if d.kind == "inbox" else d.title
                base = f"{where[d.kind]}/{_slug(name)}.md"
            path, n = base, 1
            while path.casefold() in taken:
                n += 1
                path = f"{base[:-3]}-{n}.md"
            if n > 1:
                si, a = next(((p[0], p[1]) for p in d.parts if p[3] is None), (0, 0))
                self._report(si, a, "renamed", key, base=base, path=path)
            taken.add(path.casefold())
            paths[key] = path
        notes = sorted((self._build(k, d, paths) for k, d in self.drafts.items()), key=_PATH)
        names, inbox_lines = [s.name for s in self.sources], 0
        for note in (note for note in notes if note.kind == "inbox"):
            n = sum(1 for line in note.body.split("\n") if line.strip())
            name, first, _last = note.segments[0]
            self._report(names.index(name), first - 1, "inbox", ("inbox", name), n=n)
            inbox_lines += n
        self._mentions()
        uncertain = tuple(
            Uncertainty(names[si], line, kind, msg, paths.get(key) if key else None)
            for si, line, kind, msg, key in sorted(self.pending, key=lambda p: p[:4])
        )
        stats = MigrationStats(
            sources=len(self.sources),
            lines=sum(map(len, self.lines)),
            non_blank_lines=sum(1 for ls in self.lines for line in ls if line.strip()),
            headings=self.headings,
            notes=len(notes),
            notes_by_kind=dict.fromkeys(FOLDERS, 0) | Counter(note.kind for note in notes),
            decisions_from_entries=self.entry_decisions,
            inbox_lines=inbox_lines,
        )
        return MigrationPlan(tuple(notes), uncertain, stats)

    def _build(self, key: _Key, d: _Draft, paths: dict[_Key, str]) -> PlannedNote:
        out, segs, extracted, after_text = list[str](), list[Segment](), list[str](), False
        for si, a, b, link in d.parts:
            if link is not None:
                out.append(link_line(paths[link], self.drafts[link].title))
                extracted.append(paths[link])
                after_text = False
                continue
            lines, lo, hi = self.lines[si], a, b
            while not lines[lo].strip():
                lo += 1
            while not lines[hi].strip():
                hi -= 1
            if after_text:  # two separate stretches of text: one blank line between them
                while out and not out[-1].strip():
                    out.pop()
                out.append("")
                a = lo
            out.extend(lines[a : b + 1])
            segs.append((self.sources[si].name, lo + 1, hi + 1))
            after_text = True
        while out and not out[-1].strip():
            out.pop()
        out = out[next((n for n, line in enumerate(out) if line.strip()), len(out)) :]
        body = "\n".join(out)
        fm: dict[str, object] = {"title": d.title, "type": d.kind}
        if d.date:
            fm["date"] = d.date
        if d.kind == "decision":
            fm["status"] = "accepted"
        elif d.kind == "project":
            # the dump was tracking it: Active Projects lists it until a person says otherwise
            fm["status"] = _project_status(out[0] if out else "", out[1:])
        if key == ("person", USER_NOTE):  # the user's standing facts are current: listed first
            days = [x.date for x in self.drafts.values() if x.date]
            if days:
                fm["updated"] = max(days)
        fm["summary"], fm["tags"] = _summary(out, d.title), ["migrated"]
        refs = [f"{name}#L{a}" + (f"-L{b}" if b != a else "") for name, a, b in segs]
        if refs:
            fm["source"] = refs[0] if len(refs) == 1 else refs
        digest = hashlib.sha256(body.encode()).hexdigest()
        return PlannedNote(
            paths[key], d.kind, d.title, d.date, fm, body, tuple(segs), tuple(extracted), digest
        )

    def _mentions(self) -> None:
        """Report capitalised name pairs mentioned often that got no people note."""
        people = {k[1] for k in self.drafts if k[0] == "person"}
        counts, first = Counter[str](), dict[str, tuple[int, int]]()
        for si, lines in enumerate(self.lines):
            joined, pos, line = "\n".join(lines), 0, 0
            for m in _MENTION.finditer(joined):
                if m.start() and joined[m.start() - 1].isalnum():
                    continue  # inside a word
                counts[name := f"{m[1]} {m[2]}"] += 1
                if name not in first:
                    line, pos = line + joined.count("\n", pos, m.start()), m.start()
                    first[name] = (si, line)
        found = [n for n, c in counts.items() if c >= 3 and _slug(n, 0) not in people]
        texts = ["\n".join(lines) for lines in self.lines]
        found = [n for n in filter(_is_pair_name, found) if not _common_word(n.split()[0], texts)]
        for name in sorted(found, key=lambda n: (-counts[n], n))[:20]:
            self._report(*first[name], "name-mentions", name=name, n=counts[name])


def _common_word(word: str, texts: list[str]) -> bool:
    """Whether ``word`` is also written in lower case in the sources: a word ("Prefers
    Slack" at the start of a line, "prefers email" elsewhere), not a name."""
    pattern = re.compile(r"(?<!\w)" + re.escape(word.lower()) + r"(?!\w)")
    return any(pattern.search(t) for t in texts)


def _summary(body: list[str], title: str) -> str:
    for line in body:
        s = line.strip()
        if s.startswith(("#", "```", "~~~", _LINK_PREFIX, "---")):
            continue
        if s := _strip_prefixes(s):
            return _shorten(_first_sentence(s), SUMMARY_MAX)
    return _shorten(title, SUMMARY_MAX)


def plan_migration(
    sources: Sequence[Source],
    *,
    existing_paths: AbstractSet[str] = frozenset(),
    folders: Mapping[str, str] | None = None,
) -> MigrationPlan:
    """Split ``sources`` into planned notes (the rules are in the module docstring).
    ``folders`` maps a kind (``person``, ``log``...) to the vault's folder for it
    (``People``, ``Daily``), when it is not memvault's own name.

    Raises ValueError for empty or duplicate source names and a ``date_hint`` that is not
    YYYY-MM-DD.
    """
    names = [s.name for s in sources]
    if len(set(names)) != len(names) or not all(names):
        raise ValueError(f"source names must be unique and non-empty: {names!r}")
    for s in sources:
        if s.date_hint is not None and not _ISO.fullmatch(s.date_hint):
            raise ValueError(f"{s.name}: date_hint {s.date_hint!r} is not YYYY-MM-DD")
        if s.date_hint is not None:
            _dt.date.fromisoformat(s.date_hint)  # ValueError for a day that does not exist
    planner = _Planner(sources)
    for si, src in enumerate(sources):
        planner.plan_source(si, src)
    return planner.finish(existing_paths, folders)
