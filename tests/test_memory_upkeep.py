"""MEMORY.md upkeep through the engine: what a person decided survives losing the index;
folder notes are written only where memvault keeps them; deleted entries stay deleted."""

from __future__ import annotations

import json
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


# -- issue 11 item 7: decisions survive losing index.db ----------------------------------------


def test_a_deleted_section_stays_deleted_after_the_index_is_rebuilt(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        mem.write_text(
            drop_section(mem.read_text(encoding="utf-8"), "decisions", "Recent Decisions"),
            encoding="utf-8",
        )
        v.sync()
        kept = mem.read_text(encoding="utf-8")
        assert "memvault:begin decisions" not in kept
    lose_the_index(root)
    with open_vault(root) as v:
        v.sync()  # rebuilt from the notes
        assert v.status()["memory"]["sections_missing"] == ["decisions"]
    assert mem.read_text(encoding="utf-8") == kept
    decisions = json.loads((root / ".memvault" / "memory-decisions.json").read_text())
    assert "decisions" in decisions["sections_seen"]


def test_a_deleted_entry_stays_deleted_and_survives_losing_the_index(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        write(root, "people/ana.md", note("Ana", "Data lead.", updated="2099-01-01"))
        v.sync()
        line = "- [[people/sarah-chen]]"
        text = mem.read_text(encoding="utf-8")
        mine = "\n".join(ln for ln in text.split("\n") if not ln.startswith(line))
        mem.write_text(mine, encoding="utf-8")
        v.sync()
        assert mem.read_text(encoding="utf-8") == mine  # not re-added
        status = runner.invoke(app, ["status", "--vault", str(root)])
        assert "people/sarah-chen.md is kept out of section 'people'" in status.output
        write(root, "people/bo.md", note("Bo", "Billing.", updated="2098-01-01"))
        v.sync()  # other entries still come and go
        assert "- [[people/bo]] - Billing." in section(mem.read_text(encoding="utf-8"), "people")
    lose_the_index(root)
    with open_vault(root) as v:
        v.sync()
    assert not any(line in ln for ln in section(mem.read_text(encoding="utf-8"), "people"))


def test_linking_a_hidden_entry_again_lists_it_again(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    mem = root / "MEMORY.md"
    with open_vault(root) as v:
        v.sync()
        original = mem.read_text(encoding="utf-8")
        sarah = next(ln for ln in original.split("\n") if ln.startswith("- [[people/sarah-chen]]"))
        mem.write_text(original.replace(sarah + "\n", ""), encoding="utf-8")
        v.sync()
        assert "people/sarah-chen" not in mem.read_text(encoding="utf-8")
        mem.write_text(original, encoding="utf-8")  # the person puts the line back
        v.sync()
        assert mem.read_text(encoding="utf-8") == original
        assert v.status()["memory"]["hidden"] == {}


# -- issue 11 item 9: a person's note named like its folder ------------------------------------

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
