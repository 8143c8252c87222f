"""``memvault connect`` / ``disconnect`` (interfaces/cli/connect.py, core/json_edit.py):
a client's settings kept byte for byte apart from the keys added, HOME in a temp folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import new_vault, run_memvault
from memvault.core import json_edit
from memvault.core.claude_slug import project_dir_name
from memvault.interfaces.cli.connect import desktop_config

ROOT = Path(__file__).resolve().parents[1]

SETTINGS = """{
    "permissions": {"allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
                    "deny": []},
    "env": { "FOO": "b\\u00e4r", "N": 1.50e3 },
    "model": "opus"
}
"""
MCP = """{
  "mcpServers": {
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}
  }
}
"""


def memvault(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "XDG_"))}
    env["HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT / "daemon")
    return run_memvault(*args, env=env, cwd=home, timeout=60)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def project_with_settings(home: Path) -> Path:
    project = home / "code" / "app"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.local.json").write_text(SETTINGS, encoding="utf-8")
    (project / ".mcp.json").write_text(MCP, encoding="utf-8")
    return project


def test_connect_claude_code_keeps_every_other_setting_byte_for_byte(
    home: Path, tmp_path: Path
) -> None:
    vault = new_vault(tmp_path)
    project = project_with_settings(home)
    run = memvault(home, "connect", "claude-code", "--project", str(project), "--vault", str(vault))
    assert run.returncode == 0, run.stderr
    settings = (project / ".claude" / "settings.local.json").read_text(encoding="utf-8")
    added = f',\n    "autoMemoryDirectory": {json.dumps(str(vault.resolve()))}'
    assert settings == SETTINGS.replace('"opus"', '"opus"' + added)
    mcp = (project / ".mcp.json").read_text(encoding="utf-8")
    server = json.loads(mcp)["mcpServers"]["memvault"]
    assert server == {
        "type": "stdio",
        "command": sys.executable,
        "args": ["-m", "memvault", "mcp", "--vault", str(vault.resolve())],
    }
    assert Path(server["command"]).is_absolute()
    assert mcp.startswith(MCP.rstrip("\n}").rstrip("\n }") + "},\n")  # github's line as it was
    assert json.loads(mcp)["mcpServers"]["github"]["args"] == [
        "-y",
        "@modelcontextprotocol/server-github",
    ]
    # again: nothing to do, nothing written
    before = {p: p.stat().st_mtime_ns for p in (project / ".mcp.json", project / ".claude")}
    again = memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                     str(vault))  # fmt: skip
    assert again.returncode == 0 and "already as wanted" in again.stdout
    assert {p: p.stat().st_mtime_ns for p in before} == before
    # and disconnect gives back the very bytes
    off = memvault(home, "disconnect", "claude-code", "--project", str(project))
    assert off.returncode == 0, off.stderr
    assert (project / ".claude" / "settings.local.json").read_text(encoding="utf-8") == SETTINGS
    assert (project / ".mcp.json").read_text(encoding="utf-8") == MCP


def test_connect_says_where_claude_codes_auto_memory_so_far_stays(
    home: Path, tmp_path: Path
) -> None:
    """A project Claude Code has worked in keeps its auto memory in
    ~/.claude/projects/<the project's path, each other character a dash>/memory/ when
    no setting names a folder: `connect` points Claude Code at the vault, which no longer
    reads that folder, and said nothing of it (months of notes out of the agent's sight,
    the first day). It names the folder, its files, and how to bring them over."""
    vault = new_vault(tmp_path)
    project = home / "code" / "my_app.v2"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    old = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project)) / "memory"
    old.mkdir(parents=True)
    (old / "MEMORY.md").write_text("- [Build](build.md) — gradle 8\n", encoding="utf-8")
    (old / "build.md").write_text("# Build\n\nUse gradle 8.\n", encoding="utf-8")
    # in a folder of the repository, as `connect` is run there: the repository's memory
    run = memvault(home, "connect", "claude-code", "--project", str(project / "src"),
                   "--vault", str(vault))  # fmt: skip
    assert run.returncode == 0, run.stderr
    said = " ".join(run.stdout.split())
    assert f"Claude Code's auto memory of this project so far, 2 notes in {old}" in said, said
    assert "Claude Code no longer reads it" in said
    assert f"cp -n {old}/*.md" in said
    assert sorted(p.name for p in old.iterdir()) == ["MEMORY.md", "build.md"]  # untouched
    # --json says it too (an agent running connect for its person)
    run = memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                   str(vault), "--json", "--dry-run")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["auto_memory_left"] == {"path": str(old), "notes": 2}
    # none there: nothing said
    other = home / "code" / "new"
    other.mkdir()
    run = memvault(home, "connect", "claude-code", "--project", str(other), "--vault", str(vault))
    assert run.returncode == 0 and "so far" not in run.stdout
    run = memvault(home, "connect", "claude-code", "--project", str(other), "--vault",
                   str(vault), "--json")  # fmt: skip
    assert json.loads(run.stdout)["auto_memory_left"] is None, run.stdout


def test_claude_codes_project_folder_name_counts_utf16_units_and_cuts_a_long_path() -> None:
    """Claude Code's name for a project's folder: each UTF-16 code unit not an ASCII
    letter or digit a dash (an emoji two: it was one here, so a project with one in its
    path was never found), and past 200 characters the first 200 and a hash of the
    path (it was the whole name, so a deep project's folder was never found). The
    expected names are those Claude Code's function, as its CLI bundle has it (run in
    node), gives."""
    assert project_dir_name("/home/u/代码/my_app.v2") == "-home-u----my-app-v2"
    assert project_dir_name("/home/u/notes 😀/app") == "-home-u-notes----app"
    deep = "/Users/me/" + "project-folder/" * 15 + "app"
    assert project_dir_name(deep) == "-Users-me-" + "project-folder-" * 12 + "project-fo-d7rmyz"


LONG_PATHS_2_1_224 = [  # (a project's path, the hash ending its folder's name)
    ("/home/u/" + "代码/" * 70, "moj76t"),
    ("/home/u/" + "a😀b/" * 60, "xucq0r"),
    ("/home/u/" + "x" * 193, "f3o52b"),
    ("/home/ana/" + "Ärger " * 40, "fjzyus"),
    ("C:\\Users\\me\\" + "deep\\" * 50, "7p7zn9"),
    ("/w/" + "é" * 300, "fdbxvr"),
]


@pytest.mark.parametrize(("path", "hashed"), LONG_PATHS_2_1_224)
def test_a_long_projects_folder_is_named_as_claude_code_2_1_224_names_it(
    path: str, hashed: str
) -> None:
    """Past 200 characters, the names Claude Code 2.1.224 gives (its native build's
    bundle: `Gw`, its 200, its 32-bit hash in base 36, run in node on these paths; the
    same in 2.1.223). What 2.1.224 changed is how it lists a project's session folders
    past 200 characters (the folders sharing the first 200 kept only when a transcript
    there was of this path), not the name of the folder its auto memory is in."""
    name = project_dir_name(path)
    assert name[200:] == "-" + hashed
    assert re.fullmatch("[A-Za-z0-9-]{200}", name[:200])


def test_connect_finds_claude_codes_auto_memory_from_a_worktree_and_an_emoji_path(
    home: Path, tmp_path: Path
) -> None:
    """Claude Code keeps one auto memory for a repository, its main worktree's: `connect`
    run in a worktree `git worktree add` made looked for the worktree's own folder and
    said nothing of the repository's months of notes; and a project whose path holds an
    emoji has its folder named with two dashes for it, not one."""
    vault = new_vault(tmp_path)
    repo = home / "code" / "repo"
    repo.mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x"],
                   check=True)  # fmt: skip
    tree = home / "code" / "repo-fix"
    subprocess.run([*git, "-C", str(repo), "worktree", "add", "-q", str(tree)], check=True)
    (tree / "src").mkdir()
    emoji = home / "code" / "notes 😀"
    emoji.mkdir()
    for project in (repo, emoji):
        old = home / ".claude" / "projects" / project_dir_name(str(project)) / "memory"
        old.mkdir(parents=True)
        (old / "MEMORY.md").write_text("- [Build](build.md) — gradle 8\n", encoding="utf-8")
    for project, name in ((tree / "src", repo), (emoji, emoji)):
        old = home / ".claude" / "projects" / project_dir_name(str(name)) / "memory"
        run = memvault(home, "connect", "claude-code", "--project", str(project),
                       "--vault", str(vault))  # fmt: skip
        assert run.returncode == 0, run.stderr
        said = " ".join(run.stdout.split())
        assert f"so far, 1 note in {old}" in said, said


def test_the_cp_connect_prints_for_the_auto_memory_left_behind_copies_it(
    home: Path, tmp_path: Path
) -> None:
    """The `cp -n` that `connect` prints, run as it is printed: a vault whose path holds a
    space (iCloud's ~/Library/Mobile Documents/…, "My Vault") had its path printed bare,
    and the command a person pasted failed (`cp: target 'Vault/': No such file or
    directory`), or with a folder of that name there, copied into another one."""
    vault = new_vault(tmp_path / "Mobile Documents", "My Vault")
    project = home / "code" / "app"
    project.mkdir(parents=True)
    old = home / ".claude" / "projects" / project_dir_name(str(project)) / "memory"
    old.mkdir(parents=True)
    (old / "MEMORY.md").write_text("- [Build](build.md) — gradle 8\n", encoding="utf-8")
    (old / "build.md").write_text("# Build\n\nUse gradle 8.\n", encoding="utf-8")
    memory = (vault / "MEMORY.md").read_bytes()
    run = memvault(home, "connect", "claude-code", "--project", str(project),
                   "--vault", str(vault))  # fmt: skip
    assert run.returncode == 0, run.stderr
    said = " ".join(run.stdout.split())
    command = said[said.index("cp -n ") : said.index(" (-n keeps")]
    copied = subprocess.run(["sh", "-c", command], cwd=home, capture_output=True, text=True)
    assert copied.returncode == 0, (command, copied.stderr)
    assert (vault / "build.md").read_text(encoding="utf-8") == "# Build\n\nUse gradle 8.\n"
    assert (vault / "MEMORY.md").read_bytes() == memory  # -n: the vault's own kept


def test_connect_looks_for_the_auto_memory_left_behind_in_claude_config_dir(
    home: Path, tmp_path: Path
) -> None:
    """Claude Code keeps its ~/.claude where CLAUDE_CONFIG_DIR says when it is set (two
    accounts side by side, a dotfiles setup): `connect` looked in ~/.claude only and
    said nothing of the project's auto memory there."""
    vault = new_vault(tmp_path)
    project = home / "code" / "app"
    project.mkdir(parents=True)
    config = home / ".config" / "claude-work"
    old = config / "projects" / project_dir_name(str(project)) / "memory"
    old.mkdir(parents=True)
    (old / "MEMORY.md").write_text("- [Build](build.md) — gradle 8\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "XDG_"))}
    env |= {"HOME": str(home), "PYTHONPATH": str(ROOT / "daemon"), "CLAUDE_CONFIG_DIR": str(config)}
    run = run_memvault("connect", "claude-code", "--project", str(project),
                       "--vault", str(vault), env=env, cwd=home, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert f"so far, 1 note in {old}" in " ".join(run.stdout.split()), run.stdout


def test_connect_says_nothing_stays_behind_of_a_memory_folder_linked_into_the_vault(
    home: Path, tmp_path: Path
) -> None:
    """Before autoMemoryDirectory, people linked Claude Code's memory folder into their
    vault: `connect` told them their notes "stay there" and to copy the vault onto itself
    and add its MEMORY.md's lines to that same MEMORY.md (every line twice)."""
    vault = new_vault(tmp_path)
    (vault / "build.md").write_text("# Build\n", encoding="utf-8")
    project = home / "code" / "app"
    project.mkdir(parents=True)
    linked = home / ".claude" / "projects" / project_dir_name(str(project)) / "memory"
    linked.parent.mkdir(parents=True)
    linked.symlink_to(vault, target_is_directory=True)
    run = memvault(home, "connect", "claude-code", "--project", str(project),
                   "--vault", str(vault))  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "so far" not in run.stdout and "cp -n" not in run.stdout, run.stdout


def test_connect_claude_code_to_a_folder_of_the_vault_in_a_project_without_settings(
    home: Path, tmp_path: Path
) -> None:
    vault = new_vault(tmp_path)
    project = home / "fresh"
    project.mkdir()
    run = memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                   str(vault), "--folder", "claude")  # fmt: skip
    assert run.returncode == 0, run.stderr
    settings = json.loads((project / ".claude" / "settings.local.json").read_text("utf-8"))
    assert settings == {"autoMemoryDirectory": str(vault.resolve() / "claude")}
    assert "memvault" in json.loads((project / ".mcp.json").read_text("utf-8"))["mcpServers"]
    bad = memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                   str(vault), "--folder", "../elsewhere")  # fmt: skip
    assert bad.returncode == 5 and "'..' is not allowed" in bad.stderr
    # a folder vault.ignore leaves out (templates/): Claude Code's memory would be kept
    # there, never indexed, listed or found; connect said "now keeps its auto memory in"
    before = (project / ".claude" / "settings.local.json").read_bytes()
    bad = memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                   str(vault), "--folder", "templates")  # fmt: skip
    assert bad.returncode == 5 and "the vault leaves templates/ out (vault.ignore" in bad.stderr
    assert (project / ".claude" / "settings.local.json").read_bytes() == before


def test_connect_claude_code_in_the_projects_folder_needs_no_project_but_never_takes_home(
    home: Path, tmp_path: Path
) -> None:
    """Run in the project (as ``claude mcp add`` is), connect is that project's: before,
    "Missing option '--project'". Run in the home folder, it is refused, nothing
    written: ~/.claude is Claude Code's own settings, not a project's."""
    vault = new_vault(tmp_path)
    project = home / "code" / "app"
    project.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "XDG_"))}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT / "daemon"))
    run = run_memvault("connect", "claude-code", "--vault", str(vault), env=env, cwd=project)
    assert run.returncode == 0, run.stderr
    settings = json.loads((project / ".claude" / "settings.local.json").read_text("utf-8"))
    assert settings == {"autoMemoryDirectory": str(vault.resolve())}
    assert "memvault" in json.loads((project / ".mcp.json").read_text("utf-8"))["mcpServers"]
    refused = memvault(home, "connect", "claude-code", "--vault", str(vault))  # cwd: home
    assert refused.returncode == 2 and "your home folder" in refused.stderr
    assert sorted(p.name for p in home.iterdir()) == ["code"]
    off = run_memvault("disconnect", "claude-code", env=env, cwd=project)
    assert off.returncode == 0, off.stderr
    assert sorted(p.name for p in project.iterdir()) == []


def test_connect_claude_code_folder_is_the_vaults_own_folder_never_a_file_or_a_twin(
    home: Path, tmp_path: Path
) -> None:
    """``--folder people`` beside the vault's People/ set autoMemoryDirectory to a people/
    that Claude Code then made on ext4: a twin folder a clone on a Mac or Windows cannot
    hold beside People/, its notes listed in no MEMORY.md section (people/ is no
    section's folder). ``--folder MEMORY.md`` (or a note) set it to a file, where Claude
    Code cannot write its MEMORY.md; a symlinked folder leading out, outside the vault.
    Each was "now keeps its auto memory in", exit 0."""
    (tmp_path / "vault" / "People").mkdir(parents=True)  # init adopts it: no people/
    (tmp_path / "vault" / "People" / "Ana.md").write_text("# Ana\n", encoding="utf-8")
    vault = new_vault(tmp_path)
    assert not (vault / "people").exists()
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "elsewhere").symlink_to(outside)
    project = home / "fresh"
    project.mkdir()
    settings = project / ".claude" / "settings.local.json"

    def connect(folder: str) -> subprocess.CompletedProcess[str]:
        return memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                        str(vault), "--folder", folder)  # fmt: skip

    run = connect("people")
    assert run.returncode == 0, run.stderr
    assert json.loads(settings.read_text("utf-8")) == {
        "autoMemoryDirectory": str(vault.resolve() / "People")
    }
    before = settings.read_bytes()
    for folder in ("MEMORY.md", "People/Ana.md", "People/Ana.md/sub", "elsewhere"):
        bad = connect(folder)
        assert bad.returncode == 5, (folder, bad.stdout, bad.stderr)
        assert f"--folder {folder}" in bad.stderr or "outside the vault" in bad.stderr
        assert settings.read_bytes() == before


def test_dry_run_prints_the_change_and_writes_nothing(home: Path, tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    project = project_with_settings(home)
    run = memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                   str(vault), "--dry-run")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert f'+    "autoMemoryDirectory": {json.dumps(str(vault.resolve()))}' in run.stdout
    assert '+    "memvault": {' in run.stdout
    assert (project / ".claude" / "settings.local.json").read_text(encoding="utf-8") == SETTINGS
    assert (project / ".mcp.json").read_text(encoding="utf-8") == MCP


def test_a_malformed_settings_file_is_refused_untouched_with_its_line(
    home: Path, tmp_path: Path
) -> None:
    vault = new_vault(tmp_path)
    project = project_with_settings(home)
    broken = '{\n  "model": "opus"\n  "env": {}\n}\n'
    (project / ".claude" / "settings.local.json").write_text(broken, encoding="utf-8")
    settings = project / ".claude" / "settings.local.json"
    for command in ("connect", "disconnect"):
        args = ["--vault", str(vault)] if command == "connect" else []
        run = memvault(home, command, "claude-code", "--project", str(project), *args)
        assert run.returncode == 3
        # which file: it names it (it said "the text is not valid JSON")
        assert f"{settings} is not valid JSON (line 3, column 3" in run.stderr
        assert "left untouched" in run.stderr
        assert settings.read_text(encoding="utf-8") == broken
        assert (project / ".mcp.json").read_text(encoding="utf-8") == MCP  # nothing half done
    (project / ".mcp.json").write_text('{"mcpServers": []}', encoding="utf-8")
    (project / ".claude" / "settings.local.json").write_text(SETTINGS, encoding="utf-8")
    run = memvault(home, "connect", "claude-code", "--project", str(project), "--vault", str(vault))
    assert run.returncode == 3 and "mcpServers is not a JSON object" in run.stderr
    assert (project / ".mcp.json").read_text(encoding="utf-8") == '{"mcpServers": []}'


def test_connect_claude_desktop_writes_its_config_where_claude_desktop_reads_it(
    home: Path, tmp_path: Path
) -> None:
    vault = new_vault(tmp_path)
    config = desktop_config({"HOME": str(home)}, sys.platform)
    config.parent.mkdir(parents=True)
    original = '{\n\t"globalShortcut": "Ctrl+Space",\n\t"mcpServers": {}\n}'
    config.write_text(original, encoding="utf-8")
    run = memvault(home, "connect", "claude-desktop", "--vault", str(vault))
    assert run.returncode == 0, run.stderr
    data = json.loads(config.read_text(encoding="utf-8"))
    assert data["globalShortcut"] == "Ctrl+Space"
    assert data["mcpServers"]["memvault"]["args"][-1] == str(vault.resolve())
    assert Path(data["mcpServers"]["memvault"]["command"]).is_absolute()
    assert config.read_text(encoding="utf-8").startswith('{\n\t"globalShortcut": "Ctrl+Space",')
    off = memvault(home, "disconnect", "claude-desktop")
    assert off.returncode == 0, off.stderr
    assert json.loads(config.read_text(encoding="utf-8")) == {"globalShortcut": "Ctrl+Space"}


@pytest.mark.parametrize(
    ("platform", "env", "want"),
    [
        ("darwin", {"HOME": "/Users/ana"},
         "/Users/ana/Library/Application Support/Claude/claude_desktop_config.json"),
        ("win32", {"HOME": "C:/Users/ana", "APPDATA": "C:/Users/ana/AppData/Roaming"},
         "C:/Users/ana/AppData/Roaming/Claude/claude_desktop_config.json"),
        ("linux", {"HOME": "/home/ana"}, "/home/ana/.config/Claude/claude_desktop_config.json"),
        ("linux", {"HOME": "/home/ana", "XDG_CONFIG_HOME": "/cfg"},
         "/cfg/Claude/claude_desktop_config.json"),
    ],
)  # fmt: skip
def test_claude_desktops_config_path_per_os(platform: str, env: dict[str, str], want: str) -> None:
    assert desktop_config(env, platform).as_posix() == want


def test_disconnect_leaves_an_auto_memory_directory_that_is_not_a_vault(
    home: Path, tmp_path: Path
) -> None:
    project = home / "p"
    (project / ".claude").mkdir(parents=True)
    mine = '{"autoMemoryDirectory": "/somewhere/else"}'
    (project / ".claude" / "settings.local.json").write_text(mine, encoding="utf-8")
    run = memvault(home, "disconnect", "claude-code", "--project", str(project))
    assert run.returncode == 0, run.stderr
    assert (project / ".claude" / "settings.local.json").read_text(encoding="utf-8") == mine


# -- core/json_edit, directly --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        "{}\n",
        '{"a": 1}',
        '{\n  "a": [1, {"b": "}"}],\n  "c": "\\"x\\""\n}\n',
        '{\n\t"a": {\n\t\t"b": true\n\t}\n}',
        '{ "mcpServers": { "x": {} } }',
        '\n\n  {"a":1}  \n',
    ],
)
def test_set_then_remove_gives_back_the_original_bytes(text: str) -> None:
    for key in (("k",), ("mcpServers", "memvault"), ("a", "new")):
        data = json.loads(text)
        if key[0] == "a" and not isinstance(data.get("a"), dict):
            continue
        value: Any = {"command": "/usr/bin/python3", "args": ["-m", "memvault", "é"]}
        edited = json_edit.set_key(text, key, value)
        got = json.loads(edited)
        for k in key[:-1]:
            got = got[k]
        assert got[key[-1]] == value
        assert json_edit.remove_key(edited, key) == text, (text, key)


@pytest.mark.parametrize(
    "text",
    [
        '{\r\n\t"permissions": {\r\n\t\t"allow": ["Bash(ls:*)"]\r\n\t}\r\n}\r\n',
        '{\r\n  "mcpServers": {\r\n    "x": {}\r\n  }\r\n}\r\n',
        "{}\r\n",
    ],
)
def test_a_key_set_in_a_crlf_file_is_written_with_crlf_line_ends(text: str) -> None:
    """A settings file saved on Windows (CRLF; the field test's Claude Code settings.local.json)
    got its new key after a lone LF (`\t},\n\t"autoMemoryDirectory"...\r\n`): a file of
    mixed line ends, which git and editors there show as changed on every line."""
    for key in (("autoMemoryDirectory",), ("mcpServers", "memvault")):
        value: Any = {"command": "/usr/bin/python3", "args": ["-m", "memvault"]}
        edited = json_edit.set_key(text, key, value)
        assert "\n" not in edited.replace("\r\n", ""), edited
        assert json_edit.remove_key(edited, key) == text
        again = json_edit.set_key(edited, key, {"command": "/usr/bin/python3.12", "args": []})
        assert "\n" not in again.replace("\r\n", ""), again  # a value replaced in place


def test_set_key_replaces_a_value_in_place_and_refuses_what_is_not_an_object() -> None:
    text = '{"a": 1, "b": "old", "c": 3}'
    assert json_edit.set_key(text, ("b",), "new") == '{"a": 1, "b": "new", "c": 3}'
    assert json_edit.set_key(text, ("b",), "old") == text
    with pytest.raises(json_edit.JsonEditError, match="not an object"):
        json_edit.set_key("[1, 2]", ("a",), 1)
    with pytest.raises(json_edit.JsonEditError, match=r"line 1, column 7"):
        json_edit.set_key('{"a": }', ("a",), 1)


def test_disconnect_gives_back_the_auto_memory_directory_connect_replaced(
    home: Path, tmp_path: Path
) -> None:
    """A project whose Claude Code memory already lived elsewhere: connect points it at
    the vault, disconnect gives the old folder back (it removed the key, and Claude Code
    then forgot where its memory was)."""
    vault = new_vault(tmp_path)
    project = home / "p"
    (project / ".claude").mkdir(parents=True)
    mine = '{\n  "model": "opus",\n  "autoMemoryDirectory": "/home/me/old-memory"\n}\n'
    settings = project / ".claude" / "settings.local.json"
    settings.write_text(mine, encoding="utf-8")
    for i in range(2):  # connecting again keeps the folder that was there first
        run = memvault(home, "connect", "claude-code", "--project", str(project),
                       "--vault", str(vault))  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert ("/home/me/old-memory" in run.stdout) == (i == 0)  # said: disconnect gives it back
    assert json.loads(settings.read_text("utf-8"))["autoMemoryDirectory"] == str(vault.resolve())
    off = memvault(home, "disconnect", "claude-code", "--project", str(project), "--dry-run")
    assert off.returncode == 0 and '+  "autoMemoryDirectory": "/home/me/old-memory"' in off.stdout
    off = memvault(home, "disconnect", "claude-code", "--project", str(project))
    assert off.returncode == 0, off.stderr
    assert settings.read_text(encoding="utf-8") == mine
    assert not (project / ".mcp.json").exists()  # connect made it: gone with memvault's entry
    # a second disconnect: nothing of memvault's is left, the folder stays
    assert memvault(home, "disconnect", "claude-code", "--project", str(project)).returncode == 0
    assert settings.read_text(encoding="utf-8") == mine


def test_a_symlinked_settings_file_is_edited_where_it_lives(home: Path, tmp_path: Path) -> None:
    """Settings kept in a dotfiles folder and linked into the project: connect and
    disconnect edit the file the link leads to and leave the link a link (the atomic
    swap put a plain file in its place)."""
    vault = new_vault(tmp_path)
    project = project_with_settings(home)
    dots = home / "dotfiles"
    dots.mkdir()
    real = dots / "settings.local.json"
    link = project / ".claude" / "settings.local.json"
    real.write_text(link.read_text(encoding="utf-8"), encoding="utf-8")
    link.unlink()
    link.symlink_to(real)
    run = memvault(home, "connect", "claude-code", "--project", str(project), "--vault", str(vault))
    assert run.returncode == 0, run.stderr
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert json.loads(real.read_text("utf-8"))["autoMemoryDirectory"] == str(vault.resolve())
    off = memvault(home, "disconnect", "claude-code", "--project", str(project))
    assert off.returncode == 0, off.stderr
    assert link.is_symlink() and real.read_text(encoding="utf-8") == SETTINGS


def test_disconnect_leaves_a_project_without_settings_as_it_was(home: Path, tmp_path: Path) -> None:
    """connect made .claude/settings.local.json and .mcp.json from nothing; disconnect
    left both holding `{}`. A file connect made and nobody wrote in since goes (and the
    .claude/ folder it made, when empty); one a person or Claude Code wrote in keeps
    their entries; a file that was there keeps its bytes. Recorded in the vault's
    .memvault/claude-code-replaced.json beside the folder connect replaced."""
    vault = new_vault(tmp_path)
    project = home / "fresh"
    project.mkdir()
    for _ in range(2):  # connecting again changes nothing of it
        run = memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                       str(vault))  # fmt: skip
        assert run.returncode == 0, run.stderr
    record = json.loads((vault / ".memvault" / "claude-code-replaced.json").read_text("utf-8"))
    made = project.resolve() / ".claude" / "settings.local.json"
    assert set(record["created"]) == {str(made), str(project.resolve() / ".mcp.json")}
    dry = memvault(home, "disconnect", "claude-code", "--project", str(project), "--dry-run")
    assert dry.returncode == 0 and f"{made}: would be removed" in dry.stdout, dry.stdout
    assert made.exists()
    off = memvault(home, "disconnect", "claude-code", "--project", str(project))
    assert off.returncode == 0, off.stderr
    assert f"{made}: removed (memvault made it; nothing else was ever in it)" in off.stdout
    assert list(project.iterdir()) == []  # as it was: no .claude/, no .mcp.json
    record = json.loads((vault / ".memvault" / "claude-code-replaced.json").read_text("utf-8"))
    assert record["created"] == {}

    # an entry of someone else's written in since: the file stays, with it
    run = memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                   str(vault))  # fmt: skip
    assert run.returncode == 0, run.stderr
    text = made.read_text(encoding="utf-8")
    made.write_text(text.replace("{", '{\n  "model": "opus",', 1), encoding="utf-8")
    off = memvault(home, "disconnect", "claude-code", "--project", str(project))
    assert off.returncode == 0, off.stderr
    assert json.loads(made.read_text(encoding="utf-8")) == {"model": "opus"}
    assert not (project / ".mcp.json").exists()

    # a project with its own .mcp.json: it keeps its bytes, the settings connect made go
    made.unlink()
    (project / ".claude").rmdir()
    (project / ".mcp.json").write_text(MCP, encoding="utf-8")
    run = memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                   str(vault))  # fmt: skip
    assert run.returncode == 0, run.stderr
    off = memvault(home, "disconnect", "claude-code", "--project", str(project))
    assert off.returncode == 0, off.stderr
    assert sorted(p.name for p in project.iterdir()) == [".mcp.json"]
    assert (project / ".mcp.json").read_text(encoding="utf-8") == MCP


def test_disconnect_reads_the_record_an_earlier_version_kept(home: Path, tmp_path: Path) -> None:
    """.memvault/claude-code-replaced.json was {settings file: the folder connect
    replaced}: still read so, the folder given back."""
    vault = new_vault(tmp_path)
    project = home / "p"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.local.json"
    mine = '{\n  "autoMemoryDirectory": "/home/me/old-memory"\n}\n'
    settings.write_text(mine, encoding="utf-8")
    run = memvault(home, "connect", "claude-code", "--project", str(project), "--vault",
                   str(vault))  # fmt: skip
    assert run.returncode == 0, run.stderr
    record = vault / ".memvault" / "claude-code-replaced.json"
    old = {str(settings.resolve()): "/home/me/old-memory"}
    record.write_text(json.dumps(old), encoding="utf-8")
    off = memvault(home, "disconnect", "claude-code", "--project", str(project))
    assert off.returncode == 0, off.stderr
    assert settings.read_text(encoding="utf-8") == mine
    assert json.loads(record.read_text(encoding="utf-8"))["replaced"] == {}


def test_disconnect_claude_desktop_removes_the_config_connect_made_from_nothing(
    home: Path, tmp_path: Path
) -> None:
    """Claude Desktop never run: connect made its config (and its folder) from nothing;
    disconnect left them holding `{}`. Now both go, as for Claude Code; a config a
    person (or Claude Desktop) wrote in since keeps what they wrote."""
    vault = new_vault(tmp_path)
    config = desktop_config({"HOME": str(home)}, sys.platform)
    assert not config.parent.exists()
    run = memvault(home, "connect", "claude-desktop", "--vault", str(vault))
    assert run.returncode == 0, run.stderr
    assert config.exists()
    off = memvault(home, "disconnect", "claude-desktop")
    assert off.returncode == 0, off.stderr
    assert "removed (memvault made it" in off.stdout
    assert not config.exists() and not config.parent.exists()
    record = json.loads((vault / ".memvault" / "claude-code-replaced.json").read_text("utf-8"))
    assert record["created"] == {} and record["folders"] == []

    # written in since: the file stays with the person's setting
    run = memvault(home, "connect", "claude-desktop", "--vault", str(vault))
    assert run.returncode == 0, run.stderr
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("{", '{\n  "globalShortcut": "Alt+Space",', 1), "utf-8")
    off = memvault(home, "disconnect", "claude-desktop")
    assert off.returncode == 0, off.stderr
    assert json.loads(config.read_text(encoding="utf-8")) == {"globalShortcut": "Alt+Space"}


def test_connect_to_a_teams_vault_says_its_writer_keeps_it_not_up_here(
    home: Path, tmp_path: Path
) -> None:
    """On a reader's machine of a team's index `memvault up` is a read-only daemon: it
    keeps neither MEMORY.md nor the index, and Claude Code's notes written there are
    found once they reach the writer. Connect said `memvault up` keeps them current."""
    vault = new_vault(tmp_path, "team")
    config = vault / ".memvault" / "config.toml"
    text = config.read_text(encoding="utf-8").replace(
        'store = "sqlite"\ndsn = ""', 'store = "postgres"\ndsn = "postgresql://m@db.internal/team"'
    )
    assert 'store = "postgres"' in text
    config.write_text(text, encoding="utf-8")
    project = home / "code" / "app"
    project.mkdir(parents=True)
    done = memvault(
        home, "connect", "claude-code", "--project", str(project), "--vault", str(vault)
    )
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "the index is the team's, in PostgreSQL: its writer" in said, said
    assert "found once the writer has it" in said, said
    assert "`memvault up` keeps MEMORY.md and the index current" not in said, said
