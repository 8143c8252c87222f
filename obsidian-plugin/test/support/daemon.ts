/**
 * A real `memvault daemon run` for the integration and browser tests: a temp vault laid
 * down by `memvault init`, the hash embedder (fast, deterministic), the daemon as a child
 * process. Python comes from $MEMVAULT_PYTHON (pytest sets it to its own interpreter),
 * else `python3`; the package from this checkout's daemon/ folder.
 */

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, openSync, closeSync } from "node:fs";
import * as http from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** The checkout: the nearest folder above this test bundle holding pyproject.toml. */
export const REPO = (() => {
  let d = resolve(__dirname);
  while (!existsSync(join(d, "pyproject.toml"))) {
    const up = dirname(d);
    if (up === d) throw new Error(`no pyproject.toml above ${__dirname}`);
    d = up;
  }
  return d;
})();
export const PYTHON = process.env.MEMVAULT_PYTHON || "python3";

/** The daemon's environment: this checkout's package, and the hash embedder unless
 *  ``model`` is null (then the vault's own config: the real model by default). */
function env(model: string | null = "hash"): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("MEMVAULT_")) e[k] = v;
  e.PYTHONPATH = join(REPO, "daemon");
  if (model !== null) e.MEMVAULT_INDEX_MODEL = model;
  e.HF_HUB_OFFLINE = "1";
  return e;
}

export function tempDir(prefix = "memvault-plugin-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** `memvault init` a vault at ``dir/name`` and write ``notes`` (path -> text) into it. */
export function makeVault(dir: string, notes: Record<string, string>, name = "vault"): string {
  const root = join(dir, name);
  const r = spawnSync(PYTHON, ["-m", "memvault", "init", root], { env: env(), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`memvault init failed (${PYTHON}): ${r.stderr || r.error}`);
  writeNotes(root, notes);
  return root;
}

export function writeNotes(root: string, notes: Record<string, string>): void {
  for (const [rel, text] of Object.entries(notes)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text, "utf8");
  }
}

export function note(title: string, body: string, fields: Record<string, string> = {}): string {
  const fm = [`title: ${JSON.stringify(title)}`, ...Object.entries(fields).map(([k, v]) => `${k}: ${v}`)];
  return `---\n${fm.join("\n")}\n---\n# ${title}\n\n${body}\n`;
}

export interface DaemonJson {
  pid: number;
  port: number;
  token: string;
}

export function readDaemonJson(root: string): DaemonJson | null {
  try {
    return JSON.parse(readFileSync(join(root, ".memvault", "daemon.json"), "utf8"));
  } catch {
    return null;
  }
}

export function get(url: string, token?: string, timeoutMs = 2000): Promise<{ status: number; text: string }> {
  return new Promise((res, rej) => {
    const r = http.get(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} }, (resp) => {
      let text = "";
      resp.setEncoding("utf8");
      resp.on("data", (c) => (text += c));
      resp.on("end", () => res({ status: resp.statusCode ?? 0, text }));
    });
    r.setTimeout(timeoutMs, () => r.destroy(new Error("timeout")));
    r.on("error", rej);
  });
}

export async function until<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 30000, everyMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${last})` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export class Daemon {
  proc: ChildProcess | null = null;
  info: DaemonJson | null = null;
  logPath: string;
  constructor(
    readonly root: string,
    private readonly port: number | null = null,
    private readonly model: string | null = "hash",
  ) {
    this.logPath = join(dirname(root), `daemon-${Date.now()}.log`);
  }

  async start(timeoutMs = 60000): Promise<DaemonJson> {
    const args = ["-m", "memvault", "daemon", "run", "--vault", this.root];
    if (this.port !== null) args.push("--port", String(this.port));
    const log = openSync(this.logPath, "a");
    this.proc = spawn(PYTHON, args, { env: env(this.model), stdio: ["ignore", "ignore", log] });
    closeSync(log);
    const proc = this.proc;
    this.info = await until(
      "the daemon to answer",
      async () => {
        if (proc.exitCode !== null) throw new Error(`the daemon exited ${proc.exitCode}: ${this.log()}`);
        const info = readDaemonJson(this.root);
        if (!info || info.pid !== proc.pid) return null;
        const h = await get(`http://127.0.0.1:${info.port}/health`);
        return h.status === 200 ? info : null;
      },
      timeoutMs,
    );
    return this.info;
  }

  /** Wait until the start-up reconcile is done and nothing is pending. */
  async settled(timeoutMs = 120000): Promise<void> {
    const info = this.info!;
    await until(
      "the daemon to settle",
      async () => {
        const s = JSON.parse((await get(`http://127.0.0.1:${info.port}/status`, info.token, 30000)).text);
        const d = s.daemon;
        return d.state === "watching" && d.lag_seconds === null && d.queue === 0 && d.model === "ready";
      },
      timeoutMs,
      200,
    );
  }

  log(): string {
    try {
      return readFileSync(this.logPath, "utf8").slice(-3000);
    } catch {
      return "(no log)";
    }
  }

  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    await new Promise<void>((res) => {
      const t = setTimeout(() => p.kill("SIGKILL"), 15000);
      p.once("exit", () => {
        clearTimeout(t);
        res();
      });
      p.kill("SIGTERM");
    });
    this.proc = null;
  }
}

export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
