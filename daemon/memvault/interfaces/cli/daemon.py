"""CLI commands for the daemon: ``memvault daemon run|start|stop|status|install`` and ``up``.

Thin: parse, call ``memvault.service.daemon``, print, map errors. The service (and so
watchdog, uvicorn, the engine) is imported inside each command, so
``memvault --help`` stays light. ``daemon install``'s unit files are rendered beside
the service (``service/units.py``), and so is its restart (``service/daemon.start_afresh``).
``daemon run`` as ``python -m memvault`` or the console script runs it is served by
``interfaces/daemon_run`` without this CLI (typer stayed for the daemon's life); ``run``
here serves a line the CLI read, with ``up``, over the same ``interfaces/daemon_serve``.

Exit codes: 0 ok; 1 a daemon is already running (run, start, up) or none is
running (stop, status); 3 no vault; 6 another process holds the vault's lock
or the daemon cannot be reached.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from memvault.interfaces.cli import common
from memvault.interfaces.cli.common import JsonOpt, VaultOpt

if TYPE_CHECKING:
    pass

PortOpt = Annotated[
    int | None,
    typer.Option(
        "--port",
        help="Port on 127.0.0.1 (default: daemon.port; 0 picks a free one).",
        show_default=False,
    ),
]


def _refuse_if_running(root: Path, as_json: bool = False) -> None:
    from memvault.interfaces.daemon_serve import running_here

    running = running_here(root)
    if running is not None:
        common.fail(running, 1, as_json)


def _serve(vault: Any, port: int | None, stop: _StopRequest) -> NoReturn:
    """``up``'s daemon, its first index shown by the CLI's progress bar."""
    from memvault.interfaces.daemon_serve import announce, finish, made

    daemon = made(vault, port)
    stop.forward = daemon.request_stop  # a signal from here on stops the daemon
    if stop.signal_name is not None:
        daemon.request_stop()
    with common.progress_bar("indexing") as bar:  # the first index, served meanwhile
        daemon.progress_listeners.append(stop.checked(bar))
        code = daemon.run(on_started=announce)
    stop.signal_name = stop.signal_name or daemon.stop_signal
    if stop.signal_name is not None and code == 0 and not daemon.restart and not daemon.reader:
        _said_stopped(vault.root, stop, daemon.first_index_done)
    finish(daemon, code)


def run(
    vault: VaultOpt = None,
    port: PortOpt = None,
    log_file: Annotated[
        bool,
        typer.Option("--log-file", help="Log to .memvault/daemon.log (rotated) instead of stderr."),
    ] = False,
) -> None:
    """Run the daemon in the foreground until SIGTERM or Ctrl-C."""
    # (``python -m memvault daemon run`` is served without the CLI: interfaces/daemon_run)
    from memvault.interfaces.daemon_serve import announce, finish, made

    with common.handled():
        opened = _open_writable(common.resolve_vault(vault), log_file)
    with common.handled():
        daemon = made(opened, port)
        finish(daemon, daemon.run(on_started=None if log_file else announce))


def _open_writable(root: Path, log_file: bool = False) -> Any:
    """``daemon_serve.open_writable``, a daemon running already said as exit 1."""
    from memvault.interfaces.daemon_serve import AlreadyRunning, open_writable

    try:
        return open_writable(root, log_file)
    except AlreadyRunning as exc:
        common.fail(str(exc), 1)


def start(
    vault: VaultOpt = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for it to answer.")] = 60.0,
    as_json: JsonOpt = False,
) -> None:
    """Start the daemon in the background (log in .memvault/daemon.log)."""
    from memvault.errors import DaemonError
    from memvault.interfaces.daemon_control import start_background

    with common.handled(as_json):
        root = common.resolve_vault(vault)
        _refuse_if_running(root, as_json)
        try:
            info = start_background(root, timeout)
        except DaemonError as exc:  # it died (with its exit code) or never answered (1)
            common.fail(str(exc), exc.exit_code or 1, as_json)
    if as_json:
        data = {k: v for k, v in info.to_dict().items() if k != "token"}
        common.emit_json(data | {"url": info.url})
        return
    common.out.print(
        f"memvault daemon started: pid {info.pid}, {info.url} "
        f"(log: {root.resolve() / '.memvault' / 'daemon.log'})"
    )


def stop(
    vault: VaultOpt = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for it to exit.")] = 10.0,
    as_json: JsonOpt = False,
) -> None:
    """Stop the running daemon (SIGTERM; it finishes its batch and saves)."""
    from memvault.interfaces.daemon_control import stop_daemon

    with common.handled(as_json):
        root = common.resolve_vault(vault)
        pid = stop_daemon(root, timeout)
    if pid is None:
        common.fail(f"no memvault daemon is running for {root.resolve()}", 1, as_json)
    elif as_json:
        common.emit_json({"stopped": True, "pid": pid})
    else:
        common.out.print(f"memvault daemon stopped (pid {pid})")


def status(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Is a daemon running for this vault: pid, URL, uptime, index lag. Exit 1 if not."""
    from memvault.interfaces.daemon_control import daemon_status

    with common.handled(as_json):
        root = common.resolve_vault(vault)
        data = daemon_status(root)
    if as_json:
        common.emit_json(data)
    elif data.get("stopping"):  # not serving: exit 1 as for none
        common.out.print(
            f"stopping: pid {data['pid']}, still saving (it lets go of {data['vault']} when "
            "done; a command meanwhile waits for it)"
        )
    elif not data["running"]:
        common.out.print(f"no memvault daemon is running for {data['vault']}")
    else:
        lag = data.get("lag_seconds")
        common.out.print(
            f"running: pid {data['pid']}, {data['url']}, up {data['uptime_seconds']:.0f} s, "
            f"{'answering' if data['healthy'] else 'NOT answering'}"
            f", state {data.get('state') or '?'}"
            f"{', read-only (a reader)' if data.get('role') == 'reader' else ''}"
            f", observer {data.get('observer') or '?'}"
            f", index lag {'none' if lag is None else f'{lag:.1f} s'}"
            + (
                f", {data['vectors_pending']:,} chunks waiting for vectors"
                if data.get("vectors_pending")
                else ""
            )
        )
        if data.get("last_error"):
            common.out.print(f"last error: {data['last_error']}")
        if data.get("config_changed"):
            from memvault.interfaces.cli.status_view import CONFIG_CHANGED

            common.out.print(CONFIG_CHANGED)
    raise typer.Exit(0 if data["running"] else 1)


def install(
    vault: VaultOpt = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace a different file of this vault (never another's)."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Write a systemd user unit (Linux) or a launchd agent (macOS) that runs the daemon."""
    from memvault.service.units import install_service, user_manager_problem

    with common.handled(as_json):
        root = common.resolve_vault(vault)
        result = install_service(root, force=force)
    problem = user_manager_problem() if sys.platform.startswith("linux") else None
    if as_json:
        common.emit_json(
            {
                "path": str(result.path),
                "written": result.written,
                "enable": result.enable,
                "user_manager": problem,
            }
        )
        return
    verb = "wrote" if result.written else "already up to date:"
    common.out.print(f"{verb} {result.path}")
    common.out.print(f"enable it with:\n  {result.enable}")
    if problem:
        common.err.print(
            f"warning: {problem}: no systemd user manager runs for this session (a "
            "container, or ssh without `loginctl enable-linger $USER`), so that command "
            "fails here; `memvault daemon start` runs the daemon without one"
        )


def up(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="The vault folder (created if missing); or --vault. Default: .", show_default=False
        ),
    ] = None,
    port: PortOpt = None,
    vault: Annotated[
        Path | None, typer.Option("--vault", help="The same as the folder argument.")
    ] = None,
) -> None:
    """Init the vault if needed, then serve, index (with progress) and watch (foreground).

    It serves from the first second: the first index of a big folder is the daemon's
    start-up reconcile, and writes (`memvault log`, MCP, HTTP) land between its batches.
    SIGTERM or Ctrl-C while it indexes stops it once the batch in hand is committed:
    what is indexed stays, the rest is indexed at the next start; exit 0."""
    from memvault.vault.lock import is_vault
    from memvault.vault.template import init_vault

    root = common.folder_or_vault(path, vault).expanduser()
    stop = _StopRequest()
    stop.install()  # until the daemon's own handlers take over: no moment without one
    with common.handled():
        if not is_vault(root):
            from memvault.interfaces.cli.vault_commands import print_init

            print_init(init_vault(root), next_step=False)
        opened = _open_writable(root)
    with common.handled():
        _serve(opened, port, stop)


def _said_stopped(root: Path, stop: _StopRequest, first_index_done: bool) -> None:
    """What a signal during `up`'s first index (or its first vectors) left: read from the
    index once the daemon has let go of it, so what is said is what it holds."""
    from memvault.api import Vault

    with Vault.open(root, read_only=True) as v:
        memory_file = v.config.memory.file
        files = sum(1 for p in v.engine.store.manifest() if p != memory_file)
        pending, _ = v.pending_vectors()
        chunks = v.engine.store.counts()["chunks"]
    if not first_index_done:
        total = max(stop.notes_total, files)
        common.err.print(
            f"stopped ({stop.signal_name}) while indexing: {files:,} of {total:,} notes "
            "indexed; the rest is indexed when memvault up (or sync) runs again"
        )
    elif pending:  # the structure was done: only vectors are missing
        common.err.print(
            f"stopped ({stop.signal_name}) while embedding: every note is indexed "
            f"(MEMORY.md and keyword search are current); {chunks - pending:,} of {chunks:,} "
            "chunks have their vectors, the rest get them when memvault up (or sync) runs again"
        )


class _StopRequest:
    """SIGTERM/SIGINT during ``up``'s first indexing: remembered by the handler, acted
    on by the progress callback once the batch in hand is committed (progress counts
    committed notes, so a change of count is a commit)."""

    def __init__(self) -> None:
        self.signal_name: str | None = None
        self.notes_total = 0  # of the first index, from its progress

        self.forward: Callable[[], None] | None = None  # the daemon's stop, once it exists

    def install(self) -> None:
        """Handle SIGTERM/SIGINT from now on; the daemon's ``run`` replaces the handlers
        with its own, and until then a signal is remembered (and forwarded to the
        daemon once it is made), so there is no moment in which one kills ``up``."""
        import signal

        def handler(signum: int, frame: object) -> None:
            self.signal_name = signal.Signals(signum).name
            if self.forward is not None:
                self.forward()

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, handler)

    def checked(self, bar: Callable[[Any], None]) -> Callable[[Any], None]:
        """The daemon's progress to ``bar``, keeping the first index's total of notes."""

        def progress(p: Any) -> None:
            if p.stage == "notes":
                self.notes_total = max(self.notes_total, p.total)
            bar(p)

        return progress
