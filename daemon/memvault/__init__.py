"""memvault: an agent's long-term memory as a markdown vault Obsidian opens."""

__version__ = "0.1.0"
