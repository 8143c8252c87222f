"""A note moved and edited at once is followed as a move (core.changes.edited_moves).

Found in a field test: a folder renamed while one of its notes was saved, or a
checkout of a commit that renames a folder and edits a note in it, gave that note a
new hash, so it was taken for a delete and a create and the links to it by path
were left broken. Real files, the real watcher (inotify), real git.
"""

from __future__ import annotations

import os
from pathlib import Path

from helpers import eventually, make_vault, open_vault, write
from test_memory_git import git
from test_watcher import start_watching

LUKASZ = "# Łukasz\n\nŁukasz runs the build farm.\n\n## Work\n\nBuild farm.\nNight shifts.\n"
ANA = "# Ana\n\nAna writes the docs.\nShe reviews the ranking code.\n"


def _team(root: Path, folder: str = "Team") -> None:
    write(root, f"{folder}/Łukasz.md", LUKASZ)
    write(root, f"{folder}/Ana.md", ANA)
    write(root, "Roster.md", f"# Roster\n\nSee [[{folder}/Łukasz#Work]] and [[{folder}/Ana]].\n")


def test_a_folder_renamed_while_a_note_in_it_is_saved_keeps_every_link(tmp_path: Path) -> None:
    w = start_watching(tmp_path)
    try:
        _team(w.root)
        w.settle()
        os.rename(w.root / "Team", w.root / "Crew")
        with (w.root / "Crew" / "Łukasz.md").open("a", encoding="utf-8") as fh:
            fh.write("- one more line: the racks in hall Quetzal\n")
        roster = w.root / "Roster.md"
        eventually(
            lambda: "See [[Łukasz#Work]] and [[Ana]]." in roster.read_text(encoding="utf-8"),
            what="both links followed the folder",
        )
        w.settle()
        assert (
            (w.root / "Crew" / "Łukasz.md")
            .read_text(encoding="utf-8")
            .endswith("- one more line: the racks in hall Quetzal\n")
        )  # the person's edit kept
        hits = w.vault.search("racks in hall Quetzal", k=3)
        assert hits and hits[0].path == "Crew/Łukasz.md"  # the edit indexed under the new path
        assert not w.vault.engine.store.note("Team/Łukasz.md")
    finally:
        w.watcher.stop()
        w.vault.close()


def _branch(tmp_path: Path, move: tuple[str, str], line: tuple[str, str]) -> Path:
    """A vault in git whose branch ``other`` moves ``move[0]`` to ``move[1]`` and adds a
    line to a note (``line``: its path after, the line); ``main`` checked out."""
    root = tmp_path / "vault"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _team(root, "Crew")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "team")
    git(root, "checkout", "-qb", "other")
    git(root, "mv", *move)
    with (root / line[0]).open("a", encoding="utf-8") as fh:
        fh.write(line[1])
    git(root, "commit", "-qam", "a move, and a line")
    git(root, "checkout", "-q", "main")
    return root


def test_a_checkout_that_renames_a_folder_and_edits_a_note_keeps_every_link(
    tmp_path: Path,
) -> None:
    root = _branch(tmp_path, ("Crew", "Staff"), ("Staff/Ana.md", "She keeps the glossary.\n"))
    with open_vault(root) as v:
        v.sync()
        git(root, "checkout", "-q", "other")
        report = v.sync()
        assert set(report.moved) == {
            ("Crew/Ana.md", "Staff/Ana.md"),
            ("Crew/Łukasz.md", "Staff/Łukasz.md"),
        }
        assert not report.created and not report.deleted
        roster = (root / "Roster.md").read_text(encoding="utf-8")
        assert "See [[Łukasz#Work]] and [[Ana]]." in roster
        hits = v.search("keeps the glossary", k=3)
        assert hits and hits[0].path == "Staff/Ana.md"


def test_a_note_renamed_and_edited_at_once_keeps_every_link(tmp_path: Path) -> None:
    # found in a field test: `git pull` of a commit that renames a note and adds a line
    # to it (git: "renamed, 96 %") broke the links to it; so did `mv` then `>>`
    moved = ("Crew/Łukasz.md", "Crew/Łukasz Nowak.md")
    root = _branch(tmp_path, moved, ("Crew/Łukasz Nowak.md", "- the racks in hall Quetzal\n"))
    with open_vault(root) as v:
        v.sync()
        git(root, "checkout", "-q", "other")
        report = v.sync()
        assert report.moved == (("Crew/Łukasz.md", "Crew/Łukasz Nowak.md"),)
        assert not report.created and not report.deleted
        roster = (root / "Roster.md").read_text(encoding="utf-8")
        assert "See [[Łukasz Nowak#Work]] and [[Crew/Ana]]." in roster
        assert not v.links_check()
        hits = v.search("racks in hall Quetzal", k=3)
        assert hits and hits[0].path == "Crew/Łukasz Nowak.md"


def test_a_note_made_from_the_person_template_moved_and_edited_is_a_move(
    tmp_path: Path,
) -> None:
    """Compared like with like (found by a second field test): the gone note's chunks
    against the new note's chunks, not its whole file. Against the file, a note made
    from the template (frontmatter, hints, empty sections) or of one long paragraph
    (cut into pieces) kept far less than half its lines and was never paired."""
    from helpers import make_vault

    root = make_vault(tmp_path)
    with open_vault(root) as v:
        made = v.add("people", "Ana Lima")
        path = root / made.path
        long = " ".join(f"word{i}" for i in range(700))  # one paragraph, cut in pieces
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"- 2026-11-02 - agreed to own the Q1 budget review\n\n{long}\n")
        write(root, "Hub.md", f"# Hub\n\n- [[{made.path[:-3]}]] owns the budget\n")
        v.sync()
        os.rename(root / "people", root / "team")
        moved = root / "team" / path.name
        with moved.open("a", encoding="utf-8") as fh:
            fh.write("- 2026-12-04 - moved to the platform team\n")
        report = v.sync()
        assert (made.path, f"team/{path.name}") in report.moved
        hub = (root / "Hub.md").read_text(encoding="utf-8")
        assert f"[[{path.stem}]] owns the budget" in hub
        assert "moved to the platform team" in moved.read_text(encoding="utf-8")


def test_a_short_note_of_the_same_name_and_title_is_no_move(tmp_path: Path) -> None:
    """Two short notes of one name share their title: not evidence of a move (a link to
    a band was re-pointed at a hurricane, found by a second field test)."""
    root = tmp_path / "vault"
    write(root, "Other/Zoë.md", "# Zoë\n\nZoë the band.\n")
    write(root, "Roster.md", "# Roster\n\n- [[Other/Zoë]] the band\n")
    with open_vault(root) as v:
        v.sync()
        (root / "Other" / "Zoë.md").unlink()
        write(root, "Storms/Zoë.md", "# Zoë\n\nHurricane Zoë hit the coast in 2031.\n")
        report = v.sync()
        assert report.moved == () and report.created == ("Storms/Zoë.md",)
        assert "- [[Other/Zoë]] the band" in (root / "Roster.md").read_text(encoding="utf-8")


def test_another_note_of_the_same_name_is_no_move(tmp_path: Path) -> None:
    """A note deleted and an unrelated one of its name made elsewhere: the links to the
    old one are left for `links check` to report, not re-pointed at a stranger."""
    root = tmp_path / "vault"
    _team(root)
    with open_vault(root) as v:
        v.sync()
        (root / "Team" / "Ana.md").unlink()
        write(root, "Guests/Ana.md", "# Ana\n\nAna from the supplier, met at the fair.\n")
        report = v.sync()
        assert report.created == ("Guests/Ana.md",) and report.deleted == ("Team/Ana.md",)
        assert "[[Team/Ana]]" in (root / "Roster.md").read_text(encoding="utf-8")


def test_a_section_whose_folder_moved_says_where_until_its_folder_is_set(tmp_path: Path) -> None:
    """Found in a field test: ``git mv People Persons`` emptied MEMORY.md's people
    section and nothing said why (config.toml still names the old folder). Said as a
    kept problem, following the notes as they move on, gone once the folder is set."""
    from helpers import make_vault

    root = make_vault(tmp_path)

    def problems(v) -> list[str]:  # type: ignore[no-untyped-def]
        return [p["reason"] for p in v.status()["problems"] if "section" in p["reason"]]

    with open_vault(root) as v:
        v.sync()
        assert problems(v) == []
        os.rename(root / "people", root / "team")
        v.sync()
        assert problems(v) == [
            "the section 'Key People' lists the folder people/, whose notes moved to team/: "
            "set its folder in .memvault/config.toml (a daemon reads it when restarted)"
        ]
        os.rename(root / "team", root / "Team")  # moved on: followed
        v.sync()
        assert [p.split("moved to ")[1] for p in problems(v)] == [
            "Team/: set its folder in .memvault/config.toml (a daemon reads it when restarted)"
        ]
    config = root / ".memvault" / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace('folder = "people"', 'folder = "Team"'),
        encoding="utf-8",
    )
    with open_vault(root) as v:
        v.sync()
        assert problems(v) == []
        assert "[[Team/sarah-chen" in (root / "MEMORY.md").read_text(encoding="utf-8")


def test_a_section_whose_filter_selects_none_is_not_said_moved_while_its_folder_has_notes(
    tmp_path: Path,
) -> None:
    """Found by bench/soak.py: notes moving out of projects/, whose section selects only
    ``status: active`` notes and none of those left, were said to have moved (and
    config.toml's folder to be set anew): the folder still held notes."""
    root = tmp_path / "v"
    write(root, "projects/alpha.md", "# Alpha\n\nA plan.\n")
    write(root, "projects/beta.md", "# Beta\n\nAnother plan.\n")
    with open_vault(root) as v:
        v.sync()
        os.makedirs(root / "decisions", exist_ok=True)
        os.rename(root / "projects" / "alpha.md", root / "decisions" / "alpha.md")
        v.sync()
        said = [p["reason"] for p in v.status()["problems"] if "section" in p["reason"]]
        assert said == []
        os.rename(root / "projects" / "beta.md", root / "decisions" / "beta.md")  # now empty
        v.sync()  # but there: its notes were moved out, the folder was not renamed
        said = [p["reason"] for p in v.status()["problems"] if "section" in p["reason"]]
        assert said == []  # (a folder renamed is: test_a_section_whose_folder_moved_...)


def test_status_on_any_clone_says_a_section_folder_is_there_only_in_another_case(
    tmp_path: Path,
) -> None:
    """config.toml names `people` while the disk has only `People/` (a clone after another
    machine renamed it, or a hand edit): only the daemon that saw the rename said so.
    `status` says it from the files, on a fresh clone with no daemon and no index yet
    and after a sync, naming the config line to change; one problem, not two, where
    the sync also saw the notes move."""
    import json

    from helpers import make_vault, memvault_env, run_memvault

    env = memvault_env(tmp_path)
    root = make_vault(tmp_path)
    os.rename(root / "people", root / "People")
    line = (
        "the section 'Key People' lists the folder people/, which is not in the vault; "
        "People/ is (its name differs only in case): in .memvault/config.toml change "
        'folder = "people" to folder = "People" (a daemon reads it when restarted)'
    )
    fresh = run_memvault("status", "--vault", str(root), env=env)
    assert f".memvault/config.toml: {line}" in " ".join(fresh.stdout.split()), fresh.stdout
    assert run_memvault("sync", "--vault", str(root), env=env).returncode == 0
    data = json.loads(run_memvault("status", "--json", "--vault", str(root), env=env).stdout)
    said = [p for p in data["problems"] if "Key People" in p["reason"]]
    assert said == [{"path": ".memvault/config.toml", "reason": line, "kind": "config"}]
    # the rename seen by a sync (as a daemon sees it): the one problem, with the line
    os.rename(root / "People", root / "people")
    assert run_memvault("sync", "--vault", str(root), env=env).returncode == 0
    os.rename(root / "people", root / "People")
    assert run_memvault("sync", "--vault", str(root), env=env).returncode == 0
    data = json.loads(run_memvault("status", "--json", "--vault", str(root), env=env).stdout)
    assert [p["reason"] for p in data["problems"] if "Key People" in p["reason"]] == [line]
    # the folder set as it is now: nothing to say
    config = root / ".memvault" / "config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('folder = "people"', 'folder = "People"'), encoding="utf-8")
    assert run_memvault("sync", "--vault", str(root), env=env).returncode == 0
    data = json.loads(run_memvault("status", "--json", "--vault", str(root), env=env).stdout)
    assert not [p for p in data["problems"] if "Key People" in p["reason"]], data["problems"]


def test_a_sections_notes_moved_out_of_its_folder_still_there_are_no_folder_move(
    tmp_path: Path,
) -> None:
    """A person dragged their one note in people/ to the vault root: the section was said
    to list a folder "whose notes moved to the vault root", with config.toml to be
    changed, on every status after. The folder is still there, so it was not renamed:
    config.toml is right, nothing is said."""
    root = tmp_path / "v"
    write(root, "people/ana.md", "# Ana\n\nAna leads the team.\n")
    write(root, "projects/alpha.md", "# Alpha\n\nA plan.\n")
    with open_vault(root) as v:
        v.sync()
        os.rename(root / "people/ana.md", root / "ana.md")
        v.sync()
        assert [p for p in v.status()["problems"] if "section" in p["reason"]] == []
        assert "- [[ana]] - Ana leads the team." in (root / "MEMORY.md").read_text("utf-8")


def test_a_note_gone_as_a_binary_md_file_came_is_synced_not_a_crash(tmp_path: Path) -> None:
    """A sync that finds a note gone and a new ``.md`` file that is not text (NUL bytes)
    pairs them no more than it would two notes of other words: the new file is skipped,
    the gone note's row goes. The pairing read the new file as text and the sync failed
    on its NotText (found by review 55: a note deleted beside a binary export)."""
    root = make_vault(tmp_path)
    write(root, "Team/Ana.md", ANA)
    with open_vault(root) as v:
        v.sync(vectors=False)
        (root / "Team" / "Ana.md").unlink()
        (root / "Team" / "dump.md").write_bytes(b"\x00\x01binary\xff" * 20)
        report = v.sync(vectors=False)
        assert report.deleted == ("Team/Ana.md",)
        assert v.engine.store.note("Team/Ana.md") is None
        skipped = v.engine.store.note("Team/dump.md")
        assert skipped is not None and skipped.kind == "skipped"
