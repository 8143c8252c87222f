/**
 * The one link to the vault's daemon: where it is, whether it is there, and every request.
 *
 * It finds the daemon by reading `.memvault/daemon.json` (port, token) through the vault
 * adapter — or takes the URL and token from the settings — checks that what answers is
 * a memvault daemon (`GET /health`), then holds `GET /events` open: `event: status`
 * feeds the status bar, `event: sync` tells views the index changed, and the stream
 * ending is how a stopped daemon is noticed at once. When it is not there, the file is
 * re-read every few seconds, so a daemon started (or restarted on a new port with a new
 * token) is found again without a click. Nothing here ever blocks: every request has a
 * timeout and fails with a `DaemonError` that says what happened.
 */

import { SseParser } from "./sse";
import type { Transport } from "./transport";
import { TransportError } from "./transport";
import type { DaemonState, SyncReport } from "./types";

export const DAEMON_JSON = ".memvault/daemon.json";

export interface Endpoint {
  url: string; // http://127.0.0.1:PORT
  token: string;
  source: "daemon.json" | "settings";
  pid?: number;
}

export type ConnectionState =
  | { kind: "starting" }
  | { kind: "connected"; endpoint: Endpoint }
  | { kind: "not-running"; detail: string }
  | { kind: "unauthorized"; detail: string }
  | { kind: "foreign"; detail: string }
  | { kind: "unreachable"; detail: string };

export type DaemonErrorKind =
  | "not-running"
  | "unauthorized"
  | "foreign"
  | "timeout"
  | "network"
  | "aborted"
  | "not-found"
  | "refused-request" // 400, 409, 413: the daemon said no to this request
  | "server"; // 5xx

export class DaemonError extends Error {
  constructor(
    readonly kind: DaemonErrorKind,
    message: string,
    readonly status?: number,
    readonly type?: string,
  ) {
    super(message);
    this.name = "DaemonError";
  }
}

/** The slice of Obsidian's DataAdapter the connection reads with. */
export interface FileSource {
  exists(path: string): Promise<boolean>;
  read(path: string): Promise<string>;
}

export interface ConnectionOptions {
  files: FileSource;
  transport: Transport;
  /** An explicit URL/token from the settings, or null to use daemon.json. */
  override: () => { url: string; token: string } | null;
  timeoutMs: () => number;
  pollMs?: number; // how often a missing daemon is looked for again
  heartbeatMs?: number; // silence on /events after which the stream is taken for lost
}

export interface RequestOptions {
  query?: Record<string, string | number | string[] | undefined>;
  body?: unknown;
  timeoutMs?: number;
  signal?: AbortSignal;
}

type Listener<T> = (value: T) => void;

/** Parse daemon.json's text into an endpoint; null when it is not one. Pure. */
export function parseDaemonJson(text: string): Endpoint | null {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof data !== "object" || data === null) return null;
  const d = data as Record<string, unknown>;
  const port = d.port;
  if (typeof port !== "number" || !Number.isInteger(port) || port <= 0 || port > 65535) return null;
  if (typeof d.token !== "string" || !d.token) return null;
  let host = typeof d.host === "string" && d.host ? d.host : "127.0.0.1";
  if (host.includes(":")) host = `[${host}]`;
  return {
    url: `http://${host}:${port}`,
    token: d.token,
    source: "daemon.json",
    pid: typeof d.pid === "number" ? d.pid : undefined,
  };
}

/** `/related?path=a&exclude=x&exclude=y`: query strings with repeated keys. Pure. */
export function queryString(query: RequestOptions["query"]): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) value.forEach((v) => params.append(key, v));
    else params.append(key, String(value));
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}

export class Connection {
  state: ConnectionState = { kind: "starting" };
  daemon: DaemonState | null = null;
  private endpoint: Endpoint | null = null;
  private stream: { close(): void } | null = null;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;
  private heartbeat: ReturnType<typeof setTimeout> | null = null;
  private probing: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private generation = 0;
  private stateListeners = new Set<Listener<ConnectionState>>();
  private daemonListeners = new Set<Listener<DaemonState>>();
  private syncListeners = new Set<Listener<SyncReport>>();
  private readonly pollMs: number;
  private readonly heartbeatMs: number;

  constructor(private readonly opts: ConnectionOptions) {
    this.pollMs = opts.pollMs ?? 2000;
    this.heartbeatMs = opts.heartbeatMs ?? 45000;
  }

  onState(fn: Listener<ConnectionState>): () => void {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }

  onDaemonState(fn: Listener<DaemonState>): () => void {
    this.daemonListeners.add(fn);
    return () => this.daemonListeners.delete(fn);
  }

  onSync(fn: Listener<SyncReport>): () => void {
    this.syncListeners.add(fn);
    return () => this.syncListeners.delete(fn);
  }

  get connected(): boolean {
    return this.state.kind === "connected";
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.probe();
  }

  stop(): void {
    this.stopped = true;
    this.generation++;
    this.closeStream();
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = null;
  }

  /** Look for the daemon again now (settings changed, or a request found it gone). */
  reconnect(): void {
    if (this.stopped) return;
    this.closeStream();
    void this.probe();
  }

  // -- finding the daemon ---------------------------------------------------------------

  private async readEndpoint(): Promise<Endpoint | null | string> {
    const o = this.opts.override();
    if (o && o.url.trim()) {
      return { url: o.url.trim().replace(/\/+$/, ""), token: o.token.trim(), source: "settings" };
    }
    try {
      if (!(await this.opts.files.exists(DAEMON_JSON))) return null;
      const ep = parseDaemonJson(await this.opts.files.read(DAEMON_JSON));
      return ep ?? `${DAEMON_JSON} is not what a memvault daemon writes`;
    } catch (err) {
      return null; // vanished between exists and read: the daemon is stopping
    }
  }

  /** One attempt to (re)connect; concurrent calls share it, and a call during it
   *  schedules exactly one more. */
  private probe(): Promise<void> {
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

  private async attempt(): Promise<void> {
    const gen = ++this.generation;
    const found = await this.readEndpoint();
    if (gen !== this.generation || this.stopped) return;
    if (found === null) {
      return this.fail({
        kind: "not-running",
        detail: "the daemon is not running (no .memvault/daemon.json)",
      });
    }
    if (typeof found === "string") return this.fail({ kind: "not-running", detail: found });
    let health;
    try {
      health = await this.opts.transport.request({
        url: `${found.url}/health`,
        method: "GET",
        headers: {},
        timeoutMs: this.opts.timeoutMs(),
      });
    } catch (err) {
      if (gen !== this.generation || this.stopped) return;
      const e = err as TransportError;
      if (e.kind === "timeout") {
        return this.fail({ kind: "unreachable", detail: `${found.url} did not answer within ${this.opts.timeoutMs()} ms` });
      }
      // refused (Node's http) or a failed fetch: either way nothing answers there
      const where = found.source === "daemon.json" ? "the address in .memvault/daemon.json" : "the address in the settings";
      return this.fail({ kind: "not-running", detail: `the daemon is not running (nothing answers at ${found.url}, ${where})` });
    }
    if (gen !== this.generation || this.stopped) return;
    if (!isMemvaultHealth(health.status, health.text)) {
      return this.fail({
        kind: "foreign",
        detail: `${found.url} answers, but not as a memvault daemon (HTTP ${health.status}); another program owns that port and ${found.source} is stale`,
      });
    }
    this.endpoint = found;
    this.openStream(found, gen);
  }

  private fail(state: ConnectionState): void {
    this.endpoint = null;
    this.daemon = null;
    this.setState(state);
    if (!this.stopped) {
      if (this.pollTimer) clearTimeout(this.pollTimer);
      this.pollTimer = setTimeout(() => void this.probe(), this.pollMs);
    }
  }

  private setState(state: ConnectionState): void {
    const before = this.state;
    this.state = state;
    const same =
      before.kind === state.kind &&
      ("detail" in before ? before.detail : "") === ("detail" in state ? state.detail : "") &&
      ("endpoint" in before ? before.endpoint.url : "") === ("endpoint" in state ? state.endpoint.url : "");
    if (!same) this.stateListeners.forEach((fn) => safely(fn, state));
  }

  // -- /events -------------------------------------------------------------------------------

  private openStream(ep: Endpoint, gen: number): void {
    this.closeStream();
    const parser = new SseParser();
    let subscribed = false;
    const handle = this.opts.transport.stream(
      {
        url: `${ep.url}/events`,
        headers: { Authorization: `Bearer ${ep.token}`, Accept: "text/event-stream" },
        connectTimeoutMs: this.opts.timeoutMs(),
      },
      {
        onOpen: (status, contentType) => {
          if (gen !== this.generation) return;
          if (status === 401) {
            handle.close();
            this.stream = null;
            return this.fail({
              kind: "unauthorized",
              detail:
                ep.source === "settings"
                  ? "the daemon refused the token set in the plugin's settings (HTTP 401)"
                  : "the daemon refused the token in .memvault/daemon.json (HTTP 401)",
            });
          }
          if (status !== 200 || !contentType.startsWith("text/event-stream")) {
            handle.close();
            this.stream = null;
            return this.fail({
              kind: "foreign",
              detail: `${ep.url}/events answered HTTP ${status} (${contentType || "no content type"}), not an event stream`,
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
            let data: unknown;
            try {
              data = JSON.parse(ev.data);
            } catch {
              continue;
            }
            if (ev.event === "status") {
              this.daemon = data as DaemonState;
              this.daemonListeners.forEach((fn) => safely(fn, data as DaemonState));
            } else if (ev.event === "sync") {
              this.syncListeners.forEach((fn) => safely(fn, data as SyncReport));
            }
          }
        },
        onEnd: (error) => {
          if (gen !== this.generation || this.stopped) return;
          this.stream = null;
          this.clearBeat();
          // the daemon stopped, restarted, or the network hiccuped: look again at once
          if (error?.kind === "timeout") {
            return this.fail({ kind: "unreachable", detail: `${ep.url}/events: ${error.message}` });
          }
          void this.probe();
        },
      },
    );
    this.stream = handle;
    this.beat(gen);
  }

  private beat(gen: number): void {
    this.clearBeat();
    this.heartbeat = setTimeout(() => {
      if (gen !== this.generation || this.stopped) return;
      this.closeStream();
      void this.probe(); // silent for too long (keep-alives come every 15 s)
    }, this.heartbeatMs);
  }

  private clearBeat(): void {
    if (this.heartbeat) clearTimeout(this.heartbeat);
    this.heartbeat = null;
  }

  private closeStream(): void {
    this.clearBeat();
    const s = this.stream;
    this.stream = null;
    s?.close();
  }

  // -- requests ----------------------------------------------------------------------------------

  /** A JSON request to the daemon. Never hangs (timeout), never throws anything but
   *  `DaemonError`. A refused connection or a 401 sends the connection looking again. */
  async request<T>(method: "GET" | "POST", path: string, opts: RequestOptions = {}): Promise<T> {
    const ep = this.endpoint;
    if (!ep || this.state.kind !== "connected") {
      const s = this.state;
      const detail = "detail" in s ? s.detail : "connecting to the daemon";
      const kind = s.kind === "unauthorized" || s.kind === "foreign" ? s.kind : "not-running";
      throw new DaemonError(kind, detail);
    }
    const timeoutMs = opts.timeoutMs ?? this.opts.timeoutMs();
    let res;
    try {
      res = await this.opts.transport.request({
        url: ep.url + path + queryString(opts.query),
        method,
        headers: { Authorization: `Bearer ${ep.token}`, Accept: "application/json" },
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        timeoutMs,
        signal: opts.signal,
      });
    } catch (err) {
      const e = err as TransportError;
      if (e.kind === "refused") {
        this.reconnect();
        throw new DaemonError("not-running", "the daemon is not running (connection refused)");
      }
      if (e.kind === "timeout") {
        throw new DaemonError("timeout", `the daemon did not answer within ${(timeoutMs / 1000).toFixed(1)} s`);
      }
      if (e.kind === "aborted") throw new DaemonError("aborted", "aborted");
      this.reconnect();
      throw new DaemonError("network", `cannot reach the daemon: ${e.message}`);
    }
    let data: unknown = undefined;
    try {
      data = res.text ? JSON.parse(res.text) : undefined;
    } catch {
      data = undefined;
    }
    if (res.status >= 200 && res.status < 300 && data !== undefined) return data as T;
    const err = (data as { error?: { type?: string; message?: string } } | undefined)?.error;
    if (res.status === 401) {
      this.reconnect(); // a restarted daemon has a new token: daemon.json says which
      throw new DaemonError("unauthorized", "the daemon refused the token (HTTP 401)", 401);
    }
    if (!err || typeof err.message !== "string") {
      this.reconnect();
      throw new DaemonError(
        "foreign",
        `${ep.url} answered HTTP ${res.status} without a memvault error: another program may own that port`,
        res.status,
      );
    }
    const kind: DaemonErrorKind =
      res.status === 404 ? "not-found" : res.status >= 500 ? "server" : "refused-request";
    throw new DaemonError(kind, err.message, res.status, err.type);
  }
}

export function isMemvaultHealth(status: number, text: string): boolean {
  if (status !== 200) return false;
  try {
    const d = JSON.parse(text) as { ok?: unknown; version?: unknown };
    return d.ok === true && typeof d.version === "string";
  } catch {
    return false;
  }
}

function safely<T>(fn: Listener<T>, value: T): void {
  try {
    fn(value);
  } catch (err) {
    console.error("memvault: a listener failed", err);
  }
}
