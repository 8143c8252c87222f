"""``memvault init``: lay the vault template down, never overwriting a person's file.

A new vault holds structure, templates and settings only — ``MEMORY.md`` with
its empty managed sections, ``templates/``, ``.obsidian/``, ``.memvault/config.toml``
and the four note folders — never notes: an agent must not "remember" an example
as a fact. The example notes (Sarah Chen and her PostgreSQL decision) live in a
vault of their own, ``vault-example/``, laid on top with ``example=True``
(``memvault init --example``) for a demo or a test.

On a folder that already holds notes, ``init`` adds only what is missing and
keeps everything else as it is: an existing ``.obsidian/`` is a person's Obsidian
settings, so nothing is added into it. A template memvault shipped before and
nobody changed since (its sha256 is listed below) is brought up to date; a
template a person edited is theirs and is kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import unicodedata
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from memvault.config import VaultConfig
from memvault.core import memory_own
from memvault.core.memory_order import field_says
from memvault.core.notes import parse_note
from memvault.core.results import Record
from memvault.errors import ConfigError, VaultInside
from memvault.vault.gitstate import ignored_by
from memvault.vault.lock import misplaced, too_wide
from memvault.vault.paths import disk_spelling, glob_literal, is_dir_entry

CATEGORY_FOLDERS = ("people", "projects", "decisions", "logs")
# git merges MEMORY.md, the folder notes and the day's logs of two clones line by line
# (merge=union): memvault's lists are put in order again after, nobody's lines lost
GITATTRIBUTES = ".gitattributes"
# Names a person's vault gives the folders that play these roles (any case; a few other
# languages' too): `init` on existing notes uses them instead of adding people/ beside People/.
ROLE_NAMES = {
    "people": "people persons person contacts team personen leute personnes personas pessoas "
    "люди контакты 人物 人员 人員 사람 인물",
    "projects": "projects project projekte projets proyectos projetos progetti "
    "проекты プロジェクト 项目 項目 專案 프로젝트",
    "decisions": "decisions decision adr adrs entscheidungen décisions decisiones decisões "
    "решения 決定 决策 決策 결정",
    "logs": "logs log daily journal diary dailies tagebuch diario registro "
    "дневник 日記 日记 日志 日誌 일기",
}

# A PARA vault's number before a folder's name (`1-Projects`, `01 Projects`, `1. Projects`,
# `01_Projects`, `1) Projects`): the folder's name is what follows it
_NUMBERED = re.compile(r"(\d{1,3})(?:[ \t]*[-_.)][ \t]*|[ \t]+)(?=\S)")
# PARA told by its numbers, in any language (`1-项目`, `2-领域`, `3-资源`, `4-归档`; `1
# Проекты`, `2 Сферы`...): the numbers of the vault's numbered top folders, an inbox 0
# or not. Tiago Forte's order, Projects first: the folder numbered 1 is the projects one
PARA_NUMBERS = ((1, 2, 3, 4), (0, 1, 2, 3, 4))
# ...unless each is named for the month of its number, in English (`1-Jan` ... `4-Apr`, `01
# January`): a year's first months. Other languages' months are not told (no locale data
# offline): four folders `1-Januar` ... `4-April` are taken for PARA, init says so, and
# config.toml's projects folder is the person's to change
_MONTHS = ("january", "february", "march", "april")
# PARA's other folders (Tiago Forte's Projects, Areas, Resources, Archive): beside one of
# them, a Projects folder holds the active projects alone (the done ones go to Archive)
PARA_NAMES = frozenset({"areas", "area", "resources", "resource", "archive", "archives"})
ACTIVE_FILTER = 'filter = { status = "active" }\n'

# sha256 of templates memvault shipped before (with italic placeholder lines where a
# hint now is): the same file, untouched since init, is replaced by today's template.
PREVIOUS_TEMPLATES: dict[str, frozenset[str]] = {
    "templates/daily-log.md": frozenset(
        {"8c813c897ddee40973cb297b777700958761c79a38f0fc5f7117a89f61652293"}
    ),
    "templates/decision.md": frozenset(
        {"c4baf858d65400efb9959500c01be19e571f4434f7ef994860f4f7b852b78331"}
    ),
    "templates/person.md": frozenset(
        {"18ec2c9fdeffc3b4b2f32e26ffd6cdde647e0c0a3e356fa5d33f1f0157203765"}
    ),
    "templates/project.md": frozenset(
        {"d445cdb8ff05c34a6f374599d935fe94f4b8c85b7111d8ded0a2c5738c4a1e1c"}
    ),
}


@dataclass(frozen=True, slots=True)
class InitReport(Record):
    root: str
    created: tuple[str, ...]  # files and folders (ending in "/") laid down
    skipped: tuple[str, ...]  # already there: left exactly as they were
    updated: tuple[str, ...] = ()  # templates memvault shipped before, unchanged: replaced
    notes: int = 0  # notes the folder held already (kept as they are)
    kept_obsidian: bool = False  # .obsidian/ was there: nothing added into it
    roles: dict[str, str] | None = None  # category -> the vault's own folder, used for it
    # the vault's templates folders (the Templates plugin's, Templater's), ignored
    templates_ignored: tuple[str, ...] = ()
    # the git rule that keeps .memvault/config.toml out of the repository (a root
    # .gitignore's `.memvault/`): the other clones get no settings
    settings_ignored: str | None = None
    # lines of the MEMORY.md that was there, when past memory.max_lines: a dump an agent
    # grew, which `memvault migrate` splits into notes (0: none, or a small one)
    memory_lines: int = 0
    # those lines an index of links (an agent's), not a dump: core/memory_own
    memory_index: bool = False


def _shipped(name: str) -> Traversable:
    packaged = resources.files("memvault") / name
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"{name}/ is missing from this installation of memvault")


def template_root() -> Traversable:
    """The template shipped inside the wheel, or the checkout's vault-template/."""
    return _shipped("vault-template")


def example_root() -> Traversable:
    """The example vault (notes only) shipped inside the wheel, or the checkout's."""
    return _shipped("vault-example")


def shipped_template(rel: str, data: bytes | None) -> str | None:
    """The text to use for the vault's template ``rel`` whose bytes are ``data`` (None:
    missing): the vault's own, or memvault's current one when the vault's is missing
    or is a previous one of memvault's, unchanged. None if neither exists."""
    if data is not None and _sha(data) not in PREVIOUS_TEMPLATES.get(rel, frozenset()):
        return data.decode("utf-8", "replace").removeprefix("\ufeff")
    item = template_root().joinpath(*rel.split("/"))
    try:
        return item.read_text(encoding="utf-8")
    except (OSError, FileNotFoundError):
        return None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _files(folder: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    out = []
    for item in sorted(folder.iterdir(), key=lambda t: t.name):
        rel = f"{prefix}{item.name}"
        if item.is_dir():
            if item.name != "__pycache__":
                out += _files(item, rel + "/")
        elif not item.name.endswith(".pyc"):
            out.append((rel, item))
    return out


def _create(target: Path, data: bytes) -> bool:
    """Write a new file; False if one is there (never overwritten, even one that
    appeared meanwhile)."""
    if target.exists() or target.is_symlink():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return True


def _replace_if_unchanged(target: Path, old: bytes, new: bytes) -> bool:
    """Replace a file still holding ``old`` with ``new`` (temp + rename; a file that
    changed meanwhile is kept)."""
    tmp = target.with_name(f".{target.name}.memvault-tmp-init")
    tmp.write_bytes(new)
    try:
        if target.read_bytes() != old:
            return False
        os.replace(tmp, target)
        return True
    finally:
        tmp.unlink(missing_ok=True)


def count_notes(root: Path, besides: Collection[str] = ()) -> int:
    """Markdown files already under ``root`` (dot-folders and templates/ left out, and the
    vault paths ``besides``)."""
    n = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if Path(folder) == root:
            dirs[:] = [d for d in dirs if d != "templates"]
            files = [f for f in files if f != "MEMORY.md"]
        rel = Path(folder).relative_to(root).as_posix()
        n += sum(
            1
            for f in files
            if f.lower().endswith(".md") and (f if rel == "." else f"{rel}/{f}") not in besides
        )
    return n


def find_roles(root: Path) -> tuple[dict[str, str], tuple[str, ...]]:
    """({category: the vault's own folder playing its role}, the vault's templates
    folders but ``templates``: the core Templates plugin's, else a top-level
    ``Templates/`` in any case; then Templater's). A daily-notes folder named in
    ``.obsidian/daily-notes.json`` plays ``logs``; else a top-level folder named for a
    role in any case (``People/``, ``Daily/``). A folder named exactly as memvault names
    it is not listed: nothing changes for it."""
    try:
        with os.scandir(root) as entries:
            top = sorted(e.name for e in entries if not e.name.startswith(".") and is_dir_entry(e))
    except OSError:
        return {}, ()
    found: dict[str, str] = {}
    # compared in NFC (a folder a Mac wrote, HFS+ or synced from one, is decomposed),
    # a PARA vault's number before the name left out (`1-Projects` is `Projects`)
    said = {name: unnumbered(unicodedata.normalize("NFC", name)).casefold() for name in top}
    for category, names in ROLE_NAMES.items():
        if category in top:
            continue  # memvault's own name is there: used as it is
        wanted = names.split()
        match = [name for name in top if said[name] in wanted]
        # the first name of the list first; of one name, the one without a number
        match.sort(key=lambda name: (wanted.index(said[name]), said[name] != name.casefold()))
        if match:  # named as memvault reads paths, NFC (the disk's spelling is found again)
            found[category] = unicodedata.normalize("NFC", match[0])
    # a PARA layout told by its numbers, in a language of names not listed: its folder 1
    if "projects" not in top and "projects" not in found and (first := numbered_para(top)):
        found["projects"] = first
    daily = _obsidian_folder(root, "daily-notes.json")
    if daily and daily != "logs" and (root / daily).is_dir():
        found["logs"] = daily
    core = _obsidian_folder(root, "templates.json")
    core = core if core and (root / core).is_dir() else None
    if core is None:
        core = next((n for n in top if n.casefold() == "templates" and n != "templates"), None)
    # Templater's own folder (its settings: the plugin's data.json), where the notes of
    # most vaults are made from: `<% tp.file.title %>` is no note's title
    templater = _obsidian_folder(root, TEMPLATER_SETTINGS, "templates_folder")
    templater = templater if templater and (root / templater).is_dir() else None
    folders = dict.fromkeys(f for f in (core, templater) if f and f != "templates")
    return found, tuple(folders)


def unnumbered(name: str) -> str:
    """A folder's name without the number a PARA vault puts before it (``1-Projects``:
    ``Projects``); any other name as it is (``2024``, ``3D``)."""
    m = _NUMBERED.match(name)
    return name[m.end() :] if m else name


def numbered_para(names: Iterable[str]) -> str | None:
    """The projects folder of a PARA layout told by its numbers alone, whatever the
    language of its names (``names``: the vault's top folders): the one numbered 1, when
    the numbered ones are numbered exactly 1 to 4 (or 0 to 4: an inbox first), each
    number once, each with a name holding a letter after it; else None. Twelve months
    (`1-Jan` ... `12-Dec`), two numbered folders, a number twice, or a 5 are no PARA."""
    numbered: dict[int, list[str]] = {}
    for name in names:
        m = _NUMBERED.match(name)
        if m:
            numbered.setdefault(int(m.group(1)), []).append(name)
    if tuple(sorted(numbered)) not in PARA_NUMBERS or any(len(n) > 1 for n in numbered.values()):
        return None
    if not all(any(c.isalpha() for c in unnumbered(n[0])) for n in numbered.values()):
        return None
    if all(_month_of(numbered[k][0], k) for k in (1, 2, 3, 4)):
        return None
    return unicodedata.normalize("NFC", numbered[1][0])


def _month_of(name: str, number: int) -> bool:
    """Whether the numbered folder ``name`` is named for month ``number`` in English
    (`Jan`, `jan.`, `January`; not `Jane`)."""
    word = unnumbered(name).strip().rstrip(".").casefold()
    return len(word) >= 3 and _MONTHS[number - 1].startswith(word)


def is_para(root: Path, projects: str) -> bool:
    """Whether ``projects``, the vault's projects folder at its top, is PARA's: one of
    Areas, Resources or Archive beside it (numbered or not, any case), or the folder
    numbered 1 of a PARA layout told by its numbers (``numbered_para``)."""
    if "/" in projects:
        return False
    try:
        with os.scandir(root) as entries:
            names = [e.name for e in entries if not e.name.startswith(".") and is_dir_entry(e)]
    except OSError:
        return False
    if numbered_para(names) == unicodedata.normalize("NFC", projects):
        return True
    if unnumbered(projects).casefold() not in ("projects", "project"):
        return False
    return any(unnumbered(n).casefold() in PARA_NAMES for n in names)


def says_active(root: Path, folder: str, most: int = 500) -> bool:
    """Whether a note in ``folder`` (the first ``most`` found) says ``status: active``,
    the value the projects section's filter asks for: the person keeps each project's
    status (`status: done` beside the active ones), which the filter then reads, PARA
    or not (a status of other words, `进行中`, would leave the section empty)."""
    seen = 0
    for here, dirs, files in os.walk(root / disk_spelling(str(root), folder)):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(".md") or seen >= most:
                continue
            seen += 1
            try:
                with open(os.path.join(here, name), encoding="utf-8", errors="replace") as fh:
                    text = fh.read(65536)
            except OSError:
                continue
            if field_says(parse_note(name, text).frontmatter, "status", "active"):
                return True
        if seen >= most:
            break
    return False


# Templater's settings (obsidian-templater: `templates_folder`, "Template folder location")
TEMPLATER_SETTINGS = "plugins/templater-obsidian/data.json"


def _obsidian_folder(root: Path, name: str, key: str = "folder") -> str | None:
    """The folder an Obsidian plugin's settings in ``.obsidian/NAME`` name at ``key``
    (a core plugin's ``folder``: ``Daily``, ``Journal/Daily``)."""
    try:
        data = json.loads((root / ".obsidian" / name).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    folder = data.get(key) if isinstance(data, dict) else None
    if not isinstance(folder, str):
        return None
    folder = folder.strip().strip("/")
    parts = folder.split("/")
    if not folder or any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return None
    if any(c in folder for c in '"\\\n\r'):
        return None  # kept out of the TOML we write
    return folder


def _config_for(
    text: str, roles: dict[str, str], templates: tuple[str, ...], para: bool = False
) -> str:
    """The template's config.toml with the vault's own folders in its sections (and its
    templates folder ignored). ``para``: the projects folder is PARA's, every project in
    it active (its notes rarely say ``status: active``): its section has no filter."""
    for category, folder in roles.items():
        line = f'folder = "{folder}"\n'
        if category == "projects" and para:
            text = text.replace(f'folder = "{category}"\n{ACTIVE_FILTER}', line, 1)
        text = text.replace(f'folder = "{category}"\n', line, 1)
    if templates:  # each exactly that folder (its name's `*`, `?` escaped: a TOML `\\`)
        theirs = "".join(f'"{_toml(glob_literal(folder))}/**", ' for folder in templates)
        text = text.replace('ignore = ["templates/**", ', f'ignore = ["templates/**", {theirs}', 1)
    return text


def _toml(text: str) -> str:
    """``text`` inside a TOML basic string (``_obsidian_folder`` let no ``"`` through)."""
    return text.replace("\\", "\\\\")


# MEMORY.md's intro line naming the note folders (vault-template/MEMORY.md)
MEMORY_FOLDERS_LINE = (
    "details belong in the notes under people/, projects/, decisions/ and logs/.\n"
)


def _memory_for(text: str, folders: dict[str, str]) -> str:
    """The template's MEMORY.md with its intro naming the vault's folders (``People/``)."""
    people, projects, decisions, logs = (folders[c] for c in CATEGORY_FOLDERS)
    line = f"details belong in the notes under {people}/, {projects}/, {decisions}/ and {logs}/.\n"
    return text.replace(MEMORY_FOLDERS_LINE, line, 1)


# what a git pattern would read as a glob or an escape (or cannot hold): such a folder
# is left out; any other name is written as it is (UTF-8: 人物/, Décisions/), quoted
# when it holds a space (git reads a C-quoted pattern: "/My People/My People.md")
_PATTERN_UNSAFE = re.compile(r'[\x00-\x1f\x7f"\\*?\[\]!#]')


def _gitattributes_for(text: str, folders: dict[str, str]) -> str:
    """The template's .gitattributes naming the vault's folders (``/People/People.md``,
    ``/人物/人物.md``); a folder whose name a pattern would read as a glob left out."""
    out = []
    for line in text.splitlines(keepends=True):
        for category in CATEGORY_FOLDERS:
            if line.startswith(f"/{category}/"):
                folder = folders[category].strip("/")
                if _PATTERN_UNSAFE.search(folder):
                    line = ""
                    break
                name = posixpath.basename(folder)
                pattern, rest = line.split(" ", 1)
                pattern = pattern.replace(f"/{category}/{category}.md", f"/{folder}/{name}.md", 1)
                pattern = pattern.replace(f"/{category}/", f"/{folder}/", 1)
                if any(ch.isspace() for ch in pattern):
                    pattern = f'"{pattern}"'
                line = f"{pattern} {rest}"
                break
        out.append(line)
    return "".join(out)


def _configured_folders(root: Path) -> dict[str, str]:
    """{category: its folder} as the vault's config.toml names them (the file alone, not
    the environment: MEMORY.md is tracked), memvault's names if it cannot be read."""
    try:
        config = VaultConfig.load(root, env={})
    except ConfigError:
        return {c: c for c in CATEGORY_FOLDERS}
    return {c: config.folder(c) for c in CATEGORY_FOLDERS}


def init_vault(path: str | Path, *, example: bool = False, memory: bool = True) -> InitReport:
    """Make ``path`` a vault: lay down what is missing of the template; keep the rest.

    ``example=True`` adds the example notes (and their MEMORY.md, when there is
    none yet). ``memory=False`` leaves MEMORY.md out (a migration writes its own).
    """
    root = Path(path).expanduser()
    wrong = misplaced(root) or too_wide(root)
    if wrong is not None:
        raise VaultInside(f"no vault made: {wrong}")
    if example and count_notes(root, {rel for rel, _ in _files(example_root())}):
        raise VaultInside(  # a fictional team among real notes: an agent takes it for fact
            f"no example notes added: {root} holds notes of its own; the examples go in a "
            "vault of their own: memvault init --example ./demo"
        )
    root.mkdir(parents=True, exist_ok=True)
    notes = count_notes(root)
    kept_obsidian = (root / ".obsidian").is_dir()
    roles, templates = find_roles(root) if notes and not example else ({}, ())
    created: list[str] = []
    skipped: list[str] = []
    updated: list[str] = []
    files = dict(_files(template_root()))  # sorted: .memvault/config.toml before MEMORY.md
    # the note folders the vault's config names (the one made here, or the one it has)
    folders = _configured_folders(root)
    if example:
        files.update(_files(example_root()))  # its MEMORY.md lists its notes
    # last: it names the folders, which the config made here says
    files = {k: v for k, v in files.items() if k != GITATTRIBUTES} | {
        GITATTRIBUTES: files[GITATTRIBUTES]
    }
    # the vault's templates folder named so in another case (`Templates/`): memvault's
    # templates go in it, not in a twin a Mac or Windows clone would hold as one folder
    twin = next((f for f in templates if f.casefold() == "templates"), None)
    for shipped, item in files.items():
        if shipped == "MEMORY.md" and not memory:
            continue
        if kept_obsidian and shipped.startswith(".obsidian/"):
            continue
        rel = f"{twin}{shipped[9:]}" if twin and shipped.startswith("templates/") else shipped
        target = root.joinpath(*rel.split("/"))
        data = item.read_bytes()
        if rel == ".memvault/config.toml" and (roles or templates):
            para = (
                "projects" in roles
                and is_para(root, roles["projects"])
                and not says_active(root, roles["projects"])
            )
            data = _config_for(data.decode("utf-8"), roles, templates, para).encode("utf-8")
        if rel == "MEMORY.md" and not example:
            data = _memory_for(data.decode("utf-8"), folders).encode("utf-8")
        if rel == GITATTRIBUTES:
            data = _gitattributes_for(data.decode("utf-8"), folders).encode("utf-8")
        if _create(target, data):
            created.append(rel)
            if rel == ".memvault/config.toml":
                folders = {c: roles.get(c, c) for c in CATEGORY_FOLDERS}
            continue
        try:
            old = target.read_bytes() if target.is_file() else None
        except OSError:
            old = None
        previous = PREVIOUS_TEMPLATES.get(shipped, frozenset())
        if old is not None and _sha(old) in previous and _replace_if_unchanged(target, old, data):
            updated.append(rel)
        else:
            skipped.append(rel)
    if ".memvault/config.toml" not in created:
        roles, templates = {}, ()  # the vault's own settings say which folders are which
    for category in CATEGORY_FOLDERS:
        folder = folders[category]
        if category not in roles and not (root / folder).exists():
            (root / folder).mkdir(parents=True)
            created.append(f"{folder}/")
    memory_lines = _grown_memory(root) if "MEMORY.md" in skipped else 0
    memory_index = memory_lines > 0 and _index_memory(root)
    return InitReport(
        str(root.resolve()),
        tuple(created),
        tuple(skipped),
        tuple(updated),
        notes,
        kept_obsidian,
        roles,
        templates,
        ignored_by(root, ".memvault/config.toml"),
        memory_lines,
        memory_index,
    )


def _index_memory(root: Path) -> bool:
    """The vault's MEMORY.md is an index of links (core/memory_own), not a dump."""
    try:
        with open(root / "MEMORY.md", encoding="utf-8", errors="replace") as fh:
            return memory_own.is_index(fh)
    except OSError:
        return False


def _grown_memory(root: Path) -> int:
    """The lines of the vault's MEMORY.md when past ``memory.max_lines``, else 0."""
    try:
        limit = VaultConfig.load(root, env={}).memory.max_lines
        with open(root / "MEMORY.md", "rb") as fh:
            lines = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))
    except (ConfigError, OSError):
        return 0
    return lines if lines > limit else 0
