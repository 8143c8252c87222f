"""``.memvault/config.toml`` as the daemon last saw it.

The daemon runs on the settings it read at start. When they change under it (a person's
edit, or a ``git pull`` bringing a teammate's), it starts again on the new ones once the
file has stayed the same for a look (an editor's or git's writes are over), the new
settings load and git is done (``due``, ``usable``): a daemon on the settings it
started with would write MEMORY.md back to them on every pull, and the machines would
differ (docs/SETUP.md). Meanwhile ``changed`` is in ``/status`` (``daemon status`` and
``status`` print it) and the log says it once, and why it waits. And ``.memvault/``
deleted under the daemon (a person's ``rm -rf`` to "rebuild the index") takes
config.toml with it: the daemon starts afresh
(``daemon.start_afresh``) and puts back the text it last saw (``restore``), so the
person's ignore list, limits and model are not silently replaced by the defaults.

A ``stat`` a look (the daemon's ground check, every 2 s); the file is read only when
its size, times or inode changed.
"""

from __future__ import annotations

import contextlib
import os
import time
import tomllib
from pathlib import Path
from typing import Any

# what the log, `status` and `daemon status` say while ``changed``
CHANGED = (
    "config.toml changed since the daemon started: it starts again on the new settings "
    "once they load and git is done (its log says what they wait for)"
)


# seconds before the server new settings name is asked again after it did not answer
PROBE_AGAIN = 30.0


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


_UNREAD = b"\0unread"  # no text given: the file's, read now


class ConfigWatch:
    def __init__(self, path: Path, loaded: bytes | None = _UNREAD) -> None:
        """``loaded``: the text the daemon's settings were read from (``VaultConfig.source``),
        which a save made since (while the vault opened: a restart's) differs from."""
        self.path = path
        self._key = _key(path)
        self.latest = _read(path)  # the last text seen (kept when the file goes)
        # what the daemon runs on (None: no file, defaults)
        self.started = self.latest if loaded == _UNREAD else loaded
        self.changed = _differ(self.started, self.latest)  # from those the daemon runs on
        self._quiet = False  # the file was the same at the last look as at the one before
        self._refused: bytes | None = None  # changed settings that did not load
        # the new settings' PostgreSQL server did not answer: (text, dsn), when to ask
        # again, why
        self._away: tuple[tuple[bytes | None, str], float, str] | None = None

    def check(self) -> bool:
        """Look again; True when the file's text now differs from the one the daemon
        started with and did not at the last look."""
        key = _key(self.path)
        self._quiet = key is not None and key == self._key
        if key is None or key == self._key:
            return False
        was = self.changed
        self._key = key
        text = _read(self.path)
        if text is not None:
            self.latest = text
        self.changed = _differ(self.started, self.latest)
        return self.changed and not was

    def due(self) -> bool:
        """The daemon should start again on the file's settings: they changed, the file
        stayed the same since the last look, and this text was not refused before."""
        return self.changed and self._quiet and self.latest != self._refused

    def usable(self, root: Path) -> str | None:
        """None when the vault's settings now load and the PostgreSQL server they name
        answers; else why not. Settings that do not load are refused until the file
        changes again (said once a text); a server that does not answer is asked again
        ``PROBE_AGAIN`` s later: the daemon started on it would exit at its open (a DSN
        mistyped, the server down, psycopg missing), leaving the vault unwatched. The
        daemon goes on with the settings it started with meanwhile."""
        from memvault.config import VaultConfig
        from memvault.errors import ConfigError

        try:
            config = VaultConfig.load(root)
        except ConfigError as exc:
            self._refused = self.latest
            return str(exc)
        return self._unreachable(config.index.store, config.index.dsn, config.index.pg_timeout)

    def _unreachable(self, store: str, dsn: str, timeout: float) -> str | None:
        if store != "postgres":
            return None
        now = time.monotonic()
        if self._away is not None and self._away[0] == (self.latest, dsn) and now < self._away[1]:
            return self._away[2]
        from memvault.errors import MemvaultError
        from memvault.index import pg_conn

        try:
            conn = pg_conn.connect(dsn, "public", timeout=timeout, statement_ms=int(timeout * 1000))
        except MemvaultError as exc:
            self._away = ((self.latest, dsn), now + PROBE_AGAIN, str(exc))
            return str(exc)
        with contextlib.suppress(Exception):
            conn.close()
        self._away = None
        return None

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
