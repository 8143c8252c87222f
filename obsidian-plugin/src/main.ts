/**
 * memvault inside Obsidian: a thin front over the vault's daemon (docs/HTTP.md).
 *
 * It finds the daemon through `.memvault/daemon.json`, never embeds or indexes in
 * Obsidian, never writes a note by itself (a link goes in only where the user asks),
 * and when the daemon is not there it says so — status bar, one notice with the command
 * that starts it — and nothing else breaks.
 */

import { FileSystemAdapter, Notice, Platform, Plugin, type WorkspaceLeaf } from "obsidian";
import { AskModal, askMemory } from "./ask";
import { Connection, type ConnectionState } from "./connection";
import { describeHealth, startCommands } from "./health";
import type { Host } from "./host";
import { RelatedView, VIEW_TYPE_RELATED } from "./related-view";
import { SearchModal } from "./search-modal";
import { DEFAULT_SETTINGS, type MemvaultSettings, normalizeSettings } from "./settings";
import { MemvaultSettingTab } from "./settings-tab";
import { StatusModal } from "./status-modal";
import { leadingDebounce, trailingDebounce } from "./timing";
import { fetchTransport, nodeTransport, type Transport } from "./transport";

export const LEAF_DEBOUNCE_MS = 120; // flicking through notes asks once at the end
const SYNC_REFRESH_MS = 800; // after index changes, the pane asks again once they settle

declare const require: ((id: string) => unknown) | undefined;

/** Node's http where Obsidian's desktop renderer offers it, else fetch. */
export function pickTransport(): Transport {
  try {
    if (Platform.isDesktopApp && typeof require === "function") {
      return nodeTransport(require("http") as typeof import("http"));
    }
  } catch {
    // no Node in this renderer: fetch below
  }
  return fetchTransport();
}

export default class MemvaultPlugin extends Plugin implements Host {
  settings: MemvaultSettings = { ...DEFAULT_SETTINGS };
  connection!: Connection;
  private statusEl: HTMLElement | null = null;
  private warnedNotRunning = false;

  async onload(): Promise<void> {
    this.settings = normalizeSettings(await this.loadData());
    this.connection = new Connection({
      files: this.app.vault.adapter,
      transport: pickTransport(),
      override: () =>
        this.settings.daemonUrl ? { url: this.settings.daemonUrl, token: this.settings.daemonToken } : null,
      timeoutMs: () => this.settings.timeoutMs,
    });

    this.registerView(VIEW_TYPE_RELATED, (leaf) => new RelatedView(leaf, this));
    this.addRibbonIcon("search", "memvault: semantic search", () => this.openSearch());
    this.addCommand({ id: "semantic-search", name: "Semantic search", callback: () => this.openSearch() });
    this.addCommand({
      id: "open-related",
      name: "Open related notes",
      callback: () => void this.activateRelated(true),
    });
    this.addCommand({ id: "ask-memory", name: "Ask your memory (copy a cited context)", callback: () => this.ask() });
    this.addCommand({ id: "show-status", name: "Show index health", callback: () => this.openStatus() });

    this.statusEl = this.addStatusBarItem();
    this.statusEl.addClass("memvault-statusbar", "mod-clickable");
    this.statusEl.addEventListener("click", () => this.openStatus());
    this.renderStatus();

    this.register(this.connection.onState((s) => this.stateChanged(s)));
    this.register(this.connection.onDaemonState(() => this.renderStatus()));
    const afterSync = trailingDebounce(() => this.relatedViews().forEach((v) => v.refresh()), SYNC_REFRESH_MS);
    this.register(() => afterSync.cancel());
    this.register(this.connection.onSync(() => afterSync()));

    const follow = leadingDebounce((leaf: WorkspaceLeaf | null) => {
      this.relatedViews().forEach((v) => v.follow(leaf));
    }, LEAF_DEBOUNCE_MS);
    this.register(() => follow.cancel());
    this.registerEvent(this.app.workspace.on("active-leaf-change", (leaf) => follow(leaf)));
    this.registerEvent(
      this.app.workspace.on("file-open", () => follow(this.app.workspace.getMostRecentLeaf())),
    );

    this.addSettingTab(new MemvaultSettingTab(this.app, this, this));
    this.app.workspace.onLayoutReady(() => {
      this.connection.start();
      void this.activateRelated(false);
    });
  }

  onunload(): void {
    this.connection?.stop();
  }

  // -- Host ----------------------------------------------------------------------------------

  vaultPath(): string | null {
    const a = this.app.vault.adapter;
    return a instanceof FileSystemAdapter ? a.getBasePath() : null;
  }

  startCommands(): string[] {
    return startCommands(this.vaultPath());
  }

  async copy(text: string): Promise<void> {
    await navigator.clipboard.writeText(text);
  }

  async saveSettings(changedConnection: boolean): Promise<void> {
    await this.saveData(this.settings);
    if (changedConnection) this.connection.reconnect();
    this.relatedViews().forEach((v) => v.refresh());
  }

  // -- commands -------------------------------------------------------------------------------

  openSearch(): SearchModal {
    const modal = new SearchModal(this.app, this);
    modal.open();
    return modal;
  }

  openStatus(): StatusModal {
    const modal = new StatusModal(this.app, this);
    modal.open();
    return modal;
  }

  ask(): void {
    const selection = this.app.workspace.activeEditor?.editor?.getSelection() ?? "";
    if (selection.trim()) void askMemory(this, selection);
    else new AskModal(this.app, this).open();
  }

  async activateRelated(reveal: boolean): Promise<void> {
    const ws = this.app.workspace;
    let leaf: WorkspaceLeaf | null = ws.getLeavesOfType(VIEW_TYPE_RELATED)[0] ?? null;
    if (!leaf) {
      leaf = ws.getRightLeaf(false);
      if (!leaf) return;
      await leaf.setViewState({ type: VIEW_TYPE_RELATED, active: false });
    }
    if (reveal) await ws.revealLeaf(leaf);
  }

  relatedViews(): RelatedView[] {
    return this.app.workspace
      .getLeavesOfType(VIEW_TYPE_RELATED)
      .map((l) => l.view)
      .filter((v): v is RelatedView => v instanceof RelatedView);
  }

  // -- connection state -------------------------------------------------------------------------

  private stateChanged(state: ConnectionState): void {
    this.renderStatus();
    if (state.kind === "connected") {
      this.warnedNotRunning = false;
    } else if (state.kind !== "starting" && !this.warnedNotRunning) {
      this.warnedNotRunning = true; // once per outage, not once per retry
      const [up, start] = this.startCommands();
      const next =
        state.kind === "unauthorized"
          ? "Check the token in memvault's settings (or clear it), or restart the daemon."
          : state.kind === "unreachable"
            ? "It may be busy; memvault keeps trying."
            : `Start it with:\n${up}\nor: ${start}`;
      new Notice(`memvault: ${state.detail}.\n${next}`, 15000);
    }
    this.relatedViews().forEach((v) => v.refresh());
  }

  private renderStatus(): void {
    const el = this.statusEl;
    if (!el) return;
    const h = describeHealth(this.connection.state, this.connection.daemon);
    el.setText(h.text);
    el.setAttr("aria-label", h.tooltip);
    el.setAttr("data-tooltip-position", "top");
    el.dataset.health = h.kind;
  }
}
