"""A generated folder note's count line follows the folder (a follow-up of issue 21).

"All N people in this folder" sits above the markers; memvault wrote it once and never
again, so the count went stale as notes came and went. The line is memvault's, known by
its form alone (as its MEMORY.md lines are): it is brought up to date with the list, and
a person's own words around it, or a rewording of it, are theirs and stay.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers import new_vault, note, open_vault, write


def test_the_count_line_follows_the_folder_and_a_persons_words_stay(tmp_path: Path) -> None:
    """ "All N people in this folder" sat above the markers, so memvault never updated it:
    the count went stale as notes were added. It is memvault's line, known by its form."""
    root = new_vault(tmp_path)
    folder_note = root / "people" / "people.md"

    def count() -> list[str]:
        return re.findall(
            r"^All (\d+) people in this folder\.", folder_note.read_text("utf-8"), re.M
        )

    with open_vault(root) as v:
        # a folder note is made once the section overflows MEMORY.md's limit (10 people)
        for i in range(11):
            write(root, f"people/p{i:02}.md", note(f"Person {i}", "Someone."))
        v.sync()
        assert count() == ["11"]
        # a person's own words above and below the list, one of them naming a count
        text = folder_note.read_text("utf-8")
        mine = "My own line: All 7 people in this folder, once.\n"
        folder_note.write_text(
            text.replace("# People\n", "# People\n\n" + mine) + "\nMine too.\n", "utf-8"
        )
        for name in ("ben", "cleo"):
            write(root, f"people/{name}.md", note(name.capitalize(), "Someone."))
        v.sync()
        text = folder_note.read_text("utf-8")
        assert count() == ["13"], text
        assert mine in text and text.endswith("\nMine too.\n")
        (root / "people" / "ben.md").unlink()
        v.sync()
        assert count() == ["12"]
        # a person who rewords memvault's line makes it theirs: left as they wrote it
        reworded = folder_note.read_text("utf-8").replace(
            "All 12 people in this folder. memvault",
            "All 12 people in this folder (roughly). memvault",
        )
        folder_note.write_text(reworded, "utf-8")
        write(root, "people/dan.md", note("Dan", "Someone."))
        v.sync()
        text = folder_note.read_text("utf-8")
        assert "All 12 people in this folder (roughly). memvault" in text
        assert "[[people/dan]]" in text


def test_a_folder_named_in_another_language_counts_its_notes_as_notes(tmp_path: Path) -> None:
    """A person's `Tagebuch/` is the logs' folder (init finds it by its name): its count
    line read "All 9 Tagebuch in this folder" (a field test on notes in eleven
    languages). A folder named as its section keeps its name: "All 11 people"."""
    from memvault.vault.template import init_vault

    root = tmp_path / "v"
    for day in range(1, 10):
        write(root, f"Tagebuch/2026-11-{day:02}.md", note(f"Tag {day}", "Ein ruhiger Tag."))
    init_vault(root)
    with open_vault(root) as v:
        v.sync()
    notes = [p for p in (root / "Tagebuch").glob("*.md") if not p.stem.startswith("2026")]
    assert len(notes) == 1, notes  # the generated folder note (the logs keep 7 in MEMORY.md)
    text = notes[0].read_text("utf-8")
    assert re.search(r"^All 9 notes in this folder\. memvault keeps", text, re.M), text
    assert "Tagebuch in this folder" not in text
