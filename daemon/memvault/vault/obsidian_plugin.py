"""``memvault obsidian install``: put the built Obsidian plugin into a vault and enable it.

The plugin (``main.js``, ``manifest.json``, ``styles.css``, built from
``obsidian-plugin/``) ships inside the wheel as ``memvault/obsidian-plugin``,
so a user needs no Node. Installing copies those three files into
``<vault>/.obsidian/plugins/memvault/`` and adds ``"memvault"`` to
``.obsidian/community-plugins.json``, the list of enabled community plugins.

Nothing else of the user's is touched: the plugin's own settings
(``data.json``), other plugins, and every other entry of
``community-plugins.json`` stay as they are. Each write is atomic (a temp
file in the same folder, fsync, ``os.replace``) and is skipped when the
content is already there; ``community-plugins.json`` is re-read just before
the replace, and if Obsidian changed it meanwhile the merge starts again from
its new text. A ``community-plugins.json`` that is not a JSON list of strings
is refused, never "repaired".
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from memvault.core.results import Record
from memvault.errors import ConfigError, MemvaultError, VaultNotFound, WriteConflict

PLUGIN_ID = "memvault"
PLUGIN_FILES = ("main.js", "manifest.json", "styles.css")
CONFIG_DIR = ".obsidian"  # Obsidian's default; a custom config folder is rare
ENABLED_FILE = "community-plugins.json"
RETRIES = 5


@dataclass(frozen=True, slots=True)
class InstallReport(Record):
    vault: str
    plugin_dir: str
    version: str
    written: tuple[str, ...]  # plugin files copied (new or changed)
    unchanged: tuple[str, ...]  # already there, byte for byte
    enabled: bool  # "memvault" was added to community-plugins.json
    already_enabled: bool


def plugin_source() -> Traversable:
    """The built plugin shipped inside the wheel, or the checkout's obsidian-plugin/."""
    packaged = resources.files("memvault") / "obsidian-plugin"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / "obsidian-plugin"
    if checkout.is_dir():
        return checkout
    raise MemvaultError("the Obsidian plugin is missing from this installation of memvault")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{secrets.token_hex(4)}")
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def enable_in(current: bytes | None, plugin_id: str = PLUGIN_ID) -> bytes | None:
    """The new community-plugins.json text with ``plugin_id`` enabled, or None when it
    already is. Pure. ConfigError when the file is not a JSON list of strings."""
    if current is None or not current.strip():
        enabled: list[str] = []
    else:
        try:
            enabled = json.loads(current.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ConfigError(
                f"{CONFIG_DIR}/{ENABLED_FILE} is not valid JSON ({exc}); "
                "fix it or remove it, then install again"
            ) from None
        if not isinstance(enabled, list) or not all(isinstance(x, str) for x in enabled):
            raise ConfigError(
                f"{CONFIG_DIR}/{ENABLED_FILE} is not a JSON list of plugin ids; "
                "fix it or remove it, then install again"
            )
    if plugin_id in enabled:
        return None
    return json.dumps([*enabled, plugin_id], indent=2, ensure_ascii=False).encode("utf-8")


def _enable(path: Path) -> bool:
    """Compare-and-swap: re-read just before the replace; start again if it changed."""
    for _ in range(RETRIES):
        before = _read(path)
        new = enable_in(before)
        if new is None:
            return False
        if _read(path) != before:
            continue
        _atomic_write(path, new)
        return True
    raise WriteConflict(f"{path} kept changing while memvault tried to enable its plugin")


def install_plugin(vault: str | Path, source: Traversable | None = None) -> InstallReport:
    """Copy the built plugin into ``vault`` and enable it (see the module docstring)."""
    root = Path(vault).expanduser()
    if not root.is_dir():
        raise VaultNotFound(f"no vault at {root}: not a folder")
    root = root.resolve()
    src = source if source is not None else plugin_source()
    files = {name: (src / name).read_bytes() for name in PLUGIN_FILES if (src / name).is_file()}
    missing = [name for name in PLUGIN_FILES if name not in files]
    if missing:
        raise MemvaultError(
            f"the built Obsidian plugin lacks {', '.join(missing)} "
            "(build it: `npm ci && npm run build` in obsidian-plugin/)"
        )
    manifest = json.loads(files["manifest.json"])
    if manifest.get("id") != PLUGIN_ID:
        raise ConfigError(
            f"the plugin's manifest says id {manifest.get('id')!r}, not {PLUGIN_ID!r}"
        )
    config = root / CONFIG_DIR
    if config.exists() and not config.is_dir():
        raise ConfigError(f"{config} is not a folder")
    dest = config / "plugins" / PLUGIN_ID
    dest.mkdir(parents=True, exist_ok=True)
    written, unchanged = [], []
    # manifest.json last: Obsidian reads it first, so it never names a half-copied plugin
    for name in sorted(files, key=lambda n: n == "manifest.json"):
        if _read(dest / name) == files[name]:
            unchanged.append(name)
        else:
            _atomic_write(dest / name, files[name])
            written.append(name)
    enabled = _enable(config / ENABLED_FILE)
    return InstallReport(
        vault=str(root),
        plugin_dir=str(dest),
        version=str(manifest.get("version", "")),
        written=tuple(written),
        unchanged=tuple(unchanged),
        enabled=enabled,
        already_enabled=not enabled,
    )


__all__ = ["PLUGIN_FILES", "PLUGIN_ID", "InstallReport", "enable_in", "install_plugin"]
