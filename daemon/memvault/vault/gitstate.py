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
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

GIT_TIMEOUT = 30.0  # seconds a git call is given (then killed: as if git were absent)

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
                if text.startswith("gitdir:") and "\0" not in text:  # (NUL: no path)
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
        base = where if name in TREE_FILES else common_dir(where)
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


# what ``stage_made`` did with a folder note memvault made (``WAIT``: git busy, try again)
STAGED, LATER, LEFT, WAIT = "staged", "later", "left", "wait"


def stage_made(root: Path, rel: str, ours: Sequence[str] = ()) -> str:
    """Add a file memvault has just made at the vault path ``rel`` to git's index
    (``git add``) when git does not know it (untracked, not ignored): ``STAGED``.

    Two clones' daemons make the same folder note when a section passes its limit on
    both before either pulls; left untracked, the second machine's pull is refused
    ("untracked working tree files would be overwritten by merge"), ``--autostash`` or
    not. Added, it is a change like any other: ``--autostash`` sets it aside and git
    merges both lists (the vault's ``.gitattributes``: merge=union). A file git tracks,
    or one a rule ignores, is left as it is; so is one of a vault git keeps no file of (a
    folder of a person's project repository they never added: staged, the folder note
    went into their next commit, the one file of the vault): ``LEFT``; so outside git, or
    when git cannot be asked. Nothing is added while the person has changes of their
    own staged (``theirs_staged``; ``ours``, memvault's own files, are not theirs):
    ``LATER``, to add once they committed them, as their `git commit` of one note took
    the folder note along, listing notes they had not added; nor while git is busy, or
    another git holds the index (index.lock): ``WAIT``, to try again once it is done
    (let go, it stayed untracked for good)."""
    if git_busy(root) is not None:
        return WAIT
    tracked = run_git(root, "--literal-pathspecs", "ls-files", "--error-unmatch", "--", rel)
    if tracked is None or tracked.returncode != 1:  # 0: tracked already; else no answer
        return LEFT
    kept = run_git(root, "ls-files", "-z", "--", ".")  # the vault's files git keeps, if any
    if kept is None or kept.returncode != 0 or not kept.stdout:
        return LEFT
    if ignored_by(root, rel) is not None:
        return LEFT
    if theirs_staged(root, ours):
        return LATER
    done = run_git(root, "--literal-pathspecs", "add", "--", rel)
    if done is not None and done.returncode != 0 and b"index.lock" in done.stderr:
        return WAIT  # ("Unable to create '.git/index.lock': File exists")
    return STAGED if done is not None and done.returncode == 0 else LEFT


def theirs_staged(root: Path, ours: Sequence[str] = ()) -> bool:
    """Whether git's index holds a change from HEAD anywhere in the repository (a
    commit being put together; `git diff --cached`) but at the vault paths ``ours``
    (memvault's own folder notes: one it added was taken for the person's change, and
    the next it made was left untracked). Compared with HEAD's tree alone
    (``diff-index --cached``): the files are not looked at, so the index is never
    written back. True when git cannot say (no commit yet)."""
    mine = [f":(exclude,literal){rel}" for rel in ours]  # (relative to the vault's folder)
    done = run_git(root, "diff-index", "--cached", "--quiet", "HEAD", "--", ":/", *mine)
    return done is None or done.returncode != 0


def untracked(root: Path, rels: Sequence[str]) -> list[str]:
    """The vault paths among ``rels`` holding a file that git's index has no entry for
    (one ``git ls-files``); [] outside git, or when git cannot be asked."""
    there = [rel for rel in rels if (root / rel).is_file()]
    if not there:
        return []
    done = run_git(root, "--literal-pathspecs", "ls-files", "-z", "--", *there)
    if done is None or done.returncode != 0:
        return []
    kept = set(done.stdout.decode("utf-8", "replace").split("\0"))
    return [rel for rel in there if rel not in kept]


def not_pushed(
    root: Path, against: str | None = None, within: float | None = None
) -> list[str] | None:
    """The vault's files (paths under it) that this clone holds otherwise than its
    upstream branch had them when last fetched: committed and not pushed (since the
    merge base, so a change only upstream has is not one), staged, edited, or untracked
    and not ignored (``git diff`` and ``git ls-files``); HEAD stands for the upstream
    when there is none. ``against``: a commit to take in the upstream's place when this
    clone has it (the team's writer's: what its index was written from). [] outside git,
    or when git cannot be asked. ``within``: seconds git is given in all (each call
    killed past them), None when it did not answer in time (a search waits for it:
    a slow disk, a huge folder git walks)."""
    end = None if within is None else time.monotonic() + within

    def ask(*args: str) -> subprocess.CompletedProcess[bytes] | None:
        left = GIT_TIMEOUT if end is None else min(GIT_TIMEOUT, end - time.monotonic())
        return run_git(root, *args, timeout=max(left, 0.01))

    since = "HEAD"
    for other in (*((against,) if against else ()), "@{upstream}"):
        base = ask("merge-base", "HEAD", other)
        if base is not None and base.returncode == 0:
            since = base.stdout.decode().strip()
            break
    out: list[str] = []
    for args in (
        ("diff", "--name-only", "-z", "--relative", "--no-renames", since, "--", "."),
        ("ls-files", "-z", "--others", "--exclude-standard", "--", "."),
    ):
        done = ask("-c", "core.quotePath=false", *args)
        if done is not None and done.returncode == 0:
            out += [p for p in done.stdout.decode("utf-8", "replace").split("\0") if p]
    return None if end is not None and time.monotonic() >= end else out


def common_dir(gdir: Path) -> Path:
    """The git folder a worktree's shares with the repository (its ``commondir``: refs,
    the stash), or ``gdir`` itself."""
    try:
        shared = (gdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return gdir
    return gdir / shared if shared and "\0" not in shared else gdir  # (NUL: no path)


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


def on_a_remote(root: Path, commit: str) -> str | None:
    """The branch a `git pull` here brings that holds ``commit`` (the team has it: a
    clone that lacks it is behind, whatever it had checked out before), by its short
    name (``origin/main``), or None. HEAD's upstream when it has one: another remote
    branch holding it (a feature branch since squash-merged into main, and edited
    there after) is not one this clone follows, and no pull brings it; any
    remote-tracking branch when HEAD has none (a detached HEAD, a branch set up without
    one)."""
    up = run_git(root, "rev-parse", "--symbolic-full-name", "@{upstream}")
    name = up.stdout.decode("utf-8", "replace").strip() if up and up.returncode == 0 else ""
    done = run_git(
        root,
        "for-each-ref",
        "--count=1",
        "--format=%(refname:short)",
        "--contains",
        commit,
        name if name.startswith("refs/") else "refs/remotes",
    )
    if done is None or done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace").strip() or None


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
    root: Path, *args: str, stdin: bytes = b"", timeout: float = GIT_TIMEOUT
) -> subprocess.CompletedProcess[bytes] | None:
    """git run on the repository around the vault, or None (outside git, no git, or
    killed after ``timeout`` seconds)."""
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
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None


# what points git at another repository than the one around the vault
_LOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX")


__all__ = [
    "DETACHED",
    "LATER",
    "LEFT",
    "STAGED",
    "WAIT",
    "commits_lacked",
    "common_dir",
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
    "not_pushed",
    "on_a_remote",
    "published",
    "run_git",
    "settings_ignored",
    "stage_made",
    "theirs_staged",
    "was_checked_out",
]
