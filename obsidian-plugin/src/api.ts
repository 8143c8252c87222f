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

export function status(c: Connection): Promise<VaultStatus> {
  return c.request("GET", "/status");
}
