/**
 * The plugin's real code in headless Chromium, fed by a real daemon: the related pane,
 * the search modal, the status view and the not-running state are rendered, asserted on
 * in the DOM, and screenshotted (to .build/screenshots; to docs/img with
 * MEMVAULT_UPDATE_SCREENSHOTS=1, which is how the README's pictures are made).
 *
 * Obsidian's page lives at app://obsidian.md; this one is served (by request
 * interception) at the daemon's own origin, and requests that carry an Origin (POSTs)
 * reach the daemon with `Origin: app://obsidian.md`, as Obsidian's would — so the daemon
 * applies exactly the checks it applies to Obsidian. Chromium is Debian's (`/usr/bin/chromium`, or
 * $CHROMIUM_PATH); there is no download and no skipping: without it the test fails
 * saying how to install it.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { freePort, openPluginPage, PLUGIN } from "../support/chromium";
import { headingTrail } from "../../src/display";
import type { Hit } from "../../src/types";
import { cleanup, Daemon, makeVault, note, REPO, tempDir } from "../support/daemon";

const SHOTS = process.env.MEMVAULT_UPDATE_SCREENSHOTS ? join(REPO, "docs", "img") : join(PLUGIN, ".build", "screenshots");

export const DEMO: Record<string, string> = {
  "people/ana-lopez.md": note(
    "Ana Lopez",
    "Ana is our product designer.\n\n## Work\n\nAna designs the kiwi illustrations and the fern patterns for the garden app, and reviews every onboarding screen.\n\n## Contact\n\nAna prefers email; Tuesdays are her focus days.",
    { summary: "product designer", tags: "[design]" },
  ),
  "people/sam-okafor.md": note(
    "Sam Okafor",
    "## Work\n\nSam owns the database and the sync service of the garden app.",
    { summary: "backend engineer", tags: "[db]" },
  ),
  "projects/garden-app.md": note(
    "Garden app",
    "## Illustrations\n\nKiwi illustrations and fern patterns drawn by Ana for the onboarding screens.\n\n## Database\n\nPostgreSQL schema with one table per plant; Sam runs the migrations.",
    { status: "active", tags: "[design, db]" },
  ),
  "projects/onboarding-redesign.md": note(
    "Onboarding redesign",
    "## Screens\n\nFive onboarding screens with Ana's illustrations; the fern pattern is the background.\n\n## Open questions\n\nDo we show the kiwi on every screen?",
    { status: "active", tags: "[design]" },
  ),
  "decisions/2024-03-12-use-postgresql.md": note(
    "Use PostgreSQL for the garden app",
    "## Context\n\nThe garden app needs a database schema for plants and gardens.\n\n## Decision\n\nWe decided to use PostgreSQL for the database schema, one table per plant.\n\n## Consequences\n\nSam writes the migrations.",
    { status: "accepted", date: "2024-03-12", tags: "[db]" },
  ),
  "decisions/2024-04-02-illustration-style.md": note(
    "Flat illustration style",
    "## Decision\n\nIllustrations are flat, two colours: Ana's kiwi and fern set is the reference.",
    { status: "accepted", date: "2024-04-02", tags: "[design]" },
  ),
  "logs/2024-03-13.md": note("2024-03-13", "- Ana drew more kiwi illustrations for onboarding.\n- Sam migrated the plant table."),
  "projects/Q&A notes #2 — ünïcode.md": note("Q&A notes #2", "## Fragen\n\nQuestions from Ana about the fern illustrations."),
};

let dir: string;
let root: string;
let daemon: Daemon;
let port: number;
let browser: Browser;
let page: Page;
let problems: string[];
let daemonDown: { value: boolean };

async function shot(name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  const path = join(SHOTS, name);
  await page.screenshot({ path, animations: "disabled" });
  const png = readFileSync(path);
  assert.equal(png.subarray(1, 4).toString(), "PNG");
  assert.equal(png.readUInt32BE(16), 1280); // width from the IHDR chunk
  assert.ok(statSync(path).size > 20_000, `${name} looks empty`);
}

before(async () => {
  dir = tempDir();
  root = makeVault(dir, DEMO);
  port = await freePort();
  daemon = new Daemon(root, port);
  await daemon.start();
  await daemon.settled();
  ({ browser, page, problems, daemonDown } = await openPluginPage({
    root,
    port,
    files: Object.keys(DEMO),
    contents: DEMO,
    settings: { resultCount: 6 },
  }));
  await page.waitForSelector('.status-bar-item:text("memvault: watching")', { timeout: 20000 });
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
  if (dir) cleanup(dir);
});

async function daemonApi<T>(path: string, body?: unknown): Promise<T> {
  const info = daemon.info!;
  const res = await fetch(`http://127.0.0.1:${info.port}${path}`, {
    method: body ? "POST" : "GET",
    headers: { Authorization: `Bearer ${info.token}`, "Content-Type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  return (await res.json()) as T;
}

describe("in Chromium, against a real daemon", () => {
  it("renders the related pane for the open note", async () => {
    await page.evaluate(() => window.memvaultPage.open("people/ana-lopez.md"));
    await page.waitForSelector('.memvault-related[data-state="hits"] .memvault-hit');
    const answer = await daemonApi<{ hits: Hit[] }>("/related?path=people%2Fana-lopez.md&k=6");
    const shown = await page.$$eval(".memvault-hit", (els) =>
      els.map((e) => ({
        path: (e as HTMLElement).dataset.path,
        title: e.querySelector(".memvault-hit-title")?.textContent,
        folder: e.querySelector(".memvault-hit-folder")?.textContent,
        heading: e.querySelector(".memvault-hit-heading")?.textContent ?? "",
        snippet: e.querySelector(".memvault-hit-snippet")?.textContent ?? "",
      })),
    );
    assert.deepEqual(
      shown.map((s) => s.path),
      answer.hits.map((h) => h.path),
    );
    assert.deepEqual(
      shown.map((s) => s.heading),
      answer.hits.map((h) => headingTrail(h)),
    );
    assert.ok(shown.some((s) => s.heading !== ""), "hits name their section");
    assert.ok(shown.every((s) => s.title && s.folder && s.snippet.length > 10));
    assert.equal(await page.textContent(".memvault-related-title"), "ana-lopez");
    const visible = await page.isVisible(".memvault-related .memvault-hit .memvault-insert");
    assert.ok(visible);
    await shot("related-pane.png");
  });

  it("inserts a link from the pane at the editor's cursor", async () => {
    const text = await page.evaluate(() => {
      const m = window.memvaultPage.mounted!;
      const view = m.editorLeaf.view as unknown as { editor: { setCursor(p: object): void; getValue(): string } };
      view.editor.setCursor({ line: 6, ch: 0 });
      return view.editor.getValue();
    });
    await page.click(".memvault-hit >> nth=0 >> .memvault-insert");
    const after = await page.evaluate(() => {
      const view = window.memvaultPage.mounted!.editorLeaf.view as unknown as { editor: { getValue(): string } };
      return view.editor.getValue();
    });
    assert.notEqual(after, text);
    assert.match(after.split("\n")[6], /^\[\[[^\]]+\]\]/);
  });

  it("renders the search modal from the ribbon, with filters, and Mod+Enter inserts a link", async () => {
    await page.click('.side-dock-ribbon-action[aria-label="memvault: semantic search"]');
    await page.keyboard.type("postgresql schema for plants folder:decisions");
    await page.waitForSelector(".memvault-search .suggestion-item .memvault-hit-title");
    const answer = await daemonApi<{ hits: { title: string }[] }>("/search", {
      query: "postgresql schema for plants",
      k: 6,
      folder: "decisions",
    });
    await page.waitForFunction(
      (n) => document.querySelectorAll(".memvault-search .suggestion-item").length === n,
      answer.hits.length,
    );
    const titles = await page.$$eval(".memvault-search .suggestion-item .memvault-hit-title", (els) =>
      els.map((e) => e.textContent),
    );
    assert.deepEqual(titles, answer.hits.map((h) => h.title));
    assert.equal(await page.getAttribute(".memvault-search .suggestion-item >> nth=0", "class"), "suggestion-item is-selected memvault-suggestion");
    await shot("search-modal.png");
    await page.keyboard.press("Control+Enter");
    await page.waitForSelector(".memvault-search", { state: "detached" });
    const line = await page.evaluate(() => {
      const view = window.memvaultPage.mounted!.editorLeaf.view as unknown as {
        editor: { getValue(): string; getCursor(): { line: number } };
      };
      return view.editor.getValue().split("\n")[view.editor.getCursor().line];
    });
    assert.match(line, /\[\[2024-03-12-use-postgresql#/);
  });

  it("copies a cited context to the real clipboard", async () => {
    const question = "What did we decide about the database schema?";
    await page.evaluate((q) => {
      const view = window.memvaultPage.mounted!.editorLeaf.view as unknown as {
        editor: { getValue(): string; setValue(v: string): void; setSelection(a: object, b: object): void };
      };
      view.editor.setValue(`${view.editor.getValue()}\n${q}`);
      const last = view.editor.getValue().split("\n").length - 1;
      view.editor.setSelection({ line: last, ch: 0 }, { line: last, ch: q.length });
      window.memvaultPage.mounted!.plugin.ask();
    }, question);
    await page.waitForSelector('.notice:text-matches("copied a context of")');
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    const expected = await daemonApi<{ text: string }>("/context", { query: question, budget: 2000 });
    assert.equal(clip, expected.text);
    assert.match(clip, /^\[\[decisions\/2024-03-12-use-postgresql\]\] L\d+-\d+$/m); // cited with its lines
  });

  it("renders the status view from the status bar", async () => {
    await page.click(".status-bar-item.memvault-statusbar");
    await page.waitForSelector(".memvault-status .memvault-status-table");
    const rows = await page.$$eval(".memvault-status-table tr", (trs) =>
      Object.fromEntries(trs.map((tr) => [tr.querySelector("th")!.textContent, tr.querySelector("td")!.textContent])),
    );
    const status = await daemonApi<{ notes: number; memory: { lines: number; max_lines: number } }>("/status");
    assert.equal(rows["Notes"], status.notes.toLocaleString("en-US"));
    assert.match(rows["MEMORY.md"]!, new RegExp(`^${status.memory.lines}/${status.memory.max_lines} lines`));
    assert.match(rows["Unresolved links"]!, /^\d+ \(\d+ ambiguous\)$/);
    assert.equal(rows["Last error"], "none");
    assert.match(rows["Daemon"]!, /^watching, pid \d+, up /);
    await shot("status-view.png");
    await page.keyboard.press("Escape").catch(() => undefined);
    await page.evaluate(() => document.querySelector(".memvault-status")?.closest(".modal-container")?.remove());
  });

  it("shows the not-running state when the daemon stops, and comes back when it restarts", async () => {
    await page.evaluate(() => document.querySelectorAll(".notice").forEach((n) => n.remove()));
    daemonDown.value = true;
    await daemon.stop();
    await page.waitForSelector('.status-bar-item:text("memvault: not running")', { timeout: 10000 });
    await page.waitForSelector('.memvault-related[data-state="error"] .memvault-command');
    const commands = await page.$$eval(".memvault-related .memvault-command", (els) => els.map((e) => e.textContent));
    assert.equal(commands[0], `memvault up ${root}`);
    assert.equal(commands[1], `memvault daemon start --vault ${root}`);
    await page.waitForSelector('.notice:text-matches("Start it with")');
    await shot("not-running.png");
    daemon = new Daemon(root, port);
    await daemon.start();
    await page.waitForSelector('.memvault-related[data-state="hits"]', { timeout: 20000 });
    daemonDown.value = false;
    await daemon.settled();
    await page.waitForSelector('.status-bar-item:text("memvault: watching")', { timeout: 20000 });
  });

  it("left nothing in the console", () => {
    assert.deepEqual(problems, []);
  });
});
