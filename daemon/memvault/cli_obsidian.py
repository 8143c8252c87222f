"""CLI commands for the Obsidian plugin: ``memvault obsidian install``.

Thin: resolve the vault, call ``memvault.obsidian_install``, print. Exit codes:
0 installed (or already there); 3 no vault, or a community-plugins.json that is
not a JSON list (left untouched); 1 anything else memvault refuses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

obsidian_app = typer.Typer(
    name="obsidian",
    help="The Obsidian plugin: related notes, semantic search and index health inside Obsidian.",
    no_args_is_help=True,
)

VaultOpt = Annotated[
    Path | None,
    typer.Option(
        "--vault",
        help="The vault folder (default: $MEMVAULT_VAULT, else the "
        "nearest vault at or above the current folder).",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for programs and agents.")]


def _base() -> Any:
    from memvault import cli

    return cli


@obsidian_app.command("install")
def install(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Copy the plugin into VAULT/.obsidian/plugins/memvault/ and enable it.

    Your other plugins and settings are left as they are. Restart Obsidian (or
    reload the vault) to load it; the daemon must run for it to show anything.
    """
    from memvault.obsidian_install import install_plugin

    cli = _base()
    with cli.handled():
        root = cli.resolve_vault(vault)
        report = install_plugin(root)
    if as_json:
        cli.emit_json(report.to_dict())
        return
    changed = f"{len(report.written)} files written" if report.written else "files up to date"
    cli.out.print(f"memvault plugin {report.version} in {report.plugin_dir} ({changed})")
    if report.enabled:
        cli.out.print("enabled in .obsidian/community-plugins.json")
    else:
        cli.out.print("already enabled in .obsidian/community-plugins.json")
    cli.out.print(
        "Reload Obsidian (or close and reopen the vault) to load it; if Obsidian is in "
        "Restricted mode, turn community plugins on once in Settings -> Community plugins. "
        f'The plugin needs the daemon: memvault up "{report.vault}"'
    )


def register(app: typer.Typer) -> None:
    app.add_typer(obsidian_app, name="obsidian")
