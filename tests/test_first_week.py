"""a person's first week on their own notes.

Each test here failed on the code before the issue was worked: a person's name across
accents, a vault's own capitalised folders, an ``Archive/`` of theirs, a migration into
a vault that already held the same project, preferences an agent never saw.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers import new_vault, note, open_vault, run_memvault, write

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, cwd: Path | None = None, check: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "daemon"), MEMVAULT_INDEX_MODEL="hash")
    env.pop("MEMVAULT_VAULT", None)
    proc = run_memvault(*args, env=env, cwd=cwd)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


# -- item 5: "Ana López" and "Ana Lopez" are one person ---------------------------------------


@pytest.mark.parametrize("asked", ["Ana López", "Ana Lopez", "ana lopez", "people/Ana Lopez"])
def test_get_finds_a_note_by_its_title_across_accents(tmp_path: Path, asked: str) -> None:
    root = new_vault(tmp_path)
    write(root, "people/ana-lópez.md", note("Ana López", "Runs the data team"))
    write(root, "people/anabel.md", note("Anabel", "Not her"))
    with open_vault(root) as v:
        v.sync()
        got = v.get(asked)
    assert got.path == "people/ana-lópez.md"
    assert "Runs the data team" in got.text


def test_get_by_title_on_the_cli_and_add_finds_the_same_note(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    cli("add", "people", "--title", "Ana López", "--vault", str(root), check=True)
    got = cli("get", "Ana López", "--vault", str(root))
    assert got.returncode == 0, got.stdout + got.stderr
    assert "Ana López" in got.stdout
    again = cli("add", "people", "--title", "Ana Lopez", "--vault", str(root))
    assert again.returncode == 5, again.stdout + again.stderr  # it exists: --update changes it
    assert "ana-lópez.md" in again.stdout + again.stderr
    assert sorted(p.name for p in (root / "people").glob("*.md") if p.name != "people.md") == [
        "ana-lópez.md"
    ]


def test_a_title_two_notes_share_is_not_guessed(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "people/ana-lópez.md", note("Ana López"))
    write(root, "projects/ana-lopez.md", note("Ana Lopez"))
    with open_vault(root) as v:
        v.sync()
        from memvault.errors import NoteNotFound

        with pytest.raises(NoteNotFound):
            v.get("Ana Lopez")


# -- item 7: the user's preferences are where MEMORY.md links them ---------------------------


def test_migrated_preferences_are_linked_from_memory_md(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.migration import migrate

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    people = "".join(
        f"### Person{c} Example\n- works on thing {c}\n" for c in "ABCDEFGHIJ"
    )  # more people than Key People's limit (8)
    dump = tmp_path / "old" / "MEMORY.md"
    dump.parent.mkdir()
    dump.write_text(
        "# Memory\n## About me\n- I prefer short answers\n"
        "## Preferences\n- Never email Lena on Fridays\n"
        f"## People\n{people}"
        "## 2024-02-01\n- shipped the importer\n",
        encoding="utf-8",
    )
    vault = tmp_path / "vault"
    report = migrate(dump, vault)
    assert "people/me.md" in report.created
    memory = (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert "[[people/me]] - I prefer short answers" in memory
    me = (vault / "people/me.md").read_text(encoding="utf-8")
    assert "Never email Lena on Fridays" in me
    assert not (vault / "inbox").exists() or "prefer" not in "".join(
        p.read_text(encoding="utf-8") for p in (vault / "inbox").glob("*.md")
    )


# -- item 11 (second half): provenance once, in the frontmatter ------------------------------


def test_a_migrated_vaults_context_spends_no_tokens_on_provenance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.migration import migrate

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    dump = tmp_path / "old" / "MEMORY.md"
    dump.parent.mkdir()
    days = "".join(
        f"## 2024-03-{d:02d}\n- We decided to keep the schema in PostgreSQL, day {d}.\n"
        f"- standup notes for day {d}\n"
        for d in range(1, 8)
    )
    dump.write_text(days, encoding="utf-8")
    vault = tmp_path / "vault"
    migrate(dump, vault)
    for path in vault.rglob("*.md"):
        if "archive" not in path.parts and path.name != "MEMORY.md":
            assert "Migrated from" not in path.read_text(encoding="utf-8"), path
    text = (vault / "logs/2024-03-01.md").read_text(encoding="utf-8")
    assert "archive: '[[archive/MEMORY-" in text.split("\n---\n", 1)[0]
    with open_vault(vault) as v:
        ctx = v.context("What did we decide about the schema?", budget=800)
    assert "schema in PostgreSQL" in ctx.text
    assert "Migrated from" not in ctx.text and "archive/MEMORY" not in ctx.text


def test_notes_an_earlier_memvault_migrated_are_still_its_own_on_a_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.core.migrate import plan_migration, render_note
    from memvault.migration import migrate, read_sources

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    dump = tmp_path / "old" / "MEMORY.md"
    dump.parent.mkdir()
    dump.write_text("## 2024-03-01\n- a\n## Project: Atlas\n- goal\n", encoding="utf-8")
    vault = tmp_path / "vault"
    first = migrate(dump, vault)
    archive = first.archive[0].removesuffix(".md")
    for planned in plan_migration(read_sources(dump)[0]).notes:  # as memvault wrote them then
        (vault / planned.path).write_text(render_note(planned, archive, footer=True), "utf-8")
    again = migrate(dump, vault)
    assert again.kept == () and again.created == ()
    assert sorted(again.unchanged) == sorted(first.created)


# -- item 4: migrate --into a vault holding the same project: one note per name -----------------


def test_migrate_into_a_vault_merges_into_the_note_already_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.migration import migrate

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    vault = new_vault(tmp_path)
    mine = "---\ntitle: Hermes\nstatus: paused\n---\n# Hermes\r\n\r\nMy own words on Hermes.\r\n"
    (vault / "projects" / "Hermes.md").write_bytes(mine.encode())
    write(vault, "people/ana-lópez.md", note("Ana López", "Runs data"))
    write(vault, "logs/2024-03-01.md", "# 2024-03-01\n- 09:00 my own entry\n")
    dump = tmp_path / "old" / "MEMORY.md"
    dump.parent.mkdir()
    dump.write_text(
        "## Project: Hermes\n- the dump's words on Hermes\n"
        "## People\n### Ana Lopez\n- prefers async\n"
        "## 2024-03-01\n- 10:00 the dump's entry\n",
        encoding="utf-8",
    )
    report = migrate(dump, vault)
    assert sorted(report.merged) == [
        "logs/2024-03-01.md",
        "people/ana-lópez.md",
        "projects/Hermes.md",
    ]
    files = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    assert not [f for f in files if f.endswith("-2.md")], files
    assert "projects/hermes.md" not in files and "people/ana-lopez.md" not in files
    hermes = (vault / "projects/Hermes.md").read_bytes().decode()
    assert hermes.startswith(mine)  # their words first, byte for byte; status kept
    assert "## Project: Hermes\r\n- the dump's words on Hermes\r\n" in hermes
    assert "%% migrated from [[archive/MEMORY-" in hermes  # a hint: never indexed
    assert "- prefers async" in (vault / "people/ana-lópez.md").read_text(encoding="utf-8")
    day = (vault / "logs/2024-03-01.md").read_text(encoding="utf-8")
    assert day.index("my own entry") < day.index("the dump's entry")
    memory = (vault / "MEMORY.md").read_text(encoding="utf-8")
    assert memory.count("[[projects/Hermes]]") + memory.count("[[projects/hermes]]") == 0  # paused
    before = {f: (vault / f).read_bytes() for f in files}
    again = migrate(dump, vault)  # a re-run appends nothing
    assert again.merged == () and again.created == ()
    assert {f: (vault / f).read_bytes() for f in files} == before


# -- item 1: a person's Archive/ is theirs: indexed, and links repaired in notes moved there --


def _atlas_vault(tmp_path: Path) -> Path:
    root = new_vault(tmp_path)
    write(root, "Attachments/diagram.png", "png bytes")
    adr = note("ADR 7: event sourcing for Atlas", "We keep Atlas events in an append-only log.")
    write(root, "Projects/Atlas/adr-7.md", adr + "\n![diagram](../../Attachments/diagram.png)\n")
    write(
        root, "Projects/Atlas/atlas.md", note("Atlas", "The Atlas project") + "\nSee [[adr-7]].\n"
    )
    return root


def test_a_persons_archive_folder_is_indexed_and_moved_notes_keep_their_links(
    tmp_path: Path,
) -> None:
    root = _atlas_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
        (root / "Archive/2024").mkdir(parents=True)
        (root / "Projects/Atlas").rename(root / "Archive/2024/Atlas")
        report = v.sync()
        assert not report.deleted, report.deleted  # moved, not gone
        hits = v.search("append-only log of Atlas events")
        assert hits and hits[0].path == "Archive/2024/Atlas/adr-7.md"
        assert v.links_check() == []  # ../../Attachments/... repaired in the moved note
        status = v.status()
        assert status["index"]["matches_disk"]
        assert "Archive/2024/Atlas/adr-7.md" not in str(status["ignored"])
        text = (root / "Archive/2024/Atlas/adr-7.md").read_text(encoding="utf-8")
        assert "(../../Attachments/diagram.png)" not in text  # re-targeted (newLinkFormat)
        assert "![diagram](" in text
        (root / "Archive/2024/Atlas").rename(root / "Projects/Atlas")  # and back again
        v.sync()
        assert v.links_check() == []


def test_status_lists_what_is_ignored(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "archive/MEMORY-2024-05-01.md", "# the dump\n")  # what migrate keeps
    write(root, "archive/old-ideas.md", note("Old ideas"))  # a person's own archive/
    with open_vault(root) as v:
        v.sync()
        status = v.status()
        assert status["ignored"] == {"archive/MEMORY-2024-05-01.md": 1, "templates/": 4}
        assert "archive/old-ideas.md" in {n.path for n in v.search("Old ideas")}
    out = cli("status", "--vault", str(root))
    assert "not indexed (vault.ignore in .memvault/config.toml): " in out.stdout
    assert "templates/ (4 notes)" in out.stdout


# -- item 2: a vault's own capitalised folders are used -----------------------------------------


def _their_notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write(root, "People/Ana López.md", note("Ana López", "Runs the data team"))
    write(root, "Projects/Atlas.md", note("Atlas", "Event store", status="active"))
    write(root, "Daily/2024-03-01.md", "# 2024-03-01\n- 09:00 kickoff\n")
    write(root, "Archive/old.md", note("Old", "An old note"))
    return root


def test_init_on_existing_notes_uses_their_folders_and_says_so(tmp_path: Path) -> None:
    root = _their_notes(tmp_path)
    out = cli("init", str(root), check=True).stdout
    assert "using your folder People/ for people" in out
    assert "using your folder Projects/ for projects" in out
    assert "using your folder Daily/ for logs" in out
    folders = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    # no people/ projects/ logs/ beside them (decisions: they had none)
    assert folders == ["Archive", "Daily", "People", "Projects", "decisions", "templates"]
    config = (root / ".memvault/config.toml").read_text(encoding="utf-8")
    assert 'folder = "People"' in config and 'folder = "Daily"' in config
    cli("sync", "--vault", str(root), check=True)
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "[[People/Ana López]] - Runs the data team" in memory
    assert "[[Projects/Atlas]] - Event store" in memory
    assert "[[Daily/2024-03-01]]" in memory
    found = cli("search", "data team", "--folder", "People", "--vault", str(root), "--json")
    assert "People/Ana López.md" in found.stdout
    made = cli("add", "people", "--title", "Sarah Chen", "--vault", str(root), check=True)
    assert "People/sarah-chen.md" in made.stdout
    assert cli("add", "people", "--title", "Ana Lopez", "--vault", str(root)).returncode == 5
    cli("log", "an entry", "--vault", str(root), check=True)
    assert not (root / "people").exists() and not (root / "logs").exists()
    assert len(list((root / "Daily").glob("*.md"))) >= 1


def test_the_new_memory_md_names_the_folders_init_chose(tmp_path: Path) -> None:
    """MEMORY.md's intro, written by init, names the vault's own folders (People/, not
    people/); a vault with memvault's names keeps the shipped text byte for byte."""
    root = _their_notes(tmp_path)
    cli("init", str(root), check=True)
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "the notes under People/, Projects/, decisions/ and Daily/.\n" in memory, memory
    assert "people/" not in memory and "logs/" not in memory
    plain = tmp_path / "plain"
    write(plain, "people/ana.md", note("Ana"))
    cli("init", str(plain), check=True)
    shipped = (ROOT / "vault-template/MEMORY.md").read_bytes()
    assert (plain / "MEMORY.md").read_bytes() == shipped


def test_memory_md_made_beside_an_existing_config_names_its_folders(tmp_path: Path) -> None:
    """init on a vault whose config.toml is there (a clone without MEMORY.md): the intro
    names the folders that config.toml gives the sections."""
    root = _their_notes(tmp_path)
    cli("init", str(root), check=True)
    (root / "MEMORY.md").unlink()
    config = root / ".memvault/config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('folder = "Daily"', 'folder = "Journal"', 1), encoding="utf-8")
    cli("init", str(root), check=True)
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "the notes under People/, Projects/, decisions/ and Journal/.\n" in memory, memory
    # and the folders init adds are the configured ones: no people/ beside People/
    folders = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    made = ["Archive", "Daily", "Journal", "People", "Projects", "decisions", "templates"]
    assert folders == made


def test_a_daily_notes_folder_from_obsidian_settings_plays_logs(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write(root, "Journal/Daily/2024-03-01.md", "# 2024-03-01\n")
    write(root, ".obsidian/daily-notes.json", '{"folder": "Journal/Daily", "format": "YYYY-MM-DD"}')
    write(root, ".obsidian/templates.json", '{"folder": "Meta/Templates"}')
    write(root, "Meta/Templates/Daily.md", "# {{date}}\n")
    from memvault.vault.template import init_vault

    report = init_vault(root)
    assert report.roles == {"logs": "Journal/Daily"}
    assert report.templates_ignored == ("Meta/Templates",)
    assert not (root / "logs").exists()
    with open_vault(root) as v:
        v.sync()
        assert "Meta/Templates/" in v.status()["ignored"]
        assert "[[Journal/Daily/2024-03-01]]" in (root / "MEMORY.md").read_text(encoding="utf-8")


def test_init_lays_its_templates_into_the_vaults_templates_folder_of_another_case(
    tmp_path: Path,
) -> None:
    """A vault whose Obsidian templates folder is `Templates/` (a Chinese vault of 738
    notes in the field test) got memvault's templates in a `templates/` beside it: two
    folders in Obsidian's file explorer whose names differ only by case, which a clone
    on macOS or Windows holds as one, and templates the Templates plugin never offered.
    They go into `Templates/`, and `add` and `log` take their headings from there."""
    root = tmp_path / "notes"
    write(root, "Templates/Diary.md", "# {{date}}\n")
    write(root, ".obsidian/templates.json", '{"folder": "Templates"}')
    write(root, "Inbox/idea.md", note("Idea"))
    from memvault.vault.template import init_vault

    report = init_vault(root)
    assert report.templates_ignored == ("Templates",)
    assert not (root / "templates").exists()
    assert sorted(p.name for p in (root / "Templates").iterdir()) == [
        "Diary.md", "daily-log.md", "decision.md", "person.md", "project.md",
    ]  # fmt: skip
    assert "Templates/person.md" in report.created
    person = root / "Templates/person.md"
    person.write_text(person.read_text(encoding="utf-8") + "\n## Birthday\n", encoding="utf-8")
    with open_vault(root) as v:
        v.add("people", title="Ana", summary="Runs the data team")
        assert "## Birthday" in (root / "people/ana.md").read_text(encoding="utf-8")
        assert "Templates/" in v.status()["ignored"]
    assert init_vault(root).created == ()  # a second init adds nothing


def test_init_with_lowercase_folders_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write(root, "people/ana.md", note("Ana"))
    from memvault.vault.template import init_vault

    report = init_vault(root)
    assert not report.roles
    shipped = (ROOT / "vault-template/.memvault/config.toml").read_bytes()
    assert (root / ".memvault/config.toml").read_bytes() == shipped


def test_a_change_to_memory_settings_takes_effect_on_restart(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "People/ana.md", note("Ana", "Runs the data team"))
    with open_vault(root) as v:
        v.sync()
    assert "[[People/ana]]" not in (root / "MEMORY.md").read_text(encoding="utf-8")
    config = root / ".memvault/config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('folder = "people"', 'folder = "People"', 1), encoding="utf-8")
    with open_vault(root) as v:  # a restart: no note changed
        report = v.sync()
        assert report.memory_written
    assert "[[People/ana]] - Runs the data team" in (root / "MEMORY.md").read_text(encoding="utf-8")
    with open_vault(root) as v:  # and nothing more on the next start
        assert not v.sync().memory_written


def _links_before_form_2(entry: object) -> str:
    """``CatalogueEntry.link`` of memvault before ``LINKS_FORM`` 2 (main at 55de0ac), as it
    was: the path, its ``.md`` dropped."""
    path = str(getattr(entry, "path"))  # noqa: B009 (a property's getter, not typed)
    return path[:-3] if path.lower().endswith(".md") else path


def test_memory_md_and_folder_notes_of_an_earlier_links_form_are_rewritten_on_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """memvault before LINKS_FORM 2 listed a person's ``Plan .md`` as ``[[Plan ]]``
    (Obsidian reads it ``[[Plan]]``: nowhere), in MEMORY.md and in the folder note of its
    folder. Upgraded, each kept that line until a note of its section changed. Both are
    rewritten on the first start now, as a fresh index of the same files writes them, and
    nothing is written on the start after. The earlier memvault is its link (patched to
    its code) and another links form: what an index it wrote keeps is another form than
    today's, whatever number it has (its MEMORY.md fingerprint had none, its folder notes'
    key held its version, which a checkout and an install from git do not change; the
    lines it wrote are those checked below, as main's own code wrote them)."""
    from memvault.core import memory_order

    root = new_vault(tmp_path)
    write(root, "Plan .md", "# Plan\n\nWe ship Friday.\n")
    for i in range(9):  # more than the section lists: its folder note is written
        write(root, f"people/P{i}.md", f"# P{i}\n\nPerson {i}.\n")
    write(root, "people/Lead .md", "# Lead\n\nLeads the launch.\n")
    memory, folder_note = root / "MEMORY.md", root / "people/people.md"
    monkeypatch.setattr(memory_order.CatalogueEntry, "link", property(_links_before_form_2))
    monkeypatch.setattr(memory_order, "LINKS_FORM", 1)
    with open_vault(root) as v:  # the earlier memvault
        v.sync()
    assert "- [[Plan ]] - We ship Friday." in memory.read_text(encoding="utf-8")
    assert "- [[people/Lead ]] - Leads the launch." in folder_note.read_text(encoding="utf-8")
    monkeypatch.undo()
    with open_vault(root) as v:  # upgraded, with no daemon: no note changed
        report = v.sync()
    assert report.memory_written
    assert report.folder_notes_written == ("people/people.md",)
    upgraded = memory.read_text(encoding="utf-8"), folder_note.read_text(encoding="utf-8")
    assert "- [[Plan .md]] - We ship Friday." in upgraded[0]
    assert "- [[people/Lead .md]] - Leads the launch." in upgraded[1]
    with open_vault(root) as v:  # and nothing more on the next start
        report = v.sync()
    assert not report.memory_written and not report.folder_notes_written
    for name in ("index.db", "index.db-wal", "index.db-shm", "vectors.bin"):
        (root / ".memvault" / name).unlink(missing_ok=True)
    with open_vault(root) as v:  # a fresh index of the same files
        v.sync()
    assert (memory.read_text(encoding="utf-8"), folder_note.read_text(encoding="utf-8")) == upgraded


def test_migrate_into_a_vault_with_its_own_folders_writes_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.migration import migrate
    from memvault.vault.template import init_vault

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = _their_notes(tmp_path)
    init_vault(root)
    dump = tmp_path / "old" / "MEMORY.md"
    dump.parent.mkdir()
    dump.write_text(
        "## Preferences\n- I prefer short answers\n## 2024-03-02\n- 10:00 We decided to ship.\n",
        encoding="utf-8",
    )
    report = migrate(dump, root)
    assert "People/me.md" in report.created
    assert "Daily/2024-03-02.md" in report.created
    assert any(p.startswith("decisions/2024-03-02-") for p in report.created)
    assert not (root / "people").exists() and not (root / "logs").exists()
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "[[People/me]] - I prefer short answers" in memory


def test_links_check_reads_a_folder_that_is_not_a_vault_and_leaves_it_as_it_was(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "some" / "folder"
    write(folder, "MEMORY.md", "# my agent's own memory\nSee [[notes/a]] and [[gone]].\n")
    write(folder, "notes/a.md", "a note\n")
    before = sorted(
        (p.relative_to(folder), p.read_bytes()) for p in folder.rglob("*") if p.is_file()
    )
    proc = cli("links", "check", "--vault", str(folder))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == "MEMORY.md:2:21: [[gone]] does not resolve"
    assert (
        sorted((p.relative_to(folder), p.read_bytes()) for p in folder.rglob("*") if p.is_file())
        == before
    )
    assert not (folder / ".memvault").exists()


def test_a_folder_filter_names_the_folder_the_vault_uses_for_that_role(tmp_path: Path) -> None:
    """`search --folder people` on a vault whose people folder is `People/` found nothing."""
    root = _their_notes(tmp_path)
    cli("init", str(root), check=True)
    cli("sync", "--vault", str(root), check=True)
    for folder in ("people", "People", "people/"):
        found = cli("search", "data team", "--folder", folder, "--vault", str(root), "--json")
        assert found.returncode == 0, found.stderr
        assert "People/Ana López.md" in found.stdout, (folder, found.stdout)
    logs = cli("search", "2024", "--folder", "logs", "--vault", str(root), "--json")
    assert "Daily/2024-03-01.md" in logs.stdout, logs.stdout
    with open_vault(root) as v:
        assert [h.path for h in v.search("data team", folder="people")][:1] == [
            "People/Ana López.md"
        ]
        assert all(h.path.startswith("People/") for h in v.search("data team", folder="people"))
        assert v.context("data team", folder="people").text.count("Ana López") >= 1
        # the projects role is Projects/ here (init adopted it)
        assert [h.path for h in v.search("event store", folder="projects")][:1] == [
            "Projects/Atlas.md"
        ]
        # a name that is no role, in another case than the disk's: that folder, on any
        # disk, as memvault matches paths and links (Obsidian's way)
        other_case = v.search("data team", folder="PEOPLE")
        assert other_case and other_case[0].path == "People/Ana López.md"


def test_add_finds_the_note_titled_so_whatever_its_file_is_named(tmp_path: Path) -> None:
    """A person's ``People/Ana.md`` titled "Ana Pérez": adding "Ana Pérez" (an agent's
    ``memory_write``, ``memvault add``) is that note, as ``get "Ana Pérez"`` reads it,
    not a second ``People/ana-pérez.md`` beside it."""
    root = tmp_path / "notes"
    write(root, "People/Ana.md", note("Ana Pérez", "Runs the data team"))
    write(root, "People/Bob.md", note("Bob"))
    write(root, "Projects/ana-perez.md", note("Ana Perez", "a project of that name"))
    cli("init", str(root), check=True)  # People/ is the people folder
    with open_vault(root) as v:
        v.sync()
        from memvault.errors import NoteExists

        with pytest.raises(NoteExists) as said:
            v.add("people", "Ana Pérez", summary="Leads data")
        assert said.value.path == "People/Ana.md"
        done = v.add("people", "ana perez", body="Prefers async.", update=True)
        assert (done.path, done.created) == ("People/Ana.md", False)
        assert v.add("people", "Carol Diaz").created  # a new name: a new note
    text = (root / "People" / "Ana.md").read_text(encoding="utf-8")
    assert "Runs the data team" in text and "Prefers async." in text
    assert sorted(p.name for p in (root / "People").glob("*.md")) == [
        "Ana.md",
        "Bob.md",
        "carol-diaz.md",
    ]
    again = cli("add", "people", "--title", "Ana Perez", "--vault", str(root))
    assert again.returncode == 5, again.stdout + again.stderr
    assert "People/Ana.md" in again.stdout + again.stderr


def test_a_title_two_notes_of_the_folder_share_makes_no_guess_on_add(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "people/ana-1.md", note("Ana Pérez", "the first"))
    write(root, "people/ana-2.md", note("Ana Pérez", "the second"))
    with open_vault(root) as v:
        v.sync()
        done = v.add("people", "Ana Pérez")
    assert done.created and done.path == "people/ana-pérez.md"
    assert "the first" in (root / "people" / "ana-1.md").read_text(encoding="utf-8")


def test_add_by_title_keeps_ss_and_sharp_s_apart(tmp_path: Path) -> None:
    """The title's match (_named by the catalogue) folded ß as ss, as get's lookup does:
    add projects "Masse" --update wrote into projects/lager.md titled "Maße" (mass,
    measures: two words; test_field_lang's rule for a file's name)."""
    root = new_vault(tmp_path)
    write(root, "projects/lager.md", note("Maße", "Die Maße des Lagers."))
    with open_vault(root) as v:
        v.sync()
        before = (root / "projects" / "lager.md").read_bytes()
        done = v.add("projects", "Masse", summary="Gewicht in kg.", update=True)
        assert v.add("projects", "maße", body="Breite 4 m.", update=True).path == (
            "projects/lager.md"
        )  # its own title still finds it
    assert done.created and done.path != "projects/lager.md"
    assert b"Gewicht" not in (root / "projects" / "lager.md").read_bytes()
    assert before != (root / "projects" / "lager.md").read_bytes()


def test_add_finds_the_note_titled_with_a_slash(tmp_path: Path) -> None:
    """A title holding '/' ("AC/DC") is a title, not a folder and a name."""
    root = new_vault(tmp_path)
    write(root, "projects/band.md", note("AC/DC", "Tour planning."))
    with open_vault(root) as v:
        v.sync()
        done = v.add("projects", "AC/DC", body="Dates fixed.", update=True)
    assert (done.path, done.created) == ("projects/band.md", False)


def test_status_names_a_folder_beside_a_sections_own_in_another_case(tmp_path: Path) -> None:
    """``people/`` beside the ``People/`` init adopted (an agent's, a teammate's clone):
    its notes are in no MEMORY.md section; status says so, and where to move them."""
    root = tmp_path / "notes"
    write(root, "People/Ana.md", note("Ana", "Runs the data team"))
    cli("init", str(root), check=True)
    write(root, "people/Bob.md", note("Bob", "New hire"))
    write(root, "people/Carol.md", note("Carol"))
    with open_vault(root) as v:
        v.sync()
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        problems = [p for p in v.status()["problems"] if p["path"] == "people/"]
    assert "[[People/Ana]]" in memory and "Bob" not in memory  # what the problem is about
    assert len(problems) == 1, problems
    said = problems[0]["reason"]
    assert "people/ is beside People/" in said and "its 2 notes are in no MEMORY.md" in said
    out = cli("status", "--vault", str(root)).stdout
    assert "people/ is beside People/" in out
    alone = tmp_path / "alone"
    write(alone, "People/Ana.md", note("Ana"))
    cli("init", str(alone), check=True)
    with open_vault(alone) as v:
        v.sync()
        assert not [p for p in v.status()["problems"] if "beside" in p["reason"]]
