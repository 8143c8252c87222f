/** The small view behind the status bar: `/status` in a few lines. */

import { type App, Modal } from "obsidian";
import { status } from "./api";
import { DaemonError } from "./connection";
import { describeHealth } from "./health";
import type { Host } from "./host";
import type { VaultStatus } from "./types";

export class StatusModal extends Modal {
  constructor(
    app: App,
    private readonly host: Host,
  ) {
    super(app);
  }

  onOpen(): void {
    this.titleEl.setText("memvault: index health");
    this.modalEl.addClass("memvault-status");
    void this.load();
  }

  async load(): Promise<void> {
    const el = this.contentEl;
    el.empty();
    const health = this.health();
    if (!this.host.connection.connected) return this.notRunning(health.tooltip);
    el.createDiv({ cls: "memvault-muted", text: "Loading…" });
    let s: VaultStatus;
    try {
      s = await status(this.host.connection, this.host.settings.timeoutMs);
    } catch (err) {
      const e = err instanceof DaemonError ? err : new DaemonError("server", String(err));
      el.empty();
      if (e.kind === "not-running" || e.kind === "unauthorized" || e.kind === "foreign") {
        return this.notRunning(e.message);
      }
      return this.busy(e.message); // it runs: telling how to start it would mislead
    }
    el.empty();
    this.health();
    const table = el.createEl("table", { cls: "memvault-status-table" });
    const row = (name: string, value: string, cls = "") => {
      const tr = table.createEl("tr", { cls });
      tr.createEl("th", { text: name });
      tr.createEl("td", { text: value });
    };
    const n = (x: number | null | undefined) => (x ?? 0).toLocaleString("en-US");
    row("Notes", n(s.notes));
    row("Chunks", `${n(s.index.chunks)} (${n(s.index.embedded)} embedded)`);
    row("Pending", `${n(s.index.pending_count)} note${s.index.pending_count === 1 ? "" : "s"} differ from the index`);
    const m = s.memory;
    if (m.exists) {
      const tokens = m.tokens != null ? `, ${n(m.tokens)}/${n(m.max_tokens)} tokens` : "";
      row(m.file, `${n(m.lines)}/${n(m.max_lines)} lines${tokens}`, m.over_budget ? "memvault-over" : "");
    } else {
      row(m.file, "missing");
    }
    // during a first index or a large pull the daemon does not read every changed note for
    // links (so that a status answers at once): the count is of the others
    const unread = s.links.unchecked ? `; ${n(s.links.unchecked)} changed notes not read yet (memvault links check reads all)` : "";
    row("Unresolved links", `${n(s.links.unresolved)} (${n(s.links.ambiguous)} ambiguous)${unread}`);
    const d = s.daemon;
    row("Daemon", `${d.state}, pid ${d.pid ?? "?"}, up ${formatUptime(d.uptime_seconds ?? 0)}, model ${d.model ?? "?"}`);
    const v = d.vectors;
    if (v) {
      const waited = v.pending && v.lag_seconds !== null ? `, the oldest for ${Math.round(v.lag_seconds)} s` : "";
      const lane = v.progress && v.busy ? ` (embedding ${n(v.progress.done)}/${n(v.progress.total)})` : "";
      row("Vectors", v.pending ? `${n(v.pending)} chunks waiting${waited}${lane}` : "all embedded", v.last_error ? "memvault-problem" : "");
    }
    row("Last error", d.last_error ?? "none", d.last_error ? "memvault-problem" : "");
    this.refreshButton();
  }

  /** The status bar's words, as the view's first line. */
  private health(): ReturnType<typeof describeHealth> {
    const health = describeHealth(this.host.connection.state, this.host.connection.daemon);
    this.contentEl.createDiv({ cls: `memvault-health memvault-health-${health.kind}`, text: health.text.replace(/^memvault: /, "") });
    return health;
  }

  private refreshButton(): void {
    const refresh = this.contentEl.createEl("button", { text: "Refresh", cls: "memvault-refresh" });
    refresh.addEventListener("click", () => void this.load());
  }

  private busy(detail: string): void {
    this.health();
    const box = this.contentEl.createDiv({ cls: "memvault-message memvault-problem" });
    box.createDiv({ text: `The daemon runs, but did not give its status: ${detail}.` });
    box.createDiv({ text: "It may be busy indexing (the status bar follows its progress)." });
    this.refreshButton();
  }

  private notRunning(detail: string): void {
    const box = this.contentEl.createDiv({ cls: "memvault-message memvault-problem" });
    box.createDiv({ text: detail });
    box.createDiv({ text: "Start the daemon with:" });
    for (const cmd of this.host.startCommands()) box.createEl("code", { text: cmd, cls: "memvault-command" });
  }

  onClose(): void {
    this.contentEl.empty();
  }
}

export function formatUptime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}
