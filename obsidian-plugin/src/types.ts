/** The daemon's answers, as docs/HTTP.md describes them (only what the plugin reads). */

export interface Hit {
  path: string;
  title: string;
  heading: string[];
  line_start: number; // 1-based, in the file (frontmatter counted)
  line_end: number;
  snippet: string;
  score: number;
  address: string;
  /** Other places holding this text word for word, kept off the list (0 when none). */
  copies?: number;
  /** Their notes, best first, the first 10. */
  copy_paths?: string[];
}

export interface Context {
  query: string;
  budget: number;
  tokens: number;
  text: string;
  sources: { path: string; heading: string[]; line_start: number; line_end: number; why: string }[];
}

export interface Progress {
  done: number;
  total: number;
  embedded: number;
}

/** The vector lane: chunks whose vectors are still being made (searched by keywords meanwhile). */
export interface VectorLane {
  pending: number;
  lag_seconds: number | null; // how long the oldest pending chunk has waited
  busy: boolean;
  embedded: number;
  last_error: string | null;
  progress: Progress | null; // the lane's catch-up in flight
}

/** `event: status` on /events, and the same fields of /status's `daemon`. */
export interface DaemonState {
  state: string; // starting | indexing | watching | stopping
  progress: Progress | null;
  queue: number | null;
  lag_seconds: number | null;
  last_error: string | null;
  model: string | null;
  observer_alive: boolean | null;
  failed_batches: number | null;
  vectors?: VectorLane | null; // daemons before the two lanes leave it out
}

export interface VaultStatus {
  vault: string;
  notes: number;
  folders?: Record<string, number>;
  memory: {
    file: string;
    exists: boolean;
    lines?: number;
    tokens?: number | null;
    max_lines?: number;
    max_tokens?: number;
    over_budget?: boolean;
  };
  /** unchecked: notes not read for links while many differ from the index (a first index) */
  links: { unresolved: number; ambiguous: number; alias_only: number; unchecked?: number };
  index: { chunks: number; embedded: number; model: string | null; pending_count: number; matches_disk: boolean };
  daemon: DaemonState & { pid?: number; uptime_seconds?: number; port?: number };
}

export interface SyncReport {
  created: string[];
  modified: string[];
  deleted: string[];
  moved: [string, string][] | { src: string; dst: string }[];
}

export interface SearchFilters {
  folder?: string;
  tags?: string[];
  since?: string;
  until?: string;
  path?: string;
}
