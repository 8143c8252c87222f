"""core/changes.py: the size+mtime fast path and hash-based move detection."""

from __future__ import annotations

import posixpath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.core.changes import (
    RENAME_LIMIT,
    ChangeSet,
    Known,
    Manifest,
    Seen,
    as_indexed,
    case_pairs,
    diff,
    edited_moves,
    similarity,
    stat_moves,
    suspects,
    to_hash,
)


def test_only_new_or_restatted_files_are_suspects() -> None:
    known = {"a.md": Known(1, 10, "h1"), "b.md": Known(2, 20, "h2")}
    seen = {"a.md": Seen(1, 10), "b.md": Seen(2, 21), "c.md": Seen(3, 30)}
    assert suspects(known, seen) == ["b.md", "c.md"]


def test_modified_touched_created_deleted() -> None:
    known = {"a.md": Known(1, 10, "h1"), "b.md": Known(2, 20, "h2"), "gone.md": Known(5, 5, "h5")}
    seen = {"a.md": Seen(1, 11), "b.md": Seen(3, 20), "c.md": Seen(3, 30)}
    out = diff(known, seen, {"a.md": "h1", "b.md": "h2x", "c.md": "h3"})
    assert out == ChangeSet(
        created=("c.md",), modified=("b.md",), deleted=("gone.md",), touched=("a.md",)
    )


def test_a_delete_plus_create_with_the_same_content_is_a_move() -> None:
    known = {"people/ana.md": Known(1, 10, "same")}
    seen = {"team/ana.md": Seen(1, 99)}
    out = diff(known, seen, {"team/ana.md": "same"})
    assert out.moved == (("people/ana.md", "team/ana.md"),)
    assert not out.created and not out.deleted


def test_identical_files_pair_by_name_first() -> None:
    known = {"a/x.md": Known(0, 1, "empty"), "a/y.md": Known(0, 1, "empty")}
    seen = {"b/y.md": Seen(0, 2), "b/x.md": Seen(0, 2), "b/z.md": Seen(0, 2)}
    out = diff(known, seen, {"b/x.md": "empty", "b/y.md": "empty", "b/z.md": "empty"})
    assert set(out.moved) == {("a/x.md", "b/x.md"), ("a/y.md", "b/y.md")}
    assert out.created == ("b/z.md",)


def test_scope_limits_the_comparison_to_a_batch() -> None:
    known = {"a.md": Known(1, 1, "h"), "b.md": Known(1, 1, "h2")}
    out = diff(known, {"a.md": Seen(2, 2)}, {"a.md": "hx"}, scope={"a.md"})
    assert out == ChangeSet(modified=("a.md",))
    assert not ChangeSet()


def test_a_renamed_attachment_keeps_its_size_and_mtime() -> None:
    before = {"Attachments/Engelbart.jpg": Seen(52_133, 17), "a.png": Seen(10, 1)}
    after = {"Attachments/people/Douglas Engelbart.jpg": Seen(52_133, 17), "a.png": Seen(10, 1)}
    assert stat_moves(before, after) == {
        "Attachments/Engelbart.jpg": "Attachments/people/Douglas Engelbart.jpg"
    }


def test_a_moved_folder_of_attachments_pairs_file_by_file() -> None:
    before = {"img/a.png": Seen(1, 5), "img/b.png": Seen(1, 5), "img/c.pdf": Seen(9, 5)}
    after = {"media/a.png": Seen(1, 5), "media/b.png": Seen(1, 5), "media/c.pdf": Seen(9, 5)}
    assert stat_moves(before, after) == {
        "img/a.png": "media/a.png",
        "img/b.png": "media/b.png",
        "img/c.pdf": "media/c.pdf",
    }


def test_attachment_moves_are_not_guessed() -> None:
    # one vanished file, two identical new ones with other names: which is it?
    before = {"a.png": Seen(1, 5), "kept.png": Seen(2, 2)}
    after = {"x.png": Seen(1, 5), "y.png": Seen(1, 5), "kept.png": Seen(2, 2)}
    assert stat_moves(before, after) == {}
    # a changed file (another size or time) is a delete and a create, not a move
    assert stat_moves({"a.png": Seen(1, 5)}, {"b.png": Seen(1, 6)}) == {}
    assert stat_moves({"a.png": Seen(1, 5)}, {"a.png": Seen(1, 5)}) == {}


def test_new_paths_are_hashed_only_when_a_known_path_is_gone() -> None:
    # a new path's hash only tells a move: a first sync (nothing gone) reads each
    # file once, in the indexer, not once more to hash it here
    known = {"a.md": Known(1, 10, "h1"), "b.md": Known(2, 20, "h2")}
    seen = {"a.md": Seen(1, 10), "b.md": Seen(2, 21), "c.md": Seen(3, 30)}
    assert to_hash(known, seen) == ["b.md"]
    assert to_hash({}, seen) == []
    gone = {**known, "old/c.md": Known(3, 5, "h3")}
    assert to_hash(gone, seen) == ["b.md", "c.md"]
    # the change set is the one the hashes of every suspect give
    every = {"a.md": "h1", "b.md": "h2x", "c.md": "h3"}
    for k in (known, {}, gone):
        mine = {p: every[p] for p in to_hash(k, seen)}
        assert diff(k, seen, mine) == diff(k, seen, {p: every[p] for p in suspects(k, seen)})
    assert diff(gone, seen, {p: every[p] for p in to_hash(gone, seen)}).moved == (
        ("old/c.md", "c.md"),
    )


NOTE = "# Łukasz\n\nŁukasz runs the build farm.\n\n## Work\n\nBuild farm.\nNight shifts.\n"


def _texts(texts: dict[str, str]):  # type: ignore[no-untyped-def]
    return texts.get


def test_a_note_moved_and_edited_at_once_is_a_move() -> None:
    changes = ChangeSet(created=("Crew/Łukasz.md",), deleted=("Team/Łukasz.md",))
    out = edited_moves(
        changes,
        _texts({"Team/Łukasz.md": NOTE}),
        _texts({"Crew/Łukasz.md": NOTE + "- one more line\n"}),
    )
    assert out == ChangeSet(moved=(("Team/Łukasz.md", "Crew/Łukasz.md"),))


def test_a_move_and_an_edit_pair_as_git_pairs_renames() -> None:
    """Half the lines in common at least (git's 50 %), the same file name (case aside),
    one of each: no guess between rivals, no pairing of unrelated notes."""
    other = "# Notes\n\nSomething else entirely.\nAnd more.\nAnd more still.\n"
    changes = ChangeSet(
        created=("b/Notes.md", "b/ŁUKASZ.md", "x/twin.md", "y/twin.md"),
        deleted=("a/Notes.md", "a/Łukasz.md", "a/twin.md"),
    )
    texts = {
        "a/Notes.md": NOTE,
        "b/Notes.md": other,  # the same name, another note
        "a/Łukasz.md": NOTE,
        "b/ŁUKASZ.md": NOTE.replace("Night shifts.", "Day shifts."),
        "a/twin.md": NOTE,
        "x/twin.md": NOTE,  # two candidates: neither is guessed
        "y/twin.md": NOTE,
    }
    out = edited_moves(changes, _texts(texts), _texts(texts))
    assert out.moved == (("a/Łukasz.md", "b/ŁUKASZ.md"),)
    assert set(out.created) == {"b/Notes.md", "x/twin.md", "y/twin.md"}
    assert set(out.deleted) == {"a/Notes.md", "a/twin.md"}
    unreadable = edited_moves(changes, _texts({}), _texts(texts))  # no text: no pair
    assert unreadable == changes


def test_a_note_renamed_and_edited_at_once_pairs_by_its_lines_with_no_rival() -> None:
    """git's rule without the name, by lines: a gone note and a new one of other names,
    half their own lines in common, each the other's most alike by a margin."""
    kraken = "# Kraken\n\n" + "".join(f"Line {i} of the queue design.\n" for i in range(30))
    three = "# Ana\n\nAna writes the docs.\nShe reviews the ranking.\nShe runs the wiki.\n"
    changes = ChangeSet(
        created=("projects/kraken-queue.md", "ideas/x.md", "ideas/y.md", "ana-b.md"),
        deleted=("projects/kraken.md", "a/twin.md", "ana.md"),
    )
    texts = {
        "projects/kraken.md": kraken,
        "projects/kraken-queue.md": kraken + "One more line.\n",
        "a/twin.md": kraken.replace("Kraken", "Twin").replace("queue", "twin"),
        "ideas/x.md": kraken.replace("Kraken", "Twin").replace("queue", "twin"),  # two as
        "ideas/y.md": kraken.replace("Kraken", "Twin").replace("queue", "twin"),  # alike
        "ana.md": three,
        "ana-b.md": three + "She keeps the glossary.\n",
    }
    out = edited_moves(changes, _texts(texts), _texts(texts))
    assert out.moved == (("ana.md", "ana-b.md"), ("projects/kraken.md", "projects/kraken-queue.md"))
    assert set(out.created) == {"ideas/x.md", "ideas/y.md"} and out.deleted == ("a/twin.md",)


TEMPLATE_STUB = '---\ntitle: "{}"\n---\n# {}\n\n## Role\n\n## Notes\n'


@pytest.mark.parametrize(
    ("gone", "came"),
    [
        # found by a review: stubs of one template, nothing of their own (1.0 by words)
        (TEMPLATE_STUB.format("Bob", "Bob"), TEMPLATE_STUB.format("Carol", "Carol")),
        # two decisions of one template, their headings and a line in common
        (
            "# Use Postgres\n\n## Context\nWe need a store.\n## Decision\nUse Postgres.\n"
            "It has pgvector.\nThe team knows it.\n",
            "# Drop Redis\n\n## Context\nWe need a store.\n## Decision\nDrop Redis.\n"
            "It costs too much.\nNobody reads the cache.\n",
        ),
        # two daily logs sharing one recurring line
        (
            "# 2024-05-01\n\n09:30 standup with [[ana]]\nFixed the build.\nLunch.\nRead.\n",
            "# 2024-05-02\n\n09:30 standup with [[ana]]\nWrote docs.\nGym.\nCalls.\n",
        ),
    ],
)
def test_notes_alike_only_by_their_template_or_a_line_are_no_rename(gone: str, came: str) -> None:
    changes = ChangeSet(created=("people/carol.md",), deleted=("people/bob.md",))
    texts = {"people/bob.md": gone, "people/carol.md": came}
    assert edited_moves(changes, _texts(texts), _texts(texts)) == changes


def test_a_rename_with_a_rival_nearly_as_alike_is_no_guess() -> None:
    base = "".join(f"Line {i} of the plan.\n" for i in range(10))
    changes = ChangeSet(created=("p/a2.md", "p/b2.md"), deleted=("p/a.md",))
    texts = {
        "p/a.md": base,
        "p/a2.md": base + "x\n",  # 10/11 alike
        "p/b2.md": base.replace("Line 0 ", "Row 0 ") + "y\n",  # 9/11: within the margin
    }
    assert edited_moves(changes, _texts(texts), _texts(texts)) == changes
    texts["p/b2.md"] = "".join(f"Line {i} of the plan.\n" for i in range(6)) + "z\nw\nv\n"
    assert edited_moves(changes, _texts(texts), _texts(texts)).moved == (("p/a.md", "p/a2.md"),)


def test_past_the_rename_limit_only_names_pair() -> None:
    body = "".join(f"Line {{}} {j}.\n" for j in range(4))
    n = RENAME_LIMIT + 1
    many = ChangeSet(
        created=tuple(f"n/{i}.md" for i in range(n)), deleted=tuple(f"o/x{i}.md" for i in range(n))
    )
    same = {f"o/x{i}.md": body.format(*[i] * 4) for i in range(n)}
    same |= {f"n/{i}.md": body.format(*[i] * 4) + "more\n" for i in range(n)}
    assert edited_moves(many, _texts(same), _texts(same)) == many  # every pair would be read
    few = ChangeSet(created=many.created[:3], deleted=many.deleted[:3])
    assert len(edited_moves(few, _texts(same), _texts(same)).moved) == 3


def test_similarity_counts_shared_words_over_the_longer_text_the_name_aside() -> None:
    assert similarity("A b\n\n", "  a\nB") == 1.0
    assert similarity("a b c d", "a b x y") == 0.5
    assert similarity("a b", "a b c d e") == 0.4
    assert similarity("", "") == 0.0 and similarity("a a", "a") == 0.5
    # two notes of one name share it and their title: that is no evidence of a move
    band, storm = "# Zoë\n\nZoë the band.\n", "# Zoë\n\nHurricane Zoë hit the coast.\n"
    assert similarity(band, storm) >= 0.5 > similarity(band, storm, "zoë")


def _diff_path_by_path(known, seen, hashes, scope):  # type: ignore[no-untyped-def]
    """``diff`` as it was written before, a look at each path: the reference."""
    paths = set(known) | set(seen) if scope is None else set(scope)
    gone = sorted(p for p in paths if p in known and p not in seen)
    new = sorted(p for p in paths if p in seen and p not in known)
    modified, touched = [], []
    for p in sorted(paths):
        if p in known and p in seen and p in hashes:
            (modified if hashes[p] != known[p].sha256 else touched).append(p)
    by_hash: dict[str, list[str]] = {}
    for p in gone:
        by_hash.setdefault(known[p].sha256, []).append(p)
    moved, created = [], []
    for p in new:
        olds = by_hash.get(hashes.get(p), []) if hashes.get(p) else []
        if not olds:
            created.append(p)
            continue
        name = posixpath.basename(p).casefold()
        best = next((o for o in olds if posixpath.basename(o).casefold() == name), olds[0])
        olds.remove(best)
        moved.append((best, p))
    deleted = [p for p in gone if p not in {old for old, _ in moved}]
    return ChangeSet(tuple(created), tuple(modified), tuple(deleted), tuple(moved), tuple(touched))


_NAMES = st.sampled_from([f"{d}{n}.md" for d in ("", "a/", "B/") for n in "uvwxyz"])


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(_NAMES, st.sampled_from(["h1", "h2", "h3"]), max_size=12),
    st.dictionaries(_NAMES, st.sampled_from(["h1", "h2", "h3", "h4"]), max_size=12),
    st.sets(_NAMES, max_size=12),
    st.none() | st.sets(_NAMES, max_size=8),
)
def test_diff_by_sets_finds_what_a_look_at_each_path_finds(
    before: dict[str, str], now: dict[str, str], hashed: set[str], scope: set[str] | None
) -> None:
    known = {p: Known(1, 1, h) for p, h in before.items()}
    seen = {p: Seen(1, 2) for p in now}
    hashes = {p: h for p, h in now.items() if p in hashed}  # some hashed, some not
    assert diff(known, seen, hashes, scope) == _diff_path_by_path(known, seen, hashes, scope)


def test_a_manifest_of_rows_is_the_mapping_of_known_it_holds() -> None:
    rows = [("a.md", 1, 10, "h1"), ("b/c.md", 2, 20, "h2")]
    manifest = Manifest(rows)
    as_dict = {"a.md": Known(1, 10, "h1"), "b/c.md": Known(2, 20, "h2")}
    assert manifest == as_dict and dict(manifest) == as_dict
    assert len(manifest) == 2 and list(manifest) == ["a.md", "b/c.md"]
    assert "a.md" in manifest and "x.md" not in manifest and manifest.get("x.md") is None
    assert manifest.keys() - {"a.md"} == {"b/c.md"}
    with pytest.raises(KeyError):
        manifest["x.md"]
    assert Manifest.of(as_dict).rows == manifest.rows and Manifest.of(manifest) is manifest


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from("abcdef"), st.tuples(st.integers(0, 2), st.integers(0, 2))),
    st.dictionaries(st.sampled_from("abcdef"), st.tuples(st.integers(0, 2), st.integers(0, 2))),
)
def test_the_changes_from_a_manifest_are_those_from_its_dict(
    recorded: dict[str, tuple[int, int]], there: dict[str, tuple[int, int]]
) -> None:
    """What a sync reads from the store (rows) finds what a dict of ``Known`` did."""
    known = {f"{p}.md": Known(s, m, f"h{s}") for p, (s, m) in recorded.items()}
    seen = {f"{p}.md": Seen(s, m) for p, (s, m) in there.items()}
    manifest = Manifest((p, k.size, k.mtime_ns, k.sha256) for p, k in known.items())
    assert suspects(manifest, seen) == suspects(known, seen)
    assert to_hash(manifest, seen) == to_hash(known, seen)
    hashes = {p: f"h{seen[p].size}" for p in to_hash(known, seen)}
    assert diff(manifest, seen, hashes) == diff(known, seen, hashes)


@pytest.mark.parametrize(
    ("seen", "known", "pairs"),
    [
        # a rename of case alone: the index's path -> the file here
        (["people/ana.md", "b.md"], ["People/Ana.md", "b.md"], {"People/Ana.md": "people/ana.md"}),
        (["Café/Zoë.md"], ["café/zoë.md"], {"café/zoë.md": "Café/Zoë.md"}),  # any letters
        (["people/ana.md"], ["People/Ana.md", "people/ana.md"], {}),  # there as spelt
        (["people/ana.md"], ["People/Bob.md"], {}),  # another note
        # two of one key (ext4's twins): which is which is not guessed
        (["a/X.md", "a/x.md"], ["A/x.md"], {}),
        (["a/x.md"], ["A/x.md", "A/X.md"], {}),
    ],
)
def test_case_pairs_finds_the_index_s_notes_here_in_another_case(
    seen: list[str], known: list[str], pairs: dict[str, str]
) -> None:
    assert case_pairs(seen, known) == pairs
    files = {p: Seen(i, i) for i, p in enumerate(seen)}
    keyed = as_indexed(files, pairs)
    assert {p: keyed[p] for p in pairs} == {p: files[h] for p, h in pairs.items()}
    assert len(keyed) == len(files)


def test_a_racy_row_is_a_suspect_and_found_the_same_it_is_neither_modified_nor_touched() -> None:
    """``racy`` (engine/racy_rows.py): a row whose (size, mtime) is not trusted yet is
    hashed whatever its stat; the same content at the same stat changes nothing, other
    content is a modification."""
    known = {"a.md": Known(5, 100, "sha-a"), "b.md": Known(5, 100, "sha-b")}
    seen = {"a.md": Seen(5, 100), "b.md": Seen(5, 100)}
    assert to_hash(known, seen) == [] and suspects(known, seen) == []
    assert to_hash(known, seen, {"a.md", "b.md", "gone.md"}) == ["a.md", "b.md"]
    changes = diff(known, seen, {"a.md": "sha-a", "b.md": "sha-b2"})
    assert changes.modified == ("b.md",) and changes.touched == ()
