"""(last manifest, disk scan) -> ChangeSet, in pure steps.

1. ``suspects``: paths that are new, or whose size or mtime differ from the
   manifest. Only these get hashed (the size+mtime fast path); new ones only when a
   known path is gone (``to_hash``: a hash of a new path only tells a move).
2. ``diff``: with those hashes, what was created, modified, deleted, moved.
   A path that vanished and a new path with the same content hash is a move,
   so renames made while nothing was running are still followed.
3. ``reported_moves``: of what is left gone and come, a rename the file system
   reported (a watcher's move event) is a move whatever the file became after it.
4. ``edited_moves``: of what is still left, a note moved and edited at once (the same
   file name, at least half its words kept) is a move too.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, KeysView, Mapping, Sequence
from dataclasses import dataclass, field

from memvault.core.wikilinks import key


@dataclass(frozen=True, slots=True)
class Known:
    """What the index recorded of a file."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Seen:
    """What a scan saw of a file (two are the same when size and mtime are)."""

    size: int
    mtime_ns: int
    disk: str = field(default="", compare=False)  # its name on disk, when the scan knows it


@dataclass(frozen=True, slots=True)
class ChangeSet:
    created: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    moved: tuple[tuple[str, str], ...] = ()  # (old, new)
    touched: tuple[str, ...] = ()  # stat changed, content did not
    # (a name a note had only between two of the sync's looks, the note's path now):
    # renamed twice, or made and renamed, in one batch (``reported_moves``); a link
    # written to that name meanwhile follows the note
    passed: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.created or self.modified or self.deleted or self.moved)

    @property
    def paths(self) -> set[str]:
        """Every path this change set names (old and new sides of moves)."""
        out = set(self.created) | set(self.modified) | set(self.deleted) | set(self.touched)
        for old, new in self.moved:
            out |= {old, new}
        return out


class Manifest(Mapping[str, Known]):
    """What the index recorded of each file, as the store's rows came (path, size,
    mtime_ns, sha256): a ``Known`` made only for a path looked up. A sync with no daemon
    before a read compares 100,000 notes with their rows to find nothing changed: a
    ``Known`` for each cost it 0.1 s of CPU (bench/RESULTS.md, "A search and an add with
    no daemon")."""

    __slots__ = ("rows",)

    def __init__(self, rows: Iterable[tuple[str, int, int, str]]) -> None:
        self.rows: dict[str, tuple[str, int, int, str]] = {row[0]: row for row in rows}

    @classmethod
    def of(cls, known: Mapping[str, Known]) -> Manifest:
        if isinstance(known, Manifest):
            return known
        return cls((p, k.size, k.mtime_ns, k.sha256) for p, k in known.items())

    def __getitem__(self, path: str) -> Known:
        _, size, mtime_ns, sha256 = self.rows[path]
        return Known(size, mtime_ns, sha256)

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __contains__(self, path: object) -> bool:
        return path in self.rows

    def keys(self) -> KeysView[str]:
        return self.rows.keys()  # (set operations on it run in C)


def suspects(
    known: Mapping[str, Known], seen: Mapping[str, Seen], racy: Collection[str] = ()
) -> list[str]:
    """Paths whose content must be hashed to know whether they changed: new, of
    another size or mtime, or ``racy`` (rows whose size and mtime are not to be
    trusted yet: ``engine/racy_rows.py``, git's "racy git")."""
    rows = Manifest.of(known).rows
    out = []
    for path, now in seen.items():
        row = rows.get(path)
        if row is None or row[1] != now.size or row[2] != now.mtime_ns or (racy and path in racy):
            out.append(path)
    return sorted(out)


def to_hash(
    known: Mapping[str, Known], seen: Mapping[str, Seen], racy: Collection[str] = ()
) -> list[str]:
    """The ``suspects`` whose hash ``diff`` needs: a new path's hash only tells a
    move (its content at a known path that is gone), so when no known path is gone
    (a first sync, a batch of new notes) new paths are not hashed: the indexer reads
    and hashes them anyway."""
    out = suspects(known, seen, racy)
    if not known.keys() <= seen.keys():  # a known path is gone
        return out
    return [p for p in out if p in known]


def case_pairs(seen: Collection[str], known: Collection[str]) -> dict[str, str]:
    """Each path of the index missing here (``known`` not in ``seen``) whose note is here
    in another case alone (``wikilinks.key``): index path -> path here. A team's reader
    takes it for the index's note: a rename of case alone on a disk that folds case
    (Obsidian on a Mac) is one git there (``core.ignorecase``) never sees nor carries,
    so a writer on such a disk keeps ``people/ana.md`` where git and every other clone
    keep ``People/Ana.md``, and the other way round. One file for each path at most:
    two of one key (twins on ext4) are left as they are."""
    gone: dict[str, list[str]] = {}
    for path in known:
        if path not in seen:
            gone.setdefault(key(path), []).append(path)
    if not gone:
        return {}
    new: dict[str, list[str]] = {}
    for path in seen:
        if path not in known and key(path) in gone:
            new.setdefault(key(path), []).append(path)
    return {
        gone[k][0]: paths[0] for k, paths in new.items() if len(paths) == 1 and len(gone[k]) == 1
    }


def as_indexed(seen: Mapping[str, Seen], pairs: Mapping[str, str]) -> dict[str, Seen]:
    """``seen`` with each file of ``case_pairs`` keyed as the index spells it."""
    out = dict(seen)
    for indexed, here in pairs.items():
        out[indexed] = out.pop(here)
    return out


def unlisted_kept(
    folders: Collection[str], recorded: Mapping[str, Known | Seen], seen: Mapping[str, Seen]
) -> dict[str, Seen]:
    """What a scan could not see under ``folders`` (there, but not listable: their
    permissions changed), as recorded: those files are not gone. Taken for deleted,
    their notes left the index, MEMORY.md, the links and the search."""
    under = tuple(f"{f}/" for f in folders)
    return {
        p: Seen(r.size, r.mtime_ns)
        for p, r in recorded.items()
        if p.startswith(under) and p not in seen
    }


def diff(
    known: Mapping[str, Known],
    seen: Mapping[str, Seen],
    hashes: Mapping[str, str],
    scope: Collection[str] | None = None,
) -> ChangeSet:
    """The change set. ``hashes`` holds the sha256 of every suspect path.

    ``scope`` limits the comparison to some paths (a watcher batch); by
    default every path known or seen is compared.
    """
    # as sets of names, not a look at each path: a sync with no daemon before a read
    # diffs 100,000 notes to find nothing changed
    gone_set, new_set = known.keys() - seen.keys(), seen.keys() - known.keys()
    hashed = {p for p in hashes if p in known and p in seen}
    if scope is not None:
        scoped = set(scope)
        gone_set, new_set, hashed = gone_set & scoped, new_set & scoped, hashed & scoped
    gone, new = sorted(gone_set), sorted(new_set)
    modified: list[str] = []
    touched: list[str] = []
    for p in sorted(hashed):
        if hashes[p] != known[p].sha256:
            modified.append(p)
        elif (known[p].size, known[p].mtime_ns) != (seen[p].size, seen[p].mtime_ns):
            touched.append(p)  # (a racy row hashed again, found the same: nothing to do)

    by_hash: dict[str, list[str]] = {}
    for p in gone:
        by_hash.setdefault(known[p].sha256, []).append(p)
    moved: list[tuple[str, str]] = []
    created: list[str] = []
    for p in new:
        sha = hashes.get(p)
        olds = by_hash.get(sha, []) if sha else []
        if not olds:
            created.append(p)
            continue
        # identical content vanished from several places: pair the same name first
        name = posixpath.basename(p).casefold()
        best = next((o for o in olds if posixpath.basename(o).casefold() == name), olds[0])
        olds.remove(best)
        moved.append((best, p))
    moved_from = {old for old, _ in moved}
    deleted = [p for p in gone if p not in moved_from]
    return ChangeSet(tuple(created), tuple(modified), tuple(deleted), tuple(moved), tuple(touched))


def reported_moves(changes: ChangeSet, moves: Sequence[tuple[str, str]]) -> ChangeSet:
    """``changes`` with the renames the file system reported taken for moves, whatever
    the file became after (a note renamed and then saved at once, a stub too short for
    ``edited_moves`` to tell). ``moves`` are (old, new) vault paths in the order they
    happened, a folder's standing for everything under it; a new path is followed back
    through them (``a -> b``, ``b -> c``: ``c`` came from ``a``). A pair counts only
    when its old path is gone and its new one came in ``changes`` (renamed onto a note
    that stays, or on again, the diff says what happened) and no other new path came
    from that old one (a path used again after it moved on: no guess)."""
    if not moves:
        return changes
    changes = _passing(changes, moves)
    if not changes.deleted or not changes.created:
        return changes
    gone = set(changes.deleted)
    origins: dict[str, list[str]] = {}
    back = [(new, old) for old, new in reversed(moves)]
    for path in changes.created:
        was = _through(path, back)
        if was != path and was in gone:
            origins.setdefault(was, []).append(path)
    return _paired(changes, sorted((old, n[0]) for old, n in origins.items() if len(n) == 1))


def _passing(changes: ChangeSet, moves: Sequence[tuple[str, str]]) -> ChangeSet:
    """``changes`` with the names notes had only between two looks (``passed``): each
    side of a reported rename of a note that is neither on disk nor indexed now (the
    diff names it nowhere), with where the renames after it took the note, when that
    is a note this batch brought (created, or a move's new side)."""
    arrived = set(changes.created) | {new for _, new in changes.moved}
    named = changes.paths
    passed: dict[str, str] = {}
    for i, (old, new) in enumerate(moves):
        if not new.lower().endswith(".md"):
            continue  # a folder: its notes keep their names
        now = _through(new, moves[i + 1 :])
        if now not in arrived:
            continue
        for name in (old, new):
            if name != now and name not in named and name.lower().endswith(".md"):
                passed[name] = now
    if not passed:
        return changes
    return dataclasses.replace(changes, passed=tuple(sorted(passed.items())))


def moved_on(
    changes: ChangeSet, moves: Sequence[tuple[str, str]], vanished: Collection[str]
) -> tuple[tuple[str, str], ...]:
    """The gone notes a reported rename took to a path that is gone again (``vanished``:
    named by the batch, neither on disk nor indexed): renamed, then moved on before the
    sync ran (its folder renamed a moment later while the daemon was busy). Such a note
    is not deleted: the caller keeps it indexed and hands it on, with the rename, to
    the batch that follows it (each (old, where the renames took it))."""
    if not moves or not vanished:
        return ()
    out = []
    for old in changes.deleted:
        path = _through(old, moves)
        if path != old and path in vanished:
            out.append((old, path))
    return tuple(out)


def _through(path: str, moves: Sequence[tuple[str, str]]) -> str:
    """Where ``moves`` (old, new), applied in turn, take ``path`` (a folder's move takes
    everything under it)."""
    for old, new in moves:
        if path == old:
            path = new
        elif path.startswith(old + "/"):
            path = new + path[len(old) :]
    return path


def _paired(changes: ChangeSet, pairs: Sequence[tuple[str, str]]) -> ChangeSet:
    """``changes`` with ``pairs`` (old, new) taken out of deleted and created, as moves."""
    if not pairs:
        return changes
    olds, news = {o for o, _ in pairs}, {n for _, n in pairs}
    return dataclasses.replace(
        changes,
        created=tuple(p for p in changes.created if p not in news),
        deleted=tuple(p for p in changes.deleted if p not in olds),
        moved=changes.moved + tuple(pairs),
    )


SIMILAR = 0.5  # git's default rename threshold (``diff.renames``: 50 % similar)
# notes gone and come (each, left unpaired by name) past which renamed-and-edited
# notes are not looked for (git's ``diff.renameLimit`` in spirit: every pair is read)
RENAME_LIMIT = 100
MIN_LINES = 3  # a note renamed and edited is paired only with this many lines of its own
MAX_LINES = 5000  # ... and not past this many (every pair compares them)
MARGIN = 0.2  # its match more alike than any rival by this much


def edited_moves(
    changes: ChangeSet,
    old_text: Callable[[str], str | None],
    new_text: Callable[[str], str | None],
) -> ChangeSet:
    """``changes`` with the notes moved and edited at once taken for moves, not for a
    delete and a create: a folder renamed while one of its notes was saved, a pull
    that renames and edits. A pair is what git takes for a rename, and no guess: the
    one note gone and the one note come of a file name (case aside), at least
    ``SIMILAR`` of their words in common besides the name's (``similarity``: the
    texts the caller gives are alike, the chunks' text of each); then, of the notes
    left (``RENAME_LIMIT`` at most), a note renamed and edited at once
    (``_renamed_and_edited``: by their lines, with no rival). Moved, its links follow
    it; its new content is indexed as any edit's."""
    gone, came = _by_name(changes.deleted), _by_name(changes.created)
    pairs: list[tuple[str, str]] = []
    for name, olds in gone.items():
        news = came.get(name, [])
        if len(olds) != 1 or len(news) != 1:
            continue
        before, after = old_text(olds[0]), new_text(news[0])
        stem = posixpath.splitext(name)[0]
        if before is not None and after is not None and similarity(before, after, stem) >= SIMILAR:
            pairs.append((olds[0], news[0]))
    paired_olds, paired_news = {o for o, _ in pairs}, {n for _, n in pairs}
    pairs += _renamed_and_edited(
        [p for p in changes.deleted if p not in paired_olds],
        [p for p in changes.created if p not in paired_news],
        old_text,
        new_text,
    )
    return _paired(changes, sorted(pairs))


def _renamed_and_edited(
    olds: Sequence[str],
    news: Sequence[str],
    old_text: Callable[[str], str | None],
    new_text: Callable[[str], str | None],
) -> list[tuple[str, str]]:
    """Pairs of a gone note and a new one of other names (a rename and an edit at
    once), compared as git compares files, by their lines: each note of ``MIN_LINES``
    lines of its own at least (not blank, not a heading: a template's headings and a
    stub's frontmatter are no evidence), half its lines in common with the other, each
    the other's most alike by ``MARGIN`` over any rival."""
    if not olds or not news or len(olds) > RENAME_LIMIT or len(news) > RENAME_LIMIT:
        return []
    before = {p: c for p in olds if (c := _own_lines(old_text(p))) is not None}
    after = {p: c for p in news if (c := _own_lines(new_text(p))) is not None}
    score: dict[tuple[str, str], float] = {}
    for o, a in before.items():
        size_a = a.total()
        for n, b in after.items():
            size_b = b.total()
            if min(size_a, size_b) < SIMILAR * max(size_a, size_b):
                continue  # too unlike in length ever to be half the same
            if (s := (a & b).total() / max(size_a, size_b)) >= SIMILAR:
                score[o, n] = s

    def best(scores: list[tuple[float, str]]) -> str | None:
        scores.sort(reverse=True)
        if not scores or (len(scores) > 1 and scores[1][0] > scores[0][0] - MARGIN):
            return None  # a rival nearly as alike: no guess
        return scores[0][1]

    out = []
    for o in before:
        new = best([(s, n) for (oo, n), s in score.items() if oo == o])
        if new is not None and best([(s, oo) for (oo, n), s in score.items() if n == new]) == o:
            out.append((o, new))
    return out


def _own_lines(text: str | None) -> Counter[str] | None:
    """A note's lines of its own (stripped; with a word, not a heading: no rule, no
    empty list item), or None when it has fewer than ``MIN_LINES`` or more than
    ``MAX_LINES``."""
    if text is None:
        return None
    lines = Counter(
        s for line in text.splitlines() if (s := line.strip()) and s[0] != "#" and _WORD.search(s)
    )
    return lines if MIN_LINES <= lines.total() <= MAX_LINES else None


def _by_name(paths: Collection[str]) -> dict[str, list[str]]:
    """Paths by their file name, case aside."""
    out: dict[str, list[str]] = {}
    for path in paths:
        out.setdefault(posixpath.basename(path).casefold(), []).append(path)
    return out


def similarity(a: str, b: str, name: str = "") -> float:
    """The share of words two texts have in common (case aside), over the longer
    one's: 1.0 the same, 0.0 nothing. The words of ``name`` are not counted: two
    notes of one file name share it (and their title) whatever else they say."""
    skip = set(_WORD.findall(name.casefold()))
    left = Counter(w for w in _WORD.findall(a.casefold()) if w not in skip)
    right = Counter(w for w in _WORD.findall(b.casefold()) if w not in skip)
    longer = max(sum(left.values()), sum(right.values()))
    return sum((left & right).values()) / longer if longer else 0.0


_WORD = re.compile(r"\w+")


def stat_moves(before: Mapping[str, Seen], after: Mapping[str, Seen]) -> dict[str, str]:
    """Attachments that moved between two scans, without reading them.

    A rename keeps a file's size and modification time, so a path that vanished
    and a new path with the same (size, mtime) is a move: one attachment, or each
    file of a moved folder. Several candidates pair by file name; when the name
    does not decide (two identical new files for one vanished one), nothing is
    guessed and those paths are left out. Hashing large media to confirm is the
    caller's choice.
    """
    gone: dict[tuple[int, int], list[str]] = {}
    for path in sorted(set(before) - set(after)):
        gone.setdefault((before[path].size, before[path].mtime_ns), []).append(path)
    new: dict[tuple[int, int], list[str]] = {}
    for path in sorted(set(after) - set(before)):
        new.setdefault((after[path].size, after[path].mtime_ns), []).append(path)
    moves: dict[str, str] = {}
    for stamp, olds in gone.items():
        news = new.get(stamp, [])
        if len(olds) == 1 and len(news) == 1:
            moves[olds[0]] = news[0]
            continue
        for old in olds:
            name = posixpath.basename(old).casefold()
            same = [p for p in news if posixpath.basename(p).casefold() == name]
            rivals = [o for o in olds if posixpath.basename(o).casefold() == name]
            if len(same) == 1 and len(rivals) == 1:
                moves[old] = same[0]
    return moves
