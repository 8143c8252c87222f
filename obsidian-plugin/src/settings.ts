/** The plugin's settings: stored by Obsidian in .obsidian/plugins/memvault/data.json. */

export interface MemvaultSettings {
  contextBudget: number; // tokens, for "Ask your memory"
  resultCount: number; // hits in the related pane and the search modal
  excludedFolders: string[]; // left out of the related pane
  daemonUrl: string; // explicit override: "" means read .memvault/daemon.json
  daemonToken: string;
  timeoutMs: number; // per request
}

export const DEFAULT_SETTINGS: MemvaultSettings = {
  contextBudget: 2000,
  resultCount: 10,
  excludedFolders: [],
  daemonUrl: "",
  daemonToken: "",
  timeoutMs: 5000,
};

function int(value: unknown, lo: number, hi: number, fallback: number): number {
  const n = typeof value === "number" ? value : Number.parseInt(String(value ?? ""), 10);
  return Number.isFinite(n) ? Math.min(hi, Math.max(lo, Math.round(n))) : fallback;
}

/** Settings from whatever data.json held (older, partial, hand-edited): always valid. Pure. */
export function normalizeSettings(raw: unknown): MemvaultSettings {
  const r = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const d = DEFAULT_SETTINGS;
  return {
    contextBudget: int(r.contextBudget, 100, 100000, d.contextBudget),
    resultCount: int(r.resultCount, 1, 100, d.resultCount),
    excludedFolders: parseFolders(r.excludedFolders),
    daemonUrl: typeof r.daemonUrl === "string" ? r.daemonUrl.trim() : "",
    daemonToken: typeof r.daemonToken === "string" ? r.daemonToken.trim() : "",
    timeoutMs: int(r.timeoutMs, 500, 120000, d.timeoutMs),
  };
}

/** "logs, archive/old\ntemplates" or a list -> ["logs", "archive/old", "templates"]. Pure. */
export function parseFolders(value: unknown): string[] {
  const parts = Array.isArray(value) ? value.map(String) : String(value ?? "").split(/[\n,]/);
  const out: string[] = [];
  for (const p of parts) {
    const f = p.trim().replace(/^\/+|\/+$/g, "");
    if (f && !out.includes(f)) out.push(f);
  }
  return out;
}

/** An override URL must be loopback http: the token must never leave the machine. Pure. */
export function checkDaemonUrl(url: string): string | null {
  if (!url) return null;
  let u: URL;
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
