/**
 * "Ask your memory": the selection (or a question typed into a prompt) becomes a budgeted,
 * cited `/context`, put on the clipboard for pasting into any AI chat.
 */

import { type App, Modal, Notice, Setting } from "obsidian";
import { context } from "./api";
import { DaemonError } from "./connection";
import type { Host } from "./host";
import type { Context } from "./types";

/** Fetch the context for ``question`` and copy it; the notice says what was copied. */
export async function askMemory(host: Host, question: string): Promise<Context | null> {
  const q = question.trim();
  if (!q) {
    new Notice("memvault: nothing to ask — select some text or type a question");
    return null;
  }
  const budget = host.settings.contextBudget;
  let ctx: Context;
  try {
    ctx = await context(host.connection, q, budget, Math.max(host.settings.timeoutMs, 15000));
  } catch (err) {
    const e = err instanceof DaemonError ? err : new DaemonError("server", String(err));
    const start =
      e.kind === "not-running" || e.kind === "foreign" || e.kind === "unauthorized"
        ? ` Start the daemon: ${host.startCommands()[0]}`
        : "";
    new Notice(`memvault: could not build a context — ${e.message}.${start}`, 10000);
    return null;
  }
  try {
    await host.copy(ctx.text);
  } catch (err) {
    new Notice(`memvault: the clipboard refused the context (${String(err)})`, 8000);
    return null;
  }
  const notes = new Set(ctx.sources.filter((s) => s.why !== "index").map((s) => s.path)).size;
  new Notice(
    `memvault: copied a context of ${ctx.tokens}/${ctx.budget} tokens from ${notes} note${notes === 1 ? "" : "s"} — paste it into any AI chat`,
  );
  return ctx;
}

/** A one-line prompt for the question when nothing is selected. */
export class AskModal extends Modal {
  private value = "";

  constructor(
    app: App,
    private readonly host: Host,
    private readonly done: (ctx: Context | null) => void = () => {},
  ) {
    super(app);
  }

  onOpen(): void {
    this.titleEl.setText("Ask your memory");
    this.modalEl.addClass("memvault-ask");
    this.contentEl.createDiv({
      cls: "memvault-muted",
      text: `A cited context of up to ${this.host.settings.contextBudget} tokens goes to the clipboard.`,
    });
    const submit = () => {
      const q = this.value;
      this.close();
      void askMemory(this.host, q).then(this.done);
    };
    new Setting(this.contentEl).setName("Question").addText((text) => {
      text.setPlaceholder("What did we decide about the database schema?");
      text.onChange((v) => (this.value = v));
      text.inputEl.addClass("memvault-ask-input");
      text.inputEl.addEventListener("keydown", (evt: KeyboardEvent) => {
        if (evt.key === "Enter" && !evt.isComposing) {
          evt.preventDefault();
          submit();
        }
      });
      window.setTimeout(() => text.inputEl.focus(), 0);
    });
    new Setting(this.contentEl).addButton((b) => b.setButtonText("Copy context").setCta().onClick(submit));
  }

  onClose(): void {
    this.contentEl.empty();
  }
}
