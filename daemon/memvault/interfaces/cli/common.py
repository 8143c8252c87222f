"""What every ``memvault`` command shares: the consoles, the options, finding the
vault, turning library errors into exit codes, JSON output and the progress bar.

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

import errno
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

from memvault import errors as E

T = TypeVar("T")

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

# a path argument the system refuses as such: a usage error (exit 2), not a failure
BAD_PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR, errno.EINVAL})

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
    except OSError as exc:  # a path the system refuses (too long, a loop), a folder we cannot write
        name = str(exc.filename or "")
        shown = name if len(name) <= 80 else f"{name[:60]}...({len(name)} characters)"
        code = 2 if exc.errno in BAD_PATH_ERRNOS else 1
        fail(f"{shown}: {exc.strerror or exc}".replace("[", "\\["), code)


def resolve_vault(vault: Path | None) -> Path:
    """--vault, else $MEMVAULT_VAULT, else the nearest vault at or above here."""
    from memvault.vault.lock import find_vault  # light: no engine, no numpy

    env = os.environ.get("MEMVAULT_VAULT")
    found = (
        vault if vault is not None else Path(env).expanduser() if env else find_vault(Path.cwd())
    )
    if found is None:
        raise E.VaultNotFound(
            "no vault here: pass --vault PATH, set MEMVAULT_VAULT, or run inside a vault "
            "(a folder with .memvault/ or MEMORY.md); `memvault init PATH` creates one"
        )
    try:
        is_dir = found.is_dir()
    except OSError as exc:  # a name too long, a symlink loop
        shown = str(found) if len(str(found)) <= 80 else f"{str(found)[:60]}..."
        raise E.VaultNotFound(f"no vault at {shown}: {exc.strerror}") from None
    if not is_dir:
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
