"""A write in a process that is no daemon (the CLI, the Python API, the MCP server
without one) costs its own change, not the vault's vector index (issue 27: `memvault
log` on 10,000 notes opened the whole hnswlib graph to take one chunk out of it, ~1 s,
and its close wrote vectors.bin again; the next `memvault search` opened it again to put
the new chunk in). The graph saved is left as it is: the chunks embedded since are in
cache.db, the cold reader searches them exactly, and the next full open (a daemon's)
puts them in and takes the deleted ones out."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from helpers import new_vault, note, open_vault, write
from memvault.engine import held_vectors


def _vault(tmp_path: Path) -> Path:
    root = new_vault(tmp_path)
    for i in range(40):
        folder = ("projects", "people", "decisions", "topics")[i % 4]
        body = f"## Plan {i}\n\nThe harbour budget {i} is reviewed with crew {i % 7}.\n"
        write(root, f"{folder}/n{i:02d}.md", note(f"Harbour {i}", f"plan {i}", body))
    with open_vault(root) as v:
        v.sync()
    return root


def _answers(v) -> list[list[tuple[str, int, float, bool]]]:  # type: ignore[no-untyped-def]
    queries = ("kelp harvest at the pier", "seaweed drying racks", "harbour budget 3")
    return [[(h.path, h.line_start, h.score, h.pending) for h in v.search(q, k=5)] for q in queries]


def _alike(
    got: list[list[tuple[str, int, float, bool]]], want: list[list[tuple[str, int, float, bool]]]
) -> None:
    """The same hits in the same order, each score the same to float32's precision: the
    full graph (hnswlib's SIMD distance) and the cold reader (numpy's) round the last bit
    apart, so rounding both to 5 places split one score at a boundary (0.41532 / 0.41533,
    when the logged minute made that vector)."""
    assert [[h[:2] + h[3:] for h in hits] for hits in got] == [
        [h[:2] + h[3:] for h in hits] for hits in want
    ]
    for hits, wanted in zip(got, want, strict=True):
        for hit, w in zip(hits, wanted, strict=True):
            assert abs(hit[2] - w[2]) <= 1e-5, (hit, w)


def test_writes_and_the_search_after_them_leave_the_saved_graph_as_it_is(
    tmp_path: Path,
) -> None:
    root = _vault(tmp_path)
    graph = root / ".memvault" / "vectors.bin"
    saved = graph.read_bytes()
    with open_vault(root) as v:
        v.log("kelp harvest at the pier")
        v.log("seaweed drying racks")  # today's log changed: its old chunk deleted
        v.add("projects", "Kelp farm", summary="seaweed", body="Kelp harvest at the pier.\n")
        assert v.engine.embedding.held.opened is None  # no whole graph opened
    assert graph.read_bytes() == saved  # nor written again
    with open_vault(root, mode="query") as cold:  # as `memvault search` opens it
        answers = _answers(cold)  # the chunks just written embedded by its catch-up
        assert cold.engine.embedding.held.opened is None
    assert graph.read_bytes() == saved
    assert answers[0][0][:2] == ("projects/kelp-farm.md", 10)
    assert answers[1][0][0].startswith("logs/")
    assert not any(hit[3] for hits in answers for hit in hits)  # none pending: by meaning
    with open_vault(root) as full:  # as a daemon holds it: the chunks put in, and saved
        assert full.engine.embedding.vectors is not None
        _alike(_answers(full), answers)
    assert graph.read_bytes() != saved
    with open_vault(root, mode="query") as cold:  # the graph saved whole, cold: alike
        _alike(_answers(cold), answers)
        assert cold.engine.embedding.held.opened is None


def test_past_the_chunks_left_out_the_full_index_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process embedding more than ``LEFT_OUT_MOST`` chunks (a `memvault sync` after a
    migration) opens the graph and puts them in, as before; its close saves it."""
    root = _vault(tmp_path)
    graph = root / ".memvault" / "vectors.bin"
    saved = graph.read_bytes()
    monkeypatch.setattr(held_vectors, "LEFT_OUT_MOST", 1)
    for i in range(6):
        write(root, f"topics/kelp{i}.md", note(f"Kelp {i}", "kelp", f"Kelp rope {i}.\n"))
    with open_vault(root) as v:
        v.sync()
        assert v.engine.embedding.held.opened is not None
        assert v.search("kelp rope 4", k=1)[0].path == "topics/kelp4.md"
    assert graph.read_bytes() != saved


def _listings(root: Path) -> dict[str, str]:
    out = {"MEMORY.md": (root / "MEMORY.md").read_text("utf-8")}
    for folder in ("people", "projects", "decisions", "logs"):
        path = root / folder / f"{folder}.md"
        if path.exists():
            out[path.name] = path.read_text("utf-8")
    return out


def test_writes_with_no_daemon_make_no_row_and_leave_memory_md_as_a_fresh_index(
    tmp_path: Path,
) -> None:
    """Each write in a process of its own (`memvault add`, `log`, a save synced by path or
    found by a whole sync) reads MEMORY.md's lists from the keys kept with the rows,
    making no note row (every row was read, 2.4 s at 100,000 notes, bench/RESULTS.md);
    MEMORY.md and the folder notes are byte for byte what a fresh index of the same
    files writes, its lists sorted from every row as a daemon sorts them
    (tests/test_oneshot_lists.py: sections of every kind)."""
    rng = random.Random(51)
    root = new_vault(tmp_path)
    folders = ["people", "projects", "decisions", "Plugins", "Archive/old"]

    def text(i: int) -> str:
        fields = {"date": f"2025-{1 + rng.randrange(12):02}-{1 + rng.randrange(28):02}"}
        if rng.random() < 0.15:
            fields["memory-index"] = "false"
        if rng.random() < 0.5:
            fields["updated"] = f"2026-{1 + rng.randrange(12):02}-01"
        return note(f"N{i}", f"note {i} v{rng.randrange(1000)}", **fields)

    live = []
    for i in range(40):
        rel = f"{rng.choice(folders)}/n{i:03}.md"
        write(root, rel, text(i))
        live.append(rel)
    with open_vault(root) as v:
        v.sync(vectors=False)
    for step in range(24):
        with open_vault(root) as v:  # a process of its own, as the CLI's
            kind = rng.choice(["add", "update", "log", "save", "found", "delete"])
            if kind == "add":
                v.add(rng.choice(["people", "projects"]), f"Person {step}", summary="new")
            elif kind == "update":  # found by its title (Writer._named), not by its file
                v.add("people", f"N{step}", summary=f"again {step}", update=True)
            elif kind == "log":
                v.log(f"entry {step}")
            elif kind == "save":
                rel = rng.choice(live)
                write(root, rel, text(100 + step))
                v.sync(paths=[rel], vectors=False)
            elif kind == "found":  # saved while no daemon ran, found by a whole sync
                rel = rng.choice(live)
                write(root, rel, text(200 + step))
                v.sync(vectors=False)
            else:
                rel = live.pop(rng.randrange(len(live)))
                (root / rel).unlink()
                v.sync(paths=[rel], vectors=False)
            assert v.engine.catalogue._rows is None, kind  # no row made
        if step % 8 == 7:
            copy = tmp_path / f"fresh-{step}"
            shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
            with open_vault(copy) as fresh:
                fresh.engine.catalogue.notes()  # every row read: sorted as a daemon does
                fresh.sync(vectors=False)
            assert _listings(copy) == _listings(root), f"after step {step}"


def test_a_process_kept_open_searches_what_it_wrote_since_its_first_search(
    tmp_path: Path,
) -> None:
    """The MCP server without a daemon keeps the vault open between calls: a search read
    the saved graph cold, then a write and its catch-up left the graph as saved. The
    next search reads it cold again with the db's labels of now: the chunk embedded
    since found by meaning, the one the write deleted no hit."""
    root = _vault(tmp_path)
    with open_vault(root) as v:
        v.log("kelp harvest at the pier")
        v.sync()  # embedded: out of the graph (saved before)
        assert v.search("harbour budget 3", k=3)  # the graph read cold
        old = {h.label for h in v.search("kelp harvest at the pier", k=5)}
        v.log("seaweed drying racks")  # today's log cut again: its old chunk deleted
        v.sync()
        hits = v.search("seaweed drying racks", k=5)
        assert hits[0].path.startswith("logs/") and not hits[0].pending
        embedding = v.engine.embedding
        nearest = embedding.searching.query(embedding.embedder.embed([hits[0].text])[0], 5)
        assert nearest[0][0] == hits[0].label  # the vector side has it, by meaning
        gone = old - set(v.engine.store.chunk_rows(sorted(old)))
        qv = embedding.embedder.embed(["kelp harvest at the pier"])[0]
        assert gone and not gone & {label for label, _ in embedding.searching.query(qv, 40)}
        assert embedding.held.opened is None


def test_lists_sorted_lean_then_given_every_row_are_sorted_afresh(tmp_path: Path) -> None:
    """A process that wrote (the lists sorted from the lean columns), then read every row
    (a search filtered by folder), then deleted a note: the lists follow the rows from
    scratch, not as moves from the lean ones (which had no rows to tell a note gone)."""
    root = _vault(tmp_path)
    with open_vault(root) as v:
        v.add("projects", "Kelp farm", summary="seaweed")
        assert v.engine.catalogue._rows is None
        v.engine.catalogue.notes()  # every row read
        (root / "people" / "n05.md").unlink()
        v.sync(paths=["people/n05.md"], vectors=False)
    copy = tmp_path / "fresh"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memvault"))
    with open_vault(copy) as fresh:
        fresh.sync(vectors=False)
    assert "people/n05" not in (root / "people" / "people.md").read_text("utf-8")
    assert _listings(copy) == _listings(root)


def test_an_add_with_no_daemon_finds_the_note_titled_so_in_its_folder_in_any_case(
    tmp_path: Path,
) -> None:
    """The titles a write's name lookup reads with no daemon are those of its folder's
    notes alone (the folder index), its top folder taken in any case as before
    (``People/`` for ``people``), and a note of that title elsewhere is not it."""
    root = new_vault(tmp_path)
    write(root, "People/Ana.md", note("Ana Pérez", "a person"))
    write(root, "people/bo.md", note("Bo", "another"))
    write(root, "projects/ana-perez-plan.md", note("Ana Pérez", "a project"))
    with open_vault(root) as v:
        v.sync(vectors=False)
    with open_vault(root) as v:
        assert v.engine.catalogue._rows is None  # no rows: the store's titles
        assert sorted(v.engine.catalogue.titles("people")) == [
            ("People/Ana.md", "Ana Pérez"),
            ("people/bo.md", "Bo"),
        ]
        assert v.engine.catalogue.titles("nowhere") == []
        v.add("people", "Ana Pérez", summary="found by title", update=True)
        assert v.engine.catalogue._rows is None
    assert "found by title" in (root / "People" / "Ana.md").read_text("utf-8")
    assert sorted(p.name for p in (root / "people").iterdir()) == ["bo.md"]  # none made
    assert "found by title" not in (root / "projects" / "ana-perez-plan.md").read_text("utf-8")
