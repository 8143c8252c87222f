/** The daemon's routes the plugin uses, typed (docs/HTTP.md). */

import type { Connection } from "./connection";
import type { Context, Hit, SearchFilters, VaultStatus } from "./types";

export function related(
  c: Connection,
  path: string,
  k: number,
  exclude: string[],
  signal?: AbortSignal,
): Promise<{ hits: Hit[] }> {
  return c.request("GET", "/related", { query: { path, k, exclude }, signal });
}

export function search(
  c: Connection,
  query: string,
  k: number,
  filters: SearchFilters,
  signal?: AbortSignal,
): Promise<{ hits: Hit[] }> {
  return c.request("POST", "/search", { body: { query, k, ...filters }, signal });
}

export function context(c: Connection, query: string, budget: number, timeoutMs: number): Promise<Context> {
  // a context reads more than a search: it gets more time
  return c.request("POST", "/context", { body: { query, budget }, timeoutMs });
}

/** /status counts the whole vault; under a first index of thousands of notes it waits for
 *  the batch in flight, which can take 20 s: it gets that long at least. */
export const STATUS_WAIT_MS = 30000;

export function status(c: Connection, timeoutMs: number): Promise<VaultStatus> {
  return c.request("GET", "/status", { timeoutMs: Math.max(timeoutMs, STATUS_WAIT_MS) });
}
