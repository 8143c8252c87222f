/** What the views need from the plugin (an interface, so views do not import main.ts). */

import type { App } from "obsidian";
import type { Connection } from "./connection";
import type { MemvaultSettings } from "./settings";

export interface Host {
  app: App;
  settings: MemvaultSettings;
  connection: Connection;
  /** The commands that start the daemon for this vault, for messages. */
  startCommands(): string[];
  /** Put text on the clipboard. */
  copy(text: string): Promise<void>;
}
