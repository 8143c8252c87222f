"""core/memory_md.py: MEMORY.md stays a small, true index and keeps a person's words."""

from __future__ import annotations

import dataclasses
import datetime
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.config import DEFAULT_SECTIONS, SectionRule
from memvault.core.memory_md import (
    CatalogueEntry,
    MarkerError,
    count_line,
    entry_line,
    render_folder_note,
    select,
    update_memory,
)
from memvault.core.memory_order import collation
from memvault.core.notes import parse_note
from memvault.core.wikilinks import LinkIndex, find_links

TEMPLATE = Path(__file__).resolve().parents[1] / "vault-template"
EXAMPLE = Path(__file__).resolve().parents[1] / "vault-example"


def entry(path: str, summary: str = "", mtime: int = 0, **fields: object) -> CatalogueEntry:
    title = path.rsplit("/", 1)[-1].removesuffix(".md")
    return CatalogueEntry(path, title, summary, dict(fields), mtime)


def run(text, catalogue, owned=None, seen=(), rules=DEFAULT_SECTIONS, **kw):
    idx = LinkIndex([e.path for e in catalogue] + ["MEMORY.md"])

    def resolve(target: str) -> str | None:
        res = idx.resolve(target, "MEMORY.md")
        return res.path if res.verdict == "resolved" else None

    return update_memory(text, catalogue, rules, owned or {}, seen, resolve=resolve, **kw)


def template_catalogue() -> list[CatalogueEntry]:
    """The example vault's notes (memvault init --example)."""
    out = []
    for p in sorted(EXAMPLE.rglob("*.md")):
        rel = p.relative_to(EXAMPLE).as_posix()
        if rel == "MEMORY.md" or rel.startswith("templates/"):
            continue
        n = parse_note(rel, p.read_text(encoding="utf-8"))
        out.append(CatalogueEntry(rel, n.title, n.summary, n.frontmatter, 0))
    return out


def test_a_new_vaults_memory_md_stays_as_it_is_until_there_are_notes() -> None:
    text = (TEMPLATE / "MEMORY.md").read_text(encoding="utf-8")
    assert run(text, []).text == text


def test_the_example_is_adopted_as_is() -> None:
    text = (EXAMPLE / "MEMORY.md").read_text(encoding="utf-8")
    update = run(text, template_catalogue())
    assert update.text == text
    assert update.owned["projects"] == (
        "- [[projects/ai-assistant-refactor]] - "
        + next(e.summary for e in template_catalogue() if e.path.startswith("projects/")),
    )


def test_new_notes_are_listed_newest_first() -> None:
    cat = [
        entry("decisions/a.md", "A", date="2024-01-01"),
        entry("decisions/b.md", "B", date="2024-02-01"),
    ]
    text = "# Memory\n\n## Recent Decisions\n<!-- memvault:begin decisions -->\n<!-- memvault:end decisions -->\n"
    out = run(text, cat, rules=[DEFAULT_SECTIONS[2]]).text
    assert out == (
        "# Memory\n\n## Recent Decisions\n<!-- memvault:begin decisions -->\n"
        "- [[decisions/b]] - B\n- [[decisions/a]] - A\n<!-- memvault:end decisions -->\n"
    )


def test_text_outside_sections_is_kept_byte_for_byte() -> None:
    text = (
        "# Memory  \r\n\todd   spacing [[x]] ~~~\n\n<!-- memvault:begin logs -->\n"
        "<!-- memvault:end logs -->\ntrailing without newline"
    )
    out = run(text, [entry("logs/2024-01-01.md", "day")], rules=[DEFAULT_SECTIONS[3]]).text
    assert out.startswith(
        "# Memory  \r\n\todd   spacing [[x]] ~~~\n\n<!-- memvault:begin logs -->\n"
    )
    assert out.endswith("<!-- memvault:end logs -->\ntrailing without newline")
    assert "- [[logs/2024-01-01]] - day" in out


def test_a_persons_line_inside_a_section_stays_where_it_is() -> None:
    rules = [DEFAULT_SECTIONS[2]]
    cat = [entry("decisions/a.md", "A", date="2024-01-01")]
    first = run(
        "<!-- memvault:begin decisions -->\n<!-- memvault:end decisions -->\n", cat, rules=rules
    )
    edited = first.text.replace(
        "- [[decisions/a]] - A\n", "> Ask Sarah before adding here.\n- [[decisions/a]] - A\n"
    )
    cat.append(entry("decisions/b.md", "B", date="2024-02-01"))
    out = run(edited, cat, owned=first.owned, rules=rules).text
    assert out == (
        "<!-- memvault:begin decisions -->\n> Ask Sarah before adding here.\n"
        "- [[decisions/b]] - B\n- [[decisions/a]] - A\n<!-- memvault:end decisions -->\n"
    )


def test_a_description_edited_by_a_person_is_kept_and_not_duplicated() -> None:
    rules = [DEFAULT_SECTIONS[1]]
    cat = [entry("people/ana.md", "Data lead", updated="2024-01-01")]
    first = run("<!-- memvault:begin people -->\n<!-- memvault:end people -->\n", cat, rules=rules)
    edited = first.text.replace("Data lead", "Data lead — call before noon!")
    cat = [entry("people/ana.md", "Data lead, Berlin", updated="2024-02-01")]
    out = run(edited, cat, owned=first.owned, rules=rules).text
    assert out.count("[[people/ana]]") == 1
    assert "Data lead — call before noon!" in out


def test_a_summary_change_updates_the_daemons_own_line() -> None:
    rules = [DEFAULT_SECTIONS[1]]
    first = run(
        "<!-- memvault:begin people -->\n<!-- memvault:end people -->\n",
        [entry("people/ana.md", "Old")],
        rules=rules,
    )
    out = run(first.text, [entry("people/ana.md", "New")], owned=first.owned, rules=rules).text
    assert "- [[people/ana]] - New\n" in out and "Old" not in out


def test_delete_removes_the_daemons_entry_but_not_a_persons_line() -> None:
    rules = [DEFAULT_SECTIONS[1]]
    cat = [entry("people/ana.md", "A"), entry("people/bo.md", "B")]
    first = run("<!-- memvault:begin people -->\n<!-- memvault:end people -->\n", cat, rules=rules)
    edited = first.text.replace(
        "<!-- memvault:end", "- [[people/bo]] my own words\n<!-- memvault:end"
    )
    out = run(edited, [], owned=first.owned, rules=rules).text
    assert (
        out
        == "<!-- memvault:begin people -->\n- [[people/bo]] my own words\n<!-- memvault:end people -->\n"
    )


def test_overflow_links_the_folder_note_and_keeps_the_section_short() -> None:
    rule = SectionRule("decisions", "Recent Decisions", "decisions", {}, "date", 3)
    cat = [entry(f"decisions/d{i:02}.md", f"D{i}", date=f"2024-01-{i:02}") for i in range(1, 41)]
    update = run(
        "<!-- memvault:begin decisions -->\n<!-- memvault:end decisions -->\n", cat, rules=[rule]
    )
    lines = update.text.splitlines()
    assert lines[1:4] == [
        "- [[decisions/d40]] - D40",
        "- [[decisions/d39]] - D39",
        "- [[decisions/d38]] - D38",
    ]
    assert lines[4] == "- [[decisions/decisions|37 more]]"
    assert update.overflow["decisions"] == 40  # how many notes: the folder note lists them
    again = run(update.text, cat, owned=update.owned, rules=[rule])
    assert again.text == update.text
    # the overflow line as earlier versions wrote it is still the daemon's
    old = update.text.replace("|37 more]]", "|37 more decisions]]")
    assert run(old, cat, owned={}, rules=[rule]).text == update.text


def test_without_a_folder_note_to_keep_the_overflow_line_links_nothing() -> None:
    rule = SectionRule("people", "Key People", "people", {}, "title", 1)
    cat = [entry("people/ana.md", "Ana"), entry("people/bo.md", "Bo")]
    text = "<!-- memvault:begin people -->\n<!-- memvault:end people -->\n"
    update = run(text, cat, rules=[rule], unlinked_folders={"people"})
    assert update.text.splitlines()[1:3] == ["- [[people/ana]] - Ana", "- 1 more in people/"]
    again = run(update.text, cat, rules=[rule], unlinked_folders={"people"})
    assert again.text == update.text


@pytest.mark.parametrize("folder", [" Drafts", "Drafts "])
def test_a_section_of_a_folder_spaced_at_an_end_links_its_notes_and_folder_note_there(
    folder: str,
) -> None:
    """A section of a person's `` Drafts/`` listed ``[[ Drafts/a]]`` and overflowed to
    ``[[ Drafts/ Drafts|1 more]]``; of ``Drafts /``, ``[[Drafts /Drafts |1 more]]``:
    Obsidian reads a link's name trimmed, so each led nowhere. Each leads there now."""
    rule = SectionRule("drafts", "Drafts", folder, {}, "title", 1)
    cat = [entry(f"{folder}/a.md", "A"), entry(f"{folder}/b.md", "B")]
    update = run(
        "<!-- memvault:begin drafts -->\n<!-- memvault:end drafts -->\n", cat, rules=[rule]
    )
    lines = update.text.splitlines()[1:3]
    index = LinkIndex([f"{folder}/a.md", f"{folder}/b.md", f"{folder}/{folder}.md"])
    led = [index.resolve(link.target, "MEMORY.md").path for link in find_links("\n".join(lines))]
    assert led == [f"{folder}/a.md", f"{folder}/{folder}.md"], lines


@pytest.mark.parametrize("folder", [" Drafts", "Drafts "])
def test_a_section_of_a_folder_spaced_at_an_end_is_updated_in_place(folder: str) -> None:
    """Its overflow line written ``[[/ Drafts/ Drafts.md|1 more]]`` was not known for
    memvault's when read again (a person's line: kept, and another added below at each
    count), nor the line of a note since deleted (``[[/ Drafts/a.md]]``: not in the
    folder, read as written): MEMORY.md grew at every change. Updated, the section is
    what a fresh one of the same notes is; so is one an earlier memvault wrote
    (``[[ Drafts/a]]``, ``[[ Drafts/ Drafts|1 more]]``)."""
    rule = SectionRule("drafts", "Drafts", folder, {}, "title", 1)
    empty = "<!-- memvault:begin drafts -->\n<!-- memvault:end drafts -->\n"
    names = ["a", "b", "c"]
    first = run(empty, [entry(f"{folder}/{n}.md", n.upper()) for n in names], rules=[rule])
    for now in (["a", "b", "c", "d"], ["b", "c", "d"]):  # one more, then one deleted
        cat = [entry(f"{folder}/{n}.md", n.upper()) for n in now]
        again = run(first.text, cat, owned=first.owned, rules=[rule])
        assert again.text == run(empty, cat, rules=[rule]).text, again.text
        first = again
    earlier = empty.replace("\n", f"\n- [[{folder}/a]] - A\n- [[{folder}/{folder}|2 more]]\n", 1)
    cat = [entry(f"{folder}/{n}.md", n.upper()) for n in ["a", "b", "c"]]
    owned = {"drafts": (f"- [[{folder}/a]] - A",)}
    assert run(earlier, cat, owned=owned, rules=[rule]).text == run(empty, cat, rules=[rule]).text


def test_filter_and_order_rules() -> None:
    rule = DEFAULT_SECTIONS[0]  # projects with status = active, newest updated first
    cat = [
        entry("projects/a.md", "A", status="active", updated="2024-01-01"),
        entry("projects/b.md", "B", status="done", updated="2024-05-01"),
        entry("projects/c.md", "C", status="Active", updated="2024-03-01"),
    ]
    assert [e.path for e in select(rule, cat)] == ["projects/c.md", "projects/a.md"]


def test_a_note_named_like_its_folder_is_listed_like_any_other() -> None:
    """The catalogue holds notes only (the engine leaves out the folder notes memvault
    keeps); a person's `projects/projects.md` is a note like the others."""
    rule = DEFAULT_SECTIONS[0]
    cat = [entry("projects/projects.md", "All my projects", status="active")]
    assert [e.path for e in select(rule, cat)] == ["projects/projects.md"]


@pytest.mark.parametrize(
    "text",
    [
        "<!-- memvault:begin people -->\n- x\n",
        "<!-- memvault:end people -->\n",
        "<!-- memvault:begin people -->\n<!-- memvault:begin logs -->\n",
        "<!-- memvault:begin people -->\n<!-- memvault:end logs -->\n",
        "<!-- memvault:begin a -->\n<!-- memvault:end a -->\n<!-- memvault:begin a -->\n<!-- memvault:end a -->\n",
    ],
)
def test_markers_that_do_not_pair_up_are_an_error_never_a_repair(text: str) -> None:
    with pytest.raises(MarkerError):
        run(text, [entry("people/ana.md", "A")])


def test_a_deleted_section_comes_back_while_it_has_notes_to_list() -> None:
    # nothing records "deleted on purpose" apart from the files (git would carry
    # or lose such a verdict); a section is dropped by removing it from memory.sections
    text = "# Memory\nmy notes\n"
    update = run(text, [entry("people/ana.md", "A")], seen={"people"}, rules=[DEFAULT_SECTIONS[1]])
    assert "<!-- memvault:begin people -->\n- [[people/ana]] - A\n" in update.text
    assert update.text.startswith(text)
    # with nothing to list, nothing is appended
    assert run(text, [], rules=[DEFAULT_SECTIONS[1]]).text == text


def test_a_section_never_seen_is_appended_with_the_files_line_endings() -> None:
    out = run(
        "# Memory\r\nmine\r\n", [entry("people/ana.md", "A")], rules=[DEFAULT_SECTIONS[1]]
    ).text
    assert out == (
        "# Memory\r\nmine\r\n\r\n## Key People\r\n<!-- memvault:begin people -->\r\n"
        "- [[people/ana]] - A\r\n<!-- memvault:end people -->\r\n"
    )


def test_no_memory_file_starts_a_fresh_index() -> None:
    out = run(None, template_catalogue(), seen={"people", "logs"}).text
    assert out.startswith("# Memory Index\n")
    # every section with a note to list (the example has no note at the vault root)
    assert all(f"<!-- memvault:begin {r.name} -->" in out for r in DEFAULT_SECTIONS if r.folder)
    assert "memvault:begin topics" not in out


def test_two_notes_with_the_same_summary_are_both_listed() -> None:
    cat = [entry("people/a/x.md", "Same"), entry("people/b/x.md", "Same")]
    out = run(
        "<!-- memvault:begin people -->\n<!-- memvault:end people -->\n",
        cat,
        rules=[DEFAULT_SECTIONS[1]],
    ).text
    assert "[[people/a/x]] - Same" in out and "[[people/b/x]] - Same" in out


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("people/Ana López.md", "- [[people/Ana López]] - s"),
        ("people/with space.md", "- [[people/with space]] - s"),
        ("people/C# fan.md", "- `people/C# fan.md` - s"),
        ("people/a|b.md", "- `people/a|b.md` - s"),
        ("people/[x].md", "- `people/[x].md` - s"),
    ],
)
def test_entry_lines_for_awkward_names(path: str, line: str) -> None:
    assert entry_line(entry(path, "s")) == line


def test_unlinkable_names_are_reported() -> None:
    update = run(
        "<!-- memvault:begin people -->\n<!-- memvault:end people -->\n",
        [entry("people/C# fan.md", "s")],
        rules=[DEFAULT_SECTIONS[1]],
    )
    assert update.problems and "cannot link" in update.problems[0]


def test_500_notes_keep_memory_md_under_60_lines() -> None:
    cat = template_catalogue()
    for i in range(124):
        day = datetime.date(2023, 1, 1) + datetime.timedelta(days=i)
        cat.append(entry(f"projects/p{i}.md", f"P{i}", status="active", updated=day.isoformat()))
        cat.append(entry(f"people/person-{i}.md", f"Person {i}"))
        cat.append(entry(f"decisions/d{i}.md", f"D{i}", date=day.isoformat()))
        cat.append(entry(f"logs/{day.isoformat()}.md", f"Log {i}"))
    text = (TEMPLATE / "MEMORY.md").read_text(encoding="utf-8")
    assert len({e.path for e in cat}) == 500
    out = run(text, cat).text
    assert len(out.splitlines()) < 60


def test_folder_note_keeps_a_persons_text_around_its_list() -> None:
    cat = [entry("decisions/a.md", "A"), entry("decisions/b.md", "B")]
    first = render_folder_note(None, "decisions", cat, "decisions")
    edited = first.replace("# Decisions\n", "# Decisions\nMy intro.\n") + "My outro.\n"
    out = render_folder_note(edited, "decisions", cat[:1], "decisions")
    assert "My intro." in out and out.endswith("My outro.\n")
    assert "[[decisions/b]]" not in out and "[[decisions/a]] - A" in out


def test_a_folder_notes_second_count_line_from_a_merge_goes() -> None:
    # git's merge=union keeps both clones' count lines: memvault's by their form, one stays
    cat = [entry("decisions/a.md", "A"), entry("decisions/b.md", "B")]
    first = render_folder_note(None, "decisions", cat, "decisions")
    count = count_line(2, "decisions")
    merged = first.replace(count, count_line(5, "decisions") + "\nMine.\n" + count, 1)
    out = render_folder_note(merged, "decisions", cat, "decisions")
    assert out == first.replace(count, count + "\nMine.", 1)


human_line = st.text(
    alphabet=st.sampled_from(list("abc XYZ-*[]#>|\t")), min_size=1, max_size=30
).filter(lambda s: "memvault:" not in s and s.strip() != "")


@settings(max_examples=150, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["add", "remove", "human", "human_in"]), st.integers(0, 30), human_line
        ),
        max_size=25,
    )
)
def test_human_bytes_survive_any_sequence_of_edits_and_syncs(ops: list) -> None:
    rules = [SectionRule("people", "Key People", "people", {}, "title", 5)]
    text = (
        "# Memory\n\n## Key People\n<!-- memvault:begin people -->\n<!-- memvault:end people -->\n"
    )
    notes: dict[str, CatalogueEntry] = {}
    owned: dict = {}
    human: list[str] = []
    for op, n, words in ops:
        if op == "add":
            notes[f"people/p{n}.md"] = entry(f"people/p{n}.md", f"Person {n}")
        elif op == "remove":
            notes.pop(f"people/p{n}.md", None)
        else:
            line = f"{words} h{len(human)}"
            lines = text.split("\n")
            if op == "human":
                lines.insert(n % len(lines), line)
            else:
                begin = next(i for i, ln in enumerate(lines) if "memvault:begin" in ln)
                lines.insert(begin + 1, line)
            text = "\n".join(lines)
            human.append(line)
        update = run(text, list(notes.values()), owned=owned, rules=rules)
        text, owned = update.text, update.owned
        for line in human:
            assert line in text.split("\n")
    listed = [ln for ln in text.split("\n") if ln.startswith("- [[people/")]
    assert len(listed) <= 5 + 1


def test_a_persons_nested_lines_in_a_section_are_relinked_in_context() -> None:
    # read alone, "    - [[notes/alpha]]" would be indented code; under a list item it is a
    # nested item, and Obsidian (and the rename) follow its link
    from memvault.core.relink import relink_note

    before = LinkIndex(["notes/alpha.md", "MEMORY.md"])
    after = LinkIndex(["notes/beta.md", "MEMORY.md"])
    moves = {"notes/alpha.md": "notes/beta.md"}
    text = (
        "# Memory\n\n<!-- memvault:begin logs -->\n- mine\n    - [[notes/alpha]]\n"
        "<!-- memvault:end logs -->\n"
    )
    update = run(
        text,
        [],
        rules=[DEFAULT_SECTIONS[3]],
        rewrite=lambda t: relink_note(t, "MEMORY.md", "MEMORY.md", before, after, moves).text,
    )
    assert "- mine\n    - [[beta]]\n" in update.text


# -- intent from the files alone ---------------------------------------------------

PEOPLE = SectionRule("people", "Key People", "people", {}, "title", 3)
FOUR = [entry(f"people/{n}.md", n.title()) for n in ("ana", "bo", "cy", "di")]


def people_section(*lines: str) -> str:
    return (
        "\n".join(["<!-- memvault:begin people -->", *lines, "<!-- memvault:end people -->"]) + "\n"
    )


def test_a_note_that_says_memory_index_false_stays_out_and_the_next_moves_up() -> None:
    notes = [*FOUR]
    notes[1] = entry("people/bo.md", "Bo", **{"memory-index": False})
    update = run(people_section(), notes, rules=[PEOPLE])
    assert update.text.splitlines()[1:-1] == [
        "- [[people/ana]] - Ana",
        "- [[people/cy]] - Cy",
        "- [[people/di]] - Di",
    ]
    for value in ("false", "no", "hide", "off"):
        quiet = [*FOUR[:1], entry("people/bo.md", "Bo", **{"memory-index": value}), *FOUR[2:]]
        assert "people/bo" not in run(people_section(), quiet, rules=[PEOPLE]).text
    # a line for it memvault wrote earlier goes; the count leaves it out too
    more = [*notes, entry("people/ed.md", "Ed")]
    listed = run(people_section("- [[people/bo]] - Bo"), more, rules=[PEOPLE])
    assert "people/bo" not in listed.text and "[[people/people|1 more]]" in listed.text


def test_an_entry_deleted_by_hand_comes_back() -> None:
    # deliberately unlike earlier versions: a deleted line is no verdict (git, a stale
    # editor buffer or a lost index delete lines too); `memory-index: false` is
    first = run(people_section(), FOUR, rules=[PEOPLE])
    edited = first.text.replace("- [[people/bo]] - Bo\n", "")
    again = run(edited, FOUR, owned=first.owned, rules=[PEOPLE])
    assert again.text == first.text


def test_memvaults_lines_are_known_without_any_history_so_limits_hold() -> None:
    # item 4: the index lost, a new note pushes Cy out of the top 3: Cy's old line is
    # memvault's (the entry form, a note of the folder), not a person's
    first = run(people_section(), FOUR, rules=[PEOPLE])
    newer = [entry("people/al.md", "Al"), *FOUR]
    update = run(first.text, newer, owned={}, rules=[PEOPLE])
    body = update.text.splitlines()[1:-1]
    assert body == [
        "- [[people/al]] - Al",
        "- [[people/ana]] - Ana",
        "- [[people/bo]] - Bo",
        "- [[people/people|2 more]]",
    ]
    # a line memvault wrote for a note since deleted goes too
    gone = [e for e in FOUR if e.path != "people/ana.md"]
    assert "people/ana" not in run(first.text, gone, owned=first.owned, rules=[PEOPLE]).text


def test_a_persons_line_for_a_note_still_to_come_is_kept() -> None:
    # a person types a line in memvault's form for a note not written yet (Obsidian
    # makes the note when its link is clicked): their words, not a stale line of ours
    mine = "- [[people/zed]] - Zed, our contractor: phone 555-0100"
    text = people_section("- [[people/ana]] - Ana", mine)
    first = run(text, FOUR[:1], rules=[PEOPLE])
    assert mine in first.text.splitlines()
    assert run(first.text, FOUR[:1], owned=first.owned, rules=[PEOPLE]).text == first.text
    # once the note is there it is listed by that line, not a second time
    zed = entry("people/zed.md", "Zed")
    after = run(first.text, [*FOUR[:1], zed], owned=first.owned, rules=[PEOPLE])
    assert after.text.splitlines()[1:-1] == ["- [[people/ana]] - Ana", mine]


def test_an_older_memory_md_brought_back_hides_nothing() -> None:
    # item 2/3: git restore, an editor's stale buffer: whatever older file comes back, the
    # next update lists every note the rule lists, as a fresh index would
    old = run(people_section(), FOUR[:2], rules=[PEOPLE])
    now = [entry("people/al.md", "Al"), *FOUR]
    current = run(old.text, now, rules=[PEOPLE])
    restored = run(old.text, now, owned=current.owned, rules=[PEOPLE])
    assert restored.text == current.text
    assert "people/al" in current.text and "[[people/people|2 more]]" in current.text


def test_an_entry_a_person_rewrote_is_theirs() -> None:
    first = run(people_section(), FOUR, rules=[PEOPLE])
    edited = first.text.replace("- [[people/bo]] - Bo", "- [[people/bo]] - Bo, who owns billing")
    update = run(edited, FOUR, owned=first.owned, rules=[PEOPLE])
    assert update.text.count("people/bo") == 1 and "who owns billing" in update.text
    # a fresh index (no history) reads it the same way
    assert run(edited, FOUR, owned={}, rules=[PEOPLE]).text == update.text


def test_a_summary_change_reaches_a_line_memvault_wrote() -> None:
    first = run(people_section(), FOUR, rules=[PEOPLE])
    changed = [entry("people/ana.md", "Ana, now CTO"), *FOUR[1:]]
    update = run(first.text, changed, owned=first.owned, rules=[PEOPLE])
    assert "- [[people/ana]] - Ana, now CTO" in update.text
    assert "- [[people/ana]] - Ana\n" not in update.text


def test_order_follows_what_git_keeps_never_mtimes() -> None:
    # item 5: the same files with other mtimes (a fresh clone) order the same
    rule = SectionRule("decisions", "Recent Decisions", "decisions", {}, "date", 8)
    names = ["b", "a", "c", "d"]
    one = [entry(f"decisions/{n}.md", n, mtime=i, date="2024-01-01") for i, n in enumerate(names)]
    two = [entry(f"decisions/{n}.md", n, mtime=-i, date="2024-01-01") for i, n in enumerate(names)]
    empty = DECISIONS.format("")
    assert run(empty, one, rules=[rule]).text == run(empty, two, rules=[rule]).text
    for order in ("updated", "mtime"):
        r = dataclasses.replace(rule, order=order)
        assert run(empty, one, rules=[r]).text == run(empty, two, rules=[r]).text
    # newest first by date, then by path; a longer stamp before its prefix
    dated = [
        entry("decisions/x.md", "x", date="2024-03"),
        entry("decisions/y.md", "y", date="2024-03-12"),
        entry("decisions/z.md", "z"),
        entry("decisions/w.md", "w", date="2024-03-12"),
    ]
    assert [e.path for e in select(rule, dated)] == [
        "decisions/w.md",
        "decisions/y.md",
        "decisions/x.md",
        "decisions/z.md",
    ]


def test_a_persons_line_stays_where_they_put_it_when_the_overflow_line_comes() -> None:
    # item 6: a person's line below the entries stays below them and above nothing new
    first = run(people_section(), FOUR[:2], rules=[PEOPLE])
    edited = first.text.replace("<!-- memvault:end", "> ask Ana first\n<!-- memvault:end")
    update = run(edited, FOUR, owned=first.owned, rules=[PEOPLE])
    assert update.text.splitlines()[1:-1] == [
        "- [[people/ana]] - Ana",
        "- [[people/bo]] - Bo",
        "- [[people/cy]] - Cy",
        "- [[people/people|1 more]]",
        "> ask Ana first",
    ]
    # and a person's line between entries keeps its place among them
    mid = update.text.replace("- [[people/bo]] - Bo\n", "- [[people/bo]] - Bo\n  my aside\n")
    again = run(mid, FOUR, rules=[PEOPLE])
    assert again.text.splitlines()[2:4] == ["- [[people/bo]] - Bo", "  my aside"]
    assert run(again.text, FOUR, rules=[PEOPLE]).text == again.text


def test_notes_at_the_vault_root_have_their_section() -> None:
    # Claude Code's topic files at the vault root
    rule = next(r for r in DEFAULT_SECTIONS if r.folder == "")
    cat = [entry("debugging.md", "How we debug"), entry("api-conventions.md", "API rules")]
    cat += [entry(f"t{i}.md", f"T{i}") for i in range(7)]
    cat.append(entry("people/ana.md", "Ana"))
    update = run("# Memory\n", cat, rules=[rule])
    body = update.text.split("<!-- memvault:begin topics -->\n")[1].split("<!--")[0]
    assert body.splitlines()[:2] == [
        "- [[api-conventions]] - API rules",
        "- [[debugging]] - How we debug",
    ]
    # no section lists people/ here, and the root's does not name it: one of memvault's
    # four folders, whose section was taken out of memory.sections
    assert body.splitlines()[-1] == "- 3 more at the vault root"
    assert "people/ana" not in update.text
    assert run(update.text, cat, rules=[rule]).text == update.text


@settings(max_examples=100, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["add", "remove", "summary", "human_in", "drop_line", "restore"]),
            st.integers(0, 12),
        ),
        max_size=20,
    )
)
def test_a_fresh_index_writes_the_same_memory_md(ops: list) -> None:
    """Whatever happened (edits, deleted lines, an older file brought back), once updated,
    MEMORY.md is what an update without any history writes from the same files."""
    rules = [SectionRule("people", "Key People", "people", {}, "title", 4)]
    text = people_section()
    notes: dict[str, CatalogueEntry] = {}
    owned: dict = {}
    history = [text]
    for op, n in ops:
        if op == "add":
            notes[f"people/p{n}.md"] = entry(f"people/p{n}.md", f"Person {n}")
        elif op == "remove":
            notes.pop(f"people/p{n}.md", None)
        elif op == "summary" and f"people/p{n}.md" in notes:
            notes[f"people/p{n}.md"] = entry(f"people/p{n}.md", f"Person {n} v{len(history)}")
        elif op == "human_in":
            text = text.replace("<!-- memvault:end", f"> mine {len(history)}\n<!-- memvault:end")
        elif op == "drop_line":
            lines = text.split("\n")
            entries = [i for i, ln in enumerate(lines) if ln.startswith("- ")]
            if entries:
                del lines[entries[n % len(entries)]]
            text = "\n".join(lines)
        elif op == "restore":
            text = history[n % len(history)]
        update = run(text, list(notes.values()), owned=owned, rules=rules)
        text = update.text
        owned = {k: tuple({*owned.get(k, ()), *v}) for k, v in update.owned.items()}
        history.append(text)
        fresh = run(text, list(notes.values()), owned={}, rules=rules)
        assert fresh.text == text
        listed = [ln for ln in text.split("\n") if ln.startswith("- [[people/")]
        assert len(listed) <= 4 + 1
        shown = {p for p in notes if f"[[{p[:-3]}]]" in text}
        assert len(shown) == min(4, len(notes))  # the top 4, none hidden


# -- mid-reconcile: notes on disk not indexed yet ----------------------------------------------

DECISIONS = (
    "## Recent Decisions\n<!-- memvault:begin decisions -->\n{}<!-- memvault:end decisions -->\n"
)


def run_pending(text, catalogue, pending, owned=None, **kw):
    """``run`` with the resolver seeing the pending notes too (they are on disk)."""
    idx = LinkIndex([e.path for e in catalogue] + list(pending) + ["MEMORY.md"])

    def resolve(target: str) -> str | None:
        res = idx.resolve(target, "MEMORY.md")
        return res.path if res.verdict == "resolved" else None

    rules = [dataclasses.replace(DEFAULT_SECTIONS[2], limit=2)]
    return update_memory(
        text, catalogue, rules, owned or {}, (), resolve=resolve, pending=pending, **kw
    )


def test_mid_reconcile_a_daemon_line_for_a_note_not_indexed_yet_stays_where_it_is() -> None:
    old = "- [[decisions/old]] - the daemon's line\n"
    text = DECISIONS.format(old)
    owned = {"decisions": ("- [[decisions/old]] - the daemon's line",)}
    cat = [entry("decisions/new.md", "New", date="2024-05-01")]
    kept = run_pending(text, cat, {"decisions/old.md"}, owned).text
    assert kept == DECISIONS.format(old + "- [[decisions/new]] - New\n")
    # once it is indexed (or known gone) the same inputs drop it: the rule is what kept it
    assert run_pending(text, cat, set(), owned).text == DECISIONS.format(
        "- [[decisions/new]] - New\n"
    )


def test_mid_reconcile_a_folders_count_waits_and_its_folder_note_is_not_rewritten() -> None:
    more = "- [[decisions/decisions|40 more]]\n"
    text = DECISIONS.format("- [[decisions/a]] - A\n" + more)
    cat = [
        entry(f"decisions/{c}.md", c.upper(), date=f"2024-0{i + 1}-01")
        for i, c in enumerate("abcd")
    ]
    owned = {"decisions": ("- [[decisions/a]] - A",)}
    update = run_pending(text, cat, {"decisions/zz.md"}, owned)
    assert update.text == DECISIONS.format("- [[decisions/d]] - D\n- [[decisions/c]] - C\n" + more)
    assert "decisions" not in update.overflow  # the folder note waits for the whole folder
    # no count was there: none is made up
    bare = run_pending(DECISIONS.format(""), cat, {"decisions/zz.md"}).text
    assert bare == DECISIONS.format("- [[decisions/d]] - D\n- [[decisions/c]] - C\n")
    # pending notes elsewhere do not hold this folder's count back
    counted = run_pending(text, cat, {"people/zz.md"}, owned)
    assert "[[decisions/decisions|2 more]]" in counted.text and "decisions" in counted.overflow


# -- the root's section names the other top-level folders ----------------------------------
#
# A field test: `memvault init` on Obsidian's help (173 notes in 16 folders of its own)
# gave a MEMORY.md listing the 2 notes at the root, nothing of the other 171 or of where
# they were, and `context` opens with this index.


def topics_of(text: str) -> list[str]:
    return text.split("<!-- memvault:begin topics -->\n")[1].split("<!--")[0].splitlines()


def test_the_root_section_names_the_folders_no_section_lists() -> None:
    cat = [entry("Home.md", "Start here")]
    cat += [entry(f"Plugins/p{i}.md", f"P{i}") for i in range(3)]
    cat += [entry(f"Bases/b{i}.md") for i in range(3)] + [entry("Bases/deep/x.md")]
    cat += [entry("Archive/old.md"), entry("people/ana.md", "Ana")]  # people/ has its section
    cat += [entry("Archive/hidden.md", **{"memory-index": False})]  # kept out: not counted
    update = run("# Memory\n", cat)
    assert topics_of(update.text) == [
        "- [[Home]] - Start here",
        "- 4 notes in Bases/",  # the biggest first, then by name; subfolders counted
        "- 3 notes in Plugins/",
        "- 1 note in Archive/",
    ]
    assert run(update.text, cat).text == update.text  # nothing to change: the same text
    # a note more, a folder emptied: the lines follow; a person's line stays where it was
    edited = update.text.replace("- 1 note in Archive/\n", "- 1 note in Archive/\nmy own line\n")
    cat2 = [e for e in cat if not e.path.startswith("Archive/")] + [entry("Plugins/p9.md")]
    again = run(edited, cat2, owned=update.owned)  # the emptied folder's line: memvault's
    assert topics_of(again.text) == [
        "- [[Home]] - Start here",
        "- 4 notes in Bases/",
        "- 4 notes in Plugins/",
        "my own line",
    ]


def test_past_eight_folders_the_rest_is_counted() -> None:
    cat = [entry(f"F{i:02d}/n{j}.md") for i in range(11) for j in range(i + 1)]
    lines = topics_of(run("# Memory\n", cat).text)
    assert lines == [f"- {n} notes in F{n - 1:02d}/" for n in range(11, 3, -1)] + [
        "- 3 more folders"
    ]


def test_a_nested_section_folder_leaves_the_rest_of_its_top_folder_to_the_root() -> None:
    work = SectionRule("people", "People", "work/people", {}, "title", 10)
    root = next(r for r in DEFAULT_SECTIONS if r.folder == "")
    cat = [entry("work/people/ana.md", "Ana"), entry("work/plan.md"), entry("work/q/x.md")]
    lines = topics_of(run("# Memory\n", cat, rules=[work, root]).text)
    assert lines == ["- 2 notes in work/"]


def test_the_folder_lines_wait_while_their_notes_are_indexed() -> None:
    cat = [entry("Home.md", "Start"), entry("Plugins/a.md")]
    first = run("# Memory\n", cat)
    pending = run_pending(first.text, cat, ["Plugins/b.md"])
    assert "- 1 note in Plugins/" in pending.text  # as it was until b.md is indexed
    done = run(first.text, [*cat, entry("Plugins/b.md")])
    assert "- 2 notes in Plugins/" in done.text


def test_a_persons_line_shaped_like_a_folder_line_is_theirs() -> None:
    """A review: any "- N notes in X/" or "- N more folders" in the root's section was
    taken for memvault's and deleted; only the folders counted now (or lines memvault
    wrote) are."""
    text = (
        "# Memory\n<!-- memvault:begin topics -->\n- [[Home]] - Start here\n"
        "- 40 notes in my old Evernote export, see Archive/\n- 12 more folders\n"
        "- 7 notes in Plugins/\n<!-- memvault:end topics -->\n"
    )
    cat = [entry("Home.md", "Start here"), entry("Plugins/a.md"), entry("Plugins/b.md")]
    assert topics_of(run(text, cat).text) == [
        "- [[Home]] - Start here",
        "- 40 notes in my old Evernote export, see Archive/",
        "- 12 more folders",
        "- 2 notes in Plugins/",  # memvault's, counted again
    ]
    # Plugins/ emptied: its line was memvault's (owned), so it goes; the person's stay
    first = run(text, cat)
    gone = run(first.text, cat[:1], owned=first.owned)
    assert topics_of(gone.text) == [
        "- [[Home]] - Start here",
        "- 40 notes in my old Evernote export, see Archive/",
        "- 12 more folders",
    ]


def test_a_folder_no_line_can_name_is_left_out() -> None:
    cat = [entry("Home.md", "Start"), entry("a\nb/x.md"), entry("tab\there/y.md")]
    assert topics_of(run("# Memory\n", cat).text) == ["- [[Home]] - Start"]


def test_a_note_name_no_line_can_hold_is_one_line_that_stays() -> None:
    """A review: a root note named ``evil\\nname.md`` (a script can make one) broke its
    entry line in two, and each update added another."""
    cat = [entry("evil\nname.md", "evil"), entry("Home.md", "Start")]
    first = run("# Memory\n", cat)
    # (case aside, as Obsidian's file explorer orders names: e before H)
    assert topics_of(first.text) == ["- `evil\\nname.md` - evil", "- [[Home]] - Start"]
    assert run(first.text, cat, owned=first.owned).text == first.text
    assert run(first.text, cat).text == first.text


# -- notes that say the same thing (core/memory_copies) ---------------------------------------

TOPICS = next(r for r in DEFAULT_SECTIONS if r.folder == "")
FACT = "The staging database password rotates every Monday at 09:00."


def topics(text: str) -> list[str]:
    return text.split("<!-- memvault:begin topics -->\n")[1].split("<!--")[0].splitlines()


def test_copies_of_one_text_are_one_line_counting_them() -> None:
    """An agent saved one fact as fact-1.md ... fact-10.md: the Topics section was six
    lines of the same words and "4 more at the vault root". The copies are one line that
    counts them, and the section's other notes keep their places."""
    cat = [entry(f"fact-{i}.md", FACT) for i in range(1, 11)]
    cat += [entry("api.md", "API rules"), entry("zeta.md", "Zeta notes")]
    cat += [entry(f"z{i}.md", f"Z {i}") for i in range(5)]
    update = run("# Memory\n", cat, rules=[TOPICS])
    assert topics(update.text) == [
        "- [[api]] - API rules",
        f"- [[fact-1]] - {FACT} (9 more notes say the same)",
        "- [[z0]] - Z 0",
        "- [[z1]] - Z 1",
        "- [[z2]] - Z 2",
        "- [[z3]] - Z 3",
        "- 2 more at the vault root",  # z4 and zeta: 17 notes, 6 lines, 9 copies counted
    ]
    assert run(update.text, cat, rules=[TOPICS]).text == update.text
    assert run(update.text, cat, owned=update.owned, rules=[TOPICS]).text == update.text
    # one copy is "1 more note says the same"; none left, the plain line again
    two = run(update.text, [*cat[:2], *cat[10:]], rules=[TOPICS])
    assert f"- [[fact-1]] - {FACT} (1 more note says the same)" in topics(two.text)
    one = run(two.text, [cat[0], *cat[10:]], rules=[TOPICS])
    assert f"- [[fact-1]] - {FACT}" in topics(one.text)
    assert "say" not in one.text


def test_the_lines_an_older_memvault_wrote_for_copies_become_one() -> None:
    """A MEMORY.md written before (six lines of one fact, by a daemon whose history is
    lost) is memvault's lines all the same: a fresh index writes the one line."""
    cat = [entry(f"fact-{i}.md", FACT) for i in range(1, 11)]
    old = "".join(f"- [[fact-{i}]] - {FACT}\n" for i in (1, 10, 2, 3, 4, 5))
    text = f"# Memory\n\n## Topics\n<!-- memvault:begin topics -->\n{old}"
    text += "- 4 more at the vault root\n<!-- memvault:end topics -->\n"
    assert topics(run(text, cat, rules=[TOPICS]).text) == [
        f"- [[fact-1]] - {FACT} (9 more notes say the same)"
    ]


def test_a_days_log_is_its_own_whatever_its_first_entry_says() -> None:
    """Copies share their words and their date: a standup every morning is seven days,
    seven lines; the same decision saved five times the same day is one."""
    logs = next(r for r in DEFAULT_SECTIONS if r.name == "logs")
    days = [entry(f"logs/2026-03-0{d}.md", "09:00 standup") for d in range(1, 10)]
    assert [ln for ln in section_of(run("# M\n", days, rules=[logs]).text, "logs")] == [
        *(f"- [[logs/2026-03-0{d}]] - 09:00 standup" for d in range(9, 2, -1)),
        "- [[logs/logs|2 more]]",
    ]
    decisions = next(r for r in DEFAULT_SECTIONS if r.name == "decisions")
    same = [
        entry(f"decisions/use-pg-{i}.md", "Use PostgreSQL", date="2026-03-05") for i in range(5)
    ]
    later = entry("decisions/use-pg-again.md", "Use PostgreSQL", date="2026-04-01")
    assert section_of(run("# M\n", [*same, later], rules=[decisions]).text, "decisions") == [
        "- [[decisions/use-pg-again]] - Use PostgreSQL",
        "- [[decisions/use-pg-0]] - Use PostgreSQL (4 more notes say the same)",
    ]


def section_of(text: str, name: str) -> list[str]:
    return text.split(f"<!-- memvault:begin {name} -->\n")[1].split("<!--")[0].splitlines()


def test_a_persons_line_for_a_copy_is_kept_and_the_other_copies_are_counted() -> None:
    """A person's own line linking the first copy stays theirs; the notes saying the same
    are counted in the "N more" line, never dropped from every count."""
    cat = [entry(f"fact-{i}.md", FACT) for i in range(1, 5)]
    mine = "- [[fact-1]] the password fact, see the runbook\n"
    text = f"# Memory\n\n## Topics\n<!-- memvault:begin topics -->\n{mine}<!-- memvault:end topics -->\n"
    update = run(text, cat, rules=[TOPICS])
    assert topics(update.text) == [mine.rstrip("\n"), "- 3 more at the vault root"]
    assert run(update.text, cat, rules=[TOPICS]).text == update.text


@settings(max_examples=100, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["add", "copy", "remove", "human_in", "drop_line", "restore"]),
            st.integers(0, 12),
        ),
        max_size=20,
    )
)
def test_a_fresh_index_writes_the_same_memory_md_with_copies(ops: list) -> None:
    """As above, with notes that say the same thing among them: once updated, MEMORY.md
    is what an update without history writes, and every note is listed or counted."""
    rules = [SectionRule("facts", "Facts", "facts", {}, "title", 4)]
    text = "<!-- memvault:begin facts -->\n<!-- memvault:end facts -->\n"
    notes: dict[str, CatalogueEntry] = {}
    owned: dict = {}
    history = [text]
    for op, n in ops:
        if op == "add":
            notes[f"facts/p{n}.md"] = entry(f"facts/p{n}.md", f"Person {n}")
        elif op == "copy":
            notes[f"facts/p{n}.md"] = entry(f"facts/p{n}.md", "One and the same")
        elif op == "remove":
            notes.pop(f"facts/p{n}.md", None)
        elif op == "human_in":
            text = text.replace("<!-- memvault:end", f"> mine {len(history)}\n<!-- memvault:end")
        elif op == "drop_line":
            lines = text.split("\n")
            entries = [i for i, ln in enumerate(lines) if ln.startswith("- ")]
            if entries:
                del lines[entries[n % len(entries)]]
            text = "\n".join(lines)
        elif op == "restore":
            text = history[n % len(history)]
        update = run(text, list(notes.values()), owned=owned, rules=rules)
        text = update.text
        owned = {k: tuple({*owned.get(k, ()), *v}) for k, v in update.owned.items()}
        history.append(text)
        assert run(text, list(notes.values()), owned={}, rules=rules).text == text
        listed = [ln for ln in text.split("\n") if re.match(r"- \[\[facts/p\d", ln)]
        counted = sum(int(x) for x in re.findall(r"\((\d+) more notes? says? the same\)", text))
        more = re.search(r"\|(\d+) more\]\]", text)
        assert len(listed) + counted + (int(more.group(1)) if more else 0) == len(notes)
        assert len(listed) <= 4


def test_people_of_one_summary_and_one_day_are_each_listed() -> None:
    """Two people are two, whatever their notes say: "Agent 1" and "Agent 2" made the
    same day from one template's summary, "New 3" and "New 20" of one summary, were one
    line "(1 more note says the same)", the other person hidden. A people section (by
    its name, or a folder named people) lists each; a MEMORY.md an older memvault wrote
    with the count becomes the lines a fresh index writes."""
    day = "2026-03-05"
    cat = [entry(f"people/Agent {i}.md", "A coding agent", date=day) for i in (1, 2)]
    cat += [entry(f"people/New {i}.md", "Met at the offsite", date=day) for i in (3, 20)]
    want = [
        "- [[people/Agent 1]] - A coding agent",
        "- [[people/Agent 2]] - A coding agent",
        "- [[people/New 3]] - Met at the offsite",
        "- [[people/New 20]] - Met at the offsite",
    ]
    for rule in (
        SectionRule("people", "Key People", "people", {}, "title", 8),
        SectionRule("people", "Key People", "Team/Humans", {}, "title", 8),
        SectionRule("team", "Team", "work/People", {}, "title", 8),
    ):
        folder = rule.folder
        here = [dataclasses.replace(e, path=e.path.replace("people/", f"{folder}/")) for e in cat]
        mine = [ln.replace("[[people/", f"[[{folder}/") for ln in want]
        blank = f"<!-- memvault:begin {rule.name} -->\n<!-- memvault:end {rule.name} -->\n"
        update = run(blank, here, rules=[rule])
        assert section_of(update.text, rule.name) == mine
        older = blank.replace("-->\n<", f"-->\n{mine[0]} (1 more note says the same)\n<", 1)
        assert run(older, here, rules=[rule]).text == update.text
    # the same notes elsewhere are copies, as an agent's flood of one fact is
    notes = SectionRule("notes", "Notes", "notes", {}, "title", 8)
    elsewhere = [dataclasses.replace(e, path=e.path.replace("people/", "notes/")) for e in cat]
    assert section_of(run("# M\n", elsewhere, rules=[notes]).text, "notes") == [
        "- [[notes/Agent 1]] - A coding agent (1 more note says the same)",
        "- [[notes/New 3]] - Met at the offsite (1 more note says the same)",
    ]


def test_people_of_a_section_named_otherwise_are_each_listed() -> None:
    """A team's people section set up in its own words (`name = "team"`, `folder =
    "Équipe"`: a locale, a rename) is no "people" section by name or folder: its two
    agents of one summary, made the same day, were one line "(1 more note says the
    same)". A note of `type: person` (memvault's person template) is its own person in
    any section; other notes of that section still fold as copies."""
    day = "2026-03-05"
    rule = SectionRule("team", "Team", "Équipe", {}, "title", 8)
    cat = [entry(f"Équipe/Agent {i}.md", "A coding agent", date=day, type="person") for i in (1, 2)]
    cat += [entry(f"Équipe/fact-{i}.md", "Standup at ten", date=day) for i in (1, 2)]
    blank = "<!-- memvault:begin team -->\n<!-- memvault:end team -->\n"
    assert section_of(run(blank, cat, rules=[rule]).text, "team") == [
        "- [[Équipe/Agent 1]] - A coding agent",
        "- [[Équipe/Agent 2]] - A coding agent",
        "- [[Équipe/fact-1]] - Standup at ten (1 more note says the same)",
    ]


def test_projects_of_one_summary_and_one_day_are_each_listed() -> None:
    """A project note names one project, as a person's names one person: "Sprint 1" and
    "Sprint 2" made the same day, each "A two-week sprint" (memvault's project template,
    its summary filled alike), were one line "(1 more note says the same)", the other
    sprint hidden from an agent. A projects section (by name or folder) lists each, so
    does any section a note of ``type: project``; notes of its kind in other folders,
    an agent's fact saved twice, still fold."""
    day = "2026-03-05"
    want = ["- [[{0}/Sprint 1]] - A two-week sprint", "- [[{0}/Sprint 2]] - A two-week sprint"]
    for rule in (
        SectionRule("projects", "Active Projects", "projects", {}, "date", 8),
        SectionRule("work", "Work", "Team/Projects", {}, "date", 8),
        SectionRule("projects", "Projects", "Arbeit", {}, "date", 8),
    ):
        cat = [entry(f"{rule.folder}/Sprint {i}.md", "A two-week sprint", date=day) for i in (1, 2)]
        blank = f"<!-- memvault:begin {rule.name} -->\n<!-- memvault:end {rule.name} -->\n"
        assert section_of(run(blank, cat, rules=[rule]).text, rule.name) == [
            w.format(rule.folder) for w in want
        ]
    notes = SectionRule("notes", "Notes", "notes", {}, "date", 8)
    typed = [
        entry(f"notes/Sprint {i}.md", "A two-week sprint", date=day, type="project") for i in (1, 2)
    ]
    facts = [entry(f"notes/fact-{i}.md", "Standup at ten", date=day) for i in (1, 2)]
    assert section_of(run("# M\n", typed + facts, rules=[notes]).text, "notes") == [
        "- [[notes/fact-1]] - Standup at ten (1 more note says the same)",
        *(w.format("notes") for w in want),
    ]


def test_a_note_whose_type_lists_project_or_person_is_its_own_as_a_filter_reads_it() -> None:
    """``type`` as a list (Obsidian's list property: ``type: [project]``, ``type: [person,
    lead]``) names a project or a person as a section's filter ``type = "project"``
    reads it (``matches``: any of its values): two sprints of one summary made the same
    day, two agents, are each listed, not folded as copies."""
    day = "2026-03-05"
    notes = SectionRule("notes", "Notes", "notes", {}, "date", 8)
    for kind in (["project"], ["Person", "lead"]):
        cat = [entry(f"notes/Item {i}.md", "One of two", date=day, type=kind) for i in (1, 2)]
        assert section_of(run("# M\n", cat, rules=[notes]).text, "notes") == [
            "- [[notes/Item 1]] - One of two",
            "- [[notes/Item 2]] - One of two",
        ]


# -- names with numbers, in the order Obsidian's file explorer shows them ---------------------


def test_names_with_numbers_go_in_the_order_of_their_values_as_obsidian_shows_them() -> None:
    """Topics listed topic-1, topic-10, topic-11, topic-12, topic-2: code point order,
    where Obsidian's file explorer ("File name (A to Z)": a numeric, case- and
    accent-blind collator) shows topic-1, topic-2 ... topic-10. Sections now sort as
    it does, titles too; case aside (alpha before Beta); 007 as 7."""
    cat = [entry(f"topic-{i}.md", f"Topic {i}") for i in (12, 1, 10, 2, 11, 3, 9)]
    assert topics(run("# Memory\n", cat, rules=[TOPICS]).text) == [
        *(f"- [[topic-{i}]] - Topic {i}" for i in (1, 2, 3, 9, 10, 11)),
        "- 1 more at the vault root",
    ]
    by_title = SectionRule("people", "People", "people", {}, "title", 10)
    names = ["Sprint 10", "sprint 2", "Sprint 1", "Beta", "alpha", "Agent 007", "Agent 8"]
    cat = [CatalogueEntry(f"people/{n}.md", n, "", {}, 0) for n in names]
    assert [e.title for e in select(by_title, cat)] == [
        "Agent 007",
        "Agent 8",
        "alpha",
        "Beta",
        "Sprint 1",
        "sprint 2",
        "Sprint 10",
    ]


_COLLATED = r"""
const c = new Intl.Collator(undefined, {numeric: true, sensitivity: "base"});
const names = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = [];
for (let i = 1; i < names.length; i++) {
  if (c.compare(names[i - 1], names[i]) > 0) out.push([names[i - 1], names[i]]);
}
console.log(JSON.stringify(out));
"""


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_names_sort_as_nodes_intl_collator_orders_them(seed: int) -> None:
    """The order ``collation`` gives is the one Obsidian's explorer takes from
    ``Intl.Collator(undefined, {numeric: true, sensitivity: "base"})``, asked of Node's
    (ICU) here: names of letters in both cases, accented ones, digits and every ASCII
    punctuation mark, sorted by ``collation``, are in the collator's order, pair by
    pair. Code point order put "note_a" after "note1" and "a~b" after "ab"."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("Node.js is needed: its Intl.Collator is the order compared with")
    rng = random.Random(seed)
    pool = "aAbBzZ09 " + "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$" + "éÄöñç" + "1234"
    names = {"".join(rng.choices(pool, k=rng.randint(1, 6))) for _ in range(600)}
    names |= {"note_a", "note1", "a~b", "ab", "topic-2", "topic-10", "a b", "a-b"}
    ordered = sorted(names, key=lambda n: (collation(n), n))
    run = subprocess.run(
        [node, "-e", _COLLATED], input=json.dumps(ordered), capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []


def test_the_new_order_moves_memvaults_lines_only_and_a_fresh_index_writes_it_too() -> None:
    """Upgraded, a MEMORY.md written in the old order changes once: memvault's lines take
    the new order in their own places; a person's lines among and around them stay where
    they are, word for word; and an update without history writes the same."""
    cat = [entry(f"topic-{i}.md", f"Topic {i}") for i in range(1, 13)]
    old = [f"- [[topic-{i}]] - Topic {i}" for i in (1, 10, 11, 12, 2, 3)]
    body = [old[0], old[1], "  > mine: 10 is the big one", old[2], old[3], old[4], old[5]]
    body.append("- 6 more at the vault root")
    text = "# Memory\n\nmy intro\n\n## Topics\n<!-- memvault:begin topics -->\n"
    text += "\n".join(body) + "\n<!-- memvault:end topics -->\nmy outro\n"
    owned = {"topics": (*old, "- 6 more at the vault root")}
    new = run(text, cat, owned=owned, rules=[TOPICS])
    assert topics(new.text) == [
        "- [[topic-1]] - Topic 1",
        "- [[topic-2]] - Topic 2",
        "  > mine: 10 is the big one",
        "- [[topic-3]] - Topic 3",
        "- [[topic-4]] - Topic 4",
        "- [[topic-5]] - Topic 5",
        "- [[topic-6]] - Topic 6",
        "- 6 more at the vault root",
    ]
    assert new.text.startswith("# Memory\n\nmy intro\n\n") and new.text.endswith("my outro\n")
    assert run(text, cat, rules=[TOPICS]).text == new.text  # the same from no history
    assert run(new.text, cat, rules=[TOPICS]).text == new.text
