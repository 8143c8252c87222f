"""``memvault migrate``: turn a giant MEMORY.md (or an OpenClaw workspace) into a vault.

The pure planner (``core/migrate.py``) decides where every line goes; this
module does the I/O around it:

1. read the sources (a dump file, or a workspace: ``MEMORY.md`` plus
   ``memory/YYYY-MM-DD.md``), decoding invalid UTF-8 as U+FFFD and counting it;
2. keep each original untouched under ``archive/`` (copied; a workspace's daily
   files are moved there, since their text now lives in ``logs/``);
3. create the planned notes — never overwriting: a note already there with the
   same text is "unchanged" (a re-run), one with other text is "kept"; a person, a
   project or a day the vault already has a note for (any case, any spelling of the
   name: ``projects/Hermes.md``, ``people/ana-lópez.md``) gets the migrated lines
   appended, after a ``%% migrated from [[archive/...]] %%`` hint ("merge": one note
   per name, never a ``hermes-2.md`` beside it; the person's words stay first);
4. put a fresh index where the dump was (compare-and-swap on the dump's hash);
5. sync: MEMORY.md's sections and the search index follow. With ``index=False``
   (``migrate --no-index``) only the structure lane runs — MEMORY.md from the
   notes' metadata, links, keyword search — and the model is never loaded: the
   vectors stay pending for the next sync or the daemon.

Idempotent: ``.memvault/migrations.json`` remembers, per source hash, the
archive name and the notes made, so a second run plans the same paths and
writes nothing.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memvault.config import VaultConfig
from memvault.core import compose, memory_md
from memvault.core.migrate import MigrationPlan, PlannedNote, Source, plan_migration, render_note
from memvault.core.results import Record
from memvault.core.text import line_count, sha256_bytes
from memvault.errors import MemvaultError, VaultNotFound
from memvault.vault.files import VaultFS
from memvault.vault.state_dir import ensure_state_dir
from memvault.vault.template import init_vault

MANIFEST = "migrations.json"
_DAILY = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
FRESH_INDEX = (
    "# Memory Index\n\n"
    "This file is the index of this memory vault: one line per note. memvault keeps the "
    "sections below; write anything you like outside them.\n"
    "The original dump is kept untouched in [[{archive}]].\n"
)


@dataclass(frozen=True, slots=True)
class PlanRow(Record):
    path: str
    kind: str
    lines: str  # e.g. "MEMORY.md#L120-L184" (first range, and how many more)
    action: str  # create | unchanged | kept (exists with other text)


@dataclass(frozen=True, slots=True)
class Size(Record):
    lines: int
    tokens: int | None


@dataclass(frozen=True, slots=True)
class MigrationReport(Record):
    vault: str
    dry_run: bool
    sources: tuple[str, ...]
    archive: tuple[str, ...]
    plan: tuple[PlanRow, ...]
    created: tuple[str, ...]
    unchanged: tuple[str, ...]
    kept: tuple[str, ...]
    notes_by_kind: dict[str, int]
    uncertain: tuple[dict[str, Any], ...]
    replaced_bytes: int  # invalid UTF-8 sequences kept as U+FFFD
    before: Size
    after: Size
    plan_seconds: float
    write_seconds: float
    index_seconds: float = 0.0
    sync: dict[str, Any] | None = field(default=None)
    pending_vectors: int = 0  # chunks left for the next sync or the daemon (--no-index)
    merged: tuple[str, ...] = ()  # notes already there (a person, project, day): text appended


def read_sources(source: Path) -> tuple[list[Source], dict[str, bytes], list[Path], int]:
    """(sources, raw bytes by name, files to move into the archive, replaced bytes)."""
    if source.is_file():
        files: list[tuple[str, Path, str | None]] = [(source.name, source, None)]
        movable: list[Path] = []
    elif source.is_dir():
        files = []
        for name in ("MEMORY.md", "CLAUDE.md"):  # the dump(s), then the daily files in date order
            if (source / name).is_file():
                files.append((name, source / name, None))
        daily = (
            sorted(
                (p for p in (source / "memory").glob("*.md") if _DAILY.match(p.name)),
                key=lambda p: p.name,
            )
            if (source / "memory").is_dir()
            else []
        )
        files += [(f"memory/{p.name}", p, p.name.removesuffix(".md")) for p in daily]
        movable = daily
        if not files:
            raise MemvaultError(
                f"{source} holds no MEMORY.md, CLAUDE.md or memory/YYYY-MM-DD.md to migrate"
            )
    else:
        raise VaultNotFound(f"nothing to migrate at {source}")
    sources, raw, replaced = [], {}, 0
    for name, path, hint in files:
        data = path.read_bytes()
        if b"\0" in data:  # what the index takes for a binary file: no note of it
            raise MemvaultError(
                f"{path} is not text (NUL bytes: a binary file, or UTF-16; save it as UTF-8): "
                "nothing migrated"
            )
        raw[name] = data
        text = data.decode("utf-8", errors="replace")
        replaced += text.count("\ufffd") - data.decode("utf-8", errors="ignore").count("\ufffd")
        sources.append(Source(name, text.removeprefix("\ufeff"), hint))
    return sources, raw, movable, replaced


def migrate(
    source: Path,
    into: Path | None = None,
    *,
    dry_run: bool = False,
    index: bool = True,
    today: dt.date | None = None,
    count_tokens: Callable[[str], int] | None = None,
    progress: Callable[[Any], None] | None = None,
) -> MigrationReport:
    source = source.expanduser().resolve()
    root = (into or _default_vault(source)).expanduser().resolve()
    today = today or dt.date.today()
    started = time.perf_counter()
    sources, raw, movable, replaced = read_sources(source)
    manifest_path = root / ".memvault" / MANIFEST
    manifest = (
        json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
    )
    config = VaultConfig.load(root) if (root / ".memvault").is_dir() else VaultConfig(root=root)
    sources, raw = _without_the_index(source, root, sources, raw, config)
    sources, raw = _as_first_migrated(sources, raw, manifest)
    fs = VaultFS(
        root, config.vault.ignore, config.vault.max_note_bytes, quiet_ms=config.vault.quiet_ms
    )
    ours: set[str] = set()
    ours_merged: set[str] = set()
    archive: dict[str, str] = {}
    for name, data in raw.items():
        entry = manifest.get(sha256_bytes(data))
        if entry:
            ours |= set(entry["notes"])
            ours_merged |= set(entry.get("merged", ()))
            archive[name] = entry["archive"]
        else:
            archive[name] = _archive_name(name, today, root, data)
    existing = set(fs.scan().notes) if root.is_dir() else set()
    # one note per name: a person, project or day already in the vault takes the migrated
    # text (appended), never a "-2" copy beside it
    kinds = {"person": "people", "project": "projects", "decision": "decisions", "log": "logs"}
    folders = {kind: config.folder(category) for kind, category in kinds.items()}
    merging = {config.folder(c).casefold(): c for c in ("people", "projects", "logs")}
    names = _one_per_name(existing, merging)
    plan = plan_migration(
        sources,
        existing_paths=frozenset(p for p in existing - ours if _merge_key(p, merging) is None),
        folders=folders,
    )
    plan_seconds = time.perf_counter() - started

    links = {name: path.removesuffix(".md") for name, path in archive.items()}
    rows, texts, merges = [], {}, dict[str, str]()
    for note in plan.notes:
        text = render_note(note, links)
        texts[note.path] = text
        rel = names.get(key, note.path) if (key := _merge_key(note.path, merging)) else note.path
        target = root / rel
        action = "create"
        if target.exists():
            data = target.read_bytes()
            ours_then = render_note(note, links, footer=True).encode("utf-8")
            holds = note.body in data.decode("utf-8", "replace").replace("\r\n", "\n")
            if data in (text.encode("utf-8"), ours_then):
                action = "unchanged"
            elif rel in ours or key is None:
                # a note this migration made (or merged into) and changed since: left alone
                action = "unchanged" if rel in ours_merged and holds else "kept"
            elif holds:
                action = "unchanged"  # the text is there already
            else:
                action = "merge"
                merges[rel] = merges.get(rel, "") + _merged_part(note, links)
        rows.append(PlanRow(rel, note.kind, _ranges(note.segments), action))
    count = count_tokens or (lambda text: len(text.split()))
    dump = next((s.text for s in sources if s.name in ("MEMORY.md", "CLAUDE.md")), sources[0].text)
    before = Size(dump.count("\n") + (not dump.endswith("\n")), count(dump))
    fresh = _fresh_index(plan, archive, config)
    after = Size(fresh.count("\n"), count(fresh))

    created: list[str] = []
    merged: list[str] = []
    write_started = time.perf_counter()
    if not dry_run:
        if not (root / ".memvault").is_dir():
            init_vault(root, memory=False)
        for name, data in raw.items():
            _keep_original(root / archive[name], data)
        for row in rows:
            if row.action == "create":
                try:  # no fsync per note: one os.sync() below; a re-run finishes an interrupted one
                    fs.create(row.path, texts[row.path], durable=False)
                    created.append(row.path)
                except MemvaultError:
                    pass  # appeared meanwhile: never overwritten
            elif row.action == "merge" and row.path not in merged:
                fs.update_text(row.path, functools.partial(_append, part=merges[row.path]))
                merged.append(row.path)
        os.sync()
        for path in movable:  # a workspace's daily files now live in logs/ and archive/
            if path.is_relative_to(root):
                path.unlink(missing_ok=True)
        _replace_index(root, source, raw, archive, config)
        for name, data in raw.items():
            manifest[sha256_bytes(data)] = {
                "archive": archive[name],
                "source": name,
                "notes": sorted(set(texts) | set(merged) | ours_merged),
                "merged": sorted(set(merged) | ours_merged),
            }
        ensure_state_dir(manifest_path.parent)
        tmp = manifest_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, manifest_path)
    write_seconds = time.perf_counter() - write_started
    report = MigrationReport(
        vault=str(root),
        dry_run=dry_run,
        sources=tuple(raw),
        archive=tuple(archive.values()),
        plan=tuple(rows),
        created=tuple(created),
        unchanged=tuple(r.path for r in rows if r.action == "unchanged"),
        kept=tuple(r.path for r in rows if r.action == "kept"),
        merged=tuple(merged) if not dry_run else tuple(r.path for r in rows if r.action == "merge"),
        notes_by_kind=dict(Counter(r.kind for r in rows)),
        uncertain=tuple(
            {
                "source": u.source,
                "line": u.line,
                "kind": u.kind,
                "message": u.message,
                "path": u.path,
            }
            for u in plan.uncertainties
        ),
        replaced_bytes=replaced,
        before=before,
        after=after,
        plan_seconds=round(plan_seconds, 3),
        write_seconds=round(write_seconds, 3),
    )
    if dry_run:
        return report
    from memvault.api import Vault

    index_started = time.perf_counter()
    with Vault.open(root) as vault:
        # MEMORY.md is the point of a migration, and it needs no model: without
        # ``index`` the vectors are queued, not made (minutes on a big dump)
        sync = vault.sync(progress=progress, vectors=index)
        text = (root / config.memory.file).read_text(encoding="utf-8")
        after = Size(text.count("\n"), vault.count_tokens(text))
        pending, _ = vault.pending_vectors()
    return replace(
        report,
        index_seconds=round(time.perf_counter() - index_started, 3),
        sync=sync.to_dict(),
        after=after,
        pending_vectors=pending,
    )


_MERGED_FOLDERS = {"people": "people", "projects": "projects", "logs": "logs"}


def _merge_key(path: str, folders: dict[str, str] = _MERGED_FOLDERS) -> tuple[str, str] | None:
    """(category, name key) for a note that is one per name — a person, a project, a day —
    whatever the case of its folder (``folders``: the vault's, case-folded -> category)
    and the spelling of its name; None for the others."""
    folder, name = _split_folder(path, folders)
    kind = folders.get(folder.casefold()) or _MERGED_FOLDERS.get(folder.casefold())
    if kind is None or not name.endswith(".md"):
        return None
    key = compose.name_key(name.rsplit("/", 1)[-1][:-3])
    return (kind, key) if key else None


def _split_folder(path: str, folders: dict[str, str]) -> tuple[str, str]:
    """(the category folder a path is under — ``Journal/Daily`` too —, the rest)."""
    low = path.casefold()
    for folder in sorted(folders, key=len, reverse=True):
        if low.startswith(folder + "/"):
            return path[: len(folder)], path[len(folder) + 1 :]
    head, _, rest = path.partition("/")
    return head, rest


def _one_per_name(existing: set[str], folders: dict[str, str]) -> dict[tuple[str, str], str]:
    """The note already there for each person, project and day (the first by path)."""
    out: dict[tuple[str, str], str] = {}
    for path in sorted(existing):
        if (key := _merge_key(path, folders)) is not None:
            out.setdefault(key, path)
    return out


def _merged_part(note: PlannedNote, links: dict[str, str]) -> str:
    """What a note already there gets: the migrated lines, verbatim, after a hint line
    (``%% ... %%``: Obsidian hides it, memvault never indexes it) linking the original."""
    refs = ", ".join(
        f"[[{links[name]}|{name}]] line{'s' if a != b else ''} {a}" + (f"–{b}" if a != b else "")
        for name, a, b in note.segments
        if name in links
    )
    return f"\n%% migrated from {refs or 'a dump'} %%\n{note.body}\n"


def _append(text: str, part: str) -> str:
    """``text`` with ``part`` after it, a blank line between, in the file's line endings."""
    newline = "\r\n" if "\r\n" in text else "\n"
    head, part = text.rstrip("\r\n"), part.lstrip("\n")
    return head + newline * 2 + part.replace("\n", newline) if head else part.replace("\n", newline)


def _default_vault(source: Path) -> Path:
    """The vault a dump lies in (a folder above it holding ``.memvault/``: re-running
    on ``archive/MEMORY-<date>.md`` finds its vault), else the dump's own folder."""
    start = source.parent if source.is_file() else source
    for folder in (start, *start.parents):
        if (folder / ".memvault").is_dir():
            return folder
    return start


def _dump_is_the_index(
    root: Path, source: Path, raw: dict[str, bytes], config: VaultConfig
) -> bool:
    """Whether the dump read is the vault's own MEMORY.md (in place, or a workspace's)."""
    name = config.memory.file
    return name in raw and (root / name).resolve() in (source, source / name)


def _without_the_index(
    source: Path, root: Path, sources: list[Source], raw: dict[str, bytes], config: VaultConfig
) -> tuple[list[Source], dict[str, bytes]]:
    """Leave out a vault's MEMORY.md that memvault already keeps: it is the index,
    not a dump (migrating it would file the index away as an inbox note). A
    workspace's new daily files still migrate; with nothing else, it is an error."""
    memory = root / config.memory.file
    name = config.memory.file
    if not _dump_is_the_index(root, source, raw, config):
        return sources, raw
    text = raw[name].decode("utf-8", errors="replace")
    if not (memory_md.has_sections(text) or text.startswith(FRESH_INDEX.split("{", 1)[0])):
        return sources, raw
    own = {s.name: _own_text(s.text, config.memory.max_lines) for s in sources}
    if own.get(name) is not None:
        # a person's long MEMORY.md that memvault's sections were added to (a first
        # `up`; `status` says to migrate it): its own lines are the dump
        return [replace(s, text=own[s.name] or s.text) for s in sources], raw
    rest = [s for s in sources if s.name != name]
    if not rest:
        raise MemvaultError(
            f"{memory} is already this vault's memvault index, not a dump; nothing to migrate"
            " (to migrate an archived original again: memvault migrate archive/<file>.md)"
        )
    return rest, {k: v for k, v in raw.items() if k != name}


def _own_text(text: str, max_lines: int) -> str | None:
    """``text`` with memvault's sections (markers, lines and the heading above each) blanked,
    the lines keeping their numbers, when more than ``max_lines`` of its lines are the
    person's — every line outside the sections, blank ones included, as ``status`` counts
    them when it says to migrate the file; else None (an index, little of it its own)."""
    lines = text.splitlines(keepends=True)
    try:
        blocks = memory_md.parse_blocks(lines)
    except memory_md.MarkerError:
        return None
    if line_count(text) - sum(b.end - b.begin + 1 for b in blocks) <= max_lines:
        return None
    for block in blocks:
        first = (
            block.begin - 1
            if block.begin and lines[block.begin - 1].startswith("#")
            else block.begin
        )
        for i in range(first, block.end + 1):
            lines[i] = lines[i][len(lines[i].rstrip("\r\n")) :]
    return "".join(lines)


def _as_first_migrated(
    sources: list[Source], raw: dict[str, bytes], manifest: dict[str, Any]
) -> tuple[list[Source], dict[str, bytes]]:
    """A source migrated before under another name (the dump, now re-run from its
    archived copy) takes its first name again, so the notes render byte for byte
    the same and the re-run writes nothing."""
    out_sources, out_raw = [], {}
    for src in sources:
        data = raw[src.name]
        entry = manifest.get(sha256_bytes(data))
        name = entry["source"] if entry and entry.get("source") else src.name
        if name in out_raw and name != src.name:
            name = src.name  # two files with the same bytes: keep them apart
        out_sources.append(replace(src, name=name))
        out_raw[name] = data
    return out_sources, out_raw


def _archive_name(name: str, today: dt.date, root: Path, data: bytes) -> str:
    stem = name.removesuffix(".md").replace("/", "-")
    base = (
        f"archive/{stem}-{today.isoformat()}"
        if not _DAILY.match(name.rsplit("/", 1)[-1])
        else f"archive/{name.removesuffix('.md')}"
    )
    candidate, n = f"{base}.md", 2
    while (root / candidate).exists() and (root / candidate).read_bytes() != data:
        candidate, n = f"{base}-{n}.md", n + 1
    return candidate


def _keep_original(target: Path, data: bytes) -> None:
    if target.exists():
        return  # the same bytes (see _archive_name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "xb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _replace_index(
    root: Path, source: Path, raw: dict[str, bytes], archive: dict[str, str], config: VaultConfig
) -> None:
    """Put a fresh index where the dump was (only when the dump is the vault's index)."""
    memory = root / config.memory.file
    name = config.memory.file
    fresh = FRESH_INDEX.format(
        archive=archive.get(name, next(iter(archive.values()))).removesuffix(".md")
    )
    fs = VaultFS(root)
    if not memory.exists():
        fs.create(name, fresh)
        return
    if _dump_is_the_index(root, source, raw, config) and memory.read_bytes() == raw[name]:
        # compare-and-swap against the dump we read: a concurrent edit is never clobbered
        fs.write_cas(name, fresh.encode("utf-8"), sha256_bytes(raw[name]))


def _fresh_index(plan: MigrationPlan, archive: dict[str, str], config: VaultConfig) -> str:
    """What MEMORY.md will read once synced (for the dry run's before/after)."""
    catalogue = [
        memory_md.CatalogueEntry(
            n.path, n.title, str(n.frontmatter.get("summary", "")), dict(n.frontmatter)
        )
        for n in plan.notes
    ]
    head = FRESH_INDEX.format(archive=next(iter(archive.values()), "archive").removesuffix(".md"))
    update = memory_md.update_memory(
        head, catalogue, config.memory.sections, {}, (), resolve=lambda t: None
    )
    return update.text


def _ranges(segments: tuple[tuple[str, int, int], ...]) -> str:
    if not segments:
        return ""
    name, a, b = segments[0]
    more = f" +{len(segments) - 1}" if len(segments) > 1 else ""
    return f"{name}#L{a}-L{b}{more}"


__all__ = ["MigrationReport", "migrate", "read_sources"]
