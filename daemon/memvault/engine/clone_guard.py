"""A writer of the team's index whose clone of the vault is behind it (docs/TEAM.md).

A field test: with the writer daemon stopped, a colleague whose clone was a `git pull`
behind ran `memvault up` there; it became the writer, and its start-up reconcile deleted
from the shared index the notes it did not have yet and put back its older copies of
the ones it had. The guard before (``seam._this_vaults``) refuses only when most of
the sampled notes are missing: a clone one pull behind lacks a few.

The shared index keeps what its writer's files are at: the git commit checked out in
the writer's clone (meta ``vault_commit``: commit, host, time), written at the writer's
open, with each sync that changed something, when a daemon writer's git HEAD moves
(a commit, looked at each tick: ``head_stamp``) and at its close. A writer opening is
refused (``ConfigError``, exit 3, nothing written) when its clone lacks that commit (not
pulled yet) or holds it without having merged it (fetched only, or diverged), and the
commits it lacks change something in the vault's folder: `git pull` first. Nothing else
is refused: a clone whose HEAD descends from that commit has every note the index was
written from, so a note missing or older here was deleted, renamed or edited here (a
commit, or a change not committed yet) and the sync follows it; a vault outside git, or
an index no writer in git has written yet (a first writer, an older memvault), is left
to the sample guard. The record is one row of the index.

The record also names what the writer had pushed (``published``: the newest commits of
its history a remote-tracking branch holds). A clone lacking the writer's commit but
holding all of those writes, with a warning: the writer's commits never pushed are that
machine's, as notes it never committed are. A field test: the writer indexed from a
commit, stopped, and ``git pull --rebase`` rewrote that commit before it was pushed; no
clone could ever fetch the one the index named, and each was refused until someone
deleted the meta row by hand. A commit the writer pushed that a clone has not pulled
still refuses it.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memvault.config import VaultConfig
from memvault.errors import ConfigError
from memvault.index.pg_conn import host_name, redact
from memvault.index.pg_store import FILES_AT
from memvault.index.seam import open_postgres
from memvault.vault.gitstate import (
    commits_lacked,
    git_stamp,
    has_commit,
    head_commit,
    is_ancestor,
    is_shallow,
    merged_here,
    on_a_remote,
    published,
    was_checked_out,
)

log = logging.getLogger("memvault")

_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256 ids, nothing else


def open_team_index(config: VaultConfig, *, read_only: bool, wait: float, daemon: bool) -> Any:
    """``seam.open_postgres``; a writer is refused when its clone is behind the index
    (``refuse_a_clone_behind``), else keeps what its files are at from now on."""
    store = open_postgres(config, read_only=read_only, wait=wait, daemon=daemon)
    if read_only:
        return store
    try:
        refuse_a_clone_behind(store, config)
        store.files_at = lambda: files_at(config)
        store.mark_files()  # before anything is written: the sync brings the index there
        store.mark_files_if_moved = _when_moved(store, config.root)
    except BaseException:
        store.close()
        raise
    return store


def files_at(config: VaultConfig) -> str | None:
    """What the vault's files are at, as meta ``vault_commit`` keeps it (None outside
    git: nothing is kept, and the record an earlier writer left stays)."""
    head = head_commit(config.root)
    if head is None:
        return None
    at: dict[str, Any] = {"commit": head, "host": host_name(), "at": time.time()}
    pushed = published(config.root, head)
    if pushed:
        at["published"] = pushed
    return json.dumps(at)


def last_writer(store: Any) -> str | None:
    """The host of the index's last writer, as meta ``vault_commit`` keeps it (None:
    written outside git, or by a memvault of before the record)."""
    try:
        return str(json.loads(store.meta(FILES_AT) or "null")["host"])
    except (ValueError, TypeError, KeyError):
        return None


def writer_commit(store: Any) -> str | None:
    """The git commit the index's last writer's files were at (meta ``vault_commit``),
    or None: a commit id alone (``_COMMIT``), as ``refuse_a_clone_behind`` takes it. The
    row is the shared index's, which git is handed: a ref or an option there (``HEAD``,
    ``main``, ``--all``) was git's to read, and ``HEAD`` hid this clone's commits not
    pushed."""
    try:
        commit = json.loads(store.meta(FILES_AT) or "null")["commit"]
    except (ValueError, TypeError, KeyError):
        return None
    return commit if isinstance(commit, str) and _COMMIT.fullmatch(commit) else None


def head_stamp(root: Path) -> tuple[int, ...] | None:
    """When and how far the vault's git HEAD last moved: its file's and its reflog's
    (``logs/HEAD``) mtime and size, read each daemon tick (``_when_moved``):
    a commit, a checkout or a pull changes no note the watcher sees, and a writer killed
    before its close would leave the index's record behind the commit its files are at.
    None outside git."""
    return git_stamp(root, ("HEAD", "logs/HEAD"))


def _when_moved(store: Any, root: Path) -> Callable[[], None]:
    """``store.mark_files`` once git's HEAD moved since the last look (``head_stamp``):
    each tick of a writer daemon."""
    last = [head_stamp(root)]

    def look() -> None:
        now = head_stamp(root)
        if now != last[0]:
            store.mark_files()  # raises with PostgreSQL's server down: the next look again
            last[0] = now

    return look


def refuse_a_clone_behind(store: Any, config: VaultConfig) -> None:
    """``ConfigError`` when the index was last written from a commit this clone lacks
    (or has not merged) and that changed the vault's notes; see the module."""
    try:
        recorded = json.loads(store.meta(FILES_AT) or "null")
        commit, host = str(recorded["commit"]), str(recorded.get("host") or "its writer")
    except (ValueError, TypeError, KeyError, AttributeError):
        return  # none kept yet (a first writer, an older memvault's), or not ours
    root = config.root
    head = head_commit(root)
    if head is None or not _COMMIT.fullmatch(commit) or commit == head:
        return  # outside git here (the sample guard stands), or at that commit
    todo = f"git pull first (a commit {host} never pushed: push it there first)"
    if has_commit(root, commit):
        if is_ancestor(root, commit, head):
            return  # every commit the index was written from is here
        checked = was_checked_out(root, commit)
        held = on_a_remote(root, commit) if checked else None
        if checked and held is None:
            return  # its files were (checked out here: an amend or a rebase since is a
            # change made here; not one the branch pulled here holds, which a reset
            # here dropped: the team has it)
        if held:
            todo = (
                f"git pull first ({held} holds that commit, which this clone had and "
                "dropped: a reset, an amend, a rebase); if it was dropped on purpose, "
                f"push that history first (git push --force-with-lease) and fetch {held}"
            )
        lacked = commits_lacked(root, head, commit)
        if lacked == 0 or merged_here(root, head, commit):
            return  # what this clone lacks changes nothing in the vault's folder, or its
            # changes are here under other commits (squash-merged, rebased upstream)
        how = (
            f"is {lacked} commits behind it (fetched, not merged)"
            if is_ancestor(root, head, commit)
            else f"has diverged from it ({lacked} of its commits not merged here)"
        )
    elif is_shallow(root):  # `git pull` never brings an older commit into it
        how = "is a shallow clone without that commit (older than its history, or newer)"
        todo = "git fetch --unshallow first (git pull never brings an older commit here)"
    elif _has_all_pushed(root, head, recorded.get("published")):
        log.warning(
            "the index was last written by %s from commit %s, which was never pushed "
            "(rebased or amended before a push, or not pushed yet): this clone has all "
            "that %s had pushed and writes; notes only that commit holds leave the "
            "shared index until they are pushed and pulled here",
            host,
            commit[:12],
            host,
        )
        return
    else:
        how = "lacks that commit (not pulled yet)"
    schema = getattr(store, "schema", "")
    raise ConfigError(
        f"the index in schema {schema!r} at {redact(getattr(store, 'dsn', ''))} was last "
        f"written by {host} from commit {commit[:12]}, and this clone of the vault {how}: "
        "as the writer it would delete from the shared index the notes added since and "
        f"put back older copies of the ones changed; nothing was written. {todo}, then "
        "start again. If this clone is the one to follow (history rewritten on purpose): "
        "DELETE FROM "
        f"\"{schema}\".meta WHERE key = '{FILES_AT}', then start again"
    )


def _has_all_pushed(root: Path, head: str, pushed: Any) -> bool:
    """Whether ``head`` holds every commit the writer had pushed when it wrote
    (``published``: the newest of them), so that all it lacks is the writer's own."""
    if not isinstance(pushed, list) or not pushed:
        return False
    return all(
        isinstance(c, str)
        and _COMMIT.fullmatch(c)
        and has_commit(root, c)
        and is_ancestor(root, c, head)
        for c in pushed
    )


__all__ = ["files_at", "head_stamp", "open_team_index", "refuse_a_clone_behind"]
