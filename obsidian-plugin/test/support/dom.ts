/** A DOM for tests that run in Node: happy-dom's window, its classes made global. Import
 *  this first in a Node test file (before anything that imports `obsidian`). */
import { Window } from "happy-dom";
import { installDomHelpers } from "./obsidian";

const win = new Window({ url: "app://obsidian.md/index.html" }) as unknown as Record<string, unknown>;
const g = globalThis as unknown as Record<string, unknown>;
for (const name of [
  "window",
  "document",
  "HTMLElement",
  "HTMLInputElement",
  "HTMLTextAreaElement",
  "HTMLButtonElement",
  "Node",
  "Event",
  "KeyboardEvent",
  "MouseEvent",
  "InputEvent",
  "DragEvent",
  "DataTransfer",
  "MutationObserver",
]) {
  if (win[name] !== undefined) g[name] = name === "window" ? win : win[name];
}
g.document = (win as { document: unknown }).document;
installDomHelpers(win);

export function resetDom(): void {
  (document.body as HTMLElement).innerHTML = "";
}
