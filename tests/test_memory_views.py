"""The memory tool's listings stay within their limits whatever the vault's names
(core.memory_views; engine.memory_views does the I/O).

Names are up to 255 bytes (ext4; Obsidian takes them): twelve top-level folders and
eight top-level notes named with ~200 characters each made ``view /memories`` 5,747
characters, the index an agent loads first being documented as at most 5,000. Now each
part of a listing has its share and the lines past it are counted as those past its
count are, so every line still names a whole path the agent can ``view``.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import make_vault, note, open_vault, unmarked, write
from memvault.core import memory_views as V
from memvault.core.page_marks import MARKS, Marks
from memvault.errors import MemoryToolError

# any script, no "/" (a path's separator), no controls or surrogates (no file holds them)
_CHARS = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="/.")


def _cut(name: str) -> str:
    """A name cut to 255 bytes of UTF-8 (on a character's edge), as a file system allows."""
    while len(name.encode("utf-8")) > 255:
        name = name[:-1]
    return name


NAMES = st.one_of(
    st.text(_CHARS, min_size=1, max_size=20),
    st.text(_CHARS, min_size=120, max_size=255).map(_cut),
    st.tuples(_CHARS, st.integers(1, 255)).map(lambda cn: _cut(cn[0] * cn[1])),
)
SIZES = st.integers(0, 10**9)


def _entries(folder: str, ext: str, most: int) -> st.SearchStrategy[list[V.Entry]]:
    at = f"{folder}/" if folder else ""
    entry = st.builds(
        lambda n, size, about: V.Entry(f"{at}{n}{ext}", size, 0, about),
        NAMES.map(lambda n: _cut(n + ext)[: -len(ext)] or "x"),
        SIZES,
        st.text(max_size=300),
    )
    return st.lists(entry, max_size=most, unique_by=lambda e: e.rel)


def _folders(under: str, most: int) -> st.SearchStrategy[list[V.FolderCount]]:
    at = f"{under}/" if under else ""
    folder = st.builds(
        lambda n, notes, size, files: V.FolderCount(f"{at}{n}", notes, size, files),
        NAMES,
        st.integers(0, 10**6),
        SIZES,
        st.integers(0, 10**4),
    )
    return st.lists(folder, max_size=most, unique_by=lambda f: f.rel)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    memory=st.one_of(st.none(), st.text(max_size=200).map(lambda t: t * 40)),
    folders=_folders("", 40),
    notes=_entries("", ".md", 60),
    files=st.lists(st.tuples(st.sampled_from(["", "a"]), NAMES), max_size=12),
)
def test_view_memories_stays_within_its_lines_and_characters_whatever_the_names(
    memory: str | None,
    folders: list[V.FolderCount],
    notes: list[V.Entry],
    files: list[tuple[str, str]],
) -> None:
    not_notes = [V.Entry(f"{d}/{_cut(n + '.MD')}".lstrip("/"), 1, 0) for d, n in files]
    out = V.render_index("MEMORY.md", memory, folders, notes, not_notes)
    assert len(out) <= V.INDEX_CHARS
    assert len(out.split("\n")) <= V.INDEX_LINES
    _names_whole(out, {f"/memories/{f.rel}/" for f in folders} | _paths(notes, not_notes))
    # every folder and note is listed or counted; the notes counted are paged from there
    listed = [f for f in folders if f"\t/memories/{f.rel}/\t" in out]
    assert listed == folders[: len(listed)]
    if len(listed) < len(folders):
        assert f"… and {len(folders) - len(listed)} more folders" in out
    shown = [e for e in notes if f"\t/memories/{e.rel}" in out]
    assert shown == notes[: len(shown)]
    if len(shown) < len(notes):
        assert f"view /memories with view_range [{len(shown) + 1}, " in out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    rel=st.lists(NAMES, min_size=1, max_size=6).map("/".join),
    first=st.integers(1, 3),
    has_folder_note=st.booleans(),
)
def test_a_folders_page_stays_within_its_characters_and_pages_every_note(
    data: st.DataObject, rel: str, first: int, has_folder_note: bool
) -> None:
    subfolders = data.draw(_folders(rel, 30))
    notes = data.draw(_entries(rel, ".md", 90))
    files = data.draw(_entries(rel, ".MD", 14))
    first = min(first, max(len(notes), 1))
    folder_note = f"{rel}/{rel.rsplit('/', 1)[-1]}.md" if has_folder_note else None
    mark = data.draw(st.one_of(st.none(), st.integers(MARKS.start, MARKS.stop - 1)))
    others = data.draw(st.sampled_from([0, 1, 113, 10**9]))  # its attachments, counted
    out = V.render_folder(rel, notes, subfolders, first, folder_note, files, mark, others)
    assert len(out) <= V.FOLDER_CHARS  # (that the numbers shifted said too)
    assert ("Not listed: " in out) == bool(others and first == 1)  # its first page only
    # a next page's command carries the mark of the entries numbered before it
    marks = Marks.of([e.rel for e in notes] + [f.rel for f in subfolders] + [e.rel for e in files])
    _names_whole(out, {f"/memories/{f.rel}/" for f in subfolders} | _paths(notes, files))
    if notes:  # a page lists at least one note, and says where the next page starts
        (said,) = re.findall(rf"Notes {first}-(\d+) of {len(notes)} in ", out)
        last = int(said)
        assert last >= first
        assert f"/memories/{notes[first - 1].rel}" in out
        if last < len(notes):
            assert f"with view_range [{last + 1}, {marks(last + 1)}]" in out
    # each command names the folder exactly (or, a path too long to, the path viewed)
    for said in re.findall(r"view (.+?) with view_range", out):
        assert said in (f"/memories/{rel}", V.VIEWED), said
        if said == V.VIEWED:
            assert len(f"/memories/{rel}") > V.SAID_PATH
    # every file is listed, or paged from the command its "… and N more" line names
    listed = [e for e in files if f"\t/memories/{e.rel}" in out]
    assert listed == files[: len(listed)]
    if first == 1 and len(listed) < len(files):
        at = len(notes) + len(subfolders) + len(listed) + 1
        assert f"with view_range [{at}, {marks(at)}] lists the" in out


def _paths(*lists: list[V.Entry]) -> set[str]:
    return {f"/memories/{e.rel}" for entries in lists for e in entries}


def _names_whole(out: str, paths: set[str]) -> None:
    """Each listing line names a whole path (size, tab, path): one the agent can view."""
    for line in out.split("\n"):
        cells = line.split("\t")
        if len(cells) > 1 and re.fullmatch(r"[\d.]+[BKMG]", cells[0]):
            assert cells[1] in paths, line


def test_view_memories_of_long_top_level_names_stays_within_5000_characters(
    tmp_path: Path,
) -> None:
    """The review's vault: twelve folders and eight notes at the top level, each named
    with 120 to 240 characters (5,747 characters before, 5,000 said). Within 5,000 now,
    and each note left out is on the page the index names."""
    root = make_vault(tmp_path)
    for i in range(12):
        write(root, f"{'é' * 120}-{i:02d}/note.md", note(f"Note {i}"))
    tops = [f"{'n' * 240}-{i:02d}.md" for i in range(8)]
    for name in tops:
        write(root, name, note(name[-6:-3], "A summary of what this note holds. " * 4))
    with open_vault(root) as v:
        v.sync()
        out = v.memory_tool({"command": "view", "path": "/memories"})
        assert len(out) <= V.INDEX_CHARS
        (first,) = re.findall(r"more: view /memories with view_range \[(\d+), \d+\]", out)
        page = v.memory_tool(
            {"command": "view", "path": "/memories", "view_range": [int(first), 48]}
        )
    listed = {name for name in tops if f"\t/memories/{name}\t" in out + "\n" + page}
    assert listed == set(tops)
    assert "/memories/MEMORY.md:" in out


# -- every folder reachable: the listings' commands page what they count -------------------

_PREFIXES = st.sampled_from(
    ["", "10-19 Area ", "Client ", "é" * 110 + " ", "Ж" * 120 + " ", "漢" * 80 + " "]
)  # (3 deep: past SAID_PATH; names of 240 bytes in Cyrillic, CJK)


@st.composite
def _vaults(draw: st.DrawFn) -> list[str]:
    """The notes of a vault (their paths): up to 200 top-level folders (PARA, a
    Johnny.Decimal ``10-19 Area/``, a folder per client), some with subfolders, one
    with up to 30 subfolders two deep and notes enough to be paged, notes at the top."""
    prefix = draw(_PREFIXES)
    notes = [f"top-{i}.md" for i in range(draw(st.integers(0, 45)))]
    many = draw(st.one_of(st.integers(0, 200), st.just(200)))  # (lists are drawn short)
    top = st.tuples(st.integers(0, 2), st.lists(st.integers(1, 2), max_size=2))
    tops = draw(st.lists(top, min_size=many, max_size=many))
    for i, (own, subs) in enumerate(tops):
        folder = f"{prefix}{i:03d}"
        notes += [f"{folder}/n{j}.md" for j in range(own or (0 if subs else 1))]
        notes += [f"{folder}/s{k}/n{j}.md" for k, n in enumerate(subs) for j in range(n)]
    many = draw(st.one_of(st.integers(0, 30), st.just(30)))
    own, subs = draw(
        st.tuples(st.integers(0, 60), st.lists(st.integers(1, 2), min_size=many, max_size=many))
    )
    wide = f"{prefix}wide/{prefix}inner"
    notes += [f"{wide}/n{j}.md" for j in range(own or (0 if subs else 1))]
    notes += [f"{wide}/{prefix}{k}/n{j}.md" for k, n in enumerate(subs) for j in range(n)]
    # files not read as notes (Fact.MD): at the top, in the wide folder, in a folder of
    # their own, more than a listing shows (the index 5, a folder's page 10)
    where = st.sampled_from(["", wide, f"{prefix}files", f"{prefix}000"])
    for folder, n in draw(st.lists(st.tuples(where, st.integers(1, 25)), max_size=3)):
        at = f"{folder}/" if folder else ""
        notes += [f"{at}Fact{j}.MD" for j in range(n) if f"{at}Fact{j}.MD" not in notes]
    return notes


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(notes=_vaults())
def test_following_the_listings_commands_reaches_every_folder_and_note(
    notes: list[str],
) -> None:
    """``… and 30 more folders`` named no command that lists them: a vault of more than
    12 top-level folders (or 10 subfolders in one) had folders an agent could not reach
    from the listings; nor were the ``Fact.MD`` files past the 10th of a folder (or the
    5th of the vault), counted as "… and N more in <folder>", and a folder's page past
    300 characters said "view this folder with view_range ...", no path. Following only
    the commands the listings name (a folder listed, a ``view_range`` said, the path
    exactly as said) now reaches each folder, note and file, every page within its
    limits."""
    with tempfile.TemporaryDirectory(prefix="mt53b-") as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        for rel in notes:
            write(root, rel, f"# {rel}\n")
        with open_vault(root) as v:
            seen = _follow(lambda c: v.memory_tool({"command": "view", **c}))
    folders = {f"/memories/{d}/" for rel in notes for d in _parents(rel)}
    assert seen == folders | {f"/memories/{rel}" for rel in notes}


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _follow(view: Callable[[dict[str, object]], str]) -> set[str]:
    """Every path listed, from ``view /memories``, following the commands said only."""
    todo: list[tuple[str, tuple[int, int] | None]] = [("/memories", None)]
    done: set[tuple[str, tuple[int, int] | None]] = set()
    seen: set[str] = set()
    while todo:
        path, view_range = todo.pop()
        if (path, view_range) in done:
            continue
        done.add((path, view_range))
        out = view({"path": path} | ({"view_range": list(view_range)} if view_range else {}))
        if path == "/memories" and view_range is None:
            assert len(out) <= V.INDEX_CHARS
            assert len(out.split("\n")) <= V.INDEX_LINES
        else:
            assert len(out) <= V.FOLDER_CHARS
        assert "(The entries numbered before" not in out  # (nothing changed: marks agree)
        for line in out.split("\n"):
            cells = line.split("\t")
            if len(cells) > 1 and re.fullmatch(r"[\d.]+[BKMG]", cells[0]):
                seen.add(cells[1])
                if cells[1].endswith("/"):
                    todo.append((cells[1][:-1], None))
        for said, a, b in re.findall(r"view (.+?) with view_range \[(\d+), (-?\d+)\]", out):
            if said == V.VIEWED:  # (a path too long to name in each command)
                assert len(path) > V.SAID_PATH, out
                said = path
            todo.append((said, (int(a), int(b))))
    return seen


@pytest.mark.parametrize(
    "name",
    ["Ж" * 127, "漢" * 85, "a" * 255, "Ω" * 60 + "漢" * 40 + "x" * 15],
    ids=["cyrillic", "cjk", "ascii", "mixed"],
)
def test_a_long_folders_commands_name_its_path_exactly(tmp_path: Path, name: str) -> None:
    """A folder's path past 300 characters (three names of 255 bytes) said "view this
    folder with view_range [41, 80]": no path, the agent left to guess that it meant the
    one it viewed. Each command names the path now, and following it lists the rest."""
    assert len(name.encode("utf-8")) <= 255
    deep = "/".join([name, name[:-1] + "2", name[:-1] + "3"])
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(45):
        write(root, f"{deep}/n{i}.md", f"# n{i}\n")
    for i in range(12):
        write(root, f"{deep}/Fact{i}.MD", f"fact {i}\n")
        write(root, f"{deep}/sub {i}/n.md", "# n\n")
    path = f"/memories/{deep}"
    with open_vault(root) as v:
        v.sync()
        seen = _follow_from(path, lambda c: v.memory_tool({"command": "view", **c}))
    assert seen >= {f"{path}/n{i}.md" for i in range(45)}
    assert seen >= {f"{path}/Fact{i}.MD" for i in range(12)}
    assert seen >= {f"{path}/sub {i}/" for i in range(12)}


def test_a_folder_too_deep_to_name_in_each_command_says_the_path_viewed(tmp_path: Path) -> None:
    """Twelve names of 250 letters: a path of 3,000 characters, in each note's path too,
    cannot be named in each command of a 6,000-character page; the commands say to view
    the path viewed (which the agent gave: it views the folder again)."""
    deep = "/".join(f"{i:02d}" + "a" * 248 for i in range(12))
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(45):
        write(root, f"{deep}/n{i}.md", f"# n{i}\n")
    path = f"/memories/{deep}"
    with open_vault(root) as v:
        v.sync()
        out = v.memory_tool({"command": "view", "path": path})
        seen = _follow_from(path, lambda c: v.memory_tool({"command": "view", **c}))
    assert f"view {V.VIEWED} with view_range [" in out
    assert seen == {f"{path}/n{i}.md" for i in range(45)}


def _follow_from(path: str, view: Callable[[dict[str, object]], str]) -> set[str]:
    """The paths listed in ``path``'s pages, following the ``view_range`` commands they
    name as said (the path viewed only where they say ``VIEWED``), each within its limit."""
    todo: list[tuple[int, int] | None] = [None]
    done: set[tuple[int, int] | None] = set()
    seen: set[str] = set()
    while todo:
        view_range = todo.pop()
        if view_range in done:
            continue
        done.add(view_range)
        out = view({"path": path} | ({"view_range": list(view_range)} if view_range else {}))
        assert len(out) <= V.FOLDER_CHARS
        assert "(The entries numbered before" not in out  # (nothing changed: marks agree)
        seen |= {line.split("\t")[1] for line in out.split("\n") if "\t" in line}
        for said, a, b in re.findall(r"view (.+?) with view_range \[(\d+), (-?\d+)\]", out):
            assert said in (path, V.VIEWED), said
            todo.append((int(a), int(b)))
    return seen


def test_every_fact_md_of_a_folder_and_of_the_top_is_reached_from_the_index(
    tmp_path: Path,
) -> None:
    """Fourteen ``Fact.MD`` files in a folder and fourteen at the top: the index listed
    five, the folder ten, and said "… and 4 more in /memories/F/" of the folder itself,
    no command listing them. Each "… and N more" names the ``view_range`` that pages them
    now (numbered past the notes and folders, whose numbers stay)."""
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(14):
        write(root, f"F/Fact{i:02d}.MD", f"fact {i}\n")
        write(root, f"Top{i:02d}.MD", f"top {i}\n")
    write(root, "F/n.md", "# n\n")
    with open_vault(root) as v:
        v.sync()
        folder = v.memory_tool({"command": "view", "path": "/memories/F"})
        seen = _follow(lambda c: v.memory_tool({"command": "view", **c}))
    assert "view /memories/F with view_range [12, M] lists the 4 left here" in unmarked(folder)
    assert "Notes 1-1 of 1 in /memories/F" in folder  # (the note is still entry 1)
    assert seen >= {f"/memories/F/Fact{i:02d}.MD" for i in range(14)}
    assert seen >= {f"/memories/Top{i:02d}.MD" for i in range(14)}


def _dated_notes(tmp_path: Path, stem: str, count: int) -> Path:
    """A new vault of ``count`` notes ``{stem}00.md`` ... (a folder in ``stem`` too), each
    a second newer than the one before: listed newest first, in a known order."""
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(count):
        rel = f"{stem}{i:02d}.md"
        write(root, rel, f"# {Path(rel).stem}\n")
        os.utime(root / rel, ns=(10**18 + i * 10**9,) * 2)
    return root


def test_a_page_past_the_notes_says_how_many_notes_it_is_numbered_past(tmp_path: Path) -> None:
    """An agent reorganising a folder while it pages: it views 45 notes and 20 subfolders
    (``… 5 more: view /memories/F with view_range [41, 80]``), moves the 20 notes it read
    first into a subfolder, then follows the command: entry 41 is a subfolder now, and the
    page said "Folders 16-20 of 20 in /memories/F, view_range [41, 45]", no word that the
    notes it asked for (now 21-25) were numbered ahead. The page says its notes' count
    now (a files page its notes' and folders'), so the shift is seen."""
    root = _dated_notes(tmp_path, "F/n", 45)
    for k in range(20):
        write(root, f"F/sub{k:02d}/n.md", "# n\n")
    write(root, "F/Fact.MD", "fact\n")
    with open_vault(root) as v:
        v.sync()
        first = v.memory_tool({"command": "view", "path": "/memories/F"})
        more = "(5 more: view /memories/F with view_range [41, M] for the next ones)"
        assert more in unmarked(first)
        listed = re.findall(r"\t(/memories/F/n\d\d\.md)\t", first)
        for p in listed[:20]:
            new = p.replace("/F/", "/F/sub00/")
            v.memory_tool({"command": "rename", "old_path": p, "new_path": new})
        page = v.memory_tool({"command": "view", "path": "/memories/F", "view_range": [41, 80]})
        files = v.memory_tool({"command": "view", "path": "/memories/F", "view_range": [46, 85]})
    assert page.startswith(
        "Folders 16-20 of 20 in /memories/F, view_range [41, 45], numbered past its 25 notes "
    ), page
    assert files.startswith(
        "Files not read as notes 1-1 of 1 in /memories/F, view_range [46, 46], numbered past "
        "its 25 notes and 20 folders "
    ), files


def test_a_folder_grown_while_an_agent_pages_the_index_is_still_listed(tmp_path: Path) -> None:
    """The index lists the biggest folders first; its "… and 4 more folders" named the
    entries past the twelve listed in that order. A note written into F14 meanwhile (by a
    person, the daemon, the agent itself) moved F14 ahead of the page, which then listed
    F11 again and never F14. The pages number the folders by name now, which no note
    written changes, and the command pages every one."""
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(16):
        write(root, f"F{i:02d}/n.md", "# n\n")
    with open_vault(root) as v:
        v.sync()
        out = v.memory_tool({"command": "view", "path": "/memories"})
        write(root, "F14/m.md", "# m\n")
        v.sync()
        seen = set(re.findall(r"\t(/memories/F\d\d/)\t", out))
        for a, b in re.findall(r"view /memories with view_range \[(\d+), (\d+)\]", out):
            page = v.memory_tool(
                {"command": "view", "path": "/memories", "view_range": [int(a), int(b)]}
            )
            seen |= set(re.findall(r"\t(/memories/F\d\d/)\t", page))
    assert seen == {f"/memories/F{i:02d}/" for i in range(16)}


def _next(out: str) -> list[int]:
    """The view_range of a listing's command for the next page of notes."""
    (a, b) = re.findall(r"with view_range \[(\d+), (\d+)\] for the next ones", out)[-1]
    return [int(a), int(b)]


def _listed(out: str) -> list[str]:
    return re.findall(r"\t(/memories/\S+\.md)", out)


SHIFTED = "(The entries numbered before 41 are not those this command's mark ("


def test_a_page_says_when_a_note_moved_or_edited_since_shifted_its_numbers(
    tmp_path: Path,
) -> None:
    """An agent pages 45 notes (``… view_range [41, 80]``); meanwhile a note it read on the
    first page is moved out (by itself, a person, a sync), or a note it has not read yet
    is edited (the newest now: the first page's). The next page listed notes 41-44 of the
    44, silently: the note that was 41st (now 40th), or the edited one, was never listed,
    and a stateless range has no cursor to prevent it. The command carries the mark of
    the entries before its page now, and the page says when they are not those: the skip
    is seen. A note it read, edited since, shifts nothing (its page is exact); a range it
    wrote itself (``[41, 80]``) is not checked."""
    root = _dated_notes(tmp_path, "F/n", 45)
    with open_vault(root) as v:
        v.sync()

        def view(**kw: object) -> str:
            return v.memory_tool({"command": "view", "path": "/memories/F", **kw})

        first = view()
        read = _listed(first)
        assert len(read) == 40 and _next(first)[0] == 41
        page = view(view_range=_next(first))  # nothing changed: exact, no word
        assert SHIFTED not in page
        assert _listed(page) == [f"/memories/F/n{i:02d}.md" for i in range(4, -1, -1)]

        write(root, "F/n44.md", "# n44\n\nedited\n")  # a note read: no shift
        v.sync()
        page = view(view_range=_next(first))
        assert SHIFTED not in page, page
        assert set(_listed(page)) | set(read) == {f"/memories/F/n{i:02d}.md" for i in range(45)}

        write(root, "F/n02.md", "# n2\n\nedited\n")  # a note not read: the newest now
        v.sync()
        page = view(view_range=_next(first))
        assert page.startswith(SHIFTED), page
        assert "/memories/F/n02.md" not in _listed(page)  # (what the word is for)
        assert "view /memories/F with view_range [1, 40] lists them from the first" in page
        assert SHIFTED not in view(view_range=[41, 80])  # (the agent's own range)

        again = view()  # listed again: exact from there
        os.replace(root / "F/n30.md", root / "n30.md")  # a note read, moved out
        v.sync()
        page = view(view_range=_next(again))
        assert page.startswith(SHIFTED), page
        assert "Notes 41-44 of 44" in page


def test_the_index_says_when_its_top_level_notes_shifted(tmp_path: Path) -> None:
    """``view /memories`` lists the 8 newest top-level notes and the command for the
    rest (``view_range [9, …]``): a listed note deleted before the agent follows it is
    said on that page, as a folder's."""
    root = _dated_notes(tmp_path, "t", 20)
    with open_vault(root) as v:
        v.sync()
        index = v.memory_tool({"command": "view", "path": "/memories"})
        command = {"command": "view", "path": "/memories", "view_range": _next(index)}
        assert _next(index)[0] == 9
        assert "(The entries" not in v.memory_tool(command)
        v.memory_tool({"command": "delete", "path": _listed(index)[-1]})
        page = v.memory_tool(command)
    assert page.startswith("(The entries numbered before 9 are not those this command's"), page
    assert "view /memories with view_range [1, 40] lists them from the first again" in page


def test_a_page_of_folders_and_of_files_says_when_the_notes_before_it_shifted(
    tmp_path: Path,
) -> None:
    """The commands paging a folder's subfolders and its files not notes (numbered past
    its notes) carry the mark too: a note deleted meanwhile is said on their pages."""
    root = tmp_path / "vault"
    root.mkdir()
    write(root, "F/a.md", "# a\n")
    write(root, "F/b.md", "# b\n")
    for k in range(12):
        write(root, f"F/sub{k:02d}/n.md", "# n\n")
    for k in range(12):
        write(root, f"F/Fact{k:02d}.MD", "fact\n")
    with open_vault(root) as v:
        v.sync()
        first = v.memory_tool({"command": "view", "path": "/memories/F"})
        commands = re.findall(r"view /memories/F with view_range \[(\d+), (\d+)\] lists", first)
        assert len(commands) == 2, first  # (its folders past 10, its files past 10)
        pages = [[int(a), int(b)] for a, b in commands]
        for vr in pages:
            out = v.memory_tool({"command": "view", "path": "/memories/F", "view_range": vr})
            assert "(The entries" not in out
        (root / "F/a.md").unlink()
        v.sync()
        for vr in pages:
            out = v.memory_tool({"command": "view", "path": "/memories/F", "view_range": vr})
            assert out.startswith(f"(The entries numbered before {vr[0]} are not"), out


def test_a_command_past_the_last_entry_now_says_the_numbers_shifted(tmp_path: Path) -> None:
    """45 notes, the first page read (``… view_range [41, M]``), ten of the forty read
    deleted meanwhile: the command was refused as past the last entry, "[1, 35]" and no
    more, so an agent took the listing for done while the five notes it had not read
    (41st-45th, now 31st-35th) were never listed. Its mark says the entries before it
    changed: the refusal says so, and how to list them again."""
    root = _dated_notes(tmp_path, "F/n", 45)
    with open_vault(root) as v:
        v.sync()
        first = v.memory_tool({"command": "view", "path": "/memories/F"})
        command = {"command": "view", "path": "/memories/F", "view_range": _next(first)}
        for i in range(35, 45):  # ten of those read (the newest)
            v.memory_tool({"command": "delete", "path": f"/memories/F/n{i:02d}.md"})
        with pytest.raises(MemoryToolError) as refused:
            v.memory_tool(command)
        said = str(refused.value)
        assert said.startswith("Invalid `view_range`: its first element `41` should be within"), (
            said
        )
        assert "[1, 35]. (The entries numbered before 41 are not those" in said, said
        assert "view /memories/F with view_range [1, 40] lists them from the first again" in said
        with pytest.raises(MemoryToolError) as plain:  # (the agent's own range: not checked)
            v.memory_tool({"command": "view", "path": "/memories/F", "view_range": [41, 80]})
        assert "(The entries" not in str(plain.value)


def test_a_mark_kept_with_another_first_number_is_not_called_a_change(tmp_path: Path) -> None:
    """An agent that keeps a page's command's second number and changes the first
    (``[41, M]`` to ``[81, M]``, a jump ahead) was told "a note was written, moved or
    deleted since": nothing was. The page says the mark is not that of the entries before
    it and names both causes, the other page's mark among them."""
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(90):
        write(root, f"F/n{i:02d}.md", f"# n{i}\n")
    with open_vault(root) as v:
        v.sync()
        first = v.memory_tool({"command": "view", "path": "/memories/F"})
        _, mark = _next(first)
        page = v.memory_tool({"command": "view", "path": "/memories/F", "view_range": [81, mark]})
    assert page.startswith(
        f"(The entries numbered before 81 are not those this command's mark ({mark}, its "
        "second number) was given for: a note was written, moved or deleted since, or the "
        "mark is another page's."
    ), page
    assert "Notes 81-90 of 90 in /memories/F" in page


def test_a_folders_view_range_not_of_whole_numbers_says_what_its_numbers_are(
    tmp_path: Path,
) -> None:
    """``[1.5, 3]`` on a folder was told "two whole numbers, [first, last] of the notes
    listed": its second number is the mark its page's command gives, not a last note (an
    agent told "last" writes ``[41, 80]``, which nothing checks)."""
    root = tmp_path / "vault"
    for i in range(3):
        write(root, f"F/n{i}.md", f"# n{i}\n")
    with open_vault(root) as v:
        v.sync()
        with pytest.raises(MemoryToolError) as refused:
            v.memory_tool({"command": "view", "path": "/memories/F", "view_range": [1.5, 3]})
    assert str(refused.value) == (
        "Invalid `view_range`: [1.5, 3]. On a folder it should be two whole numbers: the "
        "first entry listed, then the second number its page's command gives (its mark)."
    )
