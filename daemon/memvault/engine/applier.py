"""A sync's changes applied to the index and MEMORY.md (steps 3 to 6 of ``Engine.sync``).

``Engine.sync`` observes what is on disk and compares it with the index (a
``ChangeSet``); ``Applier.apply`` then makes the index and the vault follow it:

3. moves of notes and of attachments: rows renamed (vectors stay) and the moves
   journalled in the same transaction, then links re-targeted (``Linker.relink``);
4. deletes: rows, FTS entries and vectors dropped;
5. created, modified and relinked notes indexed (a relinked note whose only change
   is its links' targets carried over, ``engine.carry_over``); a long sync (a full
   reconcile, more notes than one batch) steps aside between its batches for the
   syncs and writes waiting (``long_syncs``: per long sync in flight, the notes it
   has still to index; a sync let in meanwhile links into those too);
6. MEMORY.md and folder notes, compare-and-swap, only when something changed; the
   relink journal followed and settled.

It runs under the engine's lock (``TurnLock``), called by ``Engine.sync`` alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memvault.config import VaultConfig
from memvault.core.changes import ChangeSet
from memvault.core.relink import Relinked as Rewrite
from memvault.core.results import SyncReport
from memvault.core.wikilinks import LinkIndex
from memvault.engine import link_verdicts as verdicts
from memvault.engine import relink_journal, relink_links
from memvault.engine.attachments import AttachmentChanges, Attachments
from memvault.engine.carry_over import CarryOver
from memvault.engine.catalogue import Catalogue
from memvault.engine.embedding import Embedding
from memvault.engine.indexer import BATCH_NOTES, Indexed, Indexer, Progress
from memvault.engine.linker import Linker, MemoryWritten
from memvault.engine.turns import TurnLock
from memvault.index.store import Store
from memvault.vault.files import VaultFS


@dataclass(eq=False)  # a collaborator, not a value
class Applier:
    """Steps 3 to 6 of a sync, over the engine's collaborators (the engine makes it)."""

    config: VaultConfig
    fs: VaultFS
    store: Store
    catalogue: Catalogue
    following: verdicts.Following
    attachments: Attachments
    embedding: Embedding
    indexer: Indexer
    carry_over: CarryOver
    linker: Linker
    lock: TurnLock
    # per long sync in flight (they may interleave), the notes it has still to index
    long_syncs: list[set[str]] = field(default_factory=list)

    def apply(
        self,
        changes: ChangeSet,
        progress: Callable[[Progress], None] | None,
        attachments: AttachmentChanges | None = None,
        *,
        full: bool = False,
    ) -> SyncReport:
        memory_file = self.config.memory.file
        relinked: list[str] = []
        kept_changing: list[str] = []  # notes that kept changing: their links are tried again
        edits: dict[str, tuple[str, Rewrite]] = {}  # relinked notes: the text read, the rewrite
        warnings: list[str] = []
        attachments = attachments or AttachmentChanges()
        moves = {**dict(changes.moved), **attachments.moves}  # notes and attachments
        came_went = verdicts.before(self.catalogue.link_lookup, changes, attachments)
        self.following.changing(came_went)
        if changes:
            # cleared until MEMORY.md is brought up to date: a kill in between is healed
            self.store.set_meta("memory_synced", "")
            self.linker.rows_changing()
        before: LinkIndex | None = None
        after: LinkIndex | None = None
        if moves or changes.passed:  # passed: names a note had between two looks
            # a few moves, no map held: the files under the keys their links look up
            few = relink_links.few(moves, changes.passed, self.catalogue.holds_link_index())
            keyed = (
                relink_links.before_moves(
                    self.store, moves, changes.passed, attachments.seen, attachments.gone
                )
                if few
                else None
            )
            before = keyed or self.catalogue.link_index()
            relinking = self.config.vault.update_links_on_rename
            with self.store.transaction() as conn:
                for old, new in changes.moved:
                    self.store.rename_note(conn, old, new)
                self.attachments.record(conn, attachments)
                if relinking:  # journalled with the renames, before the first rewrite
                    self.store.journal_relink(conn, moves)
            if moves or attachments:  # (a name that only passed moved no file it holds)
                self.catalogue.files_changed()
            after = (
                relink_links.after_moves(self.store, moves, keyed)
                if keyed is not None
                else self.catalogue.link_index()
            )
            if relinking:
                relinked, problems, edits, kept_changing = self.linker.relink(
                    moves, before, after, changes.created + changes.modified, changes.passed
                )
                warnings += problems
        elif attachments:
            with self.store.transaction() as conn:
                self.attachments.record(conn, attachments)
            self.catalogue.files_changed()
        deleted_labels: list[int] = []
        with self.catalogue.changing(set(changes.deleted) | set(moves) | set(moves.values())):
            if changes.deleted:
                with self.store.transaction() as conn:
                    for path in changes.deleted:
                        deleted_labels += self.store.delete_note(conn, path)
        if changes.deleted:
            self.catalogue.files_changed()
        self.embedding.forget(deleted_labels)
        # a sync let in by a reconcile stepping aside sees the notes it has still to index
        pending = frozenset().union(*self.long_syncs) if not full else frozenset()
        # a note whose only change is its links' targets, a note moved under its own name:
        # rows carried over (engine.carry_over), not parsed and chunked again; after the
        # deletes, their links resolved as the indexer's are (with the notes still to come)
        carried = (
            self.carry_over.index(edits, changes.moved, coming=set(changes.created) | pending)
            if edits or changes.moved
            else set()
        )
        touched = {*changes.created, *changes.modified, *(new for _, new in changes.moved)}
        todo = sorted(touched.union(relinked) - carried)
        # a long one (a full reconcile, a pull's batch) steps aside between its batches
        long = full or len(todo) > BATCH_NOTES
        notes = [p for p in todo if p != memory_file]  # progress counts notes, not MEMORY.md
        indexed = (
            self._index(notes, progress)
            if long
            else self.indexer.index(notes, progress, coming=pending)  # links into those too
        )
        for waiting in self.long_syncs:  # a long sync stepped aside: these are done
            waiting.difference_update(notes)
        indexed = indexed.plus(self.indexer.index([memory_file] if len(notes) < len(todo) else []))
        warnings += indexed.warnings
        if changes.deleted or moves:
            self.catalogue.files_changed()
        elif changes.created:  # a save of new notes: they join the link index
            self.catalogue.files_added(changes.created)
        warnings += verdicts.follow(  # stored links that files which came and went lead on
            self.catalogue, self.store, came_went, set(todo), pending, carried
        )
        written = MemoryWritten()
        # mid-reconcile only a change is written (MEMORY.md's own event changes nothing)
        if changes or moves or (not pending and not self.store.meta("memory_synced")):
            written = self.linker.update_memory(moves, before, after, pending, whole=full)
            reindex = ([memory_file] if written.memory else []) + list(written.folder_notes)
            if reindex:  # one memvault made (a folder note) is a file that came
                warnings += verdicts.made(self.following, self.catalogue, self.indexer, reindex)
            if written.memory and self.fs.written(memory_file) is None:
                # saved over (an editor's stale copy) before the index read it back: the
                # copy is the index's now, and its event finds nothing changed; brought up
                self.store.set_meta("memory_synced", "")
        if moves or changes.deleted:  # notes waiting for their links: moved, deleted
            relink_journal.follow(self.store, moves, changes.deleted)
        if moves and self.store.pending_relink():  # every link follows, MEMORY.md's too,
            # but in the notes that kept changing
            relink_journal.settle(self.store, moves, kept_changing, written.waiting)
        if deleted_labels:
            self.embedding.maybe_compact()
        return SyncReport(  # notes: MEMORY.md is neither created nor modified as a note
            created=tuple(p for p in changes.created if p != memory_file),
            modified=tuple(p for p in changes.modified if p != memory_file),
            deleted=changes.deleted,
            moved=changes.moved,
            attachments_moved=tuple(sorted(attachments.moves.items())),
            embedded_chunks=0,
            reused_chunks=indexed.kept,
            relinked=tuple(relinked),
            memory_written=written.memory,
            folder_notes_written=written.folder_notes,
            skipped=indexed.skipped,
            warnings=tuple(warnings) + written.warnings,
            problems=written.problems,
        )

    def _index(self, todo: list[str], progress: Callable[[Progress], None] | None) -> Indexed:
        """A long sync's indexing: batch by batch, stepping aside between batches
        (progress is reported there, outside the lock) for the syncs and writes waiting."""
        mine = set(todo)
        self.long_syncs.append(mine)

        def pause(done: Sequence[str], p: Progress) -> None:
            for waiting in self.long_syncs:  # mine, and any other long one waiting
                waiting.difference_update(done)
            self.lock.step_aside(None if progress is None else lambda: progress(p))

        try:
            # a note a sync let in meanwhile indexed (its own change, a relinked note's
            # event) has left ``mine``: not read and parsed twice
            return self.indexer.index(todo, progress, pause=pause, wanted=mine.__contains__)
        finally:
            self.long_syncs = [s for s in self.long_syncs if s is not mine]  # not by value
