"""What every ``memvault`` command shares: the consoles, the options, finding the
vault, turning library errors into exit codes, JSON output and the progress bar.

Exit codes (also in the README):

    0  success
    1  the command ran and found problems (broken links; status: MEMORY.md over
       budget or with an unclosed section; a daemon already running, ...)
    2  usage error (unknown option, bad argument; a note name several notes have)
    3  no vault (a folder without .memvault/) / invalid configuration
    4  not found (note, heading, line range, a search's folder; a file that is not text)
    5  refused (unsafe path, note exists, read-only, another vault's service file)
    6  another process holds the vault, or the daemon cannot be reached
    7  the embedding model or the index cannot be loaded
"""

from __future__ import annotations

import errno
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer

from memvault import errors as E
from memvault.interfaces.vault_choice import resolve_vault

if TYPE_CHECKING:
    from rich.console import Console

    from memvault.api import Mode

T = TypeVar("T")


class LazyConsole:
    """A rich ``Console`` made when first used, with the options given: rich is 41
    modules, 1.4 MiB that a daemon started as ``memvault daemon run`` held for its life
    and never printed with (bench/RESULTS.md, "byte by byte")."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._made: Console | None = None

    @property
    def console(self) -> Console:
        if self._made is None:
            from rich.console import Console

            self._made = Console(**self._options)
        return self._made

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)


def real(console: LazyConsole | Console) -> Console:
    """The ``Console`` itself (a test may have put one in place of a lazy one)."""
    return console.console if isinstance(console, LazyConsole) else console


# No markup or emoji codes by default: note titles, paths and links (``[[...]]``) are
# printed as they are; the few styled messages ask for markup and escape what they embed.
out = LazyConsole(soft_wrap=True, highlight=False, markup=False, emoji=False)
err = LazyConsole(stderr=True, soft_wrap=True, highlight=False, markup=False, emoji=False)

# a path argument the system refuses as such: a usage error (exit 2), not a failure
BAD_PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ELOOP, errno.ENOTDIR, errno.EINVAL})

VaultOpt = Annotated[
    Path | None,
    typer.Option(
        "--vault",
        help="The vault folder. Default: $MEMVAULT_VAULT, else the nearest folder at or "
        "above the current one holding .memvault/ (a vault: `memvault init` makes one).",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for programs and agents.")]


def folder_or_vault(path: Path | None, vault: Path | None, as_json: bool = False) -> Path:
    """``init``/``up``: the folder given as an argument or as ``--vault`` (every other
    command takes ``--vault``: `up --vault X` was "No such option"); both and not the
    same is a usage error; neither is the current folder."""
    if path is not None and vault is not None and path.expanduser() != vault.expanduser():
        fail(f"two folders given: {path} and --vault {vault}; give one", 2, as_json)
    return (path if path is not None else vault) or Path(".")


def fail(message: str, code: int, as_json: bool = False, **details: Any) -> NoReturn:
    """Say what went wrong and exit with ``code``; with ``--json`` the error is also JSON
    on stdout, ``{"error": message, "code": code}`` (and its ``details``: an ambiguous
    name's ``candidates``), so a program reads every outcome from one place."""
    from rich.markup import escape

    if as_json:
        emit_json({"error": message, "code": code, **details})
    err.print(f"[red]error:[/red] {escape(message)}", markup=True, highlight=False)
    raise typer.Exit(code)


@contextmanager
def said_if_stopped(what_then: str, as_json: bool = False) -> Iterator[None]:
    """Ctrl-C: say what is kept and what to run next, and exit 130 (the shell's code for
    it), instead of a silent 130."""
    try:
        yield
    except KeyboardInterrupt:
        fail(f"stopped (Ctrl-C): {what_then}", 130, as_json)


def exit_code(exc: BaseException) -> int:
    """The documented exit code of a library error (``errors.OUTCOMES``)."""
    found = E.outcome(exc)
    return 1 if found is None else found[0]


@contextmanager
def handled(as_json: bool = False) -> Iterator[None]:
    """Turn library errors into a message (and, with ``--json``, a JSON error on stdout)
    and a documented exit code."""
    try:
        yield
    except E.MemvaultError as exc:
        message = str(exc)
        if isinstance(exc, E.NoteExists) and exc.updatable:
            message += " (pass --update to change it)"
        fail(message, exit_code(exc), as_json, **E.details(exc))
    except OSError as exc:  # a path the system refuses (too long, a loop), a folder we cannot write
        name = str(exc.filename or "")
        shown = name if len(name) <= 80 else f"{name[:60]}...({len(name)} characters)"
        code = 2 if exc.errno in BAD_PATH_ERRNOS else 1
        fail(
            f"{shown}: {exc.strerror or exc}" if shown else str(exc.strerror or exc), code, as_json
        )


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def open_vault(vault: Path | None, read_only: bool = False, mode: Mode = "write") -> Any:
    """``Vault.open`` for ``mode`` (``memvault.backends``): through a running daemon, or here."""
    from memvault.api import Vault

    return Vault.open(resolve_vault(vault), read_only=read_only, mode=mode)


PROGRESS_LINE_SECONDS = 10.0  # not on a terminal: one line this often while indexing


class Rate:
    """Time left from the average rate since the work began: indexing is bursty (notes
    are read fast, then a batch waits for the model), so a short window misleads."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.started = clock()

    def left(self, done: int, total: int) -> float | None:
        """Seconds left, or None until there is a rate to go by."""
        elapsed = self.clock() - self.started
        if done <= 0 or elapsed < 2.0 or done >= total:
            return None
        return elapsed * (total - done) / done


def duration(seconds: float | None) -> str:
    """'about 3 min left' — rounded as a person would say it."""
    if seconds is None:
        return "estimating time left"
    if seconds < 60:
        return f"about {max(5, round(seconds / 5) * 5):.0f} s left"
    if seconds < 3600:
        return f"about {round(seconds / 60):.0f} min left"
    return f"about {seconds / 3600:.1f} h left"


def progress_line(label: str, p: Any, rate: Rate) -> str:
    """One line of progress: 'indexing: 1,200/2,984 notes, about 3 min left', then, once
    the notes are in, 'indexing: 384/5,300 chunks given vectors, ...' (the vector lane
    counts chunks: it was called notes, 5,300 of them in a vault of 3,000)."""
    if getattr(p, "stage", "notes") == "vectors":
        what = f"{p.done:,}/{p.total:,} chunks given vectors"
    else:
        what = f"{p.done:,}/{p.total:,} notes" + (
            f", {p.embedded:,} chunks embedded" if p.embedded else ""
        )
    return f"{label}: {what}, {duration(rate.left(p.done, p.total))}"


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[Any], None]]:
    """Progress of long work, only when there is real work (20 notes or more).

    On a terminal: a bar with the notes done, the chunks embedded and the time left
    (from the average rate), fitting 80 columns. Not on a terminal (a log file,
    nohup, a service): one line on stderr every ``PROGRESS_LINE_SECONDS``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    bar: Progress | None = None
    task = None
    rate = Rate()
    last_line = rate.started
    stage = "notes"

    def update(p: Any) -> None:
        nonlocal bar, task, last_line, rate, stage
        if p.total < 20:
            return
        if getattr(p, "stage", "notes") != stage:  # notes, then chunks: a count of its own
            stage, rate = p.stage, Rate()
            if bar is not None:
                bar.stop()
                bar = None
        if not err.is_terminal:
            now = rate.clock()
            if now - last_line >= PROGRESS_LINE_SECONDS and p.done < p.total:
                last_line = now
                err.print(progress_line(label, p, rate), markup=False)
            return
        if bar is None:
            bar = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(bar_width=16),
                MofNCompleteColumn(),
                TextColumn(
                    "chunks given vectors, {task.fields[left]}"
                    if stage == "vectors"
                    else "notes, {task.fields[embedded]} chunks, {task.fields[left]}"
                ),
                console=real(err),
                transient=True,
            )
            bar.start()
            task = bar.add_task(label, total=p.total, embedded=0, left="…")
        assert task is not None
        left = duration(rate.left(p.done, p.total)).replace("estimating time left", "…")
        bar.update(task, completed=p.done, embedded=f"{p.embedded:,}", left=left)

    try:
        yield update
    finally:
        if bar is not None:
            bar.stop()
