"""vault/obsidian_plugin.py and `memvault obsidian install`: the plugin copied, enabled, nothing else touched."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import make_vault
from memvault import errors as E
from memvault.interfaces.cli import app as cli_app
from memvault.vault import obsidian_plugin as obsidian_install
from memvault.vault.obsidian_plugin import PLUGIN_FILES, enable_in, install_plugin

ROOT = Path(__file__).resolve().parents[1]
BUILT = ROOT / "obsidian-plugin"


def tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, ["memvault"]),
        (b"", ["memvault"]),
        (b"[]", ["memvault"]),
        (b'["dataview", "calendar"]', ["dataview", "calendar", "memvault"]),
        ('\ufeff["d\u00e9j\u00e0-vu"]'.encode(), ["d\u00e9j\u00e0-vu", "memvault"]),
    ],
)
def test_enable_in_appends_memvault_and_keeps_every_other_id(
    before: bytes | None, after: list[str]
) -> None:
    out = enable_in(before)
    assert out is not None and json.loads(out) == after


def test_enable_in_changes_nothing_when_already_enabled() -> None:
    assert enable_in(b'["memvault", "x"]') is None


@pytest.mark.parametrize("bad", [b"{", b'{"memvault": true}', b'["ok", 3]', b"\xff\xfe"])
def test_enable_in_refuses_what_is_not_a_list_of_ids(bad: bytes) -> None:
    with pytest.raises(E.ConfigError, match=r"community-plugins\.json"):
        enable_in(bad)


def test_install_copies_the_built_plugin_and_enables_it(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    obsidian = root / ".obsidian"
    before = tree(obsidian)
    report = install_plugin(root)
    dest = obsidian / "plugins" / "memvault"
    for name in PLUGIN_FILES:
        assert (dest / name).read_bytes() == (BUILT / name).read_bytes()
    assert json.loads((obsidian / "community-plugins.json").read_text()) == ["memvault"]
    assert report.enabled and not report.already_enabled
    assert set(report.written) == set(PLUGIN_FILES) and report.unchanged == ()
    manifest = json.loads((BUILT / "manifest.json").read_text())
    assert report.version == manifest["version"] and report.plugin_dir == str(dest)
    after = tree(obsidian)
    for rel, data in before.items():  # the template's own settings, byte for byte
        assert after[rel] == data
    assert not list(obsidian.rglob(".*.tmp-*"))


def test_install_keeps_the_users_plugins_settings_and_plugin_data(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    obsidian = root / ".obsidian"
    (obsidian / "community-plugins.json").write_text('[\n  "dataview",\n  "calendar"\n]')
    data = obsidian / "plugins" / "memvault" / "data.json"
    data.parent.mkdir(parents=True)
    data.write_text('{"contextBudget": 777}')
    (obsidian / "plugins" / "dataview").mkdir()
    (obsidian / "plugins" / "dataview" / "main.js").write_text("// theirs")
    (obsidian / "hotkeys.json").write_text('{"editor:save": []}')
    install_plugin(root)
    enabled = json.loads((obsidian / "community-plugins.json").read_text())
    assert enabled == ["dataview", "calendar", "memvault"]
    assert data.read_text() == '{"contextBudget": 777}'
    assert (obsidian / "plugins" / "dataview" / "main.js").read_text() == "// theirs"
    assert (obsidian / "hotkeys.json").read_text() == '{"editor:save": []}'


def test_installing_again_writes_nothing(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    install_plugin(root)
    snapshot = {p: p.stat().st_mtime_ns for p in (root / ".obsidian").rglob("*") if p.is_file()}
    report = install_plugin(root)
    assert report.written == () and set(report.unchanged) == set(PLUGIN_FILES)
    assert report.already_enabled and not report.enabled
    assert {p: p.stat().st_mtime_ns for p in snapshot} == snapshot


def test_an_updated_plugin_replaces_the_old_files(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    dest = root / ".obsidian" / "plugins" / "memvault"
    dest.mkdir(parents=True)
    (dest / "main.js").write_text("// an older build")
    report = install_plugin(root)
    assert "main.js" in report.written
    assert (dest / "main.js").read_bytes() == (BUILT / "main.js").read_bytes()


def test_a_broken_community_plugins_json_is_refused_and_left_alone(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    enabled = root / ".obsidian" / "community-plugins.json"
    enabled.write_text('["dataview",')
    with pytest.raises(E.ConfigError, match="not valid JSON"):
        install_plugin(root)
    assert enabled.read_text() == '["dataview",'


def test_a_change_made_while_enabling_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Obsidian saves the list between memvault's read and its write: memvault starts over."""
    root = make_vault(tmp_path)
    enabled = root / ".obsidian" / "community-plugins.json"
    enabled.write_text('["dataview"]')
    real = obsidian_install.enable_in
    calls = []

    def racing(current: bytes | None, plugin_id: str = "memvault") -> bytes | None:
        calls.append(current)
        if len(calls) == 1:
            enabled.write_text('["dataview", "calendar"]')  # the user enabled one meanwhile
        return real(current, plugin_id)

    monkeypatch.setattr(obsidian_install, "enable_in", racing)
    install_plugin(root)
    assert json.loads(enabled.read_text()) == ["dataview", "calendar", "memvault"]
    assert len(calls) == 2


def test_install_needs_a_folder(tmp_path: Path) -> None:
    with pytest.raises(E.VaultNotFound):
        install_plugin(tmp_path / "nowhere")


def test_install_refuses_a_plugin_build_that_is_incomplete(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    src = tmp_path / "built"
    src.mkdir()
    (src / "manifest.json").write_text('{"id": "memvault", "version": "9"}')
    with pytest.raises(E.MemvaultError, match=r"lacks main\.js, styles\.css"):
        install_plugin(root, source=src)
    assert not (root / ".obsidian" / "plugins" / "memvault").exists()


def test_cli_installs_into_the_vault_and_says_so(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    result = CliRunner().invoke(cli_app, ["obsidian", "install", "--vault", str(root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["enabled"] is True and data["plugin_dir"].endswith(
        os.path.join(".obsidian", "plugins", "memvault")
    )
    again = CliRunner().invoke(cli_app, ["obsidian", "install", "--vault", str(root)])
    assert again.exit_code == 0
    assert "files up to date" in again.output and "already enabled" in again.output
    assert f"memvault up {shlex.quote(str(root.resolve()))}" in again.output


def test_cli_without_a_vault_exits_3(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli_app, ["obsidian", "install", "--vault", str(tmp_path / "none")])
    assert result.exit_code == 3
