"""``memvault connect`` / ``disconnect``: write a client's configuration for the vault.

- ``connect claude-code --project DIR``: ``autoMemoryDirectory`` in
  ``DIR/.claude/settings.local.json`` (Claude Code's auto memory then lives in the
  vault, or in ``--folder`` of it) and the MCP server in ``DIR/.mcp.json``;
- ``connect claude-desktop``: the MCP server in Claude Desktop's config (its path per
  OS, or ``--config``).

Every path written is absolute (Claude Desktop starts servers without your shell's
PATH or folder). Each file is edited as text (``core.json_edit``): every other byte is
kept, and ``disconnect`` takes the keys out again (a file ``connect`` made from
nothing, nobody else's entries ever in it, is removed, and the folder it made for it
when left empty: the vault's ``.memvault/claude-code-replaced.json`` records them). A file that is not a JSON object
is refused untouched, with the line. Writes are atomic compare-and-swap (re-read and
redone when the file changed meanwhile); ``--dry-run`` prints the diff and writes
nothing. Exit codes: 0 done (or nothing to do), 3 no vault or a malformed file, 1 a
file that kept changing or cannot be written.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from memvault.core import json_edit
from memvault.core.claude_slug import project_dir_name
from memvault.interfaces.cli import common
from memvault.interfaces.cli.common import JsonOpt, VaultOpt

SERVER = "memvault"  # the MCP server's name in each client's config
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Print the change; write nothing.")]
ProjectOpt = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="The project folder Claude Code runs in (default: the current folder).",
        show_default=False,
    ),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="Claude Desktop's config file (default: its place on this OS)."),
]
FolderOpt = Annotated[
    str | None,
    typer.Option(
        "--folder", help="A folder of the vault for Claude Code's memory (default: the vault)."
    ),
]


@dataclass(frozen=True, slots=True)
class Edit:
    """One key to set (value) or remove (value None) in one file."""

    path: Path
    key: tuple[str, ...]
    value: Any = None
    only_if: Any = None  # set or remove only while it holds this (another vault's stays)


def desktop_config(env: dict[str, str] | None = None, platform: str | None = None) -> Path:
    """Claude Desktop's claude_desktop_config.json on this OS."""
    env = dict(os.environ if env is None else env)
    platform = platform or sys.platform
    home = Path(env.get("HOME") or Path.home())
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if platform.startswith("win"):
        base = env.get("APPDATA") or str(home / "AppData" / "Roaming")
        return Path(base) / "Claude" / "claude_desktop_config.json"
    base = env.get("XDG_CONFIG_HOME") or str(home / ".config")
    return Path(base) / "Claude" / "claude_desktop_config.json"


def server_entry(vault: Path, stdio_type: bool) -> dict[str, Any]:
    """How a client starts ``memvault mcp`` on the vault: this Python, absolute paths."""
    entry: dict[str, Any] = {"type": "stdio"} if stdio_type else {}
    entry["command"] = sys.executable
    entry["args"] = ["-m", "memvault", "mcp", "--vault", str(vault)]
    return entry


def _real(path: Path) -> Path:
    """The file to edit: where a symlink leads (settings kept in a dotfiles folder stay
    there, and the link stays a link), else the path."""
    return Path(os.path.realpath(path))


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return data.decode("utf-8")


def _planned(edits: list[Edit]) -> list[tuple[Path, str | None, str | None]]:
    """(file, text now, text after) per file, every edit of a file applied in turn."""
    out = []
    for path in dict.fromkeys(e.path for e in edits):
        before = _read(path)
        after = before
        for e in (e for e in edits if e.path == path):
            if after is None and e.value is None:
                continue  # no file: nothing to take out
            text = after or ""
            bom = text.startswith("\ufeff")
            body = text[1:] if bom else text
            if e.only_if is not None and json_edit.get(body, e.key, str(path)) != e.only_if:
                pass  # changed since: it is not ours to take out any more
            elif e.value is not None:
                body = json_edit.set_key(body, e.key, e.value, str(path))
            else:
                body = json_edit.remove_key(body, e.key, str(path))
            after = ("\ufeff" if bom else "") + body
        out.append((path, before, after))
    return out


def _apply(
    edits: list[Edit],
    dry_run: bool,
    as_json: bool,
    made: dict[str, str] | None = None,
    said: dict[str, Any] | None = None,
) -> dict[Path, tuple[str | None, str | None]]:
    """Every edit made (or, with ``dry_run``, shown); exits on a file it cannot edit.
    ``made``: {real path: sha256} of files connect made from nothing and nobody wrote
    in since (``_record_of``): one of those holding nothing but memvault's is removed.
    ``said``: more keys of the --json answer. Returns {file: (its text before,
    after)}: after None when it is removed."""
    from memvault.core.text import sha256_bytes
    from memvault.errors import WriteConflict
    from memvault.vault.swap import Swapper

    shown: list[dict[str, Any]] = []
    swapper = Swapper(quiet_ms=0)
    made = made or {}
    plan: list[tuple[Path, str | None, str | None]] = []
    for _attempt in range(5):
        try:
            plan = _planned(edits)
        except json_edit.JsonEditError as exc:
            common.fail(f"{exc}; left untouched: fix it and run again", 3, as_json)
        except UnicodeDecodeError as exc:
            common.fail(f"a config file is not UTF-8 text ({exc}); left untouched", 3, as_json)
        conflict = False
        shown = []
        for i, (path, before, after) in enumerate(plan):
            sha = made.get(str(_real(path)))
            # made by connect, only ever memvault's since: removed, not left holding {}
            if (
                sha is not None
                and before is not None
                and after != before
                and sha256_bytes(before.encode("utf-8")) == sha
            ):
                plan[i] = (path, before, None)
                shown.append({"path": str(path), "changed": True, "removed": True})
                if not dry_run and not _remove_if(_real(path), sha):
                    conflict = True  # saved meanwhile: read again and redo
                    break
                continue
            changed = after is not None and after != before
            shown.append({"path": str(path), "changed": changed})
            if not changed:
                continue
            assert after is not None
            if dry_run:
                diff = difflib.unified_diff(
                    (before or "").splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    f"{path} (now)",
                    f"{path} (after)",
                )
                if not as_json:
                    common.out.print("".join(diff).rstrip("\n"))
                continue
            expected = None if before is None else sha256_bytes(before.encode("utf-8"))
            try:
                done, _ = swapper.swap(_real(path), after.encode("utf-8"), expected)
            except (OSError, WriteConflict) as exc:
                common.fail(f"{path}: cannot be written: {exc}", 1, as_json)
            if not done:  # changed meanwhile: read again and redo
                conflict = True
                break
        if not conflict:
            break
    else:
        common.fail("a config file kept changing while memvault edited it; left as is", 1, as_json)
    if as_json:
        common.emit_json({"dry_run": dry_run, "files": shown, **(said or {})})
        return {path: (before, after) for path, before, after in plan}
    for f in shown:
        if f.get("removed"):
            how = "would be removed" if dry_run else "removed"
            common.out.print(f"{f['path']}: {how} (memvault made it; nothing else was ever in it)")
        elif not f["changed"]:
            common.out.print(f"{f['path']}: already as wanted, left as it is")
        elif not dry_run:
            common.out.print(f"{f['path']}: written (every other setting kept)")
    return {path: (before, after) for path, before, after in plan}


def _remove_if(path: Path, sha: str) -> bool:
    """Remove ``path`` if it holds the bytes of ``sha`` (False: it changed). The file
    leaves its name in one rename, then is checked: a save that came in between gets
    its name back (or, with a newer save there already, is superseded by it)."""
    from memvault.core.text import sha256_bytes
    from memvault.vault.swap import place_new, temp_name

    gone = path.with_name(temp_name(path.name))
    try:
        os.rename(path, gone)
    except FileNotFoundError:
        return True
    if sha256_bytes(gone.read_bytes()) == sha:
        gone.unlink()
        return True
    with contextlib.suppress(FileExistsError):  # a newer save there: it stays
        place_new(gone, path)  # (a disk without hard links: gone is renamed back)
    gone.unlink(missing_ok=True)
    return False


def _vault(vault: Path | None) -> Path:
    return common.resolve_vault(vault).resolve()


def _memory_dir(root: Path, folder: str | None, as_json: bool) -> Path:
    if not folder:
        return root
    from memvault.config import VaultConfig
    from memvault.vault.files import VaultFS, normalize_rel
    from memvault.vault.paths import case_spelling, disk_spelling

    with common.handled(as_json):
        rel = normalize_rel(folder)
        fs = VaultFS(root, VaultConfig.load(root).vault.ignore)
        # the vault's own spelling of a folder there in another case or Unicode form:
        # Claude Code would make a twin of it (People/ and people/, one on a Mac)
        rel = disk_spelling(str(root), rel, fresh=fs.folds)
        if not (root / rel).exists():
            rel = case_spelling(str(root), rel) or rel
        disk = fs.path(rel)  # a symlink leading out of the vault is refused
    if (disk.exists() and not disk.is_dir()) or any(p.is_file() for p in disk.parents):
        common.fail(
            f"--folder {folder}: {rel} is a file of the vault, not a folder; Claude Code "
            "writes its MEMORY.md and topic files into a folder: name one (a new one is made)",
            5,
            as_json,
        )
    if fs.is_ignored(f"{rel}/MEMORY.md"):  # a file Claude Code writes there
        common.fail(
            f"--folder {folder}: the vault leaves {rel}/ out (vault.ignore in "
            ".memvault/config.toml), so Claude Code's memory there would not be indexed, "
            "listed in MEMORY.md or found by search; choose another folder",
            5,
            as_json,
        )
    return root / rel


def _project(given: Path | None, as_json: bool) -> Path:
    project = (given or Path.cwd()).expanduser().resolve()
    if given is None and project in (Path.home().resolve(), Path(project.anchor)):
        # Claude Code's own settings are ~/.claude: a project there is no slip to make
        where = "your home folder" if project != Path(project.anchor) else "the root folder"
        common.fail(f"the current folder is {where}: run this in the project's folder, or "
                    "give --project", 2, as_json)  # fmt: skip
    if not project.is_dir():
        common.fail(f"{project} is not a folder (--project names the project Claude Code runs in)",
                    2, as_json)  # fmt: skip
    return project


def _kept_by(root: Path) -> str:
    """What keeps the vault's MEMORY.md and index current, as `connect` says it. A team's
    index in PostgreSQL is its writer's (docs/TEAM.md): on a reader's machine `memvault
    up` keeps neither, and what Claude Code writes there is found once the writer has
    it. It said `memvault up` keeps them, on every machine."""
    from memvault.config import VaultConfig
    from memvault.errors import MemvaultError

    with contextlib.suppress(MemvaultError):
        if VaultConfig.load(root).index.store == "postgres":
            return (
                "the index is the team's, in PostgreSQL: its writer (`memvault up` on the "
                "writer's machine) keeps MEMORY.md and the index current; what Claude Code "
                "writes on another machine is found once the writer has it (git: commit and "
                "push here, pull there)"
            )
    return "`memvault up` keeps MEMORY.md and the index current"


def claude_code(
    project: ProjectOpt = None,
    folder: FolderOpt = None,
    vault: VaultOpt = None,
    dry_run: DryRunOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Make the vault Claude Code's memory in a project: autoMemoryDirectory in
    .claude/settings.local.json, and the memvault MCP server in .mcp.json."""
    with common.handled(as_json):
        root = _vault(vault)
    project = _project(project, as_json)
    memory = _memory_dir(root, folder, as_json)
    settings = project / ".claude" / "settings.local.json"
    current = _auto_memory(settings, as_json)
    replaced = _replaced(root, settings, current, memory)
    folder_there = os.path.lexists(settings.parent)
    was = _default_memory(project) if current is None else None
    if was is not None and was[0].resolve().is_relative_to(root.resolve()):
        # a memory folder linked into the vault, as some did before autoMemoryDirectory,
        # is the vault's own notes: nothing stays behind
        was = None
    left = {"path": str(was[0]), "notes": was[1]} if was is not None else None
    done = _apply(
        [
            Edit(settings, (AUTO_MEMORY,), str(memory)),
            Edit(project / ".mcp.json", ("mcpServers", SERVER), server_entry(root, True)),
        ],
        dry_run,
        as_json,
        said={"auto_memory_left": left},
    )
    if not dry_run:
        _record(root, settings, replaced, done, None if folder_there else settings.parent)
    if not as_json and not dry_run:
        common.out.print(
            f"Claude Code in {project} now keeps its auto memory in {memory} and has the "
            f"memvault MCP tools; {_kept_by(root)}"
        )
    if replaced is not None and not as_json:
        common.out.print(
            f"Its auto memory was in {replaced}: `memvault disconnect claude-code` gives "
            "that folder back (its files stay there)"
        )
    if was is not None and not as_json:
        old, n = was
        common.out.print(
            f"Claude Code's auto memory of this project so far, {n} note{'s' if n != 1 else ''} "
            f"in {old}, stays "
            f"there: Claude Code no longer reads it. To keep it, copy it into the vault: "
            f"cp -n {shlex.quote(str(old))}/*.md {shlex.quote(str(memory))}/ (-n keeps the "
            f"vault's MEMORY.md: add the lines of {old}/MEMORY.md to it yourself)"
        )


def _default_memory(project: Path) -> tuple[Path, int] | None:
    """The folder Claude Code keeps a project's auto memory in when no setting names one,
    ~/.claude/projects/<the path, core/claude_slug>/memory/ ($CLAUDE_CONFIG_DIR for
    ~/.claude when it is set; of the git repository
    holding ``project`` — its main worktree's, which every worktree shares — or of
    ``project``), with its notes' count; None when there is none holding a note."""
    top = next((p for p in (project, *project.parents) if (p / ".git").exists()), None)
    if top is not None:
        top = _main_worktree(top)
    where = [project] if top in (None, project) else [top, project]
    config = os.environ.get("CLAUDE_CONFIG_DIR")  # Claude Code's own ~/.claude moved
    projects = (Path(config).expanduser() if config else Path.home() / ".claude") / "projects"
    for folder in where:
        old = projects / project_dir_name(str(folder)) / "memory"
        with contextlib.suppress(OSError):
            n = sum(1 for p in old.iterdir() if p.name.endswith(".md") and p.is_file())
            if n:
                return old, n
    return None


def _main_worktree(top: Path) -> Path:
    """The main worktree of the repository whose worktree is ``top``: ``top`` itself,
    or for one `git worktree add` made (a `.git` file, ``gitdir: <main>/.git/worktrees/
    <name>``) the folder of the repository's own `.git` (its ``commondir``); a
    submodule's (its git folder under the parent's `.git/modules/`): ``top``."""
    from memvault.vault.gitstate import common_dir, git_dir

    if (top / ".git").is_dir():
        return top  # a .git folder: the main worktree itself
    gdir = git_dir(top)
    common = common_dir(gdir).resolve() if gdir is not None else None
    return common.parent if common is not None and common.name == ".git" else top


def claude_desktop(
    config: ConfigOpt = None,
    vault: VaultOpt = None,
    dry_run: DryRunOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Add the memvault MCP server for the vault to Claude Desktop's config."""
    with common.handled(as_json):
        root = _vault(vault)
    path = (config or desktop_config()).expanduser().absolute()
    folder_there = os.path.lexists(path.parent)
    done = _apply([Edit(path, ("mcpServers", SERVER), server_entry(root, False))], dry_run, as_json)
    if not dry_run:  # a config made from nothing (Claude Desktop never run): disconnect removes it
        _record(root, path, None, done, None if folder_there else path.parent)
    if not as_json and not dry_run:
        common.out.print("Restart Claude Desktop to load the memvault server.")


def disconnect_claude_code(
    project: ProjectOpt = None,
    dry_run: DryRunOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Take out what `memvault connect claude-code` added (an autoMemoryDirectory
    outside any vault is left alone)."""
    project = _project(project, as_json)
    settings = project / ".claude" / "settings.local.json"
    mcp = project / ".mcp.json"
    edits = [Edit(mcp, ("mcpServers", SERVER))]
    current = _auto_memory(settings, as_json)
    root = _vault_of(Path(current)) if isinstance(current, str) else None
    before = None if root is None else _record_of(root)["replaced"].get(str(_real(settings)))
    if root is not None:  # memvault's: the folder it replaced back, or the key out
        edits.insert(0, Edit(settings, (AUTO_MEMORY,), before, only_if=current))
    home = root or _server_vault(mcp, as_json)  # the vault whose record says what connect made
    made = {} if home is None else _record_of(home)["created"]
    done = _apply(edits, dry_run, as_json, made)
    if dry_run or home is None:
        return
    given_back = settings if root is not None and before is not None else None
    _forget_made(home, list(done), settings.parent, given_back)


def disconnect_claude_desktop(
    config: ConfigOpt = None,
    dry_run: DryRunOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Take the memvault MCP server out of Claude Desktop's config."""
    path = (config or desktop_config()).expanduser().absolute()
    home = _server_vault(path, as_json)  # the vault whose record says whether connect made it
    made = {} if home is None else _record_of(home)["created"]
    done = _apply([Edit(path, ("mcpServers", SERVER))], dry_run, as_json, made)
    if not dry_run and home is not None:
        _forget_made(home, list(done), path.parent)


def _vault_of(folder: Path) -> Path | None:
    """The vault ``folder`` is in, if any."""
    from memvault.vault.lock import is_vault

    return next((p for p in (folder, *folder.parents) if is_vault(p)), None)


def _value_in(path: Path, key: tuple[str, ...], as_json: bool) -> Any:
    """The value at ``key`` in the JSON file ``path`` now (None: no file, or not set);
    a file that is not JSON text exits 3, untouched."""
    try:
        text = _read(path)
        return None if text is None else json_edit.get(text.lstrip("\ufeff"), key, str(path))
    except (json_edit.JsonEditError, UnicodeDecodeError) as exc:
        common.fail(f"{exc}; left untouched: fix it and run again", 3, as_json)


def _auto_memory(settings: Path, as_json: bool) -> Any:
    """Claude Code's ``autoMemoryDirectory`` in ``settings`` now (None: not set)."""
    return _value_in(settings, (AUTO_MEMORY,), as_json)


# The folders `connect claude-code` replaced, for `disconnect` to give back:
# {settings file (its real path): the autoMemoryDirectory it held}, in the vault's .memvault/
REPLACED = "claude-code-replaced.json"
AUTO_MEMORY = "autoMemoryDirectory"


def _replaced(root: Path, settings: Path, current: Any, memory: Path) -> Any:
    """The autoMemoryDirectory connect replaces, to remember: none when it is already
    memvault's (this vault's, or remembered from a first connect)."""
    if current is None or current == str(memory):
        return None
    if isinstance(current, str) and _vault_of(Path(current)) == root:
        return None
    return current if str(_real(settings)) not in _record_of(root)["replaced"] else None


def _record_of(root: Path) -> dict[str, Any]:
    """The vault's record of what connect changed in projects: ``replaced`` {settings
    file: the autoMemoryDirectory it held}, ``created`` {file connect made from nothing:
    the sha256 of what memvault last wrote in it, while nobody else has}, ``folders``
    (the .claude/ folders it made). An earlier version's record is ``replaced`` alone."""
    try:
        data = json.loads((root / ".memvault" / REPLACED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data = data if isinstance(data, dict) else {}
    if "replaced" not in data:  # the first form: {settings file: the folder it held}
        data = {"replaced": data}
    out = {"replaced": {}, "created": {}, "folders": [], **data}
    for name, kind in (("replaced", dict), ("created", dict), ("folders", list)):
        if not isinstance(out[name], kind):
            out[name] = kind()
    return out


def _write_record(root: Path, data: dict[str, Any]) -> None:
    if data == _record_of(root) and (root / ".memvault" / REPLACED).exists():
        return  # nothing new to keep
    path = root / ".memvault" / REPLACED
    tmp = path.with_name(f".{REPLACED}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _record(
    root: Path,
    settings: Path,
    replaced: Any,
    done: dict[Path, tuple[str | None, str | None]],
    folder: Path | None,
) -> None:
    """After connect: the folder it replaced, and each file it made from nothing (or
    made before and nobody wrote in since) with the sha256 of what it holds now; a
    file someone else wrote in is no longer memvault's to remove."""
    from memvault.core.text import sha256_bytes

    data = _record_of(root)
    if replaced is not None:
        data["replaced"][str(_real(settings))] = replaced
    created = data["created"]
    for path, (before, after) in done.items():
        key = str(_real(path))
        ours = before is None or sha256_bytes(before.encode("utf-8")) == created.get(key)
        if ours and after is not None:
            created[key] = sha256_bytes(after.encode("utf-8"))
        else:
            created.pop(key, None)
    if folder is not None and folder.is_dir() and str(folder) not in data["folders"]:
        data["folders"].append(str(folder))
    _write_record(root, data)


def _forget_made(
    root: Path, files: list[Path], folder: Path, given_back: Path | None = None
) -> None:
    """After disconnect: its files out of the record (removed, or kept for what someone
    else wrote in them), the .claude/ folder connect made removed too when nothing is
    left in it, and (``given_back``) the settings file whose folder was given back."""
    data = _record_of(root)
    if given_back is not None:
        data["replaced"].pop(str(_real(given_back)), None)
    for path in files:
        data["created"].pop(str(_real(path)), None)
    if str(folder) in data["folders"]:
        with contextlib.suppress(OSError):  # only an empty folder: anything in it stays
            folder.rmdir()
        if not folder.exists():
            data["folders"].remove(str(folder))
    _write_record(root, data)


def _server_vault(mcp: Path, as_json: bool) -> Path | None:
    """The vault the project's memvault MCP server serves (``--vault`` in .mcp.json)."""
    args = _value_in(mcp, ("mcpServers", SERVER, "args"), as_json)
    if not isinstance(args, list) or "--vault" not in args[:-1]:
        return None
    vault = args[args.index("--vault") + 1]
    return _vault_of(Path(vault)) if isinstance(vault, str) else None


__all__ = [
    "claude_code",
    "claude_desktop",
    "desktop_config",
    "disconnect_claude_code",
    "disconnect_claude_desktop",
    "server_entry",
]
