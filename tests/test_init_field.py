"""init on the folders people really have: their own folder names beside odd entries, a
home folder or / typed by mistake, examples asked for in a folder of real notes."""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

import pytest

from helpers import run_namespaced, write
from memvault.vault.lock import wide_place
from memvault.vault.template import find_roles, init_vault, is_para


@pytest.mark.parametrize("odd", ["loop", "no-access"])
def test_an_entry_that_cannot_be_stat_ed_leaves_the_persons_folders_found(
    tmp_path: Path, odd: str
) -> None:
    """A symlink loop (or a symlink into a folder that cannot be searched) beside
    People/ made every role go unseen: init added people/ beside People/."""
    root = tmp_path / "notes"
    (root / "People").mkdir(parents=True)
    (root / "People" / "Ana.md").write_text("# Ana\n", encoding="utf-8")
    (root / "Projects").mkdir()
    if odd == "loop":
        os.symlink("loop-b", root / "loop-a")
        os.symlink("loop-a", root / "loop-b")
    else:
        # ELOOP through a chain: stat raises an error other than "not found"
        os.symlink("x/../loop-a", root / "loop-a")
    roles, _ = find_roles(root)
    assert roles == {"people": "People", "projects": "Projects"}
    report = init_vault(root)
    assert "people/" not in report.created and not (root / "people").exists()
    assert not (root / "projects").exists()


def test_init_refuses_the_home_folder_and_leaves_it_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``memvault init ~/`` (or ``up ~``, a slip for ``~/memory``) made the whole home
    folder a vault: MEMORY.md, templates/, people/... laid among the person's files, and
    every note under Documents/ and code/ indexed. It is refused (exit 5), naming the fix."""
    from typer.testing import CliRunner

    from memvault.interfaces.cli import app

    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "Documents" / "cv.md").write_text("# CV\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    before = sorted(p.relative_to(home).as_posix() for p in home.rglob("*"))
    for command in ("init", "up"):
        result = CliRunner().invoke(app, [command, "~"])
        assert result.exit_code == 5, result.output
        assert "home folder" in result.output and "memvault init ~/memory" in result.output
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == before
    init_vault(home / "memory")  # a folder in it is what it is for


def test_the_file_systems_root_is_no_vault_but_one_made_earlier_still_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.vault.lock import too_wide

    assert "root of the file system" in (too_wide(Path("/")) or "")
    home = tmp_path / "home"
    (home / ".memvault").mkdir(parents=True)  # a vault someone made there before
    monkeypatch.setenv("HOME", str(home))
    assert too_wide(home) is None
    init_vault(home)  # re-run on it: adds what is missing, as on any vault


@pytest.mark.parametrize(
    ("path", "place"),
    [
        (PurePosixPath("/home"), "homes"),
        (PurePosixPath("/Users"), "homes"),  # macOS
        (PurePosixPath("/users"), "homes"),  # macOS's disk ignores case
        (PurePosixPath("/mnt"), "mounts"),
        (PurePosixPath("/media"), "mounts"),
        (PurePosixPath("/media/ana"), "mounts"),  # Ubuntu mounts ana's disks in it
        (PurePosixPath("/run/media/ana"), "mounts"),  # Fedora
        (PurePosixPath("/Volumes"), "mounts"),  # macOS
        (PurePosixPath("/mnt/c"), "drive"),  # WSL
        (PurePosixPath("/mnt/D"), "drive"),
        (PurePosixPath("/mnt/c/Users"), "homes"),
        (PurePosixPath("/mnt/c/Users/ana"), "windows home"),
        (PurePosixPath("/srv/ana"), "home"),  # the home given, wherever it is
        # where /home and /mnt lead (a path is resolved): Fedora Silverblue's and the
        # other atomic desktops' links, FreeBSD's /home
        (PurePosixPath("/var/home"), "homes"),
        (PurePosixPath("/var/mnt"), "mounts"),
        (PurePosixPath("/usr/home"), "homes"),
        (PureWindowsPath("C:\\"), "root"),
        (PureWindowsPath("d:/"), "root"),
        (PureWindowsPath("C:\\Users"), "homes"),
        (PureWindowsPath("C:\\Users\\ana"), "home"),
        # the allowed neighbours: a folder inside each, and names like them
        (PurePosixPath("/home/ana/notes"), None),
        (PurePosixPath("/home/ana"), None),  # another user's home: not this one's
        (PurePosixPath("/Users/ana/notes"), None),
        (PurePosixPath("/mnt/c/Users/ana/notes"), None),
        (PurePosixPath("/mnt/c/notes"), None),
        (PurePosixPath("/mnt/data"), None),  # a disk mounted there, not a drive letter
        (PurePosixPath("/mnt/data/notes"), None),
        (PurePosixPath("/media/ana/usb"), None),
        (PurePosixPath("/Volumes/USB"), None),
        (PurePosixPath("/srv/ana/memory"), None),
        (PurePosixPath("/var/home/ana/notes"), None),
        (PurePosixPath("/var/mnt/data"), None),
        (PurePosixPath("/var"), None),
        (PureWindowsPath("C:\\Users\\ana\\notes"), None),
        (PureWindowsPath("D:\\notes"), None),
        (PureWindowsPath("C:\\home"), None),
    ],
    ids=str,
)
def test_the_folders_of_homes_and_disks_are_wide_places_and_a_folder_inside_is_not(
    path: PurePath, place: str | None
) -> None:
    """`/home` and WSL's `/mnt/c` were made vaults: only / and the home folder itself
    were refused. Python's rules for each system (a Windows path's drive and case)."""
    home = PureWindowsPath("C:/Users/ana") if isinstance(path, PureWindowsPath) else None
    assert wide_place(path, home or PurePosixPath("/srv/ana")) == place


WIDE_PLACES = """
import json, os, subprocess, sys
for place in ("/home", "/mnt", "/media"):  # this namespace's own, empty
    subprocess.run(["mount", "-t", "tmpfs", "none", place], check=True)
for folder in ("/home/ana", "/mnt/c/Users/ana", "/media/ana/usb", "/mnt/d/.memvault"):
    os.makedirs(folder)  # /mnt/d: a vault made there before this memvault refused it
out = {}
for folder in ("/home", "/mnt", "/mnt/c", "/mnt/c/Users", "/mnt/c/Users/ana", "/media/ana",
               "/home/ana/notes", "/mnt/c/Users/ana/notes", "/media/ana/usb/notes", "/mnt/d"):
    run = subprocess.run([sys.executable, "-m", "memvault", "init", folder],
                         capture_output=True, text=True)
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else None
    out[folder] = [run.returncode, run.stdout + run.stderr, names]
print(json.dumps(out))
"""


def test_init_refuses_home_and_mount_folders_and_makes_vaults_inside_them(
    tmp_path: Path,
) -> None:
    """The real CLI on a real /home, /mnt and /media (tmpfs, in a mount namespace of
    their own): each wide place refused (exit 5) with nothing written in it, a folder
    inside each made a vault, and a vault made at /mnt/d before keeps working."""
    namespace = ["unshare", "--user", "--map-root-user", "--mount"]
    out = run_namespaced(namespace, WIDE_PLACES, home=tmp_path / "home")
    for folder in ("/home", "/mnt", "/mnt/c", "/mnt/c/Users", "/mnt/c/Users/ana", "/media/ana"):
        code, said, names = out[folder]
        assert code == 5 and "make a folder for it" in said, (folder, said)
        assert ".memvault" not in names and "MEMORY.md" not in names, (folder, names)
    for folder in ("/home/ana/notes", "/mnt/c/Users/ana/notes", "/media/ana/usb/notes", "/mnt/d"):
        code, said, names = out[folder]
        assert code == 0 and names and "MEMORY.md" in names, (folder, said)


def test_the_example_notes_never_go_among_a_persons_notes(tmp_path: Path) -> None:
    """``init --example`` on a folder of real notes mixed a fictional team (Sarah Chen, a
    PostgreSQL decision) into the person's memory, where an agent would take it for
    fact. Refused (exit 5), nothing written; a demo vault run again is still fine."""
    from typer.testing import CliRunner

    from memvault.interfaces.cli import app

    root = tmp_path / "notes"
    (root / "people").mkdir(parents=True)
    (root / "people" / "me.md").write_text("# Me\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["init", "--example", str(root)])
    assert result.exit_code == 5, result.output
    assert "memvault init --example ./demo" in result.output
    assert sorted(p.name for p in root.rglob("*")) == ["me.md", "people"]
    demo = tmp_path / "demo"
    init_vault(demo, example=True)
    init_vault(demo, example=True)


def test_init_on_a_grown_memory_md_says_to_migrate_it(tmp_path: Path) -> None:
    """A first day with the failure memvault prevents: a MEMORY.md an agent grew to 20,000
    lines. init listed it as kept (`= MEMORY.md`) and said nothing of `migrate`; `up` then
    added memvault's sections after line 20,000, where no agent reads."""
    from typer.testing import CliRunner

    from memvault.interfaces.cli import app

    root = tmp_path / "notes"
    root.mkdir()
    grown = "".join(f"- observation {i} about the project\n" for i in range(20_000))
    (root / "MEMORY.md").write_text(grown, encoding="utf-8")
    result = CliRunner().invoke(app, ["init", str(root)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "MEMORY.md has 20,000 lines" in said and "memvault migrate MEMORY.md" in said
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == grown
    small = tmp_path / "small"
    small.mkdir()
    (small / "MEMORY.md").write_text("# Memory\n\n- a line\n", encoding="utf-8")
    assert "migrate" not in CliRunner().invoke(app, ["init", str(small)]).output


def test_init_on_an_agents_long_index_of_links_does_not_say_to_migrate_it(
    tmp_path: Path,
) -> None:
    """An agent's own index (a line per topic file, as Claude Code's auto memory keeps
    one) past memory.max_lines: init said "`memvault migrate MEMORY.md` splits them into
    notes", which would put every pointer into one inbox note. It says it is long and an
    index, to be shortened; a dump is still told to migrate (above)."""
    from typer.testing import CliRunner

    from memvault.interfaces.cli import app

    root = tmp_path / "notes"
    root.mkdir()
    index = "".join(f"- [[topic-{i}]] - what we learnt about area {i}\n" for i in range(150))
    (root / "MEMORY.md").write_text("# Memory\n\n" + index, encoding="utf-8")
    result = CliRunner().invoke(app, ["init", str(root)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "MEMORY.md has 152 lines" in said and "an index of links" in said
    assert "migrate" not in said


PARA_LAYOUTS = {
    "dash": ("1-Projects", "2-Areas", "3-Resources", "4-Archive"),
    "two digits": ("01 Projects", "02 Areas", "03 Resources", "04 Archive"),
    "dot": ("1. Projects", "2. Areas", "3. Resources", "4. Archive"),
    "unnumbered": ("Projects", "Areas", "Resources", "Archive"),
    # PARA told by its numbers, in any language (before: only by English names, and
    # these kept the projects section's `status: active` filter, which left it empty)
    "chinese": ("1-项目", "2-领域", "3-资源", "4-归档"),
    "russian": ("1 Проекты", "2 Сферы", "3 Ресурсы", "4 Архив"),
    "german": ("01_Projekte", "02_Bereiche", "03_Ressourcen", "04_Archiv"),
    # names init knows in no language: folder 1 is the projects one by its number
    "polish": ("1. Projekty", "2. Obszary", "3. Zasoby", "4. Archiwum"),
}


@pytest.mark.parametrize("layout", PARA_LAYOUTS, ids=list(PARA_LAYOUTS))
def test_init_on_a_para_vault_lists_its_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    """A PARA vault (Projects, Areas, Resources, Archive, numbered as most are: a field
    test's Chinese vault kept its projects in `1-Projects/`): `init` knew no numbered
    name, added an empty projects/ beside it, and MEMORY.md's projects section stayed
    empty. The number is no part of the name; PARA's Projects holds the active ones
    (the done ones go to Archive), so their notes need no `status: active`; Archive
    is no section."""
    from typer.testing import CliRunner

    from memvault.config import VaultConfig
    from memvault.interfaces.cli import app

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    projects, areas, resources, archive = PARA_LAYOUTS[layout]
    root = tmp_path / "notes"
    for rel, text in {
        f"{projects}/德勤/README.md": "---\ntype: project-readme\n---\n# 德勤 AI-Native\n",
        f"{projects}/Garden shed.md": "---\nsummary: Build the shed by May.\n---\n# Shed\n",
        f"{areas}/Health.md": "# Health\n",
        f"{resources}/Recipes.md": "# Recipes\n",
        f"{archive}/Old launch.md": "---\nsummary: Shipped in 2024.\n---\n# Old launch\n",
    }.items():
        write(root, rel, text)
    run = CliRunner().invoke
    done = run(app, ["init", str(root)])
    assert done.exit_code == 0, done.output
    assert f"using your folder {projects}/ for projects" in done.output, done.output
    assert not (root / "projects").exists()  # before: an empty projects/ beside it
    section = next(
        s for s in VaultConfig.load(root, env={}).memory.sections if s.name == "projects"
    )
    assert section.folder == projects and not section.filter
    assert run(app, ["sync", "--vault", str(root)]).exit_code == 0
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    block = memory.split("<!-- memvault:begin projects -->")[1].split("<!-- memvault:end")[0]
    assert f"- [[{projects}/Garden shed]] - Build the shed by May." in block, memory
    assert f"[[{projects}/德勤/README" in block, memory
    assert "Old launch" not in memory, memory  # Archive: no section


def test_init_keeps_the_active_filter_where_the_projects_say_active(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vault with an Archive/ beside its Projects/ is taken for PARA's, its projects
    section written without `status: active`; but these projects say their status, a
    done one among them: listed under "Active Projects" it misled an agent. The filter
    is kept where a note of the folder says `status: active`; Archive/ is indexed."""
    from typer.testing import CliRunner

    from memvault.config import VaultConfig
    from memvault.interfaces.cli import app

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "notes"
    for rel, text in {
        "Projects/Shed.md": "---\nstatus: [active]\nsummary: Build the shed.\n---\n# Shed\n",
        "Projects/Fence.md": "---\nstatus: done\nsummary: The fence went up.\n---\n# Fence\n",
        "Archive/Old launch.md": "# Old launch\n\nThe zanzibar launch, retired.\n",
    }.items():
        write(root, rel, text)
    run = CliRunner().invoke
    assert run(app, ["init", str(root)]).exit_code == 0
    config = root / ".memvault" / "config.toml"
    section = next(
        s for s in VaultConfig.load(root, env={}).memory.sections if s.name == "projects"
    )
    assert section.folder == "Projects" and section.filter == {"status": "active"}
    assert run(app, ["sync", "--vault", str(root)]).exit_code == 0
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    block = memory.split("<!-- memvault:begin projects -->")[1].split("<!-- memvault:end")[0]
    assert "[[Projects/Shed]]" in block and "Fence" not in block, memory
    other = tmp_path / "other"  # statuses of other words: the filter would list none
    write(other, "Projects/Shed.md", "---\nstatus: 进行中\n---\n# Shed\n")
    write(other, "Archive/Old.md", "# Old\n")
    assert run(app, ["init", str(other)]).exit_code == 0
    rules = VaultConfig.load(other, env={}).memory.sections
    assert next(s for s in rules if s.name == "projects").filter == {}
    found = run(app, ["search", "zanzibar", "--json", "--vault", str(root)])
    assert json.loads(found.output)["hits"][0]["path"] == "Archive/Old launch.md"
    kept = config.read_bytes()
    assert run(app, ["init", str(root)]).exit_code == 0  # a second init: nothing rewritten
    assert config.read_bytes() == kept


@pytest.mark.parametrize(
    ("names", "projects"),
    [
        (("Projects", "1-Projects"), "Projects"),  # the unnumbered one first
        (("2024", "3D", "Projects-old"), None),  # a number that is the name, no separator
        (("1-Projekte", "Leute"), "1-Projekte"),
    ],
)
def test_a_numbered_folder_is_its_name_to_init(
    tmp_path: Path, names: tuple[str, ...], projects: str | None
) -> None:
    for name in names:
        (tmp_path / name).mkdir()
    (tmp_path / names[0] / "a.md").write_text("# a\n", encoding="utf-8")
    roles, _ = find_roles(tmp_path)
    assert roles.get("projects") == projects, roles


@pytest.mark.parametrize(
    ("names", "projects"),
    [
        (("0-收件箱", "1-项目", "2-领域", "3-资源", "4-归档", "模板"), "1-项目"),  # an inbox 0
        (("00 Входящие", "01 Проекты", "02 Сферы", "03 Ресурсы", "04 Архив"), "01 Проекты"),
        (("1 Aktiv", "2 Bereiche", "3 Ressourcen", "4 Archiv", "Leute"), "1 Aktiv"),
    ],
)
def test_a_para_layout_is_told_by_its_numbers(
    tmp_path: Path, names: tuple[str, ...], projects: str
) -> None:
    """Four top folders numbered 1 to 4 (0 to 4 with an inbox), any language: PARA's,
    the one numbered 1 its projects folder (Tiago Forte's order), folders without a
    number beside them or not."""
    for name in names:
        (tmp_path / name).mkdir()
    (tmp_path / projects / "a.md").write_text("# a\n", encoding="utf-8")
    roles, _ = find_roles(tmp_path)
    assert roles.get("projects") == projects, roles
    assert is_para(tmp_path, projects)


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@pytest.mark.parametrize(
    "names",
    [
        tuple(f"{i}-{m}" for i, m in enumerate(MONTHS, 1)),  # twelve months
        tuple(f"{i:02d} {m}" for i, m in enumerate(MONTHS, 1)),
        ("1-Jan", "2-Feb", "3-Mar", "4-Apr"),  # a year's first months (rev54d: was PARA)
        ("01 January", "02 February", "03 march", "04 April", "Inbox"),
        ("1-项目", "2-领域"),  # only two numbered folders
        ("1-项目", "2-领域", "3-资源"),  # three
        ("1-项目", "2-领域", "3-资源", "4-归档", "5-其他"),  # a fifth
        ("2-领域", "3-资源", "4-归档", "5-其他"),  # no 1
        ("1-项目", "2-领域", "2-人物", "3-资源", "4-归档"),  # a number twice
        ("1-2021", "2-2022", "3-2023", "4-2024"),  # numbers, no names
        ("0-收件箱", "1-项目", "3-资源", "4-归档"),  # a gap
    ],
)
def test_numbered_folders_of_another_kind_are_no_para(
    tmp_path: Path, names: tuple[str, ...]
) -> None:
    """Numbered folders that are no PARA layout: no projects folder taken from their
    numbers (one named for projects still is, by its name: `1-项目`), no PARA."""
    for name in names:
        (tmp_path / name).mkdir()
    (tmp_path / names[0] / "a.md").write_text("# a\n", encoding="utf-8")
    roles, _ = find_roles(tmp_path)
    assert roles.get("projects") in (None, "1-项目"), roles
    assert not any(is_para(tmp_path, name) for name in names)
