/**
 * The related-notes pane (right sidebar): for the note in the editor, the daemon's
 * `/related` hits — title, folder, the matching heading and a snippet. A click opens the
 * note at that section; the link button (or dragging an item into a note) inserts a
 * `[[link]]` at the cursor of the note the pane is showing. Everything it shows comes from
 * the daemon; what it cannot show (no daemon, a PDF, a note not indexed yet, a slow
 * answer) is said in words, never thrown.
 */

import { FileView, ItemView, MarkdownView, setIcon, type TFile, type WorkspaceLeaf } from "obsidian";
import { related } from "./api";
import { DaemonError } from "./connection";
import { cleanSnippet, headingTrail } from "./display";
import type { Host } from "./host";
import { folderOf, insertAtCursor, linkTo, openHit } from "./navigation";
import type { Hit } from "./types";

export const VIEW_TYPE_RELATED = "memvault-related";

type PaneState =
  | { kind: "empty" }
  | { kind: "not-markdown"; file: TFile }
  | { kind: "loading"; file: TFile }
  | { kind: "connecting"; file: TFile }
  | { kind: "hits"; file: TFile; hits: Hit[] }
  | { kind: "error"; file: TFile | null; error: DaemonError };

export class RelatedView extends ItemView {
  /** The note the pane shows related notes for, and the leaf it is open in. */
  private file: TFile | null = null;
  private sourceLeaf: WorkspaceLeaf | null = null;
  private pane: PaneState = { kind: "empty" };
  private seq = 0;
  private inflight: AbortController | null = null;
  private bodyEl!: HTMLElement;
  private titleEl!: HTMLElement;

  constructor(
    leaf: WorkspaceLeaf,
    private readonly host: Host,
  ) {
    super(leaf);
  }

  getViewType(): string {
    return VIEW_TYPE_RELATED;
  }

  getDisplayText(): string {
    return "Related notes";
  }

  getIcon(): string {
    return "library";
  }

  async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("memvault-related");
    this.titleEl = root.createDiv({ cls: "memvault-related-title" });
    this.bodyEl = root.createDiv({ cls: "memvault-related-body" });
    this.follow(this.host.app.workspace.getMostRecentLeaf());
  }

  async onClose(): Promise<void> {
    this.inflight?.abort();
    this.inflight = null;
  }

  /** The editor's note may have changed (active leaf changed, or a file opened in it). */
  follow(leaf: WorkspaceLeaf | null): void {
    if (leaf === this.leaf) return; // clicking into the pane itself changes nothing
    const ws = this.host.app.workspace;
    const root = leaf?.getRoot();
    if (root && (root === ws.leftSplit || root === ws.rightSplit)) return; // a sidebar view
    const view = leaf?.view;
    const file = view instanceof FileView ? view.file : null;
    this.sourceLeaf = leaf;
    if (file === this.file && this.pane.kind !== "error" && this.pane.kind !== "empty") return;
    this.file = file;
    this.refresh();
  }

  /** Ask the daemon again for the current note (after an index change, a reconnect). */
  refresh(): void {
    const file = this.file;
    this.inflight?.abort();
    this.inflight = null;
    const seq = ++this.seq;
    if (!file) return this.show({ kind: "empty" });
    if (file.extension !== "md") return this.show({ kind: "not-markdown", file });
    if (this.host.connection.state.kind === "starting") return this.show({ kind: "connecting", file });
    if (!this.host.connection.connected) {
      const s = this.host.connection.state;
      const detail = "detail" in s ? s.detail : "connecting to the daemon";
      return this.show({ kind: "error", file, error: new DaemonError("not-running", detail) });
    }
    if (this.pane.kind !== "hits" || this.pane.file !== file) this.show({ kind: "loading", file });
    const ctl = new AbortController();
    this.inflight = ctl;
    const s = this.host.settings;
    related(this.host.connection, file.path, s.resultCount, s.excludedFolders, ctl.signal).then(
      (answer) => {
        if (seq !== this.seq) return;
        this.inflight = null;
        this.show({ kind: "hits", file, hits: answer.hits });
      },
      (err: unknown) => {
        if (seq !== this.seq) return;
        this.inflight = null;
        const e = err instanceof DaemonError ? err : new DaemonError("server", String(err));
        if (e.kind !== "aborted") this.show({ kind: "error", file, error: e });
      },
    );
  }

  private show(state: PaneState): void {
    this.pane = state;
    if (!this.bodyEl) return;
    const body = this.bodyEl;
    body.empty();
    const file = "file" in state ? state.file : null;
    this.titleEl.setText(file ? file.basename : "Related notes");
    this.contentEl.dataset.state = state.kind;
    this.contentEl.dataset.path = file?.path ?? "";
    switch (state.kind) {
      case "empty":
        return this.message("Open a note to see the notes related to it.");
      case "not-markdown":
        return this.message(
          `Related notes are found for markdown notes; ${file?.name} is a ${state.file.extension.toUpperCase()} file.`,
        );
      case "loading":
        return this.message("Looking for related notes…", "memvault-muted");
      case "connecting":
        return this.message("Connecting to the memvault daemon…", "memvault-muted");
      case "error":
        return this.renderError(state.error);
      case "hits":
        return this.renderHits(state.hits);
    }
  }

  private message(text: string, cls = "memvault-message"): void {
    this.bodyEl.createDiv({ cls, text });
  }

  private renderError(e: DaemonError): void {
    if (e.kind === "not-found") {
      return this.message(
        "This note is not in the index yet (new, empty, or excluded). It appears once the daemon has indexed it.",
      );
    }
    const box = this.bodyEl.createDiv({ cls: "memvault-message memvault-problem" });
    if (e.kind === "not-running" || e.kind === "foreign" || e.kind === "unauthorized") {
      box.createDiv({ text: `The memvault daemon is not available: ${e.message}.` });
      box.createDiv({ text: "Start it with:" });
      for (const cmd of this.host.startCommands()) box.createEl("code", { text: cmd, cls: "memvault-command" });
      return;
    }
    if (e.kind === "timeout") {
      box.createDiv({ text: `${e.message}; it may be busy indexing. The pane retries on the next change.` });
    } else {
      box.createDiv({ text: `The daemon could not answer: ${e.message}` });
    }
    const retry = box.createEl("button", { text: "Retry", cls: "memvault-retry" });
    retry.addEventListener("click", () => this.refresh());
  }

  private renderHits(hits: Hit[]): void {
    if (!hits.length) return this.message("No related notes found.");
    const list = this.bodyEl.createDiv({ cls: "memvault-hits" });
    for (const hit of hits) {
      const item = list.createDiv({ cls: "memvault-hit", attr: { draggable: "true" } });
      item.dataset.path = hit.path;
      const head = item.createDiv({ cls: "memvault-hit-head" });
      head.createSpan({ cls: "memvault-hit-title", text: hit.title || hit.path });
      const button = head.createEl("button", {
        cls: "memvault-insert clickable-icon",
        attr: { "aria-label": "Insert a link at the cursor" },
      });
      setIcon(button, "link");
      item.createDiv({ cls: "memvault-hit-folder", text: folderOf(hit.path) });
      const trail = headingTrail(hit);
      if (trail) item.createDiv({ cls: "memvault-hit-heading", text: trail });
      item.createDiv({ cls: "memvault-hit-snippet", text: cleanSnippet(hit) });
      item.addEventListener("click", (evt) => {
        if ((evt.target as HTMLElement).closest(".memvault-insert")) return;
        void openHit(this.host.app, hit, evt.ctrlKey || evt.metaKey);
      });
      button.addEventListener("click", (evt) => {
        evt.stopPropagation();
        this.insertLink(hit);
      });
      item.addEventListener("dragstart", (evt) => {
        evt.dataTransfer?.setData("text/plain", linkTo(this.host.app, hit, this.file?.path ?? ""));
      });
    }
  }

  /** Insert a link to ``hit`` into the note the pane is showing, at its cursor. */
  insertLink(hit: Hit): boolean {
    const view = this.sourceLeaf?.view;
    const editor = view instanceof MarkdownView ? view.editor : null;
    return insertAtCursor(editor, linkTo(this.host.app, hit, this.file?.path ?? ""));
  }
}
