"""MEMORY.md upkeep through the engine: what a person decided travels with the files and
survives losing the index; folder notes are written only where memvault keeps them."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from helpers import make_vault, note, open_vault, write
from memvault.interfaces.cli import app

runner = CliRunner()


def section(text: str, name: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(f"<!-- memvault:begin {name} -->")
    return lines[start + 1 : lines.index(f"<!-- memvault:end {name} -->")]


def lose_the_index(root: Path) -> None:
    for name in ("index.db", "index.db-wal", "index.db-shm", "vectors.bin"):
        (root / ".memvault" / name).unlink(missing_ok=True)


def drop_section(text: str, name: str, title: str) -> str:
    lines = text.split("\n")
    start = lines.index(f"## {title}")
    end = lines.index(f"<!-- memvault:end {name} -->")
    return "\n".join(lines[:start] + lines[end + 1 :])


# -- intent in the files, not inferred (issue 11 item 7 rewritten) ----------------------


def test_a_section_stays_out_when_the_config_drops_it_not_when_a_line_goes(tmp_path: Path) -> None:
    # deliberately unlike earlier versions: a section deleted from MEMORY.md is
    # no verdict (git, an editor's stale copy delete it too): it comes back; removing it
    # from memory.sections (a tracked setting) drops it for good, index or no index
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        full = mem.read_text(encoding="utf-8")
        mem.write_text(drop_section(full, "decisions", "Recent Decisions"), encoding="utf-8")
        v.sync()
        assert "<!-- memvault:begin decisions -->" in mem.read_text(encoding="utf-8")
    config = root / ".memvault" / "config.toml"
    text = config.read_text(encoding="utf-8")
    rule = (
        '[[memory.sections]]\nname = "decisions"\ntitle = "Recent Decisions"\n'
        'folder = "decisions"\norder = "date"\nlimit = 8\n'
    )
    assert rule in text
    config.write_text(text.replace(rule, ""), encoding="utf-8")
    kept = drop_section(mem.read_text(encoding="utf-8"), "decisions", "Recent Decisions")
    mem.write_text(kept, encoding="utf-8")
    with open_vault(root) as v:
        v.sync()
    assert mem.read_text(encoding="utf-8") == kept
    lose_the_index(root)
    with open_vault(root) as v:
        v.sync()
    assert mem.read_text(encoding="utf-8") == kept
    assert not (root / ".memvault" / "memory-decisions.json").exists()


def test_a_note_kept_out_by_its_frontmatter_stays_out_after_losing_the_index(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    sarah = root / "people" / "sarah-chen.md"
    with open_vault(root) as v:
        v.sync()
        assert "- [[people/sarah-chen]]" in mem.read_text(encoding="utf-8")
        sarah.write_text(
            sarah.read_text(encoding="utf-8").replace("---\n", "---\nmemory-index: false\n", 1),
            encoding="utf-8",
        )
        v.sync()
        assert "people/sarah-chen" not in mem.read_text(encoding="utf-8")
        status = runner.invoke(app, ["status", "--vault", str(root)])
        assert "kept out of MEMORY.md by 'memory-index: false': people/sarah-chen.md" in (
            status.output
        )
        write(root, "people/bo.md", note("Bo", "Billing.", updated="2098-01-01"))
        v.sync()  # other entries still come and go
        assert "- [[people/bo]] - Billing." in section(mem.read_text(encoding="utf-8"), "people")
        kept = mem.read_text(encoding="utf-8")
        assert v.search("Sarah Chen backend lead", k=3)[0].path == "people/sarah-chen.md"
    lose_the_index(root)
    with open_vault(root) as v:
        v.sync()
    assert mem.read_text(encoding="utf-8") == kept


def test_an_entry_deleted_by_hand_comes_back_even_after_losing_the_index(tmp_path: Path) -> None:
    # deliberately unlike earlier versions: deleting a line hides nothing
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        original = mem.read_text(encoding="utf-8")
        line = next(ln for ln in original.split("\n") if ln.startswith("- [[people/sarah-chen]]"))
        mem.write_text(original.replace(line + "\n", ""), encoding="utf-8")
        v.sync()
        assert mem.read_text(encoding="utf-8") == original
        assert "hidden" not in v.status()["memory"]
    lose_the_index(root)
    mem.write_text(original.replace(line + "\n", ""), encoding="utf-8")
    with open_vault(root) as v:
        v.sync()
    assert mem.read_text(encoding="utf-8") == original


# -- a person's note named like its folder ------------------------------------

PEOPLE_NOTE = "# People\n\nMy own list of who is who, by team.\n\n- Platform: [[sarah-chen]]\n"


def test_a_persons_note_named_like_its_folder_is_never_written_and_is_listed(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    write(root, "people/people.md", PEOPLE_NOTE)
    for name in ("ana", "bo", "cy", "di", "ed"):
        write(root, f"people/{name}.md", note(name.title(), f"{name} summary."))
    with open_vault(root) as v:
        v.sync()
        hits = v.search("who is who by team", k=5)
    assert (root / "people/people.md").read_text(encoding="utf-8") == PEOPLE_NOTE
    people = section((root / "MEMORY.md").read_text(encoding="utf-8"), "people")
    assert any(ln.startswith("- [[people/people]]") for ln in people), people
    assert "people/people.md" in {h.path for h in hits}


def test_past_the_limit_a_persons_folder_note_stays_theirs(tmp_path: Path, monkeypatch) -> None:
    root = make_vault(tmp_path)
    config = root / ".memvault" / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace(
            'name = "people"\ntitle = "Key People"\nfolder = "people"\norder = "updated"\nlimit = 8',
            'name = "people"\ntitle = "Key People"\nfolder = "people"\norder = "title"\nlimit = 2',
        ),
        encoding="utf-8",
    )
    write(root, "people/people.md", PEOPLE_NOTE)
    for name in ("ana", "bo", "cy"):
        write(root, f"people/{name}.md", note(name.title(), f"{name} summary."))
    with open_vault(root) as v:
        report = v.sync()
        people = section((root / "MEMORY.md").read_text(encoding="utf-8"), "people")
        # (the template's line for Sarah, first in the section, counts as the person's: it
        # is not what memvault writes with these settings)
        assert people[-3:] == [
            "- [[people/ana]] - ana summary.",
            "- [[people/bo]] - bo summary.",
            "- 3 more in people/",
        ]
        assert any("people/people.md is a note of yours" in w for w in report.warnings)
        assert (root / "people/people.md").read_text(encoding="utf-8") == PEOPLE_NOTE
        # the person opts in: memvault keeps the list between the markers, their text around it
        opted = PEOPLE_NOTE + "\n<!-- memvault:begin folder -->\n<!-- memvault:end folder -->\n"
        (root / "people/people.md").write_text(opted, encoding="utf-8")
        v.sync()
    text = (root / "people/people.md").read_text(encoding="utf-8")
    assert text.startswith(PEOPLE_NOTE) and "- [[people/cy]] - cy summary." in text
    # now memvault's folder note: not an entry of its own any more
    people = section((root / "MEMORY.md").read_text(encoding="utf-8"), "people")
    assert people[-1] == "- [[people/people|2 more]]"
    assert not any(ln.startswith("- [[people/people]]") for ln in people)


def test_a_folder_note_memvault_made_says_how_many_more(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v:
        for i in range(9):
            write(root, f"people/p{i}.md", note(f"P{i}", f"Person {i}."))
        v.sync()
    people = section((root / "MEMORY.md").read_text(encoding="utf-8"), "people")
    assert people[-1] == "- [[people/people|2 more]]"
    assert "memvault:begin folder" in (root / "people/people.md").read_text(encoding="utf-8")


def test_a_root_note_moved_into_a_folder_leaves_no_line_behind(tmp_path: Path) -> None:
    """A note at the vault root (Topics) dragged into people/: its Topics line
    ``[[gone]]`` still led to it by name, so it was taken for a person's line and stayed
    beside the new ``[[people/gone]]``: listed twice, unlike a fresh index. A line
    memvault wrote in a section goes when its note leaves the section's folder; one a
    person wrote stays."""
    root = tmp_path / "vault"
    write(root, "gone.md", "# Gone\n\nSome text about the gone note here.\n")
    write(root, "kept.md", "# Kept\n\nA note a person lists by hand.\n")
    with open_vault(root) as v:
        v.sync()
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        assert section(memory, "topics")[0] == "- [[gone]] - Some text about the gone note here."
        # a person's own line in Topics for a note that later moves: theirs, kept
        (root / "MEMORY.md").write_text(
            memory.replace(
                "<!-- memvault:end topics -->", "- [[kept]] - mine\n<!-- memvault:end topics -->"
            ),
            encoding="utf-8",
        )
        v.sync()
        (root / "people").mkdir(exist_ok=True)
        (root / "gone.md").rename(root / "people/gone.md")
        (root / "kept.md").rename(root / "people/kept.md")
        v.sync()
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "[[gone]]" not in memory
    assert memory.count("people/gone") == 1 and "- [[kept]] - mine" in memory
    lose_the_index(root)
    with open_vault(root) as v:
        v.sync()
        assert (root / "MEMORY.md").read_text(encoding="utf-8").count("people/gone") == 1


# -- notes that say the same thing (core/memory_copies) -------------------------------------

FACT = "The staging database password rotates every Monday at 09:00.\n"


def test_copies_an_agent_saved_are_one_line_kept_as_a_fresh_index_writes_it(
    tmp_path: Path,
) -> None:
    """An agent's memory tool saved one fact as fact-1.md ... fact-10.md: Topics listed
    six lines of the same words, and a context's MEMORY.md excerpt gave them all. One
    line counts the copies; as copies come, change and go the daemon's MEMORY.md is the
    one a fresh index writes, a person's lines kept."""
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        for i in range(1, 11):
            v.memory_tool(
                {"command": "create", "path": f"/memories/fact-{i}.md", "file_text": FACT}
            )
            if i == 1:  # the section is there: a person's line in it
                own = mem.read_text(encoding="utf-8").replace(
                    "<!-- memvault:end topics -->", "> my own line\n<!-- memvault:end topics -->"
                )
                mem.write_text(own, encoding="utf-8")
        said = FACT.strip()
        lines = section(mem.read_text(encoding="utf-8"), "topics")
        assert f"- [[fact-1]] - {said} (9 more notes say the same)" in lines
        assert sum(said in ln for ln in lines) == 1 and "> my own line" in lines
        context = v.context("when does the staging database password rotate?", 2000).text
        assert context.count(said) == 2  # the index's line once, the note's text once
        v.memory_tool({"command": "delete", "path": "/memories/fact-3.md"})
        (root / "fact-7.md").write_text("The prod password rotates monthly.\n", "utf-8")
        v.sync()
        kept = mem.read_text(encoding="utf-8")
    assert f"- [[fact-1]] - {said} (7 more notes say the same)" in section(kept, "topics")
    assert "- [[fact-7]] - The prod password rotates monthly." in section(kept, "topics")
    assert "> my own line" in section(kept, "topics")
    lose_the_index(root)
    with open_vault(root) as v:
        v.sync()
    assert mem.read_text(encoding="utf-8") == kept


# -- names with numbers in Obsidian's order (core/memory_order.collation) -------------------


def test_an_old_order_is_rewritten_once_keeping_a_persons_lines_as_a_fresh_index_does(
    tmp_path: Path,
) -> None:
    """A vault whose MEMORY.md an earlier memvault wrote in code point order (topic-1,
    topic-10, topic-11, topic-2) meets the new order, Obsidian's file explorer's: the
    first sync moves memvault's lines alone, a person's lines kept where they were; the
    notes written one by one after (the daemon's upkeep) and a fresh index of the same
    files give the same MEMORY.md, byte for byte."""
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    for i in range(1, 13):
        write(root, f"topic-{i}.md", f"# Topic {i}\n\nWhat we know of area {i}.\n")
    with open_vault(root) as v:
        v.sync()
    lines = section(mem.read_text(encoding="utf-8"), "topics")
    assert lines[:3] == [
        "- [[topic-1]] - What we know of area 1.",
        "- [[topic-2]] - What we know of area 2.",
        "- [[topic-3]] - What we know of area 3.",
    ]
    # the same section as an earlier memvault wrote it, with a person's line in it
    old = [f"- [[topic-{i}]] - What we know of area {i}." for i in (1, 10, 11, 12, 2, 3)]
    text = mem.read_text(encoding="utf-8").replace(
        "\n".join(lines), "\n".join([old[0], "> mine: ask Ana about 10", *old[1:], lines[-1]])
    )
    mem.write_text(text, encoding="utf-8")
    lose_the_index(root)
    with open_vault(root) as v:
        v.sync()
        upgraded = section(mem.read_text(encoding="utf-8"), "topics")
        assert upgraded == [
            "- [[topic-1]] - What we know of area 1.",
            "> mine: ask Ana about 10",
            *(f"- [[topic-{i}]] - What we know of area {i}." for i in range(2, 7)),
            "- 6 more at the vault root",
        ]
        for i in (20, 13, 100):  # the daemon's upkeep, a note at a time
            v.memory_tool(
                {"command": "create", "path": f"/memories/topic-{i}.md", "file_text": "x\n"}
            )
        v.memory_tool({"command": "delete", "path": "/memories/topic-2.md"})
        kept = mem.read_text(encoding="utf-8")
    assert "> mine: ask Ana about 10" in section(kept, "topics")
    lose_the_index(root)
    with open_vault(root) as v:
        v.sync()
    assert mem.read_text(encoding="utf-8") == kept


def test_people_made_the_same_day_with_one_summary_are_each_listed(tmp_path: Path) -> None:
    """Two agents a person added from one template the same day ("Agent 1", "Agent 2":
    one summary, one date) showed in Key People as one line "(1 more note says the
    same)": the second agent was nowhere in MEMORY.md. Each is listed, by the daemon
    as a fresh index lists them."""
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        for i in (1, 2, 20):
            fields = {"updated": "2099-01-01", "date": "2099-01-01"}
            write(root, f"people/Agent {i}.md", note(f"Agent {i}", "A coding agent", **fields))
        v.sync()
        kept = mem.read_text(encoding="utf-8")
    assert section(kept, "people")[:3] == [
        f"- [[people/Agent {i}]] - A coding agent" for i in (1, 2, 20)
    ]
    assert "say the same" not in kept and "says the same" not in kept
    lose_the_index(root)
    with open_vault(root) as v:
        v.sync()
    assert mem.read_text(encoding="utf-8") == kept
