/**
 * The plugin page in Debian's headless Chromium (for browser.test.ts and the latency
 * bench): served, by request interception, at the daemon's own origin; requests that
 * carry an Origin (POSTs) reach the daemon with `Origin: app://obsidian.md`, as
 * Obsidian's page sends — so the daemon applies exactly the checks it applies to
 * Obsidian. No browser download, no skipping: without Chromium this fails saying how to
 * install it.
 */
import { existsSync, readFileSync } from "node:fs";
import * as net from "node:net";
import { join, resolve } from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
import { REPO } from "./daemon";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
export const PLUGIN = resolve(REPO, "obsidian-plugin");

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => res(p));
    });
    s.on("error", rej);
  });
}

function html(): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>memvault plugin</title>
<link rel="stylesheet" href="obsidian-like.css"><link rel="stylesheet" href="styles.css"></head>
<body><div class="side-dock-ribbon"></div><div class="memvault-test-main"></div>
<div class="memvault-test-side"><div class="view-header">Related notes</div></div><div class="status-bar"></div>
<script src="page.js"></script></body></html>`;
}

export interface PluginPage {
  browser: Browser;
  page: Page;
  /** console errors and warnings, page errors: what Obsidian's console would show */
  problems: string[];
  /** set while the daemon is meant to be down (Chromium logs refused fetches itself) */
  daemonDown: { value: boolean };
}

export async function openPluginPage(o: {
  root: string;
  port: number;
  files: string[];
  contents: Record<string, string>;
  settings: object;
  read?: (path: string) => string | null;
}): Promise<PluginPage> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not at ${CHROMIUM}: install Debian's package (apt-get update && apt-get install -y chromium) or set CHROMIUM_PATH`,
    );
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // and a fresh profile: Playwright gives each launch a new temp user-data-dir
    args: [
      "--no-sandbox",
      "--headless",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
      "--no-first-run",
    ],
  });
  const origin = `http://127.0.0.1:${o.port}`;
  const context = await browser.newContext({ viewport: { width: 1280, height: 760 }, deviceScaleFactor: 1 });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  const assets: Record<string, [string, string]> = {
    "index.html": [html(), "text/html"],
    "page.js": [readFileSync(join(PLUGIN, ".build", "browser", "page.js"), "utf8"), "text/javascript"],
    "styles.css": [readFileSync(join(PLUGIN, "styles.css"), "utf8"), "text/css"],
    "obsidian-like.css": [readFileSync(join(PLUGIN, "test", "browser", "obsidian-like.css"), "utf8"), "text/css"],
  };
  await context.route(`${origin}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname.startsWith("/__memvault_test__/")) {
      const [body, contentType] = assets[url.pathname.slice("/__memvault_test__/".length)] ?? ["", "text/plain"];
      return route.fulfill({ status: body ? 200 : 404, body, contentType });
    }
    const headers = route.request().headers();
    if (!headers.origin) return route.continue(); // same-origin GETs (and /events, streamed)
    // Chromium sends this page's own origin on a POST and will not let it be rewritten;
    // Playwright makes the request from Node instead, with the Origin Obsidian's page has
    headers.origin = "app://obsidian.md";
    const response = await route.fetch({ headers });
    return route.fulfill({ response });
  });
  const page = await context.newPage();
  const problems: string[] = [];
  const daemonDown = { value: false };
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (msg) => {
    if (msg.type() !== "error" && msg.type() !== "warning") return;
    // Chromium itself logs a refused fetch while the daemon is down (a network-level line,
    // not the plugin's; Obsidian desktop uses Node's http and logs nothing)
    if (daemonDown.value && /ERR_CONNECTION_REFUSED/.test(msg.text())) return;
    problems.push(`console ${msg.type()}: ${msg.text()}`);
  });
  const read =
    o.read ??
    ((p: string) => {
      try {
        return readFileSync(join(o.root, p), "utf8");
      } catch {
        return null;
      }
    });
  await page.exposeFunction("memvaultReadFile", read);
  await page.goto(`${origin}/__memvault_test__/index.html`);
  await page.evaluate(
    ([vaultPath, files, contents, settings]) => window.memvaultPage.start(vaultPath, files, contents, settings),
    [o.root, o.files, o.contents, o.settings] as const,
  );
  return { browser, page, problems, daemonDown };
}
