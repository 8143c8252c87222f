"""Whether the git repository holding a vault is in the middle of an operation, and
whether a file memvault would make there is one git does not know.

While git is mid rebase, merge, cherry-pick or revert, or at a commit checked out to
look at (a detached HEAD), the working tree is git's:
a file memvault rewrote then (MEMORY.md, a folder note) would be one more change
for the person to resolve, and ``git rebase --continue`` would refuse until it is
added. memvault writes no tracked file meanwhile and picks up once git is done.

The vault may be the repository's top folder or any folder inside it, and ``.git``
may be a folder or a file pointing at one (a worktree, a submodule).

A folder of the vault holding a git repository of its own (a submodule, a repository
cloned there) is that repository's: memvault writes no file in it (``nested_repo``).

A MEMORY.md git removed (a pull, a checkout, ``git rm``) is not made again: an untracked
file stops the pull or checkout that brings it back (``git_removed``). A
``.memvault/config.toml`` git ignores does not reach the other clones (``ignored_by``).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_MARKERS = (
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase (or git am)"),
    ("MERGE_HEAD", "a merge"),
    # `git merge --autostash` (and `pull --autostash` merging): the person's changes set
    # aside until the merge is done; MEMORY.md written meanwhile, their pop would conflict
    ("MERGE_AUTOSTASH", "a merge (its autostash)"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
    ("BISECT_LOG", "a bisect"),
    # git is writing the index and the tree this moment (a checkout, a stash, a pop):
    # a file memvault wrote now could make git refuse to go on
    ("index.lock", "writing its index"),
)


def git_dir(root: Path) -> Path | None:
    """The git directory of the repository ``root`` is in (None outside git)."""
    here = Path(root).resolve()
    for folder in (here, *here.parents):
        dot = folder / ".git"
        try:
            if dot.is_dir():
                return dot
            if dot.is_file():
                text = dot.read_text(encoding="utf-8", errors="replace").strip()
                if text.startswith("gitdir:"):
                    target = Path(text[len("gitdir:") :].strip())
                    return target if target.is_absolute() else (folder / target).resolve()
                return None
        except OSError:
            return None
    return None


# a commit checked out to look at (``git checkout <commit>``, a bisect, a tag): its
# MEMORY.md is as it was committed, and one memvault rewrote would stop the checkout
# that goes back ("Your local changes ... would be overwritten by checkout")
DETACHED = "a checkout of a commit, not a branch (a detached HEAD)"


def _submodule(gdir: Path) -> bool:
    """Whether ``gdir`` is a submodule's git directory (``<super>/.git/modules/<name>``,
    nested ones and their worktrees too). ``git submodule update`` and a clone with
    ``--recurse-submodules`` leave a submodule at a detached HEAD for good: its commit
    is the one the superproject records, no commit checked out to look at."""
    parts = gdir.parts
    return any(parts[i] == ".git" and parts[i + 1] == "modules" for i in range(len(parts) - 1))


def git_busy(root: Path) -> str | None:
    """What git is in the middle of in the vault's repository ("a rebase"), or None."""
    gdir = git_dir(root)
    if gdir is None:
        return None
    for name, what in _MARKERS:
        try:
            if (gdir / name).exists():
                return what
        except OSError:
            continue
    try:
        head = (gdir / "HEAD").read_bytes()
    except OSError:
        return None
    # a branch is "ref: refs/heads/main"; a commit's id alone is a detached HEAD, but a
    # submodule's usual state (MEMORY.md written there would otherwise never be)
    if head.startswith(b"ref:") or not head.strip() or _submodule(gdir):
        return None
    return DETACHED


def nested_repo(root: Path, rel: str) -> str | None:
    """The folder (a vault path) holding the vault path ``rel`` that is a git repository
    of its own, a submodule (``git submodule add``) or a repository cloned inside the
    vault; None when ``rel`` is in no such folder.

    A file memvault wrote there (a note's links re-targeted, a folder note made) is a
    change in that repository, which the person's ``git add -A && git commit`` in the
    vault's does not take: the submodule stays dirty, and the ``git submodule update``
    (or pull there) that brings a new version of the file is refused ("Your local
    changes ... would be overwritten by checkout"). One stat a folder level."""
    folders = rel.split("/")[:-1]
    for depth in range(1, len(folders) + 1):
        folder = "/".join(folders[:depth])
        if os.path.lexists(Path(root) / folder / ".git"):
            return folder
    return None


# what git rewrites when it changes the working tree or moves HEAD: its index (a
# checkout, reset, merge, stash, pull, `git add`), HEAD and HEAD's reflog
TREE_FILES = ("index", "HEAD", "logs/HEAD")


def git_stamp(root: Path, names: Sequence[str] = TREE_FILES) -> tuple[int, ...] | None:
    """The mtime and size of the files ``names`` of the vault's git directory (0, -1 for
    one missing): a stamp that changes when git changes them. None outside git."""
    where = git_dir(root)
    if where is None:
        return None
    stamp: list[int] = []
    for name in names:
        # a worktree's own: its index, HEAD and HEAD's reflog; the rest (the stash's
        # reflog) is in the git folder it shares with the repository
        base = where if name in TREE_FILES else _common(where)
        try:
            st = os.stat(base / name)
        except OSError:
            stamp += [0, -1]
        else:
            stamp += [st.st_mtime_ns, st.st_size]
    return tuple(stamp)


def git_removed(root: Path, rel: str) -> bool:
    """Whether git took away the file at ``rel`` (a vault path, not on disk): a commit
    of the repository (any branch) had it, and a file made there now would be
    untracked (neither in git's index nor ignored).

    Such a file stands in the way of every later pull or checkout that brings one
    ("untracked working tree files would be overwritten"), even with the same bytes,
    and ``--autostash`` does not set it aside. A file no commit ever had (a vault's
    first MEMORY.md, in a repository of a person's notes) is not one. False outside
    git, and when git cannot be asked (not installed, a repository it refuses)."""
    tracked = run_git(root, "--literal-pathspecs", "ls-files", "--error-unmatch", "--", rel)
    if tracked is None or tracked.returncode != 1:  # 0: in git's index; else no answer
        return False
    had = run_git(root, "--literal-pathspecs", "rev-list", "--all", "-1", "--", rel)
    if had is None or had.returncode != 0 or not had.stdout.strip():
        return False  # never committed (or no commit at all): made as any first one
    return ignored_by(root, rel) is None


def stage_made(root: Path, rel: str) -> bool:
    """Add a file memvault has just made at the vault path ``rel`` to git's index
    (``git add``) when git does not know it (untracked, not ignored); whether it did.

    Two clones' daemons make the same folder note when a section passes its limit on
    both before either pulls; left untracked, the second machine's pull is refused
    ("untracked working tree files would be overwritten by merge"), ``--autostash`` or
    not. Added, it is a change like any other: ``--autostash`` sets it aside and git
    merges both lists (the vault's ``.gitattributes``: merge=union). A file git tracks,
    or one a rule ignores, is left as it is; so is one of a vault git keeps no file of (a
    folder of a person's project repository they never added: staged, the folder note
    went into their next commit, the one file of the vault). Nothing is added while git
    is busy, outside git, or when git cannot be asked."""
    if git_busy(root) is not None:
        return False
    tracked = run_git(root, "--literal-pathspecs", "ls-files", "--error-unmatch", "--", rel)
    if tracked is None or tracked.returncode != 1:  # 0: tracked already; else no answer
        return False
    kept = run_git(root, "ls-files", "-z", "--", ".")  # the vault's files git keeps, if any
    if kept is None or kept.returncode != 0 or not kept.stdout:
        return False
    if ignored_by(root, rel) is not None:
        return False
    done = run_git(root, "--literal-pathspecs", "add", "--", rel)
    return done is not None and done.returncode == 0


# how long after a stash what it changes of memvault's waits for its pop: the usual
# stash, pull or switch, pop. Not longer: a stash forgotten, MEMORY.md would lag its notes
STASH_WAIT_SECONDS = 600.0


@dataclass(frozen=True, slots=True)
class StashSeen:
    """The newest stash, as it concerns the vault paths asked about (``newest_stash``)."""

    made: float | None = None  # when (its reflog line's time); None: no stash
    here: bool = False  # made in this worktree, or git cannot say it was not
    stops: tuple[str, ...] = ()  # what `git stash pop` stops over (``stash_stops``)
    waits: tuple[str, ...] = ()  # what waits for the pop (``stash_waits``)


def newest_stash(
    root: Path, rels: Sequence[str], now: float | None = None, *, stops: bool = True
) -> StashSeen:
    """The newest stash and the vault paths among ``rels`` (what memvault writes:
    MEMORY.md, folder notes) it concerns, git asked once for both questions (status asks
    both): what it changes (its first parent to it), and the blob ids of those files
    here and in git's index (``_blobs``).

    ``stops``: those the stash changes that changed since it was made, unlike git's
    index (memvault listed notes the stash left, a person's edit): ``git stash pop``
    stops over them.
    ``waits``: within ``STASH_WAIT_SECONDS`` of the stash, those it changes that have
    no unstaged change: memvault writing one now would be that change, and the pop
    is refused over it ("Your local changes ... would be overwritten by merge"), the
    person's words in the stash; as a merge's autostash (``MERGE_AUTOSTASH``) is
    waited for. Past the wait, ``stops`` says.

    Both only for a stash made in this worktree (``_made_here``): the stash list is
    the repository's, shared by its worktrees, and a stash made in another held this
    one's MEMORY.md 10 minutes, or had status tell it to pop the other's stash. None
    asked of git without a stash (its reflog, in the repository's common git folder)."""
    gdir = git_dir(root) if rels else None
    newest = _newest_stash(gdir) if gdir is not None else None
    if gdir is None or newest is None:
        return StashSeen()
    made, commit = newest
    recent = (time.time() if now is None else now) - made <= STASH_WAIT_SECONDS
    if not (stops or recent):
        return StashSeen(made)
    shown = _stash_changes(root, commit)
    if shown is None:
        return StashSeen(made)
    parent, changed = shown
    here = _made_here(gdir, made, parent)
    stashed = changed & set(rels)
    if not here or not stashed:
        return StashSeen(made, here)
    hashed = _hashed(root, sorted(r for r in stashed if (root / r).is_file()))
    # a file unmerged in git's index: a pop (or merge) stopped over it, its conflict to
    # resolve (status says so of MEMORY.md), not a pop to come over a checkout of it
    in_index, unmerged = _blobs(root, hashed, None)
    # the pop stops over a local change, a file unlike git's index ("Your local changes
    # ... would be overwritten by merge"; `git checkout --` takes it back to the index).
    # Not HEAD: a staged change (`git stash --keep-index`, a conflict resolved and
    # added) is merged, and status said the pop would stop where it went through
    unlike_index = stashed - _same(hashed, in_index) - unmerged
    return StashSeen(
        made,
        here,
        tuple(sorted(unlike_index)) if stops else (),
        tuple(sorted(_same(hashed, in_index))) if recent else (),
    )


def stash_stops(root: Path, rels: Sequence[str]) -> list[str]:
    """The vault paths among ``rels`` that ``git stash pop`` of the newest stash stops
    over (``newest_stash``: its ``stops``)."""
    return list(newest_stash(root, rels).stops)


def stash_waits(root: Path, rels: Sequence[str], now: float | None = None) -> list[str]:
    """The vault paths among ``rels`` that wait for ``git stash pop`` (``newest_stash``:
    its ``waits``)."""
    return list(newest_stash(root, rels, now, stops=False).waits)


# a reflog line: "<old id> <new id> <name> <<email>> <seconds> <zone>\t<message>"
_REFLOG_LINE = re.compile(rb"([0-9a-f]+) ([0-9a-f]+) .*?> (\d+) [+-]\d{4}(?:\t|$)")


def stash_made(root: Path) -> float | None:
    """When the newest stash was made (its reflog line's time), or None: no stash, outside
    git. Not the reflog file's mtime: ``git stash drop`` and a ``git stash pop`` that
    goes through rewrite the file without the stash they take, so a stash made an hour
    before seemed made that moment, and MEMORY.md waited 10 minutes more for it."""
    gdir = git_dir(root)
    newest = _newest_stash(gdir) if gdir is not None else None
    return None if newest is None else newest[0]


def _newest_stash(gdir: Path) -> tuple[float, str] | None:
    """The newest stash's time and commit (the last line of its reflog), or None."""
    try:
        with open(_common(gdir) / "logs" / "refs" / "stash", "rb") as log:
            size = log.seek(0, os.SEEK_END)
            log.seek(max(0, size - 4096))  # the last line: the newest stash
            tail = log.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    except OSError:
        return None  # no stash
    found = _REFLOG_LINE.match(tail)
    return (float(found.group(3)), found.group(2).decode("ascii")) if found else None


def _stash_changes(root: Path, commit: str) -> tuple[str, set[str]] | None:
    """The stash ``commit``'s first parent (the HEAD it was made at) and the vault paths
    it changes from there (what ``git stash show`` names), one git process."""
    shown = run_git(
        root,
        *("log", "-1", "-z", "--format=%P", "-m", "--first-parent", "--name-only"),
        *("--relative", "--no-renames", "--no-color", commit, "--"),
    )
    if shown is None or shown.returncode != 0:
        return None
    parents, _, names = shown.stdout.partition(b"\0")
    if not parents.split():
        return None
    changed = names.lstrip(b"\n").decode("utf-8", "replace").split("\0")
    return parents.split()[0].decode("ascii"), {n for n in changed if n}


def _made_here(gdir: Path, made: float, parent: str) -> bool:
    """Whether a stash made at ``made`` from the commit ``parent`` may have been made in
    this worktree: its HEAD was at ``parent`` then. git records no worktree in a stash,
    but its first parent is the HEAD of the worktree that made it, and each worktree's
    HEAD keeps its own reflog (``logs/HEAD`` in its git folder): the commits HEAD was at
    during the stash's second are read from it. Two worktrees at that same commit then
    are not told apart (both wait); a worktree keeping no reflog of HEAD
    (``core.logAllRefUpdates`` off from the start) cannot say, and waits."""
    held = _head_during(gdir / "logs" / "HEAD", int(made))
    return held is None or parent in held


def _head_during(log_path: Path, second: int) -> set[str] | None:
    """The commits a HEAD reflog says HEAD was at during ``second`` (the one before it,
    those it moved to then), read from the end; None without a reflog."""
    try:
        with open(log_path, "rb") as log:
            size = log.seek(0, os.SEEK_END)
            want = 1 << 16
            while True:
                start = max(0, size - want)
                log.seek(start)
                lines = log.read(size - start).split(b"\n")[1 if start else 0 :]
                entries = [m for line in lines if (m := _REFLOG_LINE.match(line))]
                if start == 0 or any(int(m.group(3)) < second for m in entries):
                    break
                want *= 4
    except OSError:
        return None
    if not entries:
        return None
    held: set[str] = set()
    for m in reversed(entries):
        if int(m.group(3)) < second:
            held.add(m.group(2).decode("ascii"))  # where it was as that second began
            return held
        if int(m.group(3)) == second:
            held.add(m.group(2).decode("ascii"))
    held.add(entries[0].group(1).decode("ascii"))  # before its first move (0s: no HEAD yet)
    return held


def _hashed(root: Path, rels: Sequence[str]) -> dict[str, str]:
    """The blob id each file at the vault paths ``rels`` would have in git (``git
    hash-object``, through its filters): one process for every question asked of them."""
    if not rels:
        return {}
    done = run_git(root, "hash-object", "--", *rels)
    if done is None or done.returncode:
        return {}
    ids = done.stdout.decode("ascii", "replace").split()
    return dict(zip(rels, ids, strict=False))


def _blobs(
    root: Path, hashed: dict[str, str], commit: str | None
) -> tuple[dict[str, str], set[str]]:
    """The blob ids git has at the vault paths of ``hashed``: in git's index (``commit``
    None; stage 0) or in ``commit``; and those unmerged in the index (a conflict's
    stages). Plumbing: ``git diff`` wrote the index back, under index.lock, when it
    found a file's stat changed and not its bytes, ``--no-optional-locks`` or not (git
    2.39), and a person's ``git add`` at that moment failed."""
    if not hashed:
        return {}, set()
    here, there = ("--literal-pathspecs",), sorted(hashed)
    if commit is None:
        listed = run_git(root, *here, "ls-files", "-s", "-z", "--", *there)  # mode id stage\tpath
    else:
        listed = run_git(root, *here, "ls-tree", "-z", commit, "--", *there)  # mode type id\tpath
    if listed is None or listed.returncode:
        return {}, set()
    kept: dict[str, str] = {}
    unmerged: set[str] = set()
    for entry in listed.stdout.decode("utf-8", "replace").split("\0"):
        fields, _, path = entry.partition("\t")
        if not path:
            continue
        if commit is None and fields.split()[2] != "0":
            unmerged.add(path)
        else:
            kept[path] = fields.split()[1 if commit is None else 2]
    return kept, unmerged


def _same(hashed: dict[str, str], kept: dict[str, str]) -> set[str]:
    """The paths whose file's blob id (``hashed``) is the one git has there (``kept``)."""
    return {r for r, blob in hashed.items() if kept.get(r) == blob}


def _common(gdir: Path) -> Path:
    """The git folder a worktree's shares with the repository (its ``commondir``: refs,
    the stash), or ``gdir`` itself."""
    try:
        shared = (gdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gdir
    return gdir / shared if shared else gdir


def head_commit(root: Path) -> str | None:
    """The commit checked out in the vault's repository (its id), or None: outside git,
    no commit yet, or git cannot be asked."""
    done = run_git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    if done is None or done.returncode != 0:
        return None
    return done.stdout.decode("ascii", "replace").strip() or None


def published(root: Path, head: str) -> list[str] | None:
    """The newest commits of ``head``'s history that a remote-tracking branch holds (what
    this clone had pushed, or pulled: the commits other clones can fetch), ``[head]`` when
    all of it is there. None when the repository knows no remote branch, or git cannot
    say; ``[]`` when none of its history is on one."""
    remotes = run_git(root, "for-each-ref", "--count=1", "--format=%(objectname)", "refs/remotes")
    if remotes is None or remotes.returncode != 0 or not remotes.stdout.strip():
        return None
    done = run_git(root, "rev-list", "--boundary", head, "--not", "--remotes")
    if done is None or done.returncode != 0:
        return None
    lines = done.stdout.decode("ascii", "replace").split()
    if not lines:
        return [head]  # nothing of it unpushed
    return [line[1:] for line in lines if line.startswith("-")]


def has_commit(root: Path, commit: str) -> bool:
    """Whether the vault's repository holds ``commit`` (fetched or made here)."""
    done = run_git(root, "cat-file", "-e", f"{commit}^{{commit}}")
    return done is not None and done.returncode == 0


def is_ancestor(root: Path, older: str, newer: str) -> bool:
    """Whether ``older`` is ``newer`` or one of its ancestors (both in the repository)."""
    done = run_git(root, "merge-base", "--is-ancestor", older, newer)
    return done is not None and done.returncode == 0


def was_checked_out(root: Path, commit: str) -> bool:
    """Whether ``commit`` was checked out in this clone (HEAD's reflog names it): its files
    were these files then, whatever was made of its history since (an amend, a rebase)."""
    done = run_git(root, "rev-list", "--walk-reflogs", "HEAD")
    if done is None or done.returncode != 0:
        return False
    return commit in done.stdout.decode("ascii", "replace").split()


def is_shallow(root: Path) -> bool:
    """Whether the vault's repository is a shallow clone (``git clone --depth``): its
    history stops short, so an older commit is missing from it for good."""
    done = run_git(root, "rev-parse", "--is-shallow-repository")
    return done is not None and done.stdout.strip() == b"true"


def commits_lacked(root: Path, head: str, commit: str) -> int:
    """How many commits ``commit`` has that ``head`` lacks and that change something in
    the vault's folder (commits to the rest of a repository the vault is a folder of do
    not count)."""
    done = run_git(root, "rev-list", "--count", f"{head}..{commit}", "--", ".")
    if done is None or done.returncode != 0:
        return 0
    return int(done.stdout.strip() or 0)


def merged_here(root: Path, head: str, commit: str) -> bool:
    """Whether merging ``commit`` into ``head`` would change nothing in the vault's folder:
    its changes are here already, under other commits (a squash merge, a rebase, a
    cherry-pick). False when they conflict, or git cannot say (older than 2.38)."""
    done = run_git(root, "merge-tree", "--write-tree", head, commit)
    if done is None or done.returncode != 0:
        return False
    tree = done.stdout.decode("ascii", "replace").split("\n", 1)[0].strip()
    same = run_git(root, "diff", "--quiet", head, tree, "--", ".")
    return bool(tree) and same is not None and same.returncode == 0


def ignored_by(root: Path, rel: str) -> str | None:
    """The rule that has git ignore the vault path ``rel`` (``.gitignore:3 `.memvault/```),
    or None: not ignored, tracked (git ignores no tracked file), outside git, or git
    cannot be asked."""
    # a path, not a pathspec: taken as spelt (NUL-ended both ways: any name)
    done = run_git(root, "check-ignore", "-v", "-z", "--stdin", stdin=rel.encode() + b"\0")
    if done is None or done.returncode != 0:
        return None
    source, line, pattern = done.stdout.decode("utf-8", "replace").split("\0")[:3]
    if not pattern or pattern.startswith("!"):  # -v names a rule taking it back in too
        return None
    return f"{source}:{line} `{pattern}`"


def settings_ignored(rule: str) -> str:
    """What ``status`` and ``init`` say of a config.toml git ignores by ``rule``."""
    return (
        f"ignored by git ({rule}): a clone of this vault gets no settings, so it is no "
        "vault until `memvault init` writes the default ones, and its MEMORY.md differs "
        "from this one wherever your settings do (every pull then changes it back); "
        "drop that rule: .memvault/.gitignore already keeps the index out of git"
    )


def run_git(
    root: Path, *args: str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes] | None:
    """git run on the repository around the vault, or None (outside git, no git)."""
    if git_dir(root) is None:
        return None
    # the repository is the one around the vault, whatever a git hook's environment says
    env = {k: v for k, v in os.environ.items() if k not in _LOCATING}
    try:
        return subprocess.run(
            # a question never takes git's index.lock: `git diff` and `git status` write
            # the index back when they find a file's stat changed (its content not),
            # and a person's `git add` or `git commit` at that moment failed
            # ("Unable to create '.git/index.lock': File exists")
            ["git", "--no-optional-locks", "-C", str(root), *args],
            input=stdin,
            capture_output=True,
            env=env,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


# what points git at another repository than the one around the vault
_LOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX")


__all__ = [
    "DETACHED",
    "StashSeen",
    "commits_lacked",
    "git_busy",
    "git_dir",
    "git_removed",
    "git_stamp",
    "has_commit",
    "head_commit",
    "ignored_by",
    "is_ancestor",
    "is_shallow",
    "merged_here",
    "nested_repo",
    "newest_stash",
    "published",
    "run_git",
    "settings_ignored",
    "stage_made",
    "stash_made",
    "stash_stops",
    "stash_waits",
    "was_checked_out",
]
