"""MEMORY.md's kept keys and the Python that made them (issue 27): ``collation`` reads
Python's Unicode tables, and Python 3.11 (Unicode 14.0) and 3.12+ (15.0, 15.1) sort
U+1E030, MODIFIER LETTER CYRILLIC SMALL A, apart: 3.11 keeps it as itself, after every
Cyrillic letter; 3.12 reads it as а, before them (72 code points collate otherwise
between 3.11 and 3.13, none between 3.12 and 3.13). An index whose keys another Python
made (a person who upgraded Python, clones of a team on a shared PostgreSQL index) gives
a write with no daemon the MEMORY.md a fresh index gives, byte for byte: the writer
computes its keys again at its open (``note_order.rekey``)."""

from __future__ import annotations

import sqlite3
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from helpers import new_vault, note, open_vault, write
from memvault.core import memory_order
from memvault.core.memory_order import KEYS_ALGORITHM, keys_made, stored_keys
from test_oneshot_lists import _fresh, _listings, _sections

PEOPLE = """
[[memory.sections]]
name = "people"
title = "Key People"
folder = "people"
order = "title"
limit = 3

"""
MODIFIER_A = "\U0001e030"  # Unicode 15.0's MODIFIER LETTER CYRILLIC SMALL A
# the titles ``collation`` leaves alone (lower case Cyrillic, no digit, no space)
TITLES = {"people/p1.md": "аяя", "people/p2.md": "ббб", "people/p3.md": "яяя"}
ODD = "people/p4.md"
ODD_TITLE = MODIFIER_A + "бв"  # 3.11: after яяя, left out of the three; 3.12+: first


def _other() -> tuple[str, bytes]:
    """What the other Python records and the title key it keeps for ``ODD``."""
    if unicodedata.unidata_version.startswith("14."):  # this is 3.11: the other, 3.13
        made, collated = "15.1.0", "а" + ODD_TITLE[1:]
    else:  # 3.12 or later: the other, 3.11
        made, collated = "14.0.0", ODD_TITLE
    return f"{KEYS_ALGORITHM} unicode {made}", memory_order._packed((collated, ODD))


def _vault(tmp_path: Path) -> Path:
    root = new_vault(tmp_path)
    _sections(root, PEOPLE)
    for rel, title in {**TITLES, ODD: ODD_TITLE}.items():
        write(root, rel, note(title, f"about {title}"))
    with open_vault(root) as v:
        v.sync(vectors=False)
    return root


def _left_by_the_other(index: Path) -> tuple[str, bytes]:
    """The index as the other Python leaves it: ``ODD``'s title key its own, and its
    record (``_other``). Returns both."""
    made, key = _other()
    with sqlite3.connect(index) as db:
        db.execute("UPDATE notes SET ord_title = ? WHERE path = ?", (key, ODD))
        db.execute("UPDATE meta SET value = ? WHERE key = 'order_keys'", (made,))
    db.close()
    return made, key


def test_the_modifier_letter_collates_by_the_unicode_tables() -> None:
    """The character the tests below lean on sorts by the running Python's tables."""
    collated = memory_order.collation(ODD_TITLE)
    assert collated == (ODD_TITLE if unicodedata.unidata_version < "15" else "абв")


def test_keys_another_python_made_are_computed_again_and_list_as_a_fresh_index(
    tmp_path: Path,
) -> None:
    root = _vault(tmp_path)
    index = root / ".memvault" / "index.db"
    _left_by_the_other(index)
    with open_vault(root) as v:  # a write with no daemon
        v.add("decisions", "Another", summary="new")
        assert v.engine.catalogue._rows is None  # no row made: the kept keys were read
    assert _fresh(root, tmp_path, "made") == _listings(root)
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'order_keys'").fetchone() == (
            keys_made(),
        )
        (kept,) = db.execute("SELECT ord_title FROM notes WHERE path = ?", (ODD,)).fetchone()
    assert kept == stored_keys(ODD, ODD_TITLE, {})[2]  # (the title order's key: of these alone)


def test_an_index_of_keys_made_before_they_were_recorded_is_given_them_again(
    tmp_path: Path,
) -> None:
    """Schema 14 of before the record: its keys' Python is not known, so computed again."""
    root = _vault(tmp_path)
    index = root / ".memvault" / "index.db"
    _, key = _other()
    with sqlite3.connect(index) as db:
        db.execute("UPDATE notes SET ord_title = ? WHERE path = ?", (key, ODD))
        db.execute("DELETE FROM meta WHERE key = 'order_keys'")
    with open_vault(root) as v:
        v.add("decisions", "Another", summary="new")
    assert _fresh(root, tmp_path, "unrecorded") == _listings(root)


def test_a_reader_leaves_another_pythons_keys_and_knows_them_as_not_its_own(
    tmp_path: Path,
) -> None:
    """A reader's open writes nothing (it holds no writer's lock: the keys are the
    writer's to compute); ``keys_ours`` tells it, and a Linker with no rows then sorts
    every row rather than list by another Python's keys."""
    from memvault.index.store import Store

    root = _vault(tmp_path)
    state = root / ".memvault"
    made, _ = _left_by_the_other(state / "index.db")
    from contextlib import nullcontext

    store = Store(state / "index.db", state / "cache.db", upgrade_lock=nullcontext)
    try:  # a reader's open: nothing written, and the keys known as another's
        assert store.meta("order_keys") == made
        assert not store.keys_ours()
    finally:
        store.close()


def test_postgres_keys_another_python_made_are_computed_again_by_the_writer(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = _vault(tmp_path)
    with open_vault(root) as v:
        schema = v.engine.store.schema  # type: ignore[attr-defined]
    made, key = _other()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'UPDATE "{schema}".notes SET ord_title = %s WHERE path = %s', (key, ODD))
        conn.execute(f"UPDATE \"{schema}\".meta SET value = %s WHERE key = 'order_keys'", (made,))
    with open_vault(root) as v:
        v.add("decisions", "Another", summary="new")
        assert v.engine.catalogue._rows is None
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        row = conn.execute(f"SELECT value FROM \"{schema}\".meta WHERE key = 'order_keys'")
        assert row.fetchone() == (keys_made(),)
    monkeypatch.delenv("MEMVAULT_INDEX_STORE")
    assert _fresh(root, tmp_path, "pg") == _listings(root)


def test_a_write_that_finds_the_keys_another_pythons_after_its_open_sorts_every_row(
    tmp_path: Path,
) -> None:
    """The keys are read only while they are recorded as this process's: changed under
    an open writer (as another Python's writer leaves them, a PostgreSQL writer's lock
    taken by another machine's meanwhile), its write sorts every row instead, and lists
    as a fresh index."""
    root = _vault(tmp_path)
    with open_vault(root) as v:
        _left_by_the_other(root / ".memvault" / "index.db")
        v.add("decisions", "Another", summary="new")
        assert v.engine.catalogue._rows is not None  # every row read, not the kept keys
    assert _fresh(root, tmp_path, "after") == _listings(root)


DECISIONS = """
[[memory.sections]]
name = "decisions"
title = "Recent Decisions"
folder = "decisions"
order = "date"
limit = 3

"""
# 2024-01-01 in Kawi digits (Unicode 15.0): a date to 3.12+ (``\\d``), none to 3.11
KAWI_DATE = "".join(chr(0x11F50 + int(c)) if c.isdigit() else c for c in "2024-01-01")


def test_a_date_of_digits_only_one_python_reads_is_keyed_again_though_the_names_are_ascii(
    tmp_path: Path,
) -> None:
    """A date field of Kawi digits is a date to 3.12+ (the note first, the others have
    none) and no date to 3.11 (the note last, by its path): its path and title are
    ASCII, and its keys are computed again all the same."""
    root = new_vault(tmp_path)
    _sections(root, DECISIONS)
    for name in ("a", "b", "c"):
        write(root, f"decisions/{name}.md", note(name, f"decided {name}"))
    write(root, "decisions/z.md", note("z", "decided z", date=KAWI_DATE))
    with open_vault(root) as v:
        v.sync(vectors=False)
    path = "decisions/z.md"
    theirs = "" if unicodedata.unidata_version >= "15" else KAWI_DATE  # the other's stamp
    order = memory_order.sort_key(memory_order.CatalogueEntry(path, "z", ""), "date")
    key = memory_order._packed((theirs.translate(memory_order._MIRROR) + "\U0010ffff", order[1]))
    made = _other()[0]
    with sqlite3.connect(root / ".memvault" / "index.db") as db:
        db.execute("UPDATE notes SET ord_date = ? WHERE path = ?", (key, path))
        db.execute("UPDATE meta SET value = ? WHERE key = 'order_keys'", (made,))
    with open_vault(root) as v:
        v.add("people", "Someone", summary="new")
        assert v.engine.catalogue._rows is None
    assert _fresh(root, tmp_path, "kawi") == _listings(root)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_folder_notes_another_python_ordered_are_written_again_by_a_write_elsewhere(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other Python wrote people/people.md in its order (p4 first, or last) and
    saved it as in line (meta ``folder_notes``); a write with no daemon in another
    folder, its keys computed again, writes the folder note in this Python's order too,
    as a fresh index does: what the folder notes were rendered under names the keys'."""
    import json
    import os
    from contextlib import closing

    if backend == "postgres":
        import psycopg

        dsn = request.getfixturevalue("pg_dsn")
        monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", dsn)
    root = _vault(tmp_path)
    folder_note = root / "people" / "people.md"
    made, key = _other()
    text = folder_note.read_text("utf-8")
    lines = text.splitlines(keepends=True)
    odd = next(line for line in lines if "[[people/p4]]" in line)
    lines.remove(odd)  # the other Python's order: p4 first (3.12+), or last (3.11)
    mine_first = next(i for i, line in enumerate(lines) if "[[people/p1]]" in line)
    lines.insert(mine_first if made.endswith("15.1.0") else mine_first + 3, odd)
    theirs = "".join(lines)
    assert theirs != text
    folder_note.write_text(theirs, "utf-8")
    st = os.stat(folder_note)
    if backend == "postgres":
        with open_vault(root, mode="read") as v:
            schema = v.engine.store.schema  # type: ignore[attr-defined]
        db: Any = psycopg.connect(dsn, autocommit=True)
        db.execute(f'SET search_path TO "{schema}"')
        mark = "%s"
    else:
        db, mark = sqlite3.connect(root / ".memvault" / "index.db", isolation_level=None), "?"
    with closing(db):  # the index as the other Python leaves it, its folder note as it wrote it
        db.execute(f"UPDATE notes SET ord_title = {mark} WHERE path = {mark}", (key, ODD))
        db.execute(f"UPDATE meta SET value = {mark} WHERE key = 'order_keys'", (made,))
        (saved,) = db.execute("SELECT value FROM meta WHERE key = 'folder_notes'").fetchone()
        kept = json.loads(saved)
        kept["rules"] = kept["rules"].replace(keys_made(), made)  # (what it rendered under)
        kept["seen"]["people/people.md"] = [st.st_size, st.st_mtime_ns]
        db.execute(
            f"UPDATE meta SET value = {mark} WHERE key = 'folder_notes'", (json.dumps(kept),)
        )
    with open_vault(root) as v:  # a write with no daemon, in decisions/
        v.add("decisions", "Another", summary="new")
        assert v.engine.catalogue._rows is None
    assert folder_note.read_text("utf-8") == text
    monkeypatch.delenv("MEMVAULT_INDEX_STORE", raising=False)
    assert _fresh(root, tmp_path, "folders") == _listings(root)


def test_index_move_leaves_the_sqlite_index_it_reads_as_it_was(tmp_path: Path, pg_dsn: str) -> None:
    """`memvault index move --to postgres` reads the SQLite index (its vectors) and
    leaves it as it was: it holds no writer's lock, and keys another Python made are
    the writer's to compute (a one-shot write of that Python may hold the lock and
    write its keys meanwhile); its own sync of the target computes its own."""
    from memvault.config import VaultConfig
    from memvault.engine.index_move import move_index, with_store
    from memvault.index.embedder_hash import HashEmbedder

    root = _vault(tmp_path)
    index = root / ".memvault" / "index.db"
    made, key = _left_by_the_other(index)
    config = VaultConfig.load(root)
    move_index(config, with_store(config, "postgres", pg_dsn), HashEmbedder())
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'order_keys'").fetchone() == (made,)
        assert db.execute("SELECT ord_title FROM notes WHERE path = ?", (ODD,)).fetchone() == (key,)
