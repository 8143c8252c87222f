/* memvault Obsidian plugin — built from obsidian-plugin/src by scripts/build.mjs; do not edit */
"use strict";
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

// src/main.ts
var main_exports = {};
__export(main_exports, {
  LEAF_DEBOUNCE_MS: () => LEAF_DEBOUNCE_MS,
  default: () => MemvaultPlugin,
  pickTransport: () => pickTransport
});
module.exports = __toCommonJS(main_exports);
var import_obsidian7 = require("obsidian");

// src/ask.ts
var import_obsidian = require("obsidian");

// src/api.ts
function related(c, path, k, exclude, signal) {
  return c.request("GET", "/related", { query: { path, k, exclude }, signal });
}
function search(c, query, k, filters, signal) {
  return c.request("POST", "/search", { body: { query, k, ...filters }, signal });
}
function context(c, query, budget, timeoutMs) {
  return c.request("POST", "/context", { body: { query, budget }, timeoutMs });
}
var STATUS_WAIT_MS = 3e4;
function status(c, timeoutMs) {
  return c.request("GET", "/status", { timeoutMs: Math.max(timeoutMs, STATUS_WAIT_MS) });
}

// src/sse.ts
var SseParser = class {
  constructor() {
    this.buffer = "";
    this.event = "";
    this.data = [];
  }
  /** Feed a piece of the stream; get the events it completed, and whether any line
   *  (a comment such as `: keep-alive` included) arrived. */
  push(text) {
    this.buffer += text;
    const events = [];
    const comments = [];
    for (; ; ) {
      const nl = this.buffer.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      const width = this.buffer.startsWith("\r\n", nl) ? 2 : 1;
      if (this.buffer[nl] === "\r" && width === 1 && nl === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + width);
      if (line === "") {
        if (this.data.length || this.event) {
          events.push({ event: this.event || "message", data: this.data.join("\n") });
        }
        this.event = "";
        this.data = [];
      } else if (line.startsWith(":")) {
        comments.push(line.slice(1).trim());
      } else {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") this.event = value;
        else if (field === "data") this.data.push(value);
      }
    }
    return { events, comments };
  }
};

// src/connection.ts
var DAEMON_JSON = ".memvault/daemon.json";
var DaemonError = class extends Error {
  constructor(kind, message, status2, type) {
    super(message);
    this.kind = kind;
    this.status = status2;
    this.type = type;
    this.name = "DaemonError";
  }
};
function parseDaemonJson(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof data !== "object" || data === null) return null;
  const d = data;
  const port = d.port;
  if (typeof port !== "number" || !Number.isInteger(port) || port <= 0 || port > 65535) return null;
  if (typeof d.token !== "string" || !d.token) return null;
  let host = typeof d.host === "string" && d.host ? d.host : "127.0.0.1";
  if (host.includes(":")) host = `[${host}]`;
  return {
    url: `http://${host}:${port}`,
    token: d.token,
    source: "daemon.json",
    pid: typeof d.pid === "number" ? d.pid : void 0
  };
}
function queryString(query) {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === void 0) continue;
    if (Array.isArray(value)) value.forEach((v) => params.append(key, v));
    else params.append(key, String(value));
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}
var Connection = class {
  constructor(opts) {
    this.opts = opts;
    this.state = { kind: "starting" };
    this.daemon = null;
    this.endpoint = null;
    this.stream = null;
    this.pollTimer = null;
    this.heartbeat = null;
    this.probing = null;
    this.again = false;
    this.stopped = true;
    this.generation = 0;
    this.stateListeners = /* @__PURE__ */ new Set();
    this.daemonListeners = /* @__PURE__ */ new Set();
    this.syncListeners = /* @__PURE__ */ new Set();
    this.pollMs = opts.pollMs ?? 2e3;
    this.heartbeatMs = opts.heartbeatMs ?? 45e3;
  }
  onState(fn) {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }
  onDaemonState(fn) {
    this.daemonListeners.add(fn);
    return () => this.daemonListeners.delete(fn);
  }
  onSync(fn) {
    this.syncListeners.add(fn);
    return () => this.syncListeners.delete(fn);
  }
  get connected() {
    return this.state.kind === "connected";
  }
  start() {
    if (!this.stopped) return;
    this.stopped = false;
    void this.probe();
  }
  stop() {
    this.stopped = true;
    this.generation++;
    this.closeStream();
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = null;
  }
  /** Look for the daemon again now (settings changed, or a request found it gone). */
  reconnect() {
    if (this.stopped) return;
    this.closeStream();
    void this.probe();
  }
  // -- finding the daemon ---------------------------------------------------------------
  async readEndpoint() {
    const o = this.opts.override();
    if (o && o.url.trim()) {
      return { url: o.url.trim().replace(/\/+$/, ""), token: o.token.trim(), source: "settings" };
    }
    try {
      if (!await this.opts.files.exists(DAEMON_JSON)) return null;
      const ep = parseDaemonJson(await this.opts.files.read(DAEMON_JSON));
      return ep ?? `${DAEMON_JSON} is not what a memvault daemon writes`;
    } catch (err) {
      return null;
    }
  }
  /** One attempt to (re)connect; concurrent calls share it, and a call during it
   *  schedules exactly one more. */
  probe() {
    if (this.probing) {
      this.again = true;
      return this.probing;
    }
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = null;
    this.probing = this.attempt().finally(() => {
      this.probing = null;
      if (this.again && !this.stopped) {
        this.again = false;
        void this.probe();
      }
    });
    return this.probing;
  }
  async attempt() {
    const gen = ++this.generation;
    const found = await this.readEndpoint();
    if (gen !== this.generation || this.stopped) return;
    if (found === null) {
      return this.fail({
        kind: "not-running",
        detail: "the daemon is not running (no .memvault/daemon.json)"
      });
    }
    if (typeof found === "string") return this.fail({ kind: "not-running", detail: found });
    let health;
    try {
      health = await this.opts.transport.request({
        url: `${found.url}/health`,
        method: "GET",
        headers: {},
        timeoutMs: this.opts.timeoutMs()
      });
    } catch (err) {
      if (gen !== this.generation || this.stopped) return;
      const e = err;
      if (e.kind === "timeout") {
        return this.fail({ kind: "unreachable", detail: `${found.url} did not answer within ${this.opts.timeoutMs()} ms` });
      }
      const where = found.source === "daemon.json" ? "the address in .memvault/daemon.json" : "the address in the settings";
      return this.fail({ kind: "not-running", detail: `the daemon is not running (nothing answers at ${found.url}, ${where})` });
    }
    if (gen !== this.generation || this.stopped) return;
    if (!isMemvaultHealth(health.status, health.text)) {
      return this.fail({
        kind: "foreign",
        detail: `${found.url} answers, but not as a memvault daemon (HTTP ${health.status}); another program owns that port and ${found.source} is stale`
      });
    }
    this.endpoint = found;
    this.openStream(found, gen);
  }
  fail(state) {
    this.endpoint = null;
    this.daemon = null;
    this.setState(state);
    if (!this.stopped) {
      if (this.pollTimer) clearTimeout(this.pollTimer);
      this.pollTimer = setTimeout(() => void this.probe(), this.pollMs);
    }
  }
  setState(state) {
    const before = this.state;
    this.state = state;
    const same = before.kind === state.kind && ("detail" in before ? before.detail : "") === ("detail" in state ? state.detail : "") && ("endpoint" in before ? before.endpoint.url : "") === ("endpoint" in state ? state.endpoint.url : "");
    if (!same) this.stateListeners.forEach((fn) => safely(fn, state));
  }
  // -- /events -------------------------------------------------------------------------------
  openStream(ep, gen) {
    this.closeStream();
    const parser = new SseParser();
    let subscribed = false;
    const handle = this.opts.transport.stream(
      {
        url: `${ep.url}/events`,
        headers: { Authorization: `Bearer ${ep.token}`, Accept: "text/event-stream" },
        connectTimeoutMs: this.opts.timeoutMs()
      },
      {
        onOpen: (status2, contentType) => {
          if (gen !== this.generation) return;
          if (status2 === 401) {
            handle.close();
            this.stream = null;
            return this.fail({
              kind: "unauthorized",
              detail: ep.source === "settings" ? "the daemon refused the token set in the plugin's settings (HTTP 401)" : "the daemon refused the token in .memvault/daemon.json (HTTP 401)"
            });
          }
          if (status2 !== 200 || !contentType.startsWith("text/event-stream")) {
            handle.close();
            this.stream = null;
            return this.fail({
              kind: "foreign",
              detail: `${ep.url}/events answered HTTP ${status2} (${contentType || "no content type"}), not an event stream`
            });
          }
        },
        onText: (text) => {
          if (gen !== this.generation) return;
          this.beat(gen);
          const { events, comments } = parser.push(text);
          if (!subscribed && comments.includes("connected")) {
            subscribed = true;
            this.setState({ kind: "connected", endpoint: ep });
          }
          for (const ev of events) {
            let data;
            try {
              data = JSON.parse(ev.data);
            } catch {
              continue;
            }
            if (ev.event === "status") {
              this.daemon = data;
              this.daemonListeners.forEach((fn) => safely(fn, data));
            } else if (ev.event === "sync") {
              this.syncListeners.forEach((fn) => safely(fn, data));
            }
          }
        },
        onEnd: (error) => {
          if (gen !== this.generation || this.stopped) return;
          this.stream = null;
          this.clearBeat();
          if (error?.kind === "timeout") {
            return this.fail({ kind: "unreachable", detail: `${ep.url}/events: ${error.message}` });
          }
          void this.probe();
        }
      }
    );
    this.stream = handle;
    this.beat(gen);
  }
  beat(gen) {
    this.clearBeat();
    this.heartbeat = setTimeout(() => {
      if (gen !== this.generation || this.stopped) return;
      this.closeStream();
      void this.probe();
    }, this.heartbeatMs);
  }
  clearBeat() {
    if (this.heartbeat) clearTimeout(this.heartbeat);
    this.heartbeat = null;
  }
  closeStream() {
    this.clearBeat();
    const s = this.stream;
    this.stream = null;
    s?.close();
  }
  // -- requests ----------------------------------------------------------------------------------
  /** A JSON request to the daemon. Never hangs (timeout), never throws anything but
   *  `DaemonError`. A refused connection or a 401 sends the connection looking again. */
  async request(method, path, opts = {}) {
    const ep = this.endpoint;
    if (!ep || this.state.kind !== "connected") {
      const s = this.state;
      const detail = "detail" in s ? s.detail : "connecting to the daemon";
      const kind2 = s.kind === "unauthorized" || s.kind === "foreign" ? s.kind : "not-running";
      throw new DaemonError(kind2, detail);
    }
    const timeoutMs = opts.timeoutMs ?? this.opts.timeoutMs();
    let res;
    try {
      res = await this.opts.transport.request({
        url: ep.url + path + queryString(opts.query),
        method,
        headers: { Authorization: `Bearer ${ep.token}`, Accept: "application/json" },
        body: opts.body === void 0 ? void 0 : JSON.stringify(opts.body),
        timeoutMs,
        signal: opts.signal
      });
    } catch (err2) {
      const e = err2;
      if (e.kind === "refused") {
        this.reconnect();
        throw new DaemonError("not-running", "the daemon is not running (connection refused)");
      }
      if (e.kind === "timeout") {
        throw new DaemonError("timeout", `the daemon did not answer within ${(timeoutMs / 1e3).toFixed(1)} s`);
      }
      if (e.kind === "aborted") throw new DaemonError("aborted", "aborted");
      this.reconnect();
      throw new DaemonError("network", `cannot reach the daemon: ${e.message}`);
    }
    let data = void 0;
    try {
      data = res.text ? JSON.parse(res.text) : void 0;
    } catch {
      data = void 0;
    }
    if (res.status >= 200 && res.status < 300 && data !== void 0) return data;
    const err = data?.error;
    if (res.status === 401) {
      this.reconnect();
      throw new DaemonError("unauthorized", "the daemon refused the token (HTTP 401)", 401);
    }
    if (!err || typeof err.message !== "string") {
      this.reconnect();
      throw new DaemonError(
        "foreign",
        `${ep.url} answered HTTP ${res.status} without a memvault error: another program may own that port`,
        res.status
      );
    }
    const kind = res.status === 404 ? "not-found" : res.status >= 500 ? "server" : "refused-request";
    throw new DaemonError(kind, err.message, res.status, err.type);
  }
};
function isMemvaultHealth(status2, text) {
  if (status2 !== 200) return false;
  try {
    const d = JSON.parse(text);
    return d.ok === true && typeof d.version === "string";
  } catch {
    return false;
  }
}
function safely(fn, value) {
  try {
    fn(value);
  } catch (err) {
    console.error("memvault: a listener failed", err);
  }
}

// src/ask.ts
async function askMemory(host, question) {
  const q = question.trim();
  if (!q) {
    new import_obsidian.Notice("memvault: nothing to ask \u2014 select some text or type a question");
    return null;
  }
  const budget = host.settings.contextBudget;
  let ctx;
  try {
    ctx = await context(host.connection, q, budget, Math.max(host.settings.timeoutMs, 15e3));
  } catch (err) {
    const e = err instanceof DaemonError ? err : new DaemonError("server", String(err));
    const start = e.kind === "not-running" || e.kind === "foreign" || e.kind === "unauthorized" ? ` Start the daemon: ${host.startCommands()[0]}` : "";
    new import_obsidian.Notice(`memvault: could not build a context \u2014 ${e.message}.${start}`, 1e4);
    return null;
  }
  try {
    await host.copy(ctx.text);
  } catch (err) {
    new import_obsidian.Notice(`memvault: the clipboard refused the context (${String(err)})`, 8e3);
    return null;
  }
  const notes = new Set(ctx.sources.filter((s) => s.why !== "index").map((s) => s.path)).size;
  new import_obsidian.Notice(
    `memvault: copied a context of ${ctx.tokens}/${ctx.budget} tokens from ${notes} note${notes === 1 ? "" : "s"} \u2014 paste it into any AI chat`
  );
  return ctx;
}
var AskModal = class extends import_obsidian.Modal {
  constructor(app, host, done = () => {
  }) {
    super(app);
    this.host = host;
    this.done = done;
    this.value = "";
  }
  onOpen() {
    this.titleEl.setText("Ask your memory");
    this.modalEl.addClass("memvault-ask");
    this.contentEl.createDiv({
      cls: "memvault-muted",
      text: `A cited context of up to ${this.host.settings.contextBudget} tokens goes to the clipboard.`
    });
    const submit = () => {
      const q = this.value;
      this.close();
      void askMemory(this.host, q).then(this.done);
    };
    new import_obsidian.Setting(this.contentEl).setName("Question").addText((text) => {
      text.setPlaceholder("What did we decide about the database schema?");
      text.onChange((v) => this.value = v);
      text.inputEl.addClass("memvault-ask-input");
      text.inputEl.addEventListener("keydown", (evt) => {
        if (evt.key === "Enter" && !evt.isComposing) {
          evt.preventDefault();
          submit();
        }
      });
      window.setTimeout(() => text.inputEl.focus(), 0);
    });
    new import_obsidian.Setting(this.contentEl).addButton((b) => b.setButtonText("Copy context").setCta().onClick(submit));
  }
  onClose() {
    this.contentEl.empty();
  }
};

// src/health.ts
var LAG_SECONDS = 2;
function describeHealth(conn, d) {
  switch (conn.kind) {
    case "starting":
      return { kind: "connecting", text: "memvault: connecting", tooltip: "Looking for the memvault daemon" };
    case "not-running":
      return { kind: "off", text: "memvault: not running", tooltip: `${conn.detail}. Click for how to start it.` };
    case "unauthorized":
      return { kind: "error", text: "memvault: token refused", tooltip: conn.detail };
    case "foreign":
      return { kind: "error", text: "memvault: not running", tooltip: conn.detail };
    case "unreachable":
      return { kind: "error", text: "memvault: no answer", tooltip: conn.detail };
    case "connected":
      break;
  }
  if (!d) return { kind: "watching", text: "memvault: connected", tooltip: "Connected to the memvault daemon" };
  const problems = [];
  if (d.failed_batches) problems.push(`${d.failed_batches} sync${d.failed_batches > 1 ? "s" : ""} failed in a row`);
  if (d.observer_alive === false) problems.push("the file watcher is down");
  if (d.model === "failed") problems.push("the embedding model failed to load");
  if (problems.length) {
    return {
      kind: "error",
      text: "memvault: error",
      tooltip: `${problems.join("; ")}${d.last_error ? `
Last error: ${d.last_error}` : ""}`
    };
  }
  const p = d.progress;
  const v = d.vectors;
  if (!p && v && v.pending > 0 && (d.state === "indexing" || d.state === "watching")) {
    const lane = v.progress;
    const count = lane && lane.total ? ` ${lane.done.toLocaleString("en-US")}/${lane.total.toLocaleString("en-US")}` : "";
    return {
      kind: "indexing",
      text: count ? `memvault: embedding${count}` : `memvault: ${v.pending.toLocaleString("en-US")} to embed`,
      tooltip: vectorsTooltip(v)
    };
  }
  if (d.state === "indexing" || d.state === "starting") {
    const count = p && p.total ? ` ${p.done.toLocaleString("en-US")}/${p.total.toLocaleString("en-US")}` : "";
    return {
      kind: "indexing",
      text: `memvault: indexing${count}`,
      tooltip: p ? `Indexing: ${p.done} of ${p.total} notes, ${p.embedded} chunks embedded` : "Indexing the vault"
    };
  }
  if (d.lag_seconds !== null && d.lag_seconds >= LAG_SECONDS) {
    const pending = d.queue ? `, ${d.queue} change${d.queue > 1 ? "s" : ""} waiting` : "";
    return {
      kind: "lag",
      text: `memvault: lag ${Math.round(d.lag_seconds)} s`,
      tooltip: `The index is ${d.lag_seconds.toFixed(1)} s behind the files${pending}`
    };
  }
  return {
    kind: "watching",
    text: "memvault: watching",
    tooltip: `The index is up to date${d.model && d.model !== "ready" ? ` (model ${d.model})` : ""}`
  };
}
function vectorsTooltip(v) {
  const n = v.pending.toLocaleString("en-US");
  const waited = v.lag_seconds !== null ? ` (the oldest for ${Math.round(v.lag_seconds)} s)` : "";
  const error = v.last_error ? `
Last error: ${v.last_error}` : "";
  return `MEMORY.md, links and keyword search are up to date; ${n} chunk${v.pending === 1 ? "" : "s"} wait${v.pending === 1 ? "s" : ""} for ${v.pending === 1 ? "its" : "their"} vectors${waited}, found by their words meanwhile${error}`;
}
function startCommands(vaultPath) {
  const q = vaultPath ? ` ${shellQuote(vaultPath)}` : " PATH-TO-VAULT";
  const v = vaultPath ? ` --vault ${shellQuote(vaultPath)}` : "";
  return [`memvault up${q}`, `memvault daemon start${v}`];
}
function shellQuote(s) {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

// src/related-view.ts
var import_obsidian3 = require("obsidian");

// src/display.ts
function headingTrail(hit) {
  const h = hit.heading[0]?.trim() === hit.title.trim() ? hit.heading.slice(1) : hit.heading;
  return h.join(" \u203A ");
}
function cleanSnippet(hit) {
  let s = hit.snippet.trim();
  const last = hit.heading[hit.heading.length - 1];
  const m = /^#{1,6}\s+/.exec(s);
  if (m) {
    s = s.slice(m[0].length);
    if (last && s.startsWith(last)) s = s.slice(last.length);
  }
  return s.trim() || hit.snippet.trim();
}
function linkHeading(heading) {
  if (!/[#|[\]^%\r\n]/.test(heading)) return heading;
  return heading.replace(/[#|[\]^%\r\n]+/g, " ").replace(/ {2,}/g, " ").replace(/^ +| +$/g, "");
}

// src/navigation.ts
var import_obsidian2 = require("obsidian");
function fileOf(app, path) {
  const f = app.vault.getAbstractFileByPath(path);
  return f instanceof import_obsidian2.TFile ? f : null;
}
function linkTo(app, hit, sourcePath) {
  const heading = hit.heading.length ? linkHeading(hit.heading[hit.heading.length - 1]) : "";
  const file = fileOf(app, hit.path);
  if (!file) {
    const target = hit.path.replace(/\.md$/i, "");
    return heading ? `[[${target}#${heading}]]` : `[[${target}]]`;
  }
  return app.fileManager.generateMarkdownLink(file, sourcePath, heading ? `#${heading}` : void 0);
}
async function openHit(app, hit, newTab = false) {
  const file = fileOf(app, hit.path);
  if (!file) {
    new import_obsidian2.Notice(`memvault: ${hit.path} is not in the vault any more`);
    return;
  }
  const line = Math.max(0, hit.line_start - 1);
  const leaf = app.workspace.getLeaf(newTab);
  await leaf.openFile(file, { active: true, eState: { line } });
  const view = leaf.view;
  if (view instanceof import_obsidian2.MarkdownView) {
    const pos = { line: Math.min(line, Math.max(0, view.editor.lineCount() - 1)), ch: 0 };
    view.editor.setCursor(pos);
    view.editor.scrollIntoView({ from: pos, to: pos }, true);
  }
}
function insertAtCursor(editor, text) {
  if (!editor) {
    new import_obsidian2.Notice("memvault: open a note in the editor to insert the link into");
    return false;
  }
  editor.replaceSelection(text);
  editor.focus();
  return true;
}
function folderOf(path) {
  const i = path.lastIndexOf("/");
  return i < 0 ? "/" : path.slice(0, i);
}

// src/related-view.ts
var VIEW_TYPE_RELATED = "memvault-related";
var RelatedView = class extends import_obsidian3.ItemView {
  constructor(leaf, host) {
    super(leaf);
    this.host = host;
    /** The note the pane shows related notes for, and the leaf it is open in. */
    this.file = null;
    this.sourceLeaf = null;
    this.pane = { kind: "empty" };
    this.seq = 0;
    this.inflight = null;
  }
  getViewType() {
    return VIEW_TYPE_RELATED;
  }
  getDisplayText() {
    return "Related notes";
  }
  getIcon() {
    return "library";
  }
  async onOpen() {
    const root = this.contentEl;
    root.empty();
    root.addClass("memvault-related");
    this.titleEl = root.createDiv({ cls: "memvault-related-title" });
    this.bodyEl = root.createDiv({ cls: "memvault-related-body" });
    this.follow(this.host.app.workspace.getMostRecentLeaf());
  }
  async onClose() {
    this.inflight?.abort();
    this.inflight = null;
  }
  /** The editor's note may have changed (active leaf changed, or a file opened in it). */
  follow(leaf) {
    if (leaf === this.leaf) return;
    const ws = this.host.app.workspace;
    const root = leaf?.getRoot();
    if (root && (root === ws.leftSplit || root === ws.rightSplit)) return;
    const view = leaf?.view;
    const file = view instanceof import_obsidian3.FileView ? view.file : null;
    this.sourceLeaf = leaf;
    if (file === this.file && this.pane.kind !== "error" && this.pane.kind !== "empty") return;
    this.file = file;
    this.refresh();
  }
  /** Ask the daemon again for the current note (after an index change, a reconnect). */
  refresh() {
    const file = this.file;
    this.inflight?.abort();
    this.inflight = null;
    const seq = ++this.seq;
    if (!file) return this.show({ kind: "empty" });
    if (file.extension !== "md") return this.show({ kind: "not-markdown", file });
    if (this.host.connection.state.kind === "starting") return this.show({ kind: "connecting", file });
    if (!this.host.connection.connected) {
      const s2 = this.host.connection.state;
      const detail = "detail" in s2 ? s2.detail : "connecting to the daemon";
      return this.show({ kind: "error", file, error: new DaemonError("not-running", detail) });
    }
    if (this.pane.kind !== "hits" || this.pane.file !== file) this.show({ kind: "loading", file });
    const ctl = new AbortController();
    this.inflight = ctl;
    const s = this.host.settings;
    related(this.host.connection, file.path, s.resultCount, s.excludedFolders, ctl.signal).then(
      (answer) => {
        if (seq !== this.seq) return;
        this.inflight = null;
        this.show({ kind: "hits", file, hits: answer.hits });
      },
      (err) => {
        if (seq !== this.seq) return;
        this.inflight = null;
        const e = err instanceof DaemonError ? err : new DaemonError("server", String(err));
        if (e.kind !== "aborted") this.show({ kind: "error", file, error: e });
      }
    );
  }
  show(state) {
    this.pane = state;
    if (!this.bodyEl) return;
    const body = this.bodyEl;
    body.empty();
    const file = "file" in state ? state.file : null;
    this.titleEl.setText(file ? file.basename : "Related notes");
    this.contentEl.dataset.state = state.kind;
    this.contentEl.dataset.path = file?.path ?? "";
    switch (state.kind) {
      case "empty":
        return this.message("Open a note to see the notes related to it.");
      case "not-markdown":
        return this.message(
          `Related notes are found for markdown notes; ${file?.name} is a ${state.file.extension.toUpperCase()} file.`
        );
      case "loading":
        return this.message("Looking for related notes\u2026", "memvault-muted");
      case "connecting":
        return this.message("Connecting to the memvault daemon\u2026", "memvault-muted");
      case "error":
        return this.renderError(state.error);
      case "hits":
        return this.renderHits(state.hits);
    }
  }
  message(text, cls = "memvault-message") {
    this.bodyEl.createDiv({ cls, text });
  }
  renderError(e) {
    if (e.kind === "not-found") {
      return this.message(
        "This note is not in the index yet (new, empty, or excluded). It appears once the daemon has indexed it."
      );
    }
    const box = this.bodyEl.createDiv({ cls: "memvault-message memvault-problem" });
    if (e.kind === "not-running" || e.kind === "foreign" || e.kind === "unauthorized") {
      box.createDiv({ text: `The memvault daemon is not available: ${e.message}.` });
      box.createDiv({ text: "Start it with:" });
      for (const cmd of this.host.startCommands()) box.createEl("code", { text: cmd, cls: "memvault-command" });
      return;
    }
    if (e.kind === "timeout") {
      box.createDiv({ text: `${e.message}; it may be busy indexing. The pane retries on the next change.` });
    } else {
      box.createDiv({ text: `The daemon could not answer: ${e.message}` });
    }
    const retry = box.createEl("button", { text: "Retry", cls: "memvault-retry" });
    retry.addEventListener("click", () => this.refresh());
  }
  renderHits(hits) {
    if (!hits.length) return this.message("No related notes found.");
    const list = this.bodyEl.createDiv({ cls: "memvault-hits" });
    for (const hit of hits) {
      const item = list.createDiv({ cls: "memvault-hit", attr: { draggable: "true" } });
      item.dataset.path = hit.path;
      const head = item.createDiv({ cls: "memvault-hit-head" });
      head.createSpan({ cls: "memvault-hit-title", text: hit.title || hit.path });
      const button = head.createEl("button", {
        cls: "memvault-insert clickable-icon",
        attr: { "aria-label": "Insert a link at the cursor" }
      });
      (0, import_obsidian3.setIcon)(button, "link");
      item.createDiv({ cls: "memvault-hit-folder", text: folderOf(hit.path) });
      const trail = headingTrail(hit);
      if (trail) item.createDiv({ cls: "memvault-hit-heading", text: trail });
      item.createDiv({ cls: "memvault-hit-snippet", text: cleanSnippet(hit) });
      item.addEventListener("click", (evt) => {
        if (evt.target.closest(".memvault-insert")) return;
        void openHit(this.host.app, hit, evt.ctrlKey || evt.metaKey);
      });
      button.addEventListener("click", (evt) => {
        evt.stopPropagation();
        this.insertLink(hit);
      });
      item.addEventListener("dragstart", (evt) => {
        evt.dataTransfer?.setData("text/plain", linkTo(this.host.app, hit, this.file?.path ?? ""));
      });
    }
  }
  /** Insert a link to ``hit`` into the note the pane is showing, at its cursor. */
  insertLink(hit) {
    const view = this.sourceLeaf?.view;
    const editor = view instanceof import_obsidian3.MarkdownView ? view.editor : null;
    return insertAtCursor(editor, linkTo(this.host.app, hit, this.file?.path ?? ""));
  }
};

// src/search-modal.ts
var import_obsidian4 = require("obsidian");

// src/query.ts
var TOKEN = /(\S+?):("([^"]*)"|(\S*))|"([^"]*)"|(\S+)/g;
var DAY = /^\d{4}-\d{2}-\d{2}$/;
function parseQuery(input) {
  const out = { query: "", problems: [] };
  const words = [];
  for (const m of input.matchAll(TOKEN)) {
    const [whole, key, , quoted, bare, phrase, word] = m;
    if (key !== void 0) {
      const value = (quoted ?? bare ?? "").trim();
      const k = key.toLowerCase();
      if (k === "folder" && value) out.folder = value.replace(/^\/+|\/+$/g, "");
      else if ((k === "tag" || k === "tags") && value) {
        const tags = value.split(",").map((t) => t.trim().replace(/^#/, "")).filter(Boolean);
        out.tags = [...out.tags ?? [], ...tags];
      } else if ((k === "since" || k === "until") && value) {
        if (DAY.test(value) && !Number.isNaN(Date.parse(value))) out[k] = value;
        else out.problems.push(`${k}: wants a day as YYYY-MM-DD, not "${value}"`);
      } else if (k === "path" && value) out.path = value;
      else if (["folder", "tag", "tags", "since", "until", "path"].includes(k)) {
        out.problems.push(`${k}: needs a value`);
      } else words.push(whole);
    } else if (phrase !== void 0) {
      if (phrase.trim()) words.push(`"${phrase}"`);
    } else if (word !== void 0) {
      words.push(word);
    }
  }
  out.query = words.join(" ").trim();
  return out;
}
function filtersOf(p) {
  const f = {};
  if (p.folder) f.folder = p.folder;
  if (p.tags?.length) f.tags = p.tags;
  if (p.since) f.since = p.since;
  if (p.until) f.until = p.until;
  if (p.path) f.path = p.path;
  return f;
}

// src/search-modal.ts
var SEARCH_HINT = "Search your memory \u2014 words, then filters: folder:decisions tag:db since:2024-01-01";
var TYPING_MS = 120;
var SearchModal = class extends import_obsidian4.SuggestModal {
  constructor(app, host) {
    super(app);
    this.host = host;
    this.latest = null;
    this.inflight = null;
    /** The last answer's fate, for the DOM (tests) and for the empty state. */
    this.lastError = null;
    const active = app.workspace.activeEditor;
    this.editor = active?.editor ?? null;
    this.sourcePath = active?.file?.path ?? "";
    this.limit = host.settings.resultCount;
    this.emptyStateText = SEARCH_HINT;
    this.setPlaceholder(SEARCH_HINT);
    this.setInstructions([
      { command: "\u2191\u2193", purpose: "to navigate" },
      { command: "\u21B5", purpose: "to open at the line" },
      { command: "mod \u21B5", purpose: "to insert a link" },
      { command: "esc", purpose: "to dismiss" }
    ]);
    this.modalEl.addClass("memvault-search");
    this.scope.register(["Mod"], "Enter", (evt) => {
      this.selectActiveSuggestion(evt);
      return false;
    });
  }
  getSuggestions(input) {
    const mine = this.fetch(input);
    this.latest = mine;
    return mine.then(() => this.latest ?? mine);
  }
  async fetch(input) {
    this.inflight?.abort();
    this.inflight = null;
    const parsed = parseQuery(input);
    if (parsed.problems.length) {
      this.emptyStateText = parsed.problems.join("; ");
      return [];
    }
    if (!parsed.query) {
      this.emptyStateText = SEARCH_HINT;
      return [];
    }
    const ctl = new AbortController();
    this.inflight = ctl;
    await new Promise((r) => setTimeout(r, TYPING_MS));
    if (ctl.signal.aborted) return [];
    try {
      const { hits } = await search(this.host.connection, parsed.query, this.limit, filtersOf(parsed), ctl.signal);
      this.lastError = null;
      this.emptyStateText = "Nothing found.";
      return hits;
    } catch (err) {
      const e = err instanceof DaemonError ? err : new DaemonError("server", String(err));
      if (e.kind === "aborted") return [];
      this.lastError = e;
      this.emptyStateText = e.kind === "not-running" || e.kind === "foreign" || e.kind === "unauthorized" ? `The memvault daemon is not available (${e.message}). Start it with: ${this.host.startCommands()[0]}` : `The search failed: ${e.message}`;
      return [];
    }
  }
  renderSuggestion(hit, el) {
    el.addClass("memvault-suggestion");
    const head = el.createDiv({ cls: "memvault-hit-head" });
    head.createSpan({ cls: "memvault-hit-title", text: hit.title || hit.path });
    head.createSpan({ cls: "memvault-hit-folder", text: folderOf(hit.path) });
    const trail = headingTrail(hit);
    if (trail) el.createDiv({ cls: "memvault-hit-heading", text: trail });
    el.createDiv({ cls: "memvault-hit-snippet", text: cleanSnippet(hit) });
  }
  onChooseSuggestion(hit, evt) {
    if (import_obsidian4.Keymap.isModifier(evt, "Mod")) {
      insertAtCursor(this.editor, linkTo(this.app, hit, this.sourcePath));
      return;
    }
    void openHit(this.app, hit);
  }
  onClose() {
    this.inflight?.abort();
    super.onClose();
  }
};

// src/settings.ts
var DEFAULT_SETTINGS = {
  contextBudget: 2e3,
  resultCount: 10,
  excludedFolders: [],
  daemonUrl: "",
  daemonToken: "",
  timeoutMs: 5e3
};
function int(value, lo, hi, fallback) {
  const n = typeof value === "number" ? value : Number.parseInt(String(value ?? ""), 10);
  return Number.isFinite(n) ? Math.min(hi, Math.max(lo, Math.round(n))) : fallback;
}
function normalizeSettings(raw) {
  const r = typeof raw === "object" && raw !== null ? raw : {};
  const d = DEFAULT_SETTINGS;
  return {
    contextBudget: int(r.contextBudget, 100, 1e5, d.contextBudget),
    resultCount: int(r.resultCount, 1, 100, d.resultCount),
    excludedFolders: parseFolders(r.excludedFolders),
    daemonUrl: typeof r.daemonUrl === "string" ? r.daemonUrl.trim() : "",
    daemonToken: typeof r.daemonToken === "string" ? r.daemonToken.trim() : "",
    timeoutMs: int(r.timeoutMs, 500, 12e4, d.timeoutMs)
  };
}
function parseFolders(value) {
  const parts = Array.isArray(value) ? value.map(String) : String(value ?? "").split(/[\n,]/);
  const out = [];
  for (const p of parts) {
    const f = p.trim().replace(/^\/+|\/+$/g, "");
    if (f && !out.includes(f)) out.push(f);
  }
  return out;
}
function checkDaemonUrl(url) {
  if (!url) return null;
  let u;
  try {
    u = new URL(url);
  } catch {
    return "not a URL";
  }
  if (u.protocol !== "http:") return "must start with http://";
  if (!["127.0.0.1", "localhost", "[::1]"].includes(u.hostname)) {
    return "must be on this machine (127.0.0.1, localhost or [::1])";
  }
  if (u.pathname !== "/" || u.search || u.hash) return "must be just http://HOST:PORT";
  return null;
}

// src/settings-tab.ts
var import_obsidian5 = require("obsidian");
var MemvaultSettingTab = class extends import_obsidian5.PluginSettingTab {
  constructor(app, plugin, owner) {
    super(app, plugin);
    this.owner = owner;
  }
  display() {
    const el = this.containerEl;
    el.empty();
    const s = this.owner.settings;
    const save = (patch, connection = false) => {
      this.owner.settings = normalizeSettings({ ...this.owner.settings, ...patch });
      void this.owner.saveSettings(connection);
    };
    new import_obsidian5.Setting(el).setName("Context budget").setDesc('Tokens in the context that "Ask your memory" copies (100\u2013100000).').addText(
      (t) => t.setValue(String(s.contextBudget)).onChange((v) => {
        if (/^\d+$/.test(v.trim())) save({ contextBudget: Number(v) });
      })
    );
    new import_obsidian5.Setting(el).setName("Number of results").setDesc("Notes in the related pane and hits in the search (1\u2013100).").addText(
      (t) => t.setValue(String(s.resultCount)).onChange((v) => {
        if (/^\d+$/.test(v.trim())) save({ resultCount: Number(v) });
      })
    );
    new import_obsidian5.Setting(el).setName("Folders left out of related notes").setDesc("One per line (or comma separated), e.g. logs or archive/2023.").addTextArea(
      (t) => t.setValue(s.excludedFolders.join("\n")).onChange((v) => save({ excludedFolders: parseFolders(v) }))
    );
    new import_obsidian5.Setting(el).setName("Request timeout (ms)").setDesc("How long to wait for the daemon before saying it is slow (500\u2013120000).").addText(
      (t) => t.setValue(String(s.timeoutMs)).onChange((v) => {
        if (/^\d+$/.test(v.trim())) save({ timeoutMs: Number(v) });
      })
    );
    el.createEl("h3", { text: "Daemon" });
    el.createEl("p", {
      cls: "setting-item-description",
      text: "Leave both empty: the plugin reads .memvault/daemon.json, which the daemon writes when it starts. Set them only for a daemon you run another way."
    });
    const problem = el.createDiv({ cls: "memvault-problem" });
    new import_obsidian5.Setting(el).setName("Daemon URL").setDesc("e.g. http://127.0.0.1:8765 \u2014 on this machine only.").addText(
      (t) => t.setValue(s.daemonUrl).onChange((v) => {
        const bad = checkDaemonUrl(v.trim());
        problem.setText(bad ? `Daemon URL ${bad}` : "");
        if (!bad) save({ daemonUrl: v }, true);
      })
    );
    new import_obsidian5.Setting(el).setName("Daemon token").setDesc("The bearer token for that URL.").addText((t) => {
      t.inputEl.type = "password";
      t.setValue(s.daemonToken).onChange((v) => save({ daemonToken: v }, true));
    });
  }
};

// src/status-modal.ts
var import_obsidian6 = require("obsidian");
var StatusModal = class extends import_obsidian6.Modal {
  constructor(app, host) {
    super(app);
    this.host = host;
  }
  onOpen() {
    this.titleEl.setText("memvault: index health");
    this.modalEl.addClass("memvault-status");
    void this.load();
  }
  async load() {
    const el = this.contentEl;
    el.empty();
    const health = this.health();
    if (!this.host.connection.connected) return this.notRunning(health.tooltip);
    el.createDiv({ cls: "memvault-muted", text: "Loading\u2026" });
    let s;
    try {
      s = await status(this.host.connection, this.host.settings.timeoutMs);
    } catch (err) {
      const e = err instanceof DaemonError ? err : new DaemonError("server", String(err));
      el.empty();
      if (e.kind === "not-running" || e.kind === "unauthorized" || e.kind === "foreign") {
        return this.notRunning(e.message);
      }
      return this.busy(e.message);
    }
    el.empty();
    this.health();
    const table = el.createEl("table", { cls: "memvault-status-table" });
    const row = (name, value, cls = "") => {
      const tr = table.createEl("tr", { cls });
      tr.createEl("th", { text: name });
      tr.createEl("td", { text: value });
    };
    const n = (x) => (x ?? 0).toLocaleString("en-US");
    row("Notes", n(s.notes));
    row("Chunks", `${n(s.index.chunks)} (${n(s.index.embedded)} embedded)`);
    row("Pending", `${n(s.index.pending_count)} note${s.index.pending_count === 1 ? "" : "s"} differ from the index`);
    const m = s.memory;
    if (m.exists) {
      const tokens = m.tokens != null ? `, ${n(m.tokens)}/${n(m.max_tokens)} tokens` : "";
      row(m.file, `${n(m.lines)}/${n(m.max_lines)} lines${tokens}`, m.over_budget ? "memvault-over" : "");
    } else {
      row(m.file, "missing");
    }
    const unread = s.links.unchecked ? `; ${n(s.links.unchecked)} changed notes not read yet (memvault links check reads all)` : "";
    row("Unresolved links", `${n(s.links.unresolved)} (${n(s.links.ambiguous)} ambiguous)${unread}`);
    const d = s.daemon;
    row("Daemon", `${d.state}, pid ${d.pid ?? "?"}, up ${formatUptime(d.uptime_seconds ?? 0)}, model ${d.model ?? "?"}`);
    const v = d.vectors;
    if (v) {
      const waited = v.pending && v.lag_seconds !== null ? `, the oldest for ${Math.round(v.lag_seconds)} s` : "";
      const lane = v.progress && v.busy ? ` (embedding ${n(v.progress.done)}/${n(v.progress.total)})` : "";
      row("Vectors", v.pending ? `${n(v.pending)} chunks waiting${waited}${lane}` : "all embedded", v.last_error ? "memvault-problem" : "");
    }
    row("Last error", d.last_error ?? "none", d.last_error ? "memvault-problem" : "");
    this.refreshButton();
  }
  /** The status bar's words, as the view's first line. */
  health() {
    const health = describeHealth(this.host.connection.state, this.host.connection.daemon);
    this.contentEl.createDiv({ cls: `memvault-health memvault-health-${health.kind}`, text: health.text.replace(/^memvault: /, "") });
    return health;
  }
  refreshButton() {
    const refresh = this.contentEl.createEl("button", { text: "Refresh", cls: "memvault-refresh" });
    refresh.addEventListener("click", () => void this.load());
  }
  busy(detail) {
    this.health();
    const box = this.contentEl.createDiv({ cls: "memvault-message memvault-problem" });
    box.createDiv({ text: `The daemon runs, but did not give its status: ${detail}.` });
    box.createDiv({ text: "It may be busy indexing (the status bar follows its progress)." });
    this.refreshButton();
  }
  notRunning(detail) {
    const box = this.contentEl.createDiv({ cls: "memvault-message memvault-problem" });
    box.createDiv({ text: detail });
    box.createDiv({ text: "Start the daemon with:" });
    for (const cmd of this.host.startCommands()) box.createEl("code", { text: cmd, cls: "memvault-command" });
  }
  onClose() {
    this.contentEl.empty();
  }
};
function formatUptime(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor(s % 3600 / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor(s % 86400 / 3600)} h`;
}

// src/timing.ts
function leadingDebounce(fn, ms) {
  let timer = null;
  let pending = null;
  const quiet = () => {
    timer = null;
    if (pending) {
      const args = pending;
      pending = null;
      timer = setTimeout(quiet, ms);
      fn(...args);
    }
  };
  const call = (...args) => {
    if (timer === null) {
      timer = setTimeout(quiet, ms);
      fn(...args);
    } else {
      pending = args;
    }
  };
  call.cancel = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    pending = null;
  };
  return call;
}
function trailingDebounce(fn, ms) {
  let timer = null;
  const call = (...args) => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn(...args);
    }, ms);
  };
  call.cancel = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  return call;
}

// src/transport.ts
var TransportError = class extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
    this.name = "TransportError";
  }
};
var MAX_BODY = 16 * 1024 * 1024;
function classify(err) {
  if (err instanceof TransportError) return err;
  const e = err;
  if (e?.code === "ECONNREFUSED") return new TransportError("refused", "connection refused");
  if (e?.name === "AbortError") return new TransportError("aborted", "aborted");
  return new TransportError("network", e?.message || String(err));
}
function nodeTransport(http) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  return {
    name: "node-http",
    request(req) {
      return new Promise((resolve, reject) => {
        let settled = false;
        const finish = (fn) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          req.signal?.removeEventListener("abort", onAbort);
          fn();
        };
        const headers = { ...req.headers };
        if (req.body !== void 0) {
          headers["Content-Type"] = "application/json";
          headers["Content-Length"] = String(Buffer.byteLength(req.body));
        }
        const r = http.request(req.url, { method: req.method, headers, agent }, (res) => {
          const parts = [];
          let size = 0;
          res.on("data", (chunk) => {
            size += chunk.length;
            if (size > MAX_BODY) {
              r.destroy();
              finish(() => reject(new TransportError("network", "the answer is too large")));
              return;
            }
            parts.push(chunk);
          });
          res.on(
            "end",
            () => finish(
              () => resolve({
                status: res.statusCode ?? 0,
                contentType: String(res.headers["content-type"] ?? ""),
                text: Buffer.concat(parts).toString("utf8")
              })
            )
          );
          res.on("error", (err) => finish(() => reject(classifyNode(err))));
        });
        const timer = setTimeout(() => {
          r.destroy();
          finish(
            () => reject(new TransportError("timeout", `no answer within ${req.timeoutMs} ms`))
          );
        }, req.timeoutMs);
        const onAbort = () => {
          r.destroy();
          finish(() => reject(new TransportError("aborted", "aborted")));
        };
        if (req.signal?.aborted) return onAbort();
        req.signal?.addEventListener("abort", onAbort);
        r.on("error", (err) => finish(() => reject(classifyNode(err))));
        if (req.body !== void 0) r.write(req.body);
        r.end();
      });
    },
    stream(req, cb) {
      let ended = false;
      const end = (error) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        cb.onEnd(error);
      };
      const r = http.request(req.url, { method: "GET", headers: req.headers }, (res) => {
        clearTimeout(timer);
        cb.onOpen(res.statusCode ?? 0, String(res.headers["content-type"] ?? ""));
        res.setEncoding("utf8");
        res.on("data", (text) => {
          if (!ended) cb.onText(text);
        });
        res.on("end", () => end());
        res.on("error", (err) => end(classifyNode(err)));
        res.on("close", () => end());
      });
      const timer = setTimeout(() => {
        r.destroy();
        end(new TransportError("timeout", `no answer within ${req.connectTimeoutMs} ms`));
      }, req.connectTimeoutMs);
      r.on("error", (err) => end(classifyNode(err)));
      r.end();
      return {
        close() {
          if (ended) return;
          ended = true;
          clearTimeout(timer);
          r.destroy();
        }
      };
    }
  };
}
function classifyNode(err) {
  const code = err?.code;
  if (code === "ECONNREFUSED") return new TransportError("refused", "connection refused");
  if (code === "ECONNRESET" || code === "EPIPE") {
    return new TransportError("network", "the connection was reset");
  }
  return classify(err);
}
function fetchTransport(fetchFn = globalThis.fetch.bind(globalThis)) {
  return {
    name: "fetch",
    async request(req) {
      const ctl = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        ctl.abort();
      }, req.timeoutMs);
      const onAbort = () => ctl.abort();
      req.signal?.addEventListener("abort", onAbort);
      try {
        if (req.signal?.aborted) throw new TransportError("aborted", "aborted");
        const headers = { ...req.headers };
        if (req.body !== void 0) headers["Content-Type"] = "application/json";
        const res = await fetchFn(req.url, {
          method: req.method,
          headers,
          body: req.body,
          signal: ctl.signal,
          cache: "no-store"
        });
        const text = await res.text();
        return { status: res.status, contentType: res.headers.get("content-type") ?? "", text };
      } catch (err) {
        if (timedOut) throw new TransportError("timeout", `no answer within ${req.timeoutMs} ms`);
        if (req.signal?.aborted) throw new TransportError("aborted", "aborted");
        throw new TransportError("network", err?.message || String(err));
      } finally {
        clearTimeout(timer);
        req.signal?.removeEventListener("abort", onAbort);
      }
    },
    stream(req, cb) {
      const ctl = new AbortController();
      let ended = false;
      const end = (error) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        cb.onEnd(error);
      };
      const timer = setTimeout(() => {
        ctl.abort();
        end(new TransportError("timeout", `no answer within ${req.connectTimeoutMs} ms`));
      }, req.connectTimeoutMs);
      (async () => {
        const res = await fetchFn(req.url, { headers: req.headers, signal: ctl.signal, cache: "no-store" });
        clearTimeout(timer);
        cb.onOpen(res.status, res.headers.get("content-type") ?? "");
        if (!res.body) return end();
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        for (; ; ) {
          const { done, value } = await reader.read();
          if (done) break;
          if (!ended) cb.onText(decoder.decode(value, { stream: true }));
        }
        end();
      })().catch((err) => end(new TransportError("network", err?.message || String(err))));
      return {
        close() {
          if (ended) return;
          ended = true;
          clearTimeout(timer);
          ctl.abort();
        }
      };
    }
  };
}

// src/main.ts
var LEAF_DEBOUNCE_MS = 120;
var SYNC_REFRESH_MS = 800;
function pickTransport() {
  try {
    if (import_obsidian7.Platform.isDesktopApp && typeof require === "function") {
      return nodeTransport(require("http"));
    }
  } catch {
  }
  return fetchTransport();
}
var MemvaultPlugin = class extends import_obsidian7.Plugin {
  constructor() {
    super(...arguments);
    this.settings = { ...DEFAULT_SETTINGS };
    this.statusEl = null;
    this.warnedNotRunning = false;
  }
  async onload() {
    this.settings = normalizeSettings(await this.loadData());
    this.connection = new Connection({
      files: this.app.vault.adapter,
      transport: pickTransport(),
      override: () => this.settings.daemonUrl ? { url: this.settings.daemonUrl, token: this.settings.daemonToken } : null,
      timeoutMs: () => this.settings.timeoutMs
    });
    this.registerView(VIEW_TYPE_RELATED, (leaf) => new RelatedView(leaf, this));
    this.addRibbonIcon("search", "memvault: semantic search", () => this.openSearch());
    this.addCommand({ id: "semantic-search", name: "Semantic search", callback: () => this.openSearch() });
    this.addCommand({
      id: "open-related",
      name: "Open related notes",
      callback: () => void this.activateRelated(true)
    });
    this.addCommand({ id: "ask-memory", name: "Ask your memory (copy a cited context)", callback: () => this.ask() });
    this.addCommand({ id: "show-status", name: "Show index health", callback: () => this.openStatus() });
    this.statusEl = this.addStatusBarItem();
    this.statusEl.addClass("memvault-statusbar", "mod-clickable");
    this.statusEl.addEventListener("click", () => this.openStatus());
    this.renderStatus();
    this.register(this.connection.onState((s) => this.stateChanged(s)));
    this.register(this.connection.onDaemonState(() => this.renderStatus()));
    const afterSync = trailingDebounce(() => this.relatedViews().forEach((v) => v.refresh()), SYNC_REFRESH_MS);
    this.register(() => afterSync.cancel());
    this.register(this.connection.onSync(() => afterSync()));
    const follow = leadingDebounce((leaf) => {
      this.relatedViews().forEach((v) => v.follow(leaf));
    }, LEAF_DEBOUNCE_MS);
    this.register(() => follow.cancel());
    this.registerEvent(this.app.workspace.on("active-leaf-change", (leaf) => follow(leaf)));
    this.registerEvent(
      this.app.workspace.on("file-open", () => follow(this.app.workspace.getMostRecentLeaf()))
    );
    this.addSettingTab(new MemvaultSettingTab(this.app, this, this));
    this.app.workspace.onLayoutReady(() => {
      this.connection.start();
      void this.activateRelated(false);
    });
  }
  onunload() {
    this.connection?.stop();
  }
  // -- Host ----------------------------------------------------------------------------------
  vaultPath() {
    const a = this.app.vault.adapter;
    return a instanceof import_obsidian7.FileSystemAdapter ? a.getBasePath() : null;
  }
  startCommands() {
    return startCommands(this.vaultPath());
  }
  async copy(text) {
    await navigator.clipboard.writeText(text);
  }
  async saveSettings(changedConnection) {
    await this.saveData(this.settings);
    if (changedConnection) this.connection.reconnect();
    this.relatedViews().forEach((v) => v.refresh());
  }
  // -- commands -------------------------------------------------------------------------------
  openSearch() {
    const modal = new SearchModal(this.app, this);
    modal.open();
    return modal;
  }
  openStatus() {
    const modal = new StatusModal(this.app, this);
    modal.open();
    return modal;
  }
  ask() {
    const selection = this.app.workspace.activeEditor?.editor?.getSelection() ?? "";
    if (selection.trim()) void askMemory(this, selection);
    else new AskModal(this.app, this).open();
  }
  async activateRelated(reveal) {
    const ws = this.app.workspace;
    let leaf = ws.getLeavesOfType(VIEW_TYPE_RELATED)[0] ?? null;
    if (!leaf) {
      leaf = ws.getRightLeaf(false);
      if (!leaf) return;
      await leaf.setViewState({ type: VIEW_TYPE_RELATED, active: false });
    }
    if (reveal) await ws.revealLeaf(leaf);
  }
  relatedViews() {
    return this.app.workspace.getLeavesOfType(VIEW_TYPE_RELATED).map((l) => l.view).filter((v) => v instanceof RelatedView);
  }
  // -- connection state -------------------------------------------------------------------------
  stateChanged(state) {
    this.renderStatus();
    if (state.kind === "connected") {
      this.warnedNotRunning = false;
    } else if (state.kind !== "starting" && !this.warnedNotRunning) {
      this.warnedNotRunning = true;
      const [up, start] = this.startCommands();
      const next = state.kind === "unauthorized" ? "Check the token in memvault's settings (or clear it), or restart the daemon." : state.kind === "unreachable" ? "It may be busy; memvault keeps trying." : `Start it with:
${up}
or: ${start}`;
      new import_obsidian7.Notice(`memvault: ${state.detail}.
${next}`, 15e3);
    }
    this.relatedViews().forEach((v) => v.refresh());
  }
  renderStatus() {
    const el = this.statusEl;
    if (!el) return;
    const h = describeHealth(this.connection.state, this.connection.daemon);
    el.setText(h.text);
    el.setAttr("aria-label", h.tooltip);
    el.setAttr("data-tooltip-position", "top");
    el.dataset.health = h.kind;
  }
};
