"""Writes for agents and people: add a note from a template, append to today's log.

``Writer`` only writes the file (compare-and-swap, never overwriting unless
asked); the engine runs it under its lock and syncs the path at once, so
MEMORY.md and the index are current when the call returns.

An update keeps every word a person wrote unless the agent names the words it
replaces (``core.note_update``): ``update`` sets the fields given and adds ``body``
at the note's end; with ``section`` only the text under that heading is replaced.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.core import compose, note_size
from memvault.core.note_update import append_body, replace_section
from memvault.core.results import NoteRequest
from memvault.errors import BadRequest, NoteExists, NoteNotFound, checking_request
from memvault.vault.files import normalize_rel
from memvault.vault.paths import spelt_in
from memvault.vault.template import shipped_template

if TYPE_CHECKING:
    from memvault.config import VaultConfig
    from memvault.engine.catalogue import Catalogue
    from memvault.vault.files import VaultFS

MAX_TEXT = 1_000_000  # characters accepted for a note body
MAX_LOG_ENTRY = compose.MAX_LOG_ENTRY  # (core/compose: the MCP tool's schema says it)


@dataclass(frozen=True, slots=True)
class Wrote:
    """A write's outcome: the note's path, whether it was created, and whether anything
    was written (False: the note held it already, the file untouched)."""

    path: str
    created: bool
    written: bool = True
    note: str | None = None  # the note is long now (core/note_size.write_said)


class Writer:
    """add_note and append_log over the vault's files."""

    def __init__(
        self,
        config: VaultConfig,
        fs: VaultFS,
        catalogue: Catalogue,
        clock: Callable[[], dt.datetime] | None = None,
    ):
        self.config = config
        self.fs = fs
        self.catalogue = catalogue  # the notes' titles, as the index has them
        self.clock = clock or (lambda: dt.datetime.now().astimezone())

    def _template(self, kind: str) -> str:
        """The vault's template for ``kind`` (memvault's own when the vault's is one
        memvault shipped before, unchanged, or is missing)."""
        try:
            data = (self._templates() / f"{kind}.md").read_bytes()
        except OSError:
            data = None
        text = shipped_template(f"templates/{kind}.md", data)
        if text is None:
            return compose.FALLBACK_TEMPLATES[kind]
        return text

    def _templates(self) -> Path:
        """``templates/``, or the vault's own folder of that name in another case
        (`Templates/`: ``init`` lays memvault's templates there, never in a twin)."""
        return self.fs.root / (spelt_in(str(self.fs.root), "templates", dirs=True) or "templates")

    def add_note(self, note: NoteRequest) -> Wrote:
        """Create a note from the vault's template; say its path, whether it was created
        and whether anything was written (an update whose body the note holds already
        writes nothing). An existing note is changed only with ``update`` (``body`` added at its
        end) or ``section`` (the heading whose text ``body`` replaces, added when the
        note has none by that name). ``logs`` is a day's log (logs/<date>.md, titled
        with its date): the day ``title`` is (YYYY-MM-DD), else today's for a title
        naming no day or today among its words; another day among words, a day in
        another form, or no real day is refused (``compose.log_day``). A ``body`` for it
        is refused, as its entries go in a line at a time (``append_log``)."""
        category, title, summary, body, section = (
            note.category,
            note.title,
            note.summary,
            note.body,
            note.section,
        )
        now = self.clock()
        with checking_request():  # the request's values (core's checks raise ValueError)
            if category not in compose.CATEGORIES:
                raise BadRequest(
                    f"category must be one of {', '.join(compose.CATEGORIES)}, not {category!r}"
                )
            title = compose.clean_title(title)
            if body is not None and len(body) > MAX_TEXT:
                raise BadRequest(f"the body is longer than {MAX_TEXT} characters")
            compose.check_text("summary", summary or "")
            compose.check_text("body", body or "")
            if section is not None:
                section = " ".join(section.lstrip("#").split())
                if not section or len(section) > 200:
                    raise BadRequest("a section is a heading of 1 to 200 characters")
                compose.check_text("section", section, controls=True)
                if body is None:
                    raise BadRequest("a section is replaced by a body: give the body")
            values = dict(note.fields or {})
            if summary is not None:
                values["summary"] = " ".join(summary.split())
            compose.check_fields(values)  # a field's name or value (compose.InvalidField)
            day = now.date().isoformat()
            if category == "logs":  # that day's log, the title a day; today's, a title not one
                day = compose.log_day(title, day)
            path = compose.note_path(category, title, day)  # ("???": no file name)
        path = self.config.folder(category) + path[len(category) :]  # the vault's own folder
        path = self._named(category, self.fs.spelt(normalize_rel(path)), title)
        if category == "logs" and body is not None:
            # a day's log is its date and its template's headings, its entries a line at a
            # time under them: a body would take their place (a person's entries among
            # them), and on a new day it would head the log with the title, not the date
            raise BadRequest(
                f"a day's log ({path}) takes no body: its entries go in a line at a time, "
                "under its date, with `memvault log`, MCP memory_log or POST /log (e.g. "
                f"{(title + ': ' + ' '.join(body.split()))[:80]!r}); with category logs, "
                "add sets only the day's summary and fields"
            )
        cap = self.config.vault.max_note_bytes
        if self.fs.stat(path) is not None:
            if not note.update and section is None:
                raise NoteExists(f"{path} already exists", path, updatable=True)
            now_text = [""]  # the text the swap wrote (its last turn, after a person's save)

            def change(text: str) -> str:
                text = compose.set_fields(text, values)
                if body is not None and section is not None:
                    with checking_request():  # a heading the note has twice (NoSuchHeading)
                        text = replace_section(text, section, body)
                elif body is not None:
                    text = append_body(text, body)  # every word already there stays
                now_text[0] = text
                return text

            written, _ = self.fs.update_text(path, change)
            return Wrote(path, False, written, note_size.write_said(path, title, now_text[0], cap))
        kind = compose.CATEGORIES[category]
        named = day if category == "logs" else title  # a day's log is titled as `log` titles it
        text = compose.fill(self._template(kind), named, day, now.strftime("%H:%M"))
        text = compose.set_fields(compose.strip_hints(text), values)
        if body is not None and section is not None:
            text = replace_section(compose.replace_body(text, title, ""), section, body)
        elif body is not None:
            text = compose.replace_body(text, title, body)
        self.fs.create(path, text)
        return Wrote(path, True, note=note_size.write_said(path, title, text, cap))

    def _named(self, category: str, path: str, title: str) -> str:
        """The note ``path`` names: in people/ and projects/ (one note per person or
        project), the one already there under another spelling of its name (ß never
        as ss: Masse and Maße are two words) — the title
        as Obsidian names a file ("people/Sarah Chen.md"), another case ("Alice.md"),
        the name ``memvault migrate`` made ("con-oneill.md" for "Con O'Neill"), or in a
        subfolder — so that ``add`` finds it instead of making a second note; else the
        one note of that folder titled ``title`` (``People/Ana.md`` whose title is "Ana
        Pérez", as the index has it: ``get "Ana Pérez"`` reads that note too)."""
        if category not in ("people", "projects") or self.fs.stat(path) is not None:
            return path
        folder = self.fs.spelt(self.config.folder(category))  # (People/ on a Mac's disk)
        want = compose.name_key(posixpath.basename(path)[:-3], sharp_s=False)
        may = compose.key_may_be(want)  # spelt only when it may match: a folder's 1,000s
        same = [
            rel
            for rel in sorted(self.fs.scan(folder).notes)
            if may(name := posixpath.basename(rel)[:-3])
            and compose.name_key(name, sharp_s=False) == want
        ]
        if same:
            return same[0]
        # the titles compared as the names above (ß kept apart from ss), the title as a
        # whole ("AC/DC" names no folder; Catalogue.titled would read it as one)
        inside, want = folder.casefold() + "/", compose.name_key(title, sharp_s=False)
        may = compose.key_may_be(want)
        titled = sorted(
            rel
            for rel, named in self.catalogue.titles(folder)  # no row made: path and title
            if rel.casefold().startswith(inside)
            and want
            and may(named or "")
            and compose.name_key(named or "", sharp_s=False) == want
            and self.fs.stat(rel) is not None
        )
        return titled[0] if len(titled) == 1 else path

    def append_log(self, text: str) -> Wrote:
        """Add ``- HH:MM text`` to today's log (created from the template, without its
        hints), after the day's last entry (``compose.insert_log_entry``); say its path,
        whether it was created, and whether the line was written (not when the day holds
        it already at this minute: an agent's retried call)."""
        line = " ".join((text or "").split())
        if not line:
            raise BadRequest("nothing to log")
        if len(line) > MAX_LOG_ENTRY:
            raise BadRequest(
                f"nothing was logged: a log entry is one line of the day's log, and this one "
                f"is {len(line):,} characters (at most {MAX_LOG_ENTRY:,}); keep a long text "
                "in a note (`memvault add projects TITLE --body -`, MCP memory_write) and log "
                "a line naming it"
            )
        with checking_request():
            compose.check_text("log entry", line)
        now = self.clock()
        day = now.date().isoformat()
        path = f"{self.config.folder('logs')}/{day}.md"
        entry = f"- {now:%H:%M} {line}"
        template = self._template("daily-log")
        if self.fs.stat(path) is None:
            base = compose.strip_hints(compose.fill(template, day, day, now.strftime("%H:%M")))
            try:
                self.fs.create(path, compose.insert_log_entry(base, entry))
                return Wrote(path, True)
            except NoteExists:
                pass  # created meanwhile: append below
        hints = compose.hint_texts(compose.fill(template, day, day, now.strftime("%H:%M")))
        try:
            written, _ = self.fs.update_text(
                path, lambda t: compose.insert_log_entry(t, entry, hints)
            )
        except NoteNotFound:
            raise NoteNotFound(f"{path} vanished while memvault appended to it") from None
        return Wrote(path, False, written)
