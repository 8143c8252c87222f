/** The settings tab: context budget, number of results, folders left out of the related
 *  pane, and an explicit daemon URL/token (empty: read .memvault/daemon.json). */

import { type App, type Plugin, PluginSettingTab, Setting } from "obsidian";
import { checkDaemonUrl, normalizeSettings, parseFolders, type MemvaultSettings } from "./settings";

export interface SettingsOwner {
  settings: MemvaultSettings;
  saveSettings(changedConnection: boolean): Promise<void>;
}

export class MemvaultSettingTab extends PluginSettingTab {
  constructor(
    app: App,
    plugin: Plugin,
    private readonly owner: SettingsOwner,
  ) {
    super(app, plugin);
  }

  display(): void {
    const el = this.containerEl;
    el.empty();
    const s = this.owner.settings;
    const save = (patch: Partial<MemvaultSettings>, connection = false) => {
      this.owner.settings = normalizeSettings({ ...this.owner.settings, ...patch });
      void this.owner.saveSettings(connection);
    };
    new Setting(el)
      .setName("Context budget")
      .setDesc("Tokens in the context that \"Ask your memory\" copies (100–100000).")
      .addText((t) =>
        t.setValue(String(s.contextBudget)).onChange((v) => {
          if (/^\d+$/.test(v.trim())) save({ contextBudget: Number(v) });
        }),
      );
    new Setting(el)
      .setName("Number of results")
      .setDesc("Notes in the related pane and hits in the search (1–100).")
      .addText((t) =>
        t.setValue(String(s.resultCount)).onChange((v) => {
          if (/^\d+$/.test(v.trim())) save({ resultCount: Number(v) });
        }),
      );
    new Setting(el)
      .setName("Folders left out of related notes")
      .setDesc("One per line (or comma separated), e.g. logs or archive/2023.")
      .addTextArea((t) =>
        t.setValue(s.excludedFolders.join("\n")).onChange((v) => save({ excludedFolders: parseFolders(v) })),
      );
    new Setting(el)
      .setName("Request timeout (ms)")
      .setDesc("How long to wait for the daemon before saying it is slow (500–120000).")
      .addText((t) =>
        t.setValue(String(s.timeoutMs)).onChange((v) => {
          if (/^\d+$/.test(v.trim())) save({ timeoutMs: Number(v) });
        }),
      );
    el.createEl("h3", { text: "Daemon" });
    el.createEl("p", {
      cls: "setting-item-description",
      text: "Leave both empty: the plugin reads .memvault/daemon.json, which the daemon writes when it starts. Set them only for a daemon you run another way.",
    });
    const problem = el.createDiv({ cls: "memvault-problem" });
    new Setting(el)
      .setName("Daemon URL")
      .setDesc("e.g. http://127.0.0.1:8765 — on this machine only.")
      .addText((t) =>
        t.setValue(s.daemonUrl).onChange((v) => {
          const bad = checkDaemonUrl(v.trim());
          problem.setText(bad ? `Daemon URL ${bad}` : "");
          if (!bad) save({ daemonUrl: v }, true);
        }),
      );
    new Setting(el)
      .setName("Daemon token")
      .setDesc("The bearer token for that URL.")
      .addText((t) => {
        t.inputEl.type = "password";
        t.setValue(s.daemonToken).onChange((v) => save({ daemonToken: v }, true));
      });
  }
}
