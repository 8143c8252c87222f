"""``.memvault/config.toml`` as the daemon last saw it.

The daemon runs on the settings it read at start; a change to the file takes effect
when it restarts (docs/SETUP.md). A person who changes a setting meanwhile is told so:
``changed`` is in ``/status`` (``daemon status`` and ``status`` print it) and the log
says it once. And ``.memvault/`` deleted under the daemon (a person's ``rm -rf`` to
"rebuild the index") takes config.toml with it: the daemon starts afresh
(``daemon.start_afresh``) and puts back the text it last saw (``restore``), so the
person's ignore list, limits and model are not silently replaced by the defaults.

A ``stat`` a look (the daemon's ground check, every 2 s); the file is read only when
its size, times or inode changed.
"""

from __future__ import annotations

import contextlib
import os
import tomllib
from pathlib import Path
from typing import Any

# what the log, `status` and `daemon status` say while ``changed``
CHANGED = (
    "config.toml changed since the daemon started: the change takes effect when it "
    "restarts (memvault daemon stop, then memvault daemon start)"
)


def _key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _settings(text: bytes | None) -> dict[str, Any] | None:
    """The TOML's tables, or None when it does not parse (no file: empty)."""
    if text is None:
        return {}
    try:
        return tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def _differ(started: bytes | None, latest: bytes | None) -> bool:
    """Whether ``latest``'s settings differ from ``started``'s (a comment or a blank line
    changes nothing; a file that no longer parses is a change: the restart would refuse
    it, and ``status`` names the error)."""
    if latest == started:
        return False
    now = _settings(latest)
    return now is None or now != _settings(started)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


class ConfigWatch:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._key = _key(path)
        self.started = _read(path)  # what the daemon runs on (None: no file, defaults)
        self.latest = self.started  # the last text seen (kept when the file goes)
        self.changed = False  # its settings differ from those the daemon runs on

    def check(self) -> bool:
        """Look again; True when the file's text now differs from the one the daemon
        started with and did not at the last look."""
        key = _key(self.path)
        if key is None or key == self._key:
            return False
        was = self.changed
        self._key = key
        text = _read(self.path)
        if text is not None:
            self.latest = text
        self.changed = _differ(self.started, self.latest)
        return self.changed and not was

    def restore(self) -> bool:
        """config.toml back as last seen, when it is missing (never over a file):
        written beside it and linked into place, so it appears whole or not at all.
        False when there was nothing to put back, a file is there, or it could not be
        written (never raises: the daemon's fresh start does not wait on it)."""
        text = self.latest
        if text is None or self.path.exists():
            return False
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.restore")
        try:
            with open(tmp, "wb") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, self.path)  # FileExistsError: someone wrote one meanwhile
            except FileExistsError:
                raise
            except OSError:  # no hard links here (some network or FUSE file systems)
                with open(self.path, "xb") as fh:  # still never over a file
                    fh.write(text)
        except OSError:  # a file there after all, the disk full: the restart goes on
            return False
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        return True


__all__ = ["CHANGED", "ConfigWatch"]
