/**
 * The plugin on the stand-in Obsidian against a scripted daemon: the states that a real
 * daemon can rarely be made to show on demand (slow, another program on the port, a stale
 * daemon.json, a refused token), and the views' logic. tests/integration has the real one.
 */
import { resetDom } from "../support/dom";
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { shownNotices } from "obsidian";
import { FakeDaemon, hit } from "../support/fake-daemon";
import { type Mounted, markdownEditor, mount, until } from "../support/harness";
import { SearchModal } from "../../src/search-modal";

const FILES = [
  "people/ana.md",
  "projects/kiwi.md",
  "projects/Q&A notes #2 — ünïcode.md",
  "logs/2024-01-02.md",
  "attachments/spec.pdf",
  "boards/plan.canvas",
];

let fake: FakeDaemon;
let daemonJson: string | null;
let m: Mounted | null;
const consoleErrors: unknown[][] = [];
const realError = console.error;
const realWarn = console.warn;

async function start(settings = {}): Promise<Mounted> {
  m = await mount({
    vaultPath: "/vaults/my memory",
    files: FILES,
    read: async (p) => (p === ".memvault/daemon.json" ? daemonJson : null),
    contents: () => "# Note\n\nline two\nline three\n",
    settings: { timeoutMs: 800, ...settings },
  });
  return m;
}

const STATUS = {
  notes: 6000,
  index: { chunks: 24000, embedded: 1200, pending_count: 4800 },
  memory: { exists: true, file: "MEMORY.md", lines: 40, max_lines: 200, tokens: null, max_tokens: null, over_budget: false },
  links: { unresolved: 0, ambiguous: 0, unchecked: 4800 },
  daemon: { state: "indexing", pid: 1, uptime_seconds: 30, model: "ready", last_error: null },
};

/** The search modal over people/ana.md (cursor at its start), ``query`` typed and answered. */
async function searchInAna(query: string) {
  const mm = await start();
  await until(() => mm.plugin.connection.connected, 5000, "connected");
  await mm.open("people/ana.md");
  const editor = markdownEditor(mm.editorLeaf);
  editor.setCursor({ line: 0, ch: 0 });
  const modal = mm.plugin.openSearch();
  modal.inputEl.value = query;
  modal.inputEl.dispatchEvent(new Event("input"));
  await modal.updated;
  return { mm, editor, modal };
}

beforeEach(async () => {
  resetDom();
  shownNotices.length = 0;
  fake = new FakeDaemon();
  await fake.listen();
  daemonJson = fake.daemonJson();
  fake.routes["GET /related"] = (s) => ({
    status: 200,
    json: { hits: [hit("projects/kiwi.md", ["Kiwi", "Drawings"], 7), hit("logs/2024-01-02.md")].filter((h) => !s.query.getAll("exclude").some((x) => h.path.startsWith(`${x}/`))) },
  });
  m = null;
  consoleErrors.length = 0;
  console.error = (...a: unknown[]) => void consoleErrors.push(a);
  console.warn = (...a: unknown[]) => void consoleErrors.push(a);
});

afterEach(async () => {
  m?.unload();
  await fake.close();
  console.error = realError;
  console.warn = realWarn;
  // what would land in Obsidian's console: nothing, in every state above
  assert.deepEqual(consoleErrors, []);
});

function state(mm: Mounted): string {
  return mm.related().contentEl.dataset.state ?? "";
}

describe("the related pane", () => {
  it("shows the daemon's hits for the note in the editor, with folder, heading and snippet", async () => {
    const mm = await start({ excludedFolders: ["archive"] });
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    await mm.open("people/ana.md");
    await until(() => state(mm) === "hits", 5000, "hits");
    const items = [...mm.related().contentEl.querySelectorAll(".memvault-hit")];
    assert.deepEqual(items.map((i) => (i as HTMLElement).dataset.path), ["projects/kiwi.md", "logs/2024-01-02.md"]);
    assert.equal(items[0].querySelector(".memvault-hit-heading")?.textContent, "Kiwi › Drawings");
    assert.equal(items[0].querySelector(".memvault-hit-folder")?.textContent, "projects");
    const req = fake.seen.find((s) => s.path === "/related")!;
    assert.equal(req.query.get("path"), "people/ana.md");
    assert.deepEqual(req.query.getAll("exclude"), ["archive"]);
    assert.equal(req.origin, undefined); // Node's http: no Origin for the daemon to weigh
    assert.equal(mm.statusText(), "memvault: watching");
  });

  it("asks with a path holding unicode, spaces and #, and inserts a link only when asked", async () => {
    const mm = await start();
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    await mm.open("projects/Q&A notes #2 — ünïcode.md");
    await until(() => state(mm) === "hits", 5000, "hits");
    const req = fake.seen.filter((s) => s.path === "/related").pop()!;
    assert.equal(req.query.get("path"), "projects/Q&A notes #2 — ünïcode.md");
    const editor = markdownEditor(mm.editorLeaf);
    const before = editor.getValue();
    editor.setCursor({ line: 1, ch: 0 });
    (mm.related().contentEl.querySelector(".memvault-insert") as HTMLElement).click();
    assert.equal(editor.getValue(), before.replace("\n\n", "\n[[kiwi#Drawings]]\n"));
    assert.equal(mm.adapter.writes, 0);
  });

  it("opens a hit at its line", async () => {
    const mm = await start();
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    await mm.open("people/ana.md");
    await until(() => state(mm) === "hits", 5000, "hits");
    (mm.related().contentEl.querySelector(".memvault-hit-title") as HTMLElement).click();
    await until(() => mm.app.workspace.getActiveFile()?.path === "projects/kiwi.md", 2000, "kiwi open");
    assert.deepEqual((mm.editorLeaf as unknown as { lastEState: unknown }).lastEState, { line: 6 });
    assert.equal(markdownEditor(mm.editorLeaf).getCursor().line, 4); // clamped to the note's last line
  });

  for (const file of ["attachments/spec.pdf", "boards/plan.canvas"]) {
    it(`says clearly that ${file} has no related notes, without asking the daemon`, async () => {
      const mm = await start();
      await until(() => mm.plugin.connection.connected, 5000, "connected");
      const asked = fake.seen.length;
      await mm.open(file);
      await until(() => state(mm) === "not-markdown", 2000, "not-markdown state");
      assert.match(mm.related().contentEl.textContent ?? "", /markdown notes; .* is a (PDF|CANVAS) file/);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(fake.seen.slice(asked).filter((s) => s.path === "/related").length, 0);
      assert.equal(mm.adapter.writes, 0);
    });
  }

  it("says a slow daemon is slow, and stays usable", async () => {
    fake.delayMs = 3000;
    const mm = await start({ timeoutMs: 500 });
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    const t0 = Date.now();
    await mm.open("people/ana.md");
    assert.ok(Date.now() - t0 < 100, "opening a note never waits for the daemon");
    await until(() => state(mm) === "error", 3000, "the timeout");
    assert.match(mm.related().contentEl.textContent ?? "", /did not answer within 0\.5 s/);
    assert.ok(Date.now() - t0 < 1500);
    assert.ok(mm.related().contentEl.querySelector(".memvault-retry"));
    assert.equal(mm.plugin.connection.connected, true, "a slow answer is not a dead daemon");
  });

  it("never shows an older answer over a newer one", async () => {
    const mm = await start();
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    let first = true;
    fake.routes["GET /related"] = (s) => ({ status: 200, json: { hits: [hit(`x/${s.query.get("path")}`)] } });
    fake.delayMs = 300;
    await mm.open("people/ana.md");
    first = false;
    await new Promise((r) => setTimeout(r, 150)); // past the debounce: a second request
    fake.delayMs = 0;
    await mm.open("projects/kiwi.md");
    await until(() => state(mm) === "hits", 3000, "hits");
    await new Promise((r) => setTimeout(r, 400)); // the slow first answer has arrived by now
    assert.equal(first, false);
    assert.equal(mm.related().contentEl.dataset.path, "projects/kiwi.md");
    assert.equal((mm.related().contentEl.querySelector(".memvault-hit") as HTMLElement).dataset.path, "x/projects/kiwi.md");
  });
});

describe("finding the daemon", () => {
  it("without daemon.json: a not-running state, one notice with the commands, nothing thrown", async () => {
    daemonJson = null;
    const mm = await start();
    await until(() => mm.statusText() === "memvault: not running", 3000, "not running");
    await mm.open("people/ana.md");
    await until(() => state(mm) === "error", 2000, "error state");
    const text = mm.related().contentEl.textContent ?? "";
    assert.match(text, /memvault up '\/vaults\/my memory'/);
    assert.match(text, /memvault daemon start --vault '\/vaults\/my memory'/);
    assert.equal(shownNotices.length, 1);
    assert.match(shownNotices[0], /memvault up '\/vaults\/my memory'/);
    // a daemon that starts later is found without a click
    daemonJson = fake.daemonJson();
    await until(() => mm.plugin.connection.connected, 5000, "found again");
    await until(() => state(mm) === "hits", 3000, "the pane refreshed");
  });

  it("a stale daemon.json whose port another program now owns: not running, said why", async () => {
    fake.foreign = true;
    const mm = await start();
    await until(() => mm.plugin.connection.state.kind === "foreign", 3000, "foreign");
    assert.equal(mm.statusText(), "memvault: not running");
    const s = mm.plugin.connection.state;
    assert.match("detail" in s ? s.detail : "", /answers, but not as a memvault daemon .* stale/);
    await mm.open("people/ana.md");
    await until(() => state(mm) === "error", 2000, "error");
    assert.equal(fake.seen.filter((x) => x.path !== "/health").length, 0, "the token never went to it");
  });

  it("a refused token: re-reads daemon.json (a restart), else says the token is refused", async () => {
    const right = fake.token;
    fake.token = "the-daemon-restarted";
    const mm = await start();
    await until(() => mm.plugin.connection.state.kind === "unauthorized", 3000, "unauthorized");
    assert.equal(mm.statusText(), "memvault: token refused");
    daemonJson = fake.daemonJson(); // the new daemon's file, with its new token
    await until(() => mm.plugin.connection.connected, 5000, "reconnected with the new token");
    assert.notEqual(right, fake.token);
  });

  it("a settings override URL and token win over daemon.json", async () => {
    daemonJson = null;
    const mm = await start({ daemonUrl: `http://127.0.0.1:${fake.port}`, daemonToken: fake.token });
    await until(() => mm.plugin.connection.connected, 5000, "connected via settings");
  });

  it("status events drive the status bar", async () => {
    const mm = await start();
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    fake.send("status", { state: "indexing", progress: { done: 20, total: 10000, embedded: 40 }, queue: 0, lag_seconds: 1, last_error: null, model: "ready", observer_alive: true, failed_batches: 0 });
    await until(() => mm.statusText() === "memvault: indexing 20/10,000", 2000, "indexing");
    fake.send("status", { state: "watching", progress: null, queue: 2, lag_seconds: 5.2, last_error: null, model: "ready", observer_alive: true, failed_batches: 0 });
    await until(() => mm.statusText() === "memvault: lag 5 s", 2000, "lag");
    fake.send("status", { state: "watching", progress: null, queue: 0, lag_seconds: null, last_error: "sync failed: disk full", model: "ready", observer_alive: true, failed_batches: 3 });
    await until(() => mm.statusText() === "memvault: error", 2000, "error");
  });
});

describe("the search modal", () => {
  it("sends filters, and Mod+Enter inserts a link where Enter opens", async () => {
    fake.routes["POST /search"] = (s) => {
      const b = JSON.parse(s.body);
      return { status: 200, json: { hits: [hit("projects/kiwi.md", ["Kiwi"], 3), hit(`people/${b.query}.md`)] } };
    };
    const { mm, editor, modal } = await searchInAna("schema folder:decisions tag:#db since:2024-01-01");
    const body = JSON.parse(fake.seen.filter((s) => s.path === "/search").pop()!.body);
    assert.deepEqual(body, { query: "schema", k: 10, folder: "decisions", tags: ["db"], since: "2024-01-01" });
    assert.equal(modal.resultContainerEl.querySelectorAll(".suggestion-item").length, 2);
    modal.modalEl.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    assert.equal(editor.getValue().split("\n")[0], "[[kiwi#Kiwi]]# Note");
    assert.equal(modal.isOpen, false);

    const again = mm.plugin.openSearch();
    again.inputEl.value = "kiwi";
    again.inputEl.dispatchEvent(new Event("input"));
    await again.updated;
    again.modalEl.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    await until(() => mm.app.workspace.getActiveFile()?.path === "projects/kiwi.md", 2000, "opened");
    assert.equal(mm.adapter.writes, 0);
  });

  it("inserts a link to a heading in Chinese with a # that Obsidian reads back to it", async () => {
    fake.routes["POST /search"] = () => ({ status: 200, json: { hits: [hit("projects/kiwi.md", ["项目计划", "风险 & 问题 #1"], 9)] } });
    const { mm, editor, modal } = await searchInAna("风险");
    modal.modalEl.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    // not [[kiwi#风险 & 问题 #1]]: the heading "1" under "风险 & 问题", which no note has
    assert.equal(editor.getValue().split("\n")[0], "[[kiwi#风险 & 问题 1]]# Note");
    assert.equal(mm.adapter.writes, 0);
  });

  it("the status view waits for a daemon slow to count a vault it indexes, and never says to start it", async () => {
    // a first index of 6,000 notes: /status took 5-20 s, past the 5 s of every request
    fake.routes["GET /status"] = () => ({ status: 200, json: STATUS });
    fake.delayMs = 1500;
    const mm = await start({ timeoutMs: 500 });
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    const modal = mm.plugin.openStatus();
    await until(() => modal.contentEl.querySelector(".memvault-status-table") !== null, 8000, "the table");
    assert.match(modal.contentEl.textContent ?? "", /Notes6,000/);
    // 4,800 notes not indexed yet: their links not read, said beside the count
    assert.match(modal.contentEl.textContent ?? "", /0 \(0 ambiguous\); 4,800 changed notes not read yet \(memvault links check reads all\)/);
    fake.delayMs = 0;
    fake.routes["GET /status"] = () => ({ status: 500, json: { error: { type: "InternalError", message: "a bug" } } });
    await modal.load();
    const text = modal.contentEl.textContent ?? "";
    assert.match(text, /The daemon runs, but did not give its status: a bug/);
    assert.doesNotMatch(text, /Start the daemon|memvault up/);
  });

  it("a newer query's answer is the one shown, however the answers arrive", async () => {
    let calls = 0;
    fake.routes["POST /search"] = (s) => ({ status: 200, json: { hits: [hit(`q/${JSON.parse(s.body).query}-${++calls}.md`)] } });
    const mm = await start();
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    const modal = new SearchModal(mm.app as never, mm.plugin);
    const [a, b] = [modal.getSuggestions("first"), modal.getSuggestions("second")];
    assert.deepEqual((await a).map((h) => h.path), (await b).map((h) => h.path));
    assert.match((await b)[0].path, /^q\/second/);
  });

  it("tells a bad filter or a missing daemon in its empty state", async () => {
    const mm = await start();
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    const modal = new SearchModal(mm.app as never, mm.plugin);
    assert.deepEqual(await modal.getSuggestions("x since:tomorrow"), []);
    assert.match(modal.emptyStateText, /since: wants a day/);
    await fake.close();
    await until(() => !mm.plugin.connection.connected, 5000, "gone");
    assert.deepEqual(await modal.getSuggestions("kiwi"), []);
    assert.match(modal.emptyStateText, /not available .* Start it with: memvault up/);
    fake = new FakeDaemon();
    await fake.listen(); // for afterEach
  });
});

describe("ask your memory", () => {
  it("copies the selection's cited context within the budget", async () => {
    fake.routes["POST /context"] = (s) => {
      const b = JSON.parse(s.body);
      return {
        status: 200,
        json: { query: b.query, budget: b.budget, tokens: 42, text: `[[projects/kiwi#Kiwi]] L3-5\nctx for ${b.query}`, sources: [{ path: "projects/kiwi.md", heading: [], line_start: 3, line_end: 5, tokens: 42, why: "hit" }] },
      };
    };
    const mm = await start({ contextBudget: 777 });
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    await mm.open("people/ana.md");
    const editor = markdownEditor(mm.editorLeaf);
    editor.setSelection({ line: 2, ch: 0 }, { line: 2, ch: 8 });
    mm.plugin.ask();
    await until(() => mm.copied.length === 1, 3000, "copied");
    assert.equal(mm.copied[0], "[[projects/kiwi#Kiwi]] L3-5\nctx for line two");
    assert.deepEqual(JSON.parse(fake.seen.find((s) => s.path === "/context")!.body), { query: "line two", budget: 777 });
    assert.match(shownNotices.at(-1)!, /copied a context of 42\/777 tokens from 1 note/);
  });
});

describe("dragging and settings", () => {
  it("dragging a hit carries its link as text (dropped into a note by the editor)", async () => {
    const mm = await start();
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    await mm.open("people/ana.md");
    await until(() => state(mm) === "hits", 5000, "hits");
    const item = mm.related().contentEl.querySelector(".memvault-hit") as HTMLElement;
    assert.equal(item.getAttribute("draggable"), "true");
    const dt = new DataTransfer();
    const evt = new Event("dragstart", { bubbles: true });
    Object.defineProperty(evt, "dataTransfer", { value: dt });
    item.dispatchEvent(evt);
    assert.equal(dt.getData("text/plain"), "[[kiwi#Drawings]]");
    assert.equal(mm.adapter.writes, 0);
  });

  it("the settings tab saves what is typed, and a daemon URL only for this machine", async () => {
    const mm = await start();
    await until(() => mm.plugin.connection.connected, 5000, "connected");
    const plugin = mm.plugin as unknown as { settingTabs: { containerEl: HTMLElement; display(): void }[]; data: unknown; saved: number };
    const tab = plugin.settingTabs[0];
    tab.display();
    const inputs = [...tab.containerEl.querySelectorAll("input, textarea")] as HTMLInputElement[];
    const type = (el: HTMLInputElement, v: string) => {
      el.value = v;
      el.dispatchEvent(new Event("input"));
    };
    type(inputs[0], "3500"); // context budget
    type(inputs[1], "abc"); // number of results: not a number, ignored
    type(inputs[2] as HTMLInputElement, "logs\narchive/2023"); // excluded folders
    await until(() => plugin.saved >= 2, 2000, "saved");
    assert.deepEqual(
      { b: mm.plugin.settings.contextBudget, k: mm.plugin.settings.resultCount, x: mm.plugin.settings.excludedFolders },
      { b: 3500, k: 10, x: ["logs", "archive/2023"] },
    );
    assert.equal((plugin.data as { contextBudget: number }).contextBudget, 3500);
    type(inputs[4], "http://example.com:80");
    assert.match(tab.containerEl.querySelector(".memvault-problem")?.textContent ?? "", /on this machine/);
    assert.equal(mm.plugin.settings.daemonUrl, "");
  });
});
