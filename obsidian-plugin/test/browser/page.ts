/**
 * The page Chromium loads: an Obsidian-like window (ribbon, editor, right sidebar,
 * status bar) in which the real plugin runs on the stand-in `obsidian`, over fetch
 * against the real daemon. Driven from browser.test.ts through `window.memvaultPage`.
 */
import { MarkdownView } from "obsidian";
import { type Mounted, mount } from "../support/harness";

declare global {
  interface Window {
    memvaultReadFile(path: string): Promise<string | null>;
    memvaultPage: {
      mounted: Mounted | null;
      start(vaultPath: string, files: string[], contents: Record<string, string>, settings: object): Promise<void>;
      open(path: string): Promise<void>;
    };
  }
}

function renderEditor(m: Mounted): void {
  const view = m.editorLeaf.view;
  if (!(view instanceof MarkdownView) || !view.file) return;
  const main = view.containerEl;
  main.empty();
  main.addClass("memvault-test-editor");
  main.createDiv({ cls: "view-header-title", text: view.file.basename });
  const body = main.createDiv({ cls: "markdown-source-view" });
  for (const line of view.editor.getValue().split("\n")) {
    const cls = /^#{1,6} /.test(line) ? `cm-line cm-header-${line.indexOf(" ")}` : "cm-line";
    body.createDiv({ cls, text: line || "\u00a0" });
  }
}

window.memvaultPage = {
  mounted: null,
  async start(vaultPath, files, contents, settings) {
    const el = {
      ribbon: document.querySelector(".side-dock-ribbon") as HTMLElement,
      main: document.querySelector(".memvault-test-main") as HTMLElement,
      side: document.querySelector(".memvault-test-side") as HTMLElement,
      statusBar: document.querySelector(".status-bar") as HTMLElement,
    };
    const m = await mount({
      vaultPath,
      files,
      read: (p) => window.memvaultReadFile(p),
      contents: (p) => contents[p] ?? "",
      settings,
      el,
    });
    this.mounted = m;
    m.app.workspace.on("file-open", () => setTimeout(() => renderEditor(m), 0));
  },
  async open(path) {
    await this.mounted!.open(path);
    renderEditor(this.mounted!);
  },
};
