"""What a read answering from the index as it is misses of this copy's notes, said (a
warning on the ``memvault`` log, and ``Vault.stale``) by ``backends.open_backend`` at a
read's open: beside a holder that did not let go of the vault (``say_missed``), or over a
team's index in PostgreSQL that no writer holds now (``say_unkept``). Split from
backends.py, which decides where a call goes; these read the engine's index and files."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memvault.engine.changed_here import ChangedHere

log = logging.getLogger("memvault")


def unkept_here(engine: Any) -> tuple[str | None, ChangedHere | None]:
    """A query's open with no daemon over a team's index in PostgreSQL: with no writer
    running, what its answers miss (``say_unkept``, said now); with one, the notes this
    clone changed, for each search and context to check (``changed_by_git``), unless this
    copy's own lock is held (the writer runs here: a ``memvault sync``; git's "push here,
    pull there" would be wrong advice). Neither over SQLite's index."""
    from memvault.vault.lock import lock_holder

    who = getattr(engine.store, "writer", None)
    if who is None:
        return None, None
    if who() is None:
        return say_unkept(engine), None
    if lock_holder(engine.root) is not None:  # the writer is on this copy (a sync here)
        return None, None  # its notes are this copy's: nothing waits for a push and pull
    return None, changed_by_git(engine)


def changed_by_git(engine: Any) -> ChangedHere:
    """The notes this clone holds otherwise than the commit the team's index was written
    from (meta ``vault_commit``; its upstream when this clone lacks that commit): changed
    since their merge base, staged, edited or untracked (``gitstate.not_pushed``), which a
    search or context looks up in the index (``ChangedHere.say``: one query; a note of
    another size or time hashed) and names when it lacks them or holds them otherwise. A
    search with no daemon while a writer ran elsewhere named nothing: a look at every
    note costs ~1 s a search at 100,000 notes; git's look costs what git's own status
    does (bench/RESULTS.md, team58). Notes git ignores (.gitignore) are not looked at.
    Git looks beside the search (``ChangedHere.noted_by``: it was paid before the search
    began), given ``LOOK_WITHIN`` seconds in all: a git that does not answer by then (a
    slow disk, a huge folder it walks) is killed and the answer says that this copy's
    notes were not checked; it held the search up to 30 s a call, four calls."""
    from memvault.engine.changed_here import ChangedHere
    from memvault.engine.clone_guard import writer_commit
    from memvault.vault.gitstate import not_pushed

    changed = ChangedHere()
    root, fs, against = engine.root, engine.fs, writer_commit(engine.store)

    def look() -> list[str] | None:
        paths = not_pushed(root, against, LOOK_WITHIN)
        return None if paths is None else [p for p in paths if not fs.is_ignored(p)]

    changed.noted_by(
        look,
        late=f"this answer does not say which notes of this copy the team's index lacks: "
        f"git did not list this copy's changes within {LOOK_WITHIN:g} s; a reader daemon "
        "here (`memvault up`) names them at every search",
    )
    return changed


LOOK_WITHIN = 10.0  # seconds git is given to list a clone's changes (changed_by_git)


MISSED_NAMED = 5  # notes a read's warning names (then: "and N more")


def say_missed(engine: Any, pid: int, lets_go: float) -> str | None:
    """A read answering from the index as it is because the holder keeping the vault
    between its calls (an MCP server, the memory tool: memvault/door.py) did not let go
    within ``lets_go`` seconds (``backends.LETS_GO``) — stopped, starved, or in a long call — says which notes its
    answer misses (a warning: stderr in the CLI), when the files differ from the index;
    nothing when they do not. It said nothing: the note saved since the holder's last
    call was silently missing from the answer. Returned too (``Backend.stale``: the
    Python API's ``Vault.stale``, an MCP tool result's ``note``): an agent reads no
    server's stderr."""
    from memvault.engine.status import behind

    missed = behind(engine.config, engine.fs, engine.store)
    if not missed:
        return None
    named = ", ".join(missed[:MISSED_NAMED])
    more = f" and {len(missed) - MISSED_NAMED} more" if len(missed) > MISSED_NAMED else ""
    said = (
        f"this answer is from the index as it was, which misses {len(missed)} "
        f"note{'s' if len(missed) != 1 else ''} changed since ({named}{more}): process "
        f"{pid} keeps this vault between its calls (an MCP server or an agent's memory "
        f"tool) and did not let go of it within {lets_go:g} s; ask again"
    )
    log.warning(said)
    return said


def say_unkept(engine: Any) -> str | None:
    """A search or context with no daemon over a team's index in PostgreSQL that no
    writer holds now (its daemon stopped, on the writer's machine as on a clone): it
    answers from the index as the last writer left it, and no one indexes this copy's
    notes meanwhile. Says which notes of this copy the index lacks, and which it holds
    otherwise than this copy (``status.changed_here``: read and hashed only while at most
    ``CHANGED_READ`` differ from it by size or time, as on the writer's own copy; on a
    clone, every time git's, no file is read: +0.6-0.8 s a search at 10,000 notes), and
    what indexes them (on a clone: the writer, once its copy has them by git; the last
    writer's host is in meta ``vault_commit``); nothing when none, or while a writer runs. It said nothing: a
    note just written was missing from the answer, where the same search on a vault of
    its own syncs first (a field test, stop 56); a note edited there too (a review)."""
    from memvault.core.changes import as_indexed, case_pairs
    from memvault.engine.changed_here import notes_said
    from memvault.engine.clone_guard import last_writer
    from memvault.engine.status import changed_here
    from memvault.index.pg_conn import host_name

    who = getattr(engine.store, "writer", None)
    if who is None or who() is not None:  # SQLite's index, or a writer keeps it
        return None
    known, seen = engine.store.manifest(), engine.fs.scan().notes
    here = case_pairs(seen, known)  # People/Ana.md indexed, people/ana.md here: one note
    seen = as_indexed(seen, here)
    missed = sorted(set(seen) - set(known))
    changed = changed_here(engine.config, engine.fs, engine.store, known, seen, CHANGED_READ, here)
    lacks = notes_said((("of this copy", missed), ("changed here", changed or [])))
    if not lacks:
        return None
    host = last_writer(engine.store)  # a clone's notes reach the index by git
    does = (
        "`memvault up` here does"
        if host == host_name()
        else f"`memvault up` on the writer's machine ({host}) indexes them once its copy "
        "has them (git: commit and push here, pull there)"
        if host
        else "`memvault up` on the writer's machine does (here, if this copy is the writer's)"
    )
    said = (
        f"this answer is from the team's index as its last writer left it, which lacks "
        f"{' and '.join(lacks)}: no writer runs to index them; {does}"
    )
    log.warning(said)
    return said


CHANGED_READ = 200  # notes say_unkept reads at most to tell an edit (else: names only)


__all__ = [
    "CHANGED_READ",
    "LOOK_WITHIN",
    "MISSED_NAMED",
    "changed_by_git",
    "say_missed",
    "say_unkept",
    "unkept_here",
]
