"""MEMORY.md's lists in a process that is no daemon, read from the keys kept with each
note's row (issue 27: every note sorted afresh for one write, 1.4 s of a 2.2 s `memvault
add` at 100,000 notes): each write in a process of its own, MEMORY.md and the folder
notes byte for byte what a fresh index of the same files writes, whatever the sections
(a filter, a title order, a folder two deep, the vault root and its other folders), and
whatever changed while no daemon ran (a title, a date, a note moved, a note kept out)."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from helpers import new_vault, note, open_vault, write

SECTIONS = """
[[memory.sections]]
name = "projects"
title = "Active Projects"
folder = "projects"
filter = { status = "active" }
order = "updated"
limit = 3

[[memory.sections]]
name = "people"
title = "Key People"
folder = "people"
order = "title"
limit = 3

[[memory.sections]]
name = "decisions"
title = "Recent Decisions"
folder = "decisions"
order = "date"
limit = 3

[[memory.sections]]
name = "old"
title = "Old Things"
folder = "Archive/old"
order = "mtime"
limit = 2

[[memory.sections]]
name = "topics"
title = "Topics"
folder = ""
order = "updated"
limit = 3

"""
FOLDERS = ["people", "projects", "decisions", "Archive/old", "Archive/new", "Plugins", ""]
TITLES = ["Éclair", "alpha", "Beta", "topic-10", "topic-2", "note_a", "note1", "Zoë", "ß"]
FOLDER_NOTES = ("people", "projects", "decisions", "Archive/old")


def _sections(root: Path, sections: str = SECTIONS) -> None:
    config = root / ".memvault" / "config.toml"
    text = config.read_text("utf-8")
    start, end = text.index("[[memory.sections]]"), text.index("\n[index]")
    config.write_text(text[:start] + sections.lstrip() + text[end + 1 :], "utf-8")


def _listings(root: Path) -> dict[str, str]:
    out = {"MEMORY.md": (root / "MEMORY.md").read_text("utf-8")}
    for folder in FOLDER_NOTES:
        path = root / folder / f"{folder.rsplit('/', 1)[-1]}.md"
        if path.exists():
            out[folder] = path.read_text("utf-8")
    return out


def _fresh(root: Path, tmp_path: Path, tag: str) -> dict[str, str]:
    copy = tmp_path / f"fresh-{tag}"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    (copy / ".memvault").mkdir()
    shutil.copy(root / ".memvault" / "config.toml", copy / ".memvault" / "config.toml")
    with open_vault(copy) as fresh:
        fresh.engine.catalogue.notes()  # every row read: sorted as a daemon sorts them
        fresh.sync(vectors=False)
    return _listings(copy)


def _text(rng: random.Random, title: str) -> str:
    fields: dict[str, str] = {}
    if rng.random() < 0.7:
        fields["date"] = f"2025-{1 + rng.randrange(12):02}-{1 + rng.randrange(28):02}"
    if rng.random() < 0.5:
        fields["updated"] = rng.choice(
            ["2026-01-01", "2026-03", f"2026-0{1 + rng.randrange(9)}-01"]
        )
    if rng.random() < 0.12:
        fields["memory-index"] = "false"
    if rng.random() < 0.5:
        fields["status"] = rng.choice(["active", "Active", "done"])
    summary = rng.choice(["the same words", "", f"note {rng.randrange(1000)}"])
    return note(title, summary, **fields)


def _vault(tmp_path: Path, rng: random.Random, count: int = 48) -> tuple[Path, list[str]]:
    root = new_vault(tmp_path)
    _sections(root)
    live = []
    for i in range(count):
        folder = rng.choice(FOLDERS)
        rel = f"{folder}/n{i:03}.md" if folder else f"n{i:03}.md"
        write(root, rel, _text(rng, rng.choice(TITLES) + f" {i % 5}"))
        live.append(rel)
    with open_vault(root) as v:
        v.sync(vectors=False)
    return root, live


@pytest.mark.parametrize("seed", [52, 53])
def test_each_write_with_no_daemon_lists_as_a_fresh_index_whatever_the_sections(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    root, live = _vault(tmp_path, rng)
    for step in range(30):
        kind = rng.choice(["add", "update", "log", "edit", "edit_found", "move", "delete"])
        with open_vault(root) as v:  # a process of its own, as the CLI's
            if kind == "add":
                v.add(
                    rng.choice(["people", "projects", "decisions"]), f"{rng.choice(TITLES)} s{step}"
                )
            elif kind == "update":
                v.add("people", f"Person {step % 4}", summary=f"again {step}", update=True)
            elif kind == "log":
                v.log(f"entry {step}")
            elif kind in ("edit", "edit_found"):  # by hand, while no daemon ran
                rel = rng.choice(live)
                write(root, rel, _text(rng, f"{rng.choice(TITLES)} {step}"))
                if kind == "edit":
                    v.sync(paths=[rel], vectors=False)
                else:  # found by a sync of the whole vault
                    v.sync(vectors=False)
            elif kind == "move":
                rel = live.pop(rng.randrange(len(live)))
                folder = rng.choice(FOLDERS)
                # its own name (its row carried over) or another (indexed again)
                name = rel.rsplit("/", 1)[-1] if step % 2 else f"m{step:03}.md"
                new = f"{folder}/{name}" if folder else name
                if (root / new).exists():
                    new = new[:-3] + f"-{step}.md"
                (root / new).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).rename(root / new)
                live.append(new)
                v.sync(vectors=False)
            else:
                rel = live.pop(rng.randrange(len(live)))
                (root / rel).unlink()
                v.sync(paths=[rel], vectors=False)
            assert v.engine.catalogue._rows is None, kind  # no row made
        if step % 6 == 5:
            assert _fresh(root, tmp_path, f"{step}") == _listings(root), f"after step {step}"
    assert "people" in _listings(root) and "Archive/old" in _listings(root)  # (overflowed)


def test_a_folder_note_left_behind_by_an_update_that_stopped_is_brought_in_line(
    tmp_path: Path,
) -> None:
    """A write whose MEMORY.md update stopped before the folder notes (MEMORY.md's markers
    broken by hand: left untouched) changed people/'s notes; the next write, in another
    process and another folder, brings people/people.md in line: the folder notes are not
    taken as in line once rows changed without them (meta ``folder_notes`` cleared)."""
    root, _ = _vault(tmp_path, random.Random(7))
    with open_vault(root) as v:
        v.add("decisions", "Settled")  # the folder notes in line, said in the index
    memory = root / "MEMORY.md"
    kept = memory.read_text("utf-8")
    memory.write_text(kept.replace("<!-- memvault:end people -->\n", ""), "utf-8")
    with open_vault(root) as v:
        v.add("people", "Aaron Early", summary="new")
    assert "Aaron Early" not in (root / "people" / "people.md").read_text("utf-8")
    memory.write_text(kept, "utf-8")
    with open_vault(root) as v:
        v.add("decisions", "Another")
    assert "aaron-early" in (root / "people" / "people.md").read_text("utf-8")
    assert _fresh(root, tmp_path, "healed") == _listings(root)


def test_a_folder_note_a_person_edited_is_written_again_by_a_write_elsewhere(
    tmp_path: Path,
) -> None:
    """The folder notes saved as in line, a person deletes a line of people/people.md's
    list (no daemon running): a write in another folder finds the file changed since
    memvault wrote it and writes its list again; the person's text around it stays."""
    root, _ = _vault(tmp_path, random.Random(8))
    with open_vault(root) as v:
        v.add("decisions", "Settled")
    folder_note = root / "people" / "people.md"
    text = folder_note.read_text("utf-8")
    begin = text.index("<!-- memvault:begin folder -->\n") + len("<!-- memvault:begin folder -->\n")
    cut = text[:begin] + text[text.index("\n", begin) + 1 :]
    folder_note.write_text("Mine.\n" + cut, "utf-8")
    with open_vault(root) as v:
        v.add("decisions", "Another")
    assert folder_note.read_text("utf-8") == "Mine.\n" + text


def _as_schema_13(index: Path) -> None:
    """The index as memvault of schema 13 left it: no kept keys."""
    from memvault.index.note_order import ORDER_COLUMNS, ORDER_INDEXES

    with sqlite3.connect(index) as db:
        for statement in ORDER_INDEXES:
            db.execute(f"DROP INDEX {statement.split()[5]}")
        for column in (*ORDER_COLUMNS, "listed"):
            db.execute(f"ALTER TABLE notes DROP COLUMN {column}")
        db.execute("UPDATE meta SET value = '13' WHERE key = 'schema_version'")


def test_an_index_of_schema_13_is_given_its_keys_and_lists_as_a_fresh_index(
    tmp_path: Path,
) -> None:
    from memvault.index.note_order import ORDER_INDEXES

    root, _ = _vault(tmp_path, random.Random(9))
    index = root / ".memvault" / "index.db"
    _as_schema_13(index)
    with open_vault(root) as v:  # upgraded at its open
        v.add("people", "Aaron", summary="new")
        v.add("projects", "Harbour", summary="active one")
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            "19",
        )
        assert not db.execute("SELECT 1 FROM notes WHERE ord_title = x'' LIMIT 1").fetchall()
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {s.split()[5] for s in ORDER_INDEXES} <= names
    assert _fresh(root, tmp_path, "upgraded") == _listings(root)


def test_postgres_lists_with_no_daemon_as_sqlite_and_upgrades_from_12(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PgStore shares the SQL (bytea keys, ordered byte by byte): the sections of a filter,
    a title order and a folder two deep list as a fresh SQLite index does; an index of
    version 12 (no kept keys) is given them at its open."""
    import psycopg

    from memvault.index.note_order import ORDER_COLUMNS, ORDER_INDEXES

    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    rng = random.Random(12)
    root, live = _vault(tmp_path, rng, count=30)
    with open_vault(root) as v:
        schema = v.engine.store.schema  # type: ignore[attr-defined]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for statement in ORDER_INDEXES:
            conn.execute(f'DROP INDEX "{schema}".{statement.split()[5]}')
        for column in (*ORDER_COLUMNS, "listed"):
            conn.execute(f'ALTER TABLE "{schema}".notes DROP COLUMN {column}')
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '12' WHERE key = 'schema_version'")
    for step in range(6):
        with open_vault(root) as v:
            v.add(rng.choice(["people", "projects"]), f"{rng.choice(TITLES)} s{step}")
            rel = rng.choice(live)
            write(root, rel, _text(rng, f"{rng.choice(TITLES)} {step}"))
            v.sync(paths=[rel], vectors=False)
            assert v.engine.catalogue._rows is None
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        row = conn.execute(f"SELECT value FROM \"{schema}\".meta WHERE key = 'schema_version'")
        assert row.fetchone() == ("18",)
    monkeypatch.delenv("MEMVAULT_INDEX_STORE")
    assert _fresh(root, tmp_path, "pg") == _listings(root)


def test_a_note_moved_under_its_own_name_takes_its_place_by_its_new_path(
    tmp_path: Path,
) -> None:
    """A note moved to another folder keeping its file name keeps its row (carried over,
    not indexed again); its kept keys follow its new path: among notes of one title,
    people/c.md goes between people/b.md and people/d.md (its old path, Plugins/c.md,
    sorted first)."""
    root = new_vault(tmp_path)
    _sections(root)
    for name in ("b", "d", "e"):
        write(root, f"people/{name}.md", note("Same", f"person {name}"))
    write(root, "Plugins/c.md", note("Same", "person c"))
    with open_vault(root) as v:
        v.sync(vectors=False)
    (root / "Plugins" / "c.md").rename(root / "people" / "c.md")
    with open_vault(root) as v:
        report = v.sync(vectors=False)
        assert report.moved == (("Plugins/c.md", "people/c.md"),)
    listed = [line for line in _listings(root)["MEMORY.md"].splitlines() if "[[people/" in line]
    assert listed[:3] == [
        "- [[people/b]] - person b",
        "- [[people/c]] - person c",
        "- [[people/d]] - person d",
    ]
    assert _fresh(root, tmp_path, "moved") == _listings(root)


def test_a_write_renders_the_folder_note_of_its_own_folder_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write with no daemon renders the folder note of the folder it changed, not every
    one (each was read in full and rendered again: the vault's notes for one write); a
    sync that changed nothing renders none."""
    from memvault.core import memory_md

    root, _ = _vault(tmp_path, random.Random(10))
    rendered: list[str] = []
    real = memory_md.render_folder_note

    def render(text, folder, entries, label):  # type: ignore[no-untyped-def]
        rendered.append(folder)
        return real(text, folder, entries, label)

    monkeypatch.setattr(memory_md, "render_folder_note", render)
    with open_vault(root) as v:
        v.add("people", "Aaron", summary="new")
    assert rendered == ["people"]  # (Archive/old/old.md, the other one, not)
    rendered.clear()
    with open_vault(root) as v:
        v.sync(vectors=False)
    assert rendered == []
    assert _fresh(root, tmp_path, "own") == _listings(root)


def test_an_edit_that_leaves_its_line_and_place_renders_no_folder_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write with no daemon that leaves what a folder note shows of its notes (listed
    or not, their line, their place) renders no folder note: a `memvault log` appending
    to the day's note rendered the logs folder note's every line again to find it the
    same (12,439 lines at 100,000 notes). A person's edit of what it shows, made with no
    daemon running, is in the folder note after the next command."""
    from memvault.core import memory_md

    root, _ = _vault(tmp_path, random.Random(10))
    write(root, "people/zed.md", note("Zed", "keeps his line", "first words"))
    with open_vault(root) as v:
        v.sync(vectors=False)
    rendered: list[str] = []
    real = memory_md.render_folder_note

    def render(text, folder, entries, label):  # type: ignore[no-untyped-def]
        rendered.append(folder)
        return real(text, folder, entries, label)

    monkeypatch.setattr(memory_md, "render_folder_note", render)
    write(root, "people/zed.md", note("Zed", "keeps his line", "other words, more of them"))
    with open_vault(root) as v:
        assert v.sync(vectors=False).modified == ("people/zed.md",)
        assert v.engine.catalogue._rows is None  # no row made
    assert rendered == []
    assert _fresh(root, tmp_path, "body") == _listings(root)
    rendered.clear()  # (the fresh index's)
    write(root, "people/zed.md", note("Zed", "a line of his own", "other words, more of them"))
    with open_vault(root) as v:
        v.sync(vectors=False)
    assert rendered == ["people"]
    assert "zed]] - a line of his own" in _listings(root)["people"]
    assert _fresh(root, tmp_path, "line") == _listings(root)
    rendered.clear()
    write(root, "people/zed.md", note("Aaa Zed", "a line of his own", "other words"))
    with open_vault(root) as v:  # its place in the title order
        v.sync(paths=["people/zed.md"], vectors=False)
    assert rendered == ["people"]
    assert _fresh(root, tmp_path, "place") == _listings(root)


def test_a_date_alone_changed_moves_its_note_in_its_folder_note(tmp_path: Path) -> None:
    """An edit with no daemon of a note's ``date`` or ``updated`` alone (its title and
    summary kept) moves its line in the folder note of a folder ordered by it: its keys
    by date and by updated are what a folder note shows of it (``Store.listing_keys``;
    review 55: with them left out, every other test of this file passed)."""
    root = new_vault(tmp_path)
    _sections(root)
    for i in range(5):
        write(root, f"decisions/d{i}.md", note(f"D{i}", f"decided {i}", date=f"2025-01-0{i + 1}"))
        fields = {"date": "2025-01-01", "updated": f"2026-01-0{i + 1}", "status": "active"}
        write(root, f"projects/p{i}.md", note(f"P{i}", f"project {i}", **fields))
    with open_vault(root) as v:
        v.sync(vectors=False)

    def first(folder: str) -> str:
        text = (root / folder / f"{folder}.md").read_text("utf-8")
        return next(line for line in text.splitlines() if line.startswith("- [["))

    assert first("decisions") == "- [[decisions/d4]] - decided 4"
    assert first("projects") == "- [[projects/p4]] - project 4"
    write(root, "decisions/d0.md", note("D0", "decided 0", date="2025-02-01"))
    fields = {"date": "2025-01-01", "updated": "2026-02-01", "status": "active"}
    write(root, "projects/p0.md", note("P0", "project 0", **fields))
    with open_vault(root) as v:
        v.sync(paths=["decisions/d0.md", "projects/p0.md"], vectors=False)
        assert v.engine.catalogue._rows is None  # (no row made)
    assert first("decisions") == "- [[decisions/d0]] - decided 0"
    assert first("projects") == "- [[projects/p0]] - project 0"
    assert _fresh(root, tmp_path, "dates") == _listings(root)


def test_a_save_after_the_rows_were_read_and_let_go_lists_as_a_fresh_index(
    tmp_path: Path,
) -> None:
    """A process that wrote with no row (the lists from the kept keys), then read every
    row, then let them go (``Engine.compact_caches``, before it reads them again: a save
    waiting on its lock may come first) saves a note: the notes changed while rows were
    read are in no log of the writes made with none, so every folder note is due, not
    none (the save's people/people.md was left as it was: test_kept_state's compaction
    beside saves found it)."""
    root, live = _vault(tmp_path, random.Random(10))
    with open_vault(root) as v:
        v.add("decisions", "Settled")  # lean: the writes' log, looked at up to here
        v.engine.catalogue.notes()  # every row read (a search filtered by folder)
        v.engine.linker.forget_kept()  # let go, as compact_caches does first
        v.engine.catalogue.forget()
        rel = next(p for p in live if p.startswith("people/"))
        write(root, rel, note("Aaron First", "saved after", updated="2027-01-01"))
        v.sync(paths=[rel], vectors=False)
        assert v.engine.catalogue._rows is None
    assert "saved after" in (root / "people" / "people.md").read_text("utf-8")
    assert _fresh(root, tmp_path, "let-go") == _listings(root)


# titles and dates whose keys tie or collate oddly: a NUL and U+FFFF inside, accents,
# case, numbers, ICU's punctuation, full width; dates half written, timestamps, a list
ODD_TITLES = [
    '"a\\0b"',
    '"a\\0"',
    '"a\\uffffb"',
    '"a"',
    "Éclair",
    "eclair",
    "ECLAIR",
    "topic-10",
    "topic-2",
]
ODD_TITLES += ["note_a", "note1", "a~b", "ab", "ß", "ss", '"  spaced "', "ｆull", "fact 1"]
ODD_DATES = ["2025-01-05", "2025-01-05T10:00:00Z", '"2025-01-05 "', '"2025-1-5"', "20250105"]
ODD_DATES += ['"2025-01-05\\0x"', '"2025-01-05\\uffff"', "[2025-01-01]", '"2025-01"', '""', "null"]


def _odd(rng: random.Random, title: str) -> str:
    fields = [f"title: {title}"]
    if rng.random() < 0.6:
        fields.append("summary: " + rng.choice(["the same words", "other words", "x"]))
    for name, p in (("date", 0.7), ("updated", 0.5)):
        if rng.random() < p:
            fields.append(f"{name}: {rng.choice(ODD_DATES)}")
    if rng.random() < 0.1:
        fields.append("memory-index: " + rng.choice(["false", "no", "False", "'0'", "true"]))
    if rng.random() < 0.4:
        fields.append("status: " + rng.choice(["active", "Active", "done", "[active, x]"]))
    if rng.random() < 0.15:
        fields.append("type: person")
    return "---\n" + "\n".join(fields) + "\n---\n# T\n\nbody\n"


@pytest.mark.parametrize("seed", [61, 62])
def test_keys_that_tie_or_collate_oddly_and_copies_past_a_page_list_as_a_fresh_index(
    tmp_path: Path, seed: int
) -> None:
    """Titles and dates whose keys tie or collate oddly (a NUL or U+FFFF in a title or a
    date, accents, case, numbers, punctuation, dates in odd forms), notes of ``type:
    person``, and some 60 copies in decisions/ (the same words, title but its number and
    date: more than a page of the walk, 32 notes) each write with no daemon lists as a
    fresh index does, MEMORY.md and the folder notes byte for byte (review of lists52)."""
    rng = random.Random(seed)
    root = new_vault(tmp_path)
    _sections(root)
    live = []
    for i, title in enumerate(ODD_TITLES):  # each beside the others: people/ by title
        write(root, f"people/t{i:02}.md", f"---\ntitle: {title}\n---\nb\n")
    for i, date in enumerate(ODD_DATES):  # decisions/ by date, Archive/old by updated
        write(root, f"decisions/d{i:02}.md", f"---\ntitle: d\ndate: {date}\n---\nb\n")
        write(root, f"Archive/old/u{i:02}.md", f"---\ntitle: u\nupdated: {date}\n---\nb\n")
    for i in range(120):
        if rng.random() < 0.5:  # a copy, the newest: the walk folds them past a page
            rel = f"decisions/c{i:03}.md"
            text = f"---\ntitle: fact {i}\nsummary: the same words\ndate: 2099-01-05\n---\nb\n"
        else:
            folder = rng.choice([*FOLDERS, "decisions/sub"])
            rel = f"{folder}/n{i:03}.md" if folder else f"n{i:03}.md"
            text = _odd(rng, rng.choice(ODD_TITLES))
        write(root, rel, text)
        live.append(rel)
    with open_vault(root) as v:
        v.sync(vectors=False)
    for step in range(8):
        with open_vault(root) as v:
            kind = rng.choice(["add", "edit", "move"])
            if kind == "add":
                folder = rng.choice(["people", "projects", "decisions"])
                v.add(folder, f"fact {step}", summary="the same words")
            elif kind == "edit":
                write(root, rng.choice(live), _odd(rng, rng.choice(ODD_TITLES)))
                v.sync(vectors=False)
            else:
                rel = live.pop(rng.randrange(len(live)))
                folder = rng.choice(FOLDERS)
                new = (f"{folder}/" if folder else "") + f"m{step}.md"
                (root / new).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).rename(root / new)
                live.append(new)
                v.sync(vectors=False)
            assert v.engine.catalogue._rows is None, kind  # no row made
        if step % 4 == 3:
            assert _fresh(root, tmp_path, f"{step}") == _listings(root), f"after step {step}"
    assert "decisions" in _listings(root)  # (overflowed)


def test_folder_notes_another_memvault_wrote_are_written_again_by_a_write_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder notes saved as in line by a former memvault (meta ``folder_notes``),
    one written its way (here: a line otherwise, its size and mtime kept): after the
    upgrade a write with no daemon in another folder renders every folder note again,
    as a daemon's start does and as a fresh index writes them (they were taken as in
    line for good: a write renders only the folder notes of the notes it changed)."""
    import os
    from importlib import metadata

    installed = metadata.version
    root, _ = _vault(tmp_path, random.Random(11))
    monkeypatch.setattr(
        metadata, "version", lambda name: "0.0.1" if name == "memvault" else installed(name)
    )
    with open_vault(root) as v:
        v.add("decisions", "Settled")
    folder_note = root / "people" / "people.md"
    text = folder_note.read_text("utf-8")
    st = folder_note.stat()
    folder_note.write_text(text.replace("- [[", "- [(", 1), "utf-8")  # as 0.0.1 wrote it
    os.utime(folder_note, ns=(st.st_atime_ns, st.st_mtime_ns))
    monkeypatch.undo()
    with open_vault(root) as v:
        v.add("decisions", "Another")
    assert folder_note.read_text("utf-8") == text
    assert _fresh(root, tmp_path, "upgraded") == _listings(root)


def test_projects_of_one_summary_are_each_listed_by_a_write_as_by_a_fresh_index(
    tmp_path: Path,
) -> None:
    """Two projects made the same day from one summary (memvault's project template) are
    two lines, read from the kept keys as from every row: they were one line "(1 more
    note says the same)"; a note of ``type: project`` elsewhere too. An agent's fact
    saved twice still folds."""
    root = new_vault(tmp_path)
    _sections(root)
    day = "2026-03-05"
    for i in (1, 2):
        said = "A two-week sprint"
        write(root, f"projects/sprint-{i}.md", note(f"Sprint {i}", said, date=day, status="active"))
        write(root, f"sprint-{i}.md", note(f"Sprint {i}", said, date=day, type="project"))
        write(root, f"fact-{i}.md", note(f"fact {i}", "Standup at ten", date=day))
    with open_vault(root) as v:
        v.sync(vectors=False)
    with open_vault(root) as v:
        v.add("decisions", "Another", summary="new")
        assert v.engine.catalogue._rows is None  # read from the kept keys
    text = (root / "MEMORY.md").read_text("utf-8")
    for link in ("projects/sprint-1", "projects/sprint-2", "sprint-1", "sprint-2"):
        assert f"- [[{link}]] - A two-week sprint\n" in text, link
    assert "- [[fact-1]] - Standup at ten (1 more note says the same)\n" in text
    assert _fresh(root, tmp_path, "projects") == _listings(root)
