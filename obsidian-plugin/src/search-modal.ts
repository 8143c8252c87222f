/**
 * Semantic search: a SuggestModal over the daemon's `/search`, with the filter syntax
 * of query.ts (`folder:` `tag:` `since:` `until:` `path:`). Results show title,
 * heading and snippet; Enter opens the note at the hit's line, Mod+Enter inserts a
 * link to it at the cursor of the note that was open when the modal opened.
 */

import { type App, type Editor, Keymap, SuggestModal } from "obsidian";
import { search } from "./api";
import { DaemonError } from "./connection";
import { cleanSnippet, headingTrail } from "./display";
import type { Host } from "./host";
import { folderOf, insertAtCursor, linkTo, openHit } from "./navigation";
import { filtersOf, parseQuery } from "./query";
import type { Hit } from "./types";

export const SEARCH_HINT = "Search your memory — words, then filters: folder:decisions tag:db since:2024-01-01";
const TYPING_MS = 120; // wait for a pause in typing before asking the daemon

export class SearchModal extends SuggestModal<Hit> {
  private readonly editor: Editor | null;
  private readonly sourcePath: string;
  private latest: Promise<Hit[]> | null = null;
  private inflight: AbortController | null = null;
  /** The last answer's fate, for the DOM (tests) and for the empty state. */
  lastError: DaemonError | null = null;

  constructor(
    app: App,
    private readonly host: Host,
  ) {
    super(app);
    const active = app.workspace.activeEditor;
    this.editor = active?.editor ?? null;
    this.sourcePath = active?.file?.path ?? "";
    this.limit = host.settings.resultCount;
    this.emptyStateText = SEARCH_HINT;
    this.setPlaceholder(SEARCH_HINT);
    this.setInstructions([
      { command: "↑↓", purpose: "to navigate" },
      { command: "↵", purpose: "to open at the line" },
      { command: "mod ↵", purpose: "to insert a link" },
      { command: "esc", purpose: "to dismiss" },
    ]);
    this.modalEl.addClass("memvault-search");
    this.scope.register(["Mod"], "Enter", (evt) => {
      this.selectActiveSuggestion(evt);
      return false;
    });
  }

  getSuggestions(input: string): Promise<Hit[]> {
    const mine = this.fetch(input);
    this.latest = mine;
    // an older, slower answer never replaces a newer one: every caller gets the newest
    return mine.then(() => this.latest ?? mine);
  }

  private async fetch(input: string): Promise<Hit[]> {
    this.inflight?.abort();
    this.inflight = null;
    const parsed = parseQuery(input);
    if (parsed.problems.length) {
      this.emptyStateText = parsed.problems.join("; ");
      return [];
    }
    if (!parsed.query) {
      this.emptyStateText = SEARCH_HINT;
      return [];
    }
    const ctl = new AbortController();
    this.inflight = ctl;
    await new Promise((r) => setTimeout(r, TYPING_MS));
    if (ctl.signal.aborted) return [];
    try {
      const { hits } = await search(this.host.connection, parsed.query, this.limit, filtersOf(parsed), ctl.signal);
      this.lastError = null;
      this.emptyStateText = "Nothing found.";
      return hits;
    } catch (err) {
      const e = err instanceof DaemonError ? err : new DaemonError("server", String(err));
      if (e.kind === "aborted") return [];
      this.lastError = e;
      this.emptyStateText =
        e.kind === "not-running" || e.kind === "foreign" || e.kind === "unauthorized"
          ? `The memvault daemon is not available (${e.message}). Start it with: ${this.host.startCommands()[0]}`
          : `The search failed: ${e.message}`;
      return [];
    }
  }

  renderSuggestion(hit: Hit, el: HTMLElement): void {
    el.addClass("memvault-suggestion");
    const head = el.createDiv({ cls: "memvault-hit-head" });
    head.createSpan({ cls: "memvault-hit-title", text: hit.title || hit.path });
    head.createSpan({ cls: "memvault-hit-folder", text: folderOf(hit.path) });
    const trail = headingTrail(hit);
    if (trail) el.createDiv({ cls: "memvault-hit-heading", text: trail });
    el.createDiv({ cls: "memvault-hit-snippet", text: cleanSnippet(hit) });
  }

  onChooseSuggestion(hit: Hit, evt: MouseEvent | KeyboardEvent): void {
    if (Keymap.isModifier(evt, "Mod")) {
      insertAtCursor(this.editor, linkTo(this.app, hit, this.sourcePath));
      return;
    }
    void openHit(this.app, hit);
  }

  onClose(): void {
    this.inflight?.abort();
    super.onClose();
  }
}
