/**
 * A scripted HTTP server for the unit tests: it speaks the daemon's API (docs/HTTP.md)
 * well enough — or badly on purpose: slow, another program, a refused token — to drive
 * the plugin through the states a real daemon can rarely be made to show on demand.
 */

import * as http from "node:http";
import type { AddressInfo } from "node:net";

export interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  auth: string;
  origin: string | undefined;
  body: string;
}

export class FakeDaemon {
  server: http.Server;
  token = "tok-" + Math.random().toString(36).slice(2);
  seen: Seen[] = [];
  delayMs = 0;
  foreign = false; // answer like some other program
  streams = new Set<http.ServerResponse>();
  routes: Record<string, (s: Seen) => { status: number; json: unknown }> = {};

  constructor() {
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  async listen(port = 0): Promise<number> {
    await new Promise<void>((r) => this.server.listen(port, "127.0.0.1", r));
    return this.port;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  daemonJson(pid = 4242): string {
    return JSON.stringify({ pid, host: "127.0.0.1", port: this.port, token: this.token, started_at: 0, version: "0.1.0" });
  }

  /** Send an SSE event to every open /events stream. */
  send(event: string, data: unknown): void {
    for (const s of this.streams) s.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  async close(): Promise<void> {
    for (const s of this.streams) s.destroy();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    let body = "";
    for await (const c of req) body += c;
    const s: Seen = {
      method: req.method ?? "",
      path: url.pathname,
      query: url.searchParams,
      auth: String(req.headers.authorization ?? ""),
      origin: req.headers.origin,
      body,
    };
    this.seen.push(s);
    if (this.foreign) {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end("<html><body>Some other program</body></html>");
      return;
    }
    if (url.pathname === "/health") return json(res, 200, { ok: true, version: "0.1.0" });
    if (s.auth !== `Bearer ${this.token}`) {
      return json(res, 401, { error: { type: "Unauthorized", message: "missing or wrong bearer token" } });
    }
    if (url.pathname === "/events") {
      res.writeHead(200, { "Content-Type": "text/event-stream" });
      res.write(": connected\n\n");
      res.write(`event: status\ndata: ${JSON.stringify(IDLE)}\n\n`);
      this.streams.add(res);
      res.on("close", () => this.streams.delete(res));
      return;
    }
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    const route = this.routes[`${s.method} ${s.path}`];
    if (!route) return json(res, 404, { error: { type: "NotFound", message: `no route ${s.path}` } });
    const out = route(s);
    json(res, out.status, out.json);
  }
}

export const IDLE = {
  state: "watching",
  progress: null,
  queue: 0,
  lag_seconds: null,
  last_error: null,
  model: "ready",
  observer_alive: true,
  failed_batches: 0,
};

function json(res: http.ServerResponse, status: number, data: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(data));
}

export function hit(path: string, heading: string[] = [], line = 1) {
  return {
    path,
    title: path.split("/").pop()!.replace(/\.md$/, ""),
    heading,
    line_start: line,
    line_end: line + 2,
    snippet: `about ${path}`,
    score: 0.5,
    text: "",
    address: `[[${path.replace(/\.md$/, "")}]]`,
  };
}
