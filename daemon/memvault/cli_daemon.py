"""CLI commands for the daemon: ``memvault daemon run|start|stop|status|install`` and ``up``.

Thin: parse, call ``memvault.service``, print, map errors. The service (and so
watchdog, uvicorn, the engine) is imported inside each command, so
``memvault --help`` stays light.

Exit codes: 0 ok; 1 a daemon is already running (run, start, up) or none is
running (stop, status); 3 no vault; 6 another process holds the vault's lock
or the daemon cannot be reached.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from memvault.service import Daemon

daemon_app = typer.Typer(
    name="daemon",
    help="The background service: watch the vault, keep MEMORY.md and the index current, "
    "serve the local HTTP API.",
    no_args_is_help=True,
)

VaultOpt = Annotated[
    Path | None,
    typer.Option("--vault", help="The vault folder (default: $MEMVAULT_VAULT, else the "
                 "nearest vault at or above the current folder).", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for programs and agents.")]
PortOpt = Annotated[
    int | None,
    typer.Option("--port", help="Port on 127.0.0.1 (default: daemon.port; 0 picks a free one).",
                 show_default=False),
]


def _base() -> Any:
    from memvault import cli

    return cli


def _refuse_if_running(root: Path) -> None:
    from memvault.service import running_daemon, url_of

    info = running_daemon(root)
    if info is not None:
        _base().fail(f"a memvault daemon is already running for {root.resolve()} "
                     f"(pid {info['pid']}, {url_of(info)})", 1)


def _open_writable(root: Path) -> Any:
    """Open the vault for the daemon; an already running daemon is exit 1, another holder 6."""
    from memvault.api import Vault
    from memvault.errors import LockHeld

    try:
        return Vault.open(root)
    except LockHeld:
        _refuse_if_running(root)
        raise


def _announce(daemon: Daemon) -> None:
    from memvault.service import url_of

    cli = _base()
    info = daemon.info()
    cli.err.print(f"memvault daemon serving {daemon.vault.root} at {url_of(info)} "
                  f"(pid {daemon.pid}); token and port in {daemon.json_path}; Ctrl-C stops it")


def _serve(vault: Any, port: int | None, log_file: bool, announce: bool) -> None:
    from memvault.service import Daemon, configure_logging

    configure_logging(vault.config, to_file=log_file)
    daemon = Daemon(vault, port=port)
    code = daemon.run(on_started=_announce if announce else None)
    # Everything is saved and closed (or, past the deadline, as safe as a kill -9);
    # skip the interpreter's teardown, which takes seconds once torch is loaded.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@daemon_app.command("run")
def run(
    vault: VaultOpt = None,
    port: PortOpt = None,
    log_file: Annotated[bool, typer.Option(
        "--log-file", help="Log to .memvault/daemon.log (rotated) instead of stderr.")] = False,
) -> None:
    """Run the daemon in the foreground until SIGTERM or Ctrl-C."""
    cli = _base()
    with cli.handled():
        root = cli.resolve_vault(vault)
        opened = _open_writable(root)
    with cli.handled():
        _serve(opened, port, log_file, announce=not log_file)


@daemon_app.command("start")
def start(
    vault: VaultOpt = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for it to answer.")] = 60.0,
    as_json: JsonOpt = False,
) -> None:
    """Start the daemon in the background (log in .memvault/daemon.log)."""
    from memvault.errors import DaemonError
    from memvault.service import start_background, url_of

    cli = _base()
    with cli.handled():
        root = cli.resolve_vault(vault)
        _refuse_if_running(root)
        try:
            info = start_background(root, timeout)
        except DaemonError as exc:  # it died or never answered: exit 1 with the log's tail
            cli.fail(str(exc).replace("[", "\\["), 1)
    if as_json:
        cli.emit_json({k: v for k, v in info.items() if k != "token"} | {"url": url_of(info)})
        return
    cli.out.print(f"memvault daemon started: pid {info['pid']}, {url_of(info)} "
                  f"(log: {root.resolve() / '.memvault' / 'daemon.log'})")


@daemon_app.command("stop")
def stop(
    vault: VaultOpt = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for it to exit.")] = 10.0,
) -> None:
    """Stop the running daemon (SIGTERM; it finishes its batch and saves)."""
    from memvault.service import stop_daemon

    cli = _base()
    with cli.handled():
        root = cli.resolve_vault(vault)
        info = stop_daemon(root, timeout)
    if info is None:
        cli.fail(f"no memvault daemon is running for {root.resolve()}", 1)
    else:
        cli.out.print(f"memvault daemon stopped (pid {info['pid']})")


@daemon_app.command("status")
def status(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Is a daemon running for this vault: pid, URL, uptime, index lag. Exit 1 if not."""
    from memvault.service import daemon_status

    cli = _base()
    with cli.handled():
        root = cli.resolve_vault(vault)
        data = daemon_status(root)
    if as_json:
        cli.emit_json(data)
    elif not data["running"]:
        cli.out.print(f"no memvault daemon is running for {data['vault']}")
    else:
        lag = data.get("lag_seconds")
        cli.out.print(
            f"running: pid {data['pid']}, {data['url']}, up {data['uptime_seconds']:.0f} s, "
            f"{'answering' if data['healthy'] else 'NOT answering'}"
            f", state {data.get('state') or '?'}, observer {data.get('observer') or '?'}"
            f", index lag {'none' if lag is None else f'{lag:.1f} s'}"
        )
        if data.get("last_error"):
            cli.out.print(f"last error: {data['last_error']}")
    raise typer.Exit(0 if data["running"] else 1)


@daemon_app.command("install")
def install(
    vault: VaultOpt = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a different existing file.")
    ] = False,
) -> None:
    """Write a systemd user unit (Linux) or a launchd agent (macOS) that runs the daemon."""
    from memvault.service import install_service

    cli = _base()
    with cli.handled():
        root = cli.resolve_vault(vault)
        result = install_service(root, force=force)
    verb = "wrote" if result.written else "already up to date:"
    cli.out.print(f"{verb} {result.path}")
    cli.out.print(f"enable it with:\n  {result.enable}")


def up(
    path: Annotated[
        Path, typer.Argument(help="The vault folder (created if missing).")
    ] = Path("."),
    port: PortOpt = None,
) -> None:
    """Init the vault if needed, index it (with progress), then watch and serve (foreground)."""
    from memvault.template import init_vault

    cli = _base()
    root = path.expanduser()
    with cli.handled():
        if not ((root / ".memvault").is_dir() or (root / "MEMORY.md").is_file()):
            report = init_vault(root)
            cli.out.print(f"new vault at {report.root}: {len(report.created)} files created")
        opened = _open_writable(root)
    with cli.handled():
        try:
            with cli.progress_bar("indexing") as bar:
                report = opened.sync(progress=bar)
        except BaseException:
            opened.close()
            raise
        cli.out.print(report.summary())
        _serve(opened, port, log_file=False, announce=True)


def register(app: typer.Typer) -> None:
    """Add the daemon's commands to the ``memvault`` app."""
    app.add_typer(daemon_app, name="daemon")
    app.command("up")(up)
