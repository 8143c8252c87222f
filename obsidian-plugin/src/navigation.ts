/** Opening a hit at its line, and the [[link]] to it. Reads only; never writes a note. */

import { type App, type Editor, MarkdownView, Notice, TFile } from "obsidian";
import { linkHeading } from "./display";
import type { Hit } from "./types";

export function fileOf(app: App, path: string): TFile | null {
  const f = app.vault.getAbstractFileByPath(path);
  return f instanceof TFile ? f : null;
}

/** The link to a hit's section, in the user's link style (wikilink or markdown, shortest
 *  path or not: Obsidian's own `generateMarkdownLink` decides). */
export function linkTo(app: App, hit: Hit, sourcePath: string): string {
  const heading = hit.heading.length ? linkHeading(hit.heading[hit.heading.length - 1]) : "";
  const file = fileOf(app, hit.path);
  if (!file) {
    const target = hit.path.replace(/\.md$/i, "");
    return heading ? `[[${target}#${heading}]]` : `[[${target}]]`;
  }
  return app.fileManager.generateMarkdownLink(file, sourcePath, heading ? `#${heading}` : undefined);
}

/** Open the hit's note (in the current tab, or a new one) with the cursor on its line. */
export async function openHit(app: App, hit: Hit, newTab = false): Promise<void> {
  const file = fileOf(app, hit.path);
  if (!file) {
    new Notice(`memvault: ${hit.path} is not in the vault any more`);
    return;
  }
  const line = Math.max(0, hit.line_start - 1); // the daemon counts from 1, the editor from 0
  const leaf = app.workspace.getLeaf(newTab);
  await leaf.openFile(file, { active: true, eState: { line } });
  const view = leaf.view;
  if (view instanceof MarkdownView) {
    const pos = { line: Math.min(line, Math.max(0, view.editor.lineCount() - 1)), ch: 0 };
    view.editor.setCursor(pos);
    view.editor.scrollIntoView({ from: pos, to: pos }, true);
  }
}

/** Insert text at the cursor of an editor (what the user asked for, explicitly). */
export function insertAtCursor(editor: Editor | null | undefined, text: string): boolean {
  if (!editor) {
    new Notice("memvault: open a note in the editor to insert the link into");
    return false;
  }
  editor.replaceSelection(text);
  editor.focus();
  return true;
}

export function folderOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "/" : path.slice(0, i);
}
