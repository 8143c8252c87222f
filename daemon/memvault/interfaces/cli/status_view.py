"""How `memvault status` reads to a person (the JSON form is the data itself)."""

from __future__ import annotations

import shlex
import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memvault.core.note_size import long_said, megabytes
from memvault.core.text import short_path
from memvault.engine.status import CLAUDE_CODE_LINES
from memvault.service.config_watch import CHANGED

SHOWN_PROBLEMS = 20  # the rest: status --json
SHOWN_WARNINGS = 5  # of the daemon's last syncs' (it keeps 20)


CONFIG_CHANGED = CHANGED  # the daemon's own words for it (service/config_watch)


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.0f} h ago"


def status_exit_code(data: dict[str, Any]) -> int:
    """7 when the index does not answer, or a newer memvault writes it (as every command
    that reads it then exits); 1 when MEMORY.md needs a person (a section left unclosed,
    or over its budget)."""
    if data["index"].get("unreachable") or data["index"].get("too_new"):
        return 7
    mem = data["memory"]
    return 1 if mem.get("over_budget") or mem.get("problem") else 0


def render_status(console: Console, data: dict[str, Any]) -> None:
    if data["index"].get("unreachable") or data["index"].get("too_new"):
        render_away(console, data)
        return
    console.print(f"vault: {data['vault']}")
    indexed = data.get("indexed") is not False
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("folder")
    table.add_column("notes", justify="right")
    for folder, count in sorted(data["folders"].items()):
        table.add_row(folder, str(count))
    table.add_row("total", str(data["notes"]))
    if indexed:  # before the first index there is nothing to count by folder
        console.print(table)
    ignored = data.get("ignored") or {}
    if ignored:
        shown = ", ".join(
            f"{path} ({n} note{'s' if n != 1 else ''})" for path, n in list(ignored.items())[:10]
        )
        more = f" and {len(ignored) - 10} more" if len(ignored) > 10 else ""
        console.print(f"not indexed (vault.ignore in .memvault/config.toml): {shown}{more}")

    mem = data["memory"]
    if not mem.get("exists"):
        made = (
            "not in git's index either, so memvault does not make it again: "
            "`git pull` or `git checkout` brings it back, `memvault init` makes a new one"
            if mem.get("git_removed")
            else "a sync creates it"
        )
        console.print(f"{mem['file']}: missing ({made})")
    else:
        tokens = mem["tokens"] if mem["tokens"] is not None else "?"
        line = (
            f"{mem['file']}: {mem['lines']} lines (budget {mem['max_lines']}), "
            f"{tokens} tokens (budget {mem['max_tokens']})"
        )
        if mem.get("over_budget"):
            line += "  OVER BUDGET: move detail into notes; keep MEMORY.md an index"
        console.print(line)
    if mem.get("loaded_limit"):
        own = mem.get("own_lines") or 0
        if own <= mem["max_lines"]:
            fix = "lower memory.max_lines or a section's limit"
        elif mem.get("own_index"):  # an agent's index of links: nothing for migrate to split
            fix = (
                f"{own} lines of it are an index of links kept outside memvault's sections "
                "(as Claude Code's auto memory keeps one): shorten it to what an agent needs "
                "first; the notes it links stay as they are"
            )
        else:
            fix = (
                f"{own} lines of it are your own text, not memvault's sections: `memvault "
                f"migrate {mem['file']}` splits them into notes (docs/MIGRATE.md)"
            )
        console.print(
            f"  {mem['file']} is past 200 lines or 25 KB: Claude Code loads only that much of "
            f"it ({fix})"
        )
        start = mem.get("sections_from_line")
        if start and start > CLAUDE_CODE_LINES:
            console.print(
                f"  memvault's sections begin at line {start}: an agent loading the first "
                f"{CLAUDE_CODE_LINES} lines never sees them"
            )
    kept_out = mem.get("kept_out", [])
    if kept_out:
        console.print(
            f"  {len(kept_out)} note(s) kept out of {mem['file']} by 'memory-index: false': "
            + ", ".join(kept_out[:5])
            + (" ..." if len(kept_out) > 5 else "")
        )
    before = [p for p in mem.get("hidden_before", []) if p not in kept_out]
    if before:
        console.print(
            f"  .memvault/memory-decisions.json (an earlier version's) hid {len(before)} "
            "note(s); it is no longer read: put 'memory-index: false' in those to keep out "
            "(" + ", ".join(before[:5]) + (" ..." if len(before) > 5 else "") + ")"
        )

    links = data["links"]
    console.print(
        f"links: {links['unresolved']} unresolved, {links['ambiguous']} ambiguous, "
        f"{links.get('missing_anchor', 0)} missing anchors, "
        f"{links['alias_only']} alias-only  (details: memvault links check)"
    )
    if links.get("unchecked"):  # a daemon's first index (or a pull) under way
        console.print(
            f"  the links of {links['unchecked']} notes not indexed yet are not counted "
            "(they are once indexed; `memvault links check` reads them now)"
        )

    idx = data["index"]
    if data.get("indexed") is False:
        console.print(
            f"index: not indexed yet ({idx['pending_count']} notes on disk; nothing was "
            "written); `memvault sync` builds the index "
            "and keeps MEMORY.md, `memvault up` also keeps them current"
        )
        _problems(console, data)  # read from the files now: a setting that does not fit them
        return
    console.print(
        f"index: {idx['chunks']} chunks, {idx['embedded']} vectors cached, model {idx['model'] or '(none yet)'}, "
        f"{idx['size_bytes'] / 1e6:.1f} MB on disk"
    )
    if idx.get("model_changed"):
        console.print(
            f"re-embedding every note ({idx['model_changed']}): "
            f"{idx['vectors_pending']} chunks left; keyword search works meanwhile"
        )
    if idx.get("cache_lost"):
        console.print(
            "the embedding cache is empty (deleted, or rebuilt after damage): every note is "
            "embedded again once the vector index opens (the daemon's start, a search); "
            "keyword search works meanwhile"
        )
    where = idx.get("where") or {}
    waiting = idx.get("vectors_pending") or 0
    if waiting and not idx.get("model_changed") and where.get("store") != "postgres":
        # a first index, or saves just made: the vector lane's queue (a field test saw
        # "matches the files on disk" and nothing of the 1,949 chunks still to embed)
        console.print(
            f"{waiting:,} chunks waiting for their vectors (keyword search finds them meanwhile; "
            + ("the daemon embeds them)" if data.get("daemon") else "`memvault sync` embeds them)")
        )
    if where.get("store") == "postgres":  # a team's index (docs/TEAM.md): never a password
        held = where.get("writer")
        who = f"{held['host']} pid {held['pid']}" if held else "no writer running"
        behind = where.get("behind_seconds")
        role = where["role"]
        if role == "none":  # nobody holds the lock: this copy is no reader (docs/TEAM.md)
            daemon = data.get("daemon") or {}
            role = (
                "reader daemon, which stays one: restart it to make this machine the writer"
                if daemon.get("role") == "reader"
                else "reads only; `memvault up` here makes this copy the writer"
            )
        console.print(
            f"index lives in PostgreSQL: {where['dsn']} schema {where['schema']} "
            f"(this process: {role}; writer: {who})"
        )
        if moved := where.get("moved_away"):  # `index move --to sqlite` left it
            console.print(
                f"moved back to SQLite by {moved['host']} {_ago(time.time() - moved['at'])}: no one keeps "
                "this index now; git pull (config.toml's store) and unset "
                "MEMVAULT_INDEX_STORE here",
                markup=False,
            )
        console.print(
            "writer's last change: "
            + (f"{behind:.0f} s ago" if behind is not None else "none yet")
            + f", {where.get('vectors_pending', 0)} chunks still waiting for vectors"
        )
    if idx.get("relink_waiting"):
        waiting = idx["relink_waiting"]
        named = ", ".join(waiting[:5]) + (", ..." if len(waiting) > 5 else "")
        console.print(
            f"links to moved files wait in {len(waiting)} notes that kept changing (or stayed "
            f"open for writing in another program, or git was mid merge or rebase) while "
            f"memvault re-targeted them ({escape(named)}); the next sync tries them again"
        )
    elif idx.get("relink_pending"):
        console.print(
            f"link repair interrupted: links to {idx['relink_pending']} moved files are not "
            "all re-targeted yet; the next sync (or the daemon's start) finishes it"
        )
    if idx["matches_disk"]:
        console.print("index matches the files on disk")
    elif _mostly_elsewhere(data):
        console.print(
            f"this copy's files differ from the shared index in {idx['pending_count']} notes, "
            f"more than half the {data['notes']} it holds: another vault's index (one of the "
            "same folder name)? give this vault a schema of its own ([index] schema in "
            ".memvault/config.toml, or MEMVAULT_INDEX_SCHEMA); or this copy is far behind "
            "its writer's: git pull"
        )
    elif where.get("role") == "reader":  # the writer's files, not these, are indexed
        console.print(
            f"this copy's files differ from the shared index in {idx['pending_count']} notes "
            "(a `git pull` behind or ahead of its writer's; search answers from the index, "
            "get from these files)"
        )
    elif idx["pending_count"] or not idx.get("relink_pending"):  # (a relink: said above)
        _behind(console, idx["pending_count"], idx.get("marked_count") or 0)
    problems = data.get("problems") or []
    listed = {p["path"] for p in problems if p.get("kind") == "skipped"}
    unlisted = [s for s in data.get("skipped_files", []) if s["path"] not in listed]
    if unlisted:  # seen by this status's scan, not yet by a sync
        console.print(f"files not indexed: {len(unlisted)}")
        for item in unlisted:
            console.print(f"  {short_path(item['path'])}: {item['reason']}")
    _problems(console, data)
    _long_notes(console, data)
    if data.get("git_busy"):
        back = " (`git switch <branch>`)" if "detached HEAD" in data["git_busy"] else ""
        console.print(
            f"git is in the middle of {data['git_busy']}: MEMORY.md, the folder notes and links "
            f"to moved files wait until it is done{back}",
            markup=False,
        )
    if waits := data.get("git_stash_waits"):
        console.print(
            f"git: the newest stash changes {', '.join(waits)}: memvault leaves them for "
            "`git stash pop` (a write now would stop it), 10 minutes after the stash at "
            "most; pop it, and the notes written meanwhile are listed",
            markup=False,
        )
    if stops := data.get("git_stash_stops"):
        files = " ".join(shlex.quote(p) for p in stops)
        console.print(
            f"git: `git stash pop` will stop over {', '.join(stops)}: changed since the "
            "stash (memvault listed notes in them, or you edited them). If you did not, "
            f"`git checkout -- {files} && git stash pop`: memvault writes them again",
            markup=False,
        )
    if unadded := data.get("git_folder_notes_unadded"):
        files = " ".join(shlex.quote(p) for p in unadded)
        console.print(
            f"git: {', '.join(unadded)}, made by memvault, is not added to git while you "
            "have changes staged (memvault adds it once you commit them); a `git pull` "
            "that brings another clone's is refused over it (\"untracked working tree "
            f'files would be overwritten"): `git add {files} && git pull --autostash`',
            markup=False,
        )
    when = data.get("last_sync_at")
    last = data.get("last_sync")
    if when:
        ago = time.time() - when
        console.print(
            f"last sync: {ago:.0f}s ago"
            + (
                f"; last change: {len(last['created'])} created, {len(last['modified'])} modified, "
                f"{len(last['deleted'])} deleted, {len(last['moved'])} moved, "
                f"{last['embedded_chunks']} chunks embedded"
                if last
                else ""
            )
        )
    daemon = data.get("daemon")
    if daemon:
        progress = daemon.get("progress") or {}
        console.print(
            f"daemon: {daemon.get('state')}"
            + (f", pid {daemon['pid']}" if daemon.get("pid") else "")
            + (
                # a full reconcile in flight: how far, and the saves it let go first
                f"; reconciling: {progress['done']:,}/{progress['total']:,} notes indexed, "
                f"{daemon.get('let_through', 0)} saves let through meanwhile"
                if daemon.get("reconciling") and progress.get("stage") == "notes"
                else ""
            )
            + (  # the vector lane's step under way: how far
                f"; vectors: {lane_now['done']:,}/{lane_now['total']:,} chunks"
                if (lane_now := (daemon.get("vectors") or {}).get("progress"))
                and lane_now.get("total")
                else ""
            )
        )
        # syncs failing now (the disk full, say): the index falls behind, and the
        # daemon's log, where the reason is, may be on that full disk
        if daemon.get("failed_batches") and daemon.get("last_error"):
            console.print(
                f"  failing: {daemon['failed_batches']} syncs in a row, retrying; "
                f"last error: {daemon['last_error']}"
            )
        if daemon.get("config_changed"):
            console.print(f"  {CONFIG_CHANGED}")
        if said := daemon.get("warnings"):
            # each with its age: what it warned of may be fixed since (a conflict
            # resolved, a merge done); what is wrong now is under "problems" above
            ages = daemon.get("warnings_seconds_ago") or []
            ages = [None] * (len(said) - len(ages)) + list(ages)
            console.print("  the last syncs warned:")
            for warning, age in list(zip(said, ages, strict=True))[-SHOWN_WARNINGS:]:
                console.print(
                    f"    {escape(warning)}" + (f" ({_ago(age)})" if age is not None else "")
                )
            if len(said) > SHOWN_WARNINGS:
                console.print(f"    ({len(said) - SHOWN_WARNINGS} before: status --json)")
        lane = daemon.get("vectors") or {}
        if lane.get("last_error"):
            console.print(f"  vectors failing, retrying: {lane['last_error']}")
        if said := model_process_line(lane.get("model_process")):
            console.print(f"  {escape(said)}")


def model_process_line(process: dict[str, Any] | None) -> str | None:
    """The model's process started again by the daemon (stopped, silent, killed), or
    resting after failing twice: a line for status; None when it never was."""
    if not process or not (process.get("restarts") or process.get("resting_seconds")):
        return None
    n = process["restarts"]
    line = f"the model's process was started again {'once' if n == 1 else f'{n} times'}"
    if process.get("last_restart"):
        line += f", last {_ago(process['last_restart_seconds_ago'])}: {process['last_restart']}"
    if process.get("resting_seconds"):
        line += (
            f"; it failed twice in a row, started again in {process['resting_seconds']:.0f} s "
            "(searches answer by keywords meanwhile)"
        )
    return line


def render_away(console: Console, data: dict[str, Any]) -> None:
    """The index does not answer (its server stopped, the network stalled): what the
    files say, why, and what the daemon does meanwhile (engine/status_away.py); or a newer
    memvault writes it (``too_new``): the versions, and to upgrade."""
    idx = data["index"]
    where = idx.get("where") or {}
    daemon = data.get("daemon") or {}
    console.print(f"vault: {data['vault']}")
    console.print(f"notes on disk: {data['notes']} in {len(data['folders'])} folders")
    mem = data["memory"]
    if mem.get("exists"):
        tokens = f", {mem['tokens']} tokens (budget {mem['max_tokens']})" if mem["tokens"] else ""
        console.print(f"{mem['file']}: {mem['lines']} lines (budget {mem['max_lines']}){tokens}")
    newer = idx.get("too_new")
    if newer:  # it answers, but a newer memvault writes it: nothing here reads it
        console.print(
            f"index: written by a newer memvault (schema version {newer['version']}, this "
            f"memvault's {newer['ours']}): upgrade memvault on this machine; until then "
            "search, context, get and writes are refused"
        )
        console.print(f"  it lives in PostgreSQL: {where.get('dsn')} schema {where.get('schema')}")
        return
    console.print(f"index: does not answer: {escape(idx['unreachable'])}")
    console.print(
        f"  it lives in PostgreSQL: {where.get('dsn')} schema {where.get('schema')}; "
        "search, context and status answer in full once it is back"
    )
    if not daemon:
        console.print(
            "  no daemon runs here; check the server and the network, or the DSN "
            "([index] dsn in .memvault/config.toml, or MEMVAULT_INDEX_DSN)"
        )
        return
    role = "the writer" if daemon.get("role") == "writer" else "a reader: it writes nothing"
    console.print(f"daemon: {daemon.get('state')}, pid {daemon.get('pid')} ({role})")
    if daemon.get("role") == "writer":
        lag = daemon.get("lag_seconds")
        waiting = daemon.get("queue") or 0
        if waiting or lag is not None:  # (a retry in flight holds its files: lag alone)
            console.print(
                (
                    f"  {waiting} changed file{'' if waiting == 1 else 's'}"
                    if waiting
                    else "  changes"
                )
                + " waiting to be indexed"
                + (f", the oldest for {_ago(lag)[:-4]}" if lag is not None else "")
                + "; the daemon indexes them once the server answers (no restart needed)"
            )
    if daemon.get("failed_batches"):
        retry = daemon.get("retry_in_seconds")
        console.print(
            f"  failing: {daemon['failed_batches']} syncs in a row, retrying"
            + (f" (next in {retry:.0f} s)" if retry is not None else "")
        )
    lane = daemon.get("vectors") or {}
    if lane.get("last_error"):  # the vector lane's own retries (its chunks wait in the index)
        console.print(f"  vectors failing, retrying: {escape(lane['last_error'])}")
    when = data.get("last_sync_at")
    if daemon.get("role") == "writer":  # (a reader syncs nothing)
        console.print(
            "  its last sync that went through: "
            + (_ago(time.time() - when) if when else "none since it started")
        )


def _behind(console: Console, pending: int, marked: int) -> None:
    """The index behind the files: the notes changed since the last sync, and apart
    those memvault marked to read again itself (an upgrade's step, a new model), whose
    files no one changed: after an upgrade they were said as changed by someone."""
    changed = pending - marked
    again = f"{marked} notes to read again for memvault's upgrade (or a new model)"
    if not marked:
        console.print(f"index is behind the files: {changed} notes changed since the last sync")
    elif not changed:
        console.print(f"index is behind: {again}: the daemon, the next sync or search reads them")
    else:
        console.print(
            f"index is behind the files: {changed} notes changed since the last sync, and {again}"
        )


def _mostly_elsewhere(data: dict[str, Any]) -> bool:
    """A reader whose files differ from most of the shared index: search answers with
    notes this folder may never have (a field test's other vault, its folder of the same
    name, read the first vault's index with no word of it). A writer is refused at open
    (index/seam.py ``_this_vaults``)."""
    where = data["index"].get("where") or {}
    if where.get("store") != "postgres" or where.get("role") == "writer":
        return False
    return bool(data["notes"] >= 2 and data["index"]["pending_count"] * 2 > data["notes"])


def _problems(console: Console, data: dict[str, Any]) -> None:
    problems = data.get("problems") or []
    if problems:
        console.print(f"problems ({len(problems)}), kept until the file is fixed:")
        for p in problems[:SHOWN_PROBLEMS]:
            console.print(f"  {short_path(p['path'])}: {p['reason']}")
        if len(problems) > SHOWN_PROBLEMS:
            console.print(
                f"  ... and {len(problems) - SHOWN_PROBLEMS} more (memvault status --json)"
            )


def _long_notes(console: Console, data: dict[str, Any]) -> None:
    """Notes grown past a quarter of vault.max_note_bytes (core/note_size)."""
    long = data.get("long_notes") or {}
    if not long.get("count"):
        return
    cap = long["max_note_bytes"]
    named = "; ".join(long_said(n["path"], n["bytes"], n["lines"], cap) for n in long["notes"])
    more = long["count"] - len(long["notes"])
    console.print(
        f"long notes ({long['count']}, past {megabytes(long['from_bytes'])}): {named}"
        + (f"; and {more} more" if more > 0 else "")
        + f". An agent reads them in parts, a write past {megabytes(cap)} "
        "(vault.max_note_bytes) is refused and only that much of a note is indexed: "
        "split them by topic or by period (notes-2.md)",
        markup=False,
    )
