"""The commands about the vault itself: init, sync, status, links check, migrate.

Plain functions; ``app.py`` registers them. Each parses, calls the library,
prints, and maps errors to exit codes (``common.handled``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memvault import errors as E
from memvault.core.results import LinkProblem
from memvault.core.text import short_path
from memvault.interfaces.cli.common import (
    JsonOpt,
    VaultOpt,
    emit_json,
    err,
    folder_or_vault,
    handled,
    open_vault,
    out,
    progress_bar,
    real,
    resolve_vault,
    said_if_stopped,
)

if TYPE_CHECKING:
    from memvault.vault.template import InitReport


def init(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="Folder for the vault (created if missing); or --vault. Default: .",
            show_default=False,
        ),
    ] = None,
    vault: Annotated[
        Path | None, typer.Option("--vault", help="The same as the folder argument.")
    ] = None,
    example: Annotated[
        bool,
        typer.Option(
            "--example",
            help="Add the example notes (a fictional team: people, a project, a decision, "
            "a day's log) to try memvault on. Not for a vault you keep.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Make a folder a vault: MEMORY.md, templates and settings. No notes, and an existing
    file is never overwritten."""
    from memvault.vault.template import init_vault

    with handled(as_json):
        report = init_vault(folder_or_vault(path, vault, as_json), example=example)
        indexed = _index_example(Path(report.root)) if example else None
    if as_json:
        emit_json(report.to_dict() | ({"indexed": indexed} if indexed is not None else {}))
        return
    print_init(report, next_step=not example)
    if indexed is not None:
        out.print(
            f"indexed the example notes ({indexed} notes): `memvault context`, `search` and "
            f"`get` work now; `memvault up {shlex.quote(str(report.root))}` keeps it current"
        )


def _index_example(path: Path) -> int:
    """An example vault is for trying memvault at once: it is indexed, so ``context`` and
    ``search`` answer right after ``init --example`` (they need an index)."""
    with open_vault(path) as v, progress_bar("indexing") as bar:
        v.sync(progress=bar)
        return int(v.status()["notes"])


def print_init(report: InitReport, next_step: bool = True) -> None:
    """What ``init`` did, for a person: what it added, what it kept, what to run next."""
    if report.notes:
        were = (
            "1 note was already here, kept as it is"
            if report.notes == 1
            else (f"{report.notes} notes were already here, kept as they are")
        )
        out.print(
            f"vault at {report.root}: {were}; added only what was missing ({len(report.created)}):"
        )
    else:
        out.print(f"vault at {report.root}: {len(report.created)} files and folders created:")
    for rel in report.created:
        out.print(f"  + {rel}")
    for rel in report.updated:
        out.print(f"  ~ {rel} (memvault's previous template, unchanged: brought up to date)")
    if report.skipped:
        out.print(f"kept {len(report.skipped)} existing files untouched:")
        for rel in report.skipped:
            out.print(f"  = {rel}")
    if report.kept_obsidian:
        out.print("kept your Obsidian settings (.obsidian/) as they are")
    if report.memory_lines and report.memory_index:  # an agent's index: nothing to split
        out.print(
            f"your MEMORY.md has {report.memory_lines:,} lines, more than an agent can load: "
            "an index of links (as Claude Code's auto memory keeps one); shorten it to what "
            "an agent needs first, the notes it links stay as they are",
            markup=False,
        )
    elif report.memory_lines:
        out.print(
            f"your MEMORY.md has {report.memory_lines:,} lines, more than an agent can load: "
            "`memvault migrate MEMORY.md` splits them into notes (--dry-run shows the plan; "
            "docs/MIGRATE.md)",
            markup=False,
        )
    for category, folder in (report.roles or {}).items():
        out.print(
            f"using your folder {folder}/ for {category} (not a new {category}/ beside it; "
            "set in .memvault/config.toml)",
            markup=False,
        )
    for folder in report.templates_ignored:
        out.print(f"your templates folder {folder}/ is not indexed (vault.ignore)", markup=False)
    if report.settings_ignored:
        from memvault.vault.gitstate import settings_ignored

        out.print(
            f".memvault/config.toml: {settings_ignored(report.settings_ignored)}", markup=False
        )
    if next_step:
        out.print(
            f"next: memvault up {shlex.quote(str(report.root))}   (indexes the notes, then keeps MEMORY.md current)"
        )


def sync(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Reconcile MEMORY.md and the search index with the files, then report."""
    # through a running daemon (the one writer, however busy it is), or here
    kept = "what was indexed is kept; `memvault sync` (or `memvault up`) indexes the rest"
    with (
        said_if_stopped(kept, as_json),
        handled(as_json),
        open_vault(vault) as v,
        progress_bar("indexing") as bar,
    ):
        report = v.sync(progress=bar)
    if as_json:
        emit_json(report.to_dict())
        return
    out.print(report.summary())
    for old, new in report.moved:
        out.print(f"  moved {old} -> {new}")
    for path in report.relinked:
        out.print(f"  relinked {path}")
    for s in report.skipped:
        out.print(f"  skipped {short_path(s.path)}: {s.reason}")
    for w in report.warnings:
        out.print(f"  warning: {w}")
    for p in report.problems:
        err.print(f"  problem: {p}")


def status(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Notes per folder, MEMORY.md against its budget, links, index health, problems.
    Exit 1 when MEMORY.md needs you: a section left unclosed, or over its budget."""
    # an answering daemon's status includes its own state (lag, observer, model)
    with handled(as_json):
        data = _status_of(resolve_vault(vault))
    from memvault.interfaces.cli.status_view import render_status, status_exit_code

    if as_json:
        emit_json(data)
    else:
        render_status(real(out), data)
    raise typer.Exit(status_exit_code(data))


def _status_of(root: Path) -> dict[str, Any]:
    """The vault's status; its index not answering (PostgreSQL away), what the files say
    and why (``status_away``) instead of the error alone."""
    from memvault.engine.status_away import unopened_status

    try:
        with open_vault(root, mode="peek") as v:
            data: dict[str, Any] = v.status()
            return data
    except E.IndexUnavailable as exc:  # no daemon here: this process's open asked it
        return unopened_status(root, exc)


def links_check(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """List links Obsidian cannot follow (unresolved, ambiguous, a #heading or #^block
    that is not there) with file:line:column. Exit 1 if there are any."""
    with handled(as_json):
        problems = _folder_links(vault)
        if problems is None:
            with open_vault(vault, read_only=True) as v:
                problems = v.links_check()
    counts = {verdict: sum(1 for p in problems if p.verdict == verdict) for verdict in VERDICTS}
    bad = len(problems) - counts["alias"]
    if as_json:
        emit_json({"problems": [p.to_dict() for p in problems], "count": bad, "counts": counts})
    else:
        for p in problems:
            out.print(f"{p.source}:{p.line}:{p.column}: {p.text or p.target} {_verdict(p)}")
        out.print(links_summary(counts))
    raise typer.Exit(1 if bad else 0)


VERDICTS = ("unresolved", "ambiguous", "anchor", "alias")


def _folder_links(vault: Path | None) -> list[LinkProblem] | None:
    """The link check of a folder of notes that is not a vault (an Obsidian vault, before
    deciding on memvault): read in memory with the default settings, nothing written —
    no .memvault/, no index. None when ``vault`` is a vault (or names none)."""
    from memvault.vault.lock import is_vault, misplaced

    if vault is None or not vault.is_dir() or is_vault(vault) or misplaced(vault):
        return None
    from memvault.config import VaultConfig
    from memvault.engine.engine import Engine

    engine = Engine(VaultConfig(root=vault.expanduser().resolve()), read_only=True)
    try:
        return engine.link_problems()
    finally:
        engine.close()


def _verdict(p: LinkProblem) -> str:
    if p.verdict == "ambiguous":
        return f"is ambiguous: {', '.join(p.candidates)}"
    if p.verdict == "alias":
        return "only matches an alias (Obsidian shows it unresolved)"
    if p.verdict == "anchor":
        where = p.candidates[0] if p.candidates else p.target
        kind = "block" if (p.anchor or "").lstrip("#").startswith("^") else "heading"
        return f"leads to no {kind} in {where}: #{p.anchor}"
    return "does not resolve"


def links_summary(counts: dict[str, int]) -> str:
    """``2 unresolved, 1 ambiguous, 1 missing anchor (1 alias-only, not counted)``."""
    parts = []
    if counts["unresolved"]:
        parts.append(f"{counts['unresolved']} unresolved")
    if counts["ambiguous"]:
        parts.append(f"{counts['ambiguous']} ambiguous")
    if counts["anchor"]:
        n = counts["anchor"]
        parts.append(f"{n} missing {'anchor' if n == 1 else 'anchors'}")
    text = ", ".join(parts) if parts else "all links resolve"
    if counts["alias"]:
        text += f" ({counts['alias']} alias-only, not counted)"
    return text


def migrate(
    source: Annotated[
        Path,
        typer.Argument(
            help="A dump (MEMORY.md, CLAUDE.md) or an OpenClaw-style "
            "workspace folder (MEMORY.md + memory/YYYY-MM-DD.md)."
        ),
    ],
    into: Annotated[
        Path | None,
        typer.Option("--into", help="The vault to migrate into (default: the dump's own folder)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the plan and sizes; write nothing.")
    ] = False,
    no_index: Annotated[
        bool,
        typer.Option(
            "--no-index",
            help="Write the notes, MEMORY.md and the keyword index without loading the "
            "model; the vectors are left to the next sync or the daemon.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Split a giant memory dump into people/, projects/, decisions/, logs/ notes and a small index."""
    from memvault.interfaces.cli.migration_view import render_migration
    from memvault.migration import migrate as run_migration

    kept = (
        "what was written and indexed is kept; `memvault sync` (or `memvault up`) indexes "
        "the rest (stopped while the notes were written: the same `memvault migrate` "
        "finishes it, writing nothing twice)"
    )
    with said_if_stopped(kept, as_json), handled(as_json), progress_bar("indexing") as bar:
        report = run_migration(
            source,
            into,
            dry_run=dry_run,
            index=not no_index,
            count_tokens=_token_counter(),
            progress=bar,
        )
    if as_json:
        emit_json(report.to_dict())
        return
    render_migration(real(out), report)


def _token_counter() -> Callable[[str], int] | None:
    """The default model's tokenizer (no torch), or None if it cannot load."""
    from memvault.config import DEFAULT_MODEL
    from memvault.index.tokenizer import Tokenizer

    try:
        return Tokenizer.for_model(DEFAULT_MODEL).count
    except E.MemvaultError:
        return None
