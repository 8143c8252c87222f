"""CLI commands for the daemon (filled in by the daemon work)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the daemon's commands to the ``memvault`` app."""
