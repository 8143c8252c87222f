"""The links table's upgrades that read or write link names (both backends): what a
schema version changed in how a link's target or a file's name is read, brought to the
rows an older memvault stored (``schema.upgrade``, ``pg_schema.migrate``).

- SQLite 17, PostgreSQL 16: a wikilink's name read trimmed as JavaScript trims it
  (``wikilinks.find_links``: U+FEFF too, which Python's ``strip`` kept): the notes holding
  a wikilink whose stored target begins or ends so are read again by the next sync
  (``UNTRIMMED_STALE``); and a file's name taken as it is (``wikilinks.file_link_name``:
  `` Lead.md`` at the root was ``lead`` when it came, went or moved, so the verdicts of
  ``[[/ Lead.md]]`` were never followed): when there is such a file, every stored link is
  resolved once by the next sync (``spaced_files``, ``pg_trimmed_links``).
- SQLite 18, PostgreSQL 17: what Python's ``strip`` takes off a name and JavaScript's
  ``trim`` keeps (``STRIP_ONLY``: U+001C-U+001F, U+0085). A memvault before SQLite 17
  stored ``[[Plan<U+001C>]]`` as a link to ``Plan`` (``find_links`` stripped it), and one
  before ``link_name`` trimmed as JavaScript does kept its name ``plan``, where a fresh index
  has ``Plan<U+001C>`` / ``plan<U+001C>``: the notes whose text holds one of them beside a
  ``[[`` are read again by the next sync (``STRIPPED_STALE``: by their chunks; MEMORY.md and
  the folder notes holding a wikilink, which have none; a note whose stored frontmatter
  holds a ``[[`` and what YAML made of a U+0085 beside it), and the links' names that
  differ from ``link_name``'s are written again, every link then resolved once
  (``names_again``, ``pg_names_again``).
- PostgreSQL 4 and 9 (the SQLite index's 7 and 10, ``schema.link_names``,
  ``schema.lower_case_links``): the links' names written from their targets
  (``pg_link_names``), when a name case folding and lower case tell apart is there
  (``pg_folded_apart``).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from memvault.core.text import JS_SPACES
from memvault.core.wikilinks import file_link_name, folds_apart, link_name

# the next sync resolves every stored link once (engine/link_verdicts.follow); both backends
RESOLVE_LINKS_AGAIN = (
    "INSERT INTO meta(key, value) VALUES('links_resolve', '1') "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
)

# the notes holding a wikilink whose stored target starts or ends in what JavaScript's trim
# takes and Python's strip kept (U+FEFF), read again by the next sync; both backends
UNTRIMMED_STALE = (
    "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE kind = 'note' AND path IN "
    "(SELECT source FROM links WHERE kind = 'wiki' AND ("
    + " OR ".join(f"target LIKE '{c}%' OR target LIKE '%{c}'" for c in JS_SPACES if not c.isspace())
    + "))"
)


# what Python's str.strip takes off and JavaScript's trim keeps (every other character
# one strips and the other keeps is in JS_SPACES: U+FEFF; tests/test_link_verdicts_kept.py)
STRIP_ONLY = "\x1c\x1d\x1e\x1f\x85"

# the notes a memvault before SQLite 18 (PostgreSQL 17) may have read a link of otherwise
# (its name stripped of a STRIP_ONLY character), read again by the next sync; both backends.
# A link no chunk holds is looked for otherwise: MEMORY.md and the folder notes (kind
# 'index') have no chunks, so each holding a wikilink is read again (a few files); and a
# note's frontmatter is not in its chunks, where YAML reads U+0085 as a line break, stored
# as a space or a \n beside the name ("[[Plan ]]", "[[ Plan|A]]", "[[Plan\n]]"), and an
# unquoted [[Plan]] as a list in a list ([["Plan"]]): the frontmatters so are (a U+001C-F
# makes the YAML invalid: the note's whole text is its body, in its chunks)
_FOLDED = ("[[ ", " ]]", " |", " #", " ^", "\\n", '[["', "\x85")
STRIPPED_STALE = (
    "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE (kind = 'note' AND (path IN "
    "(SELECT path FROM chunks WHERE text LIKE '%[[%' AND ("
    + " OR ".join(f"text LIKE '%{c}%'" for c in STRIP_ONLY)
    + ")) OR (frontmatter LIKE '%[[%' AND ("
    + " OR ".join(f"frontmatter LIKE '%{c}%' ESCAPE '!'" for c in _FOLDED)
    + ")))) OR (kind = 'index' AND path IN (SELECT source FROM links WHERE kind = 'wiki'))"
)
# the links whose name may be other than link_name's now (their target holds a character
# Python's strip and JavaScript's trim take apart)
_NAMED_OTHERWISE = " OR ".join(f"target LIKE '%{c}%'" for c in STRIP_ONLY + "\ufeff")


def names_again(conn: sqlite3.Connection) -> int:
    """SQLite 17 -> 18: ``STRIPPED_STALE``; the links' names ``link_name`` gives otherwise
    now written again, and every link resolved again by the next sync when one was.
    Returns the notes and links changed."""
    stale = conn.execute(STRIPPED_STALE).rowcount
    conn.create_function("memvault_link_name", 1, link_name, deterministic=True)
    renamed = conn.execute(
        f"UPDATE links SET name = memvault_link_name(target) WHERE ({_NAMED_OTHERWISE}) "
        "AND name != memvault_link_name(target)"
    ).rowcount
    if renamed:
        conn.execute(RESOLVE_LINKS_AGAIN)
    return stale + renamed


def pg_names_again(conn: Any) -> None:
    """PostgreSQL 16 -> 17: ``names_again``'s, the names computed here."""
    conn.execute(STRIPPED_STALE)
    rows = conn.execute(f"SELECT DISTINCT target, name FROM links WHERE {_NAMED_OTHERWISE}")
    changed = [(t, link_name(t)) for t, n in rows if link_name(t) != n]
    for target, name in changed:
        conn.execute("UPDATE links SET name = %s WHERE target = %s", (name, target))
    if changed:
        conn.execute(RESOLVE_LINKS_AGAIN)


def name_trimmed(path: str) -> bool:
    """Whether a memvault before SQLite 17 (PostgreSQL 16) took the file at ``path`` for
    another name than its own (``wikilinks.file_link_name``: a path beginning in a space)."""
    return link_name(path) != file_link_name(path)


def spaced_files(conn: sqlite3.Connection) -> bool:
    """SQLite 16 -> 17: when a file's name was taken trimmed (``name_trimmed``), every link
    resolved again by the next sync. Returns whether there was one."""
    conn.create_function("memvault_name_trimmed", 1, name_trimmed, deterministic=True)
    found = conn.execute(
        "SELECT 1 FROM notes WHERE memvault_name_trimmed(path) UNION ALL "
        "SELECT 1 FROM attachments WHERE memvault_name_trimmed(path) LIMIT 1"
    ).fetchone()
    if found is not None:
        conn.execute(RESOLVE_LINKS_AGAIN)
    return found is not None


def pg_trimmed_links(conn: Any) -> None:
    """PostgreSQL 15 -> 16: ``UNTRIMMED_STALE``, and every link resolved again by the next
    sync when a file's name was taken trimmed (``name_trimmed``)."""
    conn.execute(UNTRIMMED_STALE)
    if any(
        name_trimmed(r[0])
        for sql in ("SELECT path FROM notes", "SELECT path FROM attachments")
        for r in conn.execute(sql)
    ):
        conn.execute(RESOLVE_LINKS_AGAIN)


def pg_folded_apart(conn: Any) -> bool:
    """PostgreSQL 8 -> 9: whether a link's target or a file's path is one case folding and
    lower case tell apart (``wikilinks.folds_apart``): then ``pg_link_names``."""
    for sql in (
        "SELECT DISTINCT target FROM links",
        "SELECT path FROM notes",
        "SELECT path FROM attachments",
    ):
        if any(folds_apart(r[0]) for r in conn.execute(sql) if not r[0].isascii()):
            return True
    return False


def pg_link_names(conn: Any) -> None:
    """PostgreSQL 3 -> 4: the links' ``name`` column, from their targets (computed here, as
    the SQLite index's: ``wikilinks.link_name``), and every link resolved again next."""
    conn.execute("ALTER TABLE links ADD COLUMN IF NOT EXISTS name TEXT NOT NULL DEFAULT ''")
    targets = [r[0] for r in conn.execute("SELECT DISTINCT target FROM links")]
    if targets:
        conn.execute("CREATE TEMP TABLE link_names(target TEXT, name TEXT) ON COMMIT DROP")
        with conn.cursor().copy("COPY link_names(target, name) FROM STDIN") as copy:
            for target in targets:
                copy.write_row((target, link_name(target)))
        conn.execute(
            "UPDATE links SET name = n.name FROM link_names n WHERE links.target = n.target"
        )
    conn.execute(RESOLVE_LINKS_AGAIN)


__all__ = [
    "RESOLVE_LINKS_AGAIN",
    "STRIPPED_STALE",
    "STRIP_ONLY",
    "UNTRIMMED_STALE",
    "name_trimmed",
    "names_again",
    "pg_folded_apart",
    "pg_link_names",
    "pg_names_again",
    "pg_trimmed_links",
    "spaced_files",
]
