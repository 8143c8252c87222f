"""The daemon's start and end, as ``memvault daemon run`` and ``memvault up`` share them:
the vault opened for it (its logging set up first), the daemon made, its start said in plain
lines, and its end (started again when ``.memvault/`` was deleted under it, else exit).

No CLI framework here: ``interfaces/daemon_run`` serves ``daemon run`` with these
without loading typer, and ``cli/daemon`` (``up``, and ``run`` when the CLI read the
line) with its own progress bar and words.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from memvault.errors import LockHeld

if TYPE_CHECKING:
    from memvault.service.daemon import Daemon


class AlreadyRunning(Exception):
    """A daemon runs for the vault already: said, exit 1 (not a library error: the
    command says it, ``memvault daemon run`` or ``up``)."""


def running_here(root: Path) -> str | None:
    """Why a daemon cannot start for ``root``: one runs for it already (exit 1)."""
    from memvault.vault import runfile

    info = runfile.running(root)
    if info is None:
        return None
    return f"a memvault daemon is already running for {root.resolve()} (pid {info.pid}, {info.url})"


def open_writable(root: Path, log_file: bool) -> Any:
    """Open the vault for the daemon; an already running daemon is ``AlreadyRunning`` (exit
    1), another holder ``LockHeld`` (6; the index in PostgreSQL written from another
    machine: a reader daemon, docs/TEAM.md). Its logging is set up first (to
    .memvault/daemon.log, or stderr): what the open does, an older index's upgrade, is
    logged (set up after it, the upgrade's lines went nowhere)."""
    from memvault.api import Vault
    from memvault.config import VaultConfig
    from memvault.service.daemon_log import configure_logging

    configure_logging(VaultConfig.load(root), to_file=log_file)
    try:
        return Vault.open(root, through_daemon=False, reader=True)
    except LockHeld:
        running = running_here(root)
        if running is not None:
            raise AlreadyRunning(running) from None
        raise


def made(vault: Any, port: int | None) -> Daemon:
    """The daemon over ``vault`` (opened by ``open_writable``, its logging set up)."""
    from memvault.service.daemon import Daemon, said_afresh

    said_afresh()
    return Daemon(vault, port=port)


def announce(daemon: Daemon) -> None:
    """Plain lines on stderr: rich, loaded for them, would stay for the daemon's life
    (1.4 MiB, bench/RESULTS.md "byte by byte")."""
    print(
        f"memvault daemon serving {daemon.vault.root} at {daemon.runfile_info().url} "
        f"(pid {daemon.pid}); token and port in {daemon.json_path}; Ctrl-C stops it",
        file=sys.stderr,
        flush=True,
    )
    if daemon.reader:
        print(f"read-only: {daemon.writer_elsewhere()}", file=sys.stderr, flush=True)


def finish(daemon: Daemon, code: int) -> NoReturn:
    """Everything is saved and closed (or, past the deadline, as safe as a kill -9): start
    again when ``.memvault/`` was deleted under the daemon, else exit ``code``. The
    model's process of a vault left open (its lane's step unfinished) is killed first:
    stopped (SIGSTOP, a debugger), it outlived the daemon, or its next self."""
    if not daemon.vault.closed:
        daemon.vault.engine.embedding.kill_process()
    if daemon.restart:
        from memvault.service.daemon import start_afresh

        try:
            start_afresh(daemon.vault.root, daemon.config_watch, daemon.afresh)
        except OSError as exc:
            print(f"memvault daemon: cannot start again: {exc}", file=sys.stderr, flush=True)
    exit_now(code)


def exit_now(code: int) -> NoReturn:
    """Exit now: everything is closed; skip the interpreter's teardown (seconds with torch)."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


__all__ = ["AlreadyRunning", "announce", "finish", "made", "open_writable"]
