"""The ``memvault`` command: a table of contents.

The commands live in three modules by what they work on — ``vault_commands``
(init, sync, status, links, migrate), ``agent`` (search, context, get, add,
log, mcp) and ``daemon`` (daemon run|start|stop|status|install, up) — as
plain functions over ``common``. This module only builds the Typer app from
them; nothing imports it but ``memvault.interfaces.cli`` itself, so there is
no import circle.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from memvault import __version__
from memvault.interfaces.cli import agent, connect, daemon, index_commands, obsidian, vault_commands
from memvault.interfaces.cli.common import emit_json, out

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
obsidian_app = typer.Typer(
    name="obsidian",
    help="The Obsidian plugin: related notes, semantic search and index health inside Obsidian.",
    no_args_is_help=True,
)
daemon_app = typer.Typer(
    name="daemon",
    help="The background service: watch the vault, keep MEMORY.md and the index current, "
    "serve the local HTTP API.",
    no_args_is_help=True,
)


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


app.command()(vault_commands.init)
app.command()(vault_commands.sync)
app.command()(vault_commands.status)
app.add_typer(links_app, name="links")
links_app.command("check")(vault_commands.links_check)
app.command()(vault_commands.migrate)
app.add_typer(daemon_app, name="daemon")
daemon_app.command("run")(daemon.run)
daemon_app.command("start")(daemon.start)
daemon_app.command("stop")(daemon.stop)
daemon_app.command("status")(daemon.status)
daemon_app.command("install")(daemon.install)
app.command("up")(daemon.up)
app.command()(agent.search)
app.command()(agent.context)
app.command()(agent.get)
app.command()(agent.add)
app.command()(agent.log)
app.command()(agent.mcp)
app.add_typer(obsidian_app, name="obsidian")
obsidian_app.command("install")(obsidian.install)
connect_app = typer.Typer(
    name="connect",
    help="Make the vault a client's memory: write its config, keeping every other setting.",
    no_args_is_help=True,
)
disconnect_app = typer.Typer(
    name="disconnect", help="Take out what `memvault connect` added.", no_args_is_help=True
)
app.add_typer(connect_app, name="connect")
connect_app.command("claude-code")(connect.claude_code)
connect_app.command("claude-desktop")(connect.claude_desktop)
app.add_typer(disconnect_app, name="disconnect")
disconnect_app.command("claude-code")(connect.disconnect_claude_code)
disconnect_app.command("claude-desktop")(connect.disconnect_claude_desktop)
app.add_typer(index_commands.index_app, name="index")  # index move (docs/TEAM.md)


def main() -> None:
    """The console script. With ``--json`` on the line, a usage error (an unknown option,
    a bad value: exit 2) is also JSON on stdout, like every other error.

    numpy's OpenBLAS starts a thread a core, each with a buffer of its own once it has
    worked; memvault's products are a few hundred vectors at a time, where a second
    thread saves nothing, and its buffer stayed resident in the daemon (13 MiB, 10,000
    notes: bench/RESULTS.md). Read once, as numpy loads (never before this point); a
    value the user set is kept."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if "--json" not in sys.argv[1:]:
        app()
        return
    # click's base of usage errors, whether typer vendors click (0.28) or depends on it
    click_exception: type[Exception] = next(
        c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
    )
    try:
        code = app(standalone_mode=False)
    except click_exception as exc:
        code = getattr(exc, "exit_code", 2)
        emit_json({"error": exc.format_message(), "code": code})  # type: ignore[attr-defined]
        exc.show()  # type: ignore[attr-defined]
        sys.exit(code)
    except typer.Abort:
        emit_json({"error": "aborted", "code": 1})
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
