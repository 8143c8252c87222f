"""A save costs the change, not the vault (issue 27): what one save makes the daemon do.

Each test drives the real parts (the daemon's threads, hnswlib, SQLite, the files) and
checks that the work a save causes is the note's, while everything a fresh index would
compute stays exactly the same.
"""

from __future__ import annotations

import re
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from helpers import eventually, new_vault, note, open_vault, write
from memvault.core import memory_md, memory_order, wikilinks
from memvault.core.wikilinks import LinkIndex
from memvault.engine import memory_listing
from memvault.index.embedder import HashEmbedder
from memvault.index.rows import NoteRow
from memvault.index.store import Store
from memvault.service.daemon import Daemon

NOTES = 300  # ~300 vectors: 1 % of them (the save's threshold) is 3


def _vault(tmp_path: Path) -> Path:
    root = new_vault(tmp_path)
    for i in range(NOTES):
        write(root, f"people/p{i:03}.md", note(f"Person {i}", f"person {i}", f"Works on w{i}."))
    with open_vault(root) as v:
        v.sync()
    return root


def _searchable(d: Daemon, word: str, path: str) -> bool:
    return any(h.path == path for h in d.vault.search(word, k=3))


def test_a_saved_notes_vectors_do_not_rewrite_the_vector_index_and_are_not_lost(
    tmp_path: Path,
) -> None:
    """The daemon wrote vectors.bin (the whole hnswlib index) after every save's vectors:
    at 100,000 notes ~200 MB written and hashed for one note. It is written once 1 % of
    the vectors changed (or at stop); what is not written yet is in the embedding cache,
    and an index opened from the files as a crash leaves them has every vector."""
    root = _vault(tmp_path)
    vectors = root / ".memvault" / "vectors.bin"
    daemon = Daemon.open(root, embedder=HashEmbedder(), port=0)
    daemon.start()
    try:
        lane = daemon.vectors
        eventually(lambda: daemon.model_state == "ready", what="the model")
        saved = vectors.read_bytes()
        write(root, "people/new.md", note("New", "a new person", "Quokka keeper."))
        eventually(lambda: _searchable(daemon, "quokka keeper", "people/new.md"), what="search")
        eventually(lambda: not lane.busy and not lane.info()["pending"], what="its vectors")
        threading.Event().wait(7.0)  # past the idle save (5 s after the last sync)
        assert vectors.read_bytes() == saved, "one note's vectors rewrote the vector index"
        labels = daemon.vault.engine.store.labels()
        assert daemon.vault.engine.embedding.vectors.labels() == labels  # in memory: all
        # the files as a kill -9 would leave them: the index opened from them lacks nothing
        crashed = tmp_path / "crashed"
        shutil.copytree(root, crashed, ignore=shutil.ignore_patterns("daemon.json"))
        with open_vault(crashed) as other:  # (its vectors.bin is the one saved before)
            assert other.engine.embedding.vectors.labels() == labels
            assert other.engine.store.labels_of(["people/new.md"]) <= labels
        # enough changes (1 % of the vectors) and it is written
        for i in range(3):
            write(root, f"people/more{i}.md", note(f"More {i}", "another", f"Numbat {i}."))
        eventually(lambda: vectors.read_bytes() != saved, 30, "the save once 1 % changed")
    finally:
        daemon.shutdown()
    with open_vault(root) as v:  # and at stop: the file holds every vector
        assert v.engine.embedding.vectors.labels() == v.engine.store.labels()


def _row(path: str, kind: str, **kw: Any) -> NoteRow:
    return NoteRow(path=path, size=10, mtime_ns=1, sha256="ab", kind=kind, **kw)


def test_the_problems_a_sync_tells_are_read_without_a_scan_of_every_note(
    tmp_path: Path,
) -> None:
    """Every sync that changed something reads the rows status lists as problems
    (``Store.problem_rows``); it scanned every note's row: 28 ms at 20,000 notes, ~140 ms
    at 100,000, for each save. Read through a partial index, its work is the problems'."""
    store = Store(tmp_path / "index.db", tmp_path / "cache.db")
    try:
        with store.transaction() as conn:
            for i in range(5000):
                store.put_note(conn, _row(f"people/p{i:05}.md", "note"))
            store.put_note(conn, _row("a/bad.md", "skipped", skip_reason="why"))
            store.put_note(conn, _row("a/odd.md", "note", warnings=("odd",)))
        steps = [0]

        def count() -> int:
            steps[0] += 1
            return 0

        store._db.set_progress_handler(count, 100)  # one call per 100 VM instructions
        rows = store.problem_rows()
        store._db.set_progress_handler(None, 0)
        assert rows == [("a/bad.md", "skipped", "why", ()), ("a/odd.md", "note", None, ("odd",))]
        assert steps[0] < 10, f"{steps[0] * 100} instructions for 2 rows of 5,002"
    finally:
        store.close()


class _Counted(dict[str, Any]):
    """The catalogue's rows, counting each look at all of them."""

    looks = 0

    def _look(self) -> None:
        type(self).looks += 1

    def items(self) -> Any:
        self._look()
        return super().items()

    def values(self) -> Any:
        self._look()
        return super().values()

    def keys(self) -> Any:
        self._look()
        return super().keys()

    def __iter__(self) -> Any:
        self._look()
        return super().__iter__()


def test_memory_mds_update_after_a_save_looks_at_that_note_not_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MEMORY.md's update found the changed rows by looking at every row of the catalogue
    (an identity pass: ~10 ms at 100,000 notes) and counted a filtered section (Active
    Projects: ``status: active``) by matching every note of its folder; the catalogue's
    log says which rows changed, and a filtered section keeps its own sorted notes."""
    root = new_vault(tmp_path)
    for i in range(150):
        status = "active" if i % 10 == 0 else "done"
        write(root, f"projects/p{i:03}.md", note(f"P{i}", f"project {i}", status=status))
    with open_vault(root) as v:
        v.sync()
        v.warm_up()
        catalogue = v.engine.catalogue
        catalogue._rows = _Counted(catalogue.notes())
        matched = [0]
        whole = memory_order.matches

        def counted(entry: Any, wanted: Any) -> bool:
            matched[0] += 1
            return whole(entry, wanted)

        monkeypatch.setattr(memory_md, "matches", counted)
        monkeypatch.setattr(memory_listing, "matches", counted, raising=False)
        _Counted.looks = 0
        write(
            root, "projects/p007.md", note("P7", "now active", status="active", date="2031-01-01")
        )
        v.sync(paths=["projects/p007.md"], vectors=False)
        assert "- [[projects/p007]] - now active" in (root / "MEMORY.md").read_text("utf-8")
        assert _Counted.looks == 0, "a look at every row of the catalogue"
        assert matched[0] <= 4, f"the filter matched against {matched[0]} notes for one save"


def _listings(root: Path) -> dict[str, str]:
    """MEMORY.md and the folder notes memvault keeps."""
    out = {"MEMORY.md": (root / "MEMORY.md").read_text("utf-8")}
    for folder in ("people", "projects", "decisions"):
        path = root / folder / f"{folder}.md"
        if path.exists():
            out[path.name] = path.read_text("utf-8")
    return out


def test_saves_one_by_one_leave_memory_md_as_a_fresh_index_writes_it(tmp_path: Path) -> None:
    """The lists follow each save (the catalogue's log, a filtered section's own notes,
    the counts of the folders no section lists): after any run of creates, edits,
    status and keep-out changes, moves and deletes, MEMORY.md and the folder notes are
    byte for byte what a fresh index of the same files writes."""
    import random

    rng = random.Random(27)
    root = new_vault(tmp_path)
    live: list[str] = []
    folders = ["people", "projects", "decisions", "Plugins", "Archive/old", "Bases"]

    def text(i: int) -> str:
        fields = {"date": f"2025-{1 + rng.randrange(12):02}-{1 + rng.randrange(28):02}"}
        if rng.random() < 0.5:
            fields["status"] = rng.choice(["active", "done", "Active"])
        if rng.random() < 0.15:
            fields["memory-index"] = "false"
        if rng.random() < 0.5:
            fields["updated"] = f"2026-{1 + rng.randrange(12):02}-01"
        return note(f"N{i}", f"note {i} v{rng.randrange(1000)}", **fields)

    for i in range(60):
        rel = f"{rng.choice(folders)}/n{i:03}.md"
        write(root, rel, text(i))
        live.append(rel)
    with open_vault(root) as v:
        v.sync(vectors=False)
        v.warm_up()
        for step in range(60):
            kind = rng.choice(["create", "edit", "edit", "delete", "move"])
            if kind == "create" or not live:
                rel = f"{rng.choice(folders)}/m{step:03}.md"
                write(root, rel, text(100 + step))
                live.append(rel)
                paths = [rel]
            elif kind == "edit":
                rel = rng.choice(live)
                write(root, rel, text(200 + step))
                paths = [rel]
            elif kind == "delete":
                rel = live.pop(rng.randrange(len(live)))
                (root / rel).unlink()
                paths = [rel]
            else:
                rel = live.pop(rng.randrange(len(live)))
                new = f"{rng.choice(folders)}/r{step:03}.md"
                (root / rel).rename(root / new)
                live.append(new)
                paths = [rel, new]
            v.sync(paths=paths, vectors=False)
            if step % 15 == 14:
                copy = tmp_path / f"fresh-{step}"
                shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
                with open_vault(copy) as fresh:
                    fresh.sync(vectors=False)
                assert _listings(copy) == _listings(root), f"after step {step}"
    assert "memvault:begin projects" in _listings(root)["MEMORY.md"]
    assert re.search(r"^- \d+ notes? in Plugins/$", _listings(root)["MEMORY.md"], re.M)


def test_the_vector_lane_says_when_it_is_idle_again(tmp_path: Path) -> None:
    """``/events`` pushes a status when the daemon nudges it, and only looks again every
    second while it is busy: the lane going idle was not a nudge, so a client (and the
    save bench's time back to idle) heard of it up to a second late."""
    from memvault.service.vector_lane import VectorLane

    root = new_vault(tmp_path)
    write(root, "people/ana.md", note("Ana", "a person"))
    told: list[tuple[bool, int]] = []
    with open_vault(root) as v:
        v.sync(vectors=False)
        lane: VectorLane | None = None

        def idle() -> None:
            assert lane is not None
            told.append((lane.busy, v.pending_vectors()[0]))

        lane = VectorLane(v, on_idle=idle)
        lane.start()
        try:
            lane.wake()
            eventually(lambda: bool(told), what="the lane's word that it is idle")
            assert told[0] == (False, 0)  # said once it is not busy and nothing waits
        finally:
            assert lane.stop(10)


def test_a_new_note_joins_the_link_index_without_a_copy_of_every_path() -> None:
    """``LinkIndex.with_files`` copied the index's two maps of every file (8 ms of a save
    at 100,000 notes) to add one; the additions sit in an overlay, folded in once it holds
    OVERLAY_FOLD files: the answers are those of an index built afresh, at every step."""
    fold = getattr(wikilinks, "OVERLAY_FOLD", 1024)  # (main has none: the test runs there)
    files = [f"{'ab'[i % 2]}/n{i:05}.md" for i in range(3000)] + ["a/Same.md", "pic.png"]
    base = LinkIndex(files, {"a/n00000.md": ("Zero",)})
    grown, added = base, []
    names = ["n00001", "same", "a/same", "b/same", "Zero", "n00002.md", "pic.png", "nope"]
    for i in range(fold + 30):
        new = [f"{'abc'[i % 3]}/same.md"] if i % 97 == 0 else [f"c/m{i:05}.md"]
        grown = grown.with_files(new)
        added += new
        if i in (0, 1, 96, 97, fold - 1, fold, fold + 29):
            fresh = LinkIndex(set(files + added), {"a/n00000.md": ("Zero",)})
            for target in [*names, f"m{i:05}", f"c/m{max(0, i - 1):05}"]:
                for source in ("a/s.md", "c/s.md", "s.md"):
                    assert grown.resolve(target, source) == fresh.resolve(target, source)
            assert grown.name_matches("same.md") == fresh.name_matches("same.md")
            assert all(p in grown for p in added[-3:]) and "c/none.md" not in grown
    assert "c/m00000.md" not in base  # the index it grew from is unchanged
    one = base.with_files(["c/one.md"])
    assert one._by_path is base._by_path, "the vault's paths copied for one new note"


def test_searches_count_the_chunks_once_until_the_index_changes(tmp_path: Path) -> None:
    """Every search weighs its terms by the number of chunks: a count of every row (a
    fifth of a search at 100,000 notes, each look of a save's poll until it is
    searchable). Kept until this store writes or another connection commits."""
    import sqlite3

    from memvault.index.schema import register

    root = new_vault(tmp_path)
    for i in range(40):
        write(root, f"people/p{i:02}.md", note(f"P{i}", f"person {i}", f"Works on w{i}."))
    with open_vault(root) as v:
        v.sync(vectors=False)
        store = v.engine.store
        counted = store.chunk_count()
        ran: list[str] = []
        store._db.set_trace_callback(ran.append)  # the statements SQLite runs
        assert store.chunk_count() == counted
        store._db.set_trace_callback(None)
        assert not [q for q in ran if "FROM chunks" in q], ran  # (one OP_Count: every page)
        write(root, "people/new.md", note("New", "a new one", "More words."))
        v.sync(paths=["people/new.md"], vectors=False)  # this store's own write
        assert store.chunk_count() == counted + 1
        other = sqlite3.connect(store.index_path)  # another process's commit
        register(other)  # the keyword table's triggers call it (schema 8)
        with other:
            other.execute("DELETE FROM chunks WHERE path = 'people/new.md'")
        other.close()
        assert store.chunk_count() == counted


def test_a_sync_that_finds_nothing_changed_reads_no_catalogue_row(tmp_path: Path) -> None:
    """A sync in a new process (a CLI command without a daemon) that found nothing
    changed read every note's row into the catalogue, for the links a change could have
    led elsewhere: ~30 % of that sync's time at 10,000 notes (bench/RESULTS.md)."""
    root = _vault(tmp_path)
    with open_vault(root) as v:
        report = v.sync()
        assert not report.changed
        assert v.engine.catalogue._rows is None, "every note's row read for no change"
