/**
 * Mount the real plugin (src/main.ts) on the stand-in Obsidian: an App whose vault lists
 * the given files, whose adapter reads daemon.json through ``read``, and helpers to do
 * what a person does (open a note, type a search, press keys). Used in Node (happy-dom)
 * and in Chromium alike.
 */

import { App, FileSystemAdapter, MarkdownView, Plugin, TFile, WorkspaceLeaf } from "obsidian";
import MemvaultPlugin from "../../src/main";
import { RelatedView, VIEW_TYPE_RELATED } from "../../src/related-view";
import type { MemvaultSettings } from "../../src/settings";

export interface MountOptions {
  vaultPath: string;
  files: string[];
  read(path: string): Promise<string | null>;
  contents?(path: string): string;
  settings?: Partial<MemvaultSettings>;
  /** where the pane, status bar and ribbon go (the browser test lays out a page) */
  el?: { main: HTMLElement; side: HTMLElement; statusBar: HTMLElement; ribbon: HTMLElement };
  copied?: string[];
}

export interface Mounted {
  app: App;
  plugin: MemvaultPlugin;
  adapter: FileSystemAdapter;
  editorLeaf: WorkspaceLeaf;
  copied: string[];
  open(path: string): Promise<void>;
  related(): RelatedView;
  statusText(): string;
  unload(): void;
}

export async function mount(o: MountOptions): Promise<Mounted> {
  const adapter = new FileSystemAdapter(o.vaultPath, { read: o.read });
  const app = new App(adapter);
  app.vault.setFiles(o.files);
  WorkspaceLeaf.contents = (f: TFile) => o.contents?.(f.path) ?? "";
  if (o.el) {
    app.workspace.mainEl = o.el.main;
    app.workspace.sideEl = o.el.side;
    Plugin.statusBarEl = o.el.statusBar;
    Plugin.ribbonEl = o.el.ribbon;
  }
  const plugin = new MemvaultPlugin(app as never, {
    id: "memvault",
    name: "memvault",
    version: "0.1.0",
    minAppVersion: "1.7.2",
  } as never);
  (plugin as unknown as Plugin).data = o.settings ? { ...o.settings } : null;
  const copied = o.copied ?? [];
  plugin.copy = async (text: string) => {
    copied.push(text);
    if (typeof navigator !== "undefined" && navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text).catch(() => undefined);
    }
  };
  await (plugin as unknown as Plugin).load();
  const editorLeaf = app.workspace.getLeaf(false);
  app.workspace.ready();
  await until(() => app.workspace.getLeavesOfType(VIEW_TYPE_RELATED).length > 0);
  return {
    app: app as never,
    plugin,
    adapter,
    editorLeaf,
    copied,
    async open(path: string) {
      const f = app.vault.getAbstractFileByPath(path);
      if (!(f instanceof TFile)) throw new Error(`no file ${path} in the stand-in vault`);
      await editorLeaf.openFile(f, { active: true });
    },
    related() {
      return app.workspace.getLeavesOfType(VIEW_TYPE_RELATED)[0].view as unknown as RelatedView;
    },
    statusText() {
      return (plugin as unknown as Plugin).statusBar[0]?.textContent ?? "";
    },
    unload() {
      (plugin as unknown as Plugin).unload();
    },
  };
}

export async function until<T>(fn: () => T, timeoutMs = 20000, what = "a condition"): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function markdownEditor(leaf: WorkspaceLeaf) {
  const v = leaf.view;
  if (!(v instanceof MarkdownView)) throw new Error("the leaf holds no markdown view");
  return v.editor;
}
