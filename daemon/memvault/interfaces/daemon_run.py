"""``memvault daemon run``, the daemon's own entry: no CLI framework in its process.

What ``memvault daemon start`` spawns, the systemd and launchd units run and a restart
after ``.memvault/`` was deleted runs again is ``python -m memvault daemon run --vault
ROOT [--log-file]``. Through the CLI it held typer and the CLI's modules for its
whole life (2.9 MiB, bench/RESULTS.md "byte by byte", "small59"), used for nothing but
reading three options. ``memvault.__main__`` and the console script come here first
(``main``): that command, with only its options as the CLI reads them (``parse``), is
served here; anything else (``--help``, another option, a value the CLI would refuse)
goes to the CLI, which answers as it always did. What the person types, and what is
said, are the same: the start in plain lines (``announce``), an error in the CLI's own
words and exit code (``handled``, ``fail``: the CLI loaded then, at the exit).

The daemon's start and end are ``interfaces/daemon_serve``'s, which ``memvault up``
shares (it serves in the CLI's own process: its progress bar is the CLI's). The CLI
never imports this module (no import circle: tests/test_architecture.py).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from memvault.errors import MemvaultError
from memvault.interfaces.daemon_serve import AlreadyRunning, announce, finish, made, open_writable
from memvault.interfaces.vault_choice import resolve_vault


@dataclass(frozen=True, slots=True)
class RunArgs:
    """``daemon run``'s options: ``--vault PATH``, ``--port N``, ``--log-file``."""

    vault: Path | None = None
    port: int | None = None
    log_file: bool = False


_VALUED = ("--vault", "--port")


def parse(argv: Sequence[str]) -> RunArgs | None:
    """``daemon run`` and its options, each at most once, as ``--opt value`` or
    ``--opt=value``; None for anything else, which is the CLI's to read."""
    if list(argv[:2]) != ["daemon", "run"]:
        return None
    values: dict[str, str] = {}
    log_file = False
    rest = list(argv[2:])
    while rest:
        word = rest.pop(0)
        if word == "--log-file" and not log_file:
            log_file = True
            continue
        name, eq, value = word.partition("=")
        if name not in _VALUED or name in values:
            return None
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        if not value or value.startswith("-"):  # the CLI says what it makes of these
            return None
        values[name] = value
    port = values.get("--port")
    if port is not None and not re.fullmatch("[0-9]{1,5}", port):
        return None
    vault = values.get("--vault")
    return RunArgs(
        Path(vault) if vault is not None else None,
        int(port) if port is not None else None,
        log_file,
    )


def main() -> None:
    """The ``memvault`` command: ``daemon run`` here, everything else the CLI's. One
    OpenBLAS thread unless the user set otherwise, as ``cli.app.main`` says why."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args = parse(sys.argv[1:])
    if args is None:
        from memvault.interfaces.cli import main as cli

        cli()
        return
    try:
        run(args)
    except KeyboardInterrupt:  # before the daemon's own handlers: as the CLI ends it
        raise SystemExit(130) from None  # (typer's: silent, the shell's code for Ctrl-C)


def run(args: RunArgs) -> NoReturn:
    """Open the vault for the daemon and serve until SIGTERM or Ctrl-C."""
    with handled():
        try:
            opened = open_writable(resolve_vault(args.vault), args.log_file)
        except AlreadyRunning as exc:
            fail(str(exc), 1)
    with handled():
        daemon = made(opened, args.port)
        finish(daemon, daemon.run(on_started=None if args.log_file else announce))


@contextmanager
def handled() -> Iterator[None]:
    """A library error said as the CLI says it (``cli.common.handled``: its words, its
    exit code), the CLI loaded only then: the process is exiting."""
    try:
        yield
    except (MemvaultError, OSError) as exc:
        import typer

        from memvault.interfaces.cli import common

        try:
            with common.handled():
                raise exc
        except typer.Exit as said:
            raise SystemExit(said.exit_code) from None


def fail(message: str, code: int) -> NoReturn:
    """``message`` said as the CLI's ``common.fail`` says it, and exit ``code``."""
    import typer

    from memvault.interfaces.cli import common

    try:
        common.fail(message, code)
    except typer.Exit as said:
        raise SystemExit(said.exit_code) from None


__all__ = ["RunArgs", "main", "parse", "run"]
