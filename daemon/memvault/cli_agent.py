"""CLI commands agents use (filled in by the agent-interface work)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the agent commands to the ``memvault`` app."""
