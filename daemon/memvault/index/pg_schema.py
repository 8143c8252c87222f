"""The PostgreSQL index's tables (one schema per vault) and their versioned migrations.

memvault touches only its own schema: every table below is created in it, and the
connection's ``search_path`` is that schema and the catalog alone (``search_path``), so
the store's SQL (written once, for both engines) reads and writes there and nowhere
else: a table of the index dropped by hand is an error, never the same name in
``public`` (a team's application's ``notes``; pgvector's schema was on the path, and
``public`` is pgvector's by default). pgvector's type, operator and operator class are
named with the schema the extension lives in (``vector_schema``; pg_vectors.py): created
only when it is not installed, and only if the role may.

Versions (``meta.schema_version``, the same meaning on every machine):

1. the first: the SQLite index's tables, with a ``tsvector`` column of FTS5's own
   tokens (weighted A-D: title, headings, description, text; pg_keywords.py), its
   token count and a GIN index for the keywords, the
   embedding cache (float16 bytes by model and content hash, int8 since version 5,
   shared by every machine: no machine embeds a text the index holds), the writer's
   name.

2. ``chunk_totals``: the chunks' count and token total (BM25's collection size and
   average length), kept by statement triggers on ``chunks`` in the writer's own
   transactions: a keyword query read them by scanning every chunk (42 ms at 20,000).

3. embedded texts show a link without its folders below the first (the SQLite
   index's schema 5): the notes holding a link two folders deep are read again by the next sync (their linking
   chunks embedded again), once; no table changes.

4. the links' ``name`` (the SQLite index's schema 7: a file coming or going has the
   stored links of its name resolved again), filled from the targets, indexed; the
   next sync resolves every stored link once.

5. the embedding cache's vectors are int8 with a scale each (``vector_cache.encode``:
   cache.db's version 3), so both backends hold the same vectors and give the same
   hits; the float16 rows are converted a page at a time. The ``vectors`` table keeps
   what it holds (within 0.2 % of the converted rows): a chunk embedded again takes
   the converted vector.

6. twins (pg_vectors.py): a ``vectors`` row whose vector another row already holds
   names that row (``node``) and stays out of the HNSW index, which is partial
   (``WHERE node IS NULL``): thousands of copies of one vector (a note of one repeated
   line) are one graph element, not a clique the search walks into. ``digest`` (a
   64-bit BLAKE2b of the stored vector's words, ``pg_vectors.digests``) finds a new
   vector's node. Rows of before are nodes, without a digest (a copy of one becomes a node of
   its own, once); the old HNSW index is dropped and the partial one built.

7. Chinese and Japanese found by keywords (the SQLite index's schema 8): the chunks
   holding such a character (``core/cjk.py``) are given their keywords again, each such
   character a token of its own, a page of rows at a time; other rows are not touched.
   Their notes are read again by the next sync (long paragraphs cut at CJK full stops).

8. Words whose letters carry marks (the SQLite index's schema 9): the tokenizer keeps
   combining marks inside a token, Thai, Lao, Khmer and Myanmar are spaced by letter and
   its marks, Arabic and Hebrew lose their optional points (``core/cjk.py``). The
   chunks holding a mark, such a letter, a tatweel, a Greek letter, ё or an invisible
   character (``cjk.plain``) are given their keywords again, a
   page of rows at a time; other rows tokenize as before and are not touched. The
   notes whose text holds ``<<<<<<<`` are read again by the next sync (a merge conflict
   left in a note is a warning now). A reader
   of a writer not yet at 8 asks with today's tokens: the same for every other text.

9. Link paths compared in lower case, not case folded (the SQLite index's schema 10,
   ``wikilinks.key``): when a link's target or a file's path is one the two rules tell
   apart (``wikilinks.folds_apart``: ß, ẞ, a ligature), the links' names are written
   again and every link is resolved again by the next sync; otherwise nothing changes.

10. German ß found as ss and back (the SQLite index's schema 11, ``cjk.plain``): the
   chunks holding ß or ẞ are given their keywords again; other rows are not touched.

11. A note's summary is its first sentence in any language (the SQLite index's schema
   12, ``notes.first_sentence``): the notes whose stored summary may be cut otherwise
   now (``notes.cut_otherwise``) are read again by the next sync.

12. A git LFS pointer file is not its note (the SQLite index's schema 13): the notes an
   older memvault indexed from one are read again by the next sync, and skipped.

13. Each note's place in MEMORY.md's orders kept with its row (the SQLite index's schema
   14, ``note_order.ORDER_COLUMNS``: ``bytea``, ordered byte by byte), ``listed``, and
   their indexes; the upgrade computes them for every row, and records what they were
   made under (meta ``order_keys``): a writer of another Python or key algorithm
   computes them again when it takes the writer's lock (``note_order.rekey``).

14. A Cyrillic word keyed with its stem, traditional Chinese as simplified (the SQLite
   index's 15, ``cjk.stemmed``, ``cjk.simplified``): the chunks holding either are given
   their keywords again, no other row. A reader of an older writer asks as before.

15. A note's key by updated kept only when it is not its key by date (the SQLite index's
   16, ``note_order.updated_apart``; a page reads each kind by a limited query: ``_keyed``).

16. A wikilink's name read trimmed as JavaScript trims it (the SQLite index's 17,
   ``link_upgrades``: U+FEFF too): the notes holding a wikilink whose stored
   target begins or ends so are read again by the next sync; when a file's path begins in
   a space (``link_upgrades.name_trimmed``), every link is resolved again by the next sync.

17. The SQLite index's 18, both of its changes: no block id read by the model, no
   drawing's banner indexed (``MARKED_STALE``: the notes with a chunk that may hold either
   read again by the next sync; a chunk whose embedded text did not change keeps its
   vector); what Python's ``strip`` takes off a wikilink's name and JavaScript's ``trim``
   keeps (``link_upgrades.pg_names_again``): those notes read again, the links' names
   written again.
18. The SQLite index's 19 (``link_keys.fill_link_keys``, ``CODE_CARETS_STALE``).

Migrations run once, in one transaction, under a transaction-scoped advisory lock
keyed by the schema's name: two processes opening a fresh schema at once do not
both create it. A schema written by a newer memvault is refused, saying which.
"""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memvault.core import cjk
from memvault.core.notes import cut_otherwise
from memvault.errors import IndexCorrupt, IndexTooNew
from memvault.index import link_keys, pg_keywords
from memvault.index.link_upgrades import (
    pg_folded_apart,
    pg_link_names,
    pg_names_again,
    pg_trimmed_links,
)
from memvault.index.note_order import ORDER_COLUMNS, fill_order, updated_apart
from memvault.index.schema import (
    CODE_CARETS_STALE,
    CONFLICTED_STALE,
    LFS_POINTERS_STALE,
    LINKS_TABLE,
    MARKED_STALE,
    NOTE_META_COLUMNS,
)
from memvault.index.vector_cache import half_to_int8

log = logging.getLogger("memvault")

PG_SCHEMA_VERSION = 18

_TABLES = [
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS notes(
    path TEXT PRIMARY KEY,
    size BIGINT NOT NULL,
    mtime_ns BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    kind TEXT NOT NULL,
"""
    + NOTE_META_COLUMNS
    + """)""",
    "CREATE INDEX IF NOT EXISTS notes_category ON notes(category)",
    """CREATE TABLE IF NOT EXISTS chunks(
    label BIGSERIAL PRIMARY KEY,
    path TEXT NOT NULL,
    ord INTEGER NOT NULL,
    heading TEXT NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    text TEXT NOT NULL,
    sha TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    headings TEXT NOT NULL DEFAULT '',
    about TEXT NOT NULL DEFAULT '',
    keywords TSVECTOR NOT NULL,  -- FTS5's tokens, positions weighted by column (pg_keywords)
    ntok INTEGER NOT NULL         -- its token count (BM25's document length)
)""",
    "CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, ord)",
    "CREATE INDEX IF NOT EXISTS chunks_keywords ON chunks USING gin(keywords)",
    LINKS_TABLE,
    "CREATE INDEX IF NOT EXISTS links_source ON links(source)",
    "CREATE INDEX IF NOT EXISTS links_resolved ON links(resolved)",
    """CREATE TABLE IF NOT EXISTS pending(
    label BIGINT PRIMARY KEY,
    sha TEXT NOT NULL,
    text TEXT NOT NULL,
    since DOUBLE PRECISION NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS pending_since ON pending(since)",
    "CREATE TABLE IF NOT EXISTS memory_owned(id BIGSERIAL PRIMARY KEY, section TEXT NOT NULL, "
    "line TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS attachments(
    path TEXT PRIMARY KEY, size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL
)""",
    "CREATE TABLE IF NOT EXISTS relink_pending(old TEXT PRIMARY KEY, new TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS embeddings(
    model TEXT NOT NULL, sha BYTEA NOT NULL, vector BYTEA NOT NULL, PRIMARY KEY(model, sha)
)""",
    # a chunk's vector (pgvector; the HNSW index, by dimension, is pg_vectors.py's)
    "CREATE TABLE IF NOT EXISTS vectors(label BIGINT PRIMARY KEY, embedding vector NOT NULL, "
    "node BIGINT, digest BIGINT)",
    # who writes: one row, the holder of the writer's advisory lock (host, pid, since)
    "CREATE TABLE IF NOT EXISTS writer(host TEXT NOT NULL, pid INTEGER NOT NULL, "
    "since DOUBLE PRECISION NOT NULL)",
    link_keys.LINK_KEYS_TABLE,  # version 18 (its indexes: fill_link_keys)
]

# version 2: the chunks' totals, kept exact by statement triggers (transition tables)
_TOTALS = [
    "CREATE TABLE IF NOT EXISTS chunk_totals(n BIGINT NOT NULL, ntok BIGINT NOT NULL)",
    "DELETE FROM chunk_totals",
    "INSERT INTO chunk_totals(n, ntok) SELECT count(*), coalesce(sum(ntok), 0) FROM chunks",
    """CREATE OR REPLACE FUNCTION chunk_totals_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE chunk_totals SET n = n + (SELECT count(*) FROM added),
    ntok = ntok + (SELECT coalesce(sum(ntok), 0) FROM added);
  RETURN NULL;
END $$""",
    """CREATE OR REPLACE FUNCTION chunk_totals_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE chunk_totals SET n = n - (SELECT count(*) FROM removed),
    ntok = ntok - (SELECT coalesce(sum(ntok), 0) FROM removed);
  RETURN NULL;
END $$""",
    """CREATE OR REPLACE FUNCTION chunk_totals_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE chunk_totals SET ntok = ntok + (SELECT coalesce(sum(ntok), 0) FROM added)
    - (SELECT coalesce(sum(ntok), 0) FROM removed);
  RETURN NULL;
END $$""",
    "DROP TRIGGER IF EXISTS chunk_totals_insert ON chunks",
    "CREATE TRIGGER chunk_totals_insert AFTER INSERT ON chunks REFERENCING NEW TABLE AS added "
    "FOR EACH STATEMENT EXECUTE FUNCTION chunk_totals_added()",
    "DROP TRIGGER IF EXISTS chunk_totals_delete ON chunks",
    "CREATE TRIGGER chunk_totals_delete AFTER DELETE ON chunks REFERENCING OLD TABLE AS removed "
    "FOR EACH STATEMENT EXECUTE FUNCTION chunk_totals_removed()",
    "DROP TRIGGER IF EXISTS chunk_totals_update ON chunks",
    "CREATE TRIGGER chunk_totals_update AFTER UPDATE ON chunks REFERENCING OLD TABLE AS removed "
    "NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION chunk_totals_changed()",
]


# version 3: the notes whose chunks hold a link two folders deep, stale for the next sync
_LINKED_STALE = (
    "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE kind = 'note' AND path IN "
    "(SELECT path FROM chunks WHERE (text LIKE '%[[%' OR text LIKE '%](%') AND text LIKE '%/%/%')"
)


def schema_name(root: Path, configured: str = "") -> str:
    """The vault's schema: ``index.schema`` when set, else ``memvault_<folder name>``
    (the same on every machine that holds the vault under that folder name; a team
    whose copies are named differently sets ``index.schema``). A name with characters
    outside ASCII keeps its a-z, 0-9 and _ and gets a digest of itself (in NFC): folded to
    ``_``, ``Заметки`` and ``日本語メモ`` were one schema, ``memvault__``, two vaults'
    syncs deleting each other's notes from it."""
    folded = re.sub(r"[^a-z0-9_]+", "_", root.name.lower())
    if not root.name.isascii():
        digest = hashlib.sha256(unicodedata.normalize("NFC", root.name).encode()).hexdigest()
        kept = folded.strip("_")[:40]
        folded = f"{kept}_{digest[:12]}" if kept else digest[:12]
    name = configured.strip() or "memvault_" + folded
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise IndexCorrupt(f"index.schema {name!r}: a lower-case SQL name (a-z, 0-9, _) is needed")
    return name


def lock_key(schema: str, role: str) -> int:
    """A stable 63-bit advisory lock key for (schema, role): one per vault and purpose."""
    digest = hashlib.sha256(f"memvault:{schema}:{role}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def exists(conn: Any, schema: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,), prepare=False
    ).fetchone()
    return row is not None


def migrate(conn: Any, schema: str) -> None:
    """Create or bring ``schema`` to ``PG_SCHEMA_VERSION``; refuse a newer one.

    ``conn`` is an autocommit psycopg connection whose search_path starts at ``schema``.
    """
    marked = _not_theirs(conn, schema)
    _mend(conn, schema)
    if not marked and exists(conn, schema):  # an index of before the comment
        _mark(conn, schema)
    version = _version(conn, schema)
    if version is not None and version > PG_SCHEMA_VERSION:
        raise too_new(schema, version)
    if version == PG_SCHEMA_VERSION:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(schema, "migrate"),))
        version = _version(conn, schema)  # again, under the lock: another may have done it
        if version is not None and version > PG_SCHEMA_VERSION:
            raise too_new(schema, version)
        if version == PG_SCHEMA_VERSION:
            return
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        _mark(conn, schema)
        if version is None or version < 2:
            for statement in (list(_tables(conn)) if version is None else []) + _TOTALS:
                # the triggers' functions name their table with its schema: a session of
                # another search_path (a person's psql) deleting chunks keeps the totals
                conn.execute(
                    statement.replace(" chunk_totals SET", f' "{schema}".chunk_totals SET')
                )
        if version is not None and version < 3:
            conn.execute(_LINKED_STALE)
        if version is not None and version < 4:
            pg_link_names(conn)
        if version is not None and version < 5:
            _int8_vectors(conn)
        if version is not None and version < 6:
            conn.execute("ALTER TABLE vectors ADD COLUMN IF NOT EXISTS node BIGINT")
            conn.execute("ALTER TABLE vectors ADD COLUMN IF NOT EXISTS digest BIGINT")
        if version is not None and version < 7:
            _keywords_again(conn, f"[{cjk.CJK_CHARS}{cjk.WIDE_CHARS}]", stale=True)
        if version is not None and version < 8:
            with_marks = f"[{cjk.marks()}{cjk.CLUSTER_CHARS}{cjk.PLAIN_CHARS}\u0640]"
            _keywords_again(conn, with_marks, stale=False)
            conn.execute(CONFLICTED_STALE)
        if version is not None and version < 9 and pg_folded_apart(conn):
            pg_link_names(conn)
        if version is not None and version < 10:
            _keywords_again(conn, f"[{cjk.SHARP_S_CHARS}]", stale=False)
        if version is not None and version < 11:
            _summaries_stale(conn)
        if version is not None and version < 12:
            conn.execute(LFS_POINTERS_STALE)
        if version is None or version < 13:
            add = "ALTER TABLE notes ADD COLUMN IF NOT EXISTS"
            for column in ORDER_COLUMNS:
                conn.execute(f"{add} {column} BYTEA NOT NULL DEFAULT ''::bytea")
            conn.execute(f"{add} listed INTEGER NOT NULL DEFAULT 1")
            fill_order(conn, "%s")
        if version is not None and version < 14:
            _keywords_again(conn, f"[{cjk.CYRILLIC_CHARS}{cjk.han_changed()}]", stale=False)
        if version is not None and 13 <= version < 15:  # (before 13: made so by fill_order)
            updated_apart(conn, "%s")
        if version is not None and version < 16:
            pg_trimmed_links(conn)
        if version is not None and version < 17:
            conn.execute(MARKED_STALE)
            pg_names_again(conn)
        if version is None or version < 18:
            link_keys.fill_link_keys(conn, "%s")
        if version is not None and version < 18:
            conn.execute(CODE_CARETS_STALE)
        for statement in _TWINS:
            conn.execute(statement)
        conn.execute("CREATE INDEX IF NOT EXISTS links_name ON links(name)")
        conn.execute(
            "INSERT INTO meta(key, value) VALUES('schema_version', %s) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (str(PG_SCHEMA_VERSION),),
        )
    if version is not None:  # said, as SQLite's steps are: a daemon's log, a status
        log.info("index schema %r %d -> %d: upgraded", schema, version, PG_SCHEMA_VERSION)


_OWN = tuple(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", " ".join([*_TABLES, *_TOTALS])))
_SPARE = {"embeddings", "writer"}  # the cache (by text hash) and who writes: made again alone
MARK = "memvault: the search index of a vault (docs/TEAM.md)"  # the schema's comment


def _not_theirs(conn: Any, schema: str) -> bool:
    """A field test: `[index] schema` set to a schema of the team's own application
    (`app`, holding its `notes` table): the writer's open took it for its index with
    tables dropped by hand and dropped `app.notes`, the application's rows with it.
    A writer builds or mends an index only in a schema that is new, empty, memvault's
    (its comment, ``MARK``), or, unmarked, holding a ``meta`` table with a schema version
    and no table of another name (an index of before the comment; an application's
    schema versioned in a ``meta`` table of its own is not one); else ``ConfigError``,
    nothing touched. Whether the schema bears the comment."""
    from memvault.errors import ConfigError

    kinds = conn.execute(
        "SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON "
        "n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f') "
        "ORDER BY 1",
        (schema,),
    ).fetchall()
    held = [str(name) for name, _ in kinds]
    # what holds rows, none memvault's: an application's (a view over memvault's is a team's)
    others = [str(name) for name, kind in kinds if kind in ("r", "p", "f") and name not in _OWN]
    row = conn.execute(
        "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = %s",
        (schema,),
    ).fetchone()
    if row is not None and row[0] == MARK:
        return True
    if not held:
        return False  # new, or empty: memvault's to fill
    if "meta" in held and not others and _version(conn, schema) is not None:
        # an index of a memvault from before the comment (migrate adds it); not an
        # application's schema keeping its version in a `meta` table of its own
        return False
    named = others or held
    raise ConfigError(
        f"schema {schema!r} holds tables memvault did not make ({', '.join(named[:5])}"
        f"{', ...' if len(named) > 5 else ''}): nothing was written or dropped. Give "
        'this vault a schema of its own ([index] schema = "..." in .memvault/config.toml, '
        "or MEMVAULT_INDEX_SCHEMA): memvault creates it"
    )


def _mark(conn: Any, schema: str) -> None:
    """The schema's comment says it is memvault's (``_not_theirs``); a role that does not
    own a schema made for it may not comment on it: its ``meta`` says so then."""
    try:
        with conn.transaction():
            conn.execute(f"COMMENT ON SCHEMA \"{schema}\" IS '{MARK}'")
    except Exception as exc:  # psycopg's InsufficientPrivilege
        log.debug("schema %r not marked as memvault's: %s", schema, exc)


def _mend(conn: Any, schema: str) -> None:
    """A table of the index dropped by hand (a field test: `DROP TABLE vectors`; every
    sync and search failed, a restart too): the rest of the index means nothing
    without it, so every table but the embedding cache is dropped and the writer's
    sync builds the index again from the files, its vectors from the cache. Only the
    cache or the writer's row gone: made again, empty."""
    present = {
        r[0]
        for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
        ).fetchall()
    }
    missing = [name for name in _OWN if name not in present]
    if not missing or not present.intersection(_OWN):
        return  # whole, or no index yet (or the whole schema dropped: built anew)
    if "meta" in present and _version(conn, schema) not in (None, PG_SCHEMA_VERSION):
        return  # an older index lacks the tables of later versions (migrate adds them);
        # a newer one is refused, never emptied
    log.warning(
        "the index in schema %r lost its table(s) %s (dropped by hand?): %s",
        schema,
        ", ".join(missing),
        "made again" if _SPARE.issuperset(missing) else "it is built again from the files",
    )
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(schema, "migrate"),))
        if not _SPARE.issuperset(missing):
            for name in _OWN:
                if name != "embeddings":
                    conn.execute(f'DROP TABLE IF EXISTS "{schema}"."{name}" CASCADE')
            return  # migrate then makes them all, as for a new index
        for statement in _tables(conn):
            conn.execute(statement)


# a new vector's node, by digest; a node's twins (version 6). Not partial on
# ``node IS NULL``: the planner would take such an index for a search's nodes (a
# bitmap scan and a sort: exact, and slow on a large index) instead of the HNSW one
_TWINS = [
    "CREATE INDEX IF NOT EXISTS vectors_digest ON vectors(digest)",
    "CREATE INDEX IF NOT EXISTS vectors_node ON vectors(node) WHERE node IS NOT NULL",
]


def rows(run: Any, schema: str, table: str) -> int:
    """``table``'s rows as the planner knows them (no scan; 0 before any or none)."""
    row = run(
        "SELECT c.reltuples FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s",
        (schema, table),
    ).fetchone()
    return max(0, int(row[0])) if row else 0


def _summaries_stale(conn: Any) -> None:
    """Version 10 -> 11: the notes whose summary may be cut otherwise now
    (``notes.cut_otherwise``) read again by the next sync."""
    rows = conn.execute("SELECT path, summary FROM notes WHERE kind = 'note' AND summary <> ''")
    stale = [(path,) for path, summary in rows if cut_otherwise(summary)]
    with conn.cursor() as cur:
        cur.executemany("UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE path = %s", stale)


def _int8_vectors(conn: Any) -> None:
    """Version 4 -> 5: the cache's float16 rows as int8 (``vector_cache.half_to_int8``),
    a page of rows at a time by key; a row memvault did not write (not float16 bytes)
    is dropped: it is only a cache (a migration is one transaction: a schema of
    version 4 holds float16 rows only)."""
    after: tuple[str, bytes] = ("", b"")
    while rows := conn.execute(
        "SELECT model, sha, vector FROM embeddings WHERE (model, sha) > (%s, %s) "
        "ORDER BY model, sha LIMIT 2000",
        after,
    ).fetchall():
        after = (rows[-1][0], bytes(rows[-1][1]))
        good, bad = half_to_int8(((m, bytes(sha)), bytes(v)) for m, sha, v in rows)
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE embeddings SET vector = %s WHERE model = %s AND sha = %s",
                [(blob, m, sha) for (m, sha), blob in good],
            )
            if bad:
                cur.executemany("DELETE FROM embeddings WHERE model = %s AND sha = %s", bad)


def _keywords_again(conn: Any, pattern: str, *, stale: bool) -> None:
    """The keywords of the chunks holding a character of ``pattern`` (a regular
    expression), again, as ``pg_keywords.tsvectors_of`` gives them today; ``stale``:
    their notes read again by the next sync. Version 6 -> 7: a CJK character (spaced,
    as the SQLite index's table is given them; stale: long paragraphs are cut at CJK
    full stops now); 7 -> 8: a mark, a Thai, Lao, Khmer or Myanmar letter, a tatweel."""
    after = 0
    while rows := conn.execute(
        "SELECT label, text, title, headings, about, path FROM chunks WHERE label > %s "
        "AND (text ~ %s OR title ~ %s OR headings ~ %s OR about ~ %s) ORDER BY label LIMIT 2000",
        (after, *(pattern,) * 4),
    ).fetchall():
        after = int(rows[-1][0])
        keywords = pg_keywords.tsvectors_of([tuple(r[1:5]) for r in rows])
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE chunks SET keywords = %s::tsvector, ntok = %s WHERE label = %s",
                [(kw, ntok, r[0]) for r, (kw, ntok) in zip(rows, keywords, strict=True)],
            )
            if stale:
                cur.executemany(
                    "UPDATE notes SET sha256 = '', mtime_ns = -1 WHERE kind = 'note' AND path = %s",
                    [(p,) for p in dict.fromkeys(r[5] for r in rows)],
                )


def _version(conn: Any, schema: str) -> int | None:
    row = conn.execute(
        "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'meta'", (schema,)
    ).fetchone()
    if row is None:
        return None
    row = conn.execute(
        f"SELECT value FROM \"{schema}\".meta WHERE key = 'schema_version'"
    ).fetchone()
    return int(row[0]) if row else None


def too_new(schema: str, version: int) -> IndexTooNew:
    """What a process of this memvault gets from an index a newer one writes."""
    return IndexTooNew(
        f"index schema {schema!r} is version {version}, newer than this memvault's "
        f"({PG_SCHEMA_VERSION}); upgrade memvault on this machine",
        version,
        PG_SCHEMA_VERSION,
    )


def quoted(name: str) -> str:
    """``name`` as an SQL identifier: in double quotes, a double quote in it doubled."""
    return '"' + name.replace('"', '""') + '"'


def search_path(schema: str) -> str:
    """Every memvault session's ``search_path``: the vault's schema, then the catalog.
    Set by a statement once connected, after the DSN's own settings (an ``options=-c
    search_path=public`` of the DSN or PGOPTIONS): on this one, memvault's wins (the
    DSN's own keepalives win, which touch no one's tables). A pooler keeping a client's
    session (pgbouncer's session mode, which the writer's advisory lock needs too)
    keeps it."""
    return f"{quoted(schema)}, pg_catalog"


def _tables(conn: Any) -> Iterator[str]:
    """``_TABLES`` with pgvector's type named with its schema (``vector_schema``)."""
    ext = quoted(vector_schema(conn))
    for statement in _TABLES:
        yield statement.replace(" embedding vector NOT NULL", f" embedding {ext}.vector NOT NULL")


def vector_schema(conn: Any) -> str:
    """The schema pgvector lives in (``public`` when it is not installed yet: where
    ``ensure_vector_extension`` makes it)."""
    return ensure_vector_extension(conn, create=False) or "public"


def ensure_vector_extension(conn: Any, *, create: bool = True) -> str | None:
    """The schema pgvector lives in; it is created (in ``public``) when missing, or, not
    ``create`` (a reader: its session is read-only), None: no index can be there yet."""
    row = conn.execute(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'vector'"
    ).fetchone()
    if row is None:
        if not create:
            return None
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
        return "public"
    return str(row[0])


__all__ = [
    "PG_SCHEMA_VERSION",
    "ensure_vector_extension",
    "lock_key",
    "migrate",
    "quoted",
    "rows",
    "schema_name",
    "search_path",
    "vector_schema",
]
