"""Where a daemon's log goes: stderr, or a rotated ``.memvault/daemon.log`` (split from
service/daemon.py, its size)."""

from __future__ import annotations

import logging
import logging.handlers
import sys
import warnings

from memvault.config import VaultConfig
from memvault.vault.runfile import LOG_FILE


def configure_logging(config: VaultConfig, to_file: bool) -> logging.Handler:
    """Log the ``memvault`` (and watchdog) loggers to stderr, or to a rotated daemon.log."""
    handler: logging.Handler
    if to_file:
        handler = logging.handlers.RotatingFileHandler(
            config.state_dir / LOG_FILE,
            maxBytes=config.daemon.log_max_bytes,
            backupCount=config.daemon.log_backups,
            encoding="utf-8",
        )
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    # watchdog warns when a folder moved away and back is watched again: harmless noise
    warnings.filterwarnings("ignore", "Callback with id", RuntimeWarning)
    for name in ("memvault", "watchdog", "uvicorn"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO if name == "memvault" else logging.WARNING)
        logger.propagate = False
    return handler


__all__ = ["configure_logging"]
