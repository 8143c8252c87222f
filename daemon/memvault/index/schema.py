"""The tables of index.db, and how an index an older memvault wrote becomes one of today.

Versions (meta ``schema_version``):

1. the first;
2. the pending table (vectors not yet in the index): created empty, since every
   chunk of a version-1 index was embedded before it was written;
3. the keyword column ``about`` (a note's summary or description, aliases and
   tags, on its first chunk: ``chunks.about_text``). FTS5 cannot add a column,
   so the keyword table is made again with its rows; and every note is made stale,
   so the next sync cuts it again (version 3 cuts differently: no chunk for a
   heading with nothing under it, the describing frontmatter lines of a note with
   no body). Chunks whose embedded text did not change keep their labels and
   vectors: the model runs only for what is new (a first chunk with a description).
4. the vector lane's bookkeeping in O(1) per step: ``pending_count`` (one row, kept by
   triggers on ``pending``: the queue's length without counting it) and an index on
   ``pending(since)`` (the oldest in a b-tree step). ``SELECT COUNT(*), MIN(since)``
   after every 32-chunk step scanned the whole queue, texts and all: 74 % of a 50,000
   note first sync. The upgrade counts the queue once, under the write lock.
5. embedded texts show a link without its folders below the first
   (``wikilinks.unfiled_links``: ``[[projects/alpha/plan|Plan]]`` is embedded as
   ``[[projects/plan|Plan]]``, so renaming ``projects/alpha`` re-embeds none of the
   linking chunks). No table changes; the notes with a chunk holding a link and two
   "/" (a link two folders deep; ``[[people/ana]]`` is embedded as written) are made
   stale, so the next sync cuts them again: their chunks with such
   a link are embedded again (new labels; the rest keep theirs), and their lines'
   vectors are found again under the texts a query now asks for. Other notes are not
   read again.
6. the keyword table without its own copy of the chunk text (``external_content_fts``):
   FTS5 reads its columns from ``chunks`` (through the view ``chunks_fts_source``),
   which now keeps each chunk's keyword title and description too (``title``,
   ``about``); ``Store.insert_chunks`` writes a new chunk's keyword row, triggers on
   ``chunks`` give FTS5 the old values of every changed or deleted one. The copy was a
   sixth of a short-note index.db. The
   upgrade builds the table once from the rows (no note is read again, nothing is
   embedded).
7. the links' ``name`` (their target's last name as Obsidian compares it,
   ``wikilinks.link_name``), indexed: a file that comes or goes changes where the links
   of its name lead, so a sync resolves those again (``engine/link_verdicts.py``), in
   notes it does not read (a stored verdict of an unchanged note stayed ``resolved``
   into a deleted note), and a rename finds the notes linking the moved names without
   scanning every link. The upgrade fills the column from the targets, and the next
   sync resolves every stored link once (meta ``links_resolve``).
8. Chinese and Japanese found by keywords (``core/cjk.py``): the keyword table is given
   each such character as a token of its own (the view and the triggers call
   ``memvault_keywords``, ``register``); a run of them was one token, and a search for a
   word inside it found nothing. The upgrade takes the keyword rows of the chunks
   holding such a character (or a full-width letter) out and puts them in again spaced
   and folded (``cjk_keywords``); other rows are not touched. Their notes are read again
   by the next sync: a long paragraph is now cut after a CJK full stop or comma (it was
   cut between two characters, inside a word); a chunk whose text is the same keeps its
   label and vector.
9. Words whose letters carry marks found by keywords: the tokenizer keeps combining
   marks inside a token (``categories 'L* N* Co M*'``; FTS5's default makes each mark a
   separator, so हिन्दी was indexed as ह, न, द and a Thai run as the pieces between its
   vowel signs), Thai, Lao, Khmer and Myanmar are spaced by letter and its marks, and
   Arabic and Hebrew lose their optional points in the keyword form (``core/cjk.py``).
   FTS5 cannot change a table's tokenizer: the upgrade makes the keyword table again
   and builds it from the rows (``marks_keywords``: 496,557 chunks of 100,000 notes in 16.5 s, once).
   Nothing is embedded; the notes whose text holds ``<<<<<<<`` are made stale
   (``CONFLICTED_STALE``): the next sync reads them again and warns of a merge conflict
   left in them (``core/conflicts.py``), as it now does for a note it reads.
10. Link paths compared as Obsidian compares them, in lower case (JavaScript's
   ``toLowerCase``, ``wikilinks.key``), no longer case folded: ``[[STRASSE]]`` led to
   ``Straße.md``, and ``[[MASSE]]`` was ambiguous between ``Masse.md`` and ``Maße.md``.
   When a link's target or a file's path is one the two rules tell apart
   (``wikilinks.folds_apart``: ß, ẞ, a ligature), the upgrade writes the links' names
   again and the next sync resolves every stored link once (``lower_case_links``);
   otherwise nothing changes.
11. German ß found as ss and back (``cjk.plain``: Swiss German writes Strasse, a
   keyboard without ß Fussball). When a chunk holds ß or ẞ, the upgrade makes the
   keyword table again from the rows (``sharp_s_keywords``, as version 9 did); nothing
   is embedded, no note read again; otherwise nothing changes.
12. A note's summary is its first sentence in any language (``notes.first_sentence``:
   a sentence ends before Ü or Ж as before A, at a CJK full stop, not at a day's
   ordinal, am 3. März). The notes whose stored summary may be cut otherwise now
   (``notes.cut_otherwise``) are read again by the next sync (``SUMMARIES_STALE``);
   a chunk whose text is the same keeps its label and vector.
13. A git LFS pointer file is not its note (``core.text.decode``: skipped, said why).
   The notes an older memvault indexed from one (a summary that is the pointer's first
   line, at most 1,024 bytes) are read again by the next sync (``LFS_POINTERS_STALE``):
   skipped then, out of MEMORY.md and search, listed by status with the reason.
14. Each note's place in MEMORY.md's orders, kept with its row (``ORDER_COLUMNS``,
   ``memory_order.stored_keys``: by date, updated, title) with whether it keeps out of
   MEMORY.md (``listed``), and indexed by folder (``category``): a write with no daemon
   reads each section's first notes and counts (``note_lists``), not every note sorted
   (1.4 s of a 2.2 s `memvault add` at 100,000 notes). The upgrade computes them for
   every row (and each row's category from its path again); nothing is read from the
   vault. What the keys were made under is recorded (meta ``order_keys``:
   ``memory_order.keys_made``, the key algorithm and Python's Unicode version); a
   writer whose own differs computes them again at its open (``note_order.rekey``),
   with no new schema version: a later algorithm, or another Python.
15. Russian (any word of Cyrillic letters) found in another case or number by keywords:
   the keyword table is given such a word with its Snowball stem beside it
   (``cjk.stemmed``), and traditional Chinese characters as simplified ones
   (``cjk.simplified``). The upgrade takes the keyword rows of the chunks holding one out,
   with the values schema 14 gave them, and puts them in again (``stemmed_keywords``);
   other rows are not touched, nothing is read again or embedded.
16. A note's key by updated kept only when it is not its key by date
   (``note_order.OWN_UPDATED``: a note with no ``updated`` of its own keeps it empty,
   out of ``notes_ord_updated``; ``notes_ord_date`` holds whether a note has one,
   ``note_order.OWN``, before its key, so a section by updated or date reads each kind
   at a seek and merges them): the key was kept and indexed twice, 7 % of a short-note
   index.db. The upgrade empties the equal keys and makes both indexes again
   (``note_order.updated_apart``); nothing is read from the vault. The pages it frees
   are given back as any are (``PendingQueue.reclaim``).
17. A wikilink's name read trimmed as JavaScript's ``trim`` trims it, as Obsidian reads
   it (``wikilinks.find_links``): U+FEFF too, which Python's ``strip`` kept, so
   ``[[Zed<U+FEFF>]]`` was stored as a link to ``Zed<U+FEFF>.md`` where a fresh index
   stores one to ``Zed.md``. The notes holding a wikilink whose stored target begins or
   ends so are read again by the next sync. And a file whose path begins in a space
   (`` Lead.md`` at the root, linked ``[[/ Lead.md]]``) had its name taken trimmed when
   it came, went or moved (``wikilinks.file_link_name``), the verdicts of the links to it
   not followed: when there is one, the next sync resolves every stored link once
   (``link_upgrades``). Nothing else changes.
18. Two changes of what a fresh index reads, one step:
   - The model reads no block id (``chunks.model_text``), a drawing's banner and file ids
     are not indexed (``excalidraw.plugin_lines``): the notes with a chunk that may hold
     either are read again by the next sync (``MARKED_STALE``), as a fresh index reads
     them; a chunk whose embedded text is the same keeps its vector.
   - A wikilink's name kept as JavaScript's ``trim`` keeps it where Python's ``strip``
     took a character off (U+001C-U+001F, U+0085: ``link_upgrades.STRIP_ONLY``): the notes
     holding one beside a ``[[`` read again by the next sync (MEMORY.md and the folder
     notes, unchunked, holding a wikilink; a frontmatter's link), and the links' names
     written before ``link_name`` trimmed so written again (``link_upgrades.names_again``).
   No other note is read.
19. Every note's and attachment's link keys, indexed (``link_keys``: its path and its last
   name as ``wikilinks.key`` gives them, and its aliases): a write with no daemon resolves
   its note's links by a few indexed lookups (``engine/stored_links.py``), not a map of
   every file built for them (0.28 s at 100,000 notes). The upgrade keys every row of
   ``notes`` and ``attachments`` (``link_keys.fill_link_keys``); no verdict changes. A
   ``^word`` ending a line of code, math or a comment is no block id (``anchors.unmarked``
   reads it now; 18 took it off what the model reads): the notes with a chunk holding a
   ``^`` where 18 looked and a sign of code (a backtick, ``~~~``, ``$``, ``%%``, ``<!--``,
   an indented line) are read again by the next sync (``CODE_CARETS_STALE``).

An upgrade ("migration" is ``memvault migrate``'s word) runs in one transaction with
the version's update: a kill leaves the old index, and the next open upgrades it again.
"""

from __future__ import annotations

import logging
import sqlite3

from memvault.core.notes import cut_otherwise
from memvault.core.wikilinks import folds_apart, link_name
from memvault.index.fts import (
    FTS_EXTERNAL,
    FTS_TABLE,
    FTS_TOKENIZE,
    HEADINGS_SQL,
    KEYWORDS_FN,
    keywords,
    register,
)
from memvault.index.keyword_upgrades import (
    cjk_keywords,
    marks_keywords,
    old_keyword_view,
    old_tokenizer,
    sharp_s_keywords,
    stemmed_keywords,
)
from memvault.index.link_keys import LINK_KEYS_INDEXES, LINK_KEYS_TABLE, fill_link_keys
from memvault.index.link_upgrades import (
    RESOLVE_LINKS_AGAIN,
    UNTRIMMED_STALE,
    names_again,
    spaced_files,
)
from memvault.index.note_order import order_columns, updated_apart

log = logging.getLogger("memvault")

SCHEMA_VERSION = 19

# a note's metadata columns and the links table: the same text on PostgreSQL (pg_schema)
NOTE_META_COLUMNS = """\
    skip_reason TEXT,
    title TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL DEFAULT '',
    category TEXT NOT NULL DEFAULT '',
    date TEXT,
    updated TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    aliases TEXT NOT NULL DEFAULT '[]',
    frontmatter TEXT NOT NULL DEFAULT '{}',
    headings TEXT NOT NULL DEFAULT '[]',
    warnings TEXT NOT NULL DEFAULT '[]',
    lines INTEGER NOT NULL DEFAULT 0
"""
LINKS_TABLE = """CREATE TABLE IF NOT EXISTS links(
    source TEXT NOT NULL,
    line INTEGER NOT NULL,
    target TEXT NOT NULL,
    anchor TEXT,
    kind TEXT NOT NULL,
    embed INTEGER NOT NULL,
    verdict TEXT NOT NULL,
    resolved TEXT,
    candidates TEXT NOT NULL DEFAULT '[]',
    name TEXT NOT NULL DEFAULT ''  -- the target's last name (wikilinks.link_name), indexed
)"""

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notes(
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    kind TEXT NOT NULL,          -- note | index (MEMORY.md, folder notes) | skipped
"""
    + NOTE_META_COLUMNS
    + """);
CREATE INDEX IF NOT EXISTS notes_category ON notes(category);
-- the rows status lists as problems (Store.problem_rows, after every sync that changed
-- something): the few, not a scan of every note's row (28 ms at 20,000 notes)
CREATE INDEX IF NOT EXISTS notes_problems ON notes(path)
    WHERE kind = 'skipped' OR warnings != '[]';
CREATE TABLE IF NOT EXISTS chunks(
    label INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL,
    ord INTEGER NOT NULL,
    heading TEXT NOT NULL,       -- JSON list: the heading path
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    text TEXT NOT NULL,
    sha TEXT NOT NULL,           -- sha256 of the embedded text (cache key)
    tokens INTEGER NOT NULL,
    title TEXT NOT NULL DEFAULT '',  -- the keyword title (chunks_fts reads it from here)
    about TEXT NOT NULL DEFAULT ''   -- the note's description, on its first chunk only
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, ord);
"""
    + LINKS_TABLE
    + """;
CREATE INDEX IF NOT EXISTS links_source ON links(source);
CREATE INDEX IF NOT EXISTS links_resolved ON links(resolved);
CREATE TABLE IF NOT EXISTS pending(
    label INTEGER PRIMARY KEY,   -- a chunk whose vector is not in the index yet
    sha TEXT NOT NULL,           -- its embedded text's sha256 (the cache key)
    text TEXT NOT NULL,          -- the exact text to embed (the chunk with its context header)
    since REAL NOT NULL          -- when it became pending (unix time)
);
CREATE INDEX IF NOT EXISTS pending_since ON pending(since);
CREATE TABLE IF NOT EXISTS pending_count(n INTEGER NOT NULL);  -- one row: COUNT(*) of pending
CREATE TRIGGER IF NOT EXISTS pending_added AFTER INSERT ON pending
    BEGIN UPDATE pending_count SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS pending_removed AFTER DELETE ON pending
    BEGIN UPDATE pending_count SET n = n - 1; END;
CREATE TABLE IF NOT EXISTS memory_owned(section TEXT NOT NULL, line TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS attachments(
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS relink_pending(old TEXT PRIMARY KEY, new TEXT NOT NULL);
"""
    + LINK_KEYS_TABLE
    + ";\n"
    + ";\n".join(LINK_KEYS_INDEXES)
    + ";\n"
)


def create(conn: sqlite3.Connection) -> None:
    """The tables of a new index, or the ones an older index lacks but the keyword table
    (which ``upgrade`` makes, for an index of version 4 or before)."""
    conn.executescript(SCHEMA)
    if _version(conn) in (None, SCHEMA_VERSION):
        for statement in FTS_EXTERNAL:
            conn.execute(statement)


def _version(conn: sqlite3.Connection) -> int | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return None if row is None else int(row[0])


def external_content_fts(conn: sqlite3.Connection) -> None:
    """Schema 5 -> 6: the keyword table reads its columns from ``chunks``.

    The old table's title and description of each chunk move into ``chunks``; the old
    table is dropped (its copy of the text with it) and the new one built from the
    rows (FTS5's ``rebuild``). Nothing is read from the vault, nothing embedded."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}
    for column in ("title", "about"):
        if column not in columns:
            conn.execute(f"ALTER TABLE chunks ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")
    fts = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name = 'chunks_fts'")]
    if fts:
        old = {r[1] for r in conn.execute("PRAGMA table_info(chunks_fts)")}
        about = "coalesce(f.about, '')" if "about" in old else "''"
        conn.execute(
            f"UPDATE chunks SET title = coalesce(f.title, ''), about = {about} "
            "FROM chunks_fts AS f WHERE f.rowid = chunks.label"
        )
        conn.execute("DROP TABLE chunks_fts")
    for statement in FTS_EXTERNAL:  # not executescript: it would commit the transaction
        conn.execute(statement)
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')")


# version 9: the notes a merge conflict may be left in are read again (core/conflicts.py;
# both backends)
CONFLICTED_STALE = (
    "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE kind = 'note' AND path IN "
    "(SELECT path FROM chunks WHERE text LIKE '%<<<<<<<%')"
)


def link_names(conn: sqlite3.Connection) -> None:
    """Schema 6 -> 7: the links' ``name`` column, filled from their targets, and its
    index (for a new index: the index only)."""
    if "name" not in {r[1] for r in conn.execute("PRAGMA table_info(links)")}:
        conn.execute("ALTER TABLE links ADD COLUMN name TEXT NOT NULL DEFAULT ''")
        # on this connection only: no schema object names the function
        conn.create_function("memvault_link_name", 1, link_name, deterministic=True)
        conn.execute("UPDATE links SET name = memvault_link_name(target)")
    conn.execute("CREATE INDEX IF NOT EXISTS links_name ON links(name)")


# a note read again by the next sync, of its chunks those that hold ...
_READ_AGAIN = "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE kind = 'note' AND path IN "
# ... a `^` after a space, tab, `]]` or at a line's start (a block id, or `x ^2`)
_CARET = (
    "text LIKE '% ^%' OR text LIKE '%\t^%' OR text LIKE '%\n^%' OR text LIKE '^%' OR "
    "text LIKE '%]]^%'"
)
# schema 18 (PostgreSQL 17): a `^` (a read for nothing if no block id), a drawing's banner
MARKED_STALE = (
    f"{_READ_AGAIN}(SELECT path FROM chunks WHERE {_CARET} OR text LIKE '%EXCALIDRAW VIEW%')"
)
# schema 19 (PostgreSQL 18): a `^` and a sign of code, math or a comment, where a `^word`
# ending a line is no block id (core/anchors.unmarked)
CODE_CARETS_STALE = (
    f"{_READ_AGAIN}(SELECT path FROM chunks WHERE ({_CARET}) AND (text LIKE '%`%' OR "
    "text LIKE '%~~~%' OR text LIKE '%$%' OR text LIKE '%<!--%' OR "
    "text LIKE '%!%!%%' ESCAPE '!' OR text LIKE '%\n    %' OR text LIKE '%\n\t%'))"
)


# schema 13 (PostgreSQL 12): a note an older memvault indexed from a git LFS pointer
# (its summary the pointer's first line) read again by the next sync, now skipped
LFS_POINTERS_STALE = (
    "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE kind = 'note' AND size <= 1024 AND ("
    "summary LIKE 'version https://git-lfs.github.com/spec/v1%' OR "
    "summary LIKE 'version https://hawser.github.com/spec/v1%')"
)


def summaries_stale(conn: sqlite3.Connection) -> int:
    """Schema 11 -> 12: the notes whose summary may be cut otherwise now made stale (the
    next sync reads them again). Returns how many."""
    conn.create_function("memvault_cut_otherwise", 1, cut_otherwise, deterministic=True)
    return conn.execute(
        "UPDATE notes SET sha256 = '', mtime_ns = -1 "
        "WHERE kind = 'note' AND summary != '' AND memvault_cut_otherwise(summary)"
    ).rowcount


def lower_case_links(conn: sqlite3.Connection) -> bool:
    """Schema 9 -> 10: when a link's target or a file's path is one case folding and
    lower case tell apart (``wikilinks.folds_apart``), the links' names written again
    and every link resolved again by the next sync. Returns whether there was one."""
    conn.create_function("memvault_folds_apart", 1, folds_apart, deterministic=True)
    found = conn.execute(
        "SELECT 1 FROM links WHERE memvault_folds_apart(target) UNION ALL "
        "SELECT 1 FROM notes WHERE memvault_folds_apart(path) UNION ALL "
        "SELECT 1 FROM attachments WHERE memvault_folds_apart(path) LIMIT 1"
    ).fetchone()
    if found is None:
        return False
    conn.create_function("memvault_link_name", 1, link_name, deterministic=True)
    conn.execute(
        "UPDATE links SET name = memvault_link_name(target) "
        "WHERE name != memvault_link_name(target)"
    )
    conn.execute(RESOLVE_LINKS_AGAIN)
    return True


def upgrade(conn: sqlite3.Connection, version: int | None) -> None:
    """Bring an index at ``version`` (None: just created) to ``SCHEMA_VERSION``,
    inside the caller's transaction (which also records the new version)."""
    if version is None or version < 4:
        # the queue's length, counted once here (under the write lock); the triggers
        # keep it from now on (a REPLACE would not fire the delete trigger: the store
        # upserts instead)
        conn.execute("DELETE FROM pending_count")
        conn.execute("INSERT INTO pending_count(n) SELECT COUNT(*) FROM pending")
    if version is None or version < 7:
        link_names(conn)
    if version is None or version < 19:
        files = fill_link_keys(conn, "?")
        if version is not None:
            log.info("index schema %d -> 19: %d files' link keys kept", version, files)
    if version is not None and version < 19 and (stale := conn.execute(CODE_CARETS_STALE).rowcount):
        log.info("index schema %d -> 19: %d notes with a ^ in code read again", version, stale)
    if version is None or version < 14:
        counted = order_columns(conn)
        if version is not None:
            log.info("index schema %d -> 14: %d notes' places in MEMORY.md kept", version, counted)
    if version is not None and 14 <= version < 16:  # (before 14, or new: by order_columns)
        emptied = updated_apart(conn, "?")
        log.info("index schema %d -> 16: %d notes' keys by updated kept once", version, emptied)
    if version is not None and version < 7:
        # verdicts stored before: those of notes unchanged since files came and went
        # are stale; the next sync resolves every link once
        conn.execute(RESOLVE_LINKS_AGAIN)
    if version is None:
        if "title" not in {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}:
            # tables an older memvault made, its version never written (its first open
            # killed between the two): the keyword table is made again in the new shape
            external_content_fts(conn)
        elif old_keyword_view(conn):  # the same, of schema 6 or 7: its rows as given
            cjk_keywords(conn)
        if old_tokenizer(conn):  # the same, of schema 8
            marks_keywords(conn)
            conn.execute(CONFLICTED_STALE)
        return
    # the keyword table built from the rows as ``keyword_form`` gives them now: no row is
    # of an older form (``stemmed_keywords`` takes rows out with schema 14's values)
    rebuilt = version < 6
    if version < 6:
        # a table of version 2 and before has no ``about`` column: the rebuild adds it
        external_content_fts(conn)
    elif version < 8:
        spaced_rows = cjk_keywords(conn)
        log.info(
            "index schema %d -> 8: %d chunks' keywords split by character", version, spaced_rows
        )
    if version < 9 and old_tokenizer(conn):  # (version < 6: made anew above)
        marks_keywords(conn)
        rebuilt = True
        log.info("index schema %d -> 9: the keyword table built again (marks in words)", version)
    if version < 9:
        conn.execute(CONFLICTED_STALE)
    if version < 10 and lower_case_links(conn):
        log.info("index schema %d -> 10: links compared in lower case, resolved again", version)
    if version < 11 and sharp_s_keywords(conn):
        rebuilt = True
        log.info("index schema %d -> 11: the keyword table built again (ß as ss)", version)
    if version < 12 and (stale := summaries_stale(conn)):
        log.info("index schema %d -> 12: %d notes' summaries read again", version, stale)
    if version < 13 and (stale := conn.execute(LFS_POINTERS_STALE).rowcount):
        log.info("index schema %d -> 13: %d git LFS pointers read again", version, stale)
    if version < 15 and not rebuilt and (stemmed := stemmed_keywords(conn)):
        log.info(
            "index schema %d -> 15: %d chunks keyed again (Cyrillic stems, Han simplified)",
            version,
            stemmed,
        )
    if version < 17 and (stale := conn.execute(UNTRIMMED_STALE).rowcount):
        log.info(
            "index schema %d -> 17: %d notes' links read again (trimmed as JS)", version, stale
        )
    if version < 17 and spaced_files(conn):
        log.info("index schema %d -> 17: a name begins in a space: links resolved again", version)
    if version < 18 and (stale := conn.execute(MARKED_STALE).rowcount):
        log.info("index schema %d -> 18: %d notes with a block id read again", version, stale)
    if version < 18 and (changed := names_again(conn)):
        log.info(
            "index schema %d -> 18: %d notes or links read again (strip vs JS)", version, changed
        )
    if version < 3:
        stale = conn.execute(
            "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE kind = 'note'"
        ).rowcount
        log.info(
            "index schema %d -> 3: the %d notes are read again by the next sync", version, stale
        )
    elif version < 5:  # (every note of a version < 3 is stale already)
        stale = conn.execute(
            "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE kind = 'note' AND path IN "
            "(SELECT path FROM chunks WHERE (text LIKE '%[[%' OR text LIKE '%](%') "
            "AND text LIKE '%/%/%')"
        ).rowcount
        log.info(
            "index schema %d -> 5: links are embedded without their inner folders; the %d "
            "notes holding a link two folders deep are read again by the next sync (their linking chunks embedded "
            "again in the background)",
            version,
            stale,
        )


__all__ = [
    "CODE_CARETS_STALE",
    "CONFLICTED_STALE",
    "FTS_EXTERNAL",
    "FTS_TABLE",
    "FTS_TOKENIZE",
    "HEADINGS_SQL",
    "KEYWORDS_FN",
    "LFS_POINTERS_STALE",
    "MARKED_STALE",
    "RESOLVE_LINKS_AGAIN",
    "SCHEMA",
    "SCHEMA_VERSION",
    "cjk_keywords",
    "create",
    "external_content_fts",
    "keywords",
    "link_names",
    "lower_case_links",
    "marks_keywords",
    "register",
    "sharp_s_keywords",
    "stemmed_keywords",
    "summaries_stale",
    "upgrade",
]
