"""The ``memvault`` command line (console script ``memvault``, ``python -m memvault``)."""

from memvault.interfaces.cli.app import app, main

__all__ = ["app", "main"]
