"""Relinking after moves: the links that no longer lead where they led re-targeted in
every note that may link a moved file, written through ``VaultFS``'s compare-and-swap.

Not in a note git's is (a submodule: ``gitstate.nested_repo``), said; not while git is in
the middle of a rebase or merge, nor in a note holding git's conflict markers: those
wait in the relink journal (``relink_journal``), re-targeted once git, or the person, is
done. The ``Linker`` calls it with the vault's link format.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from memvault.core.conflicts import find_conflicts
from memvault.core.relink import Relinked, moved_names, relink_note
from memvault.core.text import NotText
from memvault.core.wikilinks import LinkFormat, LinkIndex
from memvault.errors import NoteNotFound, WriteConflict
from memvault.vault.git_exclude import keep_temps_out
from memvault.vault.gitstate import git_busy, nested_repo
from memvault.vault.paths import is_note

if TYPE_CHECKING:
    from memvault.index.store import Store
    from memvault.vault.files import VaultFS


class Relinking(NamedTuple):
    """What one relink did."""

    written: list[str]  # the notes rewritten
    problems: list[str]  # a link left as it was, a note that could not be written
    edits: dict[str, tuple[str, Relinked]]  # a note written: the text read, its rewrite
    # notes left as they were because they kept changing (or stayed open for writing
    # elsewhere) while memvault rewrote them: their links are tried again later
    waiting: list[str]


def relink(
    fs: VaultFS,
    store: Store,
    memory_file: str,
    fmt: LinkFormat,
    moves: Mapping[str, str],
    before: LinkIndex,
    after: LinkIndex,
    changed: Collection[str] = (),
    passed: Sequence[tuple[str, str]] = (),
    only: Collection[str] | None = None,
) -> Relinking:
    """Re-target, in every note that may link a moved file (or in the notes
    ``only``: a retry), the links that no longer lead where they led, in the
    vault's ``newLinkFormat``. ``changed``: notes new or edited in the same batch,
    whose links the index does not hold yet (a link written to a name, the name's
    note renamed a moment later: a pull, a script). ``passed``: (a name a note had
    only between two looks, where it is now; ``ChangeSet.passed``): a link written
    to it in ``changed`` follows the note, as if it had been indexed under that
    name. The notes written carry, for ``CarryOver``, the text each rewrite was
    made from and the rewrite."""
    if passed:
        before = before.with_files(name for name, _ in passed)
        after = after.with_files({now for _, now in passed if now not in after})
        moves = {**dict(passed), **moves}
    moved = moved_names(moves)  # once, for every note
    candidates = (
        store.sources_linking(moves, moved) | set(moves.values()) | set(changed)
        if only is None
        else set(only)
    )
    candidates.discard(memory_file)  # MEMORY.md: update_memory re-targets it
    busy = git_busy(fs.root)
    if busy:
        # the tree is git's (a pull stopped at a conflict): a note rewritten now is an
        # unstaged change `git rebase --continue` refuses to go on with. The notes
        # wait, journalled, and are relinked once git is done (Daemon.memory_catch_up)
        notes = sorted(s for s in candidates if is_note(s))
        said = f"git is in the middle of {busy}: links to moved files wait until it is done"
        return Relinking([], [said] if notes else [], {}, notes)
    reverse = {new: old for old, new in moves.items()}
    changes: dict[str, Callable[[str], str]] = {}
    lefts: dict[str, list[tuple[str, str]]] = {}
    # the last rewrite made of each note: the one written, when it was written
    edits: dict[str, tuple[str, Relinked]] = {}
    left_elsewhere: list[str] = []  # notes in a submodule: another repository's
    # notes holding git's conflict markers: a link rewritten there is one the side a
    # person takes (`git checkout --theirs`) lacks; they wait until it is resolved
    conflicted: set[str] = set()
    for source in sorted(candidates):
        if not is_note(source):  # nor inside a NOTE.MD, no note (paths.is_note): a file
            continue  # links inside canvases and bases are not rewritten (docs/LINKS.md)
        repo = nested_repo(fs.root, source)
        if repo is not None:
            src_old = reverse.get(source, source)
            if _would_relink(fs, source, src_old, before, after, moves, fmt, moved):
                left_elsewhere.append(
                    f"{source}: its links to moved files were left as they are: "
                    f"{repo}/ is a git repository of its own (a submodule), and "
                    "memvault writes nothing in it"
                )
            continue
        left: list[tuple[str, str]] = []

        def change(
            text: str,
            src_old: str = reverse.get(source, source),
            source: str = source,
            left: list[tuple[str, str]] = left,
        ) -> str:
            if find_conflicts(text):  # a person resolving it: theirs until resolved
                conflicted.add(source)
                return text
            conflicted.discard(source)
            result = relink_note(text, src_old, source, before, after, moves, fmt, moved)
            left[:] = result.skipped
            edits[source] = (text, result)
            return result.text

        changes[source] = change
        lefts[source] = left
    # one batch of compare-and-swap writes: durable together, not two fsyncs a note
    changed, problems, waiting = [], left_elsewhere, []
    # a retry does not wait for the notes still busy: they wait for the next one
    if changes:  # a repository made since the vault was opened (a `git init`): its
        keep_temps_out(fs.root)  # `git add -A` takes none of the relink's temp files
    outcomes = fs.update_texts(changes, wait=None if only is None else 0.0)
    for source in changes:
        outcome = outcomes[source]
        if source in conflicted and outcome is False:
            waiting.append(source)
            problems.append(
                f"{source}: its links to moved files wait: it holds unresolved merge "
                "conflict markers (git), and they are re-targeted once it is resolved"
            )
            continue
        if isinstance(outcome, NoteNotFound) and (
            only is not None or store.note(source) is not None
        ):  # moved or deleted since the batch looked (its folder renamed meanwhile):
            waiting.append(source)  # a later sync's diff says which, the wait follows
            continue
        if isinstance(outcome, (NoteNotFound, NotText)):
            continue
        if isinstance(outcome, PermissionError):  # its folder read-only to us
            problems.append(
                f"{source}: its links to moved files were left as they are: it cannot "
                f"be written ({outcome.strerror})"
            )
            continue
        if isinstance(outcome, Exception):
            problems.append(str(outcome))
            if isinstance(outcome, WriteConflict):  # FileBusy too: tried again later
                waiting.append(source)
            continue
        problems += [
            f"{source}: a link to {raw!r} was left as it is: {why}" for raw, why in lefts[source]
        ]
        if outcome:
            changed.append(source)
    return Relinking(changed, problems, {p: edits[p] for p in changed if p in edits}, waiting)


def _would_relink(
    fs: VaultFS,
    source: str,
    src_old: str,
    before: LinkIndex,
    after: LinkIndex,
    moves: Mapping[str, str],
    fmt: LinkFormat,
    moved: frozenset[str],
) -> bool:
    """Whether relinking ``source`` would change it (read, never written)."""
    try:
        text = fs.read(source).decoded.text
    except (NoteNotFound, NotText, OSError):
        return False
    result = relink_note(text, src_old, source, before, after, moves, fmt, moved)
    return result.text != text


__all__ = ["Relinking", "relink"]
