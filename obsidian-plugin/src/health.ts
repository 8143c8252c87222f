/** What the status bar says, from the connection and the daemon's last `event: status`. Pure. */

import type { ConnectionState } from "./connection";
import type { DaemonState, VectorLane } from "./types";

export type HealthKind = "watching" | "indexing" | "lag" | "error" | "off" | "connecting";

export interface Health {
  kind: HealthKind;
  text: string; // the status bar's words
  tooltip: string;
}

export const LAG_SECONDS = 2; // below this a change is simply being indexed

export function describeHealth(conn: ConnectionState, d: DaemonState | null): Health {
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
  const problems: string[] = [];
  if (d.failed_batches) problems.push(`${d.failed_batches} sync${d.failed_batches > 1 ? "s" : ""} failed in a row`);
  if (d.observer_alive === false) problems.push("the file watcher is down");
  if (d.model === "failed") problems.push("the embedding model failed to load");
  if (problems.length) {
    return {
      kind: "error",
      text: "memvault: error",
      tooltip: `${problems.join("; ")}${d.last_error ? `\nLast error: ${d.last_error}` : ""}`,
    };
  }
  const p = d.progress;
  const v = d.vectors;
  if (!p && v && v.pending > 0 && (d.state === "indexing" || d.state === "watching")) {
    // only the vectors are behind: MEMORY.md, links and keyword search are current
    const lane = v.progress;
    const count = lane && lane.total ? ` ${lane.done.toLocaleString("en-US")}/${lane.total.toLocaleString("en-US")}` : "";
    return {
      kind: "indexing",
      text: count ? `memvault: embedding${count}` : `memvault: ${v.pending.toLocaleString("en-US")} to embed`,
      tooltip: vectorsTooltip(v),
    };
  }
  if (d.state === "indexing" || d.state === "starting") {
    const count = p && p.total ? ` ${p.done.toLocaleString("en-US")}/${p.total.toLocaleString("en-US")}` : "";
    return {
      kind: "indexing",
      text: `memvault: indexing${count}`,
      tooltip: p ? `Indexing: ${p.done} of ${p.total} notes, ${p.embedded} chunks embedded` : "Indexing the vault",
    };
  }
  if (d.lag_seconds !== null && d.lag_seconds >= LAG_SECONDS) {
    const pending = d.queue ? `, ${d.queue} change${d.queue > 1 ? "s" : ""} waiting` : "";
    return {
      kind: "lag",
      text: `memvault: lag ${Math.round(d.lag_seconds)} s`,
      tooltip: `The index is ${d.lag_seconds.toFixed(1)} s behind the files${pending}`,
    };
  }
  return {
    kind: "watching",
    text: "memvault: watching",
    tooltip: `The index is up to date${d.model && d.model !== "ready" ? ` (model ${d.model})` : ""}`,
  };
}

function vectorsTooltip(v: VectorLane): string {
  const n = v.pending.toLocaleString("en-US");
  const waited = v.lag_seconds !== null ? ` (the oldest for ${Math.round(v.lag_seconds)} s)` : "";
  const error = v.last_error ? `\nLast error: ${v.last_error}` : "";
  return (
    `MEMORY.md, links and keyword search are up to date; ${n} chunk${v.pending === 1 ? "" : "s"} ` +
    `wait${v.pending === 1 ? "s" : ""} for ${v.pending === 1 ? "its" : "their"} vectors${waited}, ` +
    `found by their words meanwhile${error}`
  );
}

/** The exact commands that start the daemon for this vault. Pure. */
export function startCommands(vaultPath: string | null): string[] {
  const q = vaultPath ? ` ${shellQuote(vaultPath)}` : " PATH-TO-VAULT";
  const v = vaultPath ? ` --vault ${shellQuote(vaultPath)}` : "";
  return [`memvault up${q}`, `memvault daemon start${v}`];
}

export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
