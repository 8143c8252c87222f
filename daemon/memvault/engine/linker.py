"""Links and the index files: relinking after moves, MEMORY.md and folder notes, the
link check.

``Linker`` writes only through ``VaultFS``'s compare-and-swap; it reports which
files it wrote, and the engine has them re-indexed.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memvault.core import memory_md
from memvault.core.changes import Seen, suspects
from memvault.core.notes import parse_note
from memvault.core.report import LinkProblem
from memvault.core.text import NotText
from memvault.core.wikilinks import LinkIndex, relink
from memvault.errors import NoteNotFound, WriteConflict

if TYPE_CHECKING:
    from memvault.config import VaultConfig
    from memvault.engine.catalogue import Catalogue
    from memvault.index.store import Store
    from memvault.vault.files import VaultFS

log = logging.getLogger("memvault")


@dataclass(frozen=True, slots=True)
class MemoryWritten:
    """What one MEMORY.md update did."""

    memory: bool = False  # MEMORY.md was written
    folder_notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


class Linker:
    """Keeps links true and MEMORY.md (with its folder notes) in line with the catalogue."""

    def __init__(self, config: VaultConfig, fs: VaultFS, store: Store, catalogue: Catalogue):
        self.config = config
        self.fs = fs
        self.store = store
        self.catalogue = catalogue

    # -- relinking after moves -----------------------------------------------------------------

    def relink(
        self, moves: dict[str, str], before: LinkIndex, after: LinkIndex
    ) -> tuple[list[str], list[str]]:
        names = set()
        for old, new in moves.items():
            for p in (old, new):
                base = p.rsplit("/", 1)[-1]
                names |= {base, base.removesuffix(".md")}
        candidates = self.store.sources_linking(moves, names) | set(moves.values())
        candidates.discard(self.config.memory.file)  # MEMORY.md: update_memory re-targets it
        reverse = {new: old for old, new in moves.items()}
        changed, problems = [], []
        for source in sorted(candidates):
            src_old = reverse.get(source, source)
            try:
                written, _ = self.fs.update_text(
                    source, _relinker(src_old, source, before, after, moves)
                )
            except (NoteNotFound, NotText):
                continue
            except WriteConflict as exc:
                problems.append(str(exc))
                continue
            if written:
                changed.append(source)
        return changed, problems

    # -- MEMORY.md -----------------------------------------------------------------------------

    def update_memory(
        self, moves: dict[str, str], before: LinkIndex | None, after: LinkIndex | None
    ) -> MemoryWritten:
        """Recompute MEMORY.md and the folder notes; write them (CAS) only if they change."""
        cfg = self.config.memory
        rel = cfg.file
        owned = self.store.owned_lines()
        seen = set(json.loads(self.store.meta("sections_seen") or "[]"))
        catalogue = [
            memory_md.CatalogueEntry(n.path, n.title, n.summary, n.frontmatter, n.mtime_ns)
            for n in self.catalogue.notes().values()
        ]
        resolve = self.catalogue.resolver(rel)

        rewrite = None
        if moves and before is not None and after is not None:

            def rewrite(text: str) -> str:
                return relink(text, rel, rel, before, after, moves)

        results: list[memory_md.MemoryUpdate] = []

        def change(text: str | None) -> str:
            update = memory_md.update_memory(
                text,
                catalogue,
                cfg.sections,
                owned,
                seen,
                resolve=resolve,
                rewrite=rewrite,
                restore_deleted=cfg.restore_deleted_sections,
            )
            results.append(update)
            return update.text

        problems: list[str] = []
        written = False
        try:
            if self.fs.stat(rel) is None:
                text = change(None)
                self.fs.create(rel, text)
                written = True
            else:
                written, _ = self.fs.update_text(rel, change)
        except (memory_md.MarkerError, WriteConflict, NotText) as exc:
            self._keep_problems([(rel, f"left untouched: {exc}", "memory")])
            return MemoryWritten(problems=(f"{rel} left untouched: {exc}",))
        update = results[-1]
        problems += list(update.problems)
        self._keep_problems([(rel, p, "note") for p in problems])
        self.store.add_owned_lines(update.owned)
        self.store.set_meta("sections_seen", json.dumps(sorted(seen | set(update.present))))
        self.store.set_meta("sections_missing", json.dumps(list(update.missing)))
        self.store.set_meta("memory_synced", "1")
        folder_written = self._update_folder_notes(update.overflow, catalogue)
        return MemoryWritten(written, tuple(folder_written), tuple(problems))

    def _keep_problems(self, problems: list[tuple[str, str, str]]) -> None:
        """Keep MEMORY.md's problems until the next update (written only when they
        change: an idle sync writes nothing)."""
        value = json.dumps(problems)
        if (self.store.meta("memory_problems") or "[]") != value:
            self.store.set_meta("memory_problems", value)

    def _update_folder_notes(
        self,
        overflow: dict[str, tuple[memory_md.CatalogueEntry, ...]],
        catalogue: list[memory_md.CatalogueEntry],
    ) -> list[str]:
        written = []
        for rule in self.config.memory.sections:
            path = memory_md.folder_note_path(rule.folder)
            exists = self.fs.stat(path) is not None
            if rule.folder not in overflow and not exists:
                continue
            # the folder note lists every note of the folder, whatever the filter
            entries = memory_md.sort_entries(
                [
                    e
                    for e in catalogue
                    if e.path.startswith(rule.folder + "/") and not memory_md.is_folder_note(e.path)
                ],
                rule.order,
            )
            label = rule.folder.rsplit("/", 1)[-1]
            try:
                if not exists:
                    self.fs.create(
                        path, memory_md.render_folder_note(None, rule.folder, entries, label)
                    )
                    written.append(path)
                else:
                    changed, _ = self.fs.update_text(
                        path, functools.partial(_render_folder, rule.folder, entries, label)
                    )
                    if changed:
                        written.append(path)
            except (memory_md.MarkerError, WriteConflict, NotText) as exc:
                log.warning("%s left untouched: %s", path, exc)
        return written

    # -- links -----------------------------------------------------------------------------------

    def link_problems(self, include_alias: bool = True) -> list[LinkProblem]:
        """Unresolved and ambiguous links (and alias-only ones), true to the disk now.

        Notes the index holds unchanged are read from the links table; notes
        changed since the last sync are parsed afresh, so the answer never
        depends on whether a sync ran.
        """
        scan = self.fs.scan()
        known = self.store.manifest()
        seen = {p: Seen(s.size, s.mtime_ns) for p, s in scan.notes.items()}
        stale = set(suspects(known, seen))
        rows = {n.path: n for n in self.store.notes() if n.path in seen and n.path not in stale}
        aliases = {p: n.aliases for p, n in rows.items() if n.aliases}
        fresh: dict[str, list[tuple[int, str]]] = {}
        for path in sorted(stale):
            try:
                note = parse_note(path, self.fs.read(path).decoded.text)
            except (NoteNotFound, NotText, OSError):
                continue
            if note.aliases:
                aliases[path] = note.aliases
            fresh[path] = [(link.line, link.target) for link in note.links]
        idx = LinkIndex(list(seen) + sorted(scan.attachments), aliases)
        links = [(r.source, r.line, r.target) for r in self.store.links() if r.source in rows]
        links += [(src, line, target) for src, items in fresh.items() for line, target in items]
        out = []
        for source, line, target in sorted(links):
            res = idx.resolve(target, source)
            if res.verdict == "resolved" or (res.verdict == "alias" and not include_alias):
                continue
            out.append(LinkProblem(source, line, target, res.verdict, res.candidates))
        return out


def _relinker(
    old: str, new: str, before: LinkIndex, after: LinkIndex, moves: dict[str, str]
) -> Callable[[str], str]:
    def change(text: str) -> str:
        return relink(text, old, new, before, after, moves)

    return change


def _render_folder(
    folder: str, entries: Sequence[memory_md.CatalogueEntry], label: str, text: str
) -> str:
    return memory_md.render_folder_note(text, folder, entries, label)
