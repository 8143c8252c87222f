import "../support/dom";
import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { isMemvaultHealth, parseDaemonJson, queryString } from "../../src/connection";
import { describeHealth, shellQuote, startCommands } from "../../src/health";
import { filtersOf, parseQuery } from "../../src/query";
import { checkDaemonUrl, normalizeSettings, parseFolders } from "../../src/settings";
import { SseParser } from "../../src/sse";
import { formatUptime } from "../../src/status-modal";
import { leadingDebounce } from "../../src/timing";
import { cleanSnippet, headingTrail, linkHeading } from "../../src/display";
import type { DaemonState } from "../../src/types";

describe("SseParser", () => {
  it("assembles events split anywhere, with comments and CRLF", () => {
    const p = new SseParser();
    const text = ': connected\r\n\r\nevent: status\r\ndata: {"a":1}\r\n\r\nevent: sync\ndata: {"b":\ndata: 2}\n\n: keep-alive\n\n';
    const events: { event: string; data: string }[] = [];
    const comments: string[] = [];
    for (let i = 0; i < text.length; i += 3) {
      const r = p.push(text.slice(i, i + 3));
      events.push(...r.events);
      comments.push(...r.comments);
    }
    assert.deepEqual(events, [
      { event: "status", data: '{"a":1}' },
      { event: "sync", data: '{"b":\n2}' },
    ]);
    assert.deepEqual(comments, ["connected", "keep-alive"]);
  });

  it("keeps an unfinished event until its blank line", () => {
    const p = new SseParser();
    assert.deepEqual(p.push("event: sync\ndata: 1\n").events, []);
    assert.deepEqual(p.push("\n").events, [{ event: "sync", data: "1" }]);
  });
});

describe("parseQuery", () => {
  const cases: [string, Record<string, unknown>][] = [
    ["postgres migration", { query: "postgres migration" }],
    [
      "schema folder:decisions tag:db tag:#infra since:2024-01-01 until:2024-12-31",
      { query: "schema", folder: "decisions", tags: ["db", "infra"], since: "2024-01-01", until: "2024-12-31" },
    ],
    ['"user service" path:"projects/*" at 10:45', { query: '"user service" at 10:45', path: "projects/*" }],
    ["tags:a,b,#c kiwi", { query: "kiwi", tags: ["a", "b", "c"] }],
    ["folder:/logs/ http://x.y", { query: "http://x.y", folder: "logs" }],
  ];
  for (const [input, want] of cases) {
    it(`parses ${JSON.stringify(input)}`, () => {
      const got = parseQuery(input);
      assert.deepEqual(got.problems, []);
      assert.deepEqual({ query: got.query, ...filtersOf(got) }, want);
    });
  }
  it("says what it did not understand", () => {
    assert.deepEqual(parseQuery("x since:yesterday folder:").problems, [
      'since: wants a day as YYYY-MM-DD, not "yesterday"',
      "folder: needs a value",
    ]);
  });
});

describe("settings", () => {
  it("normalizes whatever data.json held", () => {
    assert.deepEqual(normalizeSettings(null), {
      contextBudget: 2000,
      resultCount: 10,
      excludedFolders: [],
      daemonUrl: "",
      daemonToken: "",
      timeoutMs: 5000,
    });
    const s = normalizeSettings({ contextBudget: "999999", resultCount: 0, excludedFolders: "logs, /archive/old/\nlogs", timeoutMs: "x" });
    assert.equal(s.contextBudget, 100000);
    assert.equal(s.resultCount, 1);
    assert.deepEqual(s.excludedFolders, ["logs", "archive/old"]);
    assert.equal(s.timeoutMs, 5000);
    assert.deepEqual(parseFolders(["a", " b/ ", ""]), ["a", "b"]);
  });
  it("accepts only a loopback daemon URL", () => {
    assert.equal(checkDaemonUrl("http://127.0.0.1:8765"), null);
    assert.equal(checkDaemonUrl("http://localhost:1"), null);
    assert.match(checkDaemonUrl("https://127.0.0.1:1") ?? "", /http:/);
    assert.match(checkDaemonUrl("http://example.com:80") ?? "", /this machine/);
    assert.match(checkDaemonUrl("http://127.0.0.1:1/x") ?? "", /HOST:PORT/);
    assert.equal(checkDaemonUrl("nope"), "not a URL");
  });
});

describe("daemon.json and queries", () => {
  it("reads the daemon's file", () => {
    assert.deepEqual(parseDaemonJson('{"pid": 7, "host": "127.0.0.1", "port": 5000, "token": "t"}'), {
      url: "http://127.0.0.1:5000",
      token: "t",
      source: "daemon.json",
      pid: 7,
    });
    assert.equal(parseDaemonJson('{"pid": 7, "host": "::1", "port": 5000, "token": "t"}')?.url, "http://[::1]:5000");
    for (const bad of ["", "{", "[]", '{"port": "5000", "token": "t"}', '{"port": 5000}', '{"port": 70000, "token": "t"}']) {
      assert.equal(parseDaemonJson(bad), null, bad);
    }
  });
  it("encodes paths with unicode, spaces and # and repeats list keys", () => {
    assert.equal(
      queryString({ path: "projects/Q&A #2 — ünï.md", k: 5, exclude: ["logs", "a b"], skip: undefined }),
      "?path=projects%2FQ%26A+%232+%E2%80%94+%C3%BCn%C3%AF.md&k=5&exclude=logs&exclude=a+b",
    );
  });
  it("knows a memvault /health from another program's", () => {
    assert.equal(isMemvaultHealth(200, '{"ok": true, "version": "0.1.0"}'), true);
    assert.equal(isMemvaultHealth(200, "<html>hello</html>"), false);
    assert.equal(isMemvaultHealth(200, '{"ok": true}'), false);
    assert.equal(isMemvaultHealth(404, '{"ok": true, "version": "0.1.0"}'), false);
  });
});

describe("describeHealth", () => {
  const d = (over: Partial<DaemonState>): DaemonState => ({
    state: "watching",
    progress: null,
    queue: 0,
    lag_seconds: null,
    last_error: null,
    model: "ready",
    observer_alive: true,
    failed_batches: 0,
    ...over,
  });
  const connected = { kind: "connected" as const, endpoint: { url: "http://127.0.0.1:1", token: "t", source: "daemon.json" as const } };
  it("names each state", () => {
    assert.equal(describeHealth(connected, d({})).text, "memvault: watching");
    assert.equal(
      describeHealth(connected, d({ state: "indexing", progress: { done: 1200, total: 10000, embedded: 3 } })).text,
      "memvault: indexing 1,200/10,000",
    );
    assert.equal(describeHealth(connected, d({ lag_seconds: 4.4, queue: 3 })).text, "memvault: lag 4 s");
    assert.equal(describeHealth(connected, d({ lag_seconds: 0.3 })).kind, "watching");
    const err = describeHealth(connected, d({ failed_batches: 2, last_error: "sync failed: boom" }));
    assert.equal(err.text, "memvault: error");
    assert.match(err.tooltip, /2 syncs failed in a row[\s\S]*boom/);
    assert.equal(describeHealth(connected, d({ observer_alive: false })).kind, "error");
    // an old error that the daemon got over is not an error state
    assert.equal(describeHealth(connected, d({ last_error: "old" })).kind, "watching");
    // only the vectors behind (the daemon's two lanes): said as such, with the lane's counts
    const lane = { pending: 2500, lag_seconds: 41.6, busy: true, embedded: 900, last_error: null };
    const embedding = describeHealth(
      connected,
      d({ state: "indexing", vectors: { ...lane, progress: { done: 900, total: 3400, embedded: 900 } } }),
    );
    assert.equal(embedding.kind, "indexing");
    assert.equal(embedding.text, "memvault: embedding 900/3,400");
    assert.match(embedding.tooltip, /keyword search are up to date; 2,500 chunks wait for their vectors \(the oldest for 42 s\)/);
    const queued = describeHealth(connected, d({ vectors: { ...lane, pending: 1, busy: false, progress: null } }));
    assert.equal(queued.text, "memvault: 1 to embed");
    assert.match(queued.tooltip, /1 chunk waits for its vectors/);
    const none = { ...lane, pending: 0, lag_seconds: null, busy: false, progress: null };
    assert.equal(describeHealth(connected, d({ vectors: none })).text, "memvault: watching");
    // the structure lane's own progress comes first
    assert.equal(
      describeHealth(connected, d({ state: "indexing", progress: { done: 5, total: 50, embedded: 0 }, vectors: { ...lane, progress: null } })).text,
      "memvault: indexing 5/50",
    );
    assert.equal(describeHealth({ kind: "not-running", detail: "x" }, null).text, "memvault: not running");
    assert.equal(describeHealth({ kind: "unauthorized", detail: "x" }, null).text, "memvault: token refused");
  });
  it("gives the exact commands, quoted for a shell", () => {
    assert.deepEqual(startCommands("/home/me/my memory"), [
      "memvault up '/home/me/my memory'",
      "memvault daemon start --vault '/home/me/my memory'",
    ]);
    assert.equal(shellQuote("/a/b-c_d.e"), "/a/b-c_d.e");
    assert.equal(shellQuote("it's"), "'it'\\''s'");
    assert.equal(formatUptime(3725), "1 h 2 min");
  });
});

describe("leadingDebounce", () => {
  it("runs the first call at once and a burst's last call once", () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const calls: number[] = [];
      const f = leadingDebounce((n: number) => calls.push(n), 100);
      f(1);
      assert.deepEqual(calls, [1]);
      f(2);
      f(3);
      mock.timers.tick(99);
      assert.deepEqual(calls, [1]);
      mock.timers.tick(1);
      assert.deepEqual(calls, [1, 3]);
      mock.timers.tick(100); // quiet: nothing more
      assert.deepEqual(calls, [1, 3]);
      f(4);
      assert.deepEqual(calls, [1, 3, 4]);
      f.cancel();
      mock.timers.tick(500);
      assert.deepEqual(calls, [1, 3, 4]);
    } finally {
      mock.timers.reset();
    }
  });
});

describe("how a hit reads", () => {
  const base = { path: "p/a.md", title: "Garden app", line_start: 1, line_end: 2, score: 1, address: "" };
  it("drops a heading path's repeated title and the snippet's heading markup", () => {
    const h = { ...base, heading: ["Garden app", "Database"], snippet: "## Database PostgreSQL schema" };
    assert.equal(headingTrail(h), "Database");
    assert.equal(cleanSnippet(h), "PostgreSQL schema");
    const other = { ...base, heading: ["Plan", "Risks"], snippet: "…middle of a section" };
    assert.equal(headingTrail(other), "Plan › Risks");
    assert.equal(cleanSnippet(other), "…middle of a section");
    assert.equal(cleanSnippet({ ...base, heading: ["Garden app"], snippet: "# Garden app" }), "# Garden app");
  });
  it("writes a heading's link-breaking characters as spaces in a link, as the daemon's address", () => {
    assert.equal(linkHeading("数据库 设计"), "数据库 设计");
    assert.equal(linkHeading("风险 & 问题 #1"), "风险 & 问题 1");
    assert.equal(linkHeading("Owners | backups"), "Owners backups");
    assert.equal(linkHeading("See [[other]] notes"), "See other notes");
    assert.equal(linkHeading("Done 50%% so far"), "Done 50 so far");
    assert.equal(linkHeading("^block"), "block");
  });
});
