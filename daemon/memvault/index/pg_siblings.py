"""This vault's index under another schema of the same database (docs/TEAM.md).

A field test: a clone a `git pull` behind the writer's (its config.toml without the
settings `index move` wrote there) ran `memvault index move --to postgres` as TEAM.md's
step 1 says; its schema, derived from its own folder name, was not the writer's, and it
built a second index of the same notes beside the team's: two writers, each the one
writer of its schema, and readers split by which settings they had pulled. A new index
(a move, or a writer's first sync into an empty schema) is refused when another
schema there holds most of this folder's notes, byte for byte, and its writer runs
(``elsewhere``); with no writer running it is said (two demo vaults of the same example
notes are two vaults).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from memvault.index.pg_schema import lock_key

SAMPLED = 400  # notes of each other index looked for in the folder
MAX_BYTES = 64 << 20  # a file bigger is no note of an index (max_note_bytes: 2 MB)


def elsewhere(conn: Any, schema: str, root: Path) -> tuple[str, int, int, str | None] | None:
    """(the schema, the notes found here, the notes looked for, its writer ``host pid``
    while one holds its lock) of another memvault index on ``conn``'s database (a schema
    with memvault's ``notes`` and ``writer`` tables) whose sampled notes are mostly in
    ``root`` with the same bytes; None when none is."""
    others = conn.execute(
        "SELECT n.table_schema FROM information_schema.tables n "
        "JOIN information_schema.tables w ON w.table_schema = n.table_schema "
        "AND w.table_name = 'writer' WHERE n.table_name = 'notes' AND n.table_schema <> %s "
        "ORDER BY 1",
        (schema,),
    ).fetchall()
    found: list[tuple[str, int, int, str | None]] = []
    for (other,) in others:
        quoted = '"' + str(other).replace('"', '""') + '"'
        try:
            rows = conn.execute(
                f"SELECT path, sha256 FROM {quoted}.notes WHERE kind = 'note' "
                "ORDER BY path LIMIT %s",
                (SAMPLED,),
            ).fetchall()
        except Exception:
            continue
        same = sum(1 for path, sha in rows if sha and _sha(root, str(path)) == sha)
        if len(rows) >= 2 and same * 2 > len(rows):
            found.append((str(other), same, len(rows), _writer(conn, str(other), quoted)))
    # the one its writer runs first: the team's (a demo vault of the same notes runs none)
    return min(found, key=lambda f: f[3] is None, default=None)


def _writer(conn: Any, schema: str, quoted: str) -> str | None:
    """``host pid`` of the writer holding ``schema``'s lock now (pg_store.PgStore.writer)."""
    key = lock_key(schema, "writer") & 0xFFFFFFFFFFFFFFFF
    row = conn.execute(
        f"SELECT host, pid FROM {quoted}.writer WHERE EXISTS (SELECT 1 FROM pg_locks "
        "WHERE locktype = 'advisory' AND granted AND classid::bigint = %s "
        "AND objid::bigint = %s AND objsubid = 1)",
        (key >> 32, key & 0xFFFFFFFF),
    ).fetchone()
    return f"{row[0]} pid {row[1]}" if row else None


def _sha(root: Path, rel: str) -> str | None:
    """The sha256 of the regular file at the vault path ``rel``; None for a path that
    leaves the folder (another schema's rows are anyone's with a login to the database:
    ``/dev/zero``, ``../..``), a FIFO or a device (opened without waiting), a
    file too big to be a note, or none."""
    parts = PurePosixPath(rel).parts
    if not parts or parts[0] == "/" or ".." in parts or "\\" in rel or ":" in parts[0]:
        return None
    digest = hashlib.sha256()
    try:  # without waiting: a FIFO opens at once (as vault/open_files.open_to_read)
        fd = os.open(root / rel, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
                return None
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        except OSError:
            return None
    return digest.hexdigest()


__all__ = ["SAMPLED", "elsewhere"]
