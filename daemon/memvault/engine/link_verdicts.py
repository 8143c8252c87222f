"""Stored link verdicts that follow the files: the links of a name, resolved again when a
file of that name comes or goes.

A sync resolves the links of the notes it indexes. A note it does not read keeps the
verdicts stored when it was indexed, and those go stale when the files they name come
and go: a link into a deleted note stayed ``resolved`` to it, a name a second note took
stayed ``resolved`` where Obsidian says ``ambiguous`` (2,225 link rows on a real pull of
obsidian-help). Readers judge links live (``Linker.link_problems``, the context's
hops), but a fresh index must equal a kept one, and the rename's candidates and the
alias pass read the stored rows.

A link can lead to a file only when their last names are the same (``link_name``), or
through an alias of the file; so after a sync the links named by a file that came, went
or moved, or by an alias given or taken away, are resolved again against the link index
as the sync leaves it, and the verdicts that changed are written. The cost follows the
change: the links table's ``name`` column is indexed (index schema 7).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from memvault.core.changes import ChangeSet
from memvault.core.wikilinks import LinkIndex, Resolution, file_link_name, link_name
from memvault.engine.attachments import AttachmentChanges
from memvault.engine.catalogue import ADD_ONE_BY_ONE, Catalogue
from memvault.engine.stored_links import LinkLookup, answering
from memvault.index.store import Store

if TYPE_CHECKING:
    from memvault.engine.indexer import Indexer


class Changed(NamedTuple):
    """A stored (source, target) pair resolved otherwise now: as it was, as it is."""

    source: str
    target: str
    verdict: str
    resolved: str | None
    now: Resolution


@dataclass(frozen=True, slots=True)
class CameWent:
    """What a sync changes that can lead links elsewhere, seen before it applies it."""

    paths: frozenset[str]  # the files that came, went or moved (both sides)
    aliases: dict[str, tuple[str, ...]]  # the aliases of the notes that went, moved, changed
    later: tuple[str, ...]  # the notes whose aliases to read after: created, changed, moved


def before(
    link_index: Callable[[], LinkLookup], changes: ChangeSet, attachments: AttachmentChanges
) -> CameWent | None:
    """What ``changes`` can lead elsewhere, read before the sync applies them (None:
    nothing: a sync of only touched files)."""
    paths = {*changes.created, *changes.deleted, *attachments.seen, *attachments.gone}
    for old, new in (*changes.moved, *attachments.moves.items()):
        paths |= {old, new}
    went = [*changes.deleted, *(old for old, _ in changes.moved), *changes.modified]
    if not paths and not went:
        return None
    later = (*changes.created, *changes.modified, *(new for _, new in changes.moved))
    return CameWent(frozenset(paths), aliases_of(link_index(), went) if went else {}, later)


FOLLOWING = "links_following"  # meta: a sync changed files whose links are not resolved yet
RESOLVE_ALL = "links_resolve"  # meta: the next sync resolves every stored link once
# meta: every stored verdict was resolved by a memvault that keeps them (this one): an
# index an older one wrote may hold a stale verdict a sync that died left (found as set)
TRUSTED = "links_trusted"
# its value now; "1" was written by one whose bookkeeping took two paths differing only
# by case for one file (a twin that came left the links of its name as they were)
KEPT = "2"


def trusted(store: Store) -> bool:
    """Whether the stored verdicts are true to the files the index holds: no sync under
    way or dead since it changed files, none due to resolve them all, written by a
    memvault that keeps them so (``link_check`` reads them as they are then)."""
    return store.meta(TRUSTED) == KEPT and not store.meta(FOLLOWING) and not store.meta(RESOLVE_ALL)


class Following:
    """Whether the stored links followed the files the syncs changed. A sync that dies
    between the two (a kill, a full disk: a deleted note out of the index, the links of
    its name not resolved again) left them stale for good, since the next sync finds
    nothing changed. So meta ``links_following`` is set while a sync changes files and
    cleared when this process's syncs are all done and none failed; found set when no
    sync of this process is under way, a sync died in between, and the next follow
    resolves every link (as after the upgrade to schema 7), as it does for an index no
    memvault that keeps them wrote (meta ``links_trusted`` not ``KEPT``). Syncs may overlap
    (one let in by a reconcile stepping aside): it is cleared by the last to end, and
    when one was let in, every link is resolved by the next sync (the long one's
    indexer resolved its notes' links against the files as it began: a note the one let
    in deleted stayed their target)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._live = 0
        self._failed = False
        self._overlapped = False
        self._set = False  # set by this process: cleared when the syncs are done

    @contextmanager
    def sync(self) -> Iterator[None]:
        with self._lock:
            if not self._live and (self.store.meta(FOLLOWING) or self.store.meta(TRUSTED) != KEPT):
                self.store.set_meta(RESOLVE_ALL, "1")
                self.store.set_meta(FOLLOWING, "1")
                self._set = True
            self._live += 1
        done = False
        try:
            yield
            done = True
        finally:
            with self._lock:
                self._live -= 1
                self._failed |= not done
                if not self._live:
                    if self._overlapped and self._set and not self._failed:
                        self.store.set_meta(RESOLVE_ALL, "1")  # the next sync's follow
                    elif self._set and not self._failed:
                        self.store.set_meta(FOLLOWING, "")
                        self._set = False
                    self._failed = self._overlapped = False

    def changing(self, came_went: CameWent | None) -> None:
        """A sync is about to change what can lead links elsewhere."""
        with self._lock:
            if came_went is not None and not self._set:
                self.store.set_meta(FOLLOWING, "1")
                self._set = True
            # one let in beside a sync under way (a long one stepping aside) that changes
            # what links lead to: the other's notes were resolved against the files before
            self._overlapped |= came_went is not None and self._live > 1


def follow(
    catalogue: Catalogue,
    store: Store,
    came_went: CameWent | None,
    fresh: Collection[str],
    coming: Iterable[str] = (),
    carried: Collection[str] = (),
) -> tuple[str, ...]:
    """After a sync: the stored links ``came_went`` can have led elsewhere, resolved
    again against the files as it leaves them (and ``coming``: notes a long sync has
    still to index), but those of ``fresh`` (the notes it indexed) and of ``carried``
    (the notes it moved or relinked and kept: engine.carry_over), whose links of an
    alias given or taken away are resolved again all the same: they were resolved
    before the notes that came were read, not knowing their aliases (a review's fuzz:
    ``[[Annie]]`` kept its note beside a new note of that alias). The warnings for the
    links a file that came took from the note they led to (``taken``)."""
    every = bool(store.meta(RESOLVE_ALL))  # schema 7's upgrade, a sync that died: all
    if came_went is None and not every:  # (before the catalogue's rows: a sync in a new
        return ()  # process that finds nothing changed read all: 5 s of 7 at 50,000 notes)
    # every note indexed now (a first sync's): none is stale; a save never looks at all
    # of them (a look at 100,000 rows is ~10 ms: tests/test_save_cost.py), nor reads them
    indexed_all = not carried and catalogue.all_among(fresh)
    if indexed_all or every:  # every stored verdict true to the files after this
        if not indexed_all:
            resolve_all(store, catalogue.link_index_with(coming))
        if every:
            store.set_meta(RESOLVE_ALL, "")
        if store.meta(TRUSTED) != KEPT:
            store.set_meta(TRUSTED, KEPT)
        return ()
    assert came_went is not None  # (None with ``every`` returned above)
    coming = list(coming)
    # a few files came or went: the stored links of their names by the store's link keys
    links = catalogue.link_lookup(coming, many=len(came_went.paths) > ADD_ONE_BY_ONE)
    after = aliases_of(links, came_went.later)
    named = names(came_went.paths, came_went.aliases, after)
    given = alias_names(came_went.aliases, after)
    kept = {*fresh, *carried}
    changed = resolve_named(store, links, named - given, kept) + resolve_named(
        store, links, given, fresh
    )
    return taken(changed, links)


def made(
    following: Following, catalogue: Catalogue, indexer: Indexer, paths: list[str]
) -> tuple[str, ...]:
    """Index ``paths``, the MEMORY.md and folder notes memvault wrote after ``follow``;
    of those no file of the index before (a folder note made when its folder's section
    overflowed, a MEMORY.md made again), the stored links of their names resolved
    again, as of any file that came: ``[[people]]`` stayed stored resolved to
    ``other/people.md`` beside a new ``people/people.md``, which ``links check`` said
    nothing of once it no longer judged again every name two files share. The
    warnings for the links they took (``taken``)."""
    known = catalogue.link_lookup()
    came = [p for p in paths if p not in known]
    if came:  # a kill before they follow: every link is resolved by the next sync
        following.changing(CameWent(frozenset(came), {}, ()))
    indexer.index(paths)
    if not came:
        return ()
    links = catalogue.link_lookup()
    store = following.store
    return taken(resolve_named(store, links, {file_link_name(p) for p in came}, paths), links)


TAKEN_SOURCES = 3  # the linking notes a warning names (then "and N more")
TAKEN_SAID = 20  # warnings a sync gives of them, then one for the rest


def taken(changed: Iterable[Changed], links: LinkLookup) -> tuple[str, ...]:
    """Warnings for the links that led to a note still there and lead elsewhere now,
    or are ambiguous: a note of the same name came (``add`` in another folder, a note
    made in the linking note's folder, which Obsidian prefers too). Nothing in the note
    says so, and its meaning changed: one warning a link name and note, with the path
    link that keeps the old target. "Still there" is as spelt (``LinkIndex``'s
    membership): a note renamed in case only, or gone beside its case twin, is not, and
    takes nothing; a twin that came beside it takes the links spelt as the twin."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    there: dict[str, bool] = {}  # a note's membership asked once (a query: StoredLinks)
    for source, target, verdict, resolved, now in changed:
        if verdict != "resolved" or resolved is None:
            continue  # it was no link to a note
        if resolved not in there:
            there[resolved] = resolved in links
        if not there[resolved]:
            continue  # that note moved or went
        if now.verdict == "resolved" and now.path == resolved:
            continue  # (only the candidates it was chosen among changed)
        said = (
            f"now leads to {now.path}"
            if now.verdict == "resolved"
            else f"is now {now.verdict} ({', '.join(now.candidates)})"
        )
        groups.setdefault((target, resolved, said), []).append(source)
    out = []
    ordered = sorted(groups.items())
    for n, ((target, resolved, said), sources) in enumerate(ordered):
        if n == TAKEN_SAID:  # (a copy of a folder in the vault: each of its names)
            rest = sum(len(s) for _, s in ordered[TAKEN_SAID:])
            out.append(f"and {rest} more links whose name a note that came took (links check)")
            break
        where = ", ".join(sorted(sources)[:TAKEN_SOURCES])
        if len(sources) > TAKEN_SOURCES:
            where += f" and {len(sources) - TAKEN_SOURCES} more"
        keep = resolved[:-3] if resolved.lower().endswith(".md") else resolved
        out.append(
            f"[[{target}]] in {where} {said}, no longer {resolved}: a note of that name "
            f"came; write [[{keep}]] to keep the link where it was"
        )
    return tuple(out)


def aliases_of(links: LinkLookup, paths: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The aliases ``links`` holds for ``paths`` (those that have any)."""
    return {p: a for p in paths if (a := links.aliases_of(p))}


def names(
    paths: Iterable[str], before: dict[str, tuple[str, ...]], after: dict[str, tuple[str, ...]]
) -> set[str]:
    """The link names a sync can have led elsewhere: those of ``paths`` (the files that
    came, went or moved), and the aliases given or taken away (``before`` and ``after``
    the sync, by note path: a moved note's are under its old path before, its new one
    after, so they count: they lead to its new path)."""
    return {file_link_name(p) for p in paths} | alias_names(before, after)


def alias_names(before: dict[str, tuple[str, ...]], after: dict[str, tuple[str, ...]]) -> set[str]:
    """The link names of the aliases given or taken away (``names``)."""
    out: set[str] = set()
    for path in set(before) | set(after):
        old, new = set(before.get(path, ())), set(after.get(path, ()))
        if old != new:
            out |= {link_name(a) for a in old | new}
    return out


def resolve_named(
    store: Store, links: LinkLookup, named: Iterable[str], fresh: Collection[str] = ()
) -> list[Changed]:
    """Resolve again against ``links`` every stored link of the ``named`` names but
    those of ``fresh`` (notes this sync indexed, against the same files) and write the
    verdicts that changed; the (source, target) pairs that changed."""
    wanted = set(named)
    rows = store.links_named(wanted) if wanted else []
    return _write_changed(store, links, (r for r in rows if r[0] not in fresh))


def resolve_all(store: Store, links: LinkIndex) -> int:
    """Resolve every stored link again (the first sync after the upgrade to index schema
    7: verdicts stored before may be stale), page by page; how many pairs changed."""
    changed = 0
    for page in store.links_by_page():
        rows = {
            (r.source, r.target, r.verdict, r.resolved, json.dumps(list(r.candidates)))
            for r in page
        }
        changed += len(_write_changed(store, links, sorted(rows, key=lambda r: (r[0], r[1]))))
    return changed


def _write_changed(
    store: Store, links: LinkLookup, rows: Iterable[tuple[str, str, str, str | None, str]]
) -> list[Changed]:
    out: list[Changed] = []
    rows = list(rows)
    links = answering(links, ((r[1], r[0]) for r in rows))  # (one lookup for them all)
    for source, target, verdict, resolved, candidates in rows:
        res = links.resolve(target, source)
        if (res.verdict, res.path, list(res.candidates)) != (
            verdict,
            resolved,
            json.loads(candidates),
        ):
            out.append(Changed(source, target, verdict, resolved, res))
    if out:
        with store.transaction() as conn:
            store.set_link_verdicts(
                conn,
                [(c.source, c.target, c.now.verdict, c.now.path, c.now.candidates) for c in out],
            )
    return out
