/**
 * The plugin against a real `memvault daemon run` on a temp vault (hash embedder): its
 * client and views, through Node's http as in desktop Obsidian. One session, in order:
 * related notes, search, a copied context, status over SSE as a note is saved, the daemon
 * stopped (not running), restarted on a new port with a new token (found again), killed
 * with its port taken by another program, and a refused token.
 */
import { resetDom } from "../support/dom";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import { join, relative } from "node:path";
import { after, before, describe, it } from "node:test";
import { shownNotices } from "obsidian";
import { headingTrail } from "../../src/display";
import type { DaemonState, Hit } from "../../src/types";
import { cleanup, Daemon, get, makeVault, note, tempDir, until as wait } from "../support/daemon";
import { type Mounted, markdownEditor, mount, until } from "../support/harness";

const UNICODE = "projects/Q&A notes #2 — ünïcode.md";
const NOTES: Record<string, string> = {
  "people/ana-lopez.md": note(
    "Ana Lopez",
    "## Work\n\nAna designs the kiwi illustrations and the fern patterns for the garden app.\n\n## Contact\n\nAna prefers email.",
    { summary: "our designer", tags: "[design]" },
  ),
  "projects/garden-app.md": note(
    "Garden app",
    "## Illustrations\n\nKiwi illustrations and fern patterns drawn by Ana for the garden app.\n\n## Database\n\nPostgreSQL schema with one table per plant.",
    { status: "active", tags: "[design, db]" },
  ),
  "decisions/2024-03-12-use-postgresql.md": note(
    "Use PostgreSQL",
    "## Context\n\nThe garden app needs a database schema for plants.\n\n## Decision\n\nWe decided to use PostgreSQL for the database schema.",
    { status: "accepted", date: "2024-03-12", tags: "[db]" },
  ),
  [UNICODE]: note("Q&A notes #2", "## Fragen\n\nKiwi and fern questions from Ana about the garden app illustrations."),
  "logs/2024-03-13.md": note("2024-03-13", "- Drew more kiwi illustrations with Ana."),
};

let dir: string;
let root: string;
let daemon: Daemon;
let m: Mounted;
const states: DaemonState[] = [];

function scan(base: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (name.startsWith(".")) continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(base, p).split("\\").join("/"));
    }
  };
  walk(base);
  return out;
}

function api<T>(path: string, body?: unknown): Promise<T> {
  const info = daemon.info!;
  return new Promise((res, rej) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const r = http.request(
      `http://127.0.0.1:${info.port}${path}`,
      {
        method: data ? "POST" : "GET",
        headers: { Authorization: `Bearer ${info.token}`, "Content-Type": "application/json" },
      },
      (resp) => {
        let t = "";
        resp.setEncoding("utf8");
        resp.on("data", (c) => (t += c));
        resp.on("end", () => res(JSON.parse(t)));
      },
    );
    r.on("error", rej);
    r.end(data);
  });
}

const pane = () => m.related().contentEl;
const paneState = () => pane().dataset.state;
const panePaths = () => [...pane().querySelectorAll(".memvault-hit")].map((e) => (e as HTMLElement).dataset.path);

before(async () => {
  resetDom();
  dir = tempDir();
  root = makeVault(dir, NOTES);
  writeFileSync(join(root, "projects", "spec.pdf"), "%PDF-1.4 not really\n");
  writeFileSync(join(root, "projects", "board.canvas"), '{"nodes":[],"edges":[]}');
  daemon = new Daemon(root);
  await daemon.start();
  await daemon.settled();
  m = await mount({
    vaultPath: root,
    files: scan(root),
    read: async (p) => {
      try {
        return readFileSync(join(root, p), "utf8");
      } catch {
        return null;
      }
    },
    contents: (p) => readFileSync(join(root, p), "utf8"),
    settings: { timeoutMs: 10000, resultCount: 5 },
  });
  m.plugin.connection.onDaemonState((d) => void states.push(d));
  await until(() => m.plugin.connection.connected, 20000, "the plugin to connect");
});

after(async () => {
  m?.unload();
  await daemon?.stop();
  cleanup(dir);
});

describe("against a real daemon", () => {
  it("shows related notes with their heading, as /related gives them", async () => {
    await m.open("people/ana-lopez.md");
    await until(() => paneState() === "hits", 10000, "related hits");
    const answer = await api<{ hits: Hit[] }>(`/related?path=${encodeURIComponent("people/ana-lopez.md")}&k=5`);
    assert.ok(answer.hits.length >= 3);
    assert.deepEqual(panePaths(), answer.hits.map((h) => h.path));
    const first = pane().querySelector(".memvault-hit")!;
    assert.equal(first.querySelector(".memvault-hit-heading")?.textContent ?? "", headingTrail(answer.hits[0]));
    assert.ok(answer.hits.some((h) => headingTrail(h) !== ""), "some hit names a section");
    assert.equal(m.statusText(), "memvault: watching");
  });

  it("finds related notes for a path with unicode, spaces and #", async () => {
    await m.open(UNICODE);
    await until(() => paneState() === "hits" && pane().dataset.path === UNICODE, 10000, "hits for the unicode note");
    assert.ok(panePaths().length > 0 && !panePaths().includes(UNICODE));
  });

  it("leaves excluded folders out of the pane", async () => {
    m.plugin.settings.excludedFolders = ["logs", "decisions"];
    await m.open("people/ana-lopez.md");
    const everything = await api<{ hits: Hit[] }>(`/related?path=people%2Fana-lopez.md&k=5`);
    assert.ok(everything.hits.some((h) => h.path.startsWith("logs/") || h.path.startsWith("decisions/")));
    const answer = await api<{ hits: Hit[] }>(`/related?path=people%2Fana-lopez.md&k=5&exclude=logs&exclude=decisions`);
    const want = answer.hits.map((h) => h.path);
    assert.ok(want.length > 0 && want.every((p) => !p.startsWith("logs/") && !p.startsWith("decisions/")));
    m.related().refresh();
    await until(() => paneState() === "hits" && JSON.stringify(panePaths()) === JSON.stringify(want), 10000, "excluded");
    m.plugin.settings.excludedFolders = [];
  });

  it("opens a PDF or a canvas to a clear state, without a request or a write", async () => {
    for (const file of ["projects/spec.pdf", "projects/board.canvas"]) {
      await m.open(file);
      await until(() => paneState() === "not-markdown", 3000, `not-markdown for ${file}`);
    }
    assert.equal(m.adapter.writes, 0);
  });

  it("searches with a filter, and the modal shows what /search answers", async () => {
    const modal = m.plugin.openSearch();
    modal.inputEl.value = "postgresql database schema folder:decisions";
    modal.inputEl.dispatchEvent(new Event("input"));
    await modal.updated;
    const answer = await api<{ hits: Hit[] }>("/search", { query: "postgresql database schema", k: 5, folder: "decisions" });
    const shown = [...modal.resultContainerEl.querySelectorAll(".memvault-hit-title")].map((e) => e.textContent);
    assert.ok(answer.hits.length > 0);
    assert.deepEqual(shown, answer.hits.map((h) => h.title));
    modal.modalEl.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    await until(() => m.app.workspace.getActiveFile()?.path === answer.hits[0].path, 3000, "opened at the hit");
    const line = (m.editorLeaf as unknown as { lastEState: { line: number } }).lastEState.line;
    assert.equal(line, answer.hits[0].line_start - 1);
  });

  it("copies a cited context of the selection, within the budget", async () => {
    m.plugin.settings.contextBudget = 300;
    await m.open("projects/garden-app.md");
    const editor = markdownEditor(m.editorLeaf);
    const lines = editor.getValue().split("\n");
    const at = lines.findIndex((l) => l.startsWith("PostgreSQL schema"));
    editor.setSelection({ line: at, ch: 0 }, { line: at, ch: lines[at].length });
    m.plugin.ask();
    await until(() => m.copied.length === 1, 20000, "the context on the clipboard");
    const expected = await api<{ text: string; tokens: number }>("/context", { query: lines[at], budget: 300 });
    assert.equal(m.copied[0], expected.text);
    assert.ok(expected.tokens <= 300);
    assert.match(m.copied[0], /\[\[decisions\/2024-03-12-use-postgresql/);
    assert.match(shownNotices.at(-1)!, new RegExp(`copied a context of ${expected.tokens}/300 tokens`));
  });

  it("gets status over SSE as a saved note is indexed, then the pane refreshes", async () => {
    await m.open("people/ana-lopez.md");
    await until(() => paneState() === "hits", 10000, "hits");
    const seen = states.length;
    writeFileSync(
      join(root, "projects", "fern-atlas.md"),
      note("Fern atlas", "## Ferns\n\nAna draws fern patterns and kiwi illustrations for the atlas."),
    );
    m.app.vault.setFiles(scan(root)); // Obsidian learns of the file as it saves it
    await wait("the pane to show the new note", () => panePaths().includes("projects/fern-atlas.md"), 20000);
    const during = states.slice(seen);
    assert.ok(during.some((d) => d.lag_seconds !== null), "a status while the change was pending");
    assert.ok(during.at(-1)!.lag_seconds === null && during.at(-1)!.queue === 0, "then idle again");
    assert.equal(m.statusText(), "memvault: watching");
  });

  it("says not running when the daemon stops, and finds it again when it restarts", async () => {
    const notices = shownNotices.length;
    const oldPort = daemon.info!.port;
    await daemon.stop();
    await until(() => m.statusText() === "memvault: not running", 5000, "not running");
    await until(() => paneState() === "error", 5000, "the pane's not-running state");
    assert.match(pane().textContent ?? "", /memvault up/);
    assert.equal(shownNotices.length, notices + 1);
    assert.match(shownNotices.at(-1)!, /Start it with:\nmemvault up .*\nor: memvault daemon start --vault/);

    daemon = new Daemon(root);
    const info = await daemon.start();
    assert.notEqual(info.port, oldPort === info.port ? -1 : oldPort);
    await until(() => m.plugin.connection.connected, 15000, "reconnected");
    await until(() => paneState() === "hits", 15000, "the pane back");
    await daemon.settled();
    await until(() => m.statusText() === "memvault: watching", 10000, "watching");
    assert.equal(shownNotices.length, notices + 1, "one notice per outage");
  });

  it("a daemon killed with its port then taken by another program: not running, said why", async () => {
    const info = daemon.info!;
    const proc = daemon.proc!;
    const gone = new Promise<void>((r) => proc.once("exit", () => r()));
    proc.kill("SIGKILL"); // daemon.json stays behind, stale
    // its port is free once the process is gone, not when the plugin first sees a
    // connection dropped: under load the listen below came between the two (EADDRINUSE)
    await gone;
    await until(() => !m.plugin.connection.connected, 10000, "disconnected");
    const other = http.createServer((_q, r) => r.end("<html>another program</html>"));
    await new Promise<void>((r) => other.listen(info.port, "127.0.0.1", r));
    try {
      m.plugin.connection.reconnect();
      await until(() => m.plugin.connection.state.kind === "foreign", 10000, "foreign");
      assert.equal(m.statusText(), "memvault: not running");
      await m.open("projects/garden-app.md");
      await until(() => paneState() === "error", 5000, "pane error");
    } finally {
      other.closeAllConnections();
      await new Promise((r) => other.close(r));
    }
    daemon = new Daemon(root);
    await daemon.start();
    await until(() => m.plugin.connection.connected, 15000, "reconnected after the kill");
  });

  it("a wrong token (settings override): the daemon's 401 shows as a refused token", async () => {
    const info = daemon.info!;
    const r = await get(`http://127.0.0.1:${info.port}/status`, "wrong");
    assert.equal(r.status, 401);
    m.plugin.settings.daemonUrl = `http://127.0.0.1:${info.port}`;
    m.plugin.settings.daemonToken = "wrong";
    m.plugin.connection.reconnect();
    await until(() => m.plugin.connection.state.kind === "unauthorized", 5000, "unauthorized");
    assert.equal(m.statusText(), "memvault: token refused");
    m.plugin.settings.daemonUrl = "";
    m.plugin.settings.daemonToken = "";
    m.plugin.connection.reconnect();
    await until(() => m.plugin.connection.connected, 5000, "back on daemon.json");
    assert.equal(m.adapter.writes, 0, "the plugin never wrote to the vault");
  });
});
