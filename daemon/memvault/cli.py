"""The ``memvault`` command. Thin: parse, call the library, print, map errors.

Exit codes (also in the README):

    0  success
    1  the command ran and found problems (broken links, MEMORY.md over budget
       with --strict, a daemon already running, ...)
    2  usage error (unknown option, bad argument)
    3  no vault / invalid configuration
    4  not found (note, heading, line range)
    5  refused (unsafe path, note exists, read-only)
    6  another process holds the vault, or the daemon cannot be reached
    7  the embedding model or the index cannot be loaded
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from memvault import __version__
from memvault import errors as E

T = TypeVar("T")

app = typer.Typer(
    name="memvault",
    help="An agent's long-term memory as a markdown vault: a small MEMORY.md index, "
    "one-topic notes, hybrid search, a daemon that keeps it all true.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
links_app = typer.Typer(
    help="Check the vault's links the way Obsidian resolves them.", no_args_is_help=True
)
app.add_typer(links_app, name="links")

# No markup or emoji codes by default: note titles, paths and links (``[[...]]``) are
# printed as they are; the few styled messages ask for markup and escape what they embed.
out = Console(soft_wrap=True, highlight=False, markup=False, emoji=False)
err = Console(stderr=True, soft_wrap=True, highlight=False, markup=False, emoji=False)

EXIT_CODES: list[tuple[type[BaseException], int]] = [
    (E.VaultNotFound, 3),
    (E.ConfigError, 3),
    (E.NoteNotFound, 4),
    (E.UnsafePath, 5),
    (E.NoteExists, 5),
    (E.LockHeld, 6),
    (E.DaemonError, 6),
    (E.ModelError, 7),
    (E.IndexCorrupt, 7),
    (E.MemvaultError, 1),
]

VaultOpt = Annotated[
    Path | None,
    typer.Option(
        "--vault",
        help="The vault folder. Default: $MEMVAULT_VAULT, else the nearest folder at or "
        "above the current one holding .memvault/ or MEMORY.md.",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for programs and agents.")]


def fail(message: str, code: int) -> NoReturn:
    err.print(f"[red]error:[/red] {escape(message)}", markup=True, highlight=False)
    raise typer.Exit(code)


@contextmanager
def handled() -> Iterator[None]:
    """Turn library errors into a message and a documented exit code."""
    try:
        yield
    except E.MemvaultError as exc:
        code = next(c for kind, c in EXIT_CODES if isinstance(exc, kind))
        fail(str(exc).replace("[", "\\["), code)


def resolve_vault(vault: Path | None) -> Path:
    """--vault, else $MEMVAULT_VAULT, else the nearest vault at or above here."""
    from memvault.vault import find_vault  # light: no engine, no numpy

    env = os.environ.get("MEMVAULT_VAULT")
    found = (
        vault if vault is not None else Path(env).expanduser() if env else find_vault(Path.cwd())
    )
    if found is None:
        raise E.VaultNotFound(
            "no vault here: pass --vault PATH, set MEMVAULT_VAULT, or run inside a vault "
            "(a folder with .memvault/ or MEMORY.md); `memvault init PATH` creates one"
        )
    if not found.is_dir():
        raise E.VaultNotFound(f"no vault at {found}: not a folder")
    return found


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def open_vault(vault: Path | None, read_only: bool = False) -> Any:
    from memvault.api import Vault

    return Vault.open(resolve_vault(vault), read_only=read_only)


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[Any], None]]:
    """A rich progress bar that appears only when there is real work."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    bar: Progress | None = None
    task = None

    def update(p: Any) -> None:
        nonlocal bar, task
        if bar is None:
            if p.total < 20 or not err.is_terminal:
                return
            bar = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            )
            bar.start()
            task = bar.add_task(label, total=p.total)
        assert task is not None
        bar.update(task, completed=p.done, description=f"{label} ({p.embedded} chunks embedded)")

    try:
        yield update
    finally:
        if bar is not None:
            bar.stop()


def version_callback(value: bool) -> None:
    if value:
        out.print(f"memvault {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_callback(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=version_callback, is_eager=True, help="Show the version."
        ),
    ] = False,
) -> None:
    """memvault: long-term memory for AI agents that people can read and edit."""


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="Folder for the vault (created if missing).")] = Path(
        "."
    ),
    as_json: JsonOpt = False,
) -> None:
    """Lay the vault template down. Existing files are never overwritten."""
    from memvault.template import init_vault

    with handled():
        report = init_vault(path)
    if as_json:
        emit_json(report.to_dict())
        return
    out.print(f"vault at {report.root}: {len(report.created)} files created")
    if report.skipped:
        out.print(f"kept {len(report.skipped)} existing files untouched:")
        for rel in report.skipped:
            out.print(f"  {rel}")


@app.command()
def sync(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Reconcile MEMORY.md and the search index with the files, then report."""
    from memvault.client import DaemonClient

    with handled():
        root = resolve_vault(vault)
        client = DaemonClient.find(root)
        if client is not None:  # the daemon is the one writer: ask it
            with client:
                report = client.sync()
        else:
            with open_vault(root) as v, progress_bar("indexing") as bar:
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
        out.print(f"  skipped {s.path}: {s.reason}")
    for w in report.warnings:
        out.print(f"  warning: {w}")
    for p in report.problems:
        err.print(f"  problem: {p}")


@app.command()
def status(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Notes per folder, MEMORY.md against its budget, links, index health."""
    from memvault.client import DaemonClient

    with handled():
        root = resolve_vault(vault)
        client = DaemonClient.find(root)
        if client is not None:  # includes the daemon's own state (lag, observer, model)
            with client:
                data = client.status()
        else:
            with open_vault(root, read_only=True) as v:
                data = v.status()
    if as_json:
        emit_json(data)
        return
    from memvault.status_view import render_status

    render_status(out, data)
    if data["memory"].get("over_budget"):
        raise typer.Exit(1)


@links_app.command("check")
def links_check(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """List unresolved and ambiguous links with file:line. Exit 1 if there are any."""
    with handled(), open_vault(vault, read_only=True) as v:
        problems = v.links_check()
    bad = [p for p in problems if p.verdict != "alias"]
    if as_json:
        emit_json({"problems": [p.to_dict() for p in problems], "count": len(bad)})
    else:
        for p in problems:
            where = f"{p.source}:{p.line}"
            if p.verdict == "ambiguous":
                out.print(f"{where}: [[{p.target}]] is ambiguous: {', '.join(p.candidates)}")
            elif p.verdict == "alias":
                out.print(
                    f"{where}: [[{p.target}]] only matches an alias (Obsidian shows it unresolved)"
                )
            else:
                out.print(f"{where}: [[{p.target}]] does not resolve")
        out.print(f"{len(bad)} broken links" if bad else "all links resolve")
    raise typer.Exit(1 if bad else 0)


@app.command()
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
            "--no-index", help="Write the notes but leave indexing to the next sync or the daemon."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Split a giant memory dump into people/, projects/, decisions/, logs/ notes and a small index."""
    from memvault.migration import migrate as run_migration
    from memvault.migration_view import render_migration

    with handled(), progress_bar("indexing") as bar:
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
    render_migration(out, report)


def _token_counter() -> Callable[[str], int] | None:
    """The default model's tokenizer (no torch), or None if it cannot load."""
    from memvault.config import DEFAULT_MODEL
    from memvault.embedder import Tokenizer

    try:
        return Tokenizer.for_model(DEFAULT_MODEL).count
    except E.MemvaultError:
        return None


def _register_more() -> None:
    # Kept in their own modules so this file stays a table of contents.
    from memvault import cli_agent, cli_daemon, cli_obsidian

    cli_daemon.register(app)
    cli_agent.register(app)
    cli_obsidian.register(app)


_register_more()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
