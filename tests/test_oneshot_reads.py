"""A read in a process that has read no note rows yet (the CLI without a daemon) reads
its hits' rows alone, not every note's (issue 27: a one-shot `memvault search` on
100,000 notes spent 10 s reading 100,000 rows for ten titles), and answers as a
process that holds every row does."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import new_vault, note, open_vault, write


def _vault(tmp_path: Path) -> Path:
    root = new_vault(tmp_path)
    for i in range(30):
        folder = ("projects", "people", "decisions")[i % 3]
        body = f"## Plan\n\nThe budget for harbour {i} is reviewed with the ferry crew.\n"
        write(root, f"{folder}/n{i:02d}.md", note(f"Harbour {i}", f"Harbour {i}'s plan", body))
    write(root, "projects/plain.md", "The budget of a harbour without a title line.\n")
    with open_vault(root) as v:
        v.sync()
    return root


def _answers(v) -> tuple[list, list, str]:  # type: ignore[no-untyped-def]
    hits = v.search("harbour budget", k=8)
    related = v.related("projects/n00.md", k=5)
    ctx = v.context("What is the budget for harbour 3?", budget=600)
    return (
        [(h.path, h.title, h.line_start) for h in hits],
        [(h.path, h.title) for h in related],
        ctx.text,
    )


def test_a_cold_process_reads_only_its_hits_rows_and_answers_as_a_warm_one(
    tmp_path: Path,
) -> None:
    root = _vault(tmp_path)
    with open_vault(root) as cold:
        cold_answers = _answers(cold)
        assert cold.engine.catalogue._rows is None  # no read of every row
    with open_vault(root) as warm:
        assert len(warm.engine.catalogue.notes()) == 31  # every row held, as a daemon's
        assert _answers(warm) == cold_answers
    hits = cold_answers[0]
    assert len(hits) == 8  # each titled as its note is, not by its path
    assert all(title == f"Harbour {int(path[-5:-3])}" for path, title, _ in hits if "/n" in path)


def test_a_title_changed_since_the_rows_were_read_is_the_new_one(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    with open_vault(root) as v:
        v.engine.catalogue.notes()
        write(root, "projects/n00.md", note("Harbour zero renamed", "", "The budget of harbour.\n"))
        v.sync(paths=["projects/n00.md"])
        assert ("projects/n00.md", "Harbour zero renamed") in {
            (h.path, h.title) for h in v.search("harbour zero renamed budget", k=10)
        }
    with open_vault(root) as cold:
        found = {(h.path, h.title) for h in cold.search("harbour zero renamed budget", k=10)}
        assert ("projects/n00.md", "Harbour zero renamed") in found


def test_a_sync_that_finds_nothing_changed_builds_no_link_index(tmp_path: Path) -> None:
    """A command without a daemon syncs first; when nothing changed it reads no note and
    builds no link index (~1 s of a one-shot command at 100,000 notes), and its search
    answers as before."""
    root = _vault(tmp_path)
    with open_vault(root) as v:
        before = [(h.path, h.title) for h in v.search("harbour budget", k=5)]
    with open_vault(root) as again:
        report = again.sync()
        assert not report.changed
        assert again.engine.catalogue._links is None and again.engine.catalogue._rows is None
        assert [(h.path, h.title) for h in again.search("harbour budget", k=5)] == before


def test_a_cold_get_reads_its_own_row_alone_and_answers_as_a_warm_one(tmp_path: Path) -> None:
    """`memvault get` without a daemon read every note's row for the one title it
    prints (3 s of its 4.5 s at 100,000 notes)."""
    root = _vault(tmp_path)
    with open_vault(root) as cold:
        got = [cold.get(p) for p in ("projects/n00.md", "people/n01.md", "projects/plain.md")]
        assert cold.engine.catalogue._rows is None  # no read of every row
    with open_vault(root) as warm:
        warm.engine.catalogue.notes()
        assert [
            warm.get(p) for p in ("projects/n00.md", "people/n01.md", "projects/plain.md")
        ] == got
    assert [g.title for g in got] == ["Harbour 0", "Harbour 1", "plain"]


def _linked_vault(tmp_path: Path) -> Path:
    root = new_vault(tmp_path)
    write(root, "topics/ferry.md", note("Ferry", "", "The ferry timetable and its budget.\n"))
    write(
        root,
        "topics/harbour.md",
        "---\naliases: [Port]\n---\n# Harbour\n\nThe harbour master keeps the quay.\n",
    )
    for i in range(12):
        body = (
            f"## Plan\n\nThe budget for crossing {i} is reviewed.\n"
            f"- see [[Ferry]] for the timetable\n- and [[Port|the port]], [[topics/harbour#Harbour]]\n"
            f"- not yet written: [[Nowhere {i}]]\n"
        )
        write(root, f"projects/p{i:02d}.md", note(f"Crossing {i}", "", body))
    with open_vault(root) as v:
        v.sync()
    return root


def test_a_cold_search_reads_the_stored_link_verdicts_and_ranks_as_the_link_index_does(
    tmp_path: Path,
) -> None:
    """A search's evidence (the notes a hit's lines link to, the hop) resolved every link
    with a link index of every file, built for it (0.2-0.5 s of a command without a
    daemon at 100,000 notes); the verdicts the index stores are the same answers."""
    root = _linked_vault(tmp_path)
    queries = ("ferry timetable budget", "harbour port quay crossing", "the port budget")
    with open_vault(root) as cold:
        got = [[(h.path, h.score) for h in cold.search(q, k=10)] for q in queries]
        assert cold.engine.catalogue._links is None  # no link index built
    with open_vault(root) as warm:
        warm.engine.catalogue.link_index()
        assert [[(h.path, h.score) for h in warm.search(q, k=10)] for q in queries] == got
    assert all(len(hits) == 10 for hits in got)


def test_stored_link_verdicts_not_true_to_the_files_are_not_read(tmp_path: Path) -> None:
    """Stored verdicts left stale (a sync killed between its changes and their links:
    meta links_following set) are not evidence: the link index resolves them."""
    root = _linked_vault(tmp_path)
    queries = ("ferry timetable budget", "harbour port quay crossing", "the port budget")
    with open_vault(root) as v:
        true = [[(h.path, h.score) for h in v.search(q, k=10)] for q in queries]
    with open_vault(root) as v:  # stale: the links to Ferry stored as leading to Harbour
        v.engine.store.set_meta("links_following", "1")
        with v.engine.store._db as db:
            db.execute(
                "UPDATE links SET resolved = 'topics/harbour.md' WHERE resolved = 'topics/ferry.md'"
            )
        got = [[(h.path, h.score) for h in v.search(q, k=10)] for q in queries]
        assert v.engine.catalogue._links is None  # resolved by the link keys, no map built
    assert got == true


def test_a_command_without_a_daemon_sees_a_persons_edits_adds_removes_and_renames(
    tmp_path: Path,
) -> None:
    """Each command opens the vault anew (as the CLI without a daemon does): what a
    person did to the files by hand since the last one is in its answers, with the
    index's check trusted."""
    root = _linked_vault(tmp_path)

    def paths(query: str) -> list[str]:
        with open_vault(root, mode="query") as v:  # as `memvault search` opens it
            hits = [h.path for h in v.search(query, k=3)]
            assert not v.engine.store.checked  # the last command closed it: trusted
            return hits

    write(root, "projects/p03.md", note("Crossing 3", "", "The zeppelin hangar is rented.\n"))
    assert paths("zeppelin hangar")[0] == "projects/p03.md"
    write(root, "projects/p03.md", note("Crossing 3", "", "The zeppelin hangar is let.\n"))
    with open_vault(root, mode="read") as v:  # as `memvault get` opens it
        assert "hangar is let" in v.get("projects/p03.md").text
        assert [h.path for h in v.search("hangar is let", k=1)] == ["projects/p03.md"]
    write(root, "topics/kayak.md", note("Kayak", "", "The kayak club meets on Tuesdays.\n"))
    assert paths("kayak club tuesdays")[0] == "topics/kayak.md"
    (root / "topics/kayak.md").rename(root / "topics/canoe.md")
    assert paths("kayak club tuesdays")[0] == "topics/canoe.md"
    (root / "topics/canoe.md").unlink()
    assert "topics/canoe.md" not in paths("kayak club tuesdays")


def test_a_cold_search_sees_an_edit_in_place_of_the_same_size_within_the_second(
    tmp_path: Path,
) -> None:
    """The scan compared with the store's rows (``changes.Manifest``): a note rewritten
    in place (its inode and its folder's mtime kept), to the same size, its mtime a
    microsecond on, is read again by the next command with no daemon; a note deleted
    is never named."""
    root = _linked_vault(tmp_path)
    path = root / "projects" / "p03.md"
    write(root, "projects/p03.md", note("Crossing 3", "", "The zeppelin hangar is rented.\n"))
    with open_vault(root, mode="query") as v:
        assert v.search("zeppelin hangar", k=1)[0].path == "projects/p03.md"
    before = path.stat()
    folder_mtime = path.parent.stat().st_mtime_ns
    old = path.read_bytes()
    new = old.replace(b"hangar is rented", b"quarry is leased")
    assert len(new) == len(old)
    with path.open("r+b") as f:  # in place: the same inode, the folder's mtime unchanged
        f.write(new)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000))
    assert path.stat().st_size == before.st_size and path.stat().st_ino == before.st_ino
    assert path.parent.stat().st_mtime_ns == folder_mtime
    with open_vault(root, mode="query") as v:
        hits = v.search("zeppelin quarry leased", k=3)
        assert hits[0].path == "projects/p03.md" and "quarry is leased" in hits[0].text
    (root / "projects" / "p05.md").unlink()
    with open_vault(root, mode="query") as v:
        assert all(h.path != "projects/p05.md" for h in v.search("crossing", k=50))
