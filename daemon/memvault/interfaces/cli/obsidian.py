"""The Obsidian plugin's command: ``memvault obsidian install``.

Thin: resolve the vault, call ``memvault.vault.obsidian_plugin``, print. Exit
codes: 0 installed (or already there); 3 no vault, or a community-plugins.json
that is not a JSON list (left untouched); 1 anything else memvault refuses.
"""

from __future__ import annotations

import shlex

from memvault.interfaces.cli import common
from memvault.interfaces.cli.common import JsonOpt, VaultOpt


def install(vault: VaultOpt = None, as_json: JsonOpt = False) -> None:
    """Copy the plugin into VAULT/.obsidian/plugins/memvault/ and enable it.

    Your other plugins and settings are left as they are. Restart Obsidian (or
    reload the vault) to load it; the daemon must run for it to show anything.
    """
    from memvault.vault.obsidian_plugin import install_plugin

    with common.handled(as_json):
        root = common.resolve_vault(vault)
        report = install_plugin(root)
    if as_json:
        common.emit_json(report.to_dict())
        return
    changed = f"{len(report.written)} files written" if report.written else "files up to date"
    common.out.print(f"memvault plugin {report.version} in {report.plugin_dir} ({changed})")
    if report.enabled:
        common.out.print("enabled in .obsidian/community-plugins.json")
    else:
        common.out.print("already enabled in .obsidian/community-plugins.json")
    common.out.print(
        "Reload Obsidian (or close and reopen the vault) to load it; if Obsidian is in "
        "Restricted mode, turn community plugins on once in Settings -> Community plugins. "
        f"The plugin needs the daemon: memvault up {shlex.quote(str(report.vault))}"
    )
