"""What a daemon keeps in memory between syncs (issue 27): compact, and read again in
one go after bulk work.

The catalogue's rows are kept without their outline (headings, warnings) and with the
strings many notes share as one object; ``Engine.compact_caches`` reads the rows, the
link index and MEMORY.md's lists again and answers exactly as before (and as a fresh
index); the vector index's label sets are bitmaps. Real vaults, real SQLite.
"""

from __future__ import annotations

import dataclasses
import random
import shutil
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest

from helpers import eventually, make_vault, new_vault, note, open_vault, write
from memvault.core.memory_order import SectionRule
from memvault.core.wikilinks import LinkIndex, key
from memvault.engine.catalogue import kept_row
from memvault.engine.memory_listing import MemoryListing
from memvault.index.embedder import HashEmbedder
from memvault.index.rows import NoteRow
from memvault.index.vectors import _DENSE, _Labels
from memvault.service.daemon import Daemon

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
]


def _realistic(i: int) -> str:
    """A note as people write them: frontmatter with a date and tags, a few sections."""
    rnd = random.Random(i)
    title = " ".join(rnd.choice(WORDS).title() for _ in range(3)) + f" {i}"
    summary = " ".join(rnd.choice(WORDS) for _ in range(9))
    tags = ", ".join(rnd.sample(WORDS[:5], 2))
    body = "\n\n".join(
        f"## {rnd.choice(WORDS).title()} {rnd.choice(WORDS)} {k}\n\n"
        + " ".join(rnd.choice(WORDS) for _ in range(40))
        for k in range(5)
    )
    return note(title, summary, body, date=f"2025-0{1 + i % 9}-1{i % 10}", tags=f"[{tags}]")


def _vault_of(tmp_path: Path, n: int) -> Path:
    root = new_vault(tmp_path)
    for i in range(n):
        folder = ("projects", "people", "decisions")[i % 3]
        write(root, f"{folder}/n{i:04d}.md", _realistic(i))
    return root


def test_the_catalogue_keeps_rows_without_their_outline_and_shares_their_strings(
    tmp_path: Path,
) -> None:
    root = _vault_of(tmp_path, 6)
    with open_vault(root) as v:
        v.sync(vectors=False)
        rows = v.engine.catalogue.notes()
        a, b = rows["projects/n0000.md"], rows["projects/n0003.md"]
        stored = v.engine.store.note(a.path)
        assert stored is not None and len(stored.headings) == 6  # the store keeps them
        assert a.headings == () and a.warnings == ()
        assert a.kind is b.kind and a.category is b.category
        assert a.frontmatter["title"] is a.title and a.frontmatter["summary"] is a.summary
        assert a.frontmatter["date"] is a.date
        assert next(iter(a.frontmatter)) is next(iter(b.frontmatter))  # the key "title"
        by_tag: dict[str, list[str]] = {}
        for row in rows.values():
            for t in row.tags:
                by_tag.setdefault(t, []).append(t)
        shared = [same for same in by_tag.values() if len(same) > 1]
        assert shared, "the generator gives two notes a tag in common"
        assert all(t is same[0] for same in shared for t in same)
        # everything else as the store has it
        kept = {f: getattr(a, f) for f in NoteRow.__slots__ if f not in ("headings", "warnings")}
        assert kept == {
            f: getattr(stored, f) for f in NoteRow.__slots__ if f not in ("headings", "warnings")
        }
        # a row re-read after a change is kept the same way
        write(root, "projects/n0000.md", _realistic(0) + "\n## More\n\nmore words\n")
        v.sync(paths=["projects/n0000.md"], vectors=False)
        again = v.engine.catalogue.notes()["projects/n0000.md"]
        assert again is not a and again.headings == () and again.kind is b.kind


def test_the_catalogue_keeps_about_a_kilobyte_a_note(tmp_path: Path) -> None:
    """Bytes allocated for the catalogue's rows (tracemalloc), per note: ~2,300 as read
    from the store (outline, a copy of every string per row), under 1,200 kept. The bound
    is the issue's arithmetic: 100,000 notes must fit a 600 MB daemon with hnswlib's
    ~250 MB."""
    n = 300
    root = _vault_of(tmp_path, n)
    with open_vault(root) as v:
        v.sync(vectors=False)
        cat = v.engine.catalogue
        cat.notes()  # held, as a daemon holds them (a sync with no daemon reads none)
        cat._rows = None  # read afresh, measured
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            rows = cat.notes()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert len(rows) == n
        assert kept / n < 1200, f"{kept / n:.0f} bytes a note"


def test_compacting_the_caches_keeps_every_answer_and_memory_md(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    for i in range(30):
        write(root, f"decisions/p{i:02d}.md", _realistic(i))  # past the section's 8
    with open_vault(root) as v:
        v.sync(vectors=False)
        eng = v.engine
        rows_before = dict(eng.catalogue.notes())
        links_before = eng.catalogue.link_index()
        memory_before = (root / "MEMORY.md").read_text(encoding="utf-8")
        folder_note = (root / "decisions" / "decisions.md").read_text(encoding="utf-8")
        eng.compact_caches()
        rows = eng.catalogue.notes()
        assert rows == rows_before  # equal rows...
        assert all(rows[p] is not rows_before[p] for p in rows)  # ...read again
        links = eng.catalogue.link_index()
        assert links is not links_before
        for target in ("p03", "decisions/p04", "Sarah Chen", "sarah-chen", "nowhere"):
            assert links.resolve(target, "MEMORY.md") == links_before.resolve(target, "MEMORY.md")
        # nothing to write: the lists were in line, and are
        report = v.sync(vectors=False)
        assert not report.changed
        assert (root / "MEMORY.md").read_text(encoding="utf-8") == memory_before
        assert (root / "decisions" / "decisions.md").read_text(encoding="utf-8") == folder_note
        # and a save after it lists what a fresh index of the same files lists
        write(root, "decisions/p99.md", _realistic(99))
        v.sync(paths=["decisions/p99.md"], vectors=False)
        after_save = (root / "MEMORY.md").read_text(encoding="utf-8")
    fresh = tmp_path / "fresh"  # the same files, config.toml with them, indexed afresh
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns("*.db*", "vectors.bin", "lock"))
    with open_vault(fresh) as v:
        v.sync(vectors=False)
    assert (fresh / "MEMORY.md").read_text(encoding="utf-8") == after_save


def test_a_row_committed_while_every_row_is_read_again_is_read_after(tmp_path: Path) -> None:
    """After ``forget`` the rows are read again page by page; a save's commit may land
    after its row's page was read. Its second mark (``Catalogue.changing``, made once the
    transaction is over) has the row read again: the catalogue never keeps the old one."""
    root = _vault_of(tmp_path, 4)
    path = "projects/n0000.md"
    with open_vault(root) as v:
        v.sync(vectors=False)
        cat, store = v.engine.catalogue, v.engine.store
        real = cat._read_rows

        def read_then_the_commit() -> dict[str, NoteRow]:
            rows = real()  # every row read by now, the old one among them
            row = store.note(path)
            assert row is not None
            with store.transaction() as conn:  # the save's commit, late
                store.put_note(conn, dataclasses.replace(row, title="Committed Meanwhile"))
            return rows

        saving = cat.changing([path])
        saving.__enter__()  # a save marks its row, its transaction still to come
        cat.forget()  # after bulk work: every row read again by the next reader
        cat._read_rows = read_then_the_commit  # type: ignore[method-assign]
        try:
            assert cat.notes()[path].title != "Committed Meanwhile"  # read before the commit
        finally:
            cat._read_rows = real  # type: ignore[method-assign]
        saving.__exit__(None, None, None)  # the save's transaction is over: marked again
        assert cat.notes()[path].title == "Committed Meanwhile"


def test_a_row_marked_changed_and_read_before_its_commit_is_read_again_after(
    tmp_path: Path,
) -> None:
    """The indexer marks a row changed before its commit; a reader in between re-reads
    the old row and takes the mark: the mark made after the commit has it read again
    (review of stop 32: the catalogue kept the old title until the note changed again)."""
    root = _vault_of(tmp_path, 4)
    path = "projects/n0000.md"
    with open_vault(root) as v:
        v.sync(vectors=False)
        cat, store = v.engine.catalogue, v.engine.store
        cat.notes()
        with cat.changing([path]):
            assert cat.notes()[path].title != "Committed Late"  # a search, meanwhile
            row = store.note(path)
            assert row is not None
            with store.transaction() as conn:
                store.put_note(conn, dataclasses.replace(row, title="Committed Late"))
        assert cat.notes()[path].title == "Committed Late"


def test_saves_while_the_kept_state_is_let_go_and_read_again_are_all_kept(
    tmp_path: Path,
) -> None:
    """The daemon's compaction after bulk work runs beside the saves that come in: every
    save's row, MEMORY.md and the folder notes end as a fresh index of the same files
    has them. A real thread compacting over and over while notes are saved."""
    root = _vault_of(tmp_path, 120)
    with open_vault(root) as v:
        v.sync(vectors=False)
        stop, errors = threading.Event(), []

        def compacting() -> None:
            try:
                while not stop.is_set():
                    v.engine.compact_caches()
            except Exception as exc:  # a failure here must fail the test, not vanish
                errors.append(exc)

        thread = threading.Thread(target=compacting)
        thread.start()
        try:
            for i in range(0, 60, 2):
                rel = f"{('projects', 'people', 'decisions')[i % 3]}/n{i:04d}.md"
                write(root, rel, note(f"Saved {i}", "saved while compacting", date="2026-01-02"))
                v.sync(paths=[rel], vectors=False)
        finally:
            stop.set()
            thread.join()
        assert not errors
        v.sync(vectors=False)
        rows = v.engine.catalogue.notes()
        stored = {r.path: r.title for r in v.engine.store.notes("note")}
        assert {p: r.title for p, r in rows.items()} == stored
        assert all(
            stored[p].startswith("Saved ")
            for p in stored
            if int(p[-7:-3]) % 2 == 0 and int(p[-7:-3]) < 60
        )
        kept = {p: (root / p).read_text(encoding="utf-8") for p in _index_files(root)}
    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns("*.db*", "vectors.bin", "lock"))
    with open_vault(fresh) as v:
        v.sync(vectors=False)
    assert {p: (fresh / p).read_text(encoding="utf-8") for p in _index_files(fresh)} == kept


def _index_files(root: Path) -> list[str]:
    """MEMORY.md and the folder notes memvault keeps."""
    out = ["MEMORY.md"]
    for folder in ("projects", "people", "decisions", "logs"):
        if (root / folder / f"{folder}.md").exists():
            out.append(f"{folder}/{folder}.md")
    return out


def _row(path: str, title: str, date: str = "2025-01-01") -> NoteRow:
    fm = {"title": title, "date": date}
    return NoteRow(path=path, size=1, mtime_ns=1, sha256="x", kind="note", title=title,
                   date=date, frontmatter=fm)  # fmt: skip


def test_the_memory_listing_rebuilt_names_the_folders_whose_notes_differ() -> None:
    rules = [
        SectionRule("projects", "Projects", "projects", order="date"),
        SectionRule("people", "People", "people", order="title"),
    ]
    listing = MemoryListing(rules)
    rows = {p: _row(p, p[-6:-3]) for p in ("projects/a01.md", "projects/a02.md", "people/b01.md")}
    listing.refresh(rows)
    lines = {r.name: list(listing.folder_lines(r)) for r in rules}
    same = {p: _row(p, p[-6:-3]) for p in rows}  # equal rows, other objects
    assert listing.rebuild(same) == frozenset()
    assert {r.name: list(listing.folder_lines(r)) for r in rules} == lines
    same["people/b01.md"] = _row("people/b01.md", "Someone Else")
    assert listing.rebuild(same) == frozenset({"people"})
    del same["projects/a02.md"]
    assert listing.rebuild(same) == frozenset({"projects"})
    assert MemoryListing(rules).rebuild(same) == frozenset({"projects", "people"})


def test_the_label_sets_answer_as_sets_do() -> None:
    rnd = random.Random(27)
    labels, mirror = _Labels(), set[int]()
    pool = [*range(0, 5000), *(_DENSE + k for k in range(50)), _DENSE - 1]
    for _ in range(20000):
        label = rnd.choice(pool)
        if rnd.random() < 0.6:
            labels.add(label)
            mirror.add(label)
        else:
            labels.discard(label)
            mirror.discard(label)
    assert len(labels) == len(mirror) and bool(labels) == bool(mirror)
    assert list(labels) == sorted(mirror)
    assert all((x in labels) == (x in mirror) for x in pool)
    assert -1 not in labels and "3" not in labels
    big = _Labels(range(500_000))
    assert len(big) == 500_000 and sys.getsizeof(big._bits) < 200_000  # ~70 bytes each as a set


@pytest.mark.parametrize("n", [2500])
def test_rows_are_read_a_page_at_a_time_in_path_order(tmp_path: Path, n: int) -> None:
    root = new_vault(tmp_path)
    for i in range(n):
        write(root, f"n{i:05d}.md", f"# N{i}\n")
    with open_vault(root) as v:
        v.sync(vectors=False)
        store = v.engine.store
        pages, after = [], None
        while True:
            page = store.notes("note", after=after, limit=1000, outline=False)
            pages.append(len(page))
            if len(page) < 1000:
                break
            after = page[-1].path
        assert pages == [1000, 1000, 500]
        assert [r.path for r in store.notes("note")] == sorted(f"n{i:05d}.md" for i in range(n))
        assert set(v.engine.catalogue.notes()) == {f"n{i:05d}.md" for i in range(n)}
        assert kept_row(store.notes("note", limit=1)[0]).headings == ()


def test_the_daemon_reads_its_kept_state_again_after_bulk_work(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The start-up reconcile is bulk work: once the vault is quiet (the idle save) the
    daemon has the catalogue, the link index and MEMORY.md's lists read again in one go
    (then gives the freed memory back), with the same MEMORY.md."""
    root = _vault_of(tmp_path, 12)
    caplog.set_level("INFO", logger="memvault")
    daemon = Daemon.open(
        root, embedder=HashEmbedder(), port=0, overrides={"daemon": {"save_seconds": 1}}
    )
    daemon.start()
    try:
        eventually(
            lambda: any("kept state read again" in r.getMessage() for r in caplog.records),
            what="the kept state read again after the start-up reconcile",
        )
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        rows = daemon.vault.engine.catalogue.notes()
        assert len(rows) == 12 and all(r.headings == () for r in rows.values())
    finally:
        daemon.shutdown()
    with open_vault(root) as v:  # nothing for a sync to change
        assert not v.sync(vectors=False).changed
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == memory


def test_the_links_by_page_are_the_links_in_their_order(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    for i in range(60):
        body = f"[[n{(i + 1) % 60:02d}]] and [[n{(i + 7) % 60:02d}]]\n[[nowhere-{i}]]"
        write(root, f"people/n{i:02d}.md", note(f"N{i}", body=body))
    with open_vault(root) as v:
        v.sync(vectors=False)
        store = v.engine.store
        pages = list(store.links_by_page(sources=7))
        sources = {r.source for r in store.links()}  # the 60, MEMORY.md, a folder note
        assert len(sources) > 60 and len(pages) == -(-len(sources) // 7)
        assert [r for page in pages for r in page] == store.links()
        problems = v.engine.link_problems()
        assert sorted(p.target for p in problems) == sorted(f"nowhere-{i}" for i in range(60))


def test_a_path_that_is_its_own_link_key_is_not_copied() -> None:
    lower, mixed = "people/ana-lopez.md", "People/Ana López.md"
    assert key(lower) is lower
    assert key(mixed) == "people/ana lópez.md" and key(mixed) is not mixed
    index = LinkIndex([lower, mixed])
    assert next(k for k in index._by_path if k == lower) is lower
