"""How a vault stands: what is indexed, MEMORY.md against its budget, links, what is
stale, and the problems memvault has with files. ``describe`` reads and never writes;
the engine hands it what it needs.

Problems are state, not events: each is kept where its cause is — a note's row
(a skipped file's reason, a note's warnings: bad frontmatter, a note cut at
``max_note_bytes``), meta ``memory_problems`` (MEMORY.md left untouched, a folder
note the disk refused), meta ``scan_skipped`` (files the last full scan could not
take) — until a sync finds the file changed so that the problem is gone. ``status`` lists them all;
``changed_problems`` tells the engine which appeared or went away since it last
looked, so each is logged once.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memvault.config import CONFIG_FILE, STATE_DIR, VaultConfig
from memvault.core import memory_md, memory_order, memory_own
from memvault.core.changes import Known, Seen, as_indexed, case_pairs, suspects
from memvault.core.conflicts import is_conflict_warning, left_as_git_wrote_it
from memvault.core.note_size import is_long, long_from
from memvault.core.results import LinkProblem, Problem, SkippedFile, SyncReport
from memvault.core.text import line_count, short_path
from memvault.engine import racy_rows, relink_journal
from memvault.engine.folder_staging import kept_to_stage
from memvault.engine.folders import (
    folders_beside_in_another_case,
    section_folders,
    section_said,
    sections_in_another_case,
)
from memvault.engine.stash_hold import seen_stash
from memvault.engine.this_copy import same_but_line_ends, shared_reader
from memvault.errors import MemvaultError
from memvault.index.store import Store
from memvault.vault.files import Scan, VaultFS
from memvault.vault.git_case import case_collisions, collision_said
from memvault.vault.gitstate import (
    git_busy,
    git_removed,
    ignored_by,
    settings_ignored,
    untracked,
)
from memvault.vault.state_dir import load_decisions

log = logging.getLogger("memvault")

CLAUDE_CODE_LINES = 200  # Claude Code's auto memory loads this much of MEMORY.md
CLAUDE_CODE_BYTES = 25 * 1024

SKIPPED_LISTED = 50
LONG_LISTED = 5  # long notes named by status (--json: their count too)
LINES_COUNTED_BYTES = 16 * 1024 * 1024  # a long note's lines counted up to this size
# changed notes read for their links at each status, at most: a daemon's first index of
# 6,000 notes had each status parse every note not indexed yet, 10-20 s (the plugin's
# status view gave up and said to start the daemon)
LINKS_READ_MOST = 300
STATE_FILES = ("index.db", "index.db-wal", "cache.db", "cache.db-wal", "vectors.bin")


def describe(
    config: VaultConfig,
    fs: VaultFS,
    store: Store,
    count_tokens: Callable[[str], int],
    link_problems: Callable[[Scan, frozenset[str]], Sequence[LinkProblem]],
    last_sync_at: float | None,
) -> dict[str, Any]:
    """The status dict that ``memvault status``, ``/status`` and MCP report.
    ``link_problems(scan, unread)``: the vault's link problems, judged on the same one
    scan (a scan of 100,000 notes is a second), the notes in ``unread`` not read. Past
    ``LINKS_READ_MOST`` notes whose words differ from the index's (a daemon's first
    index of thousands of notes, a pull), those are not read: their links are counted
    once indexed, and ``links.unchecked`` says how many notes that leaves out (a team
    reader's clone, every note's time git's but its words the writer's, is read)."""
    scan = fs.scan()
    seen = scan.notes
    known = store.manifest()
    pending = _pending(config, fs, store, scan, known)
    # of those, the notes memvault itself marked to read again (an upgrade's step, a new
    # model: size and time -1), their files unchanged: no person's change to sync
    marked = sum(1 for p in pending if p in seen and p in known and known[p].mtime_ns == -1)
    unread = frozenset(pending) if len(pending) > LINKS_READ_MOST else frozenset()
    problems = link_problems(scan, unread)
    # moves whose links a killed sync had not finished re-targeting (the next sync does),
    # or notes that kept changing while their links were re-targeted (tried again)
    relinking = store.pending_relink()
    waiting = relink_journal.waiting(store)[1] if relinking else ()
    counts = store.counts()
    last = store.meta("last_sync")
    model = store.meta("model_id")
    embedded = store.cache_count(model) if model else 0
    vectors = _vectors(store)
    # cache.db deleted or rebuilt, no vector index opened since (it queues every chunk)
    vectors["cache_lost"] = bool(
        model and counts["chunks"] and not embedded and not vectors["vectors_pending"]
    )
    state = config.state_dir
    size = sum((state / n).stat().st_size for n in STATE_FILES if (state / n).exists())
    # what is not indexed and why: names and symlinks the scan passes over, files not text
    skipped = [{"path": s.path, "reason": s.reason} for s in scan.skipped]
    skipped += [
        {"path": n.path, "reason": n.skip_reason or "not indexed"} for n in store.notes("skipped")
    ]
    memory = _memory(config, store, count_tokens)
    # MEMORY.md's problem is read from the file below, its conflicts among them: the
    # index's warning of the same conflicts, kept on its row as on any note's, listed
    # them a second time once a sync (the daemon's) had read the file; a folder note
    # the disk refused (engine/folder_failures) is kept as the sync found it
    kept = [
        p
        for p in problems_of(store)
        if p.path != config.memory.file
        or (p.kind != "memory" and not is_conflict_warning(p.reason))
    ]
    sections = section_folders(config)
    # what memvault writes that git may hold in a stash: MEMORY.md, the folder notes
    generated = [config.memory.file] + [
        p for _, _, there in sections if (p := memory_md.folder_note_path(there))
    ]
    for title, folder, there in sections_in_another_case(sections):
        said = section_said(title, folder)
        kept = [p for p in kept if not p.reason.startswith(said)]  # (a sync saw it moved)
        not_there = (  # (a Mac's disk opens people/ as People/: yet the names differ)
            f"which the vault spells {there}/ (this disk takes the two for one name, but "
            "MEMORY.md lists a folder's notes as config.toml spells it, as a clone on Linux "
            "must): "
            if fs.folds
            else f"which is not in the vault; {there}/ is (its name differs only in case): "
        )
        reason = (
            f'{said}{not_there}in .memvault/config.toml change folder = "{folder}" to '
            f'folder = "{there}" (a daemon reads it when restarted)'
        )
        kept.append(Problem(f"{STATE_DIR}/{CONFIG_FILE}", reason, "config"))
    for title, folder, twin in folders_beside_in_another_case(config.root, sections):
        n = sum(1 for p in seen if p.startswith(twin + "/"))
        kept.append(Problem(f"{twin}/", twin_folder(title, folder, twin, n), "config"))
    if fs.folds:  # Ana.md and ana.md in git, one file here: the other's words in git only
        for group in case_collisions(config.root):
            there = fs.spelt(group[0])
            said = collision_said(group, there if fs.stat(there) is not None else None)
            kept.append(Problem(group[0], said, "git"))
    settings = f"{STATE_DIR}/{CONFIG_FILE}"
    rule = ignored_by(config.root, settings)
    if rule is not None:  # a root .gitignore's `.memvault/`: the settings stay on this machine
        kept.append(Problem(settings, settings_ignored(rule), "config"))
    if store.replaced():  # a field test's `rm .memvault/index.db` under a running daemon
        kept.insert(0, Problem(_INDEX_FILE, REPLACED, "index"))
    if memory.get("problem"):  # read from the file now: true whether or not a sync ran
        kept.insert(0, Problem(config.memory.file, memory["problem"], "memory"))
    # (git asked once for both questions; a stash a sync saw applied: no pop to come)
    stash = seen_stash(config.root, store, generated)
    return {
        "vault": str(config.root),
        "notes": counts["notes"],
        "folders": store.folder_counts(),
        # what vault.ignore leaves out (folder or file -> its notes): never a silent hole
        "ignored": dict(sorted((scan.ignored or {}).items())),
        "ignore_patterns": list(config.vault.ignore),
        "skipped": len(skipped),
        "skipped_files": skipped[:SKIPPED_LISTED],
        "problems": [p.to_dict() for p in kept],
        "memory": memory,
        "long_notes": _long_notes(config, fs, seen),
        "links": {
            "unresolved": sum(1 for p in problems if p.verdict == "unresolved"),
            "ambiguous": sum(1 for p in problems if p.verdict == "ambiguous"),
            "alias_only": sum(1 for p in problems if p.verdict == "alias"),
            "missing_anchor": sum(1 for p in problems if p.verdict == "anchor"),
            "unchecked": len(unread),
        },
        "index": {
            "chunks": counts["chunks"],
            "embedded": embedded,
            "model": model,
            "size_bytes": size,
            "matches_disk": not pending and not relinking,
            "relink_pending": len(set(relinking.values())),  # moved files, each once
            "relink_waiting": list(waiting),
            "pending": pending[:50],
            "pending_count": len(pending),
            "marked_count": marked,
            **vectors,
            "where": where_of(config, store),
        },
        "last_sync": unpack_report(last),
        # when a sync last ran (this process), and when one last changed something
        "last_sync_at": last_sync_at or float(store.meta("last_sync_at") or 0) or None,
        "last_change_at": float(store.meta("last_sync_at") or 0) or None,
        # what git is in the middle of (a rebase, a detached HEAD): memvault writes no
        # tracked file meanwhile (docs/MEMORY.md, "Git")
        "git_busy": git_busy(config.root),
        # what of memvault's `git stash pop` would stop over (docs/MEMORY.md, "Git")
        "git_stash_stops": list(stash.stops),
        # what waits for `git stash pop` (10 minutes after the stash at most): said
        # without a daemon too, whose warnings say it otherwise
        "git_stash_waits": list(stash.waits),
        # folder notes memvault made while the person had changes staged, not yet added
        # to git: a pull bringing another clone's is refused ("untracked working tree
        # files would be overwritten by merge"), said with the command that goes through
        "git_folder_notes_unadded": untracked(config.root, kept_to_stage(store)),
    }


def behind(config: VaultConfig, fs: VaultFS, store: Store) -> list[str]:
    """The notes whose files differ from the index (new, changed, deleted), as status
    counts them (``pending_count``); reads only: a read answering from the index as it
    is says what its answer misses (backends.open_backend)."""
    return _pending(config, fs, store, fs.scan(), store.manifest())


def changed_here(
    config: VaultConfig,
    fs: VaultFS,
    store: Store,
    known: Mapping[str, Known],
    seen: dict[str, Seen],
    most: int,
    here: Mapping[str, str] | None = None,
) -> list[str] | None:
    """Of the notes the index has, those whose files here differ from it (``differing``:
    each one of another size or time read and hashed), when at most ``most`` differ by
    size or time; None past that, nothing read (a clone: every time git's, each note
    would be read). ``here``: as ``differing`` takes it."""
    paths = [p for p in suspects(known, seen, racy_rows.recorded(store)) if p in known]
    if len(paths) > most:
        return None
    return differing(fs, known, seen, paths, shared_reader(config, store), here)


def _pending(
    config: VaultConfig, fs: VaultFS, store: Store, scan: Scan, known: Mapping[str, Known]
) -> list[str]:
    seen = scan.notes
    ends = shared_reader(config, store)  # a team's reader: a Windows writer's CRLF is no edit
    here = case_pairs(seen, known) if ends else {}  # nor a rename of case git never carries
    seen = as_indexed(seen, here)
    racy = racy_rows.recorded(store)
    changed = differing(fs, known, seen, suspects(known, seen, racy), ends, here)
    return changed + sorted(set(known) - set(seen))


def _long_notes(config: VaultConfig, fs: VaultFS, seen: dict[str, Seen]) -> dict[str, Any]:
    """The notes past a quarter of vault.max_note_bytes (core/note_size), biggest first:
    an agent appending to one every turn meets a refusal at the cap, or, writing the file
    itself, a tail never indexed; named while there is room to split them. Their lines
    are counted on disk (the index read a note past the cap only up to it), for a note
    of at most ``LINES_COUNTED_BYTES`` (its size alone past that)."""
    cap = config.vault.max_note_bytes
    long = sorted(
        ((s.size, p) for p, s in seen.items() if p != config.memory.file and is_long(s.size, cap)),
        key=lambda sp: (-sp[0], sp[1]),
    )
    notes = []
    for size, path in long[:LONG_LISTED]:
        data: bytes | None = None
        # gone since the scan, or moved out of reach: its size alone
        if size <= LINES_COUNTED_BYTES:  # a 500 MB dump is not read at each status
            with contextlib.suppress(OSError, MemvaultError):
                data = fs.path(path).read_bytes()
        lines = data.count(b"\n") + (not data.endswith(b"\n")) if data else None
        notes.append({"path": path, "bytes": size, "lines": lines})
    return {"from_bytes": long_from(cap), "max_note_bytes": cap, "count": len(long), "notes": notes}


def differing(
    fs: VaultFS,
    known: Mapping[str, Known],
    seen: dict[str, Seen],
    paths: list[str],
    line_ends: bool = False,
    here: Mapping[str, str] | None = None,
) -> list[str]:
    """Of the notes whose size or time differ from the index's, those whose content does:
    a note of the same size is read and its hash compared. A reader's files come by git,
    the writer's bytes at other times: every one of them differs by time alone. The
    hashes are remembered by file and stat, so a reader daemon's /status reads a note
    once, not at every call. ``line_ends``: a team's reader, where a note differing
    from the index's but for its line ends is the same note (``this_copy``: a Windows
    writer's CRLF checkout), whatever its size. ``here``: a path of the index -> its
    file here, where the two differ in case alone (``changes.case_pairs``)."""
    out = []
    for path in paths:
        before, now = known.get(path), seen[path]
        file = here.get(path, path) if here else path
        if before is None or not before.sha256 or (before.size != now.size and not line_ends):
            out.append(path)
            continue
        memo = (str(fs.root), file, now.size, now.mtime_ns)
        sha = _HASHED.get(memo)
        if sha is None:
            looked_ns = time.time_ns()
            sha = fs.hashes([file]).get(file, "")
            if len(_HASHED) >= HASHES_KEPT:
                _HASHED.clear()
            if not racy_rows.is_racy(now.mtime_ns, looked_ns):  # a save in its tick: not kept
                _HASHED[memo] = sha
        if sha != before.sha256 and not (line_ends and _alike(fs, file, memo, before.sha256)):
            out.append(path)
    return out


def _alike(fs: VaultFS, path: str, memo: tuple[str, str, int, int], indexed: str) -> bool:
    """``this_copy.same_but_line_ends``, remembered as ``differing``'s hashes are."""
    key = (*memo, indexed)
    same = _ALIKE.get(key)
    if same is None:
        same = same_but_line_ends(fs, path, indexed)
        if len(_ALIKE) >= HASHES_KEPT:
            _ALIKE.clear()
        _ALIKE[key] = same
    return same


HASHES_KEPT = 200_000  # notes whose hash ``differing`` remembers (then it starts again)
_HASHED: dict[tuple[str, str, int, int], str] = {}
_ALIKE: dict[tuple[str, str, int, int, str], bool] = {}

_INDEX_FILE = ".memvault/index.db"
REPLACED = (
    "deleted or replaced while memvault had it open: what it indexes now is lost at its "
    "next start; restart the daemon (memvault daemon stop, then start) to rebuild it "
    "from the notes and the embedding cache"
)


def twin_folder(title: str, folder: str, twin: str, notes: int) -> str:
    """Why ``twin/`` beside the section's ``folder/`` is a problem (status)."""
    return (
        f"{twin}/ is beside {folder}/, the folder of the section {title!r}, its name "
        f"differing only in case: its {notes} note{'s' * (notes != 1)} "
        f"{'are' if notes != 1 else 'is'} in no MEMORY.md section, and a clone on macOS "
        f"or Windows cannot hold both folders: move them into {folder}/ (a move in "
        "Obsidian keeps their links)"
    )


def _vectors(store: Store) -> dict[str, Any]:
    """Chunks waiting for their vectors; while a new model's re-embed runs, which (meta
    ``model_changed``: keyword search works meanwhile, issue 21 item 7)."""
    waiting, _ = store.pending_state()
    out: dict[str, Any] = {"vectors_pending": waiting}
    changed = store.meta("model_changed")
    if waiting and changed:
        out["model_changed"] = changed
    return out


def where_of(config: VaultConfig, store: Store) -> dict[str, Any]:
    """Where the index lives (a DSN without its password), who writes it and how far
    behind the writer this copy's reader is: the writer's last change, its vectors
    still to come (index/seam.py)."""
    describe_pg = getattr(store, "location", None)
    if describe_pg is None:
        return {"store": "sqlite", "path": str(config.state_dir)}
    out: dict[str, Any] = describe_pg()
    changed = float(store.meta("last_sync_at") or 0) or None
    out["writer_last_change_at"] = changed
    out["behind_seconds"] = round(time.time() - changed, 1) if changed else None
    out["vectors_pending"] = store.pending_state()[0]
    return out


def _memory(
    config: VaultConfig, store: Store, count_tokens: Callable[[str], int]
) -> dict[str, Any]:
    memory = memory_file(config, count_tokens)
    # what a note says itself (memory-index: false), and what an earlier version's
    # decisions file once hid (no longer read for MEMORY.md: docs/MEMORY.md)
    memory["kept_out"] = json.loads(store.meta("memory_kept_out") or "[]")
    decisions = load_decisions(config.state_dir)
    memory["hidden_before"] = (
        sorted({p for v in decisions.hidden.values() for p in v}) if decisions else []
    )
    return memory


def memory_file(config: VaultConfig, count_tokens: Callable[[str], int]) -> dict[str, Any]:
    """MEMORY.md against its budget, read from the file alone (no index asked)."""
    cfg = config.memory
    path = config.root / cfg.file
    memory: dict[str, Any] = {"file": cfg.file, "exists": path.is_file()}
    if not memory["exists"]:  # git took it out: not made again (engine/linker.GIT_REMOVED)
        memory["git_removed"] = git_removed(config.root, cfg.file)
    if path.is_file():
        text = path.read_text(encoding="utf-8-sig", errors="replace")
        lines = line_count(text)
        try:
            tokens: int | None = count_tokens(text)
        except MemvaultError:
            tokens = None  # the configured model's tokenizer is not available
        memory.update(
            lines=lines,
            tokens=tokens,
            max_lines=cfg.max_lines,
            max_tokens=cfg.max_tokens,
            over_budget=lines > cfg.max_lines or (tokens or 0) > cfg.max_tokens,
            bytes=len(text.encode("utf-8")),
            # Claude Code loads only the first 200 lines / 25 KB of a MEMORY.md
            loaded_limit=lines > CLAUDE_CODE_LINES or len(text.encode("utf-8")) > CLAUDE_CODE_BYTES,
        )
        try:
            if why := left_as_git_wrote_it(text):  # (engine/linker: left so until resolved)
                raise memory_md.MarkerError(why)
            blocks = memory_md.parse_blocks(text.splitlines(keepends=True))
        except memory_md.MarkerError as exc:
            memory["problem"] = f"left untouched: {exc}"
        else:
            # a first day's own long MEMORY.md: the lines are the person's, not the
            # sections' (whose limits cannot shorten it), and the sections come after them
            memory["own_lines"] = lines - sum(b.end - b.begin + 1 for b in blocks)
            memory["sections_from_line"] = min((b.begin + 1 for b in blocks), default=None)
            # those lines an index of links (an agent's, as Claude Code's auto memory
            # keeps one), not a dump that `memvault migrate` splits (core/memory_own)
            ours = {i for b in blocks for i in range(b.begin, b.end + 1)}
            own = (ln for i, ln in enumerate(text.splitlines()) if i not in ours)
            memory["own_index"] = memory_own.is_index(own)
    return memory


def problems_of(store: Store) -> list[Problem]:
    """Every problem the store keeps (the module docstring says where)."""
    out = [Problem(p, r, k) for p, r, k in json.loads(store.meta("memory_problems") or "[]")]
    out += [Problem(p, r, "skipped") for p, r in json.loads(store.meta("scan_skipped") or "[]")]
    for path, kind, reason, warnings in store.problem_rows():
        if kind == "skipped":
            out.append(Problem(path, f"not indexed: {reason}", "skipped"))
        out += [Problem(path, w, "note") for w in warnings]
    return out


def keep_scan_skipped(store: Store, skipped: Sequence[tuple[str, str]]) -> None:
    """What a full scan could not take (a symlink out of the vault, a name that is not
    text), kept until the next full scan; written only when it changes."""
    value = json.dumps(sorted(skipped))
    if (store.meta("scan_skipped") or "[]") != value:
        store.set_meta("scan_skipped", value)


def changed_problems(store: Store) -> tuple[list[Problem], list[Problem]]:
    """(appeared, resolved) since the last call, for any process: the problems already
    told are kept in meta ``problems_told``, so each is logged once."""
    now = {f"{p.path}\0{p.reason}": p for p in problems_of(store)}
    told = json.loads(store.meta("problems_told") or "{}")
    appeared = [p for key, p in now.items() if key not in told]
    resolved = [Problem(*told[key]) for key in told if key not in now]
    if appeared or resolved:
        store.set_meta(
            "problems_told", json.dumps({k: [p.path, p.reason, p.kind] for k, p in now.items()})
        )
    return appeared, resolved


TOLD_AT_ONCE = 20  # problems logged one by one per sync; the rest as a count


def tell_problems(store: Store, report: SyncReport, scanned: Sequence[SkippedFile] | None) -> None:
    """After a sync: keep what a full scan skipped; log each problem once, when it
    appears (and when it is resolved). Problems are state: ``status`` lists them."""
    if scanned is not None:
        keep_scan_skipped(store, [(s.path, s.reason) for s in scanned])
    if not (report.changed or report.skipped or report.problems or report.warnings):
        return  # nothing can have appeared or gone
    appeared, resolved = changed_problems(store)
    for p in appeared[:TOLD_AT_ONCE]:
        log.warning("problem: %s: %s", short_path(p.path), p.reason)
    if len(appeared) > TOLD_AT_ONCE:  # a first sync of a big vault: no flood
        log.warning("and %d more problems (memvault status)", len(appeared) - TOLD_AT_ONCE)
    for p in resolved[:TOLD_AT_ONCE]:
        log.info("resolved: %s: %s", short_path(p.path), p.reason)
    if len(resolved) > TOLD_AT_ONCE:
        log.info("and %d more problems resolved", len(resolved) - TOLD_AT_ONCE)


def keep_memory_settings(store: Store, fingerprint: str) -> bool:
    """A change to the settings that shape MEMORY.md (``folder = "People"``, a filter, a
    limit) takes effect on the next start: ``memory_synced`` is cleared, so the next sync
    recomputes MEMORY.md though no note changed. True when they changed. So does a change
    of the form of its links (``memory_order.LINKS_FORM``): an upgrade's is written once."""
    fingerprint = f"{fingerprint} {memory_order.LINKS_FORM}"
    if store.meta("memory_settings") == fingerprint:
        return False
    store.set_meta("memory_synced", "")
    store.set_meta("memory_settings", fingerprint)
    return True


# the last sync's report, as meta keeps it: a first sync's lists every note it created
# (74 KB of JSON for 3,000 short notes, 0.07x of their bytes): zlib past PACK_ABOVE
PACK_ABOVE = 4096
_PACKED = "z:"  # JSON starts with "{": an older index's plain report still reads


def pack_report(report: dict[str, Any]) -> str:
    text = json.dumps(report)
    if len(text) <= PACK_ABOVE:
        return text
    return _PACKED + base64.b64encode(zlib.compress(text.encode(), 6)).decode("ascii")


def unpack_report(value: str | None) -> dict[str, Any] | None:
    if not value:
        return None
    if value.startswith(_PACKED):
        value = zlib.decompress(base64.b64decode(value[len(_PACKED) :])).decode()
    out: dict[str, Any] = json.loads(value)
    return out
