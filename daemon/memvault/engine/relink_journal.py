"""The relink journal: moves whose links are not all re-targeted yet.

A sync that moves notes journals the moves with the renames (one transaction), then
rewrites the links of every note that may link them. Two things leave the journal
behind:

- a kill in the middle: the next sync finishes the whole relink (every note that may
  link the moves, and MEMORY.md);
- a note that kept changing while memvault rewrote it (saved again and again, or held
  open for writing by another program), or that was no longer where the sync saw it
  (its folder renamed meanwhile), or that holds git's conflict markers (MEMORY.md too,
  ``Linker.update_memory``): it was left as it was, with the person's words.
  Its links still lead to the old paths. The journal stays, with the notes left
  ("waiting", in meta), and the next sync tries only those notes again (not
  waiting for one still busy); the daemon schedules that sync (``Watcher``), so a
  note whose saves stop gets its links without another event. ``memvault status``
  names the notes meanwhile. A waiting note renamed is waited for under its new name
  and a deleted one no more; a file of a waiting move moved again leads to where it
  is now (``follow``; the journal's rows are composed alike when journalled).

The journal of a sync that relinked everything is dropped for its own moves only:
another sync's (a long one let another in) stay.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memvault.engine import relink_links

if TYPE_CHECKING:
    from memvault.engine.catalogue import Catalogue
    from memvault.engine.linker import Linker
    from memvault.index.store import Store

log = logging.getLogger("memvault")

WAITING_KEY = "relink_waiting"  # meta: {"moves": {old: new}, "notes": [...]}, or ""


@dataclass(frozen=True, slots=True)
class Resumed:
    """What finishing a relink left behind did."""

    relinked: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def waiting(store: Store) -> tuple[dict[str, str], tuple[str, ...]]:
    """The moves and the notes left by a relink whose writes a note kept refusing."""
    raw = store.meta(WAITING_KEY)
    if not raw:
        return {}, ()
    try:
        kept = json.loads(raw)
        moves = {str(k): str(v) for k, v in dict(kept["moves"]).items()}
        return moves, tuple(str(n) for n in kept["notes"])
    except (ValueError, KeyError, TypeError, AttributeError):  # not ours: a full relink
        return {}, ()


def settle(
    store: Store, moves: Mapping[str, str], busy: Sequence[str], waiting_too: Sequence[str] = ()
) -> None:
    """After a relink of ``moves``: dropped from the journal when every note took its
    links; kept, with the notes left to try again, when some did not: ``busy``, which
    kept changing (said here), and ``waiting_too``, MEMORY.md left for git, which says
    why itself (``Linker.update_memory``) or waits for the next sync, queued at once (git
    changed the files as this one read them: a commit of Obsidian Git's)."""
    left = [*busy, *waiting_too]
    if not left:
        store.clear_relink(moves)
        if not store.pending_relink():
            store.set_meta(WAITING_KEY, "")
        return
    kept_moves, kept_notes = waiting(store)
    notes = sorted(set(kept_notes) | set(left))
    store.set_meta(WAITING_KEY, json.dumps({"moves": {**kept_moves, **moves}, "notes": notes}))
    if not busy:
        return
    log.warning(
        "links to moved files are not re-targeted yet in %d notes that kept changing, "
        "stayed open for writing in another program or moved meanwhile (%s): tried "
        "again at the next sync",
        len(busy),
        ", ".join(busy[:5]) + (", ..." if len(busy) > 5 else ""),
    )


def resume(store: Store, catalogue: Catalogue, linker: Linker, relinking: bool) -> Resumed:
    """Finish the relink the journal holds: only the notes left waiting when that is
    all it holds, every note that may link its moves (and MEMORY.md) after a kill."""
    pending = store.pending_relink()
    if not pending:
        return Resumed()
    if not relinking:  # switched off since: drop it
        store.clear_relink()
        store.set_meta(WAITING_KEY, "")
        return Resumed()
    kept_moves, notes = waiting(store)
    only = notes if notes and all(kept_moves.get(o) == n for o, n in pending.items()) else None
    if only is None:
        log.warning(
            "finishing the link repair of %d moved files that was interrupted", len(pending)
        )
    # a few moves, no map held (a CLI's sync): the store's link keys (relink_links)
    keyed = relink_links.few(pending, (), catalogue.holds_link_index())
    after = relink_links.now(store, pending) if keyed else catalogue.link_index()
    written_notes: set[str] = set()
    waited: set[str] = set()
    warnings: tuple[str, ...] = ()
    for layer in layers(pending):  # a file at one old path a layer: one "before" each
        before = (
            relink_links.journalled(store, layer) if keyed else catalogue.link_index_before(layer)
        )
        done = linker.relink(layer, before, after, only=only)
        written_notes.update(done.written)
        waited.update(done.waiting)
        warnings += tuple(done.problems)
        # a kill may have come before MEMORY.md was re-targeted; or it waited, holding
        # git's conflict markers (Linker.update_memory): its links follow once resolved
        if only is None or linker.config.memory.file in only:
            # the files written here differ from their rows: the sync's diff indexes them;
            # git's files looked at now, not at the last sync's start (a `git checkout
            # --theirs` since had this update wait for git, the journal then dropped)
            linker.look_at_git()
            memory = linker.update_memory(dict(layer), before, after)
            warnings += memory.warnings + memory.problems
            waited.update(memory.waiting)
    # a waiting note gone from disk stays while the index has it (moved or deleted: this
    # sync's diff tells which, and ``follow`` takes it along or drops it)
    left = sorted(n for n in waited if store.note(n) is not None)
    if left:
        store.set_meta(WAITING_KEY, json.dumps({"moves": pending, "notes": left}))
    else:
        store.clear_relink()
        store.set_meta(WAITING_KEY, "")
        if only is not None:
            log.info("links to moved files re-targeted in %d notes", len(written_notes))
    # a note tried in each layer says why once
    return Resumed(tuple(sorted(written_notes)), tuple(dict.fromkeys(warnings)))


def layers(moves: Mapping[str, str]) -> list[dict[str, str]]:
    """``moves`` in layers where no two moves lead to one path: a file moved twice while
    a note waited (``crew/`` -> ``team/`` -> ``squad/``) is journalled from both old
    paths, and a "before" index can hold it at one of them only."""
    out: list[dict[str, str]] = []
    taken: list[set[str]] = []  # each layer's new paths
    for old, new in sorted(moves.items()):
        for layer, news in zip(out, taken, strict=True):
            if new not in news:
                layer[old] = new
                news.add(new)
                break
        else:
            out.append({old: new})
            taken.append({new})
    return out


def follow(store: Store, moved: Mapping[str, str], deleted: Sequence[str]) -> None:
    """After a sync's moves and deletes: a waiting note renamed is waited for under its
    new name, one deleted is no longer; a waiting move's file moved again leads to where
    it is now (the journal's rows follow alike: ``Store.journal_relink``)."""
    kept_moves, notes = waiting(store)
    if not notes:
        return
    gone = set(deleted)
    now = sorted({moved.get(n, n) for n in notes if n not in gone})
    moves = {old: moved.get(new, new) for old, new in kept_moves.items()}
    if not now:  # nothing waits any more: the journal of those moves is done
        store.clear_relink(moves)
        store.set_meta(WAITING_KEY, "")
    elif (moves, now) != (kept_moves, list(notes)):
        store.set_meta(WAITING_KEY, json.dumps({"moves": moves, "notes": now}))
