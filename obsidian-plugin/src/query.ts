/**
 * The search box's filter syntax, turned into `/search`'s filters. Pure.
 *
 *   postgres migration folder:decisions tag:db since:2024-01-01
 *   "user service" tag:#infra path:"projects/*" until:2024-12-31
 *
 * `folder:` `tag:` (repeatable; a leading # is dropped) `since:` `until:` (YYYY-MM-DD)
 * `path:` (a glob). Values may be quoted. Anything else — including a word with a colon
 * that is not one of these, like `10:45` — stays in the query text.
 */

import type { SearchFilters } from "./types";

export interface ParsedQuery extends SearchFilters {
  query: string;
  problems: string[]; // what was not understood, said in words
}

const TOKEN = /(\S+?):("([^"]*)"|(\S*))|"([^"]*)"|(\S+)/g;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function parseQuery(input: string): ParsedQuery {
  const out: ParsedQuery = { query: "", problems: [] };
  const words: string[] = [];
  for (const m of input.matchAll(TOKEN)) {
    const [whole, key, , quoted, bare, phrase, word] = m;
    if (key !== undefined) {
      const value = (quoted ?? bare ?? "").trim();
      const k = key.toLowerCase();
      if (k === "folder" && value) out.folder = value.replace(/^\/+|\/+$/g, "");
      else if ((k === "tag" || k === "tags") && value) {
        const tags = value.split(",").map((t) => t.trim().replace(/^#/, "")).filter(Boolean);
        out.tags = [...(out.tags ?? []), ...tags];
      } else if ((k === "since" || k === "until") && value) {
        if (DAY.test(value) && !Number.isNaN(Date.parse(value))) out[k] = value;
        else out.problems.push(`${k}: wants a day as YYYY-MM-DD, not "${value}"`);
      } else if (k === "path" && value) out.path = value;
      else if (["folder", "tag", "tags", "since", "until", "path"].includes(k)) {
        out.problems.push(`${k}: needs a value`);
      } else words.push(whole);
    } else if (phrase !== undefined) {
      if (phrase.trim()) words.push(`"${phrase}"`);
    } else if (word !== undefined) {
      words.push(word);
    }
  }
  out.query = words.join(" ").trim();
  return out;
}

/** The filters part only, as `/search`'s body wants them (undefined fields left out). */
export function filtersOf(p: ParsedQuery): SearchFilters {
  const f: SearchFilters = {};
  if (p.folder) f.folder = p.folder;
  if (p.tags?.length) f.tags = p.tags;
  if (p.since) f.since = p.since;
  if (p.until) f.until = p.until;
  if (p.path) f.path = p.path;
  return f;
}
