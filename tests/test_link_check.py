"""The link check judges again only the stored links the disk may have changed
(``engine/link_check.py``): its answers are those of judging every link, in every
state the files can be in between two syncs, and an unchanged vault's ``status``
judges none of its resolved links."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from helpers import open_vault, write
from memvault.engine import engine, link_check


def _both(v: Any) -> None:
    """The check's two answers (as written, as counted) against every link's."""
    fs, store = v.engine.fs, v.engine.store
    for as_written in (True, False):
        fast = link_check.link_problems(fs, store, as_written=as_written)
        full = link_check.link_problems(fs, store, as_written=as_written, every_link=True)
        assert sorted(map(repr, fast)) == sorted(map(repr, full))


def _vault(root: Path) -> None:
    write(root, "people/ana.md", "---\naliases: [Annie]\n---\n# Ana\n\n## Role\n\nLead.\n")
    write(root, "people/bo.md", "# Bo\n\nSee [[ana]], [[Annie]], [[ana#Role]], [[ana#Gone]].\n")
    write(root, "people/cy.md", "# Cy\n\n[[nobody]] and [[plan]] and ![[pic.png]] and [[Bobby]].\n")
    write(root, "projects/plan.md", "# Plan\n\nText.\n")
    write(root, "projects/x/deep.md", "# Deep\n\n[[people/bo]] [[cy]].\n")
    (root / "pic.png").write_bytes(b"\x89PNG")
    write(root, "people/dy.md", "# Dy\n\nOne line, one link twice: [[nobody]], [[nobody]].\n")


STEPS = [
    ("a linked note deleted", lambda r: os.remove(r / "projects/plan.md")),
    ("a second plan: ambiguous", lambda r: write(r, "decisions/plan.md", "# P2\n\nT.\n")),
    ("the missing note made", lambda r: write(r, "nobody.md", "# N\n\nT.\n")),
    ("an alias taken away", lambda r: write(r, "people/ana.md", "# Ana\n\n## Role\n\nLead.\n")),
    (
        "an alias given, the heading renamed",
        lambda r: write(
            r, "people/bo.md", "---\naliases: [Bobby]\n---\n# Bo\n\n## Gone\n\nSee [[ana]].\n"
        ),
    ),
    ("the anchor's heading gone", lambda r: write(r, "people/ana.md", "# Ana\n\nLead.\n")),
    ("the attachment deleted", lambda r: os.remove(r / "pic.png")),
    ("a case twin made", lambda r: write(r, "people/Cy.md", "# Cy too\n\nAnother.\n")),
    ("a folder's case twin made", lambda r: write(r, "Decisions/plan.md", "# P3\n\nT.\n")),
    ("a note renamed", lambda r: os.rename(r / "people/cy.md", r / "people/cyrus.md")),
    ("a case twin gone", lambda r: os.remove(r / "decisions/plan.md")),
    ("a folder renamed", lambda r: os.rename(r / "projects/x", r / "projects/y")),
]


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
@pytest.mark.parametrize("synced", [False, True], ids=["between syncs", "after each sync"])
def test_judging_the_changed_links_answers_as_judging_every_link(
    tmp_path: Path, synced: bool, store: str, request: pytest.FixtureRequest
) -> None:
    if store == "postgres":  # the stored rows' query on a real PostgreSQL too
        monkeypatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
        monkeypatch.setenv("MEMVAULT_INDEX_DSN", request.getfixturevalue("pg_dsn"))
    root = tmp_path / "v"
    _vault(root)
    with open_vault(root) as v:
        v.sync()
        _both(v)
        assert {p.verdict for p in v.links_check()} == {"unresolved", "anchor", "alias"}
        for _, step in STEPS:
            step(root)
            _both(v)
            if synced:
                v.sync()
                _both(v)


def test_an_unchanged_vaults_status_judges_no_resolved_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``status`` judged every stored link (90,000 at 10,000 notes, 0.7 s of its 1.4)."""
    root = tmp_path / "v"
    for i in range(40):
        write(root, f"people/p{i}.md", f"# P{i}\n\n[[p{(i + 1) % 40}]] [[p{(i + 2) % 40}]]\n")
    write(root, "people/q.md", "# Q\n\n[[nobody]] [[p1#Nope]]\n")
    with open_vault(root) as v:
        v.sync()
        judged: list[str] = []
        real = link_check.link_problem

        def counted(source: str, *args: Any) -> Any:
            judged.append(source)
            return real(source, *args)

        monkeypatch.setattr(link_check, "link_problem", counted)
        status = v.status()
        assert status["links"]["unresolved"] == 1 and status["links"]["missing_anchor"] == 1
        assert sorted(judged) == ["people/q.md", "people/q.md"]
        judged.clear()
        # the links of its name, and the two problems (a note MEMORY.md does not list:
        # its People section shows p0-p7, in Obsidian's order since this stop)
        os.remove(root / "people/p37.md")
        status = v.status()
        assert status["links"]["unresolved"] == 3
        assert sorted(set(judged)) == ["people/p35.md", "people/p36.md", "people/q.md"]


def _a_sync_died(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A vault where ``a.md`` links ``[[b]]``, whose sync of ``b.md``'s delete died
    between the delete and the links' verdicts (``[[b]]`` left stored ``resolved``)."""
    root = tmp_path / "v"
    write(root, "a.md", "# A\n\nSee [[b]].\n")
    write(root, "b.md", "# B\n\nText.\n")
    with open_vault(root) as v:
        v.sync()
    os.remove(root / "b.md")

    def dies(*args: Any, **kwargs: Any) -> int:
        raise KeyboardInterrupt("killed between the delete and the links")

    follow = engine.verdicts.follow
    monkeypatch.setattr(engine.verdicts, "follow", dies)
    with open_vault(root) as v, pytest.raises(KeyboardInterrupt):
        v.sync()
    monkeypatch.setattr(engine.verdicts, "follow", follow)
    return root


def test_a_sync_under_way_or_dead_has_every_link_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stored verdicts a dead sync left stale are not trusted until a sync resolved them."""
    root = _a_sync_died(tmp_path, monkeypatch)
    with open_vault(root) as v:
        found = {(p.source, p.target, p.verdict) for p in v.links_check()}  # before a sync
        assert ("a.md", "b", "unresolved") in found
        assert v.status()["links"]["unresolved"] == sum(1 for f in found if f[2] == "unresolved")
        _both(v)


def test_notes_whose_paths_differ_only_by_case_are_judged(tmp_path: Path) -> None:
    """A review: ``people/ana.md`` made beside ``people/Ana.md`` (ext4 and git hold both)
    left ``[[Ana]]`` stored ``resolved`` (some of the index's bookkeeping took the two
    for one file), and the check that relied on it missed the ambiguity. The stored
    verdict is kept true now (``LinkIndex`` membership as spelt), and the check relies
    on it."""
    root = tmp_path / "v"
    write(root, "people/Ana.md", "# Ana\n")
    write(root, "a.md", "# A\n\n[[Ana]]\n")
    with open_vault(root) as v:
        v.sync(vectors=False)
        write(root, "people/ana.md", "# ana twin\n")
        v.sync(vectors=False)
        assert [(p.source, p.verdict) for p in v.links_check()] == [("a.md", "ambiguous")]
        _both(v)


def test_a_save_let_in_by_a_long_sync_leaves_no_stale_verdict_trusted(tmp_path: Path) -> None:
    """A review: a save let in while a long sync stepped aside deleted the note the long
    sync's later batches link to; those were resolved against the files as it began and
    stored ``resolved`` to the gone note. Such a long sync has every link resolved by
    the next, and its verdicts are not relied on until then."""
    root = tmp_path / "v"
    write(root, "target.md", "# T\n")
    for i in range(450):
        write(root, f"n/n{i:03}.md", f"# N{i}\n\n[[target]]\n")
    with open_vault(root) as v:
        v.sync(vectors=False)
        for i in range(450):
            write(root, f"n/n{i:03}.md", f"# N{i}\n\nedited [[target]]\n")
        let_in: list[int] = []

        def progress(p: Any) -> None:
            if not let_in and p.done and p.done < p.total:
                let_in.append(1)
                os.remove(root / "target.md")
                v.engine.sync(paths=["target.md"], vectors=False)  # the watcher's, let in

        v.engine.sync(progress=progress, vectors=False)
        assert let_in
        assert v.status()["links"]["unresolved"] == 450
        _both(v)
        v.sync(vectors=False)  # the next sync resolves them all
        rows = [r for page in v.engine.store.links_by_page() for r in page]
        assert not [r for r in rows if r.source.startswith("n/") and r.verdict == "resolved"]
        assert v.status()["links"]["unresolved"] == 450


def test_an_index_an_older_memvault_left_is_judged_whole_until_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review: a sync of an older memvault that died between a delete and its links
    left a stale ``resolved`` behind and no ``links_following``: the stored verdicts of
    an index no memvault that keeps them wrote are not relied on, and its first sync
    here resolves them all."""
    from memvault.engine import link_verdicts

    root = _a_sync_died(tmp_path, monkeypatch)
    with open_vault(root) as v:  # as the older memvault left it: neither flag
        for name in (link_verdicts.FOLLOWING, link_verdicts.TRUSTED):
            v.engine.store.set_meta(name, "")
        assert v.status()["links"]["unresolved"] == 2  # a.md's, MEMORY.md's
        v.sync()
        assert link_verdicts.trusted(v.engine.store)
        rows = [r for page in v.engine.store.links_by_page() for r in page]
        assert [r.verdict for r in rows if r.source == "a.md"] == ["unresolved"]


def test_verdicts_kept_while_case_twins_were_one_file_are_judged_whole_until_resolved(
    tmp_path: Path,
) -> None:
    """Names two files on disk share are no longer judged again on every check (the
    stored verdicts of case twins are kept true): an index a memvault that took such
    twins for one file kept (meta ``links_trusted`` "1") may hold ``[[Ana]]`` stored
    ``resolved`` beside people/ana.md; it is judged whole until its next sync resolves
    every link."""
    from memvault.engine import link_verdicts

    root = tmp_path / "v"
    write(root, "people/Ana.md", "# Ana\n")
    write(root, "people/ana.md", "# ana twin\n")
    write(root, "a.md", "# A\n\n[[Ana]]\n")
    with open_vault(root) as v:
        v.sync(vectors=False)
        assert link_verdicts.trusted(v.engine.store)
        with v.engine.store.transaction() as conn:  # as such a memvault left it
            conn.execute(
                "UPDATE links SET verdict = 'resolved', resolved = 'people/Ana.md', "
                "candidates = '[]' WHERE source = 'a.md'"
            )
        v.engine.store.set_meta(link_verdicts.TRUSTED, "1")
    with open_vault(root) as v:
        assert [(p.source, p.verdict) for p in v.links_check()] == [("a.md", "ambiguous")]
        assert v.status()["links"]["ambiguous"] == 1
        _both(v)
        v.sync(vectors=False)
        assert link_verdicts.trusted(v.engine.store)
        assert [r.verdict for r in v.engine.store.links("a.md")] == ["ambiguous"]
        _both(v)


@pytest.mark.parametrize("name", ["back\\slash.md", "odd %5c name.md"])
def test_a_file_name_memvault_refuses_leaves_status_and_links_check_working(
    tmp_path: Path, name: str
) -> None:
    """A note named with a backslash (legal on Linux and macOS; a sync from elsewhere)
    is refused by the sync, as it says; then `status` and `links check` both failed
    with that refusal (exit 5), so nothing of the vault could be seen, and every sync
    counted it created, `status` saying the index was behind the files for ever."""
    from typer.testing import CliRunner

    from memvault.interfaces.cli import app

    root = tmp_path / "vault"
    write(root, "people/ana.md", "# Ana\n\nSee [[nobody]].\n")
    write(root, name, "# Odd\n\nA note with an odd name, linking [[people/ana]].\n")
    with open_vault(root) as v:
        v.sync()
        again = v.sync()  # it was "created" (and skipped) on every sync, status "behind"
        assert again.created == () and [s.path for s in again.skipped] == [name]
        said = [p["path"] for p in v.status()["problems"]]
        assert said == [name], said
    runner = CliRunner()
    status = runner.invoke(
        app, ["status", "--vault", str(root)], env={"MEMVAULT_INDEX_MODEL": "hash"}
    )
    assert status.exit_code in (0, 1) and "people" in status.output, status.output
    check = runner.invoke(app, ["links", "check", "--vault", str(root)])
    assert check.exit_code == 1 and "[[nobody]]" in check.output, check.output


def test_status_during_a_first_index_reads_no_note_the_index_has_not_reached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon's first index of 6,000 notes: each ``/status`` parsed every note not
    indexed yet for its links, 10-20 s, and the plugin's status view said to start the
    daemon. Past ``LINKS_READ_MOST`` changed notes they are left to the index, and
    ``links.unchecked`` says how many."""
    from memvault.engine import status as status_module

    monkeypatch.setattr(status_module, "LINKS_READ_MOST", 3, raising=False)
    root = tmp_path / "v"
    write(root, "people/q.md", "# Q\n\n[[nobody]]\n")
    with open_vault(root) as v:
        v.sync()
        read: list[str] = []
        real = link_check._parse

        def counted(fs: Any, path: str) -> Any:
            read.append(path)
            return real(fs, path)

        monkeypatch.setattr(link_check, "_parse", counted)
        for i in range(3):  # as many as it reads: read and counted
            write(root, f"people/n{i}.md", f"# N{i}\n\n[[nobody{i}]]\n")
        links = v.status()["links"]
        assert (links["unresolved"], links.get("unchecked", 0)) == (4, 0)
        assert sorted(read) == ["people/n0.md", "people/n1.md", "people/n2.md"]
        read.clear()
        write(root, "people/n3.md", "# N3\n\n[[nobody3]]\n")  # one more: none is read
        links = v.status()["links"]
        assert read == [] and (links["unresolved"], links["unchecked"]) == (1, 4)
        assert len([p for p in v.links_check() if p.verdict == "unresolved"]) == 5
        v.sync()
        links = v.status()["links"]
        assert (links["unresolved"], links["unchecked"]) == (5, 0)
        for path in (root / "people").glob("*.md"):  # a checkout: new times, same words
            os.utime(path, (1_900_000_000, 1_900_000_000))
        links = v.status()["links"]
        assert (links["unresolved"], links["unchecked"]) == (5, 0)
