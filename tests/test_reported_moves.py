"""A rename the file system reported is a rename, whatever the note became after it.

Found by bench/soak.py: a note renamed and saved again before the watcher's quiet period
ended reached the sync as a delete and a create of another text; a stub of two lines is
too short for ``edited_moves`` to pair, so its links were left pointing at the old name.
The watcher now hands the kernel's move events on with the batch (``Batch.moves``) and
``reported_moves`` pairs them. The pure parts are here; a real watchdog observer over a
real vault is test_watcher's ``test_a_stub_renamed_and_saved_at_once_keeps_its_links``.
Found by the same soak: a note new or edited in the batch that renames the note it
links (a pull, a script) kept the old name; it is re-targeted too.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import open_vault, write
from memvault.core.changes import ChangeSet, moved_on, reported_moves
from memvault.service import watch_queue
from memvault.service.watch_queue import ChangeQueue
from test_watcher import Clock

# -- reported_moves: pure ------------------------------------------------------------------


def test_a_reported_rename_is_a_move_whatever_the_content() -> None:
    changes = ChangeSet(created=("projects/zoe.md", "people/new.md"), deleted=("people/zed.md",))
    out = reported_moves(changes, [("people/zed.md", "projects/zoe.md")])
    assert out.moved == (("people/zed.md", "projects/zoe.md"),)
    assert out.created == ("people/new.md",) and out.deleted == ()


def test_a_chain_of_renames_is_one_move_and_a_folder_stands_for_its_notes() -> None:
    changes = ChangeSet(created=("c.md", "archive/2025/n.md"), deleted=("a.md", "old/n.md"))
    moves = [
        ("a.md", "b.md"),
        ("b.md", "c.md"),
        ("old", "archive/2024"),
        ("archive/2024", "archive/2025"),
    ]
    out = reported_moves(changes, moves)
    assert set(out.moved) == {("a.md", "c.md"), ("old/n.md", "archive/2025/n.md")}
    assert out.created == () and out.deleted == ()


@pytest.mark.parametrize(
    ("changes", "moves"),
    [
        # renamed onto a note that stays: the diff's modified and deleted say it all
        (ChangeSet(modified=("b.md",), deleted=("a.md",)), [("a.md", "b.md")]),
        # renamed, then renamed on again out of the batch's sight: nothing came at b
        (ChangeSet(created=("x.md",), deleted=("a.md",)), [("a.md", "b.md")]),
        # a path used again after its note moved on: two new paths from one old, no guess
        (
            ChangeSet(created=("b.md", "c.md"), deleted=("a.md",)),
            [("a.md", "b.md"), ("b.md", "c.md")],
        ),
        # no rename reported
        (ChangeSet(created=("b.md",), deleted=("a.md",)), []),
    ],
)
def test_what_is_not_a_reported_rename_stays_as_the_diff_says(
    changes: ChangeSet, moves: list[tuple[str, str]]
) -> None:
    assert reported_moves(changes, moves) == changes


def test_a_note_renamed_and_moved_on_before_the_sync_is_held_not_deleted() -> None:
    # zed.md renamed to zoe.md, then its folder renamed before the batch ran: both gone
    changes = ChangeSet(deleted=("ops/zed.md", "ops/gone.md"))
    moves = [("ops/zed.md", "ops/zoe.md"), ("ops", "ops-2")]
    # a folder renamed after: the batch of the first rename names ops/zoe.md, gone again
    assert moved_on(changes, moves[:1], {"ops/zoe.md"}) == (("ops/zed.md", "ops/zoe.md"),)
    # followed through the folder's rename too; a path not named vanished is deleted
    assert moved_on(changes, moves, {"ops-2/zoe.md"}) == (("ops/zed.md", "ops-2/zoe.md"),)
    assert moved_on(changes, moves, set()) == ()
    assert moved_on(ChangeSet(deleted=("ops/gone.md",)), moves, {"ops/gone.md"}) == ()


# -- the queue hands the renames on with their batch ---------------------------------------


def test_the_queue_hands_the_renames_on_with_their_batch_in_order() -> None:
    clock = Clock()
    q = ChangeQueue(quiet_ms=300, clock=clock)
    q.put(["a.md", "b.md"], moves=[("a.md", "b.md")])
    q.put(["b.md", "c.md"], moves=[("b.md", "c.md")])
    clock.now += 0.3
    batch = q.take()
    assert batch is not None and batch.moves == (("a.md", "b.md"), ("b.md", "c.md"))
    q.put(["d.md"])
    clock.now += 0.3
    later = q.take()
    assert later is not None and later.moves == ()  # taken once


def test_renames_put_back_by_a_sync_go_before_the_ones_queued_since() -> None:
    clock = Clock()
    q = ChangeQueue(quiet_ms=300, clock=clock)
    q.put(["ops", "ops-2"], moves=[("ops", "ops-2")])
    q.put(["ops/zed.md"], moves=[("ops/zed.md", "ops/zoe.md")], earlier=True)
    clock.now += 0.3
    batch = q.take()
    assert batch is not None and batch.moves == (("ops/zed.md", "ops/zoe.md"), ("ops", "ops-2"))


def test_past_the_queue_s_bound_no_rename_is_handed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # a partial chain could pair a note with a path used again: all of them or none
    monkeypatch.setattr(watch_queue, "MAX_MOVES", 2)
    clock = Clock()
    q = ChangeQueue(quiet_ms=300, clock=clock)
    for i in range(3):
        q.put([f"n{i}.md", f"m{i}.md"], moves=[(f"n{i}.md", f"m{i}.md")])
    clock.now += 0.3
    batch = q.take()
    assert batch is not None and batch.moves == ()
    q.put(["x.md", "y.md"], moves=[("x.md", "y.md")])
    clock.now += 0.3
    again = q.take()
    assert again is not None and again.moves == (("x.md", "y.md"),)  # the next batch's own


def test_a_note_new_or_edited_in_the_batch_of_a_rename_is_relinked_too(tmp_path: Path) -> None:
    root = tmp_path / "v"
    write(root, "people/Ana.md", "# Ana\n\nAna leads the data team.\n")
    write(root, "projects/old.md", "# Old\n\nAsk [[Ana]].\n")
    write(root, "projects/edited.md", "# Edited\n\nNothing yet.\n")
    with open_vault(root) as vault:
        vault.sync()
        # one batch: a note written linking Ana, one edited to link her, then Ana
        # renamed (a pull, a script)
        write(root, "projects/new.md", "# New\n\nAsk [[Ana]] about the schema.\n")
        with open(root / "projects/edited.md", "a", encoding="utf-8") as fh:
            fh.write("\nSee [[Ana]].\n")
        os.rename(root / "people/Ana.md", root / "people/Ana Lopez.md")
        report = vault.sync(moves=[("people/Ana.md", "people/Ana Lopez.md")])
        assert report.moved == (("people/Ana.md", "people/Ana Lopez.md"),)
        for rel in ("projects/old.md", "projects/new.md", "projects/edited.md"):
            assert "[[Ana Lopez]]" in (root / rel).read_text(encoding="utf-8"), rel
        assert not vault.links_check()


def test_the_names_a_note_had_between_two_looks_are_passed_on() -> None:
    changes = ChangeSet(created=("c/Rob.md", "c/Anna.md", "c/Kept.md"), deleted=("c/Bob.md",))
    moves = [
        ("c/Bob.md", "c/Robert.md"),  # indexed as Bob: a move, Robert a name it passed
        ("c/Robert.md", "c/Rob.md"),
        ("c/Ann.md", "c/Anna.md"),  # made and renamed: Ann never indexed
        ("c/Kept.md", "c/Gone.md"),  # renamed on to a name not there: no guess
        ("old", "new"),  # a folder: its notes keep their names
    ]
    got = reported_moves(changes, moves)
    assert got.moved == (("c/Bob.md", "c/Rob.md"),)
    assert got.passed == (("c/Ann.md", "c/Anna.md"), ("c/Robert.md", "c/Rob.md"))
    assert reported_moves(changes, []).passed == ()


def test_a_link_written_as_a_folder_and_then_its_note_are_renamed_follows_the_note(
    tmp_path: Path,
) -> None:
    """The soak (seed 2): a note edited to link [[東京 plan 338]], the folder holding that
    note renamed at once, the note renamed 50 ms later, one batch. The name the note had
    between the two renames (``passed``) sat in the index beside the one it had, so the
    link was ambiguous between two names of one note and was left on the old name."""
    root = tmp_path / "v"
    for i in range(3):
        write(root, f"topics/ops-2/note {i}.md", f"# N{i}\n\nSome text {i}.\n")
    write(root, "topics/ops-2/東京 plan 338.md", "# Plan\n\nThe plan.\n")
    write(root, "people/Zoë Park 614.md", "# Zoë\n\nShe works here.\n")
    with open_vault(root) as vault:
        vault.sync()
        with open(root / "people/Zoë Park 614.md", "a", encoding="utf-8") as fh:
            fh.write("\nSee [[東京 plan 338]].\n")
        os.rename(root / "topics/ops-2", root / "topics/ops-3")
        os.rename(root / "topics/ops-3/東京 plan 338.md", root / "topics/ops-3/Björn 719.md")
        names = [f"note {i}.md" for i in range(3)] + ["東京 plan 338.md"]
        moves = [(f"topics/ops-2/{n}", f"topics/ops-3/{n}") for n in names]
        moves.append(("topics/ops-3/東京 plan 338.md", "topics/ops-3/Björn 719.md"))
        report = vault.sync(moves=moves)  # as the watcher hands the kernel's renames on
        assert ("topics/ops-2/東京 plan 338.md", "topics/ops-3/Björn 719.md") in report.moved
        assert "people/Zoë Park 614.md" in report.relinked
        text = (root / "people/Zoë Park 614.md").read_text(encoding="utf-8")
        assert "See [[Björn 719]]." in text
        assert not vault.links_check()


def test_a_name_that_only_passed_does_not_rebuild_the_link_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch whose only rename is of a name nobody indexed (a note made as Untitled
    and named a moment later, another note linking the first name meanwhile) rebuilt
    the vault's whole link index (~1 s at 100,000 notes): no file the index holds
    moved, so the one it has serves before and after."""
    from memvault.engine import catalogue

    root = tmp_path / "v"
    for i in range(20):
        write(root, f"people/p{i}.md", f"# P{i}\n\nText {i}.\n")
    with open_vault(root) as vault:
        vault.sync()
        vault.engine.catalogue.link_index()  # as a daemon holds it after its first sync
        built = [0]
        real = catalogue.LinkIndex

        def counted(*args: object, **kwargs: object) -> object:
            built[0] += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(catalogue, "LinkIndex", counted)
        write(root, "projects/Untitled.md", "# Plan\n\nThe plan.\n")
        with open(root / "people/p3.md", "a", encoding="utf-8") as fh:
            fh.write("\nSee [[Untitled]].\n")
        os.rename(root / "projects/Untitled.md", root / "projects/Roadmap.md")
        report = vault.sync(moves=[("projects/Untitled.md", "projects/Roadmap.md")])
        assert "people/p3.md" in report.relinked
        assert "See [[Roadmap]]." in (root / "people/p3.md").read_text(encoding="utf-8")
        assert not vault.links_check()
        assert built[0] == 0, f"the link index built {built[0]} times for one new note"
