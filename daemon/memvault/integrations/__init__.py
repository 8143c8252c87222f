"""Adapters that plug memvault into other tools' own memory (each imports its tool's
library, an optional extra, only in its own module)."""
