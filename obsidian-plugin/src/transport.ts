/**
 * How bytes reach the daemon. Two implementations of one small interface:
 *
 * - `nodeTransport` (desktop Obsidian, and Node in the tests): Node's `http` module,
 *   which Obsidian's desktop renderer offers. No Origin header, no CORS or
 *   private-network rules of the embedded Chromium, real streaming, a hard timeout.
 * - `fetchTransport` (anywhere `fetch` exists): the daemon accepts the Origin
 *   `app://obsidian.md` and answers CORS for it (docs/HTTP.md); streams are read
 *   from `response.body`.
 *
 * Every request has a timeout and can be aborted; a failure is a `TransportError`
 * that says what happened (refused, timed out, network, aborted), never a hang.
 */

export interface HttpRequest {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  contentType: string;
  text: string;
}

export type TransportFailure = "refused" | "timeout" | "network" | "aborted";

export class TransportError extends Error {
  constructor(
    readonly kind: TransportFailure,
    message: string,
  ) {
    super(message);
    this.name = "TransportError";
  }
}

export interface StreamCallbacks {
  /** The response began (status and content type known). */
  onOpen(status: number, contentType: string): void;
  onText(text: string): void;
  /** The stream ended: `error` is undefined for a clean end, set otherwise. */
  onEnd(error?: TransportError): void;
}

export interface StreamHandle {
  close(): void;
}

export interface Transport {
  readonly name: string;
  request(req: HttpRequest): Promise<HttpResponse>;
  /** A long GET whose body arrives in pieces (server-sent events). `connectTimeoutMs`
   *  bounds the wait for the response head only. */
  stream(
    req: Omit<HttpRequest, "timeoutMs" | "method" | "body"> & { connectTimeoutMs: number },
    cb: StreamCallbacks,
  ): StreamHandle;
}

const MAX_BODY = 16 * 1024 * 1024; // a runaway answer (not our daemon) is cut, not buffered forever

function classify(err: unknown): TransportError {
  if (err instanceof TransportError) return err;
  const e = err as { code?: string; name?: string; message?: string };
  if (e?.code === "ECONNREFUSED") return new TransportError("refused", "connection refused");
  if (e?.name === "AbortError") return new TransportError("aborted", "aborted");
  return new TransportError("network", e?.message || String(err));
}

// -- Node's http -------------------------------------------------------------------------

type NodeHttp = typeof import("http");

export function nodeTransport(http: NodeHttp): Transport {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  return {
    name: "node-http",
    request(req: HttpRequest): Promise<HttpResponse> {
      return new Promise<HttpResponse>((resolve, reject) => {
        let settled = false;
        const finish = (fn: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          req.signal?.removeEventListener("abort", onAbort);
          fn();
        };
        const headers: Record<string, string> = { ...req.headers };
        if (req.body !== undefined) {
          headers["Content-Type"] = "application/json";
          headers["Content-Length"] = String(Buffer.byteLength(req.body));
        }
        const r = http.request(req.url, { method: req.method, headers, agent }, (res) => {
          const parts: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY) {
              r.destroy();
              finish(() => reject(new TransportError("network", "the answer is too large")));
              return;
            }
            parts.push(chunk);
          });
          res.on("end", () =>
            finish(() =>
              resolve({
                status: res.statusCode ?? 0,
                contentType: String(res.headers["content-type"] ?? ""),
                text: Buffer.concat(parts).toString("utf8"),
              }),
            ),
          );
          res.on("error", (err) => finish(() => reject(classifyNode(err))));
        });
        const timer = setTimeout(() => {
          r.destroy();
          finish(() =>
            reject(new TransportError("timeout", `no answer within ${req.timeoutMs} ms`)),
          );
        }, req.timeoutMs);
        const onAbort = () => {
          r.destroy();
          finish(() => reject(new TransportError("aborted", "aborted")));
        };
        if (req.signal?.aborted) return onAbort();
        req.signal?.addEventListener("abort", onAbort);
        r.on("error", (err) => finish(() => reject(classifyNode(err))));
        if (req.body !== undefined) r.write(req.body);
        r.end();
      });
    },
    stream(req, cb): StreamHandle {
      let ended = false;
      const end = (error?: TransportError) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        cb.onEnd(error);
      };
      // its own socket: a stream must not hold one of the request agent's
      const r = http.request(req.url, { method: "GET", headers: req.headers }, (res) => {
        clearTimeout(timer);
        cb.onOpen(res.statusCode ?? 0, String(res.headers["content-type"] ?? ""));
        res.setEncoding("utf8");
        res.on("data", (text: string) => {
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
        },
      };
    },
  };
}

function classifyNode(err: unknown): TransportError {
  const code = (err as { code?: string })?.code;
  if (code === "ECONNREFUSED") return new TransportError("refused", "connection refused");
  if (code === "ECONNRESET" || code === "EPIPE") {
    return new TransportError("network", "the connection was reset");
  }
  return classify(err);
}

// -- fetch ------------------------------------------------------------------------------------

export function fetchTransport(fetchFn: typeof fetch = globalThis.fetch.bind(globalThis)): Transport {
  return {
    name: "fetch",
    async request(req: HttpRequest): Promise<HttpResponse> {
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
        const headers: Record<string, string> = { ...req.headers };
        if (req.body !== undefined) headers["Content-Type"] = "application/json";
        const res = await fetchFn(req.url, {
          method: req.method,
          headers,
          body: req.body,
          signal: ctl.signal,
          cache: "no-store",
        });
        const text = await res.text();
        return { status: res.status, contentType: res.headers.get("content-type") ?? "", text };
      } catch (err) {
        if (timedOut) throw new TransportError("timeout", `no answer within ${req.timeoutMs} ms`);
        if (req.signal?.aborted) throw new TransportError("aborted", "aborted");
        // fetch cannot tell a refused connection from other network failures
        throw new TransportError("network", (err as Error)?.message || String(err));
      } finally {
        clearTimeout(timer);
        req.signal?.removeEventListener("abort", onAbort);
      }
    },
    stream(req, cb): StreamHandle {
      const ctl = new AbortController();
      let ended = false;
      const end = (error?: TransportError) => {
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
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (!ended) cb.onText(decoder.decode(value, { stream: true }));
        }
        end();
      })().catch((err) => end(new TransportError("network", (err as Error)?.message || String(err))));
      return {
        close() {
          if (ended) return;
          ended = true;
          clearTimeout(timer);
          ctl.abort();
        },
      };
    },
  };
}
