"""A folder note memvault keeps is indexed without its listing (issue 21 item 12).

The folder note lists every note of its folder: 100,000 lines for a folder of 100,000
notes, rewritten at each save there, and then indexed again: every line parsed, a link
row stored per note. That was most of a save's cost at that size
(bench/memory_md_bench.py --daemon). The listing is the catalogue's own, so the index
keeps what is the person's: the properties, the title, their text and links around the
list (with the lines they have in the file, so the link check still points at them).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import new_vault, note, open_vault, write
from memvault.core import memory_md
from memvault.core.wikilinks import LinkIndex

FOLDER = "decisions/decisions.md"


def _with_persons_links(root: Path) -> str:
    """The folder note with a person's links above and below memvault's list."""
    path = root / FOLDER
    text = path.read_text("utf-8")
    text = text.replace("# Decisions\n", "# Decisions\n\nSee [[decisions/d00]] first.\n", 1)
    text += "\nAlso [[nowhere at all]] and [[decisions/d01]].\n"
    path.write_text(text, "utf-8")
    return text


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_the_listing_of_a_folder_note_is_not_indexed_the_persons_links_are(
    tmp_path: Path,
) -> None:
    root = new_vault(tmp_path)
    for i in range(30):
        write(root, f"decisions/d{i:02}.md", note(f"D{i}", f"Decision {i}."))
    with open_vault(root) as v:
        v.sync()
        listed = (root / FOLDER).read_text("utf-8")
        assert listed.count("- [[decisions/d") == 30  # memvault keeps the list
        text = _with_persons_links(root)
        v.sync()
        store = v.engine.store
        row = store.note(FOLDER)
        assert row is not None and row.kind == "index" and row.title == "Decisions"
        links = [(r.line, r.target, r.verdict) for r in store.links(FOLDER)]
        # before: 33 rows, one per listed note besides the person's three
        assert links == [
            (_line_of(text, "See [[decisions/d00]]"), "decisions/d00", "resolved"),
            (_line_of(text, "Also [["), "nowhere at all", "unresolved"),
            (_line_of(text, "Also [["), "decisions/d01", "resolved"),
        ]
        # the link check still finds the person's broken link where it is in the file
        problems = [(p.source, p.line, p.target) for p in v.links_check()]
        assert (FOLDER, _line_of(text, "Also [["), "nowhere at all") in problems
        # a note saved there: the list follows, the index still holds the person's links
        write(root, "decisions/d99.md", note("D99", "Decision 99."))
        v.sync(paths=["decisions/d99.md"])
        text = (root / FOLDER).read_text("utf-8")
        assert "- [[decisions/d99]] - Decision 99." in text
        assert [r.line for r in store.links(FOLDER)] == [
            _line_of(text, "See [["),
            _line_of(text, "Also [["),
            _line_of(text, "Also [["),
        ]


def test_a_folder_note_cut_at_max_note_bytes_is_indexed_without_its_listing(
    tmp_path: Path,
) -> None:
    """A folder note past ``vault.max_note_bytes`` is read up to the limit: its end
    marker is past the cut, and the listing then runs to the end of what was read."""
    root = new_vault(tmp_path)
    for i in range(200):
        write(root, f"decisions/d{i:03}.md", note(f"D{i}", f"Decision number {i}."))
    with open_vault(root, overrides={"vault": {"max_note_bytes": 4000}}) as v:
        v.sync()
        assert (root / FOLDER).stat().st_size > 8000
        row = v.engine.store.note(FOLDER)
        assert row is not None and row.kind == "index" and row.title == "Decisions"
        assert v.engine.store.links(FOLDER) == []  # before: a row per note read


def test_a_save_looks_up_its_own_rows_not_the_whole_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save's sync compared the path with the index by reading every note's row
    (``Store.manifest``): 100,000 rows a save at that size."""
    root = new_vault(tmp_path)
    for i in range(5):
        write(root, f"decisions/d{i}.md", note(f"D{i}", f"Decision {i}."))
    with open_vault(root) as v:
        v.sync()
        store = v.engine.store
        calls: list[int] = []
        whole = store.manifest

        def counted() -> object:
            calls.append(1)
            return whole()

        monkeypatch.setattr(store, "manifest", counted)
        write(root, "decisions/d1.md", note("D1", "Changed."))
        write(root, "decisions/d9.md", note("D9", "New."))
        report = v.sync(paths=["decisions/d1.md", "decisions/d9.md", "decisions/gone.md"])
        assert report.modified == ("decisions/d1.md",) and report.created == ("decisions/d9.md",)
        assert report.vanished == ("decisions/gone.md",)
        assert calls == []
        (root / "decisions/d2.md").unlink()
        report = v.sync(paths=["decisions/d2.md"])
        assert report.deleted == ("decisions/d2.md",) and calls == []
    text = (root / "MEMORY.md").read_text("utf-8")
    assert "[[decisions/d9]]" in text and "[[decisions/d2]]" not in text


@pytest.mark.parametrize(
    "text",
    [
        "# x\n<!-- memvault:begin folder -->\n- a\n<!-- memvault:end folder -->\n",
        "# x\r\n<!-- memvault:begin folder -->\r\n",
        "a\r<!-- memvault:end folder -->\rb",
        "a\u2028<!-- memvault:begin folder -->\u2029b",
        "a\x0c  <!--memvault:begin   folder-->  \x1cb",
        "a <!-- memvault:begin folder -->\n",  # not on a line of its own
        "<!-- memvault:begin people -->\n<!-- memvault:end people -->\n",
        "memvault: memvault:begin folder\n",
        "",
    ],
)
def test_a_managed_folder_note_is_known_as_by_its_lines(text: str) -> None:
    """``is_managed_folder_note`` looks only at the lines holding ``memvault:`` now; it
    answers what matching every line of ``splitlines()`` answers."""
    marker = re.compile(r"^\s*<!--\s*memvault:(begin|end)\s+([A-Za-z0-9_-]+)\s*-->\s*$")
    expected = any(
        (m := marker.match(line)) is not None and m.group(2) == "folder"
        for line in text.splitlines()
    )
    assert memory_md.is_managed_folder_note(text) is expected


def test_link_index_with_files_answers_as_one_built_afresh() -> None:
    files = ["a/Note.md", "b/note.md", "c/x.md", "img.png", "A/z.md"]
    aliases = {"c/x.md": ("Ex",)}
    added = ["d/note.md", "a/NOTE.md", "e/new.md", "c/Ex.md"]
    grown = LinkIndex(files, aliases).with_files(added)
    fresh = LinkIndex(files + added, aliases)
    targets = ["note", "Note", "a/note", "x", "Ex", "new", "e/new", "img.png", "z", "nope"]
    for target in targets:
        for source in ("a/s.md", "d/s.md", "s.md"):
            assert grown.resolve(target, source) == fresh.resolve(target, source), target
    assert all(p in grown for p in files + added) and "e/other.md" not in grown
    # a file it holds already (the index was rebuilt after the note's row was written)
    again = grown.with_files(["c/x.md", "e/new.md"])
    assert [again.resolve(t, "s.md") for t in targets] == [
        fresh.resolve(t, "s.md") for t in targets
    ]
    base = LinkIndex(files, aliases)
    base.with_files(added)
    assert "e/new.md" not in base  # the index it grew from is unchanged


def test_a_new_note_saved_joins_the_link_index_without_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each new note rebuilt the link index from every path in the store (100,000 at
    that size) at its save; it is added to it now, with the same answers."""
    root = new_vault(tmp_path)
    for i in range(5):
        write(root, f"decisions/d{i}.md", note(f"D{i}", f"Decision {i}."))
    with open_vault(root) as v:
        v.sync()
        store, catalogue = v.engine.store, v.engine.catalogue
        catalogue.link_index()
        calls: list[int] = []
        whole = store.paths_and_aliases

        def counted() -> object:
            calls.append(1)
            return whole()

        monkeypatch.setattr(store, "paths_and_aliases", counted)
        write(root, "decisions/fresh.md", note("Fresh", "A new one."))
        v.sync(paths=["decisions/fresh.md"])
        assert calls == []
        assert catalogue.link_index().resolve("fresh", "people/x.md").path == "decisions/fresh.md"
        write(root, "people/ana.md", note("Ana", "Links.", body="See [[fresh]]."))
        v.sync(paths=["people/ana.md"])
        assert [(r.target, r.resolved) for r in store.links("people/ana.md")] == [
            ("fresh", "decisions/fresh.md")
        ]
        assert calls == []
        # a note with aliases: the index is built afresh (aliases are the store's)
        write(root, "people/bo.md", "---\naliases: [Bobby]\n---\n# Bo\n")
        v.sync(paths=["people/bo.md"])
        assert catalogue.link_index().resolve("Bobby", "x.md").path == "people/bo.md"
        assert calls == [1]


def test_the_daemons_warm_up_builds_memory_mds_lists_before_the_first_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon started on an indexed vault changes nothing at its start-up reconcile, so
    the first save built the catalogue's rows, MEMORY.md's sorted lists and the link index
    from every note (15 s at 100,000 notes); the warm-up after the reconcile does it."""
    root = new_vault(tmp_path)
    for i in range(5):
        write(root, f"decisions/d{i}.md", note(f"D{i}", f"Decision {i}."))
    with open_vault(root) as v:
        v.sync()
    with open_vault(root) as v:
        v.sync()  # the start-up reconcile: nothing changed
        v.warm_up()
        store = v.engine.store
        calls: list[str] = []
        for name in ("notes", "paths_and_aliases"):
            whole = getattr(store, name)

            def counted(*a: object, _name: str = name, _whole: object = whole) -> object:
                calls.append(_name)
                return _whole(*a)  # type: ignore[operator]

            monkeypatch.setattr(store, name, counted)
        write(root, "decisions/d1.md", note("D1", "Changed."))
        v.sync(paths=["decisions/d1.md"])
        assert calls == []
    assert "- [[decisions/d1]] - Changed." in (root / "MEMORY.md").read_text("utf-8")


@pytest.mark.parametrize("with_a_new_note", [False, True])
def test_an_alias_a_person_gives_a_note_resolves_in_the_same_session(
    tmp_path: Path, with_a_new_note: bool
) -> None:
    """Found by the review: a note given an alias in the sync that also created a note
    kept the link index of before (the new note joined it; the alias did not), so
    ``[[Boss]]`` stayed unresolved until a restart. The alias alone was stale too."""
    root = new_vault(tmp_path)
    write(root, "people/ana.md", note("Ana", "Ana."))
    write(root, "people/carl.md", "# Carl\n\nReports to [[Boss]].\n")
    with open_vault(root) as v:
        v.sync()
        index = v.engine.catalogue.link_index()
        assert index.resolve("Boss", "people/carl.md").verdict == "unresolved"
        write(root, "people/ana.md", "---\naliases: [Boss]\n---\n# Ana\n\nAna.\n")
        paths = ["people/ana.md"]
        if with_a_new_note:
            write(root, "people/bob.md", note("Bob", "Bob."))
            paths.append("people/bob.md")
        v.sync(paths)
        got = v.engine.catalogue.link_index().resolve("Boss", "people/carl.md")
        assert (got.verdict, got.path) == ("alias", "people/ana.md")
        write(root, "people/ana.md", "# Ana\n\nNo alias any more.\n")  # and taken away
        v.sync(["people/ana.md"])
        got = v.engine.catalogue.link_index().resolve("Boss", "people/carl.md")
        assert got.verdict == "unresolved"


def test_many_new_notes_at_once_rebuild_the_link_index_in_one_read(tmp_path: Path) -> None:
    """A first sync or a pull of hundreds of notes: the link index is built again from
    one query, not grown by one row read a note (the review measured ~57 us a note)."""
    from memvault.engine.catalogue import ADD_ONE_BY_ONE

    root = new_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        v.engine.catalogue.link_index()
        reads: list[str] = []
        store = v.engine.store
        original = store.note
        store.note = lambda path: (reads.append(path), original(path))[1]  # type: ignore[method-assign]
        for i in range(ADD_ONE_BY_ONE + 1):
            write(root, f"bulk/n{i:03}.md", f"# N{i}\n\nnote {i}\n")
        store.note = original  # type: ignore[method-assign]
        v.sync()
        store.note = lambda path: (reads.append(path), original(path))[1]  # type: ignore[method-assign]
        v.engine.catalogue.files_added([f"bulk/n{i:03}.md" for i in range(ADD_ONE_BY_ONE + 1)])
        assert reads == []
        index = v.engine.catalogue.link_index()
        assert index.resolve("n000", "people/x.md").path == "bulk/n000.md"
