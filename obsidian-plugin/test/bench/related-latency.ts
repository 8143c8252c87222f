/**
 * How long from a leaf change to the related pane rendered, on a big vault, in Chromium:
 * the real plugin code (stand-in workspace), the real daemon on this machine.
 *
 *   node scripts/bench.mjs [--vault PATH] [--runs 200] [--gap-ms 400] [--model hash]
 *                          [--exclude logs,topics/ops] [--json FILE]
 *
 * The vault must exist and be indexed (bench/.work/obsidian-10k/vault is what
 * bench/RESULTS.md used: 10,000 notes built with bench/daemon_bench.py's generator and
 * the real model). Each run opens a random note in the editor leaf — as clicking it in
 * the file explorer does — and waits for the pane to hold that note's hits; runs are
 * `--gap-ms` apart, as a person moves between notes. Two clocks: "dom" when the hits are
 * in the DOM (MutationObserver), "painted" after the next frame. Prints medians.
 */
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { freePort, openPluginPage } from "../support/chromium";
import { Daemon, REPO } from "../support/daemon";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

function scan(base: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (name.startsWith(".")) continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(base, p).split("\\").join("/"));
    }
  };
  walk(base);
  return out;
}

function pct(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))];
}

async function main(): Promise<void> {
  const root = resolve(arg("vault", join(REPO, "bench", ".work", "obsidian-10k", "vault")));
  const runs = Number(arg("runs", "200"));
  const gap = Number(arg("gap-ms", "400"));
  const model = arg("model", "") || null;
  const exclude = arg("exclude", "").split(",").filter(Boolean);
  const files = scan(root);
  const notes = files.filter((f) => f.endsWith(".md") && !f.startsWith("templates/"));
  console.log(`vault ${root}: ${notes.length} notes`);
  const port = await freePort();
  const daemon = new Daemon(root, port, model);
  const started = Date.now();
  await daemon.start(300000);
  await daemon.settled(600000);
  console.log(`daemon up and settled in ${((Date.now() - started) / 1000).toFixed(1)} s (model: ${model ?? "the vault's"})`);
  const { browser, page, problems } = await openPluginPage({ root, port, files, contents: {}, settings: { resultCount: 10, excludedFolders: exclude } });
  try {
    await page.waitForSelector('.status-bar-item:text("memvault: watching")', { timeout: 60000 });
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const sample = Array.from({ length: runs + 10 }, () => notes[Math.floor(rand() * notes.length)]);
    const times = await page.evaluate(
      async ([sample, gap]) => {
        const m = window.memvaultPage.mounted!;
        const el = m.related().contentEl;
        const out: { dom: number; painted: number; hits: number }[] = [];
        for (const path of sample) {
          await new Promise((r) => setTimeout(r, gap));
          const done = new Promise<{ dom: number; painted: number; hits: number }>((resolve) => {
            const obs = new MutationObserver(() => {
              if (el.dataset.path !== path || (el.dataset.state !== "hits" && el.dataset.state !== "error")) return;
              obs.disconnect();
              const dom = performance.now() - t0;
              const hits = el.querySelectorAll(".memvault-hit").length;
              requestAnimationFrame(() => {
                const ch = new MessageChannel();
                ch.port1.onmessage = () => resolve({ dom, painted: performance.now() - t0, hits });
                ch.port2.postMessage(null);
              });
            });
            obs.observe(el, { attributes: true, childList: true, subtree: true });
          });
          const t0 = performance.now();
          void m.open(path);
          out.push(await done);
        }
        return out;
      },
      [sample, gap] as const,
    );
    const measured = times.slice(10); // the first few warm the daemon's caches and the page's JIT
    const empty = measured.filter((t) => t.hits === 0).length;
    const dom = measured.map((t) => t.dom);
    const painted = measured.map((t) => t.painted);
    const result = {
      notes: notes.length,
      runs: measured.length,
      gap_ms: gap,
      excluded_folders: exclude,
      dom_ms: { p50: pct(dom, 0.5), p95: pct(dom, 0.95), max: Math.max(...dom) },
      painted_ms: { p50: pct(painted, 0.5), p95: pct(painted, 0.95), max: Math.max(...painted) },
      runs_without_hits: empty,
      console_problems: problems,
    };
    console.log(JSON.stringify(result, null, 2));
    const out = arg("json", "");
    if (out) writeFileSync(out, JSON.stringify(result, null, 2));
    if (problems.length) process.exitCode = 1;
  } finally {
    await browser.close();
    await daemon.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
